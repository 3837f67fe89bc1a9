"""Direct steps of the eager dispatch cache (ember/numpy/_eager_steps.py): a replayed
elementwise op that calls the math kernel or the NumPy ufunc itself gives exactly the bits
of the uncached call and of jit, is chosen only for the operand types it is meant for, and
falls back to the rule for a strided operand or a swapped math provider."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.array import ArrayImpl
from ember.core import dtypes
from ember.hlo.evaluator import elementwise as ew
from ember.numpy import _eager_cache as cache

SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e-30, 3.5]


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.reshape(-1).view(np.uint8)


def _same(got, want) -> None:
    assert type(got) is ArrayImpl
    assert got.aval == want.aval, (got.aval, want.aval)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def _step_kinds(fn, *args) -> list[str]:
    """The kind of each step of the plan `fn(*args)` replays ("math", "ufunc", "generic")."""
    target = getattr(fn, "__wrapped_eager__", None) or fn._eager.__wrapped_eager__
    key = cache._key(target, args, {})
    plan = cache._PLANS[key]
    names = {"_math_step": "math", "_ufunc_step": "ufunc"}
    return [names.get(s[0].__qualname__.split(".")[0], "generic") for s in plan.steps]


def _values(shape, dtype) -> np.ndarray:
    rng = np.random.default_rng(1)
    v = (rng.standard_normal(shape) * 2).astype(np.float64)
    flat = v.reshape(-1)
    flat[: min(flat.size, len(SPECIAL))] = SPECIAL[: flat.size]
    with np.errstate(all="ignore"):
        return v.astype(dtype)


CALLS = [
    ("sin", lambda x, y: jnp.sin(x)), ("exp", lambda x, y: jnp.exp(x)),
    ("tanh", lambda x, y: jnp.tanh(x)), ("log1p", lambda x, y: jnp.log1p(x)),
    ("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / y), ("scalar", lambda x, y: x * 2.0 + 1.0),
    ("gt", lambda x, y: x > y), ("eq", lambda x, y: x == y), ("le0", lambda x, y: x <= 0),
    ("where", lambda x, y: jnp.where(x > 0, x, y)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("shape", [(), (0,), (9,), (3, 5)])
def test_replay_equals_uncached_and_jit(shape, dtype, x64):
    dt = dtypes.bfloat16() if dtype == "bfloat16" else np.dtype(dtype)
    x = jnp.asarray(_values(shape, dt))
    y = jnp.asarray(_values(shape, dt)[::-1] if shape else _values(shape, dt))
    for name, op in CALLS:
        if dt.kind == "i" and name in ("sin", "exp", "tanh", "log1p", "div"):
            continue
        want = ember.jit(op)(x, y)
        for _ in range(3):  # uncached, a trace, then a replay
            _same(op(x, y), want)


def test_direct_steps_are_chosen_by_type():
    f32 = jnp.asarray(_values((9,), np.float32))
    assert _warm(jnp.sin, f32) == ["math"]
    assert _warm(jnp.add, f32, f32) == ["ufunc"]
    assert _warm(jnp.multiply, f32, 2.0) == ["ufunc"]  # (the constant stretched once)
    i32 = jnp.asarray(np.arange(9, dtype=np.int32))
    assert _warm(jnp.add, i32, i32) == ["generic"]  # (integer rules: XLA's wrapping)
    bf16 = jnp.asarray(_values((9,), dtypes.bfloat16()))
    assert _warm(jnp.sin, bf16) == ["generic"]  # (computed in f32 by its rule)
    row = jnp.asarray(_values((3, 9), np.float32))
    assert _warm(jnp.add, row, f32)[-1] == "generic"  # (an operand of another shape)
    scalar = jnp.asarray(np.float32(2.0))
    assert _warm(jnp.add, scalar, scalar) == ["generic"]  # (0-d: a ufunc gives a scalar)
    assert _warm(jnp.greater, f32, f32) == ["ufunc"]
    assert _warm(jnp.less_equal, i32, 3) == ["ufunc"]
    assert _warm(jnp.equal, bf16, bf16) == ["generic"]
    c64 = jnp.asarray(_values((9,), np.float32) + 1j)
    assert _warm(jnp.equal, c64, c64) == ["generic"]
    assert _warm(jnp.multiply, c64, c64) == ["ufunc"]
    assert _warm(jnp.sin, c64) == ["generic"]  # (no complex math kernel)


def _warm(fn, *args) -> list[str]:
    for _ in range(2):
        fn(*args)
    return _step_kinds(fn, *args)


def test_a_strided_operand_takes_the_rule():
    base = jnp.asarray(_values((18,), np.float32))
    dense = jnp.asarray(_values((9,), np.float32))
    assert _warm(jnp.sin, dense) == ["math"]
    strided = base[::2]
    assert not np.asarray(strided).flags.c_contiguous  # (the slice rule's view)
    assert strided.aval == dense.aval  # ... so the same plan serves it
    want = ember.jit(jnp.sin)(strided)
    _same(jnp.sin(strided), want)
    _same(jnp.exp(strided) + strided, ember.jit(lambda v: jnp.exp(v) + v)(strided))


def test_a_swapped_math_provider_is_followed():
    v = (np.random.default_rng(1).standard_normal(2000) * 50).astype(np.float32)
    x = jnp.asarray(v)
    assert _warm(jnp.sin, x) == ["math"]
    # (the kernel and NumPy differ in the last bit somewhere here, so the test can fail)
    assert not np.array_equal(_bits(jnp.sin(x)), _bits(np.sin(v)))
    previous = ew.use_math_kernels(None)  # NumPy's own sin from now on
    try:
        with np.errstate(all="ignore"):
            want = ember.numpy.asarray(np.sin(np.asarray(x)))
        _same(jnp.sin(x), want)
    finally:
        ew.use_math_kernels(previous)
    _same(jnp.sin(x), ember.jit(jnp.sin)(x))


def test_direct_steps_skip_the_rule(monkeypatch):
    """The direct branch really runs (the generic rule is only the fallback)."""
    calls = []
    one = cache._one

    def counting_one(impl, aval):
        generic = one(impl, aval)

        def run(*args, **params):
            calls.append(impl)
            return generic(*args, **params)
        return run

    monkeypatch.setattr(cache, "_one", counting_one)
    cache.clear()
    x = jnp.asarray(_values((9,), np.float32))
    for _ in range(3):
        jnp.sin(x), x + x, x * 2.0, x / x
    assert _step_kinds(jnp.sin, x) == ["math"] and _step_kinds(jnp.add, x, x) == ["ufunc"]
    assert calls == []
    strided = jnp.asarray(_values((18,), np.float32))[::2]
    jnp.sin(strided)  # (the math kernel takes contiguous operands only)
    assert len(calls) == 1
