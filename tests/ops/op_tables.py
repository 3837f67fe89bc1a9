"""Shared helpers for op-table tests: shapes, dtypes, edge values, ulp comparison, and the
eager / jit / NumPy check every op runs through.

Test files in tests/ops import these as `from op_tables import ...` (pytest puts each test
directory on sys.path, since the test directories are not packages).

Invariants the helpers assert:
- eager result == jit result bit for bit (same dtype, shape, weak type and bytes), except
  float sums, products, dots and scans, whose order the compiler may choose (XLA promises
  none): those agree within a tight tolerance, found from the function's jaxpr;
- a second jit call with the same argument shapes and dtypes does not retrace;
- the jit result matches the NumPy reference: exactly for integers and bools, within `ulps`
  units in the last place for floats (NaN where NumPy has NaN, infinities exact, and the
  sign of a zero result unless `ignore_zero_sign`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ember
from ember.core.trace import get_aval

# -- shapes -----------------------------------------------------------------------------------
# scalar, empty, odd sizes that hit vector tails (7, 33), 2-D and 3-D.
SHAPES: list[tuple[int, ...]] = [(), (0,), (7,), (33,), (3, 5), (2, 3, 4)]
# Pairs lax's broadcasting rule accepts: rank-0 operands, and equal ranks with size-1 dims.
BROADCAST_PAIRS: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((), (7,)), ((7,), ()), ((), (2, 3, 4)), ((1, 5), (3, 5)), ((3, 1), (1, 5)),
    ((2, 1, 4), (2, 3, 1)), ((1,), (0,)), ((0, 1), (0, 4)),
]
BINARY_SHAPES = [(s, s) for s in SHAPES] + BROADCAST_PAIRS

# -- dtypes -----------------------------------------------------------------------------------
BOOL = [np.dtype(np.bool_)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)]
FLOATS = [np.dtype(np.float32)]
X64_INTS = [np.dtype(np.int64), np.dtype(np.uint64)]
X64_FLOATS = [np.dtype(np.float64)]
X64 = frozenset(X64_INTS + X64_FLOATS)
ALL_INTS = INTS + X64_INTS
ALL_FLOATS = FLOATS + X64_FLOATS
ALL = BOOL + ALL_INTS + ALL_FLOATS


def dtype_params(dtypes: Sequence[np.dtype]) -> list[Any]:
    """pytest params with readable ids (`float32`), for `@pytest.mark.parametrize`."""
    return [pytest.param(d, id=d.name) for d in dtypes]


def use_dtype(request: pytest.FixtureRequest, dtype: np.dtype) -> None:
    """Turn on jax_enable_x64 (via the x64 fixture) for the test when dtype is 64-bit."""
    if np.dtype(dtype) in X64:
        request.getfixturevalue("x64")


# -- inputs -----------------------------------------------------------------------------------
def edge_values(dtype: np.dtype) -> np.ndarray:
    """The values where implementations go wrong: NaN, +-inf, -0.0, subnormals, extremes,
    halfway cases for rounding; INT_MIN, INT_MAX, -1, 0, 1 for integers."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([True, False], dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [info.min, info.max, 0, 1, info.max - 1]
        if dt.kind == "i":
            vals += [-1, info.min + 1]
        else:
            vals += [info.max // 2 + 1]  # only the top bit set
        return np.array(vals, dt)
    fi = np.finfo(dt)
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, fi.smallest_subnormal,
                     -fi.smallest_subnormal, fi.tiny, fi.max, -fi.max, 1.0, -1.0, 0.5, -0.5,
                     1.5, 2.5, -2.5], dt)


def seeded_rng(*key: Any) -> np.random.Generator:
    """A generator seeded from `key` the same way in every process (not Python's hash(),
    which is salted per process), so failures reproduce."""
    return np.random.default_rng(zlib.crc32("/".join(str(k) for k in key).encode()))


def sample(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator,
           low: float | None = None, high: float | None = None,
           edges: np.ndarray | None = None) -> np.ndarray:
    """Random values of `dtype` in [low, high] with edge values mixed in at random places.

    Integers default to the dtype's whole range; floats to [-10, 10]. `edges` overrides
    `edge_values(dtype)` (pass an empty array for none).
    """
    dt = np.dtype(dtype)
    size = int(np.prod(shape))
    if dt.kind == "b":
        flat = rng.integers(0, 2, size).astype(dt)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo = info.min if low is None else max(int(low), info.min)
        hi = info.max if high is None else min(int(high), info.max)
        flat = rng.integers(lo, hi, size, dtype=dt, endpoint=True)
    else:
        lo = -10.0 if low is None else low
        hi = 10.0 if high is None else high
        flat = rng.uniform(lo, hi, size).astype(dt)
    ev = edge_values(dt) if edges is None else np.asarray(edges, dt)
    if size and ev.size:
        k = min(size, ev.size)
        where = rng.permutation(size)[:k]
        flat[where] = rng.permutation(ev)[:k]
    return flat.reshape(shape)


# -- references ---------------------------------------------------------------------------------
def ieee_maximum(a: Any, b: Any) -> np.ndarray:
    """IEEE 754-2019 maximum, XLA's max: NaN propagates and -0.0 < +0.0 in either order
    (np.maximum picks between equal zeros by operand order, differently per dtype)."""
    return _ieee_extremum(np.asarray(a), np.asarray(b), np.maximum, np.logical_and)


def ieee_minimum(a: Any, b: Any) -> np.ndarray:
    """IEEE 754-2019 minimum, XLA's min: NaN propagates, min(-0.0, +0.0) = -0.0."""
    return _ieee_extremum(np.asarray(a), np.asarray(b), np.minimum, np.logical_or)


def _ieee_extremum(a: np.ndarray, b: np.ndarray, pick: np.ufunc,
                   sign_rule: np.ufunc) -> np.ndarray:
    r = np.asarray(pick(a, b))
    if r.dtype.kind != "f":
        return r
    # Two zeros: max is -0.0 only if both are, min is -0.0 if either is.
    both_zero = (a == 0) & (b == 0)
    neg = sign_rule(np.signbit(a), np.signbit(b))
    zeros = np.where(neg, np.array(-0.0, r.dtype), np.array(0.0, r.dtype))
    return np.where(both_zero, zeros, r)


def ieee_reduce_max(x: Any, axis: Any = None) -> np.ndarray:
    """np.max with IEEE zeros: a maximum that is a zero is +0.0 if any +0.0 is there."""
    return _ieee_reduce(np.asarray(x), axis, np.max, want_neg=False)


def ieee_reduce_min(x: Any, axis: Any = None) -> np.ndarray:
    """np.min with IEEE zeros: a minimum that is a zero is -0.0 if any -0.0 is there."""
    return _ieee_reduce(np.asarray(x), axis, np.min, want_neg=True)


def _ieee_reduce(x: np.ndarray, axis: Any, pick: Callable[..., Any],
                 want_neg: bool) -> np.ndarray:
    r = np.asarray(pick(x, axis=axis))
    if r.dtype.kind != "f":
        return r
    hit = np.any((x == 0) & (np.signbit(x) == want_neg), axis=axis)
    win, lose = (-0.0, 0.0) if want_neg else (0.0, -0.0)
    zeros = np.where(hit, np.array(win, r.dtype), np.array(lose, r.dtype))
    return np.where(r == 0, zeros, r)


# -- comparisons ------------------------------------------------------------------------------
def _ordered_ints(x: np.ndarray) -> list[int]:
    """Map floats to integers whose order is the float order (-0.0 and +0.0 both to 0), so
    the ulp distance of two floats is the difference of their images."""
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}")).ravel().tolist()
    top = 1 << (8 * x.dtype.itemsize - 1)
    return [-(b - top) if b >= top else b for b in bits]


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place of their (shared) float dtype, NaNs excluded."""
    assert a.dtype == b.dtype and a.dtype.kind == "f"
    d = [abs(p - q) for p, q in zip(_ordered_ints(a), _ordered_ints(b))]
    return np.array(d, dtype=object).reshape(a.shape)


def assert_matches(got: Any, expected: Any, *, ulps: int | None = 0,
                   rtol: float | None = None, atol: float = 0.0,
                   ignore_zero_sign: bool = False, what: str = "") -> None:
    """got (an ember.Array) against a NumPy reference, cast to got's dtype first."""
    g = np.asarray(got)
    e = np.asarray(expected)
    with np.errstate(all="ignore"):
        e = e.astype(g.dtype) if e.dtype != g.dtype else e
    assert g.shape == e.shape, f"{what}: shape {g.shape} != reference {e.shape}"
    if g.dtype.kind != "f":
        bad = g != e
        assert not bad.any(), (f"{what}: {int(bad.sum())} mismatches, first at "
                               f"{np.argwhere(bad)[0].tolist()}: got {g[bad][:4]}, "
                               f"expected {e[bad][:4]}")
        return
    gn, en = np.isnan(g), np.isnan(e)
    assert (gn == en).all(), f"{what}: NaN mismatch: got {g[gn != en][:4]}, expected " \
                             f"{e[gn != en][:4]}"
    ok = ~en
    gi, ei = g[ok], e[ok]
    inf = np.isinf(ei)
    assert (gi[inf] == ei[inf]).all(), f"{what}: infinities differ: {gi[inf]} vs {ei[inf]}"
    if rtol is not None:
        fin = ~inf
        np.testing.assert_allclose(gi[fin], ei[fin], rtol=rtol, atol=atol, err_msg=what)
    else:
        dist = ulp_distance(gi, ei)
        worst = max(dist.tolist(), default=0)
        assert worst <= ulps, (f"{what}: {worst} ulps > budget {ulps}; got "
                               f"{gi[dist > ulps][:4]}, expected {ei[dist > ulps][:4]}")
    if not ignore_zero_sign:
        zero = ei == 0
        assert (np.signbit(gi[zero]) == np.signbit(ei[zero])).all(), \
            f"{what}: sign of zero differs"


def assert_bitwise_equal(a: Any, b: Any, what: str = "") -> None:
    """Same dtype, shape, weak type and bytes (NaN payloads included)."""
    aa, ab = get_aval(a), get_aval(b)
    assert aa == ab, f"{what}: avals differ: {aa!r} vs {ab!r}"
    na, nb = np.ascontiguousarray(np.asarray(a)), np.ascontiguousarray(np.asarray(b))
    assert na.tobytes() == nb.tobytes(), f"{what}: eager {na} != jit {nb}"


def assert_no_retrace(jitted: Any, *args: Any) -> Any:
    """Call `jitted` twice with the same arguments; the second call must not trace."""
    out = jitted(*args)
    count = jitted.trace_count
    again = jitted(*args)
    assert jitted.trace_count == count, f"retraced on a second call ({count} -> " \
                                        f"{jitted.trace_count})"
    assert_bitwise_equal(out, again, "second jit call")
    return out


# Primitives whose float results depend on the order of a sum or product the compiler picks
# (XLA promises no order either): NumPy's pairwise sums in eager mode, vector accumulators
# and BLAS blocking in compiled code. (psum: vmap turns it into a positional sum.)
FLOAT_REDUCTION_PRIMITIVES = frozenset(
    {"reduce_sum", "reduce_prod", "dot_general", "cumsum", "cumprod", "cumlogsumexp", "psum",
     # sums over windows: the CPU computes them as im2col + a product (its own order)
     "conv_general_dilated", "reduce_window_sum"})


def _jaxprs_in(value: Any) -> list[Any]:
    """The jaxprs inside an equation parameter (pjit's, a loop body, cond branches)."""
    if hasattr(value, "eqns"):
        return [value]
    if isinstance(value, (tuple, list)):
        return [j for v in value for j in _jaxprs_in(v)]
    return []


def _eqns_reduce_floats(eqns: Any) -> bool:
    for eqn in eqns:
        if eqn.primitive.name in FLOAT_REDUCTION_PRIMITIVES and any(
                np.dtype(v.aval.dtype).kind in "fc" for v in eqn.outvars):
            return True
        if any(_eqns_reduce_floats(j.eqns) for p in eqn.params.values()
               for j in _jaxprs_in(p)):
            return True
    return False


def has_float_reduction(fn: Callable[..., Any], *args: Any) -> bool:
    """Whether fn(*args) traces to a float sum, product, dot or scan (at any depth)."""
    return _eqns_reduce_floats(ember.make_jaxpr(fn)(*args).eqns)


def assert_eager_jit_numpy(fn: Callable[..., Any], np_fn: Callable[..., Any] | None,
                           *args: Any, ulps: int | None = 0, rtol: float | None = None,
                           atol: float = 0.0, ignore_zero_sign: bool = False,
                           jitted: Any = None, what: str = "",
                           float_reduction: bool | None = None) -> Any:
    """Run fn eagerly and under ember.jit (twice: no retrace), assert eager == jit bit for
    bit, and compare with np_fn(*args) (skipped when np_fn is None). Returns jit's result.

    Pass `jitted=ember.jit(fn)` to reuse one jit object over many shapes. With
    `float_reduction` (sums, products, dots and scans of floats, whose association order
    the compiler may choose: eager mode sums pairwise like NumPy, the CPU backend with
    vector accumulators), float results of eager and jit are compared within rtol/atol
    (default 1e-5 / 1e-6) instead; None (the default) detects them in fn's jaxpr.
    """
    jitted = ember.jit(fn) if jitted is None else jitted
    if float_reduction is None:
        float_reduction = has_float_reduction(fn, *args)
    eager = fn(*args)
    out = assert_no_retrace(jitted, *args)
    shapes = ", ".join(str(np.shape(a)) for a in args)
    label = f"{what or getattr(fn, '__name__', 'fn')}({shapes})"
    outs, eagers = (out, eager) if isinstance(out, tuple) else ((out,), (eager,))
    for o, e in zip(outs, eagers):
        if float_reduction and get_aval(o).dtype.kind == "f":
            assert get_aval(o) == get_aval(e), f"{label}: avals differ"
            np.testing.assert_allclose(np.asarray(o), np.asarray(e), rtol=rtol or 1e-5,
                                       atol=atol or 1e-6, equal_nan=True, err_msg=label)
        else:
            assert_bitwise_equal(e, o, label)
    if np_fn is not None:
        ref = np_fn(*args)
        refs = ref if isinstance(ref, tuple) else (ref,)
        for o, r in zip(outs, refs):
            assert_matches(o, r, ulps=ulps, rtol=rtol, atol=atol,
                           ignore_zero_sign=ignore_zero_sign, what=label)
    return out
