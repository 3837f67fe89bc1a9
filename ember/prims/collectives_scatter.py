"""The collectives that move blocks between the members of a named axis: reduce_scatter
(`lax.psum_scatter`), ppermute and all_to_all (JAX's primitives and params).

Input: `reduce_scatter[axis_name scatter_dimension axis_index_groups axis_size tiled] x`,
`ppermute[axis_name perm] x`, `all_to_all[axis_name split_axis concat_axis
axis_index_groups tiled] x`. Output, for member i of the axis (of size n), with x_j member
j's operand:
- reduce_scatter: block i (along `scatter_dimension`, n equal blocks) of sum_j x_j; not
  tiled, the dimension has size n and is dropped (block i is x_j[..., i, ...]).
- ppermute: x_s for the pair (s, i) of `perm`; zeros where no pair sends to i.
- all_to_all: x_j cut into n blocks along `split_axis`; member i receives block i of every
  x_j and concatenates them along `concat_axis`, j major (the primitive is always "tiled":
  lax.all_to_all inserts and removes the unit axes of the untiled form).
Semantics under vmap (batching rules) give each member's value from the stack of all
members' operands along the batch axis; under `ember.shard_map` the runtime exchanges the
devices' buffers (ember/spmd/). A name neither defines raises JAX's unbound-axis error
(abstract eval, NumPy rule, lowering), as the other collectives.
Under jit(shard_map), whose one-program form pins the mesh axes to devices, ppermute over
such an axis is `mesh_permute` instead (collectives_permute.py: the same values, a form the
SPMD partitioner makes a collective-permute).
Autodiff: all three are linear. reduce_scatter transposes to all_gather, ppermute to the
inverse permutation, all_to_all to all_to_all with the two axes swapped (JAX's rules).
Invariant: only one named axis per collective under vmap (several names at once are the
shard_map runtime's; JAX's vmap has the same limit for these).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.ir import Instruction
from ember.prims import _ad
from ember.prims import collectives_manual as manual
from ember.prims.collectives import _check_bound, all_gather_p, unbound_error
from ember.prims.collectives_permute import is_pinned, mesh_permute_p
from ember.prims.gather_scatter import GatherDimensionNumbers, GatherScatterMode, gather_p

# ---------------------------------------------------------------------------------------------
# shared pieces
# ---------------------------------------------------------------------------------------------


def _single_name(axis_name: tuple, axis: AxisData, what: str) -> None:
    if len(axis_name) > 1 and is_pinned(axis.name):  # (jit(shard_map)'s mesh axes)
        raise NotImplementedError(f"{what} over several mesh axes at once {axis_name} inside "
                                  "jit(shard_map(...)) is not supported yet (eager shard_map "
                                  "runs it); use one mesh axis per collective under jit")
    if len(axis_name) > 1:
        raise NotImplementedError(f"{what} over several named axes at once under vmap is not "
                                  "supported (as in JAX); use one axis name, or shard_map")


def _unbound_rules(prim: Primitive, what: str) -> None:
    """The NumPy rule and the lowering: reached only when no vmap or shard_map defines
    the axis (they remove it), so JAX's unbound-axis error."""

    def _names(params: dict) -> tuple:
        return params["axis_name"]

    @prim.def_impl
    def _impl(x: np.ndarray, **params: Any) -> np.ndarray:
        raise unbound_error(_names(params)[0], what)

    @prim.def_lowering
    def _lower(ctx: Any, x: Instruction, **params: Any) -> Instruction:
        if manual.manual_axes(ctx) is not None:  # (a shard_map body, one device's module)
            return getattr(manual, prim.name)(ctx, x, **params)
        raise unbound_error(_names(params)[0], what)


def take_rows(x: Any, rows: Sequence[int]) -> Any:
    """x[rows] along axis 0, for constant row numbers (a gather of whole rows)."""
    shape = get_aval(x).shape
    idx = np.asarray(rows, np.int32).reshape(len(rows), 1)
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape))),
                                collapsed_slice_dims=(0,), start_index_map=(0,))
    return gather_p.bind(x, idx, dimension_numbers=dn, slice_sizes=(1,) + shape[1:],
                         indices_are_sorted=False, unique_indices=False,
                         mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)


def _example_aval(x: Any, d: int | None) -> ShapedArray:
    """One example's abstract value of x (batch axis d)."""
    aval = get_aval(x)
    if d is not_mapped:
        return aval
    return ShapedArray(aval.shape[:d] + aval.shape[d + 1:], aval.dtype, aval.weak_type)


def _front(x: Any, d: int | None, size: int) -> Any:
    """x with its batch axis at 0 (broadcast there when unmapped)."""
    if d is not_mapped:
        return _ad.broadcast_axis(x, size, 0)
    return _ad.moveaxis(x, d, 0)


# ---------------------------------------------------------------------------------------------
# reduce_scatter (lax.psum_scatter)
# ---------------------------------------------------------------------------------------------

reduce_scatter_p = Primitive("reduce_scatter")
reduce_scatter_p.axis_name_param = "axis_name"


@reduce_scatter_p.def_abstract_eval
def _reduce_scatter_abstract(x: ShapedArray, *, axis_name: tuple, scatter_dimension: int,
                             axis_index_groups: Any, axis_size: int, tiled: bool
                             ) -> ShapedArray:
    _check_bound(axis_name, "reduce_scatter")
    shape = list(x.shape)
    n = shape[scatter_dimension]
    if tiled:
        if n % axis_size:
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size {n} must "
                             f"be divisible by shard_count {axis_size}")
        shape[scatter_dimension] = n // axis_size
    else:
        if n != axis_size:
            raise ValueError(f"reduce_scatter operand scatter dimension size {n} must match "
                             f"shard count {axis_size}")
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


_unbound_rules(reduce_scatter_p, "reduce_scatter")


def _reduce_scatter_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                          axis_name: tuple, scatter_dimension: int, axis_index_groups: Any,
                          axis_size: int, tiled: bool) -> tuple[Any, int | None]:
    (x,), (d,) = args, dims
    sd = scatter_dimension
    if axis.name not in axis_name:  # another vmap's axis: each example on its own
        return reduce_scatter_p.bind(
            _ad.moveaxis(x, d, 0), axis_name=axis_name, scatter_dimension=sd + 1,
            axis_index_groups=axis_index_groups, axis_size=axis_size, tiled=tiled), 0
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    _single_name(axis_name, axis, "psum_scatter")
    _reduce_scatter_abstract(_example_aval(x, d), axis_name=axis_name,  # (its shape checks)
                             scatter_dimension=sd, axis_index_groups=None,
                             axis_size=axis.size, tiled=tiled)
    # every member's sum, then member i keeps block i: the block axis becomes the batch axis
    if d is not_mapped:
        total = _ad.mul(np.array(axis.size, get_aval(x).dtype), x)
    else:
        total = _ad.reduce_sum(x, (d,))
    if tiled:
        shape = get_aval(total).shape
        total = _ad.reshape(total, shape[:sd] + (axis.size, shape[sd] // axis.size)
                            + shape[sd + 1:])
    return total, sd


reduce_scatter_p.def_batch(_reduce_scatter_batch)


def _reduce_scatter_transpose(ct: Any, x: Any, *, axis_name: tuple, scatter_dimension: int,
                              axis_index_groups: Any, axis_size: int, tiled: bool) -> list:
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                              axis_index_groups=axis_index_groups, axis_size=axis_size,
                              tiled=tiled)]


ad.deflinear(reduce_scatter_p)
reduce_scatter_p.def_transpose(_reduce_scatter_transpose)


# ---------------------------------------------------------------------------------------------
# ppermute
# ---------------------------------------------------------------------------------------------

ppermute_p = Primitive("ppermute")
ppermute_p.axis_name_param = "axis_name"


@ppermute_p.def_abstract_eval
def _ppermute_abstract(x: ShapedArray, *, axis_name: tuple, perm: tuple) -> ShapedArray:
    _check_bound(axis_name, "ppermute")
    return x


_unbound_rules(ppermute_p, "ppermute")


def _ppermute_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                    axis_name: tuple, perm: tuple) -> tuple[Any, int | None]:
    (x,), (d,) = args, dims
    if axis.name not in axis_name:  # elementwise in another vmap's axis
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    _single_name(axis_name, axis, "ppermute")
    if is_pinned(axis.name):  # (jit(shard_map)'s mesh axis: one the partitioner can move)
        if d is not_mapped:
            x, d = _ad.broadcast_axis(x, axis.size, 0), 0
        return mesh_permute_p.bind(x, axis=d, perm=perm), d
    # member t reads member s's value for each pair (s, t); the others read zeros
    src = {t: s for s, t in perm}
    xs = _front(x, d, axis.size)
    rows = [src.get(t, 0) for t in range(axis.size)]
    moved = take_rows(xs, rows)
    if len(src) == axis.size:
        return moved, 0
    aval = get_aval(moved)
    keep = np.array([t in src for t in range(axis.size)]).reshape(
        (axis.size,) + (1,) * (aval.ndim - 1))
    keep = np.broadcast_to(keep, aval.shape)
    return _ad.select(keep, moved, _ad.zeros(ShapedArray(aval.shape, aval.dtype))), 0


ppermute_p.def_batch(_ppermute_batch)


def _ppermute_transpose(ct: Any, x: Any, *, axis_name: tuple, perm: tuple) -> list:
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))]


ad.deflinear(ppermute_p)
ppermute_p.def_transpose(_ppermute_transpose)


# ---------------------------------------------------------------------------------------------
# all_to_all
# ---------------------------------------------------------------------------------------------

all_to_all_p = Primitive("all_to_all")
all_to_all_p.axis_name_param = "axis_name"


def _group_size(axis_name: tuple) -> int:
    from ember.prims.collectives import axis_size
    size = 1
    for name in axis_name:
        size *= axis_size(name)
    return size


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract(x: ShapedArray, *, axis_name: tuple, split_axis: int,
                         concat_axis: int, axis_index_groups: Any, tiled: bool
                         ) -> ShapedArray:
    _check_bound(axis_name, "all_to_all")
    n = _group_size(axis_name)
    shape = list(x.shape)
    if shape[split_axis] % n:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
                         f"divisible by the size of the named axis {axis_name} ({n})")
    shape[split_axis] //= n
    shape[concat_axis] *= n
    return ShapedArray(tuple(shape), x.dtype, False)


_unbound_rules(all_to_all_p, "all_to_all")


def _all_to_all_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                      axis_name: tuple, split_axis: int, concat_axis: int,
                      axis_index_groups: Any, tiled: bool) -> tuple[Any, int | None]:
    (x,), (d,) = args, dims
    if axis.name not in axis_name:  # another vmap's axis: each example on its own
        return all_to_all_p.bind(_ad.moveaxis(x, d, 0), axis_name=axis_name,
                                 split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 axis_index_groups=axis_index_groups, tiled=tiled), 0
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    _single_name(axis_name, axis, "all_to_all")
    _all_to_all_abstract(_example_aval(x, d), axis_name=axis_name, split_axis=split_axis,
                         concat_axis=concat_axis, axis_index_groups=None, tiled=tiled)
    n = axis.size
    xs = _front(x, d, n)  # (j, *s): member j's operand
    shape = get_aval(xs).shape
    sa = split_axis + 1
    # cut the split axis into (i, chunk): xs[j, ..., i, chunk, ...]
    cut = _ad.reshape(xs, shape[:sa] + (n, shape[sa] // n) + shape[sa + 1:])
    # member i's result: concat over j along the concat axis of block i of x_j. Move i to
    # the front (the new batch axis) and j just before the concat axis, then merge j into it
    ndim = len(shape) + 1
    i_pos = sa
    rest = [a for a in range(1, ndim) if a != i_pos]  # per-example axes of the cut form
    # positions of the per-example axes after removing i: the concat axis's position
    cat_at = rest[concat_axis]
    order = [i_pos]
    for a in rest:
        if a == cat_at:
            order.append(0)  # j goes just before the concat axis: j major
        order.append(a)
    moved = _ad.transpose(cut, tuple(order))
    mshape = get_aval(moved).shape
    k = order.index(0)
    out = _ad.reshape(moved, mshape[:k] + (mshape[k] * mshape[k + 1],) + mshape[k + 2:])
    return out, 0


all_to_all_p.def_batch(_all_to_all_batch)


def _all_to_all_transpose(ct: Any, x: Any, *, axis_name: tuple, split_axis: int,
                          concat_axis: int, axis_index_groups: Any, tiled: bool) -> list:
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    return [all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                              concat_axis=split_axis, axis_index_groups=axis_index_groups,
                              tiled=tiled)]


ad.deflinear(all_to_all_p)
all_to_all_p.def_transpose(_all_to_all_transpose)
