"""The CDFs that the incomplete gamma and beta functions make possible: scipy.stats gamma,
beta and chi2 (cdf, logcdf, sf, logsf; chi2's densities too) and poisson.cdf, against
scipy.stats in float64 over points below, inside and beyond the support, with loc and
scale, eagerly and under jit (logcdf and logsf are the logs of cdf and sf, as JAX's, so
near 0 they are good to an absolute 1e-15); one gradient against the density.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

import ember
from ember.scipy import stats

X = np.array([-1., 0., 0.05, 0.3, 0.9, 1.7, 4., 11., 60., np.inf])


def test_gamma_chi2_cdfs(x64) -> None:
    a = np.array([0.4, 2.5, 9.])[:, None]
    for mod, ref, shape_arg in ((stats.gamma, st.gamma, a), (stats.chi2, st.chi2, 2 * a)):
        for name in ("cdf", "logcdf", "sf", "logsf"):
            with np.errstate(all="ignore"):
                want = getattr(ref, name)(X, shape_arg, 0.2, 1.5)
            got = getattr(mod, name)(X, shape_arg, 0.2, 1.5)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=2e-15, err_msg=name)
            jitted = ember.jit(getattr(mod, name))(X, shape_arg, 0.2, 1.5)
            np.testing.assert_allclose(jitted, want, rtol=1e-12, atol=2e-15, err_msg=name)
    with np.errstate(all="ignore"):
        want = st.chi2.logpdf(X[1:-1], 3.0, 0.0, 2.0)
    np.testing.assert_allclose(stats.chi2.logpdf(X[1:-1], 3.0, 0.0, 2.0), want, rtol=1e-13)
    with np.errstate(all="ignore"):
        want = st.chi2.pdf(X[2:], 5.0)
    np.testing.assert_allclose(stats.chi2.pdf(X[2:], 5.0), want, rtol=1e-13)
    assert float(stats.chi2.logpdf(-1.0, 3.0)) == -np.inf
    # d cdf / dx = pdf
    g = ember.vmap(ember.grad(stats.gamma.cdf))(X[2:-1], np.full(7, 2.5))
    np.testing.assert_allclose(g, st.gamma.pdf(X[2:-1], 2.5), rtol=1e-12)


def test_beta_and_poisson_cdfs(x64) -> None:
    x = np.array([-0.5, 0., 0.1, 0.45, 0.8, 1., 1.3])
    a, b = np.array([0.5, 3.])[:, None], np.array([2., 0.7])[:, None]
    for name in ("cdf", "logcdf", "sf", "logsf"):
        with np.errstate(all="ignore"):
            want = getattr(st.beta, name)(x, a, b)
        got = getattr(stats.beta, name)(x, a, b)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=2e-15, err_msg=name)
    np.testing.assert_allclose(stats.beta.cdf(0.7, 2., 3., 0.5, 0.5), st.beta.cdf(0.7, 2., 3.,
                                                                                  0.5, 0.5),
                               rtol=1e-13)
    k = np.array([-1., 0., 1., 2.5, 4., 30.])
    mu = np.array([0.5, 3., 25.])[:, None]
    np.testing.assert_allclose(stats.poisson.cdf(k, mu), st.poisson.cdf(k, mu), rtol=1e-12)
    np.testing.assert_allclose(ember.jit(stats.poisson.cdf)(k, mu, 1.0),
                               st.poisson.cdf(k, mu, 1.0), rtol=1e-12)
