"""The cached-call fast path of ember.jit (ember/fastpath.py): when it is taken, that it
gives exactly what the normal path gives, and that everything else falls back to it.

"Taken" is read from `fastpath.STATS["slow_calls"]` (calls that went the normal way): a
fast call leaves it unchanged. Every test runs on both backends: the CPU one (a native
trampoline) and the interpreter (its results may alias inputs, so they are wrapped the
general way).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import fastpath
from ember.array import ArrayImpl
from ember.core.aval import ShapedArray

SHAPES = [(), (0,), (1,), (7,), (33,), (3, 5)]
DTYPES = [np.float32, np.int32, np.bool_, np.uint8]


@pytest.fixture(params=["cpu", "interpreter"], autouse=True)
def backend(request, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", request.param)
    return request.param


class _Slow:
    """`with _Slow() as s: ...; s.count`: calls that took the normal path in the block."""

    def __enter__(self) -> _Slow:
        self.start = fastpath.STATS["slow_calls"]
        return self

    def __exit__(self, *exc: object) -> None:
        self.count = fastpath.STATS["slow_calls"] - self.start


def _value(shape: tuple, dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray((rng.standard_normal(shape) * 20).astype(dtype))  # 0-d: an array too


def _same(got: object, want: np.ndarray) -> None:
    assert isinstance(got, ArrayImpl)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


# -- taken, and correct ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_fast_path_with_array_and_numpy_arguments(shape, dtype):
    f = ember.jit(lambda x, y: (x + y, x == y))
    a, b = _value(shape, dtype, 1), _value(shape, dtype, 2)
    want = (a + b if a.dtype != np.bool_ else a | b, a == b)
    xa, xb = jnp.asarray(a), jnp.asarray(b)
    f(xa, xb)
    f(xa, xb)  # the first cache hit installs the fast path
    with _Slow() as s:
        for args in [(xa, xb), (a, b), (xa, b), (a, xb)]:
            got = f(*args)
            _same(got[0], want[0])
            _same(got[1], want[1])
    assert s.count == 0 and f.trace_count == 1


def test_chained_calls_feed_results_back():
    f = ember.jit(lambda x: x * 2 + 1)
    y = f(np.ones(7, np.float32))
    with _Slow() as s:
        for _ in range(20):
            y = f(y)
    assert s.count == 1  # the install call
    want = np.ones(7, np.float32)
    for _ in range(21):
        want = want * 2 + 1
    _same(y, want)


def test_weak_types_of_results_and_arguments():
    f = ember.jit(lambda x: x * 2)
    w = ember.jit(lambda: 3.0)()  # a weakly typed f32[] Array
    assert w.weak_type
    f(w), f(w)
    with _Slow() as s:
        r = f(w)
    assert s.count == 0 and r.weak_type and r.dtype == np.float32 and float(r) == 6.0
    # a NumPy value is never weak: it is another signature, traced on the normal path
    with _Slow() as s:
        r = f(np.float32(3.0).reshape(()))
    assert s.count == 1 and not r.weak_type and f.trace_count == 2
    g = ember.jit(lambda x: (x, 1.5))  # a weak constant output
    x = np.ones(3, np.float32)
    g(x), g(x)
    with _Slow() as s:
        r = g(x)
    assert s.count == 0 and isinstance(r, tuple) and r[1].weak_type and not r[0].weak_type


def test_fast_results_are_arrays_like_any_other(backend):
    if backend != "cpu":
        pytest.skip("the interpreter's results are wrapped by wrap_results, as always")
    f = ember.jit(lambda x: x + 0.5)
    x = np.arange(3, dtype=np.float32)
    f(x), f(x)
    with _Slow() as s:
        r = f(x)
    assert s.count == 0
    o = np.asarray(r)
    ref = ArrayImpl(o, r.aval, o)  # how the normal path builds a compiled output's Array
    for slot in ArrayImpl.__slots__:
        if slot != "__weakref__":
            assert getattr(r, slot) is getattr(ref, slot), slot
    assert repr(r) == repr(ref) and not r.is_deleted()


def test_results_are_read_only_fresh_and_never_rewritten():
    f = ember.jit(lambda x: x + 1)
    ident = ember.jit(lambda x: x)
    x = np.arange(5, dtype=np.float32)
    results = [f(x) for _ in range(4)]  # calls 3 and 4 are fast
    for k, r in enumerate(results):
        _same(r, x + 1)
        with pytest.raises(ValueError):
            np.asarray(r)[0] = 99
        for other in results[k + 1:]:
            assert not np.shares_memory(np.asarray(r), np.asarray(other))
    y1 = f(results[-1])
    snapshot = np.asarray(y1).copy()
    y2 = f(y1)
    _same(y1, snapshot)  # call k's result unchanged after call k + 1
    _same(y2, snapshot + 1)
    ident(x), ident(x)
    with _Slow() as s:
        r = ident(x)
    assert s.count == 0
    x[:] = -1  # the user's array changes: the result must not
    _same(r, np.arange(5, dtype=np.float32))


def test_large_results_from_the_pool_are_never_shared_while_alive():
    f = ember.jit(lambda x: x * 2)
    x = np.arange(200_003, dtype=np.float32)  # ~800 KB: pooled by the CPU allocator
    kept = [f(x) for _ in range(3)]
    for _ in range(3):
        f(x)  # dropped at once: their blocks may be recycled ...
    kept.append(f(x))
    for k, r in enumerate(kept):  # ... but never one still referenced
        _same(r, x * 2)
        assert not np.asarray(r).flags.writeable
        for other in kept[k + 1:]:
            assert not np.shares_memory(np.asarray(r), np.asarray(other))


def test_multiple_outputs_pytrees_out_and_no_arguments():
    f = ember.jit(lambda x: {"a": x * 2, "b": (x.sum(), x[::2])})
    x = np.arange(9, dtype=np.float32)
    f(x), f(x)
    with _Slow() as s:
        r = f(x)
    assert s.count == 0
    _same(r["a"], x * 2)
    _same(r["b"][0], np.float32(x.sum()).reshape(()))
    _same(r["b"][1], x[::2])
    none = ember.jit(lambda x: None)
    for _ in range(3):
        assert none(x) is None
    k = ember.jit(lambda: jnp.arange(4))
    k(), k()
    with _Slow() as s:
        r = k()
    assert s.count == 0
    _same(r, np.arange(4, dtype=np.int32))


def test_hidden_constants_and_strided_array_arguments():
    c = np.linspace(0, 1, 1000).astype(np.float32)  # large: a hidden constant argument
    f = ember.jit(lambda x: x * c)
    x = np.ones(1000, np.float32)
    f(x), f(x)
    with _Slow() as s:
        r = f(x)
    assert s.count == 0
    _same(r, x * c)
    # an Array whose buffer is a strided view (broadcast to a zero stride)
    b = ArrayImpl._from_rule(np.float32(2.0), ShapedArray((1000,), np.dtype(np.float32)))
    assert not b._value.flags.c_contiguous
    with _Slow() as s:
        r = f(b)
    assert s.count == 0
    _same(r, np.full(1000, 2.0, np.float32) * c)


# -- falls back -------------------------------------------------------------------------------

def test_shape_and_dtype_changes_fall_back_then_get_their_own_fast_path():
    f = ember.jit(lambda x: x * 3)
    a = np.arange(4, dtype=np.float32)
    f(a), f(a)
    for other in [np.arange(5, dtype=np.float32), np.arange(4, dtype=np.int32)]:
        with _Slow() as s:
            _same(f(other), other * 3)
        assert s.count == 1
        f(other)
        with _Slow() as s:
            _same(f(other), other * 3)
        assert s.count == 0
    assert f.trace_count == 3


def test_signatures_taking_turns_reuse_their_fast_paths():
    f = ember.jit(lambda x: x - 2)
    a, b = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32)
    for x in (a, a, b, b):
        f(x)
    built = fastpath.STATS["fast_built"]
    with _Slow() as s:
        for _ in range(5):
            _same(f(a), a - 2)
            _same(f(b), b - 2)
    assert s.count == 10  # each switch goes the normal way once ...
    assert fastpath.STATS["fast_built"] == built  # ... and reinstalls, without rebuilding


def test_numpy_arguments_needing_conversion_or_a_copy_fall_back():
    f = ember.jit(lambda x: x + 1)
    a = np.arange(8, dtype=np.float32)
    f(a), f(a)
    with _Slow() as s:
        _same(f(np.arange(8, dtype=np.float64)), a + 1)  # f64 -> f32 (x64 off)
        _same(f(np.arange(16, dtype=np.float32)[::2]), np.arange(16, dtype=np.float32)[::2]
              + 1)  # not C-contiguous
        t = a.reshape(2, 4).T.reshape(8)
        _same(f(t), t + 1)
    assert s.count == 2  # the reshape of a transpose copies: contiguous again
    with _Slow() as s:
        _same(f(a), a + 1)
    assert s.count == 0  # the fast path survived the misses


def test_pytree_kwargs_static_and_complex_arguments_fall_back():
    x = np.arange(6, dtype=np.float32)
    tree = ember.jit(lambda d: d["w"] * d["b"])
    kw = ember.jit(lambda x, y: x - y)
    static = ember.jit(lambda x, n: x * n, static_argnums=1)
    cplx = ember.jit(lambda x, z: x * z)
    for _ in range(3):
        with _Slow() as s:
            _same(tree({"w": x, "b": x}), x * x)
            _same(kw(x, y=x), x - x)
            _same(static(x, 3), x * 3)
            _same(cplx(x, 2j), x * np.complex64(2j))
        assert s.count == 4
    assert (tree.trace_count, kw.trace_count, static.trace_count, cplx.trace_count) == (
        1, 1, 1, 1)


def test_python_float_int_and_bool_arguments_take_the_fast_path():
    """f(x, 2.0): a Python scalar is converted as the normal path converts it (a weak
    scalar of the default type); an int out of the type's range still raises there."""
    x = np.arange(6, dtype=np.float32)
    scale = ember.jit(lambda x, a: x * a + 1)
    shift = ember.jit(lambda x, n: x + n)
    for _ in range(2):  # (the second call installs the fast path)
        scale(x, 2.0)
        shift(x, 3)
    with _Slow() as s:
        _same(scale(x, 2.5), x * np.float32(2.5) + 1)
        _same(scale(x, 1e-46), x * np.float32(1e-46) + 1)  # (rounds to f32 as the slow path)
        _same(shift(x, -7), x - 7)
        _same(scale(x, ember.numpy.asarray(3.0)), x * 3 + 1)  # (an Array of the weak aval)
    assert s.count == 0
    with _Slow() as s, pytest.raises(OverflowError):
        shift(x, 2**40)
    assert s.count == 1
    flag = ember.jit(lambda x, b: ember.numpy.where(b, x, -x))
    flag(x, True), flag(x, True)
    with _Slow() as s:
        _same(flag(x, False), -x)  # (a Python bool: a strong bool[], as in JAX)
    assert s.count == 0
    with _Slow() as s:
        _same(shift(x, 2.5), x + np.float32(2.5))  # (a float where an int was traced)
        _same(scale(x, 2), x * 2 + 1)
    assert s.count == 2 and scale.trace_count == 2 and shift.trace_count == 2


def test_inside_another_jit_and_under_make_jaxpr_the_call_is_staged():
    inner = ember.jit(lambda x: x * 2)
    a = jnp.asarray(np.arange(3, dtype=np.float32))
    inner(a), inner(a)  # the fast path is installed

    @ember.jit
    def outer(x):
        return inner(a) + inner(x)  # `a` is concrete: must still be staged

    text = str(ember.make_jaxpr(outer)(a))
    assert text.count("jit[name=<lambda>") == 2  # both calls of `inner` are equations
    text = str(ember.make_jaxpr(lambda x: inner(x) + inner(a))(a))
    assert text.count("jit[name=<lambda>") == 2
    _same(outer(a), np.arange(3, dtype=np.float32) * 4)
    _same(outer(a), np.arange(3, dtype=np.float32) * 4)
    with _Slow() as s:
        _same(inner(a), np.arange(3, dtype=np.float32) * 2)
    assert s.count == 0


def test_config_changes_are_honoured():
    calls = []

    def fun(x):
        calls.append(1)
        return x + 1

    f = ember.jit(fun)
    x = np.arange(3, dtype=np.int32)
    f(x), f(x)
    ember.config.update("jax_disable_jit", True)
    try:
        f(x), f(x)
    finally:
        ember.config.update("jax_disable_jit", False)
    assert len(calls) == 3  # one trace, then two op-by-op runs: the fast path stood aside
    with _Slow() as s:
        f(x), f(x)
    assert s.count == 1  # a new config tuple: one normal call re-installs
    wide = np.arange(3, dtype=np.int64)
    ember.config.update("jax_enable_x64", True)
    try:
        f(wide), f(wide)
        with _Slow() as s:
            _same(f(wide), wide + 1)  # int64 kept: traced under x64
        assert s.count == 0
    finally:
        ember.config.update("jax_enable_x64", False)
    with _Slow() as s:
        _same(f(x), x + 1)
    assert s.count == 1


# -- donation, deletion, errors ---------------------------------------------------------------

def test_donation_still_deletes_on_the_fast_path():
    f = ember.jit(lambda x: x + 1, donate_argnums=0)
    x = jnp.asarray(np.zeros(4, np.float32))
    with _Slow() as s:
        for k in range(5):
            y = f(x)
            assert x.is_deleted() and not y.is_deleted()
            _same(y, np.full(4, k + 1, np.float32))
            x = y
    assert s.count == 2
    dead = jnp.asarray(np.zeros(4, np.float32))
    dead.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(dead)
    numpy_arg = np.zeros(4, np.float32)
    f(numpy_arg)
    np.testing.assert_array_equal(numpy_arg, 0)  # NumPy arguments are never deleted


def test_a_deleted_argument_raises_on_a_function_with_a_fast_path():
    f = ember.jit(lambda x: x - 1)
    x = jnp.asarray(np.ones(3, np.float32))
    f(x), f(x)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_clear_cache_drops_the_fast_path():
    f = ember.jit(lambda x: x * x)
    x = np.arange(3, dtype=np.float32)
    f(x), f(x)
    f.clear_cache()
    with _Slow() as s:
        _same(f(x), x * x)
    assert s.count == 1 and f.trace_count == 2


# -- threads ----------------------------------------------------------------------------------

def test_several_threads_share_one_function():
    f = ember.jit(lambda x, y: x * y + 1)
    warm = np.ones(257, np.float32)
    f(warm, warm), f(warm, warm)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            a = _value((257,), np.float32, seed)
            b = jnp.asarray(_value((257,), np.float32, seed + 100))
            want = a * np.asarray(b) + 1
            prev = []
            for _ in range(200):
                r = f(a, b)
                _same(r, want)
                prev.append(r)
            for r in prev:  # nothing handed out was written again
                _same(r, want)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
