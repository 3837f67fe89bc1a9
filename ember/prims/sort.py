"""sort (multi-operand, lexicographic keys) and top_k.

sort: operands of one shape (dtypes may differ); params `dimension`, `is_stable`,
`num_keys`. All operands are permuted by the order of the first `num_keys` operands,
compared lexicographically along `dimension`; multiple_results=True, one output per operand,
each with its operand's aval. Printed as `sort[dimension=0 is_stable=True num_keys=1]`.

The order is JAX's total order for sorting (its comparator canonicalizes before comparing):
-0.0 and +0.0 compare equal (a stable sort keeps their input order), every NaN compares
equal to every other NaN and greater than +inf, so NaNs go to the end. We always sort
stably: a stable order is also a valid answer when is_stable=False, and it makes eager and
jit agree exactly.

top_k: params `k` and `axis`; outputs (values, int32 indices) with the axis cut to k: the k
largest entries in descending order, the lower index first among equal entries. Floats are
ordered as JAX's top_k orders them, by IEEE-754's totalOrder on their bits, not canonicalized
as sort does: -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (so partition, which takes
top_k of negated values, gets every element back exactly once).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, batching, dtypes
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.prims import _ad, _batching
from ember.prims import _lower as L
from ember.prims import _rules as R

sort_p = Primitive("sort", multiple_results=True)
sort_p.hlo_opcode = "sort"  # type: ignore[attr-defined]


def sort_key(x: np.ndarray) -> np.ndarray:
    """x canonicalized for the total order: -0.0 -> +0.0, any NaN -> +NaN.

    NumPy's sorts already place NaN last and treat -0.0 == +0.0; canonicalizing makes every
    NaN payload and sign compare equal, so multi-key sorts tie-break them on later keys.
    """
    if dtypes.kind(x.dtype) != "f":
        return x
    return np.where(np.isnan(x), np.array(np.nan, x.dtype), x + np.array(0, x.dtype))


def sort_permutation(keys: list[np.ndarray], axis: int) -> np.ndarray:
    """The stable lexicographic sorting permutation of `keys` (first key most significant)
    along `axis`, as indices shaped like the keys."""
    moved = [np.moveaxis(sort_key(k), axis, -1) for k in keys]
    if len(moved) == 1:
        perm = np.argsort(moved[0], axis=-1, kind="stable")
    else:
        # np.lexsort sorts by the last key first: pass the keys reversed. It is stable.
        perm = np.lexsort(moved[::-1], axis=-1)
    return np.moveaxis(perm, -1, axis)


@sort_p.def_abstract_eval
def _sort_abstract(*operands: ShapedArray, dimension: int, is_stable: bool,
                   num_keys: int) -> list[ShapedArray]:
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands):
        raise TypeError("sort arguments must all have the same shape, got "
                        + ", ".join(str(o.shape) for o in operands))
    if not 0 <= dimension < max(len(shape), 1) or not shape:
        raise ValueError(f"sort dimension {dimension} is out of bounds for operands of shape "
                         f"{shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort num_keys must be in [1, {len(operands)}], got {num_keys}")
    for o in operands:
        R.check_dtype_kinds("sort", o, R.ANY)
    return list(operands)


@sort_p.def_impl
def _sort_impl(*operands: np.ndarray, dimension: int, is_stable: bool,
               num_keys: int) -> list[np.ndarray]:
    perm = sort_permutation(list(operands[:num_keys]), dimension)
    return [np.take_along_axis(o, perm, axis=dimension) for o in operands]


def _canonical(b: Any, x: Any) -> Any:
    """-0.0 -> +0.0 (x + 0.0), NaNs left as NaN: the key the comparator orders."""
    zero = b.constant(np.zeros((), x.shape.dtype))
    if x.shape.dimensions:  # comparators are scalar: a rank-0 broadcast would only keep
        zero = b.broadcast(zero, x.shape.dimensions, ())  # the evaluator off its fast path
    return b.add(x, zero) if dtypes.kind(x.shape.dtype) == "f" else x


def _less(b: Any, x: Any, y: Any, descending: bool = False) -> Any:
    """Total order on canonical keys: ascending puts NaN last; descending puts NaN first."""
    lt = b.compare(x, y, "GT" if descending else "LT")
    if dtypes.kind(x.shape.dtype) != "f":
        return lt
    x_nan, y_nan = b.compare(x, x, "NE"), b.compare(y, y, "NE")
    nan_wins = b.and_(x_nan, b.not_(y_nan)) if descending else b.and_(y_nan, b.not_(x_nan))
    return b.or_(lt, nan_wins)


def _equal(b: Any, x: Any, y: Any) -> Any:
    eq = b.compare(x, y, "EQ")
    if dtypes.kind(x.shape.dtype) != "f":
        return eq
    return b.or_(eq, b.and_(b.compare(x, x, "NE"), b.compare(y, y, "NE")))


def comparator(element_types: list[str], num_keys: int, descending: bool = False) -> Any:
    """A sort comparator ordering lexicographically by the first num_keys operands."""
    from ember.hlo.builder import Builder
    from ember.hlo.shape import Shape
    sb = Builder("descending" if descending else "ascending")
    lhs, rhs = [], []
    for i, t in enumerate(element_types):
        lhs.append(sb.parameter(Shape(t, ()), f"lhs{i}"))
        rhs.append(sb.parameter(Shape(t, ()), f"rhs{i}"))
    keys = [(_canonical(sb, lhs[i]), _canonical(sb, rhs[i])) for i in range(num_keys)]
    # lt(k0) or (eq(k0) and (lt(k1) or (eq(k1) and ...))), built from the last key outward.
    x, y = keys[-1]
    result = _less(sb, x, y, descending)
    for x, y in reversed(keys[:-1]):
        result = sb.or_(_less(sb, x, y, descending), sb.and_(_equal(sb, x, y), result))
    return sb.build_computation(result)


@sort_p.def_lowering
def _sort_lowering(ctx: Any, *operands: Any, dimension: int, is_stable: bool,
                   num_keys: int) -> list[Any]:
    comp = comparator([L.et(a.dtype) for a in ctx.avals_in], num_keys)
    out = ctx.b.sort(list(operands), dimension, comp, is_stable=True)
    if len(operands) == 1:
        return [out]
    return [ctx.b.get_tuple_element(out, i) for i in range(len(operands))]


top_k_p = Primitive("top_k", multiple_results=True)
top_k_p.hlo_opcode = "topk"  # type: ignore[attr-defined]


@top_k_p.def_abstract_eval
def _top_k_abstract(x: ShapedArray, *, k: int, axis: int) -> list[ShapedArray]:
    R.check_dtype_kinds("top_k", x, R.ANY)
    if not 0 <= axis < x.ndim:
        raise ValueError(f"top_k axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(f"top_k k must be in [0, {x.shape[axis]}] for an operand of shape "
                         f"{x.shape} along axis {axis}, got k={k}")
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type), ShapedArray(shape, np.int32, False)]


def _descending_key(x: np.ndarray) -> np.ndarray:
    """A key whose ascending stable order is x's descending totalOrder (+NaN first).

    Floats map to order-preserving signed integers (flip the magnitude bits of negatives:
    -0.0 below +0.0, -NaN below -inf) and then negate through bitwise not (~v = -v - 1,
    exact and order-reversing); integers are widened to int64 first so ~v cannot overflow;
    bool becomes 0/1.
    """
    if dtypes.kind(x.dtype) == "f":
        ity = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
        bits = x.view(ity)
        ordered = np.where(bits < 0, bits ^ np.iinfo(ity).max, bits)
        return ~ordered.astype(np.int64)
    if dtypes.kind(x.dtype) == "u" and x.dtype.itemsize == 8:
        return np.iinfo(np.uint64).max - x
    return ~x.astype(np.int64)


@top_k_p.def_impl
def _top_k_impl(x: np.ndarray, *, k: int, axis: int) -> list[np.ndarray]:
    perm = sort_permutation([_descending_key(x)], axis)
    idx = np.take(perm, np.arange(k), axis=axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]


_BITS = {"f16": ("s16", np.int16), "bf16": ("s16", np.int16), "f32": ("s32", np.int32),
         "f64": ("s64", np.int64)}


def _total_order_bits(b: Any, x: Any) -> Any:
    """A float's bits as a signed integer in totalOrder: negatives get their magnitude bits
    flipped (bits ^ MAX), so -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN."""
    ity, npty = _BITS[x.shape.element_type]
    bits = b.bitcast_convert(x, ity)
    negative = b.compare(bits, b.constant(np.zeros((), npty)), "LT")
    return b.select(negative, b.xor(bits, b.constant(np.array(np.iinfo(npty).max, npty))),
                    bits)


def _top_k_comparator(element_type: str) -> Any:
    """top_k's comparator on (value, index) pairs: descending totalOrder of the value (a
    stable sort keeps the lower index first among equal ones)."""
    from ember.hlo.builder import Builder
    from ember.hlo.shape import Shape
    sb = Builder("descending_total")
    # (parameters per operand, lhs then rhs, as sort calls its comparator)
    x, y, _, _ = (sb.parameter(Shape(t, ()), n) for t, n in (
        (element_type, "lhs0"), (element_type, "rhs0"), ("s32", "lhs1"), ("s32", "rhs1")))
    if element_type in _BITS:
        x, y = _total_order_bits(sb, x), _total_order_bits(sb, y)
    return sb.build_computation(sb.compare(x, y, "GT"))


@top_k_p.def_lowering
def _top_k_lowering(ctx: Any, x: Any, *, k: int, axis: int) -> list[Any]:
    """A stable descending sort of (x, iota) along axis (NaN first), then the first k."""
    from ember.hlo.shape import Shape
    aval = ctx.avals_in[0]
    idx = ctx.b.iota(Shape("s32", aval.shape), axis)
    comp = _top_k_comparator(L.et(aval.dtype))
    both = ctx.b.sort([x, idx], axis, comp, is_stable=True)
    limits = list(aval.shape)
    limits[axis] = k
    zeros = [0] * aval.ndim
    return [ctx.b.slice(ctx.b.get_tuple_element(both, i), zeros, limits) for i in range(2)]


# -- autodiff rules ------------------------------------------------------------------------------
#
# Sorting permutes: out_k = x_k[perm] along the dimension, with perm fixed by the keys (a
# piecewise-constant function of them). So t_out_k = t_k[perm]: the tangents follow their
# elements. perm comes from sorting an iota along with the operands (as one more, non-key
# operand), and the tangents are read with take-along-axis, a gather whose other dims are
# batching dims; the gather's own rules then give the transpose (a scatter-add) and the
# higher orders. top_k is the same with the k indices it returns.

def _take_along_axis(t: Any, idx: Any, axis: int) -> Any:
    """t[..., idx[..., j, ...], ...] along `axis` (idx has t's shape but for `axis`)."""
    from ember.prims.gather_scatter import (
        GatherDimensionNumbers,
        GatherScatterMode,
        gather_p,
    )
    shape = get_aval(idx).shape
    others = tuple(d for d in range(len(shape)) if d != axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                start_index_map=(axis,), operand_batching_dims=others,
                                start_indices_batching_dims=others)
    return gather_p.bind(t, _ad.reshape(idx, shape + (1,)), dimension_numbers=dn,
                         slice_sizes=(1,) * len(shape), indices_are_sorted=False,
                         unique_indices=False, mode=GatherScatterMode.PROMISE_IN_BOUNDS,
                         fill_value=None)


def _sort_jvp(primals: list, tangents: list, *, dimension: int, is_stable: bool,
              num_keys: int) -> tuple[list, list]:
    from ember.prims.shape_ops import iota_p
    shape = get_aval(primals[0]).shape
    iota = iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=dimension,
                       sharding=None)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                              num_keys=num_keys)
    t_outs = [t if isinstance(t, ad.Zero) else _take_along_axis(t, perm, dimension)
              for t in tangents]
    return outs, t_outs


def _top_k_jvp(primals: list, tangents: list, *, k: int, axis: int) -> tuple[list, list]:
    (x,), (t,) = primals, tangents
    values, idx = top_k_p.bind(x, k=k, axis=axis)
    t_values = (ad.Zero(get_aval(values)) if isinstance(t, ad.Zero)
                else _take_along_axis(t, idx, axis))
    return [values, idx], [t_values, ad.Zero(get_aval(idx))]


sort_p.def_jvp(_sort_jvp)
top_k_p.def_jvp(_top_k_jvp)


# -- batching rules ------------------------------------------------------------------------------
# Each example sorts along its own dimension: the operands share one batch axis (the first
# mapped operand's), and the sorted dimension shifts past it. top_k likewise (its `axis` is
# any dimension, so the batch axis may sit anywhere else, last included).

def _sort_batch(axis: AxisData, args: list, dims: list, *, dimension: int, is_stable: bool,
                num_keys: int) -> tuple[list, list]:
    b = next(d for d in dims if d is not None)
    shape = get_aval(args[dims.index(b)]).shape
    operands = []
    for x, d in zip(args, dims):
        if d is None:  # broadcast along the batch axis (Python-int dims, as JAX's rule)
            keep = tuple(i for i in range(len(shape)) if i != b)
            operands.append(_ad.broadcast_in_dim(x, shape, keep))
        else:
            operands.append(batching.moveaxis(x, d, b))
    outs = sort_p.bind(*operands, dimension=_batching.shift_axis(dimension, b),
                       is_stable=is_stable, num_keys=num_keys)
    return outs, [b] * len(outs)


def _top_k_batch(axis_data: AxisData, args: list, dims: list, *, k: int, axis: int
                 ) -> tuple[list, list]:
    (x,), (b,) = args, dims
    return top_k_p.bind(x, k=k, axis=_batching.shift_axis(axis, b)), [b, b]


sort_p.def_batch(_sort_batch)
top_k_p.def_batch(_top_k_batch)
