"""Eager float products run the CPU backend's compiled dot_general (ember/eager_dot.py):
bits equal to jit's over the product's forms (BLAS gemm and gemv, batch dims, complex,
f16/bf16 through jit's loops, a preferred type, strided operands); one compilation per key
(shapes, dtypes, params, tracing flags such as x64), none for integer, empty or tiny
products or another default backend, whose results stay NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import eager_dot, lax
from ember.compiler import backend_name
from ember.core import dtypes
from ember.hlo.evaluator.core import dot_general

MM = (((1,), (0,)), ((), ()))

pytestmark = pytest.mark.skipif(
    backend_name() != "cpu", reason="eager products run the CPU backend's code only")


def _bits(a) -> np.ndarray:
    return np.asarray(a).reshape(-1).view(np.uint8)


def _rand(shape, dtype, seed=0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * np.random.default_rng(seed + 1).standard_normal(shape)
    return v.astype(dtype)


CASES = [  # (lhs shape, rhs shape, dimension numbers, dtype)
    ((64, 48), (48, 40), MM, "float32"),  # BLAS gemm
    ((120, 300), (300,), (((1,), (0,)), ((), ())), "float32"),  # gemv
    ((3, 20, 40), (3, 40, 36), (((2,), (1,)), ((0,), (0,))), "float32"),  # batch dims
    ((40, 33), (40, 50), (((0,), (0,)), ((), ())), "float32"),  # lhs transposed
    ((33, 40), (40, 35), MM, "complex64"),
    ((32, 40), (40, 32), MM, "float16"),  # (jit's generated loops)
    ((32, 40), (40, 32), MM, "bfloat16"),
]


@pytest.mark.parametrize("lshape, rshape, dims, dtype", CASES)
def test_eager_product_is_jits(lshape, rshape, dims, dtype):
    dt = dtypes.bfloat16() if dtype == "bfloat16" else np.dtype(dtype)
    a, b = jnp.asarray(_rand(lshape, dt)), jnp.asarray(_rand(rshape, dt, 3))
    before = eager_dot.STATS["calls"]
    got = lax.dot_general(a, b, dims)
    assert eager_dot.STATS["calls"] == before + 1  # (compiled code ran, not NumPy)
    want = ember.jit(lambda x, y: lax.dot_general(x, y, dims))(a, b)
    assert got.aval == want.aval
    np.testing.assert_array_equal(_bits(got), _bits(want))
    wide = np.complex128 if dt.kind == "c" else np.float64  # (NumPy's product, wide)
    (lc, rc), (lb, rb) = dims
    ref = dot_general(np.asarray(a).astype(wide), np.asarray(b).astype(wide), list(lc),
                      list(rc), list(lb), list(rb), np.dtype(wide))
    np.testing.assert_allclose(np.asarray(got).astype(wide), ref, rtol=2e-2, atol=1e-1)


def test_f64_and_preferred_type_and_strided_operands(x64):
    a, b = _rand((50, 70), np.float64), _rand((70, 30), np.float64, 1)
    ea, eb = jnp.asarray(a), jnp.asarray(b)
    np.testing.assert_array_equal(_bits(ea @ eb), _bits(ember.jit(jnp.matmul)(ea, eb)))
    h, g = jnp.asarray(_rand((40, 40), np.float16)), jnp.asarray(_rand((40, 24), np.float16))
    f = ember.jit(lambda x, y: jnp.dot(x, y, preferred_element_type=jnp.float32))
    got = jnp.dot(h, g, preferred_element_type=jnp.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(_bits(got), _bits(f(h, g)))
    t = jnp.asarray(_rand((70, 50), np.float64)).T  # (eager transpose: a strided view)
    assert not np.asarray(t).flags.c_contiguous
    np.testing.assert_array_equal(_bits(t @ eb), _bits(ember.jit(jnp.matmul)(t, eb)))


def test_one_compilation_per_key(x64):
    eager_dot.clear()
    n0 = eager_dot.STATS["compiled"]
    a = jnp.asarray(_rand((40, 30), np.float32))
    b = jnp.asarray(_rand((30, 30), np.float32))
    first = a @ b
    for _ in range(3):
        np.testing.assert_array_equal(_bits(a @ b), _bits(first))
    assert eager_dot.STATS["compiled"] == n0 + 1
    a @ jnp.asarray(_rand((30, 31), np.float32))  # another shape
    assert eager_dot.STATS["compiled"] == n0 + 2
    a.astype(jnp.float16) @ b.astype(jnp.float16)  # another dtype
    assert eager_dot.STATS["compiled"] == n0 + 3
    lax.dot_general(a, b, MM, preferred_element_type=jnp.float64)  # another param
    assert eager_dot.STATS["compiled"] == n0 + 4
    ember.config.update("jax_enable_x64", False)  # another tracing context
    try:
        a @ b
    finally:
        ember.config.update("jax_enable_x64", True)
    assert eager_dot.STATS["compiled"] == n0 + 5


def test_threshold_is_jits_blas_threshold():
    from ember.backends.cpu.dot import plan

    assert eager_dot.MIN_MACS == plan.BLAS_MIN_MACS
    n0 = eager_dot.STATS["compiled"]
    a, b = _rand((31, 32), np.float32), _rand((32, 32), np.float32, 1)  # one row short
    got = jnp.asarray(a) @ jnp.asarray(b)
    assert eager_dot.STATS["compiled"] == n0
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-5, atol=1e-5)
    a = _rand((32, 32), np.float32)
    np.testing.assert_array_equal(_bits(jnp.asarray(a) @ jnp.asarray(b)),
                                  _bits(ember.jit(jnp.matmul)(a, b)))
    assert eager_dot.STATS["compiled"] == n0 + 1


def test_integer_and_empty_products_stay_numpys():
    n0, c0 = eager_dot.STATS["compiled"], eager_dot.STATS["calls"]
    a = np.arange(-1600, 1600, dtype=np.int32).reshape(40, 80) * 4_000_000  # wraps
    b = np.arange(80 * 30, dtype=np.int32).reshape(80, 30)
    got = jnp.asarray(a) @ jnp.asarray(b)
    np.testing.assert_array_equal(np.asarray(got), a @ b)
    e = jnp.zeros((4, 0), np.float32) @ jnp.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(e), np.zeros((4, 3), np.float32))
    assert (eager_dot.STATS["compiled"], eager_dot.STATS["calls"]) == (n0, c0)


def test_another_backend_declines(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")
    c0 = eager_dot.STATS["calls"]
    a, b = _rand((40, 40), np.float32), _rand((40, 40), np.float32, 1)
    got = jnp.asarray(a) @ jnp.asarray(b)
    assert eager_dot.STATS["calls"] == c0
    np.testing.assert_allclose(np.asarray(got), a @ b, rtol=1e-5, atol=1e-6)
