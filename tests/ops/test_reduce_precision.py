"""lax.reduce_precision (prims/reduce_precision.py) against JAX's, bit for bit: f16, bf16,
f32 and f64 inputs, formats narrower and wider than the input's, edge values (NaN, +-inf,
+-0, subnormals, ties, the overflow threshold); eager equal to jit (compiled code, also
fused with neighbours); linear autodiff and vmap as JAX's; the jaxpr and HLO text; errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax

jax = pytest.importorskip("jax")

EDGES = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1.5, 1.75, 2.5, 3.5, 3.14159,
         1e-40, -1e-42, 6e-8, 1e-5, 65504.0, 65519.0, 65520.0, 70000.0, -1e30, 3e38, 1.0 / 3]
FORMATS = [(5, 10), (8, 7), (8, 0), (2, 1), (4, 3), (11, 52), (8, 23), (1, 0), (6, 30)]


def _values(dtype):
    rng = np.random.default_rng(3)
    rand = rng.standard_normal(37) * np.exp(rng.uniform(-30, 30, 37))
    with np.errstate(over="ignore"):
        return np.concatenate([np.array(EDGES), rand]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64],
                         ids=["f16", "bf16", "f32", "f64"])
def test_matches_jax_bit_for_bit(dtype, x64):
    x = _values(dtype)
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        for e, m in FORMATS:
            want = np.asarray(jax.lax.reduce_precision(x, e, m))

            def f(v, e=e, m=m):
                return lax.reduce_precision(v, e, m)
            eager, jitted = np.asarray(f(x)), np.asarray(ember.jit(f)(x))
            fused = np.asarray(ember.jit(lambda v, f=f: f(v * 1) * 1)(x))
            for got in (eager, jitted, fused):
                assert got.dtype == want.dtype
                np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=(e, m))
                ok = ~np.isnan(want)
                np.testing.assert_array_equal(got[ok].view(np.uint8), want[ok].view(np.uint8),
                                              err_msg=f"{np.dtype(dtype)} ({e}, {m})")
    finally:
        jax.config.update("jax_enable_x64", prev)


def test_autodiff_vmap_and_text():
    x = np.array([1.0, 3.14159, 1e-3, -2.7], np.float32)
    t = np.array([0.1234567, 1.0, -7.77777, 2.0], np.float32)
    f = lambda v: lax.reduce_precision(v, 5, 2)  # noqa: E731
    y, ty = ember.jvp(f, (x,), (t,))
    jy, jty = jax.jvp(lambda v: jax.lax.reduce_precision(v, 5, 2), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(jy))
    np.testing.assert_array_equal(np.asarray(ty), np.asarray(jty))
    g = ember.grad(lambda v: jnp.sum(f(v) * t))(x)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(
        jax.grad(lambda v: jax.numpy.sum(jax.lax.reduce_precision(v, 5, 2) * t))(x)))
    xs = np.stack([x, -x, 2 * x])
    np.testing.assert_array_equal(np.asarray(ember.vmap(f, in_axes=1)(xs.T)), np.asarray(f(xs)))
    text = str(ember.make_jaxpr(f)(x))
    assert "reduce_precision[exponent_bits=5 mantissa_bits=2] a" in text
    hlo = ember.jit(f).lower(x).as_text()
    assert "reduce-precision(" in hlo and "exponent_bits=5" in hlo and "mantissa_bits=2" in hlo
    assert lax.reduce_precision(2.0, 5, 10).dtype == np.float32  # a weak scalar stays weak
    assert lax.reduce_precision(np.float16(2.0), 3, 1).dtype == np.float16


def test_errors():
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
        lax.reduce_precision(np.arange(3, dtype=np.int32), 5, 2)
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype complex64"):
        lax.reduce_precision(np.ones(2, np.complex64), 5, 2)
    with pytest.raises(ValueError, match="exponent_bits must be positive; got 0"):
        lax.reduce_precision(np.ones(2, np.float32), 0, 2)
    with pytest.raises(ValueError, match="mantissa_bits must be non-negative; got -1"):
        lax.reduce_precision(np.ones(2, np.float32), 3, -1)
    with pytest.raises(TypeError):
        lax.reduce_precision(np.ones(2, np.float32), 2.5, 1)
