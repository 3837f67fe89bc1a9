"""ember.scipy.special and ember.scipy.stats against SciPy, gradients against JAX 0.10.2.

Values: each function over edge values (0, +-inf, nan, large |x|, the tails) and random
ones, float32 and float64 (x64), shapes (), (0,), odd sizes, eagerly and under one `jit`
per dtype; logsumexp's `b`/`return_sign`; norm/uniform/bernoulli against scipy.stats.
Gradients: JAX 0.10.2's values at the edge points (xlogy(0, 0), entr(0), log_ndtr deep in
the lower tail, ...) as literals made with `jax.vmap(jax.grad(...))`, analytic derivatives
of ndtri and erfinv, and `check_grads` in float64. vmap; no host callbacks; errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import ember
import ember.numpy as jnp
from ember.scipy import special, stats
from tests.ops.ad_checks import check_grads

inf, nan = float("inf"), float("nan")

X = np.array([-np.inf, -40., -12., -5., -1.5, -0.6, -0.0, 0., 1e-20, 0.3, 0.7, 1., 2.5, 5.,
              9., 30., np.inf, np.nan])
P = np.array([0., 1e-30, 1e-12, 1e-5, 0.01, 0.1, 0.13, 0.3, 0.5, 0.77, 0.9, 0.95, 0.999,
              1., -0.5, 1.5, np.nan])

# name -> (ember function, SciPy reference, inputs)
UNARY = {
    "erf": (special.erf, sp.erf, X),
    "erfc": (special.erfc, sp.erfc, X),
    "expit": (special.expit, sp.expit, X),
    "ndtr": (special.ndtr, sp.ndtr, X),
    "log_ndtr": (special.log_ndtr, sp.log_ndtr, X),
    "erfinv": (special.erfinv, sp.erfinv, 2 * P - 1),
    "logit": (special.logit, sp.logit, P),
    "ndtri": (special.ndtri, sp.ndtri, P),
    "entr": (special.entr, sp.entr, np.concatenate([P, [-1., 1e10, np.inf]])),
}
# float32 relative tolerances. log_ndtr(x) near its upper cut (5 for float32) is
# log(1 - tiny), whose float32 ndtr rounds away: JAX's same formula is off there too.
RTOL32 = {"log_ndtr": 4e-6, "ndtri": 1e-5, "erfinv": 4e-6, "logit": 2e-6, "entr": 2e-6}
# float64 log_ndtr: JAX's pieces (log(ndtr) up to 8, where ndtr rounds next to 1; the
# 3-term series below -20) are good to about 1e-10 relative, not SciPy's 1e-16.
RTOL64 = {"ndtri": 1e-14, "log_ndtr": 1e-9, "erfinv": 1e-14}


def _compare(name: str, got: object, want: np.ndarray, x: np.ndarray, dtype: type) -> None:
    got = np.asarray(got)
    assert got.dtype == dtype
    if name == "log_ndtr" and dtype == np.float32:
        keep = ~((x > 3.) & (x <= 5.))
        got, want = got[keep], want[keep]
    rtol = RTOL32.get(name, 1e-6) if dtype == np.float32 else RTOL64.get(name, 1e-14)
    tiny = np.finfo(dtype).tiny
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=tiny,
                               equal_nan=True, err_msg=name)


def _check(dtype: type) -> None:
    inputs = {n: x.astype(dtype) for n, (_, _, x) in UNARY.items()}
    with np.errstate(all="ignore"):
        want = {n: ref(inputs[n].astype(np.float64)) for n, (_, ref, _) in UNARY.items()}
    jitted = ember.jit(lambda d: {n: UNARY[n][0](v) for n, v in d.items()})(inputs)
    for name, (f, _, _) in UNARY.items():
        x = inputs[name]
        _compare(name, f(x), want[name], x, dtype)
        _compare(name, jitted[name], want[name], x, dtype)
        for shape in [(), (0,), (3, 1)]:
            part = x[4:4 + int(np.prod(shape))].reshape(shape)
            assert f(part).shape == shape
            _compare(name, f(part).ravel(), want[name][4:4 + part.size], part.ravel(), dtype)


def test_unary_float32() -> None:
    _check(np.float32)


def test_unary_float64(x64) -> None:
    _check(np.float64)


def test_ndtri_is_the_inverse_of_ndtr(x64) -> None:
    # through every piece of the approximation: the middle, z < 8 and z >= 8 tails
    p = np.concatenate([np.geomspace(1e-300, 0.5, 200), 1 - np.geomspace(1e-15, 0.5, 60)])
    np.testing.assert_allclose(special.ndtri(p), sp.ndtri(p), rtol=1e-14)


def test_xlogy_xlog1py() -> None:
    x = np.array([0., 0., 0., 1., 2., -1., 0., 3.], np.float32)
    y = np.array([0., np.nan, 1., 0., 3., 0.5, -1., np.inf], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(special.xlogy(x, y), sp.xlogy(x, y), rtol=1e-6,
                                   equal_nan=True)
        np.testing.assert_allclose(special.xlog1py(x, y - 1), sp.xlog1py(x, y - 1), rtol=1e-6,
                                   equal_nan=True)
        np.testing.assert_allclose(ember.jit(special.xlogy)(x[:, None], y[None]),
                                   sp.xlogy(x[:, None], y[None]), rtol=1e-6, equal_nan=True)
    assert special.xlogy(0, 0).dtype == np.float32  # ints promote to the default float


def test_logsumexp_and_softmax() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(0, 4, (3, 5)).astype(np.float32)
    b = rng.normal(0, 1, (3, 5)).astype(np.float32)
    r, s = special.logsumexp(a, axis=0, b=b, return_sign=True)
    wr, ws = sp.logsumexp(a, axis=0, b=b, return_sign=True)
    np.testing.assert_allclose(r, wr, rtol=1e-5)
    np.testing.assert_array_equal(s, ws)
    np.testing.assert_allclose(special.logsumexp(a), sp.logsumexp(a), rtol=1e-6)
    np.testing.assert_allclose(special.softmax(a), sp.softmax(a), rtol=1e-6)
    np.testing.assert_allclose(special.softmax(a, axis=1), sp.softmax(a, axis=1), rtol=1e-6)
    np.testing.assert_allclose(special.log_softmax(a, axis=0), sp.log_softmax(a, axis=0),
                               rtol=1e-5, atol=1e-6)


# JAX 0.10.2's derivatives (float32), jax.vmap(jax.grad(jax.scipy.special.f)).
LOG_NDTR_X = np.array([-30., -15., -10.5, -3., 0., 2., 5.5, 10.], np.float32)
LOG_NDTR_GRAD = [30.032577514648438, 15.06611442565918, 10.593584060668945, 3.2830963134765625,
                 0.7978845834732056, 0.05524785444140434, 1.0769769431817622e-07,
                 7.694604805333477e-23]
NDTR_GRAD = [0.0, 0.0, 4.575375993949567e-25, 0.004431850742548704, 0.3989422917366028,
             0.05399097502231598, 1.0769770142360358e-07, 7.694598494446235e-23]
PAIRS = np.array([[0., 0.], [0., 1.], [1., 0.], [2., 3.], [0., -1.], [-1., 0.5]], np.float32)
XLOGY_GRAD = ([-inf, 0.0, -inf, 1.0986123085021973, nan, -0.6931471824645996],
              [nan, 0.0, inf, 0.6666666865348816, -0.0, -2.0])
XLOG1PY_GRAD = ([0.0, 0.6931471824645996, 0.0, 1.3862943649291992, -inf, 0.40546509623527527],
                [0.0, 0.0, 1.0, 0.5, nan, -0.6666666865348816])
ENTR_X = np.array([0., 0.5, 1., 2.], np.float32)
ENTR_GRAD = [inf, -0.3068528175354004, -1.0, -1.6931471824645996]
LOGIT_X = np.array([0., 0.25, 0.5, 1.], np.float32)
LOGIT_GRAD = [inf, 5.333333492279053, 4.0, inf]


def _close(got: object, want: list[float]) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float32).ravel(), np.float32(want),
                               rtol=2e-6, atol=0, equal_nan=True)


def test_gradients_match_jax_at_edge_points() -> None:
    grad_map = lambda f, *a: ember.vmap(ember.grad(f))(*a)  # noqa: E731
    _close(grad_map(special.log_ndtr, LOG_NDTR_X), LOG_NDTR_GRAD)
    _close(grad_map(special.ndtr, LOG_NDTR_X), NDTR_GRAD)
    for f, (gx, gy) in ((special.xlogy, XLOGY_GRAD), (special.xlog1py, XLOG1PY_GRAD)):
        _close(ember.vmap(ember.grad(f, 0))(PAIRS[:, 0], PAIRS[:, 1]), gx)
        _close(ember.vmap(ember.grad(f, 1))(PAIRS[:, 0], PAIRS[:, 1]), gy)
    _close(grad_map(special.entr, ENTR_X), ENTR_GRAD)
    _close(grad_map(special.logit, LOGIT_X), LOGIT_GRAD)
    _close(ember.jit(lambda x: grad_map(special.log_ndtr, x))(LOG_NDTR_X), LOG_NDTR_GRAD)
    _close(ember.jit(lambda x: grad_map(lambda v: special.log_ndtr(v, 5), x))(LOG_NDTR_X),
           LOG_NDTR_GRAD)


def test_analytic_derivatives(x64) -> None:
    p = np.array([1e-20, 1e-6, 0.02, 0.3, 0.5, 0.8, 0.99])
    # d ndtri / dp = 1 / pdf(ndtri(p)); d erfinv / dx = sqrt(pi)/2 * exp(erfinv(x)^2)
    np.testing.assert_allclose(ember.vmap(ember.grad(special.ndtri))(p),
                               1 / st.norm.pdf(sp.ndtri(p)), rtol=1e-9)
    y = 2 * p - 1
    np.testing.assert_allclose(ember.vmap(ember.grad(special.erfinv))(y),
                               np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(y) ** 2), rtol=1e-9)
    # (below -20 log_ndtr is the 3-term asymptotic series, as JAX's: relative error about
    # 7!! / x^8, 3e-12 at -50)
    x = np.array([-50., -25., -3., 0., 4., 12.])
    np.testing.assert_allclose(ember.vmap(ember.grad(special.log_ndtr))(x),
                               np.exp(st.norm.logpdf(x) - sp.log_ndtr(x)), rtol=1e-9)


@pytest.mark.parametrize("name,f,x", [
    ("erf", special.erf, [-1.2, 0.1, 0.8]),
    ("erfc", special.erfc, [-1.2, 0.1, 2.8]),
    ("ndtr", special.ndtr, [-3.2, 0.1, 0.8]),
    ("log_ndtr", special.log_ndtr, [-25., -3.2, 0.1, 9.]),
    ("ndtri", special.ndtri, [0.01, 0.3, 0.7, 0.96]),
    ("logit", special.logit, [0.1, 0.45, 0.9]),
    ("entr", special.entr, [0.2, 1.3]),
    ("expit", special.expit, [-2., 0.5]),
])
def test_check_grads(x64, name: str, f: object, x: list[float]) -> None:
    check_grads(f, (np.array(x),), order=2)


def test_check_grads_binary(x64) -> None:
    x, y = np.array([0.3, 1.7, -2.]), np.array([0.5, 2.2, 0.9])
    check_grads(special.xlogy, (x, y), order=2)
    check_grads(special.xlog1py, (x, y), order=2, use_jit=True)
    check_grads(lambda a, b: special.logsumexp(a, b=b), (x, y), order=1)


def test_vmap_and_no_host_callbacks() -> None:
    x = np.linspace(-4, 4, 12, dtype=np.float32).reshape(3, 4)
    got = ember.vmap(lambda r: special.log_ndtr(r) + special.ndtri(special.ndtr(r)))(x)
    np.testing.assert_allclose(got, sp.log_ndtr(x) + x, rtol=1e-4, atol=1e-4)
    text = ember.jit(lambda v: [special.log_ndtr(v), special.ndtri(v), special.erfinv(v),
                                ember.grad(lambda u: jnp.sum(special.xlogy(u, u)))(v)]
                     ).lower(x).as_text()
    assert "custom-call" not in text


def test_errors() -> None:
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
        special.ndtr(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
        special.ndtri(np.array([1], np.int32))
    with pytest.raises(TypeError, match=r"Cannot determine dtype of \[0.5\]"):
        special.ndtri([0.5])
    with pytest.raises(TypeError, match="erf requires ndarray or scalar arguments"):
        special.erf([0.5])
    with pytest.raises(TypeError, match="series_order must be a Python integer."):
        special.log_ndtr(1.0, 2.5)
    with pytest.raises(ValueError, match="series_order must be non-negative."):
        special.log_ndtr(1.0, -1)
    with pytest.raises(ValueError, match="series_order must be <= 30."):
        special.log_ndtr(1.0, 31)
    with pytest.raises(ValueError, match="entr does not support complex-valued inputs."):
        special.entr(np.array([1j]))
    with pytest.raises(AttributeError, match="ember.scipy.special.hyp1f1 is not implemented"):
        special.hyp1f1  # noqa: B018
    with pytest.raises(AttributeError, match="ember.scipy.stats.cauchy is not implemented"):
        stats.cauchy  # noqa: B018


def test_log_ndtr_series_order() -> None:
    x = np.array([-60., -30., -12.], np.float32)
    for order in (0, 1, 3, 8):
        np.testing.assert_allclose(special.log_ndtr(x, series_order=order), sp.log_ndtr(x),
                                   rtol=1e-3 if order == 0 else 2e-6)


# scipy.stats ------------------------------------------------------------------------------

def test_norm(x64) -> None:
    x = np.array([-40., -3., -0.5, 0., 1.2, 4., 40., np.inf])
    loc, scale = 0.7, np.array([[0.5], [2.0]])
    n = stats.norm
    cases = [(n.pdf, st.norm.pdf), (n.logpdf, st.norm.logpdf), (n.cdf, st.norm.cdf),
             (n.logcdf, st.norm.logcdf), (n.sf, st.norm.sf), (n.logsf, st.norm.logsf)]
    # logcdf/logsf are JAX's log_ndtr: its 3-term series below -20 and log(ndtr) up to 8
    # (where ndtr's rounding next to 1 shows) bound their accuracy, not SciPy's.
    for f, ref in cases:
        with np.errstate(all="ignore"):
            want = ref(x, loc, scale)
        loose = f in (n.logcdf, n.logsf)
        np.testing.assert_allclose(f(x, loc, scale), want, rtol=1e-7 if loose else 1e-13,
                                   atol=1e-12 if loose else 1e-300, equal_nan=True)
    q = np.array([0., 1e-10, 0.2, 0.5, 0.9, 1.])
    np.testing.assert_allclose(n.ppf(q, loc, scale), st.norm.ppf(q, loc, scale), rtol=1e-13)
    # (isf(q) is ppf(1 - q), as JAX's: 1 - 1e-10 keeps 6 fewer digits)
    np.testing.assert_allclose(n.isf(q, loc, scale), st.norm.isf(q, loc, scale), rtol=1e-8)
    np.testing.assert_allclose(ember.jit(n.logpdf)(x[:-1]), st.norm.logpdf(x[:-1]),
                               rtol=1e-13)
    check_grads(lambda a, m, s: n.logcdf(a, m, s), (x[1:6], 0.3, 1.7), order=1)


def test_norm_float32() -> None:
    x = np.array([-3., 0., 2.], np.float32)
    assert stats.norm.pdf(x).dtype == np.float32
    np.testing.assert_allclose(stats.norm.cdf(x, 1., 2.), st.norm.cdf(x, 1., 2.), rtol=1e-6)
    assert stats.norm.ppf(np.float32(0.3)).dtype == np.float32


def test_uniform_and_bernoulli() -> None:
    x = np.array([-1., 0., 0.5, 2., 3., 3.5, np.nan], np.float32)
    u = stats.uniform
    with np.errstate(all="ignore"):
        for f, ref in [(u.logpdf, st.uniform.logpdf), (u.pdf, st.uniform.pdf),
                       (u.cdf, st.uniform.cdf)]:
            got = np.asarray(f(x, 0., 3.))
            np.testing.assert_allclose(got[:-1], ref(x, 0., 3.)[:-1], rtol=1e-6)
        q = np.array([-0.1, 0., 0.25, 1., 1.2, np.nan], np.float32)
        np.testing.assert_allclose(u.ppf(q, 1., 2.), st.uniform.ppf(q, 1., 2.), rtol=1e-6,
                                   equal_nan=True)
    b = stats.bernoulli
    k = np.array([0., 1., 0., 1., 2., -1., 1.], np.float32)
    p = np.array([0.3, 0.3, 0., 0., 0.5, 0.5, 1.], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(b.logpmf(k, p), st.bernoulli.logpmf(k, p), rtol=1e-6)
        np.testing.assert_allclose(b.pmf(k, p), st.bernoulli.pmf(k, p), rtol=1e-6)
        np.testing.assert_allclose(b.pmf(k + 2, p, 2), st.bernoulli.pmf(k + 2, p, 2),
                                   rtol=1e-6)
        kk = np.array([-1., 0., 0.5, 1., 3.], np.float32)
        np.testing.assert_allclose(b.cdf(kk, 0.3), st.bernoulli.cdf(kk, 0.3), rtol=1e-6)
        qq = np.array([0.5, 0.7, 0.71, 1., 1.5], np.float32)
        np.testing.assert_allclose(b.ppf(qq, 0.3), st.bernoulli.ppf(qq, 0.3), rtol=1e-6,
                                   equal_nan=True)
        assert float(b.ppf(0., 0.3)) == 0.0  # (JAX's: SciPy says -1)
    # d/dp logpmf(1, p) = 1/p and d/dp logpmf(0, p) = -1/(1-p), through xlogy's rule
    g = ember.vmap(ember.grad(b.logpmf, 1))(np.float32([1., 0.]), np.float32([0.25, 0.25]))
    np.testing.assert_allclose(g, [4., -4. / 3.], rtol=1e-6)


def test_custom_jvp_fills_in_defaults_of_nondiff_arguments() -> None:
    # log_ndtr is custom_jvp with nondiff_argnums=(1,): `log_ndtr(x)` hands its rule the
    # default series_order, as JAX does (Ember's custom_jvp once saw one argument only)
    seen = []

    @ember.custom_jvp
    def f(x, n=3):
        return x * n

    f.defjvps(lambda g, ans, x, n: seen.append(n) or g * n, None)
    from functools import partial

    @partial(ember.custom_jvp, nondiff_argnums=(1,))
    def h(x, n=4):
        return x * n

    @h.defjvp
    def _h_jvp(n, primals, tangents):
        seen.append(n)
        return h(primals[0], n), tangents[0] * n

    assert float(ember.grad(f)(2.0)) == 3.0 and float(ember.grad(h)(2.0)) == 4.0
    assert seen == [3, 4]
    assert float(ember.grad(special.log_ndtr)(-30.0)) == pytest.approx(30.0325775, rel=1e-6)


def test_gamma_beta_poisson_densities(x64) -> None:
    x = np.array([-1., 0.1, 0.5, 2., 7., 30.])
    np.testing.assert_allclose(stats.gamma.logpdf(x, 2.5, 0.1, 1.5),
                               st.gamma.logpdf(x, 2.5, 0.1, 1.5), rtol=1e-13)
    np.testing.assert_allclose(stats.gamma.pdf(x, np.array([[0.7], [4.0]])),
                               st.gamma.pdf(x, np.array([[0.7], [4.0]])), rtol=1e-13)
    y = np.array([-0.1, 0.001, 0.3, 0.9, 1.2])
    np.testing.assert_allclose(stats.beta.logpdf(y, 2., 3.), st.beta.logpdf(y, 2., 3.),
                               rtol=1e-13)
    np.testing.assert_allclose(stats.beta.pdf(y, 0.5, 30., -0.2, 2.),
                               st.beta.pdf(y, 0.5, 30., -0.2, 2.), rtol=1e-12)
    assert np.isnan(np.asarray(stats.beta.logpdf(0.5, -1., 2.)))
    k = np.array([-1., 0., 1., 2.5, 3., 40., 500.])
    np.testing.assert_allclose(stats.poisson.logpmf(k, 3.2), st.poisson.logpmf(k, 3.2),
                               rtol=1e-13)
    np.testing.assert_allclose(stats.poisson.pmf(k + 2, 7.5, 2), st.poisson.pmf(k + 2, 7.5, 2),
                               rtol=1e-12, atol=1e-300)
    assert float(stats.poisson.logpmf(0., 0.)) == pytest.approx(0.0, abs=1e-15)
    # d/dmu logpmf(k, mu) = k / mu - 1; d/da gamma.logpdf(x, a) = log x - digamma(a)
    g = ember.grad(stats.poisson.logpmf, 1)(3.0, 2.0)
    assert float(g) == pytest.approx(0.5, rel=1e-14)
    g = ember.grad(stats.gamma.logpdf, 1)(2.0, 3.0)
    assert float(g) == pytest.approx(np.log(2.0) - sp.digamma(3.0), rel=1e-13)
    np.testing.assert_allclose(ember.jit(stats.beta.logpdf)(y, 2., 3.),
                               st.beta.logpdf(y, 2., 3.), rtol=1e-13)
    with pytest.raises(AttributeError, match="has no attribute 'entropy'"):
        stats.poisson.entropy  # noqa: B018
