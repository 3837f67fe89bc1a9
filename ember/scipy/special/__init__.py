"""`ember.scipy.special`: special functions, as `jax.scipy.special`.

Input/output: arrays in, arrays out, with JAX's signatures and dtypes. Modules:
`_basic.py` (erf, erfc, erfinv, expit, logit, xlogy, xlog1py, entr, rel_entr, kl_div,
softmax, log_softmax), `_ndtr.py` (ndtr, ndtri, log_ndtr), `_gamma.py` (gammaln, digamma,
betaln, gammasgn, gamma, beta, factorial, poch, multigammaln on lax.lgamma and
lax.digamma), `_incomplete.py` (gammainc, gammaincc, betainc, i0e, i0, i1e, i1, zeta,
polygamma on their lax primitives); `logsumexp` is ember.nn's (JAX shares it too).
Invariant: every function is written on ember.numpy/ember.lax (no host callbacks), so it
jits, differentiates and vmaps; derivative rules as JAX's. Other jax.scipy.special names
(hyp1f1, expi, ...) raise the "not implemented yet" AttributeError.
"""

from ember._missing import module_getattr
from ember.nn._logsumexp import logsumexp
from ember.scipy.special._basic import *  # noqa: F403
from ember.scipy.special._basic import __all__ as _basic_all
from ember.scipy.special._gamma import *  # noqa: F403
from ember.scipy.special._gamma import __all__ as _gamma_all
from ember.scipy.special._incomplete import *  # noqa: F403
from ember.scipy.special._incomplete import __all__ as _incomplete_all
from ember.scipy.special._ndtr import log_ndtr, ndtr, ndtri

__all__ = [*_basic_all, *_gamma_all, *_incomplete_all, "ndtr", "ndtri", "log_ndtr", "logsumexp"]

from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = module_getattr(__name__)
