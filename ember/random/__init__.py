"""`ember.random`: JAX's `jax.random` on Threefry-2x32 keys, with JAX 0.10.2's values.

Input: keys (`key(seed)` typed `key<fry>` arrays or `PRNGKey(seed)` raw uint32[2] arrays)
and sampler arguments as JAX's. Output: arrays equal to JAX's for the same key (bit for bit
where JAX's path has no transcendental function, within a few ulp otherwise).
Layout: `threefry.py` (the cipher as elementwise uint32 ops), `keys.py` (the key-array
type and key checks), `prng.py` (seeding, split, fold_in, bits), `uniform.py`,
`normal.py`, `univariate.py` (exponential, gumbel, laplace, logistic), `discrete.py`
(categorical, permutation, choice), `gamma.py` (gamma, beta, dirichlet, ball...),
`poisson.py`, `derived.py` (cauchy, pareto, lognormal, t, chisquare, f...),
`multivariate.py` (multivariate_normal, orthogonal, on `_linalg.py`'s
Cholesky and Gram-Schmidt). Every sampler is a `jit` of ordinary `lax` ops, so the cipher fuses into
the kernel that consumes its bits.
"""

from ember.random.derived import (
    cauchy,
    chisquare,
    double_sided_maxwell,
    f,
    geometric,
    lognormal,
    maxwell,
    pareto,
    rayleigh,
    t,
    triangular,
    wald,
    weibull_min,
)
from ember.random.discrete import categorical, choice, permutation
from ember.random.gamma import (
    ball,
    beta,
    dirichlet,
    gamma,
    generalized_normal,
    loggamma,
    rademacher,
)
from ember.random.keys import KeyArray
from ember.random.multivariate import multivariate_normal, orthogonal
from ember.random.normal import normal, truncated_normal
from ember.random.poisson import poisson
from ember.random.prng import (
    PRNGKey,
    bits,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    wrap_key_data,
)
from ember.random.uniform import bernoulli, randint, uniform
from ember.random.univariate import exponential, gumbel, laplace, logistic

__all__ = ["KeyArray", "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split",
           "fold_in", "bits", "uniform", "randint", "bernoulli", "normal", "truncated_normal",
           "exponential", "gumbel", "laplace", "logistic", "categorical", "permutation",
           "choice", "gamma", "loggamma", "beta", "dirichlet", "rademacher",
           "generalized_normal", "ball", "poisson", "multivariate_normal", "orthogonal",
           "cauchy", "pareto", "lognormal", "rayleigh", "weibull_min", "maxwell",
           "double_sided_maxwell", "geometric", "triangular", "wald", "t", "chisquare", "f"]

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
