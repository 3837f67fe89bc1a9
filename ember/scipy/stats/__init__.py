"""`ember.scipy.stats`: probability distributions, as `jax.scipy.stats`.

One module per distribution, each a namespace of functions as in JAX: `norm` (pdf,
logpdf, cdf, logcdf, sf, logsf, ppf, isf), `uniform` (logpdf, pdf, cdf, ppf),
`bernoulli` (logpmf, pmf, cdf, ppf), `gamma`, `beta` and `chi2` (logpdf, pdf, cdf,
logcdf, sf, logsf: the CDFs on scipy.special's gammainc/betainc), `poisson` (logpmf,
pmf, cdf) and `multivariate_normal` (logpdf, pdf: a Cholesky factor and a triangular
solve).
Written on ember.numpy/ember.lax and ember.scipy.special. Other distributions of
jax.scipy.stats raise the "not implemented yet" AttributeError.
"""

from ember._missing import module_getattr
from ember.scipy.stats import (
    bernoulli,
    beta,
    chi2,
    gamma,
    multivariate_normal,
    norm,
    poisson,
    uniform,
)

__all__ = ["bernoulli", "beta", "chi2", "gamma", "multivariate_normal", "norm", "poisson",
           "uniform"]

__getattr__ = module_getattr(__name__)
