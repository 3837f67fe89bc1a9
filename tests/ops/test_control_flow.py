"""Control flow against NumPy, eagerly and under jit (eager == jit bit for bit, no retrace):
lax.cond, switch, while_loop, fori_loop (static and traced bounds), scan (carry, stacked
outputs, reverse, length, xs=None, unroll, pytrees), map and jnp.piecewise, over shapes
(scalar, empty, odd sizes, 2-D, 3-D) and dtypes (bool, ints, floats, 64-bit under x64),
plus hypothesis searches over scan's and switch's parameters. fori_loop, scan and map put a
test's cases in one `LaxBatch` (tests/ops/batched_checks.py): the same checks per case,
one compiled program per test."""

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import LaxBatch
from hypothesis import given, settings
from hypothesis import strategies as st
from op_tables import (
    ALL,
    ALL_FLOATS,
    ALL_INTS,
    SHAPES,
    assert_bitwise_equal,
    assert_matches,
    dtype_params,
    sample,
    seeded_rng,
    use_dtype,
)

import ember
import ember.numpy as jnp
from ember import lax
from ember.tree_util import tree_leaves


def assert_eager_jit_numpy(fn, np_fn, *args, jitted=None):
    """op_tables' check for pytree results: eager == jit bit for bit (leaf by leaf), a
    second jit call does not retrace, and every leaf equals np_fn's (exactly)."""
    jitted = ember.jit(fn) if jitted is None else jitted
    eager = tree_leaves(fn(*args))
    out = jitted(*args)
    count = jitted.trace_count
    again = tree_leaves(jitted(*args))
    assert jitted.trace_count == count, "retraced on a second call"
    leaves = tree_leaves(out)
    assert len(leaves) == len(eager) == len(again)
    for e, o, a in zip(eager, leaves, again):
        assert_bitwise_equal(e, o, "eager vs jit")
        assert_bitwise_equal(o, a, "second jit call")
    if np_fn is not None:
        ref = np_fn(*args)
        refs = tree_leaves(ref) if isinstance(ref, (tuple, list, dict)) else [ref]
        assert len(refs) == len(leaves)
        for o, r in zip(leaves, refs):
            assert_matches(o, r, what=getattr(fn, "__name__", "fn"))
    return out


def _two_ops(dtype: np.dtype):
    """Two different exact elementwise functions of one dtype, for both backends and NumPy."""
    if dtype.kind == "b":
        return (lambda x: ~x, np.logical_not), (lambda x: x & x, lambda x: x)
    one = np.ones((), dtype)
    if dtype.kind == "f":
        half = np.array(0.5, dtype)
        return (lambda x: x * half + one, lambda x: x * half + one), (lambda x: -x, np.negative)
    return ((lambda x: x + one, lambda x: (x + one).astype(dtype)),
            (lambda x: x * x, lambda x: (x * x).astype(dtype)))


@pytest.mark.parametrize("dtype", dtype_params(ALL))
def test_cond(request, dtype):
    use_dtype(request, dtype)
    (f, f_np), (g, g_np) = _two_ops(dtype)
    rng = seeded_rng("cond", dtype)

    def fn(p, x):
        return lax.cond(p, f, g, x)

    jitted = ember.jit(fn)
    with np.errstate(all="ignore"):
        for shape in SHAPES:
            x = sample(shape, dtype, rng)
            for p in (True, False):
                ref = (lambda p_, x_: f_np(x_) if p_ else g_np(x_))
                assert_eager_jit_numpy(fn, ref, np.bool_(p), x, jitted=jitted)


@pytest.mark.parametrize("pred", [3, 0, -2.5, 0.0, np.float32(np.nan), np.int8(1)],
                         ids=["int", "zero", "float", "fzero", "nan", "int8"])
def test_cond_numeric_predicates(pred):
    # A number means `pred != 0` (so NaN is true).
    def fn(p, x):
        return lax.cond(p, lambda v: v + 1.0, lambda v: v - 1.0, x)

    x = np.arange(5, dtype=np.float32)
    want = x + 1 if pred != 0 else x - 1
    assert_eager_jit_numpy(fn, lambda p, v: want, pred, x)


def test_cond_pytrees_closures_and_legacy_forms():
    w = np.linspace(-1, 1, 6, dtype=np.float32)

    def fn(p, x, y):
        out = lax.cond(p, lambda d: {"a": d["a"] * w, "b": d["b"] + y},
                       lambda d: {"a": d["a"] - w, "b": d["b"] * y}, {"a": x, "b": y})
        legacy = lax.cond(p, x, lambda a: a + 1.0, x * 2.0, lambda b: b * 3.0)
        kw = lax.cond(p, jnp.negative, jnp.abs, operand=x)
        return out["a"], out["b"], legacy, kw

    x = np.arange(6, dtype=np.float32) - 2
    for p in (True, False):
        y = np.float32(1.5)
        want = ((x * w, y + y, x + 1, -x) if p else (x - w, y * y, x * 6, np.abs(x)))
        assert_eager_jit_numpy(fn, lambda *a, want=want: want, np.bool_(p), x, y)


@pytest.mark.parametrize("dtype", dtype_params([np.dtype(np.int32), np.dtype(np.float32)]))
def test_switch_clamps_the_index(dtype):
    branches = [lambda x: x + 1, lambda x: x * 3, lambda x: x - 7]
    refs = [lambda x: x + 1, lambda x: x * 3, lambda x: x - 7]

    def fn(i, x):
        return lax.switch(i, branches, x)

    jitted = ember.jit(fn)
    x = np.arange(-3, 4).astype(dtype)
    for i in (-5, -1, 0, 1, 2, 3, 100):
        k = min(max(i, 0), 2)
        assert_eager_jit_numpy(fn, lambda i_, x_, k=k: refs[k](x_).astype(dtype), np.int32(i),
                               x, jitted=jitted)


def test_cond_primitive_out_of_range_index_runs_the_last_branch():
    # XLA's conditional semantics, eagerly and compiled (lax.switch clamps before binding).
    from ember.prims.control_flow import cond_p

    def fn(i, x):
        br = [ember.make_jaxpr(lambda v, k=k: v * np.float32(k + 2))(x) for k in range(3)]
        return cond_p.bind(i, x, branches=tuple(br))[0]

    x = np.arange(4, dtype=np.float32)
    for i, k in ((-1, 2), (0, 0), (1, 1), (2, 2), (9, 2)):
        assert_eager_jit_numpy(fn, lambda i_, x_, k=k: x_ * np.float32(k + 2), np.int32(i), x)


def test_switch_with_one_branch_just_calls_it():
    assert int(lax.switch(5, [lambda: 7])) == 7


@pytest.mark.parametrize("dtype", dtype_params(ALL_INTS + ALL_FLOATS))
def test_while_loop(request, dtype):
    use_dtype(request, dtype)
    rng = seeded_rng("while", dtype)
    two = np.array(2, dtype)

    def fn(n, x):
        def body(c):
            i, v = c
            return i + 1, v * two + np.ones((), dtype)
        return lax.while_loop(lambda c: c[0] < n, body, (0, x))

    def ref(n, x):
        i, v = 0, x.copy()
        with np.errstate(all="ignore"):
            while i < n:
                i, v = i + 1, (v * two + np.ones((), dtype)).astype(dtype)
        return np.int32(i), v

    jitted = ember.jit(fn)
    for shape in SHAPES:
        x = sample(shape, dtype, rng, low=-4, high=4, edges=np.array([], dtype))
        for n in (0, 1, 5):
            assert_eager_jit_numpy(fn, ref, np.int32(n), x, jitted=jitted)


@pytest.mark.parametrize("dtype", dtype_params(ALL_INTS + ALL_FLOATS))
@pytest.mark.parametrize("bounds", ["static", "traced"])
def test_fori_loop(request, dtype, bounds):
    use_dtype(request, dtype)
    rng = seeded_rng("fori", dtype, bounds)
    three = np.array(3, dtype)

    def body(i, v):
        return v * three - i.astype(dtype)

    def ref(lo, hi, x):
        v = x.copy()
        with np.errstate(all="ignore"):
            for i in range(lo, hi):
                v = (v * three - np.array(i).astype(dtype)).astype(dtype)
        return v

    batch = LaxBatch()  # every case in one compiled program, checked as above
    for lo, hi in ((0, 6), (2, 5), (4, 4), (5, 2)):
        if bounds == "static":
            def fn(x, lo=lo, hi=hi):
                return lax.fori_loop(lo, hi, body, x)
            args: tuple = ()
        else:
            def fn(lo_, hi_, x):
                return lax.fori_loop(lo_, hi_, body, x)
            args = (np.int32(lo), np.int32(hi))
        for shape in ((), (7,), (2, 3)):
            x = sample(shape, dtype, rng, low=-3, high=3, edges=np.array([], dtype))
            batch.add(fn, lambda *a, lo=lo, hi=hi: ref(lo, hi, a[-1]), *args, x,
                      float_reduction=False)
    batch.run()


def test_fori_loop_static_unroll_and_weak_carry():
    def fn(x):
        return lax.fori_loop(0, 7, lambda i, c: (c[0] + i, c[1] * 2.0), (0, x), unroll=3)

    x = np.arange(4, dtype=np.float32)
    out = assert_eager_jit_numpy(fn, lambda x: (np.int32(21), x * 2 ** 7), x)
    assert out[0].dtype == np.int32 and out[0].weak_type


def _scan_ref(f, init, xs, length, reverse):
    carry, ys = init, []
    order = range(length - 1, -1, -1) if reverse else range(length)
    for t in order:
        carry, y = f(carry, None if xs is None else xs[t])
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, ys


@pytest.mark.parametrize("dtype", dtype_params(ALL_INTS + ALL_FLOATS))
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carry_and_stacked_outputs(request, dtype, reverse):
    use_dtype(request, dtype)
    rng = seeded_rng("scan", dtype, reverse)

    def step(c, a):
        return c + a, c * a

    def fn(c, xs):
        return lax.scan(step, c, xs, reverse=reverse)

    def ref(c, xs):
        with np.errstate(all="ignore"):
            carry, ys = _scan_ref(lambda c_, a_: ((c_ + a_).astype(dtype),
                                                  (c_ * a_).astype(dtype)),
                                  c, xs, xs.shape[0], reverse)
        return carry, np.array(ys, dtype).reshape(xs.shape)

    batch = LaxBatch()  # every case in one compiled program, checked as above
    for length in (0, 1, 7):
        for row in ((), (5,), (2, 3)):
            xs = sample((length, *row), dtype, rng, low=-3, high=3, edges=np.array([], dtype))
            c = sample(row, dtype, rng, low=-3, high=3, edges=np.array([], dtype))
            batch.add(fn, ref, c, xs, float_reduction=False)
    batch.run()


@pytest.mark.parametrize("unroll", [1, 2, 3, 5, 8, True, False, 0])
def test_scan_unroll(unroll):
    xs = np.arange(15, dtype=np.float32).reshape(5, 3) / 4

    def fn(c, xs):
        return lax.scan(lambda c, a: (c * 0.5 + a, c - a), c, xs, unroll=unroll)

    def ref(c, xs):
        carry, ys = _scan_ref(lambda c_, a_: (c_ * np.float32(0.5) + a_, c_ - a_), c, xs, 5,
                              False)
        return carry, np.array(ys)

    assert_eager_jit_numpy(fn, ref, np.ones(3, np.float32), xs)


def test_scan_without_xs_and_with_pytrees():
    def fn(x):
        carry, ys = lax.scan(lambda c, _: ((c[0] + 1, c[1] * 2.0), {"i": c[0], "v": c[1]}),
                             (0, x), None, length=4)
        return carry[0], carry[1], ys["i"], ys["v"]

    x = np.array([1.0, -0.5], np.float32)
    want = (np.int32(4), x * 16, np.arange(4, dtype=np.int32),
            np.stack([x * 2 ** k for k in range(4)]))
    assert_eager_jit_numpy(fn, lambda x: want, x)

    def pairs(c, xs):
        return lax.scan(lambda c, a: (c + a["u"] * a["v"], (a["u"], c)), c,
                        {"u": xs, "v": xs * 2})

    xs = np.arange(8, dtype=np.float32).reshape(4, 2)
    c0 = np.zeros(2, np.float32)
    carry, (us, cs) = assert_eager_jit_numpy(pairs, None, c0, xs)
    np.testing.assert_array_equal(np.asarray(us), xs)       # forwarded input slices
    np.testing.assert_array_equal(np.asarray(carry), (xs * xs * 2).sum(0))
    np.testing.assert_array_equal(np.asarray(cs)[1:], np.cumsum(xs * xs * 2, 0)[:-1])


@pytest.mark.parametrize("dtype", dtype_params(ALL))
def test_map(request, dtype):
    use_dtype(request, dtype)
    rng = seeded_rng("map", dtype)
    (f, f_np), _ = _two_ops(dtype)

    def fn(xs):
        return lax.map(f, xs)

    batch = LaxBatch()  # every case in one compiled program, checked as above
    with np.errstate(all="ignore"):
        for shape in ((0, 3), (7,), (4, 5), (2, 3, 4)):
            xs = sample(shape, dtype, rng)
            batch.add(fn, lambda xs, shape=shape: np.array(
                [f_np(r) for r in xs], dtype).reshape(shape), xs, float_reduction=False)
        batch.run()


@pytest.mark.parametrize("dtype", dtype_params([np.dtype(np.float32), np.dtype(np.int32)]))
def test_piecewise(dtype):
    x = (np.arange(-9, 10) / 2).astype(dtype)

    def fn(x):
        return jnp.piecewise(x, [x < 0, x > 2, x > 3], [lambda v: -v, lambda v: v * v,
                                                        lambda v: v + 10, 7])

    def ref(x):
        return np.piecewise(x, [x < 0, x > 2, x > 3], [lambda v: -v, lambda v: v * v,
                                                       lambda v: v + 10, 7])

    assert_eager_jit_numpy(fn, ref, x)
    # no default: 0 where no condition holds; extra args are passed to every function
    assert_eager_jit_numpy(
        lambda x: jnp.piecewise(x, [x < 0], [lambda v, k: v * k], 3),
        lambda x: np.piecewise(x, [x < 0], [lambda v, k: v * k], 3), x)
    # under vmap (its constant entries go through the copy primitive): row by row
    rows = x[:18].reshape(3, 6)
    got = ember.jit(ember.vmap(fn))(rows)
    np.testing.assert_array_equal(np.asarray(got), np.stack([ref(r) for r in rows]))


def test_piecewise_scalar_conditions_and_errors():
    x = np.arange(-4, 5)
    got = jnp.piecewise(x, [True, False], [lambda v: v * 10, lambda v: v])
    np.testing.assert_array_equal(np.asarray(got), x * 10)   # as JAX's docs show
    with pytest.raises(ValueError, match="either 2 or 3 functions are expected; got 1"):
        jnp.piecewise(x, [x < 0, x > 0], [1])


# -- hypothesis ---------------------------------------------------------------------------------

_SCAN_JIT: dict = {}


# Each example of a new (length, row) compiles a program: 20 examples keep the search
# over lengths, unrolls, directions and rows at half the compiles of 40.
@settings(max_examples=20, deadline=None)
@given(length=st.integers(0, 9), unroll=st.integers(0, 5), reverse=st.booleans(),
       row=st.sampled_from([(), (1,), (3,), (2, 2)]), seed=st.integers(0, 2 ** 16))
def test_scan_hypothesis(length, unroll, reverse, row, seed):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-2, 2, (length, *row)).astype(np.float32)
    c = rng.uniform(-2, 2, row).astype(np.float32)

    def fn(c, xs):
        return lax.scan(lambda c, a: (c * 0.75 - a, (c + a, a * 2.0)), c, xs,
                        reverse=reverse, unroll=unroll)

    key = (unroll, reverse)
    jitted = _SCAN_JIT.setdefault(key, ember.jit(fn))
    carry, (ys1, ys2) = jitted(c, xs)
    want_c, want = _scan_ref(lambda c_, a_: (c_ * np.float32(0.75) - a_, (c_ + a_, a_ * 2)),
                             c, xs, length, reverse)
    np.testing.assert_array_equal(np.asarray(carry), want_c)
    np.testing.assert_array_equal(np.asarray(ys1),
                                  np.array([w[0] for w in want], np.float32).reshape(xs.shape))
    np.testing.assert_array_equal(np.asarray(ys2), xs * 2)
    eager = fn(c, xs)
    np.testing.assert_array_equal(np.asarray(eager[0]), np.asarray(carry))


@settings(max_examples=30, deadline=None)
@given(index=st.integers(-2 ** 31, 2 ** 31 - 1), n=st.integers(2, 5))
def test_switch_hypothesis(index, n):
    branches = [lambda x, k=k: x * np.float32(k + 1) for k in range(n)]
    x = np.arange(3, dtype=np.float32)
    got = ember.jit(lambda i, x: lax.switch(i, branches, x))(np.int32(index), x)
    k = min(max(index, 0), n - 1)
    np.testing.assert_array_equal(np.asarray(got), x * (k + 1))
