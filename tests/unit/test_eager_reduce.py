"""Eager float sums, products and scans run the CPU backend's compiled equation
(ember/eager_reduce.py): bits equal to jit's over shapes, axes and dtypes where NumPy's
pairwise order differs from jit's vector lanes; one compilation per key; integer, empty,
single-element and max/min reductions stay NumPy's.
What is equal is an operation eagerly and the same operation under jit: a jitted function
of several operations may fuse a reduction with its producers into a kernel whose loop
order is its own (as XLA's may, against JAX's eager operations)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import eager_reduce, lax
from ember.compiler import backend_name

pytestmark = pytest.mark.skipif(
    backend_name() != "cpu", reason="eager reductions run the CPU backend's code only")


def _bits(a) -> bytes:
    return np.asarray(a).tobytes()


def _rand(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


OPS = {
    "sum": lambda v, ax: jnp.sum(v, axis=ax),
    "mean": lambda v, ax: jnp.mean(v, axis=ax),
    "prod": lambda v, ax: jnp.prod(v, axis=ax),
    "cumsum": lambda v, ax: jnp.cumsum(v, axis=ax if isinstance(ax, int) else -1),
    "cumprod": lambda v, ax: jnp.cumprod(v, axis=-1),
    "reverse_cumsum": lambda v, ax: lax.cumsum(v, axis=v.ndim - 1, reverse=True),
    "cumlogsumexp": lambda v, ax: lax.cumlogsumexp(v, axis=v.ndim - 1),
}
SHAPES = [((100,), None), ((3, 1000), 1), ((37, 9), 0), ((5, 4097), None), ((2, 3, 33), (0, 2))]


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("shape,axis", SHAPES)
def test_eager_is_jits_bits(name, shape, axis):
    x = _rand(shape, np.float32)
    if "prod" in name:  # (products of numbers near 1: no overflow to inf, all bits alive)
        x = (x * 1e-4 + 1).astype(np.float32)
    fn = OPS[name]
    eager = fn(jnp.asarray(x), axis)
    jitted = ember.jit(lambda v: fn(v, axis))(x)
    assert _bits(eager) == _bits(jitted), name


@pytest.mark.parametrize("dtype", ["float64", "complex64", "float16", "bfloat16"])
def test_other_float_types(dtype, x64):
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    x = _rand((7, 300), dt)
    for fn in (lambda v: jnp.sum(v, axis=1), lambda v: jnp.cumsum(v, axis=1),
               lambda v: jnp.prod(v, axis=0)):
        assert _bits(fn(jnp.asarray(x))) == _bits(ember.jit(fn)(x))


def test_a_sum_numpy_orders_otherwise():
    """The case the path exists for: NumPy's pairwise sum and jit's differ in the last bits
    for this input, and eager now gives jit's."""
    x = _rand((4097,), np.float32, seed=3)
    jitted = np.asarray(ember.jit(jnp.sum)(x))
    assert _bits(np.sum(x)) != _bits(jitted)  # (else this test shows nothing)
    assert _bits(jnp.sum(jnp.asarray(x))) == _bits(jitted)


def test_one_compilation_per_key(x64):
    eager_reduce.clear()
    n0, c0 = eager_reduce.STATS["compiled"], eager_reduce.STATS["calls"]
    x = _rand((6, 50), np.float32)
    jnp.sum(jnp.asarray(x), axis=1)
    jnp.sum(jnp.asarray(x * 2), axis=1)  # same key
    assert eager_reduce.STATS["compiled"] == n0 + 1
    jnp.sum(jnp.asarray(x), axis=0)  # other params
    jnp.sum(jnp.asarray(x.astype(np.float64)), axis=1)  # other dtype
    jnp.sum(jnp.asarray(x[:, :49]), axis=1)  # other shape (and a strided operand)
    assert eager_reduce.STATS["compiled"] == n0 + 4
    assert eager_reduce.STATS["calls"] == c0 + 5


def test_exact_and_trivial_reductions_stay_numpys():
    n0, c0 = eager_reduce.STATS["compiled"], eager_reduce.STATS["calls"]
    i = np.arange(1000, dtype=np.int32)
    assert int(jnp.sum(jnp.asarray(i))) == 499500
    f = _rand((40, 30), np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.max(jnp.asarray(f), axis=1)), f.max(1))
    np.testing.assert_array_equal(np.asarray(jnp.sum(jnp.asarray(f[:, :1]), axis=1)),
                                  f[:, 0] + np.float32(0))
    assert float(jnp.sum(jnp.zeros((0,), np.float32))) == 0.0
    assert (eager_reduce.STATS["compiled"], eager_reduce.STATS["calls"]) == (n0, c0)


def test_another_backend_declines(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")
    c0 = eager_reduce.STATS["calls"]
    x = _rand((500,), np.float32)
    got = jnp.sum(jnp.asarray(x))
    assert eager_reduce.STATS["calls"] == c0
    np.testing.assert_allclose(np.asarray(got), x.sum(dtype=np.float64), rtol=1e-5)


# -- convolutions and triangular work (ember/eager_native.py's ALWAYS) ----------------------

def test_convolution_and_linalg_are_jits_bits():
    from ember import eager_native

    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 17, 19)).astype(np.float32)
    w = rng.standard_normal((4, 3, 5, 3)).astype(np.float32)
    a = rng.standard_normal((21, 21)).astype(np.float32)
    spd = a @ a.T + 21 * np.eye(21, dtype=np.float32)
    b = rng.standard_normal((21, 4)).astype(np.float32)
    c0 = eager_native.OTHER_STATS["calls"]
    for fn, args in [
            (lambda u, v: lax.conv_general_dilated(u, v, (2, 1), "SAME"), (x, w)),
            (jnp.linalg.cholesky, (spd,)),
            (lambda m, r: ember.scipy.linalg.solve_triangular(m, r, lower=True),
             (np.tril(a) + 8 * np.eye(21, dtype=np.float32), b)),
            (jnp.linalg.solve, (a, b))]:
        eager = fn(*[jnp.asarray(v) for v in args])
        assert _bits(eager) == _bits(ember.jit(fn)(*args))
    assert eager_native.OTHER_STATS["calls"] >= c0 + 4
