"""ember.scipy.stats.multivariate_normal (logpdf, pdf) against scipy.stats in float64 and
JAX 0.10.2 in float32: a vector mean with a full, a batched and a scalar covariance, a
scalar mean (one dimension), odd sizes, broadcasting of x against mean and of both
against cov's batch, eager and under jit; the gradient in mean (cov^-1 (x - mean));
JAX's errors and its nan for a covariance that is not positive definite.
"""

from __future__ import annotations

import doctest

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats as st

import ember
from ember.scipy.stats import multivariate_normal as mvn

RNG = np.random.default_rng(3)


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("n", [1, 3, 7])
def test_full_covariance_against_scipy(x64, n: int) -> None:
    mean, cov = RNG.standard_normal(n), _spd(n)
    for xshape in [(n,), (5, n), (2, 3, n)]:
        x = RNG.standard_normal(xshape) * 2
        want = st.multivariate_normal.logpdf(x, mean, cov)
        got = mvn.logpdf(x, mean, cov)
        assert got.shape == np.shape(want) and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(ember.jit(mvn.logpdf)(x, mean, cov), want, rtol=1e-12)
        np.testing.assert_allclose(mvn.pdf(x, mean, cov), np.exp(want), rtol=1e-11)


def test_batched_and_scalar_covariances(x64) -> None:
    n = 3
    covs = _spd(n, (2,))
    x, mean = RNG.standard_normal((5, 1, n)), RNG.standard_normal((2, n))
    got = mvn.logpdf(x, mean, covs)
    want = np.stack([st.multivariate_normal.logpdf(x[:, 0], mean[k], covs[k]) for k in range(2)],
                    axis=-1)
    assert got.shape == (5, 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(ember.jit(mvn.logpdf)(x, mean, covs), want, rtol=1e-12)
    # a scalar cov is cov * I; a scalar mean is a one-dimensional distribution
    x = RNG.standard_normal((4, n))
    np.testing.assert_allclose(mvn.logpdf(x, mean[0], 2.5),
                               st.multivariate_normal.logpdf(x, mean[0], 2.5 * np.eye(n)),
                               rtol=1e-12)
    np.testing.assert_allclose(mvn.logpdf(x, 0.3, 2.5), st.norm.logpdf(x, 0.3, np.sqrt(2.5)),
                               rtol=1e-12)


def test_float32_matches_jax() -> None:
    n = 5
    x = RNG.standard_normal((6, n)).astype(np.float32)
    mean = RNG.standard_normal(n).astype(np.float32)
    cov = _spd(n).astype(np.float32)
    for args in [(x, mean, cov), (x, mean, np.float32(1.5)), (x[:, 0], mean[0], cov[0, 0]),
                 (x[:, None], mean, _spd(n, (3,)).astype(np.float32))]:
        want = np.asarray(jst.multivariate_normal.logpdf(*args))
        got = mvn.logpdf(*args)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(mvn.pdf(*args), np.asarray(jst.multivariate_normal.pdf(*args)),
                                   rtol=1e-5)
    # integers promote to the default float, as JAX's
    assert mvn.logpdf(np.int32(3), 1, 2).dtype == np.float32
    np.testing.assert_allclose(mvn.logpdf(np.int32(3), 1, 2),
                               jst.multivariate_normal.logpdf(np.int32(3), 1, 2), rtol=1e-6)


def test_gradient_in_mean(x64) -> None:
    n = 4
    x, mean, cov = RNG.standard_normal(n), RNG.standard_normal(n), _spd(n)
    g = ember.grad(lambda m: mvn.logpdf(x, m, cov))(mean)
    np.testing.assert_allclose(g, np.linalg.solve(cov, x - mean), rtol=1e-10)
    gj = jax.grad(lambda m: jst.multivariate_normal.logpdf(x, m, cov))(mean)
    np.testing.assert_allclose(g, np.asarray(gj), rtol=1e-5)


def test_errors_and_nan() -> None:
    x, mean = np.ones(3, np.float32), np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="multivariate_normal.logpdf got incompatible shapes"):
        mvn.logpdf(x, mean, np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="incompatible shapes"):
        mvn.logpdf(x, mean, np.ones(3, np.float32))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mvn.logpdf(x, mean, np.eye(3, dtype=np.float32), allow_singular=True)
    with pytest.raises(TypeError):
        mvn.logpdf([1.0, 0.0], mean[:2], np.eye(2))
    with pytest.raises(TypeError, match="sub got incompatible shapes for broadcasting"):
        mvn.logpdf(x[:2], mean, np.eye(3, dtype=np.float32))
    assert np.isnan(mvn.logpdf(x, mean, -np.eye(3, dtype=np.float32)))
    assert np.isnan(ember.jit(mvn.logpdf)(x, mean, -np.eye(3, dtype=np.float32)))


def test_docstring_examples_run_as_shown() -> None:
    for fn in (mvn.logpdf, mvn.pdf):
        test = doctest.DocTestParser().get_doctest(fn.__doc__, {"jnp": ember.numpy},
                                                    fn.__name__, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.tries == 2 and not runner.failures, fn.__name__
