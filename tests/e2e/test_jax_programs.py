"""Whole loop-free JAX programs, written exactly as for JAX, run on Ember after
`import ember as jax; import ember.numpy as jnp; from ember import lax`, checked against
NumPy (float64 references, f32 tolerances), eager and jitted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ember as jax
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(1234)


def _randn(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _check(fn, args, ref, rtol=2e-5, atol=2e-5):
    """Run eagerly and jitted, compare both with NumPy and with each other."""
    jitted = jax.jit(fn)
    got_jit = jitted(*args)
    got_eager = fn(*args)
    refs = ref if isinstance(ref, tuple) else (ref,)
    outs_jit = got_jit if isinstance(got_jit, tuple) else (got_jit,)
    outs_eager = got_eager if isinstance(got_eager, tuple) else (got_eager,)
    assert len(outs_jit) == len(refs)
    for j, e, r in zip(outs_jit, outs_eager, refs):
        assert isinstance(j, jax.Array)
        np.testing.assert_allclose(np.asarray(j), r, rtol=rtol, atol=atol)
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-6, atol=1e-6)
    jitted(*args)
    assert jitted.trace_count == 1


# -- fused elementwise math ------------------------------------------------------------------

def test_fused_elementwise():
    def f(x):
        return jnp.tanh(x * 0.5 + 1.0) * jnp.exp(-x * x) + jnp.log1p(jnp.abs(x))

    x = _randn(1000)
    x64 = x.astype(np.float64)
    _check(f, (x,), np.tanh(x64 * 0.5 + 1) * np.exp(-x64 * x64) + np.log1p(np.abs(x64)))


# -- softmax ---------------------------------------------------------------------------------

def softmax(x, axis=-1):
    e = jnp.exp(x - jnp.max(x, axis=axis, keepdims=True))
    return e / jnp.sum(e, axis=axis, keepdims=True)


def _np_softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax():
    x = _randn(8, 33) * 5
    _check(softmax, (x,), _np_softmax(x))


# -- MLP with layernorm and gelu ---------------------------------------------------------------

def layernorm(x, gamma, beta, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * gamma + beta


def gelu_tanh(x):
    return 0.5 * x * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1.0 + lax.erf(x / math.sqrt(2.0)))


def mlp(params, x):
    h = layernorm(x, params["ln_g"], params["ln_b"])
    h = gelu_tanh(jnp.matmul(h, params["w1"]) + params["b1"])
    h = gelu_erf(h @ params["w2"] + params["b2"])
    return jnp.dot(h, params["w3"])


def test_mlp_layernorm_gelu():
    from scipy.special import erf  # reference only; ember itself never imports scipy

    d, h = 16, 32
    params = {"ln_g": _randn(d), "ln_b": _randn(d), "w1": _randn(d, h) / 4, "b1": _randn(h),
              "w2": _randn(h, h) / 6, "b2": _randn(h), "w3": _randn(h, 3) / 6}
    x = _randn(5, d)
    p = {k: v.astype(np.float64) for k, v in params.items()}
    xx = x.astype(np.float64)
    mu = xx.mean(-1, keepdims=True)
    var = ((xx - mu) ** 2).mean(-1, keepdims=True)
    hh = (xx - mu) / np.sqrt(var + 1e-5) * p["ln_g"] + p["ln_b"]
    a = hh @ p["w1"] + p["b1"]
    hh = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))
    a = hh @ p["w2"] + p["b2"]
    hh = 0.5 * a * (1 + erf(a / np.sqrt(2)))
    _check(mlp, (params, x), hh @ p["w3"], rtol=1e-4, atol=1e-4)


# -- Black-Scholes ----------------------------------------------------------------------------

def black_scholes(S, K, T, r, sigma):
    def ncdf(z):
        return 0.5 * (1.0 + lax.erf(z / jnp.sqrt(2.0)))

    d1 = (jnp.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * jnp.sqrt(T))
    d2 = d1 - sigma * jnp.sqrt(T)
    call = S * ncdf(d1) - K * jnp.exp(-r * T) * ncdf(d2)
    put = K * jnp.exp(-r * T) * ncdf(-d2) - S * ncdf(-d1)
    return call, put


def test_black_scholes():
    from scipy.special import ndtr

    n = 257
    S = RNG.uniform(50, 150, n).astype(np.float32)
    K = RNG.uniform(50, 150, n).astype(np.float32)
    T = RNG.uniform(0.1, 2.0, n).astype(np.float32)
    r, sigma = 0.03, 0.25
    s, k, t = (a.astype(np.float64) for a in (S, K, T))
    d1 = (np.log(s / k) + (r + 0.5 * sigma ** 2) * t) / (sigma * np.sqrt(t))
    d2 = d1 - sigma * np.sqrt(t)
    call = s * ndtr(d1) - k * np.exp(-r * t) * ndtr(d2)
    put = k * np.exp(-r * t) * ndtr(-d2) - s * ndtr(-d1)
    _check(black_scholes, (S, K, T, r, sigma), (call, put), rtol=1e-4, atol=2e-3)


# -- uint32 hash Monte Carlo ------------------------------------------------------------------

def hash_u32(x):
    # "lowbias32": wrapping multiplies, logical shifts and xor on uint32.
    x = x ^ (x >> 16)
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> 16)


def monte_carlo_pi(idx, seed):
    a = hash_u32(idx * jnp.uint32(2) + seed)
    b = hash_u32(idx * jnp.uint32(2) + seed + np.uint32(1))
    u = (a >> 8).astype(jnp.float32) * (1.0 / (1 << 24))
    v = (b >> 8).astype(jnp.float32) * (1.0 / (1 << 24))
    inside = (u * u + v * v) <= 1.0
    return 4.0 * jnp.mean(inside.astype(jnp.float32)), a


def _np_hash(x):
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        return x ^ (x >> np.uint32(16))


def test_uint32_hash_monte_carlo():
    idx = np.arange(4096, dtype=np.uint32)
    seed = np.uint32(0x9E3779B9)
    with np.errstate(over="ignore"):
        a = _np_hash(idx * np.uint32(2) + seed)
        b = _np_hash(idx * np.uint32(2) + seed + np.uint32(1))
    u = (a >> np.uint32(8)).astype(np.float32) * np.float32(1 / (1 << 24))
    v = (b >> np.uint32(8)).astype(np.float32) * np.float32(1 / (1 << 24))
    est = 4.0 * np.mean((u * u + v * v) <= 1.0)
    jitted = jax.jit(monte_carlo_pi)
    pi_hat, bits = jitted(idx, seed)
    assert bits.dtype == np.uint32
    np.testing.assert_array_equal(np.asarray(bits), a)      # exact integer arithmetic
    np.testing.assert_allclose(float(pi_hat), est, rtol=1e-6)
    assert abs(float(pi_hat) - np.pi) < 0.1
    e_pi, e_bits = monte_carlo_pi(idx, seed)
    np.testing.assert_array_equal(np.asarray(e_bits), a)
    assert float(e_pi) == float(pi_hat)


# -- causal attention -------------------------------------------------------------------------

def causal_attention(q, k, v):
    t, d = q.shape[-2], q.shape[-1]
    scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(jnp.float32(d))
    mask = jnp.tril(jnp.ones((t, t), dtype=bool))
    scores = jnp.where(mask, scores, -jnp.inf)
    weights = softmax(scores, axis=-1)
    return jnp.einsum("bqk,bkd->bqd", weights, v), weights


def test_causal_attention():
    b, t, d = 2, 7, 4
    q, k, v = _randn(b, t, d), _randn(b, t, d), _randn(b, t, d)
    s = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k) / np.sqrt(d)
    s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    w = _np_softmax(s)
    out = np.einsum("bqk,bkd->bqd", w, v.astype(np.float64))
    _check(causal_attention, (q, k, v), (out, w), rtol=1e-4, atol=1e-5)
    _, weights = jax.jit(causal_attention)(q, k, v)
    assert np.all(np.triu(np.asarray(weights)[0], 1) == 0)


@pytest.mark.parametrize("prog", ["softmax", "black_scholes"])
def test_programs_print_a_jaxpr(prog):
    if prog == "softmax":
        text = str(jax.make_jaxpr(softmax)(np.zeros((2, 3), np.float32)))
        assert "reduce_max" in text and "exp" in text and "div" in text
    else:
        x = np.ones(3, np.float32)
        text = str(jax.make_jaxpr(black_scholes)(x, x, x, 0.03, 0.25))
        assert "erf" in text and "log" in text
