"""Gather and scatter: XLA's general indexed reads and writes, with JAX's dimension numbers.

Input: `gather(operand, indices)` and `scatter*(operand, indices, updates)`, with params as
JAX 0.10.2 names and prints them:
    gather[dimension_numbers=GatherDimensionNumbers(...) fill_value=None
           indices_are_sorted=False mode=GatherScatterMode.PROMISE_IN_BOUNDS slice_sizes=(1,)
           unique_indices=False]
    scatter-add[dimension_numbers=ScatterDimensionNumbers(...) indices_are_sorted=False
                mode=GatherScatterMode.FILL_OR_DROP unique_indices=False update_consts=()
                update_jaxpr=None]
The primitive names are JAX's: gather, scatter, scatter-add, scatter-mul, scatter-min,
scatter-max. As in JAX, the index vector is always the last dimension of `indices`.

Semantics (the reference rules below are written for clarity, vectorized over the batch):
- gather: for each batch position G (indices.shape[:-1]), a window of `slice_sizes` is read
  at start S(G), where S_d = indices[G][k] for d = start_index_map[k], S_d = G[j] for the
  j-th operand batching dim d, else 0. Collapsed and batching dims are dropped; the window's
  remaining dims land at `offset_dims` of the output, the batch dims fill the others in order.
- modes: CLIP and PROMISE_IN_BOUNDS clamp S so the window fits (XLA's behaviour);
  FILL_OR_DROP returns `fill_value` for a whole window that does not fit.
- scatter: each update window is combined into the operand at S(G). A window that does not
  fit is dropped (FILL_OR_DROP, PROMISE_IN_BOUNDS) or moved in bounds (CLIP). Duplicate
  targets accumulate for add/mul/min/max in row-major update order; for `scatter` (set) the
  last update in row-major order wins, deterministically. A scatter with an `update_jaxpr`
  (`.at[].apply`) applies that scalar function once per update, in order.
Lowering to HLO: XLA's gather / scatter have no batching dims and no fill mode, so the
rules add an iota index component per batching dim (the batch position is the start),
select `fill_value` over the windows that do not fit (FILL_OR_DROP gather), and clamp the
start indices before a CLIP scatter (HLO scatter itself drops windows that do not fit).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.builder import Builder
from ember.hlo.evaluator.reductions import combine_at
from ember.hlo.ir import Computation, Instruction
from ember.hlo.shape import Shape
from ember.prims import _ad
from ember.prims import _lower as L


class GatherDimensionNumbers(NamedTuple):
    """How operand, indices and output dimensions relate in a gather (see module doc)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How operand, indices and updates dimensions relate in a scatter (see module doc)."""

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What happens to out-of-bounds indices (see module doc)."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """'clip', 'fill' / 'drop' / None (FILL_OR_DROP), 'promise_in_bounds', or a mode."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


def _tuple(x: Any) -> tuple[int, ...]:
    return tuple(int(i) for i in x)


def _sorted_unique(name: str, what: str, dims: tuple[int, ...], bound: int) -> None:
    if list(dims) != sorted(set(dims)):
        raise TypeError(f"{name} {what} in dimension_numbers must be sorted and unique; got "
                        f"{dims}.")
    if any(not 0 <= d < bound for d in dims):
        raise TypeError(f"{name} {what} in dimension_numbers must be in the range [0, {bound}); "
                        f"got {dims}.")


def _check_index_dtype(name: str, indices: ShapedArray) -> None:
    if dtypes.kind(indices.dtype) not in "iu":
        raise TypeError(f"{name} indices must have an integer type, got {indices.dtype.name}")
    if indices.ndim == 0:
        raise TypeError(f"{name} indices must have at least one dimension (the index vector "
                        f"is the last one), got a scalar.")


# ---------------------------------------------------------------------------------------------
# Shared reference machinery: the start index of every window along every operand dim.
# ---------------------------------------------------------------------------------------------

def _window_starts(operand_shape: tuple[int, ...], indices: np.ndarray,
                   start_map: tuple[int, ...], operand_batching: tuple[int, ...],
                   indices_batching: tuple[int, ...]) -> list[np.ndarray]:
    """S_d(G) for every operand dim d, each of shape indices.shape[:-1] (int64)."""
    batch_shape = indices.shape[:-1]
    vec = indices.astype(np.int64)
    starts = []
    for d in range(len(operand_shape)):
        if d in start_map:
            s = vec[..., start_map.index(d)]
        elif d in operand_batching:
            # The batch position along the matching indices dim is the start.
            j = indices_batching[operand_batching.index(d)]
            line = np.arange(batch_shape[j], dtype=np.int64)
            s = np.broadcast_to(line.reshape([-1 if i == j else 1 for i in
                                              range(len(batch_shape))]), batch_shape)
        else:
            s = np.zeros(batch_shape, np.int64)
        starts.append(s)
    return starts


def _fits(batch_shape: tuple[int, ...], starts: list[np.ndarray], shape: tuple[int, ...],
          sizes: tuple[int, ...]) -> np.ndarray:
    """Per window: 0 <= S_d <= shape_d - size_d for every d (the whole window fits)."""
    ok = np.ones(batch_shape, bool)
    for s, d, z in zip(starts, shape, sizes):
        ok &= (s >= 0) & (s <= d - z)
    return ok


def _clamp(starts: list[np.ndarray], shape: tuple[int, ...], sizes: tuple[int, ...]
           ) -> list[np.ndarray]:
    return [np.clip(s, 0, max(d - z, 0)) for s, d, z in zip(starts, shape, sizes)]


def _window_coords(starts: list[np.ndarray], sizes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Operand coordinates S_d(G) + w_d, as arrays of shape (*batch, *sizes)."""
    rank = len(sizes)
    coords = []
    for d, (s, z) in enumerate(zip(starts, sizes)):
        nb = s.ndim
        offs = np.arange(z, dtype=np.int64).reshape(
            (1,) * nb + tuple(z if i == d else 1 for i in range(rank)))
        coords.append(s.reshape(s.shape + (1,) * rank) + offs)
    return tuple(coords)


# ---------------------------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------------------------

gather_p = Primitive("gather")


def gather_shape(operand: ShapedArray, indices: ShapedArray, dnums: GatherDimensionNumbers,
                 slice_sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The output shape; raises TypeError (JAX's messages) on inconsistent arguments."""
    if not isinstance(dnums, GatherDimensionNumbers):
        raise TypeError(f"gather dimension_numbers must be a GatherDimensionNumbers, got "
                        f"{type(dnums).__name__}")
    _check_index_dtype("gather", indices)
    offset = _tuple(dnums.offset_dims)
    collapsed = _tuple(dnums.collapsed_slice_dims)
    start_map = _tuple(dnums.start_index_map)
    obatch = _tuple(dnums.operand_batching_dims)
    ibatch = _tuple(dnums.start_indices_batching_dims)
    batch_shape = indices.shape[:-1]
    out_rank = len(offset) + len(batch_shape)
    _sorted_unique("gather", "offset_dims", offset, max(out_rank, 1))
    _sorted_unique("gather", "collapsed_slice_dims", collapsed, max(operand.ndim, 1))
    _sorted_unique("gather", "operand_batching_dims", obatch, max(operand.ndim, 1))
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather slice_sizes must have the same length as operand.shape; got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    if indices.shape[-1] != len(start_map):
        raise TypeError(f"gather start_index_map has length {len(start_map)}, but the index "
                        f"vector (last dimension of indices, shape {indices.shape}) has size "
                        f"{indices.shape[-1]}; they must be equal.")
    if len(set(start_map)) != len(start_map) or any(
            not 0 <= d < operand.ndim for d in start_map):
        raise TypeError(f"gather start_index_map must hold unique operand dimensions; got "
                        f"{start_map} for operand shape {operand.shape}.")
    if set(collapsed) & set(obatch) or set(start_map) & set(obatch):
        raise TypeError(f"gather operand_batching_dims {obatch} must be disjoint from "
                        f"collapsed_slice_dims {collapsed} and start_index_map {start_map}.")
    if len(ibatch) != len(obatch) or len(set(ibatch)) != len(ibatch) or any(
            not 0 <= j < len(batch_shape) for j in ibatch):
        raise TypeError(f"gather start_indices_batching_dims {ibatch} must be unique batch "
                        f"dimensions of indices (shape {indices.shape}), one per operand "
                        f"batching dim {obatch}.")
    for d, j in zip(obatch, ibatch):
        if operand.shape[d] != batch_shape[j]:
            raise TypeError(f"gather operand batching dim {d} has size {operand.shape[d]} but "
                            f"indices batching dim {j} has size {batch_shape[j]}.")
    for d, z in enumerate(slice_sizes):
        if not 0 <= z <= operand.shape[d]:
            raise TypeError(f"Slice size at index {d} in gather op is out of range, must be "
                            f"within [0, {operand.shape[d]} + 1), got {z}.")
    for d in collapsed + obatch:
        if slice_sizes[d] > 1:
            raise TypeError(f"Gather op can only collapse (or batch) slice dims with bound 1, "
                            f"but bound is {slice_sizes[d]} for index {d} at position "
                            f"{(collapsed + obatch).index(d)}.")
    window = [z for d, z in enumerate(slice_sizes) if d not in collapsed and d not in obatch]
    if len(window) != len(offset):
        raise TypeError(f"All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes={window}, "
                        f"collapsed_slice_dims={collapsed}, operand_batching_dims={obatch}.")
    out = []
    w, b = iter(window), iter(batch_shape)
    for i in range(out_rank):
        out.append(next(w) if i in offset else next(b))
    return tuple(out)


@gather_p.def_abstract_eval
def _gather_abstract(operand: ShapedArray, indices: ShapedArray, *,
                     dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                     indices_are_sorted: bool, unique_indices: bool,
                     mode: GatherScatterMode, fill_value: Any) -> ShapedArray:
    shape = gather_shape(operand, indices, dimension_numbers, slice_sizes)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def default_fill_value(dtype: np.dtype) -> Any:
    """JAX's default for FILL_OR_DROP gathers: NaN for inexact, the most negative signed
    integer, the largest unsigned integer, True for bool."""
    if dtypes.kind(dtype) in "fc":
        return np.nan
    if dtypes.kind(dtype) == "i":
        return int(np.iinfo(dtype).min)
    if dtypes.kind(dtype) == "u":
        return int(np.iinfo(dtype).max)
    if dtypes.kind(dtype) == "b":
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def _fill_scalar(value: Any, dtype: np.dtype) -> np.ndarray:
    """fill_value in `dtype` with XLA's conversion rules (NaN -> 0 and saturation)."""
    from ember.hlo.evaluator.elementwise import convert_array
    arr = np.asarray(value)
    if arr.dtype == dtype:
        return arr
    return np.asarray(convert_array(arr, dtype))


@gather_p.def_impl
def _gather_impl(operand: np.ndarray, indices: np.ndarray, *,
                 dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                 indices_are_sorted: bool, unique_indices: bool,
                 mode: GatherScatterMode, fill_value: Any) -> np.ndarray:
    dn = dimension_numbers
    sizes = _tuple(slice_sizes)
    collapsed, offset = _tuple(dn.collapsed_slice_dims), _tuple(dn.offset_dims)
    obatch = _tuple(dn.operand_batching_dims)
    batch_shape = indices.shape[:-1]
    nb = len(batch_shape)
    starts = _window_starts(operand.shape, indices, _tuple(dn.start_index_map), obatch,
                            _tuple(dn.start_indices_batching_dims))
    ok = _fits(batch_shape, starts, operand.shape, sizes)
    starts = _clamp(starts, operand.shape, sizes)
    if operand.ndim == 0:
        window = np.broadcast_to(operand, batch_shape)
    elif 0 in operand.shape:
        # Only size-0 windows fit in an empty operand: the result is empty.
        window = np.zeros(batch_shape + sizes, operand.dtype)
    else:
        window = operand[_window_coords(starts, sizes)]
    kept = tuple(z for d, z in enumerate(sizes) if d not in collapsed and d not in obatch)
    window = window.reshape(batch_shape + kept)
    if GatherScatterMode.from_any(mode) is GatherScatterMode.FILL_OR_DROP:
        fill = default_fill_value(operand.dtype) if fill_value is None else fill_value
        mask = ok.reshape(batch_shape + (1,) * len(kept))
        window = np.where(mask, window, _fill_scalar(fill, operand.dtype))
    # Output dim i reads window dim src[i]: batch dims in order at the non-offset positions.
    src, b, w = [], 0, nb
    for i in range(nb + len(kept)):
        if i in offset:
            src.append(w)
            w += 1
        else:
            src.append(b)
            b += 1
    return np.transpose(window, src).astype(operand.dtype, order="C", copy=True)


# ---------------------------------------------------------------------------------------------
# scatter, scatter-add, scatter-mul, scatter-min, scatter-max
# ---------------------------------------------------------------------------------------------

def scatter_check(name: str, operand: ShapedArray, indices: ShapedArray,
                  updates: ShapedArray, dnums: ScatterDimensionNumbers) -> None:
    """Raise TypeError (JAX's messages) unless the scatter arguments are consistent."""
    if not isinstance(dnums, ScatterDimensionNumbers):
        raise TypeError(f"{name} dimension_numbers must be a ScatterDimensionNumbers, got "
                        f"{type(dnums).__name__}")
    _check_index_dtype(name, indices)
    if operand.dtype != updates.dtype:
        raise TypeError(f"{name} requires arguments to have the same dtypes, got "
                        f"{operand.dtype.name}, {updates.dtype.name}.")
    window_dims = _tuple(dnums.update_window_dims)
    inserted = _tuple(dnums.inserted_window_dims)
    to_operand = _tuple(dnums.scatter_dims_to_operand_dims)
    obatch = _tuple(dnums.operand_batching_dims)
    ibatch = _tuple(dnums.scatter_indices_batching_dims)
    _sorted_unique(name, "update_window_dims", window_dims, max(updates.ndim, 1))
    _sorted_unique(name, "inserted_window_dims", inserted, max(operand.ndim, 1))
    _sorted_unique(name, "operand_batching_dims", obatch, max(operand.ndim, 1))
    if indices.shape[-1] != len(to_operand):
        raise TypeError(f"{name}: scatter_dims_to_operand_dims has length {len(to_operand)}, "
                        f"but the index vector (last dimension of indices, shape "
                        f"{indices.shape}) has size {indices.shape[-1]}; they must be equal.")
    if len(set(to_operand)) != len(to_operand) or any(
            not 0 <= d < operand.ndim for d in to_operand):
        raise TypeError(f"{name} scatter_dims_to_operand_dims must hold unique operand "
                        f"dimensions; got {to_operand} for operand shape {operand.shape}.")
    if set(inserted) & set(obatch) or set(to_operand) & set(obatch):
        raise TypeError(f"{name} operand_batching_dims {obatch} must be disjoint from "
                        f"inserted_window_dims {inserted} and scatter_dims_to_operand_dims "
                        f"{to_operand}.")
    batch_shape = indices.shape[:-1]
    if len(ibatch) != len(obatch) or len(set(ibatch)) != len(ibatch) or any(
            not 0 <= j < len(batch_shape) for j in ibatch):
        raise TypeError(f"{name} scatter_indices_batching_dims {ibatch} must be unique batch "
                        f"dimensions of indices (shape {indices.shape}), one per operand "
                        f"batching dim {obatch}.")
    for d, j in zip(obatch, ibatch):
        if operand.shape[d] != batch_shape[j]:
            raise TypeError(f"{name} operand batching dim {d} has size {operand.shape[d]} but "
                            f"indices batching dim {j} has size {batch_shape[j]}.")
    if len(window_dims) + len(inserted) + len(obatch) != operand.ndim:
        raise TypeError(f"{name}: operand rank {operand.ndim} must equal the number of "
                        f"update_window_dims {window_dims} plus inserted_window_dims "
                        f"{inserted} plus operand_batching_dims {obatch}.")
    scatter_dims = [i for i in range(updates.ndim) if i not in window_dims]
    if tuple(updates.shape[i] for i in scatter_dims) != batch_shape:
        raise TypeError(f"{name}: updates shape {updates.shape} must have the scatter "
                        f"(non-window) dimensions equal to indices.shape[:-1] = {batch_shape}.")
    window_operand = [d for d in range(operand.ndim) if d not in inserted and d not in obatch]
    for j, d in zip(window_dims, window_operand):
        if updates.shape[j] > operand.shape[d]:
            raise TypeError(f"Bounds of the window dimensions of updates must not exceed the "
                            f"bounds of the corresponding dimensions of operand. For dimension "
                            f"{j}, updates bound is {updates.shape[j]}, operand bound is "
                            f"{operand.shape[d]}.")


def _scatter_targets(operand_shape: tuple[int, ...], indices: np.ndarray, updates: np.ndarray,
                     dn: ScatterDimensionNumbers, mode: GatherScatterMode
                     ) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Flat operand coordinates and values of every update element that is applied, in
    row-major order of the updates (dropped windows removed)."""
    window_dims = _tuple(dn.update_window_dims)
    inserted = _tuple(dn.inserted_window_dims)
    obatch = _tuple(dn.operand_batching_dims)
    rank = len(operand_shape)
    scatter_dims = [i for i in range(updates.ndim) if i not in window_dims]
    window_operand = [d for d in range(rank) if d not in inserted and d not in obatch]
    # Full window size along every operand dim (1 for inserted and batching dims).
    sizes = [1] * rank
    for j, d in zip(window_dims, window_operand):
        sizes[d] = updates.shape[j]
    starts = _window_starts(operand_shape, indices, _tuple(dn.scatter_dims_to_operand_dims),
                            obatch, _tuple(dn.scatter_indices_batching_dims))
    if GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP:
        starts = _clamp(starts, operand_shape, tuple(sizes))
        ok = np.ones(indices.shape[:-1], bool)
    else:
        ok = _fits(indices.shape[:-1], starts, operand_shape, tuple(sizes))
    # Coordinates as (*scatter, *window) in operand-dim order, then back to the updates' order.
    coords = _window_coords(starts, tuple(sizes))
    batch_shape = indices.shape[:-1]
    win_shape = tuple(updates.shape[j] for j in window_dims)
    full = batch_shape + tuple(sizes)
    # Drop the size-1 inserted/batching window dims: shape (*scatter, *window).
    coords = tuple(np.broadcast_to(c, full).reshape(batch_shape + win_shape) for c in coords)
    keep = np.broadcast_to(ok.reshape(batch_shape + (1,) * len(win_shape)),
                           batch_shape + win_shape)
    # Updates viewed in the same (*scatter, *window) order; the scatter dims of `updates` are
    # in order, so a transpose lines them up. Row-major order of the *updates* array decides
    # which duplicate comes last, so move everything back to the updates' own dim order.
    perm = scatter_dims + list(window_dims)
    inv = np.argsort(perm)
    coords = tuple(np.transpose(c, inv) for c in coords)
    keep = np.transpose(keep, inv)
    return tuple(c[keep] for c in coords), updates[keep]


_UFUNCS = {"scatter-add": "add", "scatter-mul": "multiply", "scatter-min": "minimum",
           "scatter-max": "maximum"}  # the combiner's opcode, for combine_at


def _occurrence_rank(lin: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same value (0 for the first)."""
    order = np.argsort(lin, kind="stable")
    s = lin[order]
    starts = np.r_[True, s[1:] != s[:-1]] if s.size else np.zeros(0, bool)
    group_start = np.maximum.accumulate(np.where(starts, np.arange(s.size), 0))
    rank = np.empty_like(order)
    rank[order] = np.arange(s.size) - group_start
    return rank


def _apply_jaxpr(jaxpr: Any, consts: tuple, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """f(old, new) of a scalar update jaxpr, elementwise over 1-D arrays."""
    from ember.core.eval import eval_jaxpr_numpy
    try:
        out = np.asarray(eval_jaxpr_numpy(jaxpr, list(consts), [old, new])[0])
        if out.shape == old.shape:
            return out.astype(old.dtype, copy=False)
    except Exception:  # a rule that only takes scalars: fall back to one call per element
        pass
    return np.array([np.asarray(eval_jaxpr_numpy(jaxpr, list(consts), [o, n])[0])
                     for o, n in zip(old, new)], dtype=old.dtype).reshape(old.shape)


def _scatter_rule(name: str) -> Callable[..., np.ndarray]:
    def impl(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any = None,
             update_consts: tuple = ()) -> np.ndarray:
        # C order: flat_out below must be a view of out (a transposed operand copies as F)
        out = np.array(operand, copy=True, order="C")
        if out.size == 0 or updates.size == 0:
            return out
        flat, vals = _scatter_targets(operand.shape, indices, updates, dimension_numbers, mode)
        # Row-major linear positions in the operand (a 0-d operand has the single position 0).
        lin = np.ravel_multi_index(flat, operand.shape) if operand.ndim else np.zeros(
            vals.shape, np.intp)
        flat_out = out.reshape(-1)
        if name in _UFUNCS:  # (max/min with IEEE zeros; integer products wrap, as in XLA)
            combine_at(_UFUNCS[name], flat_out, lin, vals)
            return out
        if update_jaxpr is None:
            # Overwrite: keep the last update of each target (first in reversed order).
            _, first_rev = np.unique(lin[::-1], return_index=True)
            last = lin.size - 1 - first_rev
            flat_out[lin[last]] = vals[last]
            return out
        # A general combiner f(old, new), applied once per update in order: update rounds in
        # which every target appears at most once, so each round is one vectorized call.
        rank = _occurrence_rank(lin)
        for r in range(int(rank.max()) + 1 if rank.size else 0):
            sel = rank == r
            tgt = lin[sel]
            flat_out[tgt] = _apply_jaxpr(update_jaxpr, update_consts, flat_out[tgt], vals[sel])
        return out
    return impl


def _define_scatter(name: str) -> Primitive:
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
                  dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                  unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any = None,
                  update_consts: tuple = ()) -> ShapedArray:
        scatter_check(name, operand, indices, updates, dimension_numbers)
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)

    prim.def_impl(_scatter_rule(name))
    return prim


scatter_p = _define_scatter("scatter")
scatter_add_p = _define_scatter("scatter-add")
scatter_mul_p = _define_scatter("scatter-mul")
scatter_min_p = _define_scatter("scatter-min")
scatter_max_p = _define_scatter("scatter-max")


# ---------------------------------------------------------------------------------------------
# Lowering to HLO.
# ---------------------------------------------------------------------------------------------

def _with_batching_iotas(ctx: Any, indices: Instruction, idx_aval: ShapedArray,
                         start_map: tuple[int, ...], obatch: tuple[int, ...],
                         ibatch: tuple[int, ...]) -> tuple[Instruction, tuple[int, ...]]:
    """Batching dims as ordinary index components: S_d = G[j] is iota along indices dim j."""
    if not obatch:
        return indices, start_map
    batch = idx_aval.shape[:-1]
    it = L.et(idx_aval.dtype)
    cols = [indices] + [ctx.b.iota(Shape(it, batch + (1,)), j) for j in ibatch]
    return ctx.b.concatenate(cols, len(batch)), start_map + obatch


def _component(ctx: Any, indices: Instruction, idx_aval: ShapedArray, k: int) -> Instruction:
    """indices[..., k] as an array of the batch shape."""
    batch = idx_aval.shape[:-1]
    n = idx_aval.ndim
    starts = [0] * n
    limits = list(idx_aval.shape)
    starts[-1], limits[-1] = k, k + 1
    return ctx.b.reshape(ctx.b.slice(indices, starts, limits), batch)


@gather_p.def_lowering
def _gather_lowering(ctx: Any, operand: Instruction, indices: Instruction, *,
                     dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                     indices_are_sorted: bool, unique_indices: bool,
                     mode: GatherScatterMode, fill_value: Any) -> Instruction:
    dn = dimension_numbers
    op_aval, idx_aval = ctx.avals_in
    out_aval = ctx.aval_out
    if out_aval.size == 0:
        # Nothing to read (e.g. a batching dim of size 0, whose slice size is 0: HLO gather
        # wants 1 on collapsed dims): an empty result of the right shape.
        return ctx.b.broadcast(L.scalar_const(ctx, 0, op_aval.dtype), out_aval.shape)
    obatch = _tuple(dn.operand_batching_dims)
    full_idx, start_map = _with_batching_iotas(
        ctx, indices, idx_aval, _tuple(dn.start_index_map), obatch,
        _tuple(dn.start_indices_batching_dims))
    out = ctx.b.gather(operand, full_idx, offset_dims=_tuple(dn.offset_dims),
                       collapsed_slice_dims=tuple(sorted(_tuple(dn.collapsed_slice_dims)
                                                         + obatch)),
                       start_index_map=start_map, index_vector_dim=idx_aval.ndim - 1,
                       slice_sizes=_tuple(slice_sizes), indices_are_sorted=indices_are_sorted)
    if GatherScatterMode.from_any(mode) is not GatherScatterMode.FILL_OR_DROP:
        return out  # HLO gather clamps: CLIP, and PROMISE_IN_BOUNDS as XLA implements it
    # ok(G) = AND_k 0 <= indices[G, k] <= shape[d_k] - size[d_k]; out = ok ? window : fill.
    batch = idx_aval.shape[:-1]
    ok = None
    for k, d in enumerate(_tuple(dn.start_index_map)):
        c = _component(ctx, indices, idx_aval, k)
        lo = ctx.b.broadcast(L.scalar_const(ctx, 0, idx_aval.dtype), batch)
        hi = ctx.b.broadcast(L.scalar_const(ctx, op_aval.shape[d] - slice_sizes[d],
                                            idx_aval.dtype), batch)
        fits = ctx.b.and_(ctx.b.compare(c, lo, "GE"), ctx.b.compare(c, hi, "LE"))
        ok = fits if ok is None else ctx.b.and_(ok, fits)
    if ok is None:
        return out
    offset = _tuple(dn.offset_dims)
    batch_pos = tuple(i for i in range(out_aval.ndim) if i not in offset)
    mask = ctx.b.broadcast(ok, out_aval.shape, batch_pos)
    fill = default_fill_value(op_aval.dtype) if fill_value is None else fill_value
    value = ctx.b.constant(_fill_scalar(fill, op_aval.dtype))
    return ctx.b.select(mask, out, ctx.b.broadcast(value, out_aval.shape))


def _overwrite_computation(element_type: str) -> Computation:
    """(old, new) -> new: scatter's replace."""
    sb = Builder(f"scatter_set_{element_type}")
    s = Shape(element_type, ())
    sb.parameter(s, "old")
    return sb.build_computation(sb.parameter(s, "new"))


def _jaxpr_computation(jaxpr: Any, consts: tuple, element_type: str) -> Computation:
    """A scatter update_jaxpr `(old, new) -> f(old, new)` lowered into a computation."""
    from ember.lowering import Lowerer
    lw = Lowerer(f"scatter_apply_{element_type}", 2)
    s = Shape(element_type, ())
    args = [lw.b.parameter(s, "old"), lw.b.parameter(s, "new")]
    root, = lw.lower_jaxpr(jaxpr, list(consts), args, "scatter_apply")
    return lw.b.build_computation(root)


_COMBINER = {"scatter-add": "add", "scatter-mul": "multiply", "scatter-min": "minimum",
             "scatter-max": "maximum"}


def _scatter_lowering(name: str) -> Callable[..., Instruction]:
    def rule(ctx: Any, operand: Instruction, indices: Instruction, updates: Instruction, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any = None,
             update_consts: tuple = ()) -> Instruction:
        dn = dimension_numbers
        op_aval, idx_aval, upd_aval = ctx.avals_in
        elt = L.et(op_aval.dtype)
        if name in _COMBINER:
            comp = Builder.scalar_computation(_COMBINER[name], elt)
        elif update_jaxpr is None:
            comp = _overwrite_computation(elt)
        else:
            comp = _jaxpr_computation(update_jaxpr, update_consts, elt)
        to_operand = _tuple(dn.scatter_dims_to_operand_dims)
        obatch = _tuple(dn.operand_batching_dims)
        if GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP and to_operand:
            # Clamp each start so its window fits: 0 <= S_d <= shape_d - window_d.
            window_operand = [d for d in range(op_aval.ndim)
                              if d not in _tuple(dn.inserted_window_dims) and d not in obatch]
            win = {d: upd_aval.shape[j] for j, d in zip(_tuple(dn.update_window_dims),
                                                        window_operand)}
            bounds = np.array([op_aval.shape[d] - win.get(d, 1) for d in to_operand],
                              dtype=idx_aval.dtype)
            last = idx_aval.ndim - 1
            lo = ctx.b.broadcast(L.scalar_const(ctx, 0, idx_aval.dtype), idx_aval.shape)
            hi = ctx.b.broadcast(ctx.b.constant(bounds), idx_aval.shape, (last,))
            indices = ctx.b.clamp(lo, indices, hi)
        full_idx, to_operand = _with_batching_iotas(
            ctx, indices, idx_aval, to_operand, obatch, _tuple(dn.scatter_indices_batching_dims))
        inserted = tuple(sorted(_tuple(dn.inserted_window_dims) + obatch))
        scalar = op_aval.ndim == 0
        if scalar:
            # A rank-0 operand as a length-1 vector with index 0 (the interpreter's scatter
            # does not take rank-0 operands).
            batch = idx_aval.shape[:-1]
            operand = ctx.b.reshape(operand, (1,))
            full_idx = ctx.b.broadcast(L.scalar_const(ctx, 0, idx_aval.dtype), batch + (1,))
            inserted, to_operand = (0,), (0,)
        out = ctx.b.scatter(operand, full_idx, updates, comp,
                            update_window_dims=_tuple(dn.update_window_dims),
                            inserted_window_dims=inserted,
                            scatter_dims_to_operand_dims=to_operand,
                            index_vector_dim=idx_aval.ndim - 1,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices)
        return ctx.b.reshape(out, ()) if scalar else out
    return rule


for _prim in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _prim.def_lowering(_scatter_lowering(_prim.name))


# ---------------------------------------------------------------------------------------------
# Autodiff rules. Indices are integers: their tangents are always symbolic zeros, and every
# rule below is taken at fixed indices.
# ---------------------------------------------------------------------------------------------
#
# gather is linear in its operand: t_out = gather(t, indices) (a FILL_OR_DROP gather fills
# with 0, the derivative of a constant fill). Its transpose sends every cotangent element back
# to the operand element it was read from, adding where windows overlap: a scatter-add of
# the cotangent into zeros, with the dimension numbers read the other way round (a gather's
# offset dims are the scatter's update window dims, its collapsed dims the inserted ones).
#
# scatter-add is linear in operand and updates jointly: t_out = scatter-add(t_x, i, t_u).
# Transpose: the operand's cotangent is ct itself (every operand element reaches the output
# once); an update's is ct at the element it was added to, a gather (0 for dropped windows).
#
# scatter (set) is linear too: out = where(written, u[last writer], x), and the last writer
# depends on the indices alone, so t_out = scatter(t_x, i, t_u) with the same indices picks
# the same writers (Ember's scatter is deterministic: the last update in row-major order
# wins). Transpose: the operand gets ct with the written places zeroed (scatter of zeros);
# an update gets ct at its target only if it is the one that won there, found by scattering
# the update ids (an iota) and gathering them back.
#
# scatter-min/max: the output element is an extremum of the operand element and the updates
# aimed at it; as reduce_max does, the tangent is the mean of the tangents of the candidates
# equal to the result: (t_x * [x == out] + sum_k t_u[k] * [u[k] == out]) / count.
#
# scatter-mul: linear in the operand (t_out = scatter-mul(t_x, i, u)); in the updates, with
# unique indices, out = x * u at each target, so t_out = x * t_u there and 0 elsewhere:
# scatter(zeros, i, gather(x) * t_u). Duplicate targets (a product of several updates) are
# not implemented, as in JAX.


def _scatter_dnums_of(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=_tuple(dn.offset_dims),
        inserted_window_dims=_tuple(dn.collapsed_slice_dims),
        scatter_dims_to_operand_dims=_tuple(dn.start_index_map),
        operand_batching_dims=_tuple(dn.operand_batching_dims),
        scatter_indices_batching_dims=_tuple(dn.start_indices_batching_dims))


def _gather_dnums_of(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        offset_dims=_tuple(dn.update_window_dims),
        collapsed_slice_dims=_tuple(dn.inserted_window_dims),
        start_index_map=_tuple(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=_tuple(dn.operand_batching_dims),
        start_indices_batching_dims=_tuple(dn.scatter_indices_batching_dims))


def _scatter_slice_sizes(operand_ndim: int, updates_shape: tuple[int, ...],
                         dn: ScatterDimensionNumbers) -> tuple[int, ...]:
    """The window each update covers, per operand dim (1 on inserted and batching dims)."""
    skip = set(_tuple(dn.inserted_window_dims)) | set(_tuple(dn.operand_batching_dims))
    window_operand = [d for d in range(operand_ndim) if d not in skip]
    sizes = [1] * operand_ndim
    for j, d in zip(_tuple(dn.update_window_dims), window_operand):
        sizes[d] = updates_shape[j]
    return tuple(sizes)


def _gather_updates(x: Any, indices: Any, updates_shape: tuple[int, ...],
                    dn: ScatterDimensionNumbers, mode: GatherScatterMode, fill: Any) -> Any:
    """What a scatter with these arguments would combine each update with: x read at every
    update's target, shaped like the updates; `fill` for dropped windows."""
    clip = GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP
    return gather_p.bind(
        x, indices, dimension_numbers=_gather_dnums_of(dn),
        slice_sizes=_scatter_slice_sizes(get_aval(x).ndim, updates_shape, dn),
        indices_are_sorted=False, unique_indices=False,
        mode=GatherScatterMode.CLIP if clip else GatherScatterMode.FILL_OR_DROP,
        fill_value=None if clip else fill)


def _aval(x: Any) -> ShapedArray:
    return x.aval if ad.is_undefined_primal(x) else get_aval(x)


def _gather_jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    operand, indices = primals
    ans = gather_p.bind(operand, indices, **params)
    if isinstance(tangents[0], ad.Zero):
        return ans, ad.Zero(get_aval(ans))
    if GatherScatterMode.from_any(params["mode"]) is GatherScatterMode.FILL_OR_DROP:
        params = dict(params, fill_value=0)
    return ans, gather_p.bind(tangents[0], indices, **params)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *,
                      dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                      indices_are_sorted: bool, unique_indices: bool,
                      mode: GatherScatterMode, fill_value: Any) -> list:
    fill = GatherScatterMode.from_any(mode) is GatherScatterMode.FILL_OR_DROP
    zeros = _ad.zeros(operand.aval)
    t_x = scatter_add_p.bind(
        zeros, indices, ct, dimension_numbers=_scatter_dnums_of(dimension_numbers),
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
        mode=GatherScatterMode.FILL_OR_DROP if fill else GatherScatterMode.CLIP,
        update_jaxpr=combiner_jaxpr(scatter_add_p, operand.aval.dtype), update_consts=())
    return [t_x, None]


_COMBINER_JAXPRS: dict[tuple[str, np.dtype], Any] = {}


def combiner_jaxpr(prim: Primitive, dtype: Any) -> Any:
    """The `update_jaxpr` JAX stages on a scatter-add/mul/min/max of `dtype`: the scalar
    combiner `(old, new) -> old op new` (None for `scatter` and for a dtype the combiner does
    not take). It annotates the equation only: the combiner comes from the primitive."""
    ops = {"scatter-add": "add", "scatter-mul": "mul", "scatter-min": "min",
           "scatter-max": "max"}
    if prim.name not in ops:
        return None
    key = (prim.name, np.dtype(dtype))
    if key not in _COMBINER_JAXPRS:
        from ember.core.staging import trace_to_jaxpr
        from ember.prims import elementwise
        op = getattr(elementwise, f"{ops[prim.name]}_p")
        scalar = ShapedArray((), np.dtype(dtype))
        try:
            closed, _ = trace_to_jaxpr(lambda a, b: [op.bind(a, b)], [scalar, scalar])
            _COMBINER_JAXPRS[key] = closed.jaxpr
        except TypeError:  # (add of bools: JAX's combiner is undefined there too)
            _COMBINER_JAXPRS[key] = None
    return _COMBINER_JAXPRS[key]


def _linear_scatter_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        if prim is scatter_p and params.get("update_jaxpr") is not None:
            raise NotImplementedError("Differentiation rule for 'scatter' with an update "
                                      "function (.at[].apply) not implemented")
        ans = prim.bind(operand, indices, updates, **params)
        tx, tu = tangents[0], tangents[2]
        if isinstance(tx, ad.Zero) and isinstance(tu, ad.Zero):
            return ans, ad.Zero(get_aval(ans))
        return ans, prim.bind(ad.instantiate_zeros(tx), indices, ad.instantiate_zeros(tu),
                              **params)
    return rule


def _scatter_add_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           dimension_numbers: ScatterDimensionNumbers, mode: GatherScatterMode,
                           **params: Any) -> list:
    t_x = ct if ad.is_undefined_primal(operand) else None
    t_u = None
    if ad.is_undefined_primal(updates):
        t_u = _gather_updates(ct, indices, updates.aval.shape, dimension_numbers, mode, 0)
    return [t_x, None, t_u]


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                       dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
                       unique_indices: bool, mode: GatherScatterMode, update_jaxpr: Any = None,
                       update_consts: tuple = ()) -> list:
    dn = dimension_numbers
    params = dict(dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
                  unique_indices=unique_indices, mode=mode, update_jaxpr=None,
                  update_consts=())
    u_aval = _aval(updates)
    t_x = t_u = None
    if ad.is_undefined_primal(operand):
        t_x = scatter_p.bind(ct, indices, _ad.zeros(u_aval), **params)
    if ad.is_undefined_primal(updates):
        read = _gather_updates(ct, indices, u_aval.shape, dn, mode, 0)
        if unique_indices:
            t_u = read
        else:
            from ember.prims.shape_ops import iota_p
            ids = _ad.reshape(iota_p.bind(dtype=np.dtype(np.int32), shape=(u_aval.size,),
                                          dimension=0, sharding=None), u_aval.shape)
            none = _ad.broadcast_in_dim(np.array(-1, np.int32), get_aval(ct).shape, ())
            winners = scatter_p.bind(none, indices, ids, **params)
            won = _ad.compare("eq", _gather_updates(winners, indices, u_aval.shape, dn, mode,
                                                    -1), ids)
            t_u = _ad.select(won, read, _ad.zeros(u_aval))
    return [t_x, None, t_u]


def _scatter_extremum_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        operand, indices, updates = primals
        ans = prim.bind(operand, indices, updates, **params)
        tx, tu = tangents[0], tangents[2]
        if isinstance(tx, ad.Zero) and isinstance(tu, ad.Zero):
            return ans, ad.Zero(get_aval(ans))
        dn, mode = params["dimension_numbers"], params["mode"]
        add_params = dict(params, update_jaxpr=None, update_consts=())
        u_shape = get_aval(updates).shape
        dt = get_aval(ans).dtype
        x_hit = _ad.convert(_ad.compare("eq", operand, ans), dt)
        u_hit = _ad.convert(_ad.compare(
            "eq", updates, _gather_updates(ans, indices, u_shape, dn, mode, 0)), dt)
        count = scatter_add_p.bind(x_hit, indices, u_hit, **add_params)
        total = scatter_add_p.bind(_ad.mul(ad.instantiate_zeros(tx), x_hit), indices,
                                   _ad.mul(ad.instantiate_zeros(tu), u_hit), **add_params)
        return ans, _ad.div(total, count)
    return rule


def _scatter_mul_jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    operand, indices, updates = primals
    ans = scatter_mul_p.bind(operand, indices, updates, **params)
    tx, tu = tangents[0], tangents[2]
    out: Any = ad.Zero(get_aval(ans))
    if not isinstance(tx, ad.Zero):
        out = scatter_mul_p.bind(tx, indices, updates, **params)
    if not isinstance(tu, ad.Zero):
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients are only implemented if "
                                      "`unique_indices=True`")
        dn, mode = params["dimension_numbers"], params["mode"]
        x_at = _gather_updates(operand, indices, get_aval(updates).shape, dn, mode, 0)
        set_params = dict(params, update_jaxpr=None, update_consts=())
        out = ad.add_tangents(out, scatter_p.bind(_ad.zeros(get_aval(ans)), indices,
                                                  _ad.mul(x_at, tu), **set_params))
    return ans, out


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, **params: Any
                           ) -> list:
    # Linear in the operand alone (the JVP binds it on t_x with the primal updates):
    # out = x * m with m = the product of the updates at each place, so ct_x = ct * m.
    if ad.is_undefined_primal(updates):
        raise NotImplementedError("scatter-mul is not linear in its updates")
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


gather_p.is_linear = True
gather_p.def_jvp(_gather_jvp)
gather_p.def_transpose(_gather_transpose)
for _prim, _transpose in ((scatter_add_p, _scatter_add_transpose),
                          (scatter_p, _scatter_transpose)):
    _prim.is_linear = True
    _prim.def_jvp(_linear_scatter_jvp(_prim))
    _prim.def_transpose(_transpose)
scatter_min_p.def_jvp(_scatter_extremum_jvp(scatter_min_p))
scatter_max_p.def_jvp(_scatter_extremum_jvp(scatter_max_p))
scatter_mul_p.def_jvp(_scatter_mul_jvp)
scatter_mul_p.def_transpose(_scatter_mul_transpose)

from ember.prims import _gather_scatter_batching  # noqa: E402, F401  (vmap rules)
