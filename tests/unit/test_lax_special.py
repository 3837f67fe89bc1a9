"""lax.lgamma and lax.digamma (primitives of prims/special_gamma.py) and scipy.special's
functions built on them (gammaln, digamma, betaln, gammasgn, gamma, beta, factorial, poch,
multigammaln) and rel_entr/kl_div, against SciPy and JAX 0.10.2.

Values over poles, +-inf, nan, tiny and huge arguments, the reflection side and random
points, float16/float32/float64, eagerly and under jit (which must agree: one recipe);
derivatives against SciPy's digamma/polygamma and check_grads; vmap; the jaxpr names the
primitives as JAX's does; no host callback in the compiled text; JAX's dtype error.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import ember
import ember.numpy as jnp
from ember import lax
from ember.scipy import special
from tests.ops.ad_checks import check_grads

POINTS = np.array([1e-30, 1e-8, 0.1, 0.3, 0.5, 0.99, 1., 1.5, 2., 2.5, 3.7, 7.9, 10., 123.4,
                   1e5, 3e7, -0.3, -0.5, -1.5, -5.7, -100.25])
RANDOM = np.random.default_rng(0).uniform(-30, 40, 60)

# JAX 0.10.2's values at the edges (jax.lax.lgamma / digamma): lgamma is +inf at the poles
# and at +-inf; digamma is nan at the poles and -inf, +inf at +inf.
EDGES = np.array([0., -0., -1., -2., -30., np.inf, -np.inf, np.nan])
LGAMMA_EDGES = [np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, np.nan]
DIGAMMA_EDGES = [np.nan, np.nan, np.nan, np.nan, np.nan, np.inf, np.nan, np.nan]


def _check(dtype: type, rtol: float) -> None:
    x = np.concatenate([POINTS, RANDOM]).astype(dtype)
    x64 = x.astype(np.float64)
    both = ember.jit(lambda v: (lax.lgamma(v), lax.digamma(v)))
    for f, ref, i in ((lax.lgamma, sp.gammaln, 0), (lax.digamma, sp.digamma, 1)):
        want = ref(x64)
        got = np.asarray(f(x))
        assert got.dtype == dtype
        # relative to max(1, |f|): near their zeros (lgamma at 1 and 2) both functions are
        # good to an absolute, not a relative, error
        err = np.abs(got.astype(np.float64) - want) / np.maximum(1, np.abs(want))
        assert err.max() < rtol, (f.__name__, x[err.argmax()], err.max())
        np.testing.assert_array_equal(np.asarray(both(x)[i]), got)  # eager == compiled
    edges = EDGES.astype(dtype)
    np.testing.assert_array_equal(lax.lgamma(edges), np.array(LGAMMA_EDGES, dtype))
    np.testing.assert_array_equal(lax.digamma(edges), np.array(DIGAMMA_EDGES, dtype))
    np.testing.assert_array_equal(both(edges)[0], np.array(LGAMMA_EDGES, dtype))
    np.testing.assert_array_equal(both(edges)[1], np.array(DIGAMMA_EDGES, dtype))


def test_values_float32() -> None:
    _check(np.float32, 2e-6)


def test_values_float64(x64) -> None:
    _check(np.float64, 1e-14)


def test_float16_and_shapes() -> None:
    x = np.array([0.3, 1.5, 4.25, -2.5], np.float16)
    got = lax.lgamma(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, sp.gammaln(x.astype(np.float64)), rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(ember.jit(lax.digamma)(x), sp.digamma(x.astype(np.float64)),
                               rtol=2e-3, atol=2e-3)
    for shape in [(), (0,), (2, 3)]:
        v = np.full(shape, 2.5, np.float32)
        assert lax.lgamma(v).shape == shape and ember.jit(lax.digamma)(v).shape == shape
    assert str(ember.make_jaxpr(lax.lgamma)(2.5)).count("f32[]") == 2  # weak f32 in, out


def test_derivatives(x64) -> None:
    x = np.array([1e-3, 0.2, 0.7, 1., 2.5, 9., 60., 1e4, -0.4, -3.3, -17.8])
    d1 = ember.vmap(ember.grad(lax.lgamma))(x)
    np.testing.assert_allclose(d1, sp.digamma(x), rtol=1e-13)
    d2 = ember.vmap(ember.grad(lax.digamma))(x)
    np.testing.assert_allclose(d2, sp.polygamma(1, x), rtol=1e-13)
    d3 = ember.vmap(ember.grad(ember.grad(lax.digamma)))(x)
    np.testing.assert_allclose(d3, sp.polygamma(2, x), rtol=1e-10)
    assert float(ember.grad(lax.digamma)(np.inf)) == 0.0
    check_grads(lax.lgamma, (np.array([0.3, 1.7, 6.2, -1.4]),), order=2)
    check_grads(lax.digamma, (np.array([0.3, 1.7, 6.2, -1.4]),), order=2, use_jit=True)


# JAX 0.10.2's derivatives, float32: jax.vmap(jax.grad(jax.lax.lgamma / digamma)).
GRAD_X = np.array([0.5, 1., 2., 3.7, -0.5, 20.], np.float32)
LGAMMA_GRAD = [-1.9635100364685059, -0.5772153735160828, 0.42278462648391724,
               1.1671538352966309, 0.03648994490504265, 2.970524311065674]
DIGAMMA_GRAD = [4.934802055358887, 1.644934058189392, 0.6449340581893921, 0.31003785133361816,
                8.934802055358887, 0.051270823925733566]


def test_derivatives_match_jax_float32() -> None:
    f = ember.jit(lambda v: (ember.vmap(ember.grad(lax.lgamma))(v),
                             ember.vmap(ember.grad(lax.digamma))(v)))
    g1, g2 = f(GRAD_X)
    np.testing.assert_allclose(g1, LGAMMA_GRAD, rtol=3e-6, atol=1e-6)
    np.testing.assert_allclose(g2, DIGAMMA_GRAD, rtol=3e-6)


def test_jaxpr_vmap_and_compiled_text() -> None:
    text = str(ember.make_jaxpr(lambda v: lax.lgamma(v) + lax.digamma(v))(1.5))
    assert "lgamma a" in text and "digamma a" in text
    x = np.linspace(0.5, 6, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(ember.vmap(lax.lgamma, in_axes=1, out_axes=1)(x),
                               sp.gammaln(x), rtol=2e-6, atol=2e-6)
    hlo = ember.jit(lambda v: [lax.lgamma(v), ember.grad(lambda u: jnp.sum(lax.digamma(u)))(v)]
                    ).lower(x).as_text()
    assert "custom-call" not in hlo
    with pytest.raises(TypeError, match="lgamma does not accept dtype int32. Accepted dtypes "
                                        "are subtypes of floating."):
        lax.lgamma(np.array([1, 2], np.int32))


def test_scipy_gammaln_digamma_betaln(x64) -> None:
    x = np.concatenate([POINTS, RANDOM])
    np.testing.assert_allclose(special.gammaln(x), sp.gammaln(x), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(special.digamma(x), sp.digamma(x), rtol=1e-13, atol=1e-13)
    assert special.gammaln(3).dtype == np.float64  # ints promote to the default float
    a = np.array([0.5, 1., 3., 7.9, 8., 20., 1e3, 1e6, 2.5, 1e-3, 1e8, 30.])
    b = np.array([0.7, 30., 9., 100., 8., 1e6, 2e3, 1e7, 1e10, 50., 1e8, 2.])
    np.testing.assert_allclose(special.betaln(a, b), sp.betaln(a, b), rtol=1e-11)
    np.testing.assert_allclose(ember.jit(special.betaln)(a, b), sp.betaln(a, b), rtol=1e-11)
    # d/da log B(a, b) = psi(a) - psi(a + b)
    ga, gb = ember.grad(special.betaln, (0, 1))(2.0, 30.0)
    np.testing.assert_allclose([ga, gb], [sp.digamma(2) - sp.digamma(32),
                                          sp.digamma(30) - sp.digamma(32)], rtol=1e-12)
    check_grads(special.betaln, (np.array([0.6, 3.0, 9.0]), np.array([2.0, 12.0, 40.0])),
                order=1)


def test_betaln_float32() -> None:
    a = np.array([0.5, 3., 10., 1e3], np.float32)
    b = np.array([2., 9., 1e4, 1e5], np.float32)
    np.testing.assert_allclose(special.betaln(a, b), sp.betaln(a, b), rtol=2e-6)


def test_gamma_family(x64) -> None:
    x = np.array([-2.5, -1.5, -0.5, -0., 0., 0.5, 3., 5.5, -3., np.nan, 171.5, 1e-300])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(special.gammasgn(x), sp.gammasgn(x))
        np.testing.assert_allclose(special.gamma(x), sp.gamma(x), rtol=2e-13)
        np.testing.assert_allclose(ember.jit(special.gamma)(x), sp.gamma(x), rtol=2e-13)
    a, b = np.array([0.5, -1.5, 3., 40.]), np.array([2., 0.7, 4., 1e3])
    # (exp(betaln) turns betaln's 1e-16 x |betaln| = 170 into 1e-12 relative)
    np.testing.assert_allclose(special.beta(a, b), sp.beta(a, b), rtol=1e-11)
    n = np.array([-1., 0., 5., 20., 3.5])
    np.testing.assert_allclose(special.factorial(n), sp.factorial(n), rtol=1e-13)
    with pytest.raises(NotImplementedError, match="factorial with exact=True"):
        special.factorial(3, exact=True)
    np.testing.assert_allclose(special.poch(np.array([2., 3.5, 1.]), np.array([0., 2.5, 4.])),
                               sp.poch([2., 3.5, 1.], [0., 2.5, 4.]), rtol=1e-13)
    v = np.array([[3., 7.5], [2.2, 10.]])
    np.testing.assert_allclose(special.multigammaln(v, 3), sp.multigammaln(v, 3), rtol=1e-13)
    # d gamma = gamma * digamma
    g = ember.vmap(ember.grad(special.gamma))(np.array([-2.5, 0.5, 3.0, 5.5]))
    xs = np.array([-2.5, 0.5, 3.0, 5.5])
    np.testing.assert_allclose(g, sp.gamma(xs) * sp.digamma(xs), rtol=1e-13)
    with pytest.raises(NotImplementedError, match="gamma of complex arguments"):
        special.gamma(np.array([1j]))


# JAX 0.10.2's gradients of rel_entr (float32) in p and in q at
# (0, 0), (0, 2), (0.3, 0.6), (1, 0.5), (0.5, 1).
REL_ENTR_P = np.array([0., 0., 0.3, 1., 0.5], np.float32)
REL_ENTR_Q = np.array([0., 2., 0.6, 0.5, 1.], np.float32)
REL_ENTR_GRAD_P = [0.0, 0.0, 0.3068527579307556, 1.6931471824645996, 0.3068528175354004]
REL_ENTR_GRAD_Q = [0.0, 0.0, -0.5, -2.0, -0.5]


def test_rel_entr_kl_div() -> None:
    p = np.array([0., 0., 0.3, 1., -1., 0.5], np.float32)
    q = np.array([0., 2., 0.6, 0., 1., -1.], np.float32)
    assert float(special.rel_entr(np.nan, 1.0)) == np.inf  # JAX's (SciPy says nan)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(special.rel_entr(p, q), sp.rel_entr(p, q), rtol=1e-6)
        np.testing.assert_allclose(special.kl_div(p, q), sp.kl_div(p, q), rtol=1e-6)
        np.testing.assert_allclose(ember.jit(special.kl_div)(p, q), sp.kl_div(p, q),
                                   rtol=1e-6)
    gp = ember.vmap(ember.grad(special.rel_entr, 0))(REL_ENTR_P, REL_ENTR_Q)
    gq = ember.vmap(ember.grad(special.rel_entr, 1))(REL_ENTR_P, REL_ENTR_Q)
    np.testing.assert_allclose(gp, REL_ENTR_GRAD_P, rtol=2e-6)
    np.testing.assert_allclose(gq, REL_ENTR_GRAD_Q, rtol=2e-6)
