"""float16 sums and products accumulate in float32 and round once (issue 24): the staged
program says so (JAX's jaxpr: convert to f32, reduce, convert back), so eager mode, jit on
the CPU backend and the interpreter backend give one answer, NumPy's float32 sum rounded.
Below jnp (lax reductions, dots, cumsum) the evaluator, eager rules and the CPU backend's
float normalization pass accumulate float16 in float32 too (ember/hlo/accumulation.py)."""

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


# -- sums and products written below jnp: lax reductions, dots, cumsum (float normalization) --

ULP_SIZES = [1, 7, 33, 1000, 20000]


def _within_one_ulp(out, want):
    """float16 results within one float16 ulp of `want` (summation order may differ)."""
    out, want = np.asarray(out), np.asarray(want)
    assert out.dtype == want.dtype and out.shape == want.shape
    ulp = np.spacing(np.abs(want)).astype(np.float32)
    np.testing.assert_array_less(np.abs(out.astype(np.float32) - want.astype(np.float32)),
                                 ulp + np.float32(1e-30) + ulp * 1e-3)


@pytest.fixture(params=["blas", "ember"])
def matmul_backend(request):
    old = ember.config.ember_matmul_backend
    ember.config.update("ember_matmul_backend", request.param)
    yield request.param
    ember.config.update("ember_matmul_backend", old)


@pytest.mark.parametrize("n", ULP_SIZES)
def test_lax_reduce_sum_accumulates_in_f32(n, monkeypatch):
    x16 = np.random.default_rng(n).uniform(0, 1, n).astype(np.float16)
    want = np.sum(x16.astype(np.float32)).astype(np.float16)
    for out in _three_ways(lambda a: ember.lax.reduce_sum(a, (0,)), jnp.asarray(x16),
                           monkeypatch):
        _within_one_ulp(out, want)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_lax_reduce_sum_over_each_axis(axis, monkeypatch):
    x16 = np.random.default_rng(axis).uniform(0, 1, (300, 7, 33)).astype(np.float16)
    want = np.sum(x16.astype(np.float32), axis=axis).astype(np.float16)
    for out in _three_ways(lambda a: ember.lax.reduce_sum(a, (axis,)), jnp.asarray(x16),
                           monkeypatch):
        _within_one_ulp(out, want)


def test_lax_reduce_prod_accumulates_in_f32(monkeypatch):
    x16 = np.full(200, 1.01, np.float16)
    want = np.prod(x16.astype(np.float32)).astype(np.float16)
    for out in _three_ways(lambda a: ember.lax.reduce_prod(a, (0,)), jnp.asarray(x16),
                           monkeypatch):
        _within_one_ulp(out, want)


@pytest.mark.parametrize("n", ULP_SIZES)
def test_f16_dot_accumulates_in_f32(n, matmul_backend, monkeypatch):
    rng = np.random.default_rng(n)
    a16 = rng.uniform(0, 1, n).astype(np.float16)
    b16 = rng.uniform(0, 1, n).astype(np.float16)
    want = np.dot(a16.astype(np.float32), b16.astype(np.float32)).astype(np.float16)
    for out in _three_ways(lambda a: jnp.dot(a, jnp.asarray(b16)), jnp.asarray(a16),
                           monkeypatch):
        _within_one_ulp(out, want)


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 33, 5), (64, 1000, 48), (3, 20000, 2)])
def test_f16_matmul_accumulates_in_f32(shape, matmul_backend, monkeypatch):
    m, k, n = shape
    rng = np.random.default_rng(k)
    a16 = rng.uniform(0, 1, (m, k)).astype(np.float16)
    b16 = rng.uniform(0, 1, (k, n)).astype(np.float16)
    want = (a16.astype(np.float32) @ b16.astype(np.float32)).astype(np.float16)
    for out in _three_ways(lambda a: a @ jnp.asarray(b16), jnp.asarray(a16), monkeypatch):
        _within_one_ulp(out, want)


def test_thousand_tenths_dot_is_a_hundred(matmul_backend, monkeypatch):
    x = jnp.full(1000, 0.1, jnp.float16)
    for out in _three_ways(lambda a: jnp.dot(a, jnp.ones(1000, jnp.float16)), x, monkeypatch):
        assert float(out) == 100.0


@pytest.mark.parametrize("n", ULP_SIZES)
def test_f16_cumsum_accumulates_in_f32(n, monkeypatch):
    x16 = np.random.default_rng(n).uniform(0, 1, n).astype(np.float16)
    want = np.cumsum(x16.astype(np.float32)).astype(np.float16)
    for out in _three_ways(jnp.cumsum, jnp.asarray(x16), monkeypatch):
        _within_one_ulp(out, want)


@pytest.mark.parametrize("axis", [0, 1])
def test_f16_cumsum_and_mean_over_each_axis(axis, monkeypatch):
    x16 = np.random.default_rng(axis).uniform(0, 1, (1000, 7)).astype(np.float16)
    x32 = x16.astype(np.float32)
    want = np.cumsum(x32, axis=axis).astype(np.float16)
    for out in _three_ways(lambda a: jnp.cumsum(a, axis=axis), jnp.asarray(x16), monkeypatch):
        _within_one_ulp(out, want)
    want = np.mean(x32, axis=axis).astype(np.float16)
    for out in _three_ways(lambda a: jnp.mean(a, axis=axis), jnp.asarray(x16), monkeypatch):
        _within_one_ulp(out, want)


@pytest.mark.parametrize("shape,axis", [((7,), None), ((33, 5), 0), ((3, 129), 1),
                                        ((0, 4), 0)])
def test_mean_with_dtype_float16_converts_first(shape, axis, monkeypatch):
    # mean(x32, dtype=float16): each value rounds to float16 first, then the float16 sum
    # (accumulated in float32 below jnp) rounds once and divides in float16, as NumPy
    # and JAX compute it (JAX's jaxpr: convert, reduce_sum in f16, div). NaN propagates,
    # an empty axis gives NaN, a sum past 65504 overflows to inf as in NumPy.
    x = (np.random.default_rng(len(shape)).standard_normal(shape) * 50).astype(np.float32)
    if x.size:
        x.flat[1] = np.nan
    with np.errstate(all="ignore"):
        want = np.mean(x, axis=axis, dtype=np.float16)
    # NumPy rounds each float16 addition along a strided axis, Ember once: each is within
    # half an ulp of sum(|x|) per addition of the exact mean, so within ulp(sum|x|) (plus
    # the quotient's rounding) of each other
    s = np.abs(x.astype(np.float16).astype(np.float64)).sum(axis=axis)
    tol = np.spacing(s.astype(np.float16)).astype(np.float64) + 2 * np.spacing(
        np.abs(want)).astype(np.float64)
    outs = _three_ways(lambda a: jnp.mean(a, axis=axis, dtype=jnp.float16), x, monkeypatch)
    for out in outs:
        assert out.dtype == np.float16 and out.shape == want.shape
        np.testing.assert_array_equal(out, outs[0])
        err = np.abs(out.astype(np.float64) - want.astype(np.float64))
        assert np.array_equal(np.isnan(out), np.isnan(want))
        assert (err[~np.isnan(want)] <= tol[~np.isnan(want)]).all()
    text = str(ember.make_jaxpr(lambda a: jnp.mean(a, axis=axis, dtype=jnp.float16))(x))
    assert text.index("convert_element_type[new_dtype=float16") < text.index("reduce_sum")
    big = np.full(200, 1000.0, np.float32)
    assert np.isinf(np.asarray(jnp.mean(big, dtype=jnp.float16)))
    assert np.isinf(np.mean(big, dtype=np.float16))


def test_thousand_tenths_cumsum_ends_at_a_hundred(monkeypatch):
    x = jnp.full(1000, 0.1, jnp.float16)
    for out in _three_ways(jnp.cumsum, x, monkeypatch):
        assert float(out[-1]) == 100.0


def test_f16_softmax_rows_keep_their_kernel_count():
    """The converts the float normalization adds fuse: an f16 row softmax written with lax
    reductions compiles to as many kernels as the same program in f32."""
    from ember.backends.cpu import compiler as cpu
    from ember.lowering import lower_jaxpr

    def softmax(x):
        m = ember.lax.reduce_max(x, (1,))
        e = jnp.exp(x - m[:, None])
        return e / ember.lax.reduce_sum(e, (1,))[:, None]

    counts = {}
    for dt in (np.float16, np.float32):
        x = np.random.default_rng(0).uniform(-3, 3, (64, 1000)).astype(dt)
        module = lower_jaxpr(ember.make_jaxpr(softmax)(x), "f").module
        exe = cpu.compile(module)
        counts[dt] = len(exe.kernel_names)
        if dt is np.float16:
            x32 = x.astype(np.float32)
            e = np.exp(x32 - x32.max(1, keepdims=True))
            want = (e / e.sum(1, keepdims=True)).astype(np.float16)
            out = exe(x)
            out = np.asarray(out[0] if isinstance(out, (tuple, list)) else out)
            np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32),
                                       rtol=2e-3, atol=1e-6)
    assert counts[np.float16] == counts[np.float32]
