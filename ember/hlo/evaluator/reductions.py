"""Plain reductions (one commutative scalar combiner) with NumPy, under XLA's semantics.

Input: an array, the reduced axes, the combiner's opcode (add, multiply, maximum, minimum,
and, or, xor) and the init value. Output: a fresh array of the input dtype with the
reduced axes removed. Used by the evaluator's reduce and by eager reduce_sum/max/...,
so eager mode and the interpreter give the same bits. The same rules for running
extrema (`extremum_accumulate`: eager cummax/cummin) and for combining scatters
(`combine_at`: the evaluator's and eager scatter-add/mul/max/min).

Semantics, as an XLA reduce: result = init (op) x_0 (op) x_1 ... in some order:
- the init value takes part: sum([-0.0]) is 0.0 + -0.0 = +0.0 (np.sum alone gives -0.0);
  an empty reduction gives init.
- float maximum/minimum are IEEE 754-2019's, as elementwise: a NaN anywhere gives NaN, and
  -0.0 < +0.0 (np.maximum.reduce picks between equal zeros by position, differently per
  dtype). Which NaN comes out, when several differ in sign or payload, is unspecified
  (the CPU backend's vector accumulators visit elements in another order).
- float add/multiply sum in NumPy's (pairwise) order; the CPU backend uses another order
  (vector accumulators), so float sums agree within rounding, not bit for bit.
- float16 and bfloat16 add/multiply accumulate in float32 and round once
  (ember/hlo/accumulation.py, as XLA's CPU backend does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.hlo.accumulation import WIDENED_OPS, accumulation_dtype
from ember.hlo.evaluator.elementwise import is_real_float

REDUCE_UFUNCS: dict[str, np.ufunc] = {
    "add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}


def plain_reduce(opcode: str, x: np.ndarray, axes: tuple[int, ...], init: Any) -> np.ndarray:
    """reduce(x, init) over `axes` with the scalar combiner `opcode`."""
    x = np.asarray(x)
    init_arr = np.asarray(init, dtype=x.dtype)
    acc = accumulation_dtype(x.dtype) if opcode in WIDENED_OPS else x.dtype
    with np.errstate(all="ignore"):
        r = np.asarray(REDUCE_UFUNCS[opcode].reduce(
            x.astype(acc, copy=False), axis=axes, dtype=acc,
            initial=init_arr.astype(acc)[()]))
        if opcode in ("maximum", "minimum") and is_real_float(x.dtype):
            r = _ieee_zero_signs(r, x, axes, init_arr, opcode == "maximum")
    return np.asarray(r).astype(x.dtype, copy=True)


def _ieee_zero_signs(r: np.ndarray, x: np.ndarray, axes: tuple[int, ...], init: np.ndarray,
                     pick_max: bool) -> np.ndarray:
    """Where the extremum is a zero, its sign: max is +0.0 if any +0.0 took part (init
    included), else -0.0; min is -0.0 if any -0.0 took part, else +0.0."""
    zero = r == 0
    if not zero.any():
        return r
    want_neg = not pick_max
    hit = np.any((x == 0) & (np.signbit(x) == want_neg), axis=axes)
    hit = hit | bool(init == 0 and np.signbit(init) == want_neg)
    return np.where(zero, np.where(hit, *_zeros(x.dtype, want_neg)), r)


def extremum_accumulate(opcode: str, x: np.ndarray, axis: int) -> np.ndarray:
    """Running maximum/minimum along `axis` (cummax/cummin) with IEEE zeros: where the
    running extremum is a zero, it is +0.0 (max) once any +0.0 came by, else -0.0 (min:
    -0.0 once any -0.0 came by). NaN propagates from the first NaN on."""
    ufunc = REDUCE_UFUNCS[opcode]
    r = np.asarray(ufunc.accumulate(x, axis=axis))
    if not is_real_float(x.dtype) or not (r == 0).any():
        return r
    want_neg = opcode == "minimum"
    seen = np.logical_or.accumulate((x == 0) & (np.signbit(x) == want_neg), axis=axis)
    return np.where(r == 0, np.where(seen, *_zeros(x.dtype, want_neg)), r)


def combine_at(opcode: str, out: np.ndarray, index: Any, vals: np.ndarray) -> None:
    """out[index] = out[index] op vals in place, every repeated index combining all of its
    updates (ufunc.at: scatter-add, scatter-max, ...), max/min with IEEE zeros."""
    ufunc = REDUCE_UFUNCS[opcode]
    fix = opcode in ("maximum", "minimum") and is_real_float(out.dtype)
    if fix:
        want_neg = opcode == "minimum"
        hit = (out == 0) & (np.signbit(out) == want_neg)  # the winning zero is there
        np.logical_or.at(hit, index, (vals == 0) & (np.signbit(vals) == want_neg))
    with np.errstate(all="ignore"):  # integer products wrap, as in XLA
        ufunc.at(out, index, vals)
    if fix:
        zero = out == 0
        out[zero] = np.where(hit[zero], *_zeros(out.dtype, want_neg))


def _zeros(dtype: np.dtype, want_neg: bool) -> tuple[np.ndarray, np.ndarray]:
    """(the winning zero, the other one): +0.0 wins a maximum, -0.0 a minimum."""
    win, lose = (-0.0, 0.0) if want_neg else (0.0, -0.0)
    return np.array(win, dtype), np.array(lose, dtype)


__all__ = ["REDUCE_UFUNCS", "combine_at", "extremum_accumulate", "plain_reduce"]
