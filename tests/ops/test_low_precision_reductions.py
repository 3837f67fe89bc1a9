"""float16 sums and products accumulate in float32 and round once (issue 24): the staged
program says so (JAX's jaxpr: convert to f32, reduce, convert back), so eager mode, jit on
the CPU backend and the interpreter backend give one answer, NumPy's float32 sum rounded."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp

SIZES = [1, 2, 7, 100, 1000, 4097, 20000]


def _three_ways(f, x, monkeypatch):
    """(eager, jit on cpu, jit on the interpreter) of f(x), as NumPy arrays."""
    eager = np.asarray(f(x))
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    on_cpu = np.asarray(ember.jit(lambda a: f(a))(x))
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")
    on_interp = np.asarray(ember.jit(lambda a: f(a))(x))
    return eager, on_cpu, on_interp


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["sum", "mean", "nansum"])
def test_f16_sums_agree(name, n, monkeypatch):
    rng = np.random.default_rng(n)
    x16 = rng.uniform(0, 1, n).astype(np.float16)
    f = getattr(jnp, name)
    outs = _three_ways(f, jnp.asarray(x16), monkeypatch)
    want = getattr(np, name)(x16.astype(np.float32)).astype(np.float16)
    for out in outs:
        assert out.dtype == np.float16
        np.testing.assert_array_equal(out, want)


def test_thousand_tenths_is_a_hundred(monkeypatch):
    x = jnp.full(1000, 0.1, jnp.float16)
    for out in _three_ways(jnp.sum, x, monkeypatch):
        assert float(out) == 100.0


@pytest.mark.parametrize("axis", [0, 1, None])
def test_f16_sum_over_axes(axis, monkeypatch):
    x16 = np.random.default_rng(0).uniform(0, 1, (300, 5)).astype(np.float16)
    want = np.sum(x16.astype(np.float32), axis=axis).astype(np.float16)
    for out in _three_ways(lambda a: jnp.sum(a, axis=axis), jnp.asarray(x16), monkeypatch):
        np.testing.assert_array_equal(out, want)


def test_f16_prod(monkeypatch):
    x16 = np.full(100, 1.01, np.float16)
    want = np.prod(x16.astype(np.float32)).astype(np.float16)
    for out in _three_ways(jnp.prod, jnp.asarray(x16), monkeypatch):
        assert out == want


def test_jaxpr_matches_jax():
    text = str(ember.make_jaxpr(jnp.sum)(jnp.ones(8, jnp.float16)))
    assert text == (
        "{ lambda ; a:f16[8]. let\n"
        "    b:f32[8] = convert_element_type[new_dtype=float32 weak_type=False] a\n"
        "    c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b\n"
        "    d:f16[] = convert_element_type[new_dtype=float16 weak_type=False] c\n"
        "  in (d,) }")
    # an explicit float16 dtype computes in float16, as JAX's does
    text = str(ember.make_jaxpr(lambda a: jnp.sum(a, dtype=jnp.float16))(jnp.ones(8)))
    assert "c:f16[] = reduce_sum" in text
