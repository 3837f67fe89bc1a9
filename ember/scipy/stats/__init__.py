"""`ember.scipy.stats`: probability distributions, as `jax.scipy.stats`.

One module per distribution, each a namespace of functions as in JAX: `norm` (pdf,
logpdf, cdf, logcdf, sf, logsf, ppf, isf), `uniform` (logpdf, pdf, cdf, ppf),
`bernoulli` (logpmf, pmf, cdf, ppf), `gamma`, `beta` and `chi2` (logpdf, pdf, cdf,
logcdf, sf, logsf: the CDFs on scipy.special's gammainc/betainc) and `poisson` (logpmf,
pmf, cdf).
Written on ember.numpy/ember.lax and ember.scipy.special. Other distributions of
jax.scipy.stats (multivariate_normal needs cholesky and triangular solves, which
ember.numpy.linalg lacks) raise the "not implemented yet" AttributeError.
"""

from ember._missing import module_getattr
from ember.scipy.stats import bernoulli, beta, chi2, gamma, norm, poisson, uniform

__all__ = ["bernoulli", "beta", "chi2", "gamma", "norm", "poisson", "uniform"]

__getattr__ = module_getattr(__name__)
