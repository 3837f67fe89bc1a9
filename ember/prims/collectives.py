"""Collectives over named axes: psum, pmax, pmin, all_gather, axis_index (JAX's primitives
and params), which vmap's `axis_name` gives a meaning.

Input: `psum[axes=(...) axis_index_groups=None] x` (likewise pmax, pmin),
`all_gather[all_gather_dimension axis_index_groups axis_name axis_size tiled] x`,
`axis_index[axis_name]`. An axis is a name (a vmap's `axis_name`) or, for the reductions,
an int: a positional axis of x itself, which the batching rule makes (JAX's
`psum[axes=(0,)]`: the example axis of a mapped operand, reduced like reduce_sum).
Output: per example, the reduction over every example of the named axes (the same value in
each), the stack of every example's x (all_gather; `tiled` concatenates instead), or the
example's own index.
Semantics under vmap (the batching rules, with B the axis size and x's batch axis d):
- psum of mapped x: one psum with d as a positional axis in place of the name; the result is
  the same for every example, so it is unmapped. Of unmapped x: B * x. pmax/pmin: the
  positional reduction; of unmapped x: x itself.
- all_gather of mapped x: x with its batch axis moved to `all_gather_dimension` (folded into
  the next axis when tiled), unmapped; of unmapped x: x broadcast B times there.
- axis_index: iota(B), mapped along 0.
- A collective naming another vmap's axis is batched along its own batch axis and left
  to that vmap (core/trace.py's bind finds it).
Under shard_map: the body is traced with the mesh axis names bound (their sizes from the
mesh), so the equations stay in the per-device jaxpr, and ember/spmd's runtime does them on
the devices' buffers (or the one-program form turns the mesh axes into named vmaps).
Invariants: a name no enclosing vmap or shard_map defines is an error, with JAX's texts:
"unbound axis name: i" (ember.lax, before binding: concrete operands and all_gather), and
"Found an unbound axis name: i. To fix this, please call psum under `jax.shard_map`." from
the abstract eval (staging) and the NumPy rule (eager). A named axis never reaches the
NumPy rule or the lowering otherwise (the vmap that defines it removes it), so those raise
the same error;
only positional reductions run there (as reduce_sum / reduce_max / reduce_min).
`axis_index_groups` is unsupported under vmap, as in JAX.
Autodiff: psum and all_gather are linear. psum's transpose is psum over the named axes
(and the broadcast back over positional ones), JAX's rule; all_gather's is each example's
block of the psum of the cotangents (JAX's psum_scatter). pmax/pmin: the tangent is the mean
of the tangents of the examples holding the extremum (as reduce_max's rule).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import (
    AxisData,
    bound_axis_names,
    named_axis_trace,
    not_mapped,
    spmd_axes,
)
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.ir import Instruction
from ember.prims import _ad
from ember.prims import collectives_manual as manual
from ember.prims import reductions as Rd
from ember.prims.gather_scatter import GatherDimensionNumbers, GatherScatterMode, gather_p
from ember.prims.shape_ops import iota_p


def as_axes(axis_name: Any) -> tuple[Any, ...]:
    """An axis name or a tuple/list of them, as a tuple."""
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def unbound_error(name: Any, what: str) -> NameError:
    """JAX's error for a collective naming an axis no enclosing vmap defines."""
    return NameError(f"Found an unbound axis name: {name}. To fix this, please call {what} "
                     "under `jax.shard_map`.")


def axis_size(name: Any) -> int:
    """The size of the innermost enclosing vmap named `name` (or of the mesh axis `name` of
    the shard_map body being traced); NameError (JAX's text) if none."""
    trace = named_axis_trace((name,))
    if trace is None:
        spmd = spmd_axes()
        if name in spmd:
            return spmd[name]
        raise NameError(f"unbound axis name: {name}")
    return trace.axis.size


def _check_bound(names: Sequence[Any], what: str) -> None:
    bound = bound_axis_names()
    for name in names:
        if name not in bound:
            raise unbound_error(name, what)


def _named(axes: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(a for a in axes if not isinstance(a, int))


def _positional(axes: Sequence[Any]) -> tuple[int, ...]:
    return tuple(a for a in axes if isinstance(a, int))


# ---------------------------------------------------------------------------------------------
# psum, pmax, pmin
# ---------------------------------------------------------------------------------------------

def _define_reduction(name: str, reduce_p: Primitive,
                      if_unmapped: Callable[[Any, int], Any]) -> Primitive:
    prim = Primitive(name)
    prim.axis_name_param = "axes"

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axes: tuple, axis_index_groups: Any) -> ShapedArray:
        _check_bound(_named(axes), "psum")  # (JAX's text names psum for pmax/pmin too)
        pos = _positional(axes)
        shape = tuple(s for i, s in enumerate(x.shape) if i not in pos)
        return ShapedArray(shape, x.dtype, x.weak_type)

    @prim.def_impl
    def _impl(x: np.ndarray, *, axes: tuple, axis_index_groups: Any) -> np.ndarray:
        if _named(axes):
            raise unbound_error(_named(axes)[0], "psum")
        return reduce_p.impl(x, axes=_positional(axes))

    @prim.def_lowering
    def _lower(ctx: Any, x: Instruction, *, axes: tuple, axis_index_groups: Any
               ) -> Instruction:
        if _named(axes) and manual.manual_axes(ctx) is not None:  # (one device's module)
            if _positional(axes):  # (the named axes leave the shape: ctx's out aval fits)
                x = reduce_p.lowering(ctx, x, axes=_positional(axes))
            return manual.reduction(ctx, x, name, _named(axes), axis_index_groups)
        if _named(axes):  # (the abstract eval raised already, unless the vmap is gone)
            raise unbound_error(_named(axes)[0], "psum")
        return reduce_p.lowering(ctx, x, axes=_positional(axes))

    def _batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
               axes: tuple, axis_index_groups: Any) -> tuple[Any, int | None]:
        (x,), (d,) = args, dims
        if axis_index_groups is not None:
            raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                      "Please open a feature request!")
        if axis.name not in axes:
            # another vmap's axis: reduce each example alone, positional axes past d shift
            assert d is not not_mapped
            shifted = tuple(a + (a >= d) if isinstance(a, int) else a for a in axes)
            return prim.bind(x, axes=shifted, axis_index_groups=None), d
        if d is not_mapped:
            out = if_unmapped(x, axis.size)
            rest = tuple(a for a in axes if a != axis.name)
            return (prim.bind(out, axes=rest, axis_index_groups=None) if rest else out), None
        # the name becomes the positional batch axis d, in one reduction with the rest
        new = tuple(d if a == axis.name else a + (a >= d) if isinstance(a, int) else a
                    for a in axes)
        return prim.bind(x, axes=new, axis_index_groups=None), None

    prim.def_batch(_batch)
    return prim


def _times_size(x: Any, size: int) -> Any:
    return _ad.mul(np.array(size, get_aval(x).dtype), x)


psum_p = _define_reduction("psum", Rd.reduce_sum_p, _times_size)
pmax_p = _define_reduction("pmax", Rd.reduce_max_p, lambda x, size: x)
pmin_p = _define_reduction("pmin", Rd.reduce_min_p, lambda x, size: x)


def _psum_transpose(ct: Any, x: Any, *, axes: tuple, axis_index_groups: Any) -> list:
    # positional axes: the broadcast back (reduce_sum's transpose); named ones: psum again
    # (JAX reads psum as a psum and a broadcast to every example)
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    pos = _positional(axes)
    if pos:
        kept = tuple(i for i in range(x.aval.ndim) if i not in pos)
        ct = _ad.broadcast_in_dim(ct, x.aval.shape, kept)
    named = _named(axes)
    return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups) if named
            else ct]


ad.deflinear(psum_p)
psum_p.def_transpose(_psum_transpose)


def _extremum_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: list, tangents: list, *, axes: tuple, axis_index_groups: Any
             ) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes, axis_index_groups=axis_index_groups)
        if isinstance(t, ad.Zero):
            return ans, ad.Zero(get_aval(ans))
        # t_out = sum(t * [x == ans]) / sum([x == ans]) over the same axes
        aval = get_aval(x)
        pos = _positional(axes)
        kept = tuple(i for i in range(aval.ndim) if i not in pos)
        wide = _ad.broadcast_in_dim(ans, aval.shape, kept) if pos else ans
        hit = _ad.convert(_ad.compare("eq", x, wide), aval.dtype)
        num = psum_p.bind(_ad.mul(t, hit), axes=axes, axis_index_groups=axis_index_groups)
        den = psum_p.bind(hit, axes=axes, axis_index_groups=axis_index_groups)
        return ans, _ad.div(num, den)
    return rule


pmax_p.def_jvp(_extremum_jvp(pmax_p))
pmin_p.def_jvp(_extremum_jvp(pmin_p))


# ---------------------------------------------------------------------------------------------
# all_gather
# ---------------------------------------------------------------------------------------------

all_gather_p = Primitive("all_gather")
all_gather_p.axis_name_param = "axis_name"


def _gathered_shape(shape: tuple[int, ...], dim: int, size: int, tiled: bool
                    ) -> tuple[int, ...]:
    if tiled:
        return shape[:dim] + (shape[dim] * size,) + shape[dim + 1:]
    return shape[:dim] + (size,) + shape[dim:]


@all_gather_p.def_abstract_eval
def _all_gather_abstract(x: ShapedArray, *, all_gather_dimension: int, axis_name: tuple,
                         axis_index_groups: Any, axis_size: int, tiled: bool) -> ShapedArray:
    _check_bound(axis_name, "all_gather")
    return ShapedArray(_gathered_shape(x.shape, all_gather_dimension, axis_size, tiled),
                       x.dtype, x.weak_type)


@all_gather_p.def_impl
def _all_gather_impl(x: np.ndarray, *, axis_name: tuple, **params: Any) -> np.ndarray:
    raise unbound_error(axis_name[0], "all_gather")


@all_gather_p.def_lowering
def _all_gather_lower(ctx: Any, x: Instruction, *, axis_name: tuple, **params: Any
                      ) -> Instruction:
    if manual.manual_axes(ctx) is not None:
        return manual.all_gather(ctx, x, axis_name=axis_name, **params)
    raise unbound_error(axis_name[0], "all_gather")


def _all_gather_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                      all_gather_dimension: int, axis_name: tuple, axis_index_groups: Any,
                      axis_size: int, tiled: bool) -> tuple[Any, int | None]:
    (x,), (d,) = args, dims
    dim = all_gather_dimension
    if axis.name not in axis_name:
        # another vmap's axis: gather each example alone, the batch axis in front
        x = _ad.moveaxis(x, d, 0)
        return all_gather_p.bind(x, all_gather_dimension=dim + 1, axis_name=axis_name,
                                 axis_index_groups=axis_index_groups, axis_size=axis_size,
                                 tiled=tiled), 0
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap")
    if len(axis_name) > 1:
        raise NotImplementedError("all_gather over several vmap axes at once is not "
                                  "supported (nor in JAX)")
    y = (_ad.broadcast_axis(x, axis.size, dim) if d is not_mapped
         else _ad.moveaxis(x, d, dim))
    if tiled:  # fold the stacked axis into the next one
        shape = get_aval(y).shape
        y = _ad.reshape(y, shape[:dim] + (shape[dim] * shape[dim + 1],) + shape[dim + 2:])
    return y, None


all_gather_p.def_batch(_all_gather_batch)


def _all_gather_transpose(ct: Any, x: Any, *, all_gather_dimension: int, axis_name: tuple,
                          axis_index_groups: Any, axis_size: int, tiled: bool) -> list:
    # Example k's block of the gathered value is its x: its cotangent is block k of the sum
    # of every example's cotangent.
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    dim = all_gather_dimension
    total = psum_p.bind(ct, axes=axis_name, axis_index_groups=axis_index_groups)
    chunk = x.aval.shape[dim] if tiled else 1
    start = axis_index_p.bind(axis_name=axis_name[0])
    if chunk != 1:
        start = _ad.mul(start, np.int32(chunk))
    vec = _ad.add(np.zeros((1,), np.int32), start)  # the start as an index vector
    shape = get_aval(total).shape
    sizes = tuple(chunk if i == dim else n for i, n in enumerate(shape))
    offset = tuple(range(len(shape))) if tiled else tuple(range(len(shape) - 1))
    dn = GatherDimensionNumbers(offset_dims=offset,
                                collapsed_slice_dims=() if tiled else (dim,),
                                start_index_map=(dim,))
    return [gather_p.bind(total, vec, dimension_numbers=dn, slice_sizes=sizes,
                          indices_are_sorted=True, unique_indices=True,
                          mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)]


ad.deflinear(all_gather_p)
all_gather_p.def_transpose(_all_gather_transpose)


# ---------------------------------------------------------------------------------------------
# axis_index
# ---------------------------------------------------------------------------------------------

axis_index_p = Primitive("axis_index")
axis_index_p.axis_name_param = "axis_name"


@axis_index_p.def_abstract_eval
def _axis_index_abstract(*, axis_name: Any) -> ShapedArray:
    _check_bound((axis_name,), "axis_index")
    return ShapedArray((), np.dtype(np.int32), False)


@axis_index_p.def_impl
def _axis_index_impl(*, axis_name: Any) -> np.ndarray:
    raise unbound_error(axis_name, "axis_index")


@axis_index_p.def_lowering
def _axis_index_lower(ctx: Any, *, axis_name: Any) -> Instruction:
    if manual.manual_axes(ctx) is not None:
        return manual.axis_index(ctx, axis_name=axis_name)
    raise unbound_error(axis_name, "axis_index")


def _axis_index_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                      axis_name: Any) -> tuple[Any, int]:
    return iota_p.bind(dtype=np.dtype(np.int32), shape=(axis.size,), dimension=0,
                       sharding=None), 0


axis_index_p.def_batch(_axis_index_batch)
ad.defjvp_zero(axis_index_p)
