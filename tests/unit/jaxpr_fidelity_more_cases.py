"""Programs whose make_jaxpr text Ember prints as JAX 0.10.2 does (issue 22, item 7): the
jnp functions JAX wraps in their own `jit` or stages in a particular op order.

Input: nothing; this module imports neither JAX nor Ember. Output: `CASES`, name ->
(make, args), where `make(jnp)` returns the program written against a jax.numpy-like
module (Ember's or JAX's) and `args` are NumPy arrays. tools/gen_jaxpr_fidelity.py runs
each with JAX to write jaxpr_fidelity_more_expected.py; test_jaxpr_fidelity_more.py runs
each with Ember and compares the texts character for character.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

X7 = np.linspace(-2, 2, 7).astype(np.float32)
R7 = X7[::-1].copy()
M34 = np.arange(12, dtype=np.float32).reshape(3, 4)
I7 = np.arange(-3, 4, dtype=np.int32)
S5 = np.array([0.0, 1.0, 2.5, 4.0, 7.0], np.float32)
U7 = np.array([3.0, 1.0, np.nan, 1.0, -0.0, 0.0, np.nan], np.float32)
T234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
W34 = np.array([[True, True, False, False], [True, False, True, False], [False] * 4])
# linalg operands: symmetric positive definite, Hermitian positive definite, tall
X3 = np.array([1.0, 2.0, 3.0], np.float32)
M32 = np.arange(6, dtype=np.float32).reshape(3, 2)
M43 = (np.arange(12, dtype=np.float32).reshape(4, 3) ** 1.5).astype(np.float32)
SPD3 = np.array([[4.0, 1.0, 2.0], [1.0, 5.0, 3.0], [2.0, 3.0, 6.0]], np.float32)
SPD233 = np.stack([SPD3, SPD3 + np.eye(3, dtype=np.float32)])
HER3 = (SPD3 + 1j * np.array([[0, 1, 2], [-1, 0, 1], [-2, -1, 0]])).astype(np.complex64)
T623 = (np.eye(6, dtype=np.float32) * 3 + 1).reshape(6, 2, 3)
SPD332 = np.moveaxis(SPD233, 0, 2).copy()

Make = Callable[[Any], Callable[..., Any]]


def _vmap(jnp: Any) -> Callable[..., Any]:
    """The vmap of the library whose jnp module this is (jax.vmap or ember.vmap)."""
    return importlib.import_module(jnp.__name__.split(".")[0]).vmap


def _checkpoint(jnp: Any) -> Callable[..., Any]:
    """The checkpoint of the library whose jnp module this is."""
    return importlib.import_module(jnp.__name__.split(".")[0]).checkpoint


def _lax(jnp: Any) -> Any:
    """The lax module of the library whose jnp module this is."""
    return importlib.import_module(jnp.__name__.split(".")[0] + ".lax")


def _grad(jnp: Any) -> Callable[..., Any]:
    """The grad of the library whose jnp module this is (jax.grad or ember.grad)."""
    return importlib.import_module(jnp.__name__.split(".")[0]).grad


def _nn(jnp: Any) -> Any:
    """The nn module of the library whose jnp module this is (jax.nn or ember.nn)."""
    return importlib.import_module(jnp.__name__.split(".")[0] + ".nn")


CASES: dict[str, tuple[Make, tuple[Any, ...]]] = {
    # roll: a static shift is jit[_roll_static], a traced one jit[_roll_dynamic]
    "roll": (lambda jnp: lambda x: jnp.roll(x, 2), (X7,)),
    "roll_axis": (lambda jnp: lambda x: jnp.roll(x, -1, axis=1), (M34,)),
    "roll_flat": (lambda jnp: lambda x: jnp.roll(x, 3), (M34,)),
    "roll_0": (lambda jnp: lambda x: jnp.roll(x, 0), (X7,)),
    "roll_tuple": (lambda jnp: lambda x: jnp.roll(x, (1, 5), axis=(1, 0)), (M34,)),
    "roll_dynamic": (lambda jnp: lambda x, s: jnp.roll(x, s), (X7, np.int32(2))),
    "roll_dynamic_axes": (lambda jnp: lambda x, s: jnp.roll(x, s, axis=(0, 1)),
                          (M34, np.array([1, -2], np.int32))),
    # divmod, remainder and fmod of integers (a zero divisor replaced through _where)
    "divmod": (lambda jnp: lambda x, y: jnp.divmod(x, y), (X7, R7)),
    "divmod_int": (lambda jnp: lambda x: jnp.divmod(x, 3), (I7,)),
    "remainder_int": (lambda jnp: lambda x, y: jnp.remainder(x, y), (I7, I7[::-1].copy())),
    # fmax/fmin of integers test y != y, as JAX's isnan does for every dtype
    "fmax_int": (lambda jnp: lambda x, y: jnp.fmax(x, y), (I7, I7[::-1].copy())),
    "fmin_int_scalar": (lambda jnp: lambda x: jnp.fmin(x, 1), (I7,)),
    "isnan_int": (lambda jnp: lambda x: jnp.isnan(x), (I7,)),
    # reductions with where= and initial= (the identity enters _where as a 0-d constant)
    "nanmax_where_initial": (lambda jnp: lambda x, w: jnp.nanmax(x, axis=1, where=w,
                                                                 initial=-1.0), (M34, W34)),
    "nanmin_initial": (lambda jnp: lambda x: jnp.nanmin(x, initial=3.0), (M34,)),
    "sum_where_initial": (lambda jnp: lambda x, w: jnp.sum(x, axis=1, where=w, initial=2),
                          (M34, W34)),
    "max_where_initial": (lambda jnp: lambda x, w: jnp.max(x, axis=1, where=w, initial=2),
                          (M34, W34)),
    "any_where": (lambda jnp: lambda x, w: jnp.any(x, axis=1, where=w), (M34, W34)),
    # take: jit[_take]; fill mode wraps negative indices through _where, wrap mode through
    # jnp.remainder
    "take": (lambda jnp: lambda x, i: jnp.take(x, i), (X7, np.array([0, 2], np.int32))),
    "take_axis": (lambda jnp: lambda x, i: jnp.take(x, i, axis=1),
                  (M34, np.array([0, -2], np.int32))),
    "take_clip": (lambda jnp: lambda x, i: jnp.take(x, i, mode="clip"),
                  (X7, np.array([0, 9], np.int32))),
    "take_wrap": (lambda jnp: lambda x, i: jnp.take(x, i, axis=0, mode="wrap"),
                  (M34, np.array([[0, -5]], np.int32))),
    "take_flat_fill": (lambda jnp: lambda x, i: jnp.take(x, i, fill_value=0),
                       (M34, np.array([3, 20], np.int32))),
    # var/std: jit[_var] (jit[_std] around it) with the correction traced; a divisor <= 0
    # gives NaN through _where; mean/var with where= count first
    "var": (lambda jnp: lambda x: jnp.var(x), (M34,)),
    "var_axis_ddof": (lambda jnp: lambda x: jnp.var(x, axis=0, ddof=1), (M34,)),
    "var_where": (lambda jnp: lambda x, w: jnp.var(x, axis=1, where=w), (M34, W34)),
    "var_int_correction": (lambda jnp: lambda x: jnp.var(x, correction=1.5), (I7,)),
    "std": (lambda jnp: lambda x: jnp.std(x), (X7,)),
    "std_keepdims": (lambda jnp: lambda x: jnp.std(x, axis=(0, 1), keepdims=True, ddof=2),
                     (M34,)),
    "std_dtype": (lambda jnp: lambda x: jnp.std(x, dtype=jnp.float16), (X7,)),
    "mean_where": (lambda jnp: lambda x, w: jnp.mean(x, axis=0, where=w), (M34, W34)),
    "nanmean_where": (lambda jnp: lambda x, w: jnp.nanmean(x, axis=0, where=w), (M34, W34)),
    # trace: a given offset is an argument of jit[trace] (row + offset == col)
    "trace_offset": (lambda jnp: lambda x: jnp.trace(x, 1), (M34,)),
    "trace_negative_offset": (lambda jnp: lambda x: jnp.trace(x, -1), (M34,)),
    "trace_traced_offset": (lambda jnp: lambda x, k: jnp.trace(x, k), (M34, np.int32(-1))),
    "trace_keywords": (lambda jnp: lambda x: jnp.trace(x, offset=2, axis1=1, axis2=0),
                       (M34,)),
    "trace_int_dtype": (lambda jnp: lambda x: jnp.trace(x, 1, dtype=jnp.float32),
                        (I7.reshape(1, 7),)),
    # sinc: jit[sinc] with the custom-JVP Maclaurin term at 0
    "sinc": (lambda jnp: lambda x: jnp.sinc(x), (X7,)),
    "sinc_int": (lambda jnp: lambda x: jnp.sinc(x), (I7,)),
    # gcd/lcm: jit[gcd] holding JAX's while loop; lcm on top of it
    "gcd": (lambda jnp: lambda x, y: jnp.gcd(x, y), (I7, I7[::-1].copy())),
    "gcd_scalar": (lambda jnp: lambda x: jnp.gcd(x, 6), (I7,)),
    "lcm": (lambda jnp: lambda x, y: jnp.lcm(x, y), (I7, I7[::-1].copy())),
    "lcm_uint8": (lambda jnp: lambda x, y: jnp.lcm(x, y),
                  (np.arange(5, dtype=np.uint8), np.uint8(4))),
    # frexp: jit[frexp] around the custom-JVP _frexp (its shared body prints as `jaxpr`);
    # ldexp: jit[ldexp] splitting x's exponent off through frexp
    "frexp": (lambda jnp: lambda x: jnp.frexp(x), (X7,)),
    "frexp_int": (lambda jnp: lambda x: jnp.frexp(x), (I7,)),
    "ldexp": (lambda jnp: lambda x, e: jnp.ldexp(x, e), (X7, I7)),
    "ldexp_scalar": (lambda jnp: lambda x: jnp.ldexp(x, 3), (X7,)),
    # diag: jit[_diag] (1-d: pad, eye mask, _where; 2-d: jit[diagonal], a gather by two
    # aranges); broadcasting keeps size-1 dims in one broadcast_in_dim, as JAX
    "diag_of_matrix": (lambda jnp: lambda x: jnp.diag(x), (M34,)),
    "diag_of_matrix_k": (lambda jnp: lambda x: jnp.diag(x, -1), (M34,)),
    "diag_of_vector": (lambda jnp: lambda x: jnp.diag(x), (X7,)),
    "diag_of_vector_k": (lambda jnp: lambda x: jnp.diag(x, -2), (X7,)),
    "diagonal_3d": (lambda jnp: lambda x: jnp.diagonal(x, 1, 0, 2),
                    (np.ones((2, 3, 4), np.float32),)),
    "arange_start_stop": (lambda jnp: lambda x: x + jnp.arange(1, 8), (X7,)),
    "broadcast_to_size1": (lambda jnp: lambda x: jnp.broadcast_to(x, (2, 7, 3)),
                           (X7.reshape(7, 1),)),
    # polynomials: jit[polyval] (a scan unrolled 16), polyder/polyint (iota grids),
    # polymul through jit[convolve] > jit[_conv] > jit[_flip]
    "polyval": (lambda jnp: lambda p, x: jnp.polyval(p, x), (X7[:3].copy(), X7)),
    "polyval_2d": (lambda jnp: lambda p, x: jnp.polyval(p, x), (M34, X7[:4].copy())),
    "polyder": (lambda jnp: lambda p: jnp.polyder(p), (X7,)),
    "polyder_2_int": (lambda jnp: lambda p: jnp.polyder(p, 2), (I7,)),
    "polyint": (lambda jnp: lambda p: jnp.polyint(p), (X7,)),
    "polyint_k": (lambda jnp: lambda p, k: jnp.polyint(p, 2, k), (X7, X7[:2].copy())),
    "polymul": (lambda jnp: lambda p, q: jnp.polymul(p, q), (X7[:3].copy(), X7)),
    "convolve_same": (lambda jnp: lambda p, q: jnp.convolve(p, q, mode="same"),
                      (X7[:3].copy(), X7)),
    "convolve_int": (lambda jnp: lambda p, q: jnp.convolve(p, q), (I7, I7[:2].copy())),
    "correlate": (lambda jnp: lambda p, q: jnp.correlate(p, q), (X7, X7[:3].copy())),
    "correlate_swapped": (lambda jnp: lambda p, q: jnp.correlate(p, q, mode="full"),
                          (X7[:3].copy(), X7)),
    "atleast_1d": (lambda jnp: lambda x: jnp.atleast_1d(x), (M34,)),
    "atleast_2d": (lambda jnp: lambda x, y: jnp.atleast_2d(x, y), (X7, np.float32(1))),
    "atleast_3d": (lambda jnp: lambda x, y: jnp.atleast_3d(x, y), (M34, X7)),
    # isin: jit[_in1d] comparing every pair
    "isin": (lambda jnp: lambda x, y: jnp.isin(x, y), (X7, X7[:3].copy())),
    "isin_invert": (lambda jnp: lambda x, y: jnp.isin(x, y, invert=True),
                    (M34, X7[:3].copy())),
    # quantile: jit[quantile] (q traced), median and percentile jits around it; weakly
    # typed q multiplies the strongly typed n - 1 without a conversion, as in JAX's lax
    "median": (lambda jnp: lambda x: jnp.median(x), (X7,)),
    "median_axis": (lambda jnp: lambda x: jnp.median(x, axis=1), (M34,)),
    "median_keepdims": (lambda jnp: lambda x: jnp.median(x, axis=0, keepdims=True), (M34,)),
    "median_int": (lambda jnp: lambda x: jnp.median(x), (I7,)),
    "quantile": (lambda jnp: lambda x: jnp.quantile(x, 0.3), (X7,)),
    "quantile_vector_axes": (lambda jnp: lambda x, q: jnp.quantile(x, q, axis=(0, 1),
                                                                   keepdims=True),
                             (M34, np.array([0.25, 0.5], np.float32))),
    "quantile_lower": (lambda jnp: lambda x: jnp.quantile(x, 0.3, method="lower"), (X7,)),
    "percentile": (lambda jnp: lambda x: jnp.percentile(x, 50, axis=1), (M34,)),
    "percentile_vector": (lambda jnp: lambda x, q: jnp.percentile(x, q),
                          (X7, np.array([10.0, 90.0], np.float32))),
    # nanquantile: the same jit with NaNs squashed (each slice's count scales q; a read by
    # advanced indexing); nanmedian and nanpercentile jits around it; a bool sum with a
    # float dtype counts in the default int first
    "nanmedian": (lambda jnp: lambda x: jnp.nanmedian(x), (X7,)),
    "nanmedian_axis": (lambda jnp: lambda x: jnp.nanmedian(x, axis=1), (M34,)),
    "nanquantile_vector": (lambda jnp: lambda x, q: jnp.nanquantile(x, q, axis=0),
                           (M34, np.array([0.25, 0.5], np.float32))),
    "nanquantile_keepdims": (lambda jnp: lambda x: jnp.nanquantile(x, 0.3, axis=1,
                                                                   keepdims=True), (M34,)),
    "nanpercentile_lower": (lambda jnp: lambda x: jnp.nanpercentile(x, 40.0, axis=0,
                                                                    method="lower"), (M34,)),
    "sum_bool_dtype": (lambda jnp: lambda x: jnp.sum(x > 2, axis=0, dtype=jnp.float32),
                       (M34,)),
    # a reduction over no axes (a 0-d array, or axis=()) still stages reduce_*[axes=()]
    "sum_no_axes": (lambda jnp: lambda x: jnp.sum(x, axis=()), (M34,)),
    "max_0d": (lambda jnp: lambda x: jnp.max(x), (np.float32(1),)),
    "prod_int8_0d": (lambda jnp: lambda x: jnp.prod(x), (np.int8(1),)),
    "any_0d": (lambda jnp: lambda x: jnp.any(x), (np.float32(1),)),
    # axes given out of order reach the reduction primitive in that order
    "reductions_axes_out_of_order": (lambda jnp: lambda x: (
        jnp.sum(x, axis=(2, 0)), jnp.any(x > 0, axis=(2, -3)), jnp.var(x, axis=(2, 0)),
        jnp.max(x, axis=(1, 0), keepdims=True)), (M34.reshape(2, 3, 2),)),
    # x.at[].add/mul/min/max: the scatter carries its scalar combiner as update_jaxpr (set
    # has none); static indices are staged as broadcast_in_dim literals, then concatenated
    "at_add": (lambda jnp: lambda x: jnp.asarray(x).at[2].add(1.0), (X7,)),
    "at_set": (lambda jnp: lambda x: jnp.asarray(x).at[-1].set(1.0), (X7,)),
    "at_mul_2d": (lambda jnp: lambda x: jnp.asarray(x).at[1, 2].mul(3.0), (M34,)),
    "at_max_row": (lambda jnp: lambda x: jnp.asarray(x).at[1].max(3.0), (M34,)),
    "at_min_slice": (lambda jnp: lambda x: jnp.asarray(x).at[1:3].min(0.0), (X7,)),
    "at_add_traced": (lambda jnp: lambda x, i: jnp.asarray(x).at[i].add(1.0),
                      (X7, np.array([1, -5], np.int32))),
    # searchsorted: jit[searchsorted] > the method's jit; 'scan' is a binary search in a scan
    # of unsigned halvings vmapped over the queries (a batched jit per query dimension),
    # comparing canonical keys with lt_to/le_to; digitize and histogram with edges use it
    "searchsorted": (lambda jnp: lambda a, v: jnp.searchsorted(a, v), (S5, X7)),
    "searchsorted_right_int": (lambda jnp: lambda a, v: jnp.searchsorted(a, v, side="right"),
                               (I7, np.array([-1, 0, 5], np.int32))),
    "searchsorted_2d_query": (lambda jnp: lambda a, v: jnp.searchsorted(a, v), (S5, M34)),
    "searchsorted_scalar_query": (lambda jnp: lambda a, v: jnp.searchsorted(a, v),
                                  (S5, np.float32(2.5))),
    "searchsorted_unrolled": (lambda jnp: lambda a, v: jnp.searchsorted(
        a, v, method="scan_unrolled"), (S5, X7)),
    "searchsorted_compare_all": (lambda jnp: lambda a, v: jnp.searchsorted(
        a, v, side="right", method="compare_all"), (S5, X7)),
    "searchsorted_sort": (lambda jnp: lambda a, v: jnp.searchsorted(a, v, method="sort"),
                          (S5, X7)),
    "searchsorted_complex": (lambda jnp: lambda a, v: jnp.searchsorted(a, v),
                             (S5.astype(np.complex64), X7.astype(np.complex64))),
    "searchsorted_sorter": (lambda jnp: lambda a, v, s: jnp.searchsorted(a, v, sorter=s),
                            (R7, X7[:3].copy(), np.arange(6, -1, -1, dtype=np.int32))),
    "digitize": (lambda jnp: lambda x, b: jnp.digitize(x, b), (X7, S5)),
    "digitize_right_decreasing": (lambda jnp: lambda x, b: jnp.digitize(x, b, right=True),
                                  (X7, S5[::-1].copy())),
    "histogram_edges": (lambda jnp: lambda x, b: jnp.histogram(x, bins=b), (X7, S5)),
    # an int `bins`: the edges are jit[_linspace] over the data's span, widened through
    # jit[_ptp] and _where when the span is empty (histogram itself: see the end)
    "histogram_bin_edges": (lambda jnp: lambda x: jnp.histogram_bin_edges(x, bins=2), (I7,)),
    # linspace: jit[_linspace]; the endpoint is concatenated after the first num-1 samples
    "linspace_axis_retstep": (lambda jnp: lambda a, b: jnp.linspace(
        a, b, 4, endpoint=False, axis=-1, retstep=True), (X7[:2].copy(), np.float32(1))),
    "linspace_int": (lambda jnp: lambda a, b: jnp.linspace(a, b, 3, dtype=jnp.int32),
                     (np.int32(0), np.int32(7))),
    # nonzero with size=: cumsum of a bincount of the running count of nonzeros, then each
    # dimension's index by floor_divide and remainder; fill_value pads through _where
    "nonzero_size": (lambda jnp: lambda m: jnp.nonzero(m, size=5), (X7 > 0.5,)),
    "nonzero_2d_fill": (lambda jnp: lambda m: jnp.nonzero(m, size=5, fill_value=(-1, 7)),
                        (M34 % 3,)),
    "flatnonzero_size": (lambda jnp: lambda m: jnp.flatnonzero(m, size=4, fill_value=9),
                         (M34 % 4,)),
    # argwhere with size=: nonzero of jit[atleast_1d], the index arrays stacked by vstack
    # (one jit[atleast_2d] each) and transposed; a 0-d input keeps no column
    "argwhere_size": (lambda jnp: lambda m: jnp.argwhere(m, size=4), (M34 % 3,)),
    "argwhere_1d_fill": (lambda jnp: lambda m: jnp.argwhere(m, size=5, fill_value=-1),
                         (X7 > 0,)),
    "argwhere_0d": (lambda jnp: lambda m: jnp.argwhere(m, size=2), (np.float32(1),)),
    "argwhere_3d": (lambda jnp: lambda m: jnp.argwhere(m, size=2),
                    (M34.reshape(2, 3, 2) > 5,)),
    # lexsort: jit[lexsort]; an array's keys are unit-stride slices of its rows
    "lexsort_array": (lambda jnp: lambda k: jnp.lexsort(k), (M34,)),
    "lexsort_tuple": (lambda jnp: lambda a, b: jnp.lexsort((a, b), axis=0), (M34, M34 % 2)),
    # unique with size=: jit[_unique_sorted_mask] (a lexsort, a gather, neighbours compared
    # with NaNs equal unless equal_nan=False), the runs' starts by nonzero(size=), the
    # fill_value through _where, the inverse scattered through the permutation, the
    # counts a diff of nonzero(size=size+1) with the end patched in
    "unique_size_fill": (lambda jnp: lambda x: jnp.unique(x, size=5, fill_value=-1.0),
                         (U7,)),
    "unique_all_size": (lambda jnp: lambda x: jnp.unique(
        x, size=5, return_index=True, return_inverse=True, return_counts=True), (U7,)),
    "unique_2d_inverse_counts": (lambda jnp: lambda x: jnp.unique(
        x, size=3, return_inverse=True, return_counts=True), (M34 % 3,)),
    "unique_int_not_equal_nan": (lambda jnp: lambda x: jnp.unique(
        x, size=3, fill_value=9, equal_nan=False), (I7 % 3,)),
    "unique_complex": (lambda jnp: lambda x: jnp.unique(x, size=4),
                       (U7.astype(np.complex64),)),
    # union1d is unique of the concatenation; isin of mixed dtypes and of NaNs
    "union1d_size_fill": (lambda jnp: lambda a, b: jnp.union1d(a, b, size=9, fill_value=0.5),
                          (U7, X7[:4].copy())),
    # intersect1d with size=: jit[_intersect1d_size] (each input's unique values padded with
    # 0, written into one array by dynamic_update_slice, sorted with the padding last; equal
    # neighbours are the common values, gathered in fill mode; the default padding is the
    # min of a max-padded result); the indices unwind the sort's permutation
    "intersect1d_size": (lambda jnp: lambda a, b: jnp.intersect1d(a, b, size=5),
                         (U7, X7[:4].copy())),
    "intersect1d_indices_fill": (lambda jnp: lambda a, b: jnp.intersect1d(
        a, b, return_indices=True, size=4, fill_value=-1), (I7 % 3, I7[::-1].copy())),
    "intersect1d_assume_unique": (lambda jnp: lambda a, b: jnp.intersect1d(
        a, b, assume_unique=True, return_indices=True, size=3), (X7, X7[2:5].copy())),
    "intersect1d_mixed_2d": (lambda jnp: lambda a, b: jnp.intersect1d(a, b, size=3),
                             (M34 % 5, I7)),
    "intersect1d_empty": (lambda jnp: lambda a, b: jnp.intersect1d(a, b, size=2),
                          (X7[:0].copy(), X7)),
    # setdiff1d with size=: unique(size=), jit[_in1d] inverted, unique's padding masked off
    # by counting the entries equal to the first (for floats see the end), nonzero(size=)
    "setdiff1d_size": (lambda jnp: lambda a, b: jnp.setdiff1d(a, b, size=6),
                       (I7 % 4, I7[:3].copy())),
    "setdiff1d_assume_unique": (lambda jnp: lambda a, b: jnp.setdiff1d(
        a, b, assume_unique=True, size=4), (X7, X7[2:5].copy())),
    "setdiff1d_int_from_float": (lambda jnp: lambda a, b: jnp.setdiff1d(a, b, size=3),
                                 (I7, X7)),
    "setdiff1d_empty": (lambda jnp: lambda a, b: jnp.setdiff1d(a, b, size=2),
                        (X7[:0].copy(), X7)),
    # setxor1d with size=: jit[_setxor1d_size], unique's values of both sorted together
    # (padding last); an entry differing from both neighbours is in one input only
    "setxor1d_size": (lambda jnp: lambda a, b: jnp.setxor1d(a, b, size=8),
                      (U7, X7[:4].copy())),
    "setxor1d_fill_mixed": (lambda jnp: lambda a, b: jnp.setxor1d(a, b, size=5,
                                                                  fill_value=-1),
                            (M34 % 5, I7)),
    "setxor1d_assume_unique": (lambda jnp: lambda a, b: jnp.setxor1d(
        a, b, assume_unique=True, size=5), (X7, X7[2:5].copy())),
    "setxor1d_empty": (lambda jnp: lambda a, b: jnp.setxor1d(a, b, size=3),
                       (X7[:0].copy(), X7[:0].copy())),
    "isin_2d_int": (lambda jnp: lambda a, b: jnp.isin(a, b), (M34, I7)),
    "isin_invert_nan": (lambda jnp: lambda a, b: jnp.isin(a, b, invert=True), (X7, U7)),
    # linalg.norm: jit[norm]; the 2-norm is sqrt(sum(real(x * conj(x)))) over the axes
    # (every axis, unflattened, when axis is None); inf-norms take max with initial=0;
    # matrix 1/inf-norms sum then reduce the other axis; matrix_norm calls norm
    "norm": (lambda jnp: lambda x: jnp.linalg.norm(x), (M34,)),
    "norm_3d_keepdims": (lambda jnp: lambda x: jnp.linalg.norm(x, keepdims=True),
                         (M34.reshape(2, 3, 2),)),
    "norm_axis": (lambda jnp: lambda x: jnp.linalg.norm(x, axis=1), (M34,)),
    "norm_vector_orders": (lambda jnp: lambda x: [jnp.linalg.norm(x, o) for o in (
        1, np.inf, -np.inf, 0, 3)], (X7,)),
    "norm_matrix_orders": (lambda jnp: lambda x: [jnp.linalg.norm(x, o, axis=(1, 0)) for o in (
        "fro", 1, -1, np.inf)] + [jnp.linalg.norm(x, -np.inf, keepdims=True)], (M34,)),
    "norm_int": (lambda jnp: lambda x: jnp.linalg.norm(x), (I7,)),
    "norm_complex_axis": (lambda jnp: lambda x: jnp.linalg.norm(x, axis=0),
                          ((M34 - 5).astype(np.complex64) * (1 + 2j),)),
    "vector_norm": (lambda jnp: lambda x: jnp.linalg.vector_norm(x, ord=1, axis=0), (M34,)),
    "matrix_norm": (lambda jnp: lambda x: jnp.linalg.matrix_norm(x), (M34,)),
    # outer: each raveled input given a unit axis by broadcast_in_dim; meshgrid with 'xy'
    # broadcasts the second input first
    "outer": (lambda jnp: lambda x, y: jnp.outer(x, y), (M34, I7)),
    "meshgrid": (lambda jnp: lambda x, y: jnp.meshgrid(x, y, x), (X7, S5)),
    "meshgrid_sparse": (lambda jnp: lambda x, y: jnp.meshgrid(x, y, sparse=True), (X7, S5)),
    # column_stack: a 1-d input becomes a column by jit[atleast_2d] and a transpose
    "column_stack": (lambda jnp: lambda x, y: jnp.column_stack([x, y.reshape(7, 1)]),
                     (X7, R7)),
    # average: weights along the axis are reshaped with unit axes elsewhere (not broadcast)
    "average_weights_axis": (lambda jnp: lambda x: jnp.average(x, axis=0, weights=x[:, 0],
                                                               returned=True), (M34,)),
    "average_weights_full": (lambda jnp: lambda x: jnp.average(x, weights=x, keepdims=True),
                             (M34,)),
    # nanargmax/nanargmin: jit[_nanargmax] / jit[_nanargmin]
    "nanargmax": (lambda jnp: lambda x: jnp.nanargmax(x, axis=0), (M34,)),
    "nanargmin_keepdims": (lambda jnp: lambda x: jnp.nanargmin(x, axis=1, keepdims=True),
                           (M34,)),
    # matrix_power: jit[matrix_power], multiplied in JAX's order ((a @ a) @ a for n=3)
    "matrix_power_3": (lambda jnp: lambda x: jnp.linalg.matrix_power(x, 3), (M34[:, :3],)),
    "matrix_power_7": (lambda jnp: lambda x: jnp.linalg.matrix_power(x, 7),
                       (M34[:, :3] / 10,)),
    "matrix_power_0": (lambda jnp: lambda x: jnp.linalg.matrix_power(x, 0), (M34[:, :3],)),
    # trapezoid: jit[trapezoid] (a constant dx multiplies as a literal); gradient:
    # jit[gradient], unit-stride slices, each edge divided after the inner differences
    "trapezoid": (lambda jnp: lambda x: jnp.trapezoid(x, axis=1), (M34,)),
    "trapezoid_x": (lambda jnp: lambda y, x: jnp.trapezoid(y, x), (X7, R7)),
    "gradient_2d": (lambda jnp: lambda x: jnp.gradient(x), (M34,)),
    "gradient_coordinates": (lambda jnp: lambda x, h: jnp.gradient(x, h, axis=1),
                             (M34, S5[:4].copy())),
    # a scalar made by jnp.asarray/jnp.array inside the function converts as a constant
    "scalar_array_constants": (lambda jnp: lambda x: x * jnp.asarray(2.0) + jnp.array(1),
                               (M34,)),
    # cross: jit[cross], the three components in JAX's order stacked by jnp.array
    "cross": (lambda jnp: lambda x: jnp.cross(x[0, :3], x[1, :3]), (M34,)),
    "cross_2_and_3": (lambda jnp: lambda x, y: jnp.cross(x, y), (M34[:, :2].copy(),
                                                                 M34[:, 1:].copy())),
    "cross_mixed_axisc": (lambda jnp: lambda x, y: jnp.cross(x, y, axisc=0),
                          (M34[:, :3].copy(), I7[:3].copy())),
    # jnp.square: the square primitive (integer_pow[y=2] is lax.integer_pow's)
    "square_and_power": (lambda jnp: lambda x: jnp.power(x, 3) + jnp.square(x)
                         + jnp.square(x > 2), (M34,)),
    # logaddexp/logaddexp2: custom_jvp_call[name=logaddexp jvp=_logaddexp_jvp] (the JVP is
    # Ember's own, right at the infinities; only its name prints)
    "logaddexp": (lambda jnp: lambda x: jnp.logaddexp(x, 1.0), (M34,)),
    "logaddexp_int_broadcast": (lambda jnp: lambda x, y: jnp.logaddexp(x, y), (M34 % 3,
                                                                              I7[:4].copy())),
    "logaddexp2": (lambda jnp: lambda x, y: jnp.logaddexp2(x, y), (X7, R7)),
    # cov: jit[cov] (average's weights, the centered product by dot_general)
    "cov": (lambda jnp: lambda x: jnp.cov(x), (M34,)),
    "cov_y_ddof": (lambda jnp: lambda x, y: jnp.cov(x, y, ddof=0), (X7, R7)),
    "cov_columns_fweights": (lambda jnp: lambda x, w: jnp.cov(x, rowvar=False, fweights=w),
                             (M34, np.array([1, 2, 1], np.int32))),
    "cov_aweights": (lambda jnp: lambda x, w: jnp.cov(x, aweights=w), (M34, S5[1:].copy())),
    # nancumsum/nancumprod: NaNs replaced through jit[_where] (for integers too, as JAX);
    # ediff1d: jit[ediff1d], to_begin/to_end converted inside
    "nancumsum": (lambda jnp: lambda x: jnp.nancumsum(x, axis=0), (M34,)),
    "nancumprod_complex": (lambda jnp: lambda x: jnp.nancumprod(x),
                           (U7.astype(np.complex64),)),
    "nancumsum_int": (lambda jnp: lambda x: jnp.nancumsum(x), (I7,)),
    "ediff1d": (lambda jnp: lambda x: jnp.ediff1d(x, to_begin=0.0), (M34,)),
    "ediff1d_ends": (lambda jnp: lambda x, e: jnp.ediff1d(x, to_end=e,
                                                          to_begin=np.array([1, 2])),
                     (I7, X7[:2].copy())),
    # block: jit[block] over the flattened blocks (lower-rank ones raised by
    # broadcast_in_dim); ix_: each index array laid along its axis by broadcast_in_dim
    "block": (lambda jnp: lambda x: jnp.block([[x, x], [x, x]]), (M34,)),
    "block_mixed": (lambda jnp: lambda x, y: jnp.block([x, y, 1.0]), (X7, I7)),
    "ix": (lambda jnp: lambda i, j: jnp.ix_(i, j), (I7[:2].copy(), I7[2:5].copy())),
    # take_along_axis: jit[take_along_axis], one gather whose matching dimensions are
    # batching dimensions (a length-1 index dimension is taken whole, a length-1 array
    # dimension squeezed)
    "take_along_axis": (lambda jnp: lambda x, i: jnp.take_along_axis(x, i, axis=1),
                        (M34, np.array([[0, 3], [1, 1], [2, 0]], np.int32))),
    "take_along_axis_broadcast": (lambda jnp: lambda x, i: jnp.take_along_axis(x, i, axis=0),
                                  (M34[:1].copy(), np.zeros((3, 4), np.int32))),
    "take_along_axis_fill_none": (lambda jnp: lambda x, i: jnp.take_along_axis(
        x, i, axis=None, fill_value=-1.0), (M34, np.array([0, 11, -3, 12], np.int32))),
    "take_along_axis_argsort": (lambda jnp: lambda x: jnp.take_along_axis(
        x, jnp.argsort(x, axis=1), axis=1), (M34,)),
    # vmap of a jnp function JAX wraps in jit: one jit equation of the batched body; an
    # elementwise op meeting an unmapped operand gives it a leading axis (broadcast_in_dim)
    "vmap_cumsum": (lambda jnp: lambda x: _vmap(jnp)(jnp.cumsum)(x), (M34,)),
    "vmap_where": (lambda jnp: lambda x: _vmap(jnp)(lambda r: jnp.where(r > 2, r, 0.0))(x),
                   (M34,)),
    "vmap_add_unmapped": (lambda jnp: lambda x, y: _vmap(jnp)(lambda a: a + y)(x),
                          (M34, M34[0].copy())),
    "vmap_scalar_times_vector": (lambda jnp: lambda x, y: _vmap(jnp)(lambda a: a * y)(x),
                                 (X7, M34[0].copy())),
    "vmap_searchsorted": (lambda jnp: lambda a, v: _vmap(jnp)(jnp.searchsorted,
                                                              in_axes=(None, 0))(a, v),
                          (S5, M34)),
    # a reduction under vmap shifts its axes past the batch axis (NumPy integers, as JAX's)
    "vmap_var_axis1": (lambda jnp: lambda x: _vmap(jnp)(jnp.var, in_axes=1)(x), (M34,)),
    "vmap_argmax_axis1": (lambda jnp: lambda x: _vmap(jnp)(jnp.argmax, in_axes=1)(x), (M34,)),
    # static slices: a forward one slices from start to stop with its stride (kept for one
    # element); a backward one slices forward from its lowest element, then rev
    "getitem_step": (lambda jnp: lambda x: jnp.asarray(x)[1::3], (X7,)),
    "getitem_step_one_element": (lambda jnp: lambda x: jnp.asarray(x)[2:3:5], (X7,)),
    "getitem_empty_step": (lambda jnp: lambda x: jnp.asarray(x)[5:2:2], (X7,)),
    "getitem_back_one_element": (lambda jnp: lambda x: jnp.asarray(x)[5:4:-3], (X7,)),
    "getitem_back_empty": (lambda jnp: lambda x: jnp.asarray(x)[2:5:-1], (X7,)),
    "getitem_mixed_2d": (lambda jnp: lambda x: jnp.asarray(x)[2:0:-2, 1::2], (M34,)),
    # pad: every mode is one jit[_pad] taking the constant (0 by default) as an argument;
    # constant widths print as np.int64, the other modes stage slices and concatenates
    "pad_constant": (lambda jnp: lambda x: jnp.pad(x, 2), (X7,)),
    "pad_constant_int": (lambda jnp: lambda x: jnp.pad(x, 1), (I7,)),
    "pad_zero_width": (lambda jnp: lambda x: jnp.pad(x, 0), (X7,)),
    "pad_constant_value": (lambda jnp: lambda x: jnp.pad(x, ((1, 2), (0, 3)),
                                                         constant_values=5.0), (M34,)),
    "pad_constant_per_side": (lambda jnp: lambda x: jnp.pad(
        x, ((1, 2), (0, 3)), constant_values=np.array([[1, 2], [3, 4]], np.float32)), (M34,)),
    # nested Python constant values: four traced arguments, each converted before it is
    # stacked (jnp.asarray of a nested sequence of tracers)
    "pad_constant_nested_values": (lambda jnp: lambda x: jnp.pad(
        x, ((1, 2), (0, 3)), constant_values=((1, 2), (3, 4))), (M34,)),
    "array_nested_mixed_tracers": (lambda jnp: lambda x, i: jnp.array([[x, i], [i, x]]),
                                   (np.float32(2), np.int32(3))),
    "pad_traced_constant": (lambda jnp: lambda x, c: jnp.pad(x, 1, constant_values=c),
                            (X7, np.float32(3))),
    "pad_constant_3d": (lambda jnp: lambda x: jnp.pad(x, ((0, 1), (2, 0), (1, 1))), (T234,)),
    "pad_of_stencil": (lambda jnp: lambda u: jnp.pad(u[1:-1, 1:-1] * 2.0, 1), (M34,)),
    "pad_edge": (lambda jnp: lambda x: jnp.pad(x, 2, mode="edge"), (X7,)),
    "pad_edge_2d": (lambda jnp: lambda x: jnp.pad(x, ((1, 0), (2, 1)), mode="edge"), (M34,)),
    "pad_reflect": (lambda jnp: lambda x: jnp.pad(x, 2, mode="reflect"), (X7,)),
    "pad_reflect_2d": (lambda jnp: lambda x: jnp.pad(x, ((1, 0), (2, 1)), mode="reflect"),
                       (M34,)),
    "pad_reflect_wide": (lambda jnp: lambda x: jnp.pad(x, 10, mode="reflect"), (X7,)),
    "pad_reflect_odd": (lambda jnp: lambda x: jnp.pad(x, (2, 3), mode="reflect",
                                                      reflect_type="odd"), (X7,)),
    "pad_symmetric": (lambda jnp: lambda x: jnp.pad(x, 2, mode="symmetric"), (X7,)),
    "pad_symmetric_3d": (lambda jnp: lambda x: jnp.pad(x, 1, mode="symmetric"), (T234,)),
    "pad_wrap": (lambda jnp: lambda x: jnp.pad(x, 2, mode="wrap"), (X7,)),
    "pad_wrap_2d": (lambda jnp: lambda x: jnp.pad(x, ((1, 0), (2, 1)), mode="wrap"), (M34,)),
    "pad_wrap_wide": (lambda jnp: lambda x: jnp.pad(x, (9, 3), mode="wrap"), (X7,)),
    "pad_maximum": (lambda jnp: lambda x: jnp.pad(x, (1, 2), mode="maximum"), (M34,)),
    "pad_mean_int": (lambda jnp: lambda x: jnp.pad(x, 1, mode="mean"),
                     (np.arange(12, dtype=np.int32).reshape(3, 4),)),
    "pad_empty": (lambda jnp: lambda x: jnp.pad(x, 1, mode="empty"), (M34,)),
    "pad_median": (lambda jnp: lambda x: jnp.pad(x, (2, 1), mode="median"), (M34,)),
    "pad_mean_stat_length": (lambda jnp: lambda x: jnp.pad(x, (2, 3), mode="mean",
                                                           stat_length=2), (X7,)),
    "pad_maximum_stat_length_2d": (lambda jnp: lambda x: jnp.pad(
        x, ((1, 2), (2, 1)), mode="maximum", stat_length=((1, 2), (3, 9))), (M34,)),
    "pad_linear_ramp": (lambda jnp: lambda x: jnp.pad(x, (2, 3), mode="linear_ramp"), (X7,)),
    "pad_linear_ramp_end_values_2d": (lambda jnp: lambda x: jnp.pad(
        x, ((1, 2), (3, 0)), mode="linear_ramp", end_values=((5, -1), (2.5, 7))), (M34,)),
    # split, array_split, hsplit: one split[axis= sizes=] (np.int64 sizes), not slices
    "split_sections": (lambda jnp: lambda x: jnp.split(x, 2, axis=1), (M34,)),
    "split_indices": (lambda jnp: lambda x: jnp.split(x, [2, 5]), (X7,)),
    "split_one_section": (lambda jnp: lambda x: jnp.split(x, 1), (X7,)),
    "array_split_uneven": (lambda jnp: lambda x: jnp.array_split(x, 3), (X7,)),
    "hsplit": (lambda jnp: lambda x: jnp.hsplit(x, [1]), (M34,)),
    "split_then_sum": (lambda jnp: lambda x: sum(jnp.split(x, 3)), (M34,)),
    # stack, unstack, tile: one primitive each (stack after promoting its operands; tile
    # after padding reps to the rank, or giving the array leading axes for longer reps)
    "stack": (lambda jnp: lambda x, y: jnp.stack([x, y]), (X7, R7)),
    "stack_last_axis": (lambda jnp: lambda x: jnp.stack([x, x * 2], axis=-1), (M34,)),
    "stack_mixed_dtypes": (lambda jnp: lambda x, i: jnp.stack([x, i]), (X7, I7)),
    "stack_weak_scalar": (lambda jnp: lambda s: jnp.stack([s, 2.0]), (np.float32(1),)),
    # one array (not a sequence): a new axis after `axis`, then one reshape merging rows
    "stack_of_one_array": (lambda jnp: lambda x: jnp.stack(x), (T234,)),
    "concatenate_of_one_array": (lambda jnp: lambda x: jnp.concatenate(x), (T234,)),
    "concatenate_of_one_array_flat": (lambda jnp: lambda x: jnp.concatenate(x, axis=None),
                                      (T234,)),
    "unstack_axis1": (lambda jnp: lambda x: jnp.unstack(x, axis=1), (M34,)),
    "tile": (lambda jnp: lambda x: jnp.tile(x, 2), (X7,)),
    "tile_short_reps": (lambda jnp: lambda x: jnp.tile(x, 3), (M34,)),
    "tile_long_reps": (lambda jnp: lambda x: jnp.tile(x, (2, 1, 3)), (M34,)),
    "tile_scalar": (lambda jnp: lambda s: jnp.tile(s, 3), (np.float32(2),)),
    # (a stacked once, so no cotangents are summed; fan-out cases are further below)
    "grad_of_stack": (lambda jnp: _grad(jnp)(lambda a, b: jnp.sum(jnp.stack([a, b]) ** 2)),
                      (X7, R7)),
    "grad_of_tile": (lambda jnp: _grad(jnp)(lambda a: jnp.sum(jnp.tile(a, (2, 3)) ** 2)),
                     (M34,)),
    # (cases from the add_any / reshape-dimensions work go below this line)
    # a Python float meeting a weakly typed float32 value stays weak: its literal prints
    # the float's own text (0.1), a strong operand's the float32 value's
    "weak_scalar_times_python_float": (lambda jnp: lambda s: s * 0.1234567891, (2.0,)),
    "weak_array_plus_python_floats": (lambda jnp: lambda x: (x + 0.5) + 0.1, (I7,)),
    "strong_array_times_python_float": (lambda jnp: lambda x: x * 0.1234567891, (X7,)),
    # lax does not promote: a Python float beside a float32 array enters as a weak literal
    "lax_mul_python_float": (lambda jnp: lambda x: _lax(jnp).mul(x, 0.2), (X7,)),
    "lax_sub_from_python_float": (lambda jnp: lambda x: _lax(jnp).sub(0.3, x), (X7,)),
    "lax_max_python_float": (lambda jnp: lambda x: _lax(jnp).max(x, 0.1234567891), (X7,)),
    # checkpoint is JAX's remat2 (params sorted), plain and under grad
    "checkpoint": (lambda jnp: _checkpoint(jnp)(lambda x: jnp.sin(jnp.sin(x))),
                   (np.float32(0.7),)),
    "grad_of_checkpoint": (lambda jnp: _grad(jnp)(_checkpoint(jnp)(
        lambda x: jnp.sum(jnp.sin(jnp.sin(x)) * x))), (X7,)),
    "checkpoint_no_cse": (lambda jnp: _checkpoint(jnp)(lambda x: jnp.cos(x) * x,
                                                      prevent_cse=False), (X7,)),
    # a slice's transpose pads with NumPy-integer high edges (and interiors when strided)
    "grad_of_slice": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(x[1:4] ** 2)), (X7,)),
    "grad_of_strided_slice": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(x[1:6:2] ** 2)),
                              (X7,)),
    "grad_of_empty_slice": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(x[1:1] ** 2)), (X7,)),
    "grad_of_2d_slice": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(x[:, 1:3] ** 2)), (M34,)),
    # grad of cond/switch: residuals share slots by type across branches, the slots a
    # branch does not write hold empty2; squeeze transposes to a broadcast (expand_dims)
    "grad_of_cond": (lambda jnp: _grad(jnp)(lambda x, p: _lax(jnp).cond(
        p > 0, lambda x: jnp.sum(jnp.sin(x) * x), lambda x: jnp.sum(jnp.exp(x)), x)),
        (X7, np.float32(1))),
    "grad_of_switch": (lambda jnp: _grad(jnp)(lambda x, i: _lax(jnp).switch(
        i, [lambda x: jnp.sum(x ** 3), lambda x: jnp.sum(jnp.exp(x) * x),
            lambda x: jnp.sum(jnp.sin(x))], x)), (X7, np.int32(1))),
    "grad_of_cond_scalar_residuals": (lambda jnp: _grad(jnp)(lambda x, p: _lax(jnp).cond(
        p > 0, lambda x: jnp.sin(x[0]) * x[1], lambda x: x[2] * 2.0, x)),
        (X7, np.float32(-1))),
    # linalg under grad: each jit (solve, _lu_solve, inv, ...) kept, as JAX's
    "grad_of_solve": (lambda jnp: _grad(jnp)(lambda a, b: jnp.sum(jnp.linalg.solve(a, b))),
                      (np.eye(3, dtype=np.float32) * 2 + 0.1, np.ones(3, np.float32))),
    "grad_of_inv": (lambda jnp: _grad(jnp)(lambda a: jnp.sum(jnp.linalg.inv(a))),
                    (np.eye(3, dtype=np.float32) * 2 + 0.1,)),
    "grad_of_squeeze": (lambda jnp: _grad(jnp)(
        lambda m: jnp.sum(jnp.sin(jnp.squeeze(m, axis=1)))), (M34.reshape(3, 1, 4),)),
    # A jnp function's jit survives autodiff as JAX's pjit rules keep it: JVP a jit of the
    # body's JVP; linearize a known jit (primal outputs, residuals) and a linear jit; the
    # transpose a jit of the transposed body; vmap a jit of the batched body
    "grad_of_where": (lambda jnp: _grad(jnp)(
        lambda x: jnp.sum(jnp.where(x > 1, x * x, jnp.exp(x)))), (X7,)),
    "jvp_of_where": (lambda jnp: lambda x, t: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x: jnp.where(x > 1, x * x, jnp.exp(x)),
                                         (x,), (t,)), (X7, R7)),
    "vjp_of_where": (lambda jnp: lambda x, c: importlib.import_module(
        jnp.__name__.split(".")[0]).vjp(lambda x: jnp.where(x > 1, x * x, jnp.exp(x)),
                                         x)[1](c), (X7, R7)),
    "linearize_of_where": (lambda jnp: lambda x, t: importlib.import_module(
        jnp.__name__.split(".")[0]).linearize(
            lambda x: jnp.where(x > 1, x * x, jnp.exp(x)), x)[1](t), (X7, R7)),
    "vmap_of_grad_of_where": (lambda jnp: _vmap(jnp)(_grad(jnp)(
        lambda x: jnp.where(x > 1, x * x, jnp.exp(x)))), (X7,)),
    "grad_of_grad_of_where": (lambda jnp: _grad(jnp)(_grad(jnp)(
        lambda x: jnp.where(x > 1, x * x * x, jnp.sin(x)))), (np.float32(1.5),)),
    "grad_of_where_one_branch_constant": (lambda jnp: _grad(jnp)(
        lambda x: jnp.sum(jnp.where(x > 0, x * 3.0, 0.0))), (U7,)),
    "grad_of_clip": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(jnp.clip(x, -0.5, 1.0) ** 2)),
                     (X7,)),
    "jvp_of_clip": (lambda jnp: lambda x, t: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x: jnp.clip(x, -1.0, 1.0), (x,), (t,)),
        (X7, R7)),
    "vmap_of_clip": (lambda jnp: _vmap(jnp)(lambda x: jnp.clip(x, 1.0, 6.0)), (M34,)),
    "grad_of_take_along_axis": (lambda jnp: _grad(jnp)(lambda m: jnp.sum(
        jnp.take_along_axis(m, np.array([[0, 3], [1, 1], [2, 0]], np.int32), axis=1) ** 2)),
        (M34,)),
    "vmap_of_softmax": (lambda jnp: _vmap(jnp)(importlib.import_module(
        jnp.__name__.split(".")[0] + ".nn").softmax), (M34,)),
    "jit_of_grad_of_where": (lambda jnp: importlib.import_module(
        jnp.__name__.split(".")[0]).jit(_grad(jnp)(
            lambda x: jnp.sum(jnp.where(x > 1, x * x, jnp.exp(x))))), (X7,)),
    # cos's JVP negates the tangent's product (JAX's rule): sin's second derivative
    "grad_of_cos": (lambda jnp: _grad(jnp)(lambda x: jnp.cos(x)), (np.float32(0.7),)),
    "grad_of_grad_of_sin_times_x": (lambda jnp: _grad(jnp)(_grad(jnp)(
        lambda x: jnp.sin(x) * x)), (np.float32(0.7),)),
    # concatenate transposes to one split (roll's transposed jit holds it)
    "grad_of_roll": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(jnp.roll(x, 2) * x)), (X7,)),
    "grad_of_concatenate": (lambda jnp: _grad(jnp)(lambda a, b: jnp.sum(
        jnp.concatenate([a, b, a], axis=1) ** 2), argnums=(0, 1)), (M34, M34[:, :3])),
    # reduce_max/min's JVP compares with the result reshaped to keep its axes (size-1
    # broadcasting); reduce_sum's transpose broadcasts along NumPy-integer dims
    "grad_of_max_axis1": (lambda jnp: _grad(jnp)(lambda m: jnp.sum(jnp.max(m, axis=1) ** 2)),
                          (np.array([[1, 3, 3, 0], [np.nan, 1, 2, 2], [-0.0, 0, -1, -2]],
                                    np.float32),)),
    "grad_of_min": (lambda jnp: _grad(jnp)(lambda m: jnp.min(m) * 2.0), (M34,)),
    "jvp_of_max_axis0": (lambda jnp: lambda m, t: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda m: jnp.max(m, axis=0), (m,), (t,)),
        (M34, M34[::-1].copy())),
    "grad_of_sum_axis0": (lambda jnp: _grad(jnp)(lambda m: jnp.sum(jnp.sum(m, axis=0) ** 2)),
                          (M34,)),
    # user jits under autodiff: an output that is a residual is returned once; the
    # transposed call gets only the residuals the used outputs need (JAX's pjit DCE)
    "grad_of_jit_with_unused_outputs": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(
        importlib.import_module(jnp.__name__.split(".")[0]).jit(
            lambda a, b: (a * b, jnp.exp(a), b))(x, x * 3.0)[1])), (X7,)),
    "vjp_of_jit_two_outputs": (lambda jnp: lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).vjp(importlib.import_module(
            jnp.__name__.split(".")[0]).jit(lambda a: (jnp.sin(a), a * a)), x)[1]((x, x)),
        (X7,)),
    "grad_of_vmap_of_where": (lambda jnp: _grad(jnp)(lambda m: jnp.sum(_vmap(jnp)(
        lambda r: jnp.where(r > 1, r * r, jnp.sin(r)))(m))), (M34,)),
    # pad's transpose crops and strides by NumPy-integer params, as JAX's rule computes
    "grad_of_lax_pad_interior": (lambda jnp: _grad(jnp)(lambda x, v: jnp.sum(_lax(jnp).pad(
        x, v, [(1, 2, 1), (-1, 0, 0)]) ** 2), argnums=(0, 1)), (M34, np.float32(0.5))),
    # Gradients where a value fans out: cotangents (and JVP terms) summed with add_any;
    # add and sub of two tangents stay add and sub; a rank-0 zero is a literal
    "grad_x_times_x": (lambda jnp: _grad(jnp)(lambda x: x * x), (np.float32(0.7),)),
    "grad_sin_x_times_x": (lambda jnp: _grad(jnp)(lambda x: jnp.sin(x) * x),
                           (np.float32(0.7),)),
    "grad_sum_sin_x_times_x": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(jnp.sin(x) * x)),
                               (X7,)),
    "grad_x_plus_x": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(x + x)), (X7,)),
    "grad_fanout_two_args": (lambda jnp: _grad(jnp)(
        lambda x, y: jnp.sum(x * x - y * x), (0, 1)), (X7, R7)),
    "grad_fanout_shared_args": (lambda jnp: _grad(jnp)(
        lambda x, y: jnp.sum(x * y + x * x + y), (0, 1)), (X7, R7)),
    "grad_fanout_scalar_broadcast": (lambda jnp: _grad(jnp)(
        lambda s, x: jnp.sum(s * x + s), (0, 1)), (np.float32(0.7), X7)),
    "grad_fanout_pytree": (lambda jnp: _grad(jnp)(
        lambda d: jnp.sum(d["a"] * d["b"] + d["a"])), ({"a": X7, "b": R7},)),
    "grad_fanout_square_sqrt": (lambda jnp: _grad(jnp)(
        lambda x: jnp.sum(jnp.square(x) + jnp.sqrt(x * x + 1))), (X7,)),
    "grad_fanout_stack": (lambda jnp: _grad(jnp)(
        lambda a: jnp.sum(jnp.stack([a, a * 2]) ** 2)), (X7,)),
    "grad_of_grad_cube": (lambda jnp: _grad(jnp)(_grad(jnp)(lambda x: x * x * x)),
                          (np.float32(0.7),)),
    "value_and_grad_fanout": (lambda jnp: importlib.import_module(
        jnp.__name__.split(".")[0]).value_and_grad(lambda x: jnp.sum(x * jnp.exp(x))), (X7,)),
    "jvp_mul_fanout": (lambda jnp: lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x: x * x, (x,), (x,)), (X7,)),
    "jvp_mul_chain": (lambda jnp: lambda x, t: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x: x * x * x, (x,), (t,)), (X7, R7)),
    "jvp_add": (lambda jnp: lambda x, y: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x, y: x + y, (x, y), (y, x)), (X7, R7)),
    "jvp_sub": (lambda jnp: lambda x, y: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x, y: x - y, (x, y), (y, x)), (X7, R7)),
    "linearize_fanout": (lambda jnp: lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).linearize(lambda x: jnp.sin(x) * x, x)[1](x), (X7,)),
    "vjp_two_outputs": (lambda jnp: lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).vjp(lambda x: (jnp.sin(x), x * 2.0), x)[1]((x, x)),
        (X7,)),
    "vmap_of_grad_fanout": (lambda jnp: _vmap(jnp)(_grad(jnp)(lambda x: jnp.sin(x) * x)),
                            (X7,)),
    "grad_of_vmap_fanout": (lambda jnp: _grad(jnp)(
        lambda x: jnp.sum(_vmap(jnp)(lambda r: r * r)(x))), (M34,)),
    "jvp_while_loop": (lambda jnp: lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(lambda x: importlib.import_module(
            jnp.__name__.split(".")[0]).lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * c[1]), (0, x))[1], (x,), (x,)),
        (np.float32(0.7),)),
    "grad_scan_fanout": (lambda jnp: _grad(jnp)(lambda c, xs: jnp.sum(importlib.import_module(
        jnp.__name__.split(".")[0]).lax.scan(lambda c, x: (c * x + c, c * x), c, xs)[1])),
        (np.float32(0.7), X7)),
    "grad_fori_loop_fanout": (lambda jnp: _grad(jnp)(lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).lax.fori_loop(0, 3, lambda i, c: c * x + c, x)),
        (np.float32(0.7),)),
    "grad_scan_const_carry_xs": (lambda jnp: _grad(jnp)(
        lambda w, c, xs: jnp.sum(importlib.import_module(jnp.__name__.split(".")[0]).lax.scan(
            lambda c, x: (c * w + x * w, jnp.sin(c) * w), c, xs)[1]), (0, 1, 2)),
        (np.float32(0.9), np.float32(0.3), X7)),
    "grad_scan_reverse": (lambda jnp: _grad(jnp)(
        lambda w, xs: jnp.sum(importlib.import_module(jnp.__name__.split(".")[0]).lax.scan(
            lambda c, x: (c * w + x, c * x), np.float32(1), xs, reverse=True)[1])),
        (np.float32(0.9), X7)),
    "grad_fori_loop_two_consts": (lambda jnp: _grad(jnp)(
        lambda a, b: importlib.import_module(jnp.__name__.split(".")[0]).lax.fori_loop(
            0, 4, lambda i, c: c * a + b * c + a, b), (0, 1)),
        (np.float32(0.5), np.float32(0.25))),
    # reshape[dimensions=perm]: one array stacked or concatenated past axis 0, average's
    # weights and quantile's axes given out of order, order="F", lax.reshape's dimensions
    "stack_of_one_array_axis1": (lambda jnp: lambda x: jnp.stack(x, axis=1), (T234,)),
    "stack_of_one_array_last_axis": (lambda jnp: lambda x: jnp.stack(x, axis=-1), (T234,)),
    "concatenate_of_one_array_axis1": (lambda jnp: lambda x: jnp.concatenate(x, axis=1),
                                       (T234,)),
    "concatenate_of_one_array_last_axis": (lambda jnp: lambda x: jnp.concatenate(x, axis=-1),
                                           (T234,)),
    "average_weights_unordered_axes": (lambda jnp: lambda x, w: jnp.average(
        x, axis=(2, 0), weights=w), (T234, np.linspace(0.5, 2, 8, dtype=np.float32)
                                     .reshape(4, 2))),
    "average_weights_unordered_returned": (lambda jnp: lambda x, w: jnp.average(
        x, axis=(2, 0), weights=w, returned=True, keepdims=True),
        (T234, np.linspace(0.5, 2, 8, dtype=np.float32).reshape(4, 2))),
    "quantile_unordered_axes": (lambda jnp: lambda x: jnp.quantile(x, 0.3, axis=(2, 0)),
                                (T234,)),
    "median_axes_tuple": (lambda jnp: lambda x: jnp.median(x, axis=(0, 2)), (T234,)),
    "reshape_order_f": (lambda jnp: lambda x: jnp.reshape(x, (4, 6), order="F"), (T234,)),
    "ravel_order_f": (lambda jnp: lambda x: jnp.ravel(x, order="F"), (T234,)),
    "lax_reshape_dimensions": (lambda jnp: lambda x: importlib.import_module(
        jnp.__name__.split(".")[0]).lax.reshape(x, (4, 6), (2, 0, 1)), (T234,)),
    "grad_of_concatenate_of_one_array": (lambda jnp: _grad(jnp)(
        lambda x: jnp.sum(jnp.concatenate(x, axis=1) ** 2)), (T234,)),
    "vmap_of_lax_reshape_dimensions": (lambda jnp: _vmap(jnp)(
        lambda x: importlib.import_module(jnp.__name__.split(".")[0]).lax.reshape(
            x, (4, 2), (1, 0)), in_axes=1), (T234,)),
    # JVP rules in JAX's op order, under grad (transposed), jvp and vmap of grad: cos's
    # neg after the mul, square in tan/atan/asinh/atan2, tanh's (t + t ans)(1 - ans),
    # log/log1p's div of the tangent, cbrt's integer_pow, atanh's reciprocal, exp2's
    # `log 2.0`, max/min's select/div tie rule (abs's real rule stays Ember's: see the end)
    **{f"grad_of_{n}": ((lambda name: lambda jnp: _grad(jnp)(
        lambda x: jnp.sum(getattr(jnp, name)(x))))(n), (a,)) for n, a in (
        ("cos", X7), ("tan", X7), ("tanh", X7), ("log", S5), ("log1p", S5), ("cbrt", X7),
        ("arctan", X7), ("arcsinh", X7), ("arctanh", X7 / 4), ("exp2", X7), ("log2", S5),
        ("log10", S5), ("sin", X7), ("exp", X7))},
    **{f"grad_of_{n}_both": ((lambda name: lambda jnp: _grad(jnp)(
        lambda x, y: jnp.sum(getattr(jnp, name)(x, y)), (0, 1)))(n), (X7, R7))
        for n in ("arctan2", "maximum", "minimum")},
    "grad_of_relu": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(jnp.maximum(x, 0.0))), (U7,)),
    "grad_of_abs_complex": (lambda jnp: _grad(jnp)(lambda z: jnp.sum(jnp.abs(z))),
                            ((X7 + 1j * R7).astype(np.complex64),)),
    "grad_of_real_imag": (lambda jnp: _grad(jnp)(lambda z: jnp.sum(jnp.real(z) * jnp.imag(z))),
                          ((X7 + 1j * R7).astype(np.complex64),)),
    "grad_of_grad_sin": (lambda jnp: _grad(jnp)(_grad(jnp)(jnp.sin)), (np.float32(0.7),)),
    "grad_of_grad_cos": (lambda jnp: _grad(jnp)(_grad(jnp)(jnp.cos)), (np.float32(0.7),)),
    "grad_of_grad_tanh": (lambda jnp: _grad(jnp)(_grad(jnp)(jnp.tanh)), (np.float32(0.7),)),
    "grad_of_erf": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(importlib.import_module(
        jnp.__name__.split(".")[0]).lax.erf(x))), (X7,)),
    "grad_of_erf_inv": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(importlib.import_module(
        jnp.__name__.split(".")[0]).lax.erf_inv(x))), (X7 / 4,)),
    **{f"jvp_of_{n}": ((lambda name: lambda jnp: lambda x, t: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(getattr(jnp, name), (x,), (t,)))(n), (X7 / 4, R7))
        for n in ("cos", "tan", "tanh", "log1p", "cbrt", "arctanh", "exp2")},
    "jvp_of_maximum": (lambda jnp: lambda x, y: importlib.import_module(
        jnp.__name__.split(".")[0]).jvp(jnp.maximum, (x, y), (y, x)), (X7, R7)),
    **{f"vmap_of_grad_of_{n}": ((lambda name: lambda jnp: _vmap(jnp)(_grad(jnp)(
        getattr(jnp, name))))(n), (X7 / 4,)) for n in ("tanh", "log", "arctan")},
    # pow's exponent term (log of x with 0 read as 1, a literal at rank 0); sum of a
    # rank-0 value transposes to the cotangent itself (no broadcast_in_dim)
    "grad_of_power_exponent": (lambda jnp: _grad(jnp)(
        lambda x, y: jnp.sum(jnp.power(x, y)), 1), (np.float32(0.7), np.float32(0.3))),
    "grad_of_power_exponent_vec": (lambda jnp: _grad(jnp)(
        lambda x, y: jnp.sum(jnp.power(x, y)), 1), (S5, X7[:5])),
    "grad_of_sum_of_scalar": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(jnp.sin(x))),
                              (np.float32(0.7),)),
    # jacfwd/jacrev/hessian as JAX builds them: the basis staged (iota, eq, convert, split
    # per leaf, convert), vmap of jvp / of vjp's pullback, the result split per leaf;
    # squeeze transposes to broadcast_in_dim, slice's pad widths are NumPy integers
    **{f"{k}_of_sin_times_x0": ((lambda name: lambda jnp: getattr(importlib.import_module(
        jnp.__name__.split(".")[0]), name)(lambda v: jnp.sin(v) * v[0]))(k), (X7,))
        for k in ("jacfwd", "jacrev")},
    "hessian_of_sum": (lambda jnp: importlib.import_module(jnp.__name__.split(".")[0]).hessian(
        lambda v: jnp.sum(jnp.sin(v) * v[0])), (X7,)),
    "hessian_of_matrix": (lambda jnp: importlib.import_module(
        jnp.__name__.split(".")[0]).hessian(lambda a: jnp.sum(jnp.sin(a) ** 3)), (M34 / 10,)),
    **{f"{k}_of_strided_slice": ((lambda name: lambda jnp: getattr(importlib.import_module(
        jnp.__name__.split(".")[0]), name)(lambda v: jnp.tanh(v)[::2, 1:]))(k), (M34 / 10,))
        for k in ("jacfwd", "jacrev")},
    **{f"{k}_of_pytree": ((lambda name: lambda jnp: getattr(importlib.import_module(
        jnp.__name__.split(".")[0]), name)(lambda d: {"p": d["a"] * d["b"][0, 0],
                                                      "q": jnp.sum(d["a"])}))(k),
        ({"a": X7, "b": M34},)) for k in ("jacfwd", "jacrev")},
    "jacfwd_two_argnums": (lambda jnp: importlib.import_module(
        jnp.__name__.split(".")[0]).jacfwd(lambda a, b: (a * b, a), (0, 1)),
        (X7, np.float32(2))),
    "jacrev_scalar": (lambda jnp: importlib.import_module(jnp.__name__.split(".")[0]).jacrev(
        lambda a: a * 2), (np.float32(3),)),
    # clamp's tangent as a select against zeros; reduce_max/min's mask against the result
    # reshaped (size-1 axes); reduce_sum's transpose keeps its dims as NumPy integers
    "grad_of_clamp": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(importlib.import_module(
        jnp.__name__.split(".")[0]).lax.clamp(-0.5, x, 0.75))), (X7,)),
    "grad_of_clamp_bounds": (lambda jnp: _grad(jnp)(lambda lo, x, hi: jnp.sum(
        importlib.import_module(jnp.__name__.split(".")[0]).lax.clamp(lo, x, hi)), (0, 1, 2)),
        (X7 - 0.5, X7[::-1].copy(), X7 + 0.5)),
    "grad_of_max_axis1_sum": (lambda jnp: _grad(jnp)(lambda a: jnp.sum(jnp.max(a, axis=1))),
                          (np.array([[1, 3, 3, 0], [2, 2, -1, np.nan], [5, 4, 3, 2]],
                                    np.float32),)),
    "grad_of_min_axis0_keepdims": (lambda jnp: _grad(jnp)(
        lambda a: jnp.sum(jnp.min(a, axis=0, keepdims=True))), (M34,)),
    "grad_of_partial_sum": (lambda jnp: _grad(jnp)(lambda a: jnp.sum(jnp.sum(a, axis=1) ** 2)),
                            (M34,)),
    # dot_general's transpose keeps the forward's preferred_element_type; the cotangent
    # of a matmul's lhs is JAX's dot(ct, rhs) (its rhs's differs: see the list below)
    "grad_of_matmul_lhs": (lambda jnp: _grad(jnp)(lambda a, w: jnp.sum(jnp.tanh(a @ w))),
                           (M34, M34.T / 10)),
    # lax.pow with an integer exponent: JAX's select(y == 0, 0, replace_zero(y) *
    # x^(y - 1)), a Python int exponent folded into a literal
    "grad_of_lax_pow_int_literal": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(
        importlib.import_module(jnp.__name__.split(".")[0]).lax.pow(x, 3))), (X7,)),
    "grad_of_lax_pow_int_array": (lambda jnp: _grad(jnp)(lambda x, n: jnp.sum(
        importlib.import_module(jnp.__name__.split(".")[0]).lax.pow(x, n))), (X7, I7)),
    # (jvp-rule cases)
    # (cases from the nn-wrapper / indexing work go below this line)
    # jax.nn: each activation JAX jits prints as jit[name=<function>] (relu, relu6 and
    # log1mexp inside their custom_jvp_call); sigmoid (jit inline), gelu and softmax are
    # not jitted in JAX 0.10.2, log_softmax/standardize/glu/logmeanexp/_one_hot are, with
    # their axes static
    "nn_identity": (lambda jnp: lambda x: _nn(jnp).identity(x), (X7,)),
    "nn_relu": (lambda jnp: lambda x: _nn(jnp).relu(x), (X7,)),
    "nn_relu_2d": (lambda jnp: lambda x: _nn(jnp).relu(x), (M34 - 5,)),
    "nn_relu6": (lambda jnp: lambda x: _nn(jnp).relu6(x), (M34 - 5,)),
    "nn_squareplus": (lambda jnp: lambda x: _nn(jnp).squareplus(x, 3.0), (X7,)),
    "nn_softplus": (lambda jnp: lambda x: _nn(jnp).softplus(x), (M34 - 5,)),
    "nn_sparse_plus": (lambda jnp: lambda x: _nn(jnp).sparse_plus(x), (X7,)),
    "nn_soft_sign": (lambda jnp: lambda x: _nn(jnp).soft_sign(x), (X7,)),
    "nn_sigmoid": (lambda jnp: lambda x: _nn(jnp).sigmoid(x), (M34 - 5,)),
    "nn_sparse_sigmoid": (lambda jnp: lambda x: _nn(jnp).sparse_sigmoid(x), (X7,)),
    "nn_silu": (lambda jnp: lambda x: _nn(jnp).silu(x), (M34 - 5,)),
    "nn_swish": (lambda jnp: lambda x: _nn(jnp).swish(x), (X7,)),
    "nn_mish": (lambda jnp: lambda x: _nn(jnp).mish(x), (X7,)),
    "nn_log_sigmoid": (lambda jnp: lambda x: _nn(jnp).log_sigmoid(x), (M34 - 5,)),
    "nn_elu": (lambda jnp: lambda x: _nn(jnp).elu(x), (X7,)),
    "nn_elu_alpha": (lambda jnp: lambda x: _nn(jnp).elu(x, alpha=0.5), (M34 - 5,)),
    "nn_leaky_relu": (lambda jnp: lambda x: _nn(jnp).leaky_relu(x, 0.2), (M34 - 5,)),
    "nn_hard_tanh": (lambda jnp: lambda x: _nn(jnp).hard_tanh(x), (X7,)),
    "nn_celu": (lambda jnp: lambda x: _nn(jnp).celu(x, 2.0), (X7,)),
    "nn_selu": (lambda jnp: lambda x: _nn(jnp).selu(x), (M34 - 5,)),
    "nn_gelu": (lambda jnp: lambda x: _nn(jnp).gelu(x), (M34 - 5,)),
    "nn_gelu_exact": (lambda jnp: lambda x: _nn(jnp).gelu(x, approximate=False), (X7,)),
    "nn_hard_sigmoid": (lambda jnp: lambda x: _nn(jnp).hard_sigmoid(x), (X7,)),
    "nn_hard_silu": (lambda jnp: lambda x: _nn(jnp).hard_silu(x), (M34 - 5,)),
    "nn_hard_swish": (lambda jnp: lambda x: _nn(jnp).hard_swish(x), (X7,)),
    "nn_log1mexp": (lambda jnp: lambda x: _nn(jnp).log1mexp(x), (X7 + 3,)),
    "nn_tanh": (lambda jnp: lambda x: _nn(jnp).tanh(x), (X7,)),
    "nn_softmax": (lambda jnp: lambda x: _nn(jnp).softmax(x), (M34,)),
    "nn_softmax_axis0": (lambda jnp: lambda x: _nn(jnp).softmax(x, axis=0), (M34,)),
    "nn_softmax_where": (lambda jnp: lambda x, w: _nn(jnp).softmax(x, where=w), (M34, W34)),
    "nn_log_softmax": (lambda jnp: lambda x: _nn(jnp).log_softmax(x), (M34,)),
    "nn_log_softmax_axes": (lambda jnp: lambda x: _nn(jnp).log_softmax(x, axis=(0, 2)),
                            (T234,)),
    "nn_log_softmax_where": (lambda jnp: lambda x, w: _nn(jnp).log_softmax(x, 0, where=w),
                             (M34, W34)),
    "nn_logsumexp": (lambda jnp: lambda x: _nn(jnp).logsumexp(x, axis=1), (M34,)),
    "nn_logmeanexp": (lambda jnp: lambda x: _nn(jnp).logmeanexp(x, axis=1), (M34,)),
    "nn_logmeanexp_all": (lambda jnp: lambda x: _nn(jnp).logmeanexp(x, keepdims=True),
                          (T234,)),
    "nn_logmeanexp_where": (lambda jnp: lambda x, w: _nn(jnp).logmeanexp(x, 1, where=w),
                            (M34, W34)),
    "nn_standardize": (lambda jnp: lambda x: _nn(jnp).standardize(x), (M34,)),
    "nn_standardize_stable": (lambda jnp: lambda x: _nn(jnp).standardize(
        x, axis=0, algorithm="stable"), (M34,)),
    "nn_standardize_where": (lambda jnp: lambda x, w: _nn(jnp).standardize(x, where=w),
                             (M34, W34)),
    "nn_one_hot": (lambda jnp: lambda i: _nn(jnp).one_hot(i, 4), (I7,)),
    "nn_one_hot_axis0": (lambda jnp: lambda i: _nn(jnp).one_hot(i, 3, dtype=jnp.int8,
                                                                axis=0),
                         (np.array([[0, 2], [1, 5]], np.int32),)),
    "nn_glu": (lambda jnp: lambda x: _nn(jnp).glu(x), (M34,)),
    "nn_glu_axis0": (lambda jnp: lambda x: _nn(jnp).glu(x, axis=0), (T234,)),
    # gradients through a custom_jvp (relu, relu6, log1mexp) or jit(inline) (sigmoid)
    "nn_grad_relu": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(_nn(jnp).relu(x))), (X7,)),
    "nn_grad_relu6": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(_nn(jnp).relu6(x * 4))),
                      (X7,)),
    "nn_grad_sigmoid": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(_nn(jnp).sigmoid(x))),
                        (M34 - 5,)),
    "nn_grad_log1mexp": (lambda jnp: _grad(jnp)(lambda x: jnp.sum(_nn(jnp).log1mexp(x))),
                         (X7 + 3,)),
    # take_along_axis in every mode is jit[take_along_axis] of the batched gather; negative
    # indices are wrapped first except under promise_in_bounds (JAX raises for "wrap")
    "take_along_axis_clip": (lambda jnp: lambda x, i: jnp.take_along_axis(x, i, axis=1,
                                                                          mode="clip"),
                             (M34, np.array([[0, -1], [5, 2], [-9, 3]], np.int32))),
    "take_along_axis_promise": (lambda jnp: lambda x, i: jnp.take_along_axis(
        x, i, axis=0, mode="promise_in_bounds"), (M34, np.array([[2, 0, 1, 1]], np.int32))),
    "take_along_axis_clip_flat": (lambda jnp: lambda x, i: jnp.take_along_axis(
        x, i, axis=None, mode="clip"), (M34, np.array([0, 11, 13, -1], np.int32))),
    # constant index arrays: JAX stages the negative-index fix-up (lt/add/select_n on a list,
    # add/select_n on a NumPy bool constant for a NumPy array or a mask), which Ember's
    # constant folding removes; several index arrays (and integers) broadcast to their
    # common shape first
    "index_list": (lambda jnp: lambda x: x[:, [0, 2]], (M34,)),
    "index_numpy": (lambda jnp: lambda x: x[:, np.array([0, -1])], (M34,)),
    "index_numpy_int8": (lambda jnp: lambda x: x[np.array([0, -1], np.int8)], (M34,)),
    "index_numpy_uint8": (lambda jnp: lambda x: x[np.array([2, 0], np.uint8)], (M34,)),
    "index_two_lists": (lambda jnp: lambda x: x[[0, 2], [1, 3]], (M34,)),
    "index_mask": (lambda jnp: lambda x: x[:, np.array([True, False, True, True])], (M34,)),
    "index_int_and_list": (lambda jnp: lambda x: x[1, [0, 2]], (M34,)),
    "index_lists_3d": (lambda jnp: lambda x: x[[0, 1], :, [[2], [0]]], (T234,)),
    "index_ix": (lambda jnp: lambda x, i, j: x[jnp.ix_(i, j)],
                 (M34, np.array([0, 2], np.int32), np.array([1, 3, 0], np.int32))),
    "index_ix_static": (lambda jnp: lambda x: x[np.ix_([0, 1], [2, 0, 1])], (M34,)),
    "index_traced_and_int": (lambda jnp: lambda x, i: x[i, np.int32(1)],
                             (M34, np.array([[0], [2]], np.int32))),
    "set_list": (lambda jnp: lambda x: jnp.asarray(x).at[:, [0, 2]].set(1.0), (M34,)),
    "add_numpy": (lambda jnp: lambda x: jnp.asarray(x).at[np.array([0, -1])].add(1.0),
                  (M34,)),
    # mean with a float16 dtype converts first and sums in float16 (NumPy's order too)
    "mean_float16": (lambda jnp: lambda x: jnp.mean(x, dtype=jnp.float16), (M34,)),
    "mean_float16_axis": (lambda jnp: lambda x: jnp.mean(x, axis=0, dtype=jnp.float16),
                          (M34,)),
    # partition/argpartition: jit[partition] of top_k of the negated values (floats), the
    # rest through top_k of the values (argpartition: of a proxy written by a vmapped .at)
    "partition": (lambda jnp: lambda x: jnp.partition(x, 3), (R7,)),
    "partition_axis0": (lambda jnp: lambda x: jnp.partition(x, 1, axis=0), (T234,)),
    "argpartition": (lambda jnp: lambda x: jnp.argpartition(x, 2), (U7,)),
    "argpartition_2d": (lambda jnp: lambda x: jnp.argpartition(x, 1, axis=0), (M34,)),
    "argpartition_3d": (lambda jnp: lambda x: jnp.argpartition(x, -1, axis=1), (T234,)),
    # (cases from the linalg work go below this line)
    # jnp.linalg: each function in its own jit as JAX's; solve is stop_gradient, lu and a
    # custom_linear_solve whose solvers are jit[_lu_solve] (matrix right-hand sides
    # vmapped over their columns: the triangular solves fold the batch into columns)
    "linalg_solve": (lambda jnp: lambda a, b: jnp.linalg.solve(a, b), (SPD3, X3)),
    "linalg_solve_matrix": (lambda jnp: lambda a, b: jnp.linalg.solve(a, b), (SPD3, M32)),
    "linalg_solve_batched": (lambda jnp: lambda a, b: jnp.linalg.solve(a, b),
                             (SPD233, np.stack([M32, M32 * 2]))),
    "linalg_solve_int": (lambda jnp: lambda a, b: jnp.linalg.solve(a, b),
                         (SPD3.astype(np.int32), np.array([1, 2, 3], np.int32))),
    "linalg_solve_complex": (lambda jnp: lambda a, b: jnp.linalg.solve(a, b), (HER3, X3)),
    "vmap_linalg_solve": (lambda jnp: lambda a, b: _vmap(jnp)(jnp.linalg.solve,
                                                            in_axes=(None, 0))(a, b),
                          (SPD3, M34.T.copy())),
    "linalg_inv": (lambda jnp: lambda a: jnp.linalg.inv(a), (SPD3,)),
    "linalg_inv_batched": (lambda jnp: lambda a: jnp.linalg.inv(a), (SPD233,)),
    "linalg_tensorinv": (lambda jnp: lambda a: jnp.linalg.tensorinv(a, ind=1), (T623,)),
    "linalg_tensorsolve": (lambda jnp: lambda a, b: jnp.linalg.tensorsolve(a, b),
                           (T623, np.arange(6, dtype=np.float32))),
    "linalg_matrix_power_negative": (lambda jnp: lambda a: jnp.linalg.matrix_power(a, -2),
                                     (SPD3,)),
    # det of 2x2 and 3x3 matrices: the explicit products (rule of Sarrus)
    "linalg_det_2x2": (lambda jnp: lambda a: jnp.linalg.det(a), (SPD3[:2, :2].copy(),)),
    "linalg_det_3x3": (lambda jnp: lambda a: jnp.linalg.det(a), (SPD3,)),
    "linalg_det_batched": (lambda jnp: lambda a: jnp.linalg.det(a), (SPD233,)),
    # cholesky: symmetrize (transpose, add, div by 2), the primitive, a lower-triangle mask
    "linalg_cholesky": (lambda jnp: lambda a: jnp.linalg.cholesky(a), (SPD3,)),
    "linalg_cholesky_upper": (lambda jnp: lambda a: jnp.linalg.cholesky(a, upper=True),
                              (SPD3,)),
    "linalg_cholesky_complex": (lambda jnp: lambda a: jnp.linalg.cholesky(a), (HER3,)),
    "linalg_cholesky_batched": (lambda jnp: lambda a: jnp.linalg.cholesky(a), (SPD233,)),
    # qr, eigh, svd: JAX's primitive params (pivoting, use_magma; algorithm,
    # subset_by_index)
    "linalg_qr": (lambda jnp: lambda a: jnp.linalg.qr(a), (M43,)),
    "linalg_qr_complete": (lambda jnp: lambda a: jnp.linalg.qr(a, mode="complete"), (M43,)),
    "linalg_qr_r": (lambda jnp: lambda a: jnp.linalg.qr(a, mode="r"), (M34,)),
    "linalg_eigh": (lambda jnp: lambda a: jnp.linalg.eigh(a), (SPD3,)),
    "linalg_eigh_upper_unsymmetrized": (lambda jnp: lambda a: jnp.linalg.eigh(
        a, UPLO="U", symmetrize_input=False), (SPD3,)),
    "linalg_eigh_complex_batched": (lambda jnp: lambda a: jnp.linalg.eigh(a),
                                    (np.stack([HER3, HER3.conj()]),)),
    "linalg_eigvalsh": (lambda jnp: lambda a: jnp.linalg.eigvalsh(a), (SPD3,)),
    "linalg_svd": (lambda jnp: lambda a: jnp.linalg.svd(a), (M43,)),
    "linalg_svd_reduced_batched": (lambda jnp: lambda a: jnp.linalg.svd(
        a, full_matrices=False), (SPD233,)),
    "linalg_svd_values": (lambda jnp: lambda a: jnp.linalg.svd(a, compute_uv=False), (M43,)),
    "linalg_svdvals": (lambda jnp: lambda a: jnp.linalg.svdvals(a), (M34,)),
    # built on the SVD: pinv (custom_jvp of jit[_pinv], cutoff 10 max(m, n) eps), lstsq,
    # matrix_rank, cond, norm(ord=2 | 'nuc')
    "linalg_pinv": (lambda jnp: lambda a: jnp.linalg.pinv(a), (M43,)),
    "linalg_pinv_complex": (lambda jnp: lambda a: jnp.linalg.pinv(a), (HER3,)),
    "linalg_pinv_rtol_batched": (lambda jnp: lambda a: jnp.linalg.pinv(a, rtol=0.1),
                                 (SPD233,)),
    "linalg_lstsq": (lambda jnp: lambda a, b: jnp.linalg.lstsq(a, b),
                     (M43, np.arange(4, dtype=np.float32))),
    "linalg_lstsq_matrix": (lambda jnp: lambda a, b: jnp.linalg.lstsq(a, b), (M43, M43[:, :2])),
    "linalg_matrix_rank": (lambda jnp: lambda a: jnp.linalg.matrix_rank(a), (M43,)),
    "linalg_matrix_rank_batched": (lambda jnp: lambda a: jnp.linalg.matrix_rank(a),
                                   (SPD233,)),
    "linalg_cond": (lambda jnp: lambda a: jnp.linalg.cond(a), (SPD3,)),
    "linalg_cond_fro": (lambda jnp: lambda a: jnp.linalg.cond(a, "fro"), (SPD3,)),
    "linalg_cond_1": (lambda jnp: lambda a: jnp.linalg.cond(a, 1), (SPD3,)),
    "linalg_norm_2": (lambda jnp: lambda a: jnp.linalg.norm(a, 2), (SPD3,)),
    "linalg_norm_nuc_batched": (lambda jnp: lambda a: jnp.linalg.norm(a, "nuc", axis=(1, 2)),
                                (SPD233,)),
    "linalg_eig": (lambda jnp: lambda a: jnp.linalg.eig(a), (M34[:, :3].copy(),)),
    "linalg_eigvals": (lambda jnp: lambda a: jnp.linalg.eigvals(a), (M34[:, :3].copy(),)),
    # svd(hermitian=True): eigh, |eigenvalues| sorted descending with their vectors
    "linalg_svd_hermitian": (lambda jnp: lambda a: jnp.linalg.svd(a, hermitian=True),
                             (SPD3 - 4 * np.eye(3, dtype=np.float32),)),
    "linalg_svd_hermitian_values": (lambda jnp: lambda a: jnp.linalg.svd(
        a, hermitian=True, compute_uv=False), (SPD3,)),
    # take_along_axis converts (unsigned) indices to int32 before wrapping negatives
    "take_along_axis_uint8": (lambda jnp: lambda x, i: jnp.take_along_axis(x, i, axis=1),
                              (M34, np.array([[0, 3], [1, 1], [2, 0]], np.uint8))),
    # vmap over the last axis: the batch axis moves first (transpose's and select_n's
    # rules as JAX's), a batched custom_linear_solve
    "vmap_linalg_cholesky": (lambda jnp: lambda a: _vmap(jnp)(jnp.linalg.cholesky,
                                                             in_axes=2)(a), (SPD332,)),
    "vmap_linalg_eigh": (lambda jnp: lambda a: _vmap(jnp)(jnp.linalg.eigh, in_axes=2)(a),
                         (SPD332,)),
    "vmap_linalg_det": (lambda jnp: lambda a: _vmap(jnp)(jnp.linalg.det, in_axes=2)(a),
                        (SPD332,)),
    "vmap_linalg_inv": (lambda jnp: lambda a: _vmap(jnp)(jnp.linalg.inv, in_axes=2)(a),
                        (SPD332,)),
    "vmap_linalg_solve_matrices": (lambda jnp: lambda a, b: _vmap(jnp)(
        jnp.linalg.solve, in_axes=(2, 0))(a, b), (SPD332, M32.T.copy())),
    # lax.linalg.tridiagonal_solve carries perturb_singular; vmapped over b alone, the
    # batch joins b's columns (one solve)
    "lax_tridiagonal_solve_vmap_b": (lambda jnp: lambda dl, d, du, b: _vmap(jnp)(
        lambda b: importlib.import_module(jnp.__name__.split(".")[0] + ".lax").linalg
        .tridiagonal_solve(dl, d, du, b), in_axes=2)(b),
        (X3, X3 + 5, X3 * 2, SPD332)),
    # diagflat: a scatter into a flat zero array; insert: the input's and the values'
    # positions by argsort, a scatter-add and nonzero; interp: one jit[_interp]
    "diagflat": (lambda jnp: lambda x: jnp.diagflat(x), (X3,)),
    "diagflat_offset_2d": (lambda jnp: lambda x: jnp.diagflat(x, 1), (M32,)),
    "diagflat_below": (lambda jnp: lambda x: jnp.diagflat(x, -2), (X3,)),
    "insert": (lambda jnp: lambda x: jnp.insert(x, 1, 5.0), (X3,)),
    "insert_indices_axis": (lambda jnp: lambda x: jnp.insert(
        x, np.array([0, 2], np.int32), 5.0, axis=1), (M32,)),
    "insert_scalar_rows": (lambda jnp: lambda x, v: jnp.insert(x, 1, v, axis=0),
                           (M34, M34[0].copy())),
    "interp": (lambda jnp: lambda x, xp, fp: jnp.interp(x, xp, fp),
               (np.linspace(0, 3, 5).astype(np.float32), X3, X3 * 2)),
    "interp_left_right": (lambda jnp: lambda x, xp, fp: jnp.interp(x, xp, fp, left=-1.0,
                                                                    right=9.0),
                          (np.linspace(0, 4, 5).astype(np.float32), X3, X3 * 2)),
    "interp_period": (lambda jnp: lambda x, xp, fp: jnp.interp(x, xp, fp, period=2.5),
                      (np.linspace(0, 4, 5).astype(np.float32), X3, X3 * 2)),
    "interp_extrapolate": (lambda jnp: lambda x, xp, fp: jnp.interp(x, xp, fp,
                                                                     right="extrapolate"),
                           (np.linspace(0, 4, 5).astype(np.float32), X3, X3 * 2)),
}

# Programs whose text still differs from JAX 0.10.2's, each for a reason (no case above;
# re-checked 2026-12-06 against the venv's JAX 0.10.2):
# - jnp.diagonal of a square 2-D non-bool matrix with offset 0 (so corrcoef too): JAX's
#   jit[diagonal] builds an eye mask (iota, iota, add, eq, convert_element_type), then
#   `platform_index[platforms=(('mosaic',), None)]` and `cond[branches=(masked sum, gather)
#   branches_platforms=(('mosaic',), None)]`; Ember prints only the gather, JAX's branch
#   for every platform but Mosaic. Ember has no platform_index primitive or per-platform
#   cond, and the Mosaic branch is wrong for it: sum(eye * x) costs n^2 products and gives
#   NaN where an off-diagonal entry is inf or NaN (0 * inf).
# - quantile/percentile(method="nearest"): JAX prints `le frac 0.5:f32[]` and a select (the
#   lower value at a half); Ember prints `round[rounding_method=1] pos`, `eq` with the
#   lower index and a select (half to even, NumPy's rule): quantile([1, 2, 3, 4, 5, 6], 0.3,
#   method="nearest") is 3.0 in NumPy and Ember, 2.0 in JAX.
# - setdiff1d(size=) of floats (without assume_unique): JAX finds unique's padding (copies
#   of the first value) by `eq` with the first value, so an all-NaN input counts its NaN
#   padding as values: setdiff1d([nan, nan], [1.0], size=2) is [nan, nan] in JAX, [nan] in
#   NumPy. Ember adds `ne a a`, `ne first first`, `and`, `or` (NaN equals the NaN first
#   value) and gives NumPy's [nan, 0.0]; integer inputs and assume_unique print as JAX's.
# - isin, and setdiff1d's membership test, past 2**22 pairs (method="auto"): JAX compares
#   every pair (its text, which smaller programs print alike); Ember sorts the test values
#   and binary-searches them (the same answers; setdiff1d of 1e5 values each: 148 ms
#   eagerly and 47 ms under jit, against 12.8 s and 2.0 s comparing all pairs).
# - jnp.histogram with an int `bins`: JAX finds each value's bin by jit[searchsorted] of
#   the equal-width edges (a binary search in a scan); Ember prints floor((v - e0) *
#   (n / span)) corrected at the edges as NumPy does (the same counts), 4x faster (1e7
#   values: 18 ms against 70 searched, NumPy 40; benchmarks/histogram.py). The edges
#   print as JAX's (histogram_bin_edges above).
# - jnp.any/jnp.all of complex values: JAX prints `real a`, `convert_element_type[new_dtype=
#   bool]`, `reduce_or` (reduce_and), reading the real part only, so any([1j]) and
#   all([1j]) are False there; Ember prints `ne a 0j` and the reduction, NumPy's values
#   (both True).
# - jnp.split with decreasing indices (split(x, [5, 2])): NumPy's pieces overlap, which
#   split[sizes=] cannot express (JAX raises); Ember stages one slice per piece there.
# - The gradient of a jax.nn function JAX jits (silu, softplus, elu, log_softmax, ...;
#   relu, relu6, sigmoid and log1mexp print alike, above): JAX's partial evaluation keeps
#   the jit, a known jit[name=silu] returning the primal and its residuals and a jit of the
#   transposed linear part; Ember's JVP and linearization inline a jitted call, so its
#   gradient prints the body's equations (the same values).
# - jax.nn.dot_product_attention: JAX vmaps its core over the query-head groups, so its
#   text carries that vmap's batching (the batch axis moved to the front around the
#   softmax's broadcast_in_dim); Ember writes the grouped einsums directly (the same
#   values). Not matched yet: Ember's vmap of broadcast_in_dim keeps the batch axis in
#   place where JAX's moves it to the front first.
# - jnp.partition/argpartition of integers (and bools, which JAX rejects): JAX negates
#   with `neg`, which overflows (partition([3, INT32_MIN, 5], 0) puts 3 first; an unsigned
#   maximum counts as the smallest); Ember reverses the order with bitwise `not` (exact),
#   so it prints `not` where JAX prints `neg` (floats print as JAX's, above).
# - jnp.einsum with a repeated index ("ii->"): JAX masks with an iota `eq` and sums the
#   select; Ember takes the diagonal by a gather (n values, not n^2) and sums it.
# - Gradients through div's denominator (so second derivatives of log, log1p, sqrt,
#   arctan, arctanh, log2, log10, ... too): JAX's JVP is -t * x * integer_pow(y, -2),
#   Ember's -t * ((x / y) / y): y**-2 overflows or underflows for |y| past 1.8e19 or
#   below 1e-19 in float32, where JAX's gives -0.0 or inf and Ember's the true value
#   (d(x/y)/dy at x = 1e30, y = 1e20 is -1e-10; JAX's is -0.0).
# - pow's derivative in x for a float exponent: JAX's y * x**(y - 1) is NaN at x = y = 0
#   (0 * inf); Ember selects 0 where y == 0 (x**0 is 1 everywhere), so it prints an `eq`
#   and a `select_n` more. Its exponent term prints as JAX's.
# - abs's gradient of a real x: JAX stages select_n(x >= 0, -t, t), 1 at both zeros and
#   -1 at NaN; Ember stages t * sign(x), 0 at the zeros (so i0 = i0e(x) * exp(|x|) and
#   other composites differentiate to i1(0) = 0 at 0, not 1) and NaN at NaN.
# - arcsin, arccos and arccosh gradients: JAX stages 1 - square(x) (square(x) - 1), Ember
#   (1 - x)(1 + x) ((x - 1)(x + 1)): JAX's loses the bits of square(x)'s rounding near
#   |x| = 1 (relative error 2.5e-5 at x = 0.9999 in float32, Ember's 2e-8).
# - logaddexp/logaddexp2 gradients: JAX's rule exp(x1 - out) with infinities replaced by
#   0 gives d/dx1 = e (not 0) at (1, inf), and (1, 1) (summing to 2, not 1) at (inf,
#   inf); Ember's weights are sigmoids of x1 - x2 (the function's limits there: (0, 1)
#   and (1/2, 1/2)), so its custom_jvp rule stages other ops.
# - The cotangent of dot_general's rhs where the product of the operand and the
#   cotangent is already in the operand's order (a matmul's weight: x.T @ ct): JAX stages
#   dot_general(ct, x) and a transpose; Ember stages dot_general(x, ct) (no transpose).
#   Ember's passes fold JAX's transpose in a plain gradient, but not under vmap: the
#   per-example MLP gradients would compile two transposes more
#   (tests/ops/test_batching_rules.py).
# - digamma's derivative: JAX stages `polygamma 1.0 x`; Ember evaluates trigamma in
#   float64 (relative error 1e-8 in float32 against 5e-7 for Ember's polygamma(1, x)).
# - triu_indices/tril_indices (and the _from forms): JAX stages nonzero of a triu (tril)
#   mask of ones (cumsum, a scatter-add, floor_divide and remainder), O(n m) work at run
#   time whatever k; Ember's are constants computed on the host (no equations), which
#   Ember's passes cannot fold JAX's into (the scatter stays).
# - jnp.linalg.slogdet, and det of matrices past 3x3: JAX takes LU's diagonal through
#   jnp.diagonal (the platform_index/cond text above), and det is sign * exp(logdet) there;
#   Ember's det multiplies LU's diagonal (no exp(log) rounding) in a custom_jvp whose
#   derivative, adj(a)^T, is finite at singular matrices. 2x2 and 3x3 det print as JAX's.
# - jnp.linalg.multi_dot: JAX stages it through einsum (opt_einsum's path and operand
#   order); Ember multiplies in the order of the classic chain dynamic program (the same
#   products, the operands of each dot_general possibly swapped).
# - jnp.linalg.lstsq with a given rcond: JAX's jnp.array(rcond) stages a `copy` of the
#   traced rcond; Ember's jnp.array of a tracer stages none (the default rcond prints alike).
# - Under grad, jnp functions whose jit JAX keeps and Ember keeps too, but whose texts
#   differ inside: logsumexp (abs's JVP: JAX selects on x >= 0 and adds the negated
#   branch, so d|x| is t at x = +-0 and -t at NaN; Ember's t * sign(x) gives +-0 and NaN,
#   the better value at NaN) and nn.softmax (div's JVP, above); jnp.pad (JAX's linear
#   jit takes the instantiated zero tangent of the padding value as a residual, 0.0
#   returned by the known jit and passed to the transposed jit; Ember's rank-0 zero is a
#   literal in the linear jit).
