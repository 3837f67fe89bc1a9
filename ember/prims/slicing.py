"""Static and dynamic slicing primitives: slice, pad, concatenate, dynamic_slice,
dynamic_update_slice.

Input: operands (NumPy arrays in the rules, ShapedArrays in abstract eval) and params as
JAX 0.10.2 names and prints them:
    slice[limit_indices=(4,) start_indices=(1,) strides=None]
    pad[padding_config=((1, 2, 0),)]          (operand, padding_value)
    concatenate[dimension=0]                  (n operands of one dtype)
    dynamic_slice[slice_sizes=(1,)]           (operand, one scalar start index per dim)
    dynamic_update_slice                      (operand, update, one scalar index per dim)
Output: one array; each primitive also lowers to the HLO op of the same name (slice, pad,
concatenate, dynamic-slice, dynamic-update-slice). Invariants, as XLA: dynamic start
indices are clamped so the whole window stays in bounds, start = clip(i, 0, dim - size);
negative pad edges crop; the result is weakly typed only when every array operand is
(dynamic_update_slice: when the operand is), and indices never affect the weak type.
Under vmap, start indices that differ per example turn dynamic_slice into a gather and
dynamic_update_slice into a scatter (one window per example, CLIP mode: the same clamp).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, batching, dtypes
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.ir import Instruction
from ember.prims import _ad, _batching
from ember.prims import _rules as R
from ember.prims import gather_scatter as gs

# ---------------------------------------------------------------------------------------------
# slice: operand[start:limit:stride] per dimension, with static bounds.
# ---------------------------------------------------------------------------------------------

slice_p = Primitive("slice")


def _slice_shape(shape: tuple[int, ...], start: tuple[int, ...], limit: tuple[int, ...],
                 strides: tuple[int, ...] | None) -> tuple[int, ...]:
    ndim = len(shape)
    if len(start) != ndim:
        raise TypeError(f"slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got indices {start} for operand shape "
                        f"{shape}.")
    if len(limit) != ndim:
        raise TypeError(f"slice limit_indices must have the same length as start_indices, "
                        f"got start_indices {start} and limit_indices {limit}.")
    if any(s < 0 for s in start):
        raise TypeError(f"slice start_indices must be greater than or equal to zero, got "
                        f"start_indices {start}.")
    if any(lim > d for lim, d in zip(limit, shape)):
        raise TypeError(f"slice limit_indices must be less than or equal to operand shape, "
                        f"got limit_indices {limit} for operand shape {shape}.")
    if any(lim < s for s, lim in zip(start, limit)):
        raise TypeError(f"slice limit_indices must be greater than or equal to start_indices, "
                        f"got start_indices {start} and limit_indices {limit}.")
    if strides is None:
        return tuple(lim - s for s, lim in zip(start, limit))
    if len(strides) != ndim:
        raise TypeError(f"slice strides must have length equal to the number of dimensions "
                        f"of the operand, got strides {strides} for operand shape {shape}.")
    if any(st <= 0 for st in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    # ceil((limit - start) / stride) elements: start, start + stride, ... < limit.
    return tuple(-(-(lim - s) // st) for s, lim, st in zip(start, limit, strides))


@slice_p.def_abstract_eval
def _slice_abstract(x: ShapedArray, *, start_indices: tuple[int, ...],
                    limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                    ) -> ShapedArray:
    shape = _slice_shape(x.shape, start_indices, limit_indices, strides)
    return ShapedArray(shape, x.dtype, x.weak_type)


@slice_p.def_impl
def _slice_impl(x: np.ndarray, *, start_indices: tuple[int, ...],
                limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                ) -> np.ndarray:
    steps = strides or (1,) * x.ndim
    return x[tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, steps))]


# ---------------------------------------------------------------------------------------------
# pad: low/high edge padding (negative crops) and interior padding between elements.
# ---------------------------------------------------------------------------------------------

pad_p = Primitive("pad")


def _padded_size(d: int, lo: int, hi: int, interior: int) -> int:
    # d elements with `interior` fill values between neighbours, then the edges:
    # lo + d + (d - 1) * interior + hi (an empty dimension has no interior gaps).
    return lo + hi + d + max(d - 1, 0) * interior


@pad_p.def_abstract_eval
def _pad_abstract(x: ShapedArray, value: ShapedArray, *,
                  padding_config: tuple[tuple[int, int, int], ...]) -> ShapedArray:
    if x.dtype != value.dtype:
        raise TypeError(f"pad operand and padding_value must be same dtype: got "
                        f"{x.dtype.name} and {value.dtype.name}.")
    if value.shape != ():
        raise TypeError(f"pad padding_value must be a scalar, got shape {value.shape}.")
    if len(padding_config) != x.ndim:
        raise ValueError(f"length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape {x.shape}")
    if any(len(cfg) != 3 for cfg in padding_config):
        raise ValueError(f"each padding_config entry must be (low, high, interior), got "
                         f"{padding_config}")
    if any(i < 0 for _, _, i in padding_config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(int(_padded_size(d, *cfg)) for d, cfg in zip(x.shape, padding_config))
    if any(s < 0 for s in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {padding_config} and operand shape "
                         f"{x.shape}")
    return ShapedArray(shape, x.dtype, x.weak_type and value.weak_type)


@pad_p.def_impl
def _pad_impl(x: np.ndarray, value: np.ndarray, *,
              padding_config: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    shape = tuple(_padded_size(d, *cfg) for d, cfg in zip(x.shape, padding_config))
    out = np.full(shape, value, dtype=x.dtype)
    # Input element i of a dim lands at p(i) = lo + i * (interior + 1). Keep the i whose
    # p(i) is inside [0, n): i >= ceil(-lo / s) and i <= floor((n - 1 - lo) / s), s = interior+1.
    # Those form one contiguous range of i and one strided range of p, so a single strided
    # assignment places every surviving element.
    src, dst = [], []
    for d, (lo, _, interior), n in zip(x.shape, padding_config, shape):
        s = interior + 1
        first = max(0, -(lo // s) if lo < 0 else 0)
        last = min(d - 1, (n - 1 - lo) // s) if n > 0 else -1
        if last < first:
            return out
        src.append(slice(first, last + 1))
        dst.append(slice(lo + first * s, lo + last * s + 1, s))
    out[tuple(dst)] = x[tuple(src)]
    return out


# ---------------------------------------------------------------------------------------------
# concatenate: n operands joined along one dimension.
# ---------------------------------------------------------------------------------------------

concatenate_p = Primitive("concatenate")


@concatenate_p.def_abstract_eval
def _concatenate_abstract(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise TypeError("concatenate expects at least one operand, got 0.")
    R.check_same_dtypes("concatenate", *xs)
    shapes = [x.shape for x in xs]
    if len({len(s) for s in shapes}) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        + ", ".join(map(str, shapes)) + ".")
    ndim = len(shapes[0])
    if not 0 <= dimension < ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        "shapes " + ", ".join(map(str, shapes)) + ".")
    rest = {s[:dimension] + s[dimension + 1:] for s in shapes}
    if len(rest) != 1:
        raise TypeError(f"Cannot concatenate arrays with shapes that differ in dimensions other "
                        f"than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes " + ", ".join(map(str, shapes)) + ".")
    out = list(shapes[0])
    out[dimension] = sum(s[dimension] for s in shapes)
    return ShapedArray(tuple(out), xs[0].dtype, R.all_weak(*xs))


@concatenate_p.def_impl
def _concatenate_impl(*xs: np.ndarray, dimension: int) -> np.ndarray:
    return np.concatenate(xs, axis=dimension)


# ---------------------------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice: windows at data-dependent, clamped start indices.
# ---------------------------------------------------------------------------------------------

def _check_start_indices(name: str, operand: ShapedArray, indices: tuple[ShapedArray, ...]
                         ) -> None:
    if len(indices) != operand.ndim:
        raise TypeError(f"{name} requires one start index per operand dimension: got "
                        f"{len(indices)} start indices for operand shape {operand.shape}.")
    if any(i.shape != () for i in indices):
        raise TypeError(f"{name} start indices must be scalars, got shapes "
                        f"{tuple(i.shape for i in indices)}.")
    dts = {i.dtype for i in indices}
    if any(dtypes.kind(dt) not in "iu" for dt in dts) or len(dts) > 1:
        raise TypeError(f"index arguments to {name} must be integers of the same type, got: "
                        f"{tuple(i.dtype.name for i in indices)}")


def clamped_starts(starts: tuple[np.ndarray, ...], shape: tuple[int, ...],
                   sizes: tuple[int, ...]) -> list[int]:
    """XLA's rule: start_d = clip(i_d, 0, shape_d - size_d), so the window fits."""
    return [int(min(max(int(i), 0), d - z)) for i, d, z in zip(starts, shape, sizes)]


dynamic_slice_p = Primitive("dynamic_slice")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract(x: ShapedArray, *indices: ShapedArray,
                            slice_sizes: tuple[int, ...]) -> ShapedArray:
    _check_start_indices("dynamic_slice", x, indices)
    if len(slice_sizes) != x.ndim:
        raise TypeError(f"dynamic_slice slice_sizes must have the same length as the operand "
                        f"rank, got slice_sizes {slice_sizes} for operand shape {x.shape}.")
    if any(z < 0 for z in slice_sizes):
        raise TypeError(f"dynamic_slice slice_sizes must be greater than or equal to zero, "
                        f"got slice_sizes {slice_sizes}.")
    if any(z > d for z, d in zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice slice_sizes must be less than or equal to operand "
                        f"shape, got slice_sizes {slice_sizes} for operand shape {x.shape}.")
    return ShapedArray(tuple(slice_sizes), x.dtype, x.weak_type)


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(x: np.ndarray, *indices: np.ndarray, slice_sizes: tuple[int, ...]
                        ) -> np.ndarray:
    starts = clamped_starts(indices, x.shape, slice_sizes)
    return x[tuple(slice(s, s + z) for s, z in zip(starts, slice_sizes))]


dynamic_update_slice_p = Primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract(x: ShapedArray, update: ShapedArray, *indices: ShapedArray
                                   ) -> ShapedArray:
    if x.dtype != update.dtype:
        raise TypeError(f"dynamic_update_slice update dtype must match operand dtype, got "
                        f"update dtype {update.dtype.name} for operand dtype {x.dtype.name}.")
    if update.ndim != x.ndim:
        raise TypeError(f"dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {x.shape}.")
    if any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand "
                        f"shape, got update shape {update.shape} for operand shape {x.shape}.")
    _check_start_indices("dynamic_update_slice", x, indices)
    return x


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(x: np.ndarray, update: np.ndarray, *indices: np.ndarray
                               ) -> np.ndarray:
    out = np.array(x, copy=True)
    starts = clamped_starts(indices, x.shape, update.shape)
    out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return out


# ---------------------------------------------------------------------------------------------
# Lowering to HLO: each primitive is the XLA op of the same meaning (XLA's dynamic-slice and
# dynamic-update-slice clamp their starts exactly as the rules above do).
# ---------------------------------------------------------------------------------------------

@slice_p.def_lowering
def _slice_lowering(ctx: Any, x: Instruction, *, start_indices: tuple[int, ...],
                    limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                    ) -> Instruction:
    return ctx.b.slice(x, start_indices, limit_indices, strides)


@pad_p.def_lowering
def _pad_lowering(ctx: Any, x: Instruction, value: Instruction, *,
                  padding_config: tuple[tuple[int, int, int], ...]) -> Instruction:
    # Widths may be NumPy integers (jnp.pad keeps them, as JAX does); HLO holds ints.
    return ctx.b.pad(x, value, tuple(tuple(int(v) for v in c) for c in padding_config))


@concatenate_p.def_lowering
def _concatenate_lowering(ctx: Any, *xs: Instruction, dimension: int) -> Instruction:
    return ctx.b.concatenate(xs, dimension)


@dynamic_slice_p.def_lowering
def _dynamic_slice_lowering(ctx: Any, x: Instruction, *indices: Instruction,
                            slice_sizes: tuple[int, ...]) -> Instruction:
    return ctx.b.dynamic_slice(x, indices, slice_sizes)


@dynamic_update_slice_p.def_lowering
def _dynamic_update_slice_lowering(ctx: Any, x: Instruction, update: Instruction,
                                   *indices: Instruction) -> Instruction:
    return ctx.b.dynamic_update_slice(x, update, indices)


# ---------------------------------------------------------------------------------------------
# Autodiff rules. slice, pad and concatenate are linear in their array operands; the dynamic
# slices are linear in their array operands for fixed (integer, tangent-free) indices.
# ---------------------------------------------------------------------------------------------

def _slice_transpose(ct: Any, x: Any, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...], strides: tuple[int, ...] | None) -> list:
    # Scatter the cotangent back into zeros: pad it with `start` zeros below, stride-1 zeros
    # between elements, and the rest above (the last element taken sits at
    # start + (n - 1) * stride).
    # (The high edges, and the interior where some stride is not 1, are NumPy integers, as
    # JAX's rule computes them: its jaxpr prints `np.int64(3)` there, and so does ours.)
    shape = x.aval.shape
    out_shape = get_aval(ct).shape
    unit = strides is None or all(st == 1 for st in strides)
    steps = (1,) * len(shape) if strides is None else strides
    config = []
    for d, s, n, st in zip(shape, start_indices, out_shape, steps):
        end = s + (n - 1) * st + 1 if n else s
        config.append((s, np.int64(d - end), 0 if unit else np.int64(st - 1)))
    return [pad_p.bind(ct, _ad.const(0, ct), padding_config=tuple(config))]


def _pad_operand_cotangent(ct: Any, padding_config: tuple[tuple[int, int, int], ...]) -> Any:
    """Undo the edges (a pad by the negated edges crops, and restores what a negative edge
    cropped as zeros), then take every (interior + 1)-th element."""
    # (edges, starts and strides are NumPy integers, as JAX's rule computes them with
    # NumPy: its text prints np.int64(...) for each)
    lo, hi, interior = (np.array([c[k] for c in padding_config], np.int64) for k in range(3))
    unpad = tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior)))
    cropped = pad_p.bind(ct, _ad.const(0, ct), padding_config=unpad)
    shape = get_aval(cropped).shape
    return slice_p.bind(cropped, start_indices=tuple(np.zeros_like(lo)), limit_indices=shape,
                        strides=tuple(np.add(interior, 1)))


def _pad_transpose(ct: Any, x: Any, value: Any, *,
                   padding_config: tuple[tuple[int, int, int], ...]) -> list:
    # The operand's cotangent is the cotangent at its elements' places; the padding value's
    # is the sum of all the rest: sum(ct) - sum(operand's cotangent).
    t_x = _pad_operand_cotangent(ct, padding_config)
    t_v = None
    if ad.is_undefined_primal(value):
        every = tuple(range(get_aval(ct).ndim))
        t_v = _ad.sub(_ad.reduce_sum(ct, every), _ad.reduce_sum(t_x, every))
    return [t_x if ad.is_undefined_primal(x) else None, t_v]


def _concatenate_transpose(ct: Any, *xs: Any, dimension: int) -> list:
    # One split of the cotangent into the operands' pieces, as JAX's rule (its text is a
    # `split`, not a slice per operand); the known operands' pieces are dropped.
    from ember.prims.split import split_p  # (split.py imports this module)
    shapes = [x.aval.shape if ad.is_undefined_primal(x) else get_aval(x).shape for x in xs]
    pieces = split_p.bind(ct, sizes=tuple(s[dimension] for s in shapes), axis=dimension)
    return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


for _p, _t in ((slice_p, _slice_transpose), (pad_p, _pad_transpose),
               (concatenate_p, _concatenate_transpose)):
    ad.deflinear(_p)
    _p.def_transpose(_t)


def _dynamic_slice_jvp(primals: list, tangents: list, *, slice_sizes: tuple[int, ...]
                       ) -> tuple[Any, Any]:
    x, *indices = primals
    ans = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if isinstance(tangents[0], ad.Zero):
        return ans, ad.Zero(get_aval(ans))
    return ans, dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct: Any, x: Any, *indices: Any, slice_sizes: tuple[int, ...]
                             ) -> list:
    # The window goes back where it came from (same clamped start), zeros elsewhere.
    zeros = _ad.zeros(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _dynamic_update_slice_jvp(primals: list, tangents: list) -> tuple[Any, Any]:
    x, update, *indices = primals
    ans = dynamic_update_slice_p.bind(x, update, *indices)
    tx, tu = tangents[0], tangents[1]
    if isinstance(tx, ad.Zero) and isinstance(tu, ad.Zero):
        return ans, ad.Zero(get_aval(ans))
    return ans, dynamic_update_slice_p.bind(ad.instantiate_zeros(tx),
                                            ad.instantiate_zeros(tu), *indices)


def _dynamic_update_slice_transpose(ct: Any, x: Any, update: Any, *indices: Any) -> list:
    # The operand gets the cotangent with the window zeroed; the update gets the window.
    update_aval = update.aval if ad.is_undefined_primal(update) else get_aval(update)
    t_x = t_u = None
    if ad.is_undefined_primal(x):
        t_x = dynamic_update_slice_p.bind(ct, _ad.zeros(update_aval), *indices)
    if ad.is_undefined_primal(update):
        t_u = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
    return [t_x, t_u] + [None] * len(indices)


dynamic_slice_p.def_jvp(_dynamic_slice_jvp)
dynamic_slice_p.def_transpose(_dynamic_slice_transpose)
dynamic_update_slice_p.def_jvp(_dynamic_update_slice_jvp)
dynamic_update_slice_p.def_transpose(_dynamic_update_slice_transpose)


# ---------------------------------------------------------------------------------------------
# Batching rules. A mapped operand keeps its batch axis where it is, taken whole (slice,
# pad, concatenate, and the dynamic slices with unmapped indices: start 0, size B). Indices
# that differ per example make the window's place differ per example: dynamic_slice becomes
# a gather and dynamic_update_slice a scatter, one window per example, in CLIP mode (which
# clamps a window into bounds exactly as the dynamic slices do).
# ---------------------------------------------------------------------------------------------

def _slice_batch(axis: AxisData, args: list, dims: list, *, start_indices: tuple[int, ...],
                 limit_indices: tuple[int, ...], strides: tuple[int, ...] | None
                 ) -> tuple[Any, int]:
    (x,), (b,) = args, dims
    start = (*start_indices[:b], 0, *start_indices[b:])
    limit = (*limit_indices[:b], axis.size, *limit_indices[b:])
    steps = None if strides is None else (*strides[:b], 1, *strides[b:])
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=steps), b


def _pad_batch(axis: AxisData, args: list, dims: list, *,
               padding_config: tuple[tuple[int, int, int], ...]) -> tuple[Any, int]:
    (x, value), (b, vd) = args, dims
    if vd is not_mapped:
        config = (*padding_config[:b], (0, 0, 0), *padding_config[b:])
        return pad_p.bind(x, value, padding_config=config), b
    # One padding value per example: pad with any value, then select each example's value
    # where a pad of False with True (the same config, per example) says padding went.
    x = batching.bdim_at_front(x, b, axis.size)
    config = ((0, 0, 0), *padding_config)
    padded = pad_p.bind(x, _ad.const(0, x), padding_config=config)
    shape = get_aval(padded).shape
    inside = _ad.broadcast_in_dim(np.zeros((), np.bool_), get_aval(x).shape[1:], ())
    where_pad = pad_p.bind(inside, np.ones((), np.bool_), padding_config=padding_config)
    where_pad = _ad.broadcast_in_dim(where_pad, shape, tuple(range(1, len(shape))))
    fill = _ad.broadcast_in_dim(value, shape, (0,))
    return _ad.select(where_pad, fill, padded), 0


def _concatenate_batch(axis: AxisData, args: list, dims: list, *, dimension: int
                       ) -> tuple[Any, int]:
    xs, b = _batching.common_bdim(args, dims, axis.size)
    return concatenate_p.bind(*xs, dimension=_batching.shift_axis(dimension, b)), b


def _index_vectors(indices: list, dims: list, size: int) -> Any:
    """Per-example scalar start indices as one (size, n) array: example i's index vector
    in row i (an unmapped index repeated for every example)."""
    # (a mapped scalar index is 1-d, mapped along 0: one broadcast_in_dim per index, as JAX)
    cols = [_ad.broadcast_in_dim(i, (size, 1), () if d is not_mapped else (0,))
            for i, d in zip(indices, dims)]
    return cols[0] if len(cols) == 1 else concatenate_p.bind(*cols, dimension=1)


def _dynamic_slice_batch(axis: AxisData, args: list, dims: list, *,
                         slice_sizes: tuple[int, ...]) -> tuple[Any, int]:
    (x, *indices), (b, *idims) = args, dims
    if all(d is not_mapped for d in idims):
        zero = np.zeros((), get_aval(indices[0]).dtype if indices else np.int32)
        starts = (*indices[:b], zero, *indices[b:])
        sizes = (*slice_sizes[:b], axis.size, *slice_sizes[b:])
        return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), b
    # Example i reads the window at its own starts: a gather with one index vector per
    # example (the index vector names every operand dim; each window dim is an offset dim
    # of the output, after the one batch dim of the indices). A mapped operand's batch axis
    # is a batching dim of the gather, paired with the indices' batch dim.
    if axis.size == 0:  # no example, no window (a gather's batching dim needs one row)
        return _ad.zeros(get_aval(x).update(shape=(0, *slice_sizes))), 0
    vectors = _index_vectors(indices, idims, axis.size)
    n = len(slice_sizes)
    if b is not_mapped:
        dn = gs.GatherDimensionNumbers(offset_dims=tuple(range(1, n + 1)),
                                       collapsed_slice_dims=(), start_index_map=tuple(range(n)))
        sizes = slice_sizes
    else:
        x = batching.moveaxis(x, b, 0)
        dn = gs.GatherDimensionNumbers(offset_dims=tuple(range(1, n + 1)),
                                       collapsed_slice_dims=(),
                                       start_index_map=tuple(range(1, n + 1)),
                                       operand_batching_dims=(0,),
                                       start_indices_batching_dims=(0,))
        sizes = (1, *slice_sizes)
    return gs.gather_p.bind(x, vectors, dimension_numbers=dn, slice_sizes=sizes,
                            indices_are_sorted=False, unique_indices=False,
                            mode=gs.GatherScatterMode.CLIP, fill_value=None), 0


def _dynamic_update_slice_batch(axis: AxisData, args: list, dims: list) -> tuple[Any, int]:
    (x, update, *indices), (b, ud, *idims) = args, dims
    if all(d is not_mapped for d in idims):
        # The batch axis is taken whole: both operands carry it at one place, start 0.
        (x, update), b = _batching.common_bdim([x, update], [b, ud], axis.size)
        zero = np.zeros((), get_aval(indices[0]).dtype if indices else np.int32)
        return dynamic_update_slice_p.bind(x, update, *indices[:b], zero, *indices[b:]), b
    # Example i writes its update at its own starts: a scatter of one window per example,
    # the operand's and the updates' batch axes paired with the indices' batch dim.
    x = batching.bdim_at_front(x, b, axis.size)
    if axis.size == 0:  # no example, nothing to write
        return x, 0
    update = batching.bdim_at_front(update, ud, axis.size)
    vectors = _index_vectors(indices, idims, axis.size)
    n = get_aval(x).ndim - 1
    dn = gs.ScatterDimensionNumbers(update_window_dims=tuple(range(1, n + 1)),
                                    inserted_window_dims=(),
                                    scatter_dims_to_operand_dims=tuple(range(1, n + 1)),
                                    operand_batching_dims=(0,),
                                    scatter_indices_batching_dims=(0,))
    return gs.scatter_p.bind(x, vectors, update, dimension_numbers=dn,
                             indices_are_sorted=True, unique_indices=True,
                             mode=gs.GatherScatterMode.CLIP, update_jaxpr=None,
                             update_consts=()), 0


for _p, _r in ((slice_p, _slice_batch), (pad_p, _pad_batch),
               (concatenate_p, _concatenate_batch), (dynamic_slice_p, _dynamic_slice_batch),
               (dynamic_update_slice_p, _dynamic_update_slice_batch)):
    _p.def_batch(_r)
