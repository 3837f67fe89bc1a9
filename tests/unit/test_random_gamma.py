"""ember.random's gamma family (gamma, loggamma, beta, dirichlet, rademacher, ball), poisson,
multivariate_normal and orthogonal against JAX 0.10.2's values (random_golden.py) and their
distributions (KS, chi-square, moments) with fixed keys, on the same draws. Separate from
test_random.py: their rejection loops and factorizations take seconds to compile."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from random_cases import DIRICHLET_ALPHA, GAMMA_CASES, GAMMA_N, MVN_COV, MVN_MEAN, make_key
from test_random import _check

import ember
import ember.random as er


@pytest.mark.parametrize("case", GAMMA_CASES, ids=[c[0] for c in GAMMA_CASES])
def test_values_match_jax(case):
    name, kind, seed, call, check = case
    _check(name, check, call(er, make_key(er, kind, seed)))


def _case(name: str):
    (case,) = [c for c in GAMMA_CASES if c[0] == name]
    _, kind, seed, call, _ = case
    return np.asarray(call(er, make_key(er, kind, seed)))


def test_loggamma_under_jit():
    (name, kind, seed, call, check), = [c for c in GAMMA_CASES if c[0] == "loggamma"]
    _check(name, check, ember.jit(lambda k: call(er, k))(make_key(er, kind, seed)))


@pytest.mark.parametrize("name,a", [("gamma_small_a", 0.3), ("gamma_large_a", 4.5)])
def test_gamma_distribution(name, a):
    x = _case(name).astype(np.float64)
    assert np.all(x >= 0)
    assert abs(x.mean() - a) < 5 * np.sqrt(a / GAMMA_N)
    assert scipy.stats.kstest(x, scipy.stats.gamma(a).cdf).pvalue > 1e-3


def test_beta_and_dirichlet_distributions():
    b = _case("beta").astype(np.float64)
    assert scipy.stats.kstest(b, scipy.stats.beta(0.5, 2.0).cdf).pvalue > 1e-3
    d = _case("dirichlet").astype(np.float64)
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), DIRICHLET_ALPHA / DIRICHLET_ALPHA.sum(), atol=0.03)
    # each marginal is Beta(alpha_i, sum - alpha_i)
    total = DIRICHLET_ALPHA.sum()
    assert scipy.stats.kstest(d[:, 0], scipy.stats.beta(0.5, total - 0.5).cdf).pvalue > 1e-3


def test_ball_points_are_uniform_in_the_ball():
    pts = _case("ball").astype(np.float64)
    r = np.linalg.norm(pts, axis=-1)
    assert np.all(r <= 1)
    # uniform in the 3-ball: r^3 ~ U(0, 1)
    assert scipy.stats.kstest(r ** 3, "uniform").pvalue > 1e-3
    rad = _case("rademacher")
    assert set(np.unique(rad)) == {-1, 1} and abs(rad.mean()) < 5 / np.sqrt(GAMMA_N)


@pytest.mark.parametrize("name,lam", [("poisson_small", 3.0), ("poisson_large", 60.0)])
def test_poisson_distribution(name, lam):
    x = _case(name)
    assert x.dtype == np.int32 and x.min() >= 0
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / GAMMA_N)
    assert abs(x.var() / lam - 1) < 0.1
    # chi-square over the bins holding most of the mass
    lo, hi = int(max(0, lam - 3 * np.sqrt(lam))), int(lam + 3 * np.sqrt(lam))
    counts = np.array([np.sum(x < lo)] + [np.sum(x == v) for v in range(lo, hi)]
                      + [np.sum(x >= hi)])
    probs = np.array([scipy.stats.poisson.cdf(lo - 1, lam)]
                     + [scipy.stats.poisson.pmf(v, lam) for v in range(lo, hi)]
                     + [scipy.stats.poisson.sf(hi - 1, lam)])
    counts, probs = counts[probs > 0], probs[probs > 0]
    assert scipy.stats.chisquare(counts, probs / probs.sum() * GAMMA_N).pvalue > 1e-3


def test_multivariate_normal_moments():
    x = _case("multivariate_normal").astype(np.float64)
    assert x.shape == (GAMMA_N, 3)
    np.testing.assert_allclose(x.mean(0), MVN_MEAN, atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), MVN_COV, atol=0.12)


def test_orthogonal_matrices_are_orthogonal_and_haar():
    q = _case("orthogonal").astype(np.float64)
    assert q.shape == (GAMMA_N // 16, 4, 4)
    np.testing.assert_allclose(np.einsum("bji,bjk->bik", q, q), np.broadcast_to(np.eye(4),
                               q.shape), atol=1e-5)
    # Haar: each entry of a uniformly random 4x4 orthogonal matrix has mean 0, variance 1/4
    assert abs(q.mean()) < 0.02 and abs(q.var() - 0.25) < 0.02
    w = _case("orthogonal_wide")
    np.testing.assert_allclose(w @ np.swapaxes(w, -1, -2), np.broadcast_to(np.eye(3),
                               (2, 3, 3)), atol=1e-5)


@pytest.mark.parametrize("method", ["svd", "eigh"])
def test_multivariate_normal_factor_methods(method):
    """method='svd'/'eigh' factor the covariance through LAPACK as JAX does: the draws have
    its moments, and equal JAX's draws for the same key (to the factorizations' rounding)."""
    x = np.asarray(er.multivariate_normal(er.PRNGKey(5), MVN_MEAN, MVN_COV, (4000,),
                                          method=method), np.float64)
    np.testing.assert_allclose(x.mean(0), MVN_MEAN, atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), MVN_COV, atol=0.15)
    jax = pytest.importorskip("jax")
    want = jax.random.multivariate_normal(jax.random.PRNGKey(5), MVN_MEAN, MVN_COV, (8,),
                                          method=method)
    got = er.multivariate_normal(er.PRNGKey(5), MVN_MEAN, MVN_COV, (8,), method=method)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_multivariate_normal_errors():
    k = er.PRNGKey(0)
    with pytest.raises(ValueError, match="method must be one of"):
        er.multivariate_normal(k, MVN_MEAN, MVN_COV, method="lu")
    with pytest.raises(ValueError, match="requires cov.shape == \\(..., n, n\\) for n=3"):
        er.multivariate_normal(k, MVN_MEAN, np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError, match="requires mean.ndim >= 1"):
        er.multivariate_normal(k, np.float32(0), MVN_COV)


@pytest.mark.parametrize("name,dist", [("t", scipy.stats.t(3.0)),
                                       ("chisquare", scipy.stats.chi2(3.0)),
                                       ("f", scipy.stats.f(3.0, 5.0))])
def test_gamma_derived_distributions(name, dist):
    assert scipy.stats.kstest(_case(name).astype(np.float64), dist.cdf).pvalue > 1e-3
