"""Shape primitives that move no arithmetic: broadcast_in_dim, reshape, squeeze,
transpose, rev, iota.

Params as JAX 0.10.2 prints them: `broadcast_in_dim[broadcast_dimensions=(0,)]` (its shape
and sharding params are hidden, as is an empty broadcast_dimensions), `reshape[dimensions=None
new_sizes=(6,) sharding=None]` (`dimensions`: None, or a permutation of the operand's axes
applied before the row-major regrouping: a transpose, then the reshape, in HLO),
`squeeze[dimensions=(0,)]`, `transpose[permutation=(1, 0)]`, `rev[dimensions=(0,)]`,
`iota[dimension=0 dtype=float32 shape=(3,) sharding=None]`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.hlo.shape import Shape
from ember.prims import _ad
from ember.prims import _batching as B
from ember.prims import _lower as L

broadcast_in_dim_p = Primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract(x: ShapedArray, *, shape: tuple[int, ...],
                               broadcast_dimensions: tuple[int, ...],
                               sharding: None = None) -> ShapedArray:
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {broadcast_dimensions} for "
                        f"operand ndim {x.ndim}.")
    if any(not 0 <= d < len(shape) for d in broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be strictly increasing "
                        f"dimensions of the output shape {shape}; got {broadcast_dimensions}.")
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] not in (1, shape[d]):
            raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, or be "
                            f"equal to their corresponding dimensions in the target broadcast "
                            f"shape; got operand of shape {x.shape}, target broadcast shape "
                            f"{shape}, broadcast_dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x: np.ndarray, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...],
                           sharding: None = None) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


@broadcast_in_dim_p.def_pp_params
def _pp_broadcast_in_dim(params: dict) -> dict:
    dims = params["broadcast_dimensions"]
    return {"broadcast_dimensions": dims} if dims else {}


@broadcast_in_dim_p.def_lowering
def _broadcast_in_dim_lowering(ctx: Any, x: Any, *, shape: tuple[int, ...],
                               broadcast_dimensions: tuple[int, ...], sharding: Any = None
                               ) -> Any:
    # HLO broadcast cannot stretch a size-1 dimension: drop those first with a reshape.
    aval = ctx.avals_in[0]
    kept = [i for i, d in enumerate(broadcast_dimensions) if aval.shape[i] == shape[d]]
    if len(kept) != aval.ndim:
        x = ctx.b.reshape(x, tuple(aval.shape[i] for i in kept))
    return ctx.b.broadcast(x, shape, tuple(broadcast_dimensions[i] for i in kept))


reshape_p = Primitive("reshape")


def _check_dimensions(x: ShapedArray, dimensions: tuple[int, ...] | None) -> None:
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, got "
                        f"dimensions {tuple(dimensions)} for shape {x.shape}.")


@reshape_p.def_abstract_eval
def _reshape_abstract(x: ShapedArray, *, new_sizes: tuple[int, ...],
                      dimensions: tuple[int, ...] | None = None, sharding: None = None
                      ) -> ShapedArray:
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    _check_dimensions(x, dimensions)
    if math.prod(new_sizes) != x.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for "
                        f"shape {x.shape}.")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


@reshape_p.def_impl
def _reshape_impl(x: np.ndarray, *, new_sizes: tuple[int, ...],
                  dimensions: tuple[int, ...] | None = None, sharding: None = None
                  ) -> np.ndarray:
    # (dimensions: the operand's axes permuted first, then its row-major order regrouped;
    # np.reshape copies the transposed view in that order)
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return x.reshape(new_sizes)


@reshape_p.def_lowering
def _reshape_lowering(ctx: Any, x: Any, *, dimensions: tuple[int, ...] | None = None,
                      **params: Any) -> Any:
    # HLO's reshape takes no permutation: a transpose first (as XLA lowers JAX's)
    if dimensions is not None and tuple(dimensions) != tuple(range(len(dimensions))):
        x = ctx.b.transpose(x, tuple(int(d) for d in dimensions))
    return ctx.b.reshape(x, ctx.aval_out.shape)


squeeze_p = Primitive("squeeze")


@squeeze_p.def_lowering
def _squeeze_lowering(ctx: Any, x: Any, **params: Any) -> Any:
    return ctx.b.reshape(x, ctx.aval_out.shape)



@squeeze_p.def_abstract_eval
def _squeeze_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                             f"to one, got shape={x.shape} and dimensions={dimensions}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                       x.dtype, x.weak_type)


@squeeze_p.def_impl
def _squeeze_impl(x: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return x.reshape([s for i, s in enumerate(x.shape) if i not in dimensions])


transpose_p = Primitive("transpose")


@transpose_p.def_abstract_eval
def _transpose_abstract(x: ShapedArray, *, permutation: tuple[int, ...]) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


@transpose_p.def_impl
def _transpose_impl(x: np.ndarray, *, permutation: tuple[int, ...]) -> np.ndarray:
    return np.transpose(x, permutation)


@transpose_p.def_lowering
def _transpose_lowering(ctx: Any, x: Any, *, permutation: tuple[int, ...]) -> Any:
    return ctx.b.transpose(x, permutation)


rev_p = Primitive("rev")


@rev_p.def_abstract_eval
def _rev_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    if any(not 0 <= d < x.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique and within the operand's rank, got "
                        f"{dimensions} for shape {x.shape}")
    return x


@rev_p.def_impl
def _rev_impl(x: np.ndarray, *, dimensions: tuple[int, ...]) -> np.ndarray:
    return np.flip(x, dimensions) if dimensions else x


@rev_p.def_lowering
def _rev_lowering(ctx: Any, x: Any, *, dimensions: tuple[int, ...]) -> Any:
    return ctx.b.reverse(x, dimensions) if dimensions else x


iota_p = Primitive("iota")


@iota_p.def_abstract_eval
def _iota_abstract(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
                   sharding: None = None) -> ShapedArray:
    if not 0 <= dimension < len(shape):
        raise TypeError(f"iota dimension must be in range [0, {len(shape)}), got {dimension}")
    return ShapedArray(shape, dtype, False)


@iota_p.def_impl
def _iota_impl(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
               sharding: None = None) -> np.ndarray:
    line = np.arange(shape[dimension]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


@iota_p.def_lowering
def _iota_lowering(ctx: Any, *, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
                   sharding: Any = None) -> Any:
    return ctx.b.iota(Shape(L.et(dtype), shape), dimension)


# -- autodiff rules ------------------------------------------------------------------------------
# Every shape primitive is linear; each transpose undoes the data movement, and
# broadcast_in_dim's sums what the broadcast copied.

def _broadcast_in_dim_transpose(ct: Any, x: Any, *, shape: tuple[int, ...],
                                broadcast_dimensions: tuple[int, ...], sharding: Any = None
                                ) -> list:
    # Sum over the new dimensions and over the operand's size-1 dimensions that were
    # stretched, then restore the operand's size-1 dimensions with a reshape.
    operand = x.aval.shape
    new = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    stretched = [d for i, d in enumerate(broadcast_dimensions)
                 if operand[i] == 1 and shape[d] != 1]
    axes = tuple(sorted(new + stretched))
    if not axes:  # (an identity broadcast: JAX's rule still stages its empty sum)
        from ember.prims.reductions import reduce_sum_p
        return [reduce_sum_p.bind(ct, axes=(), out_sharding=None)]
    return [_ad.reshape(_ad.reduce_sum(ct, axes), operand)]


def _reshape_transpose(ct: Any, x: Any, **params: Any) -> list:
    return [_ad.reshape(ct, x.aval.shape)]


def _reshape_dims_transpose(ct: Any, x: Any, *, dimensions: tuple[int, ...] | None = None,
                            **params: Any) -> list:
    # The undo of a reshape after the permutation: back to the permuted shape, then the
    # inverse permutation (JAX's rule).
    if dimensions is None:
        return _reshape_transpose(ct, x)
    permuted = tuple(x.aval.shape[d] for d in dimensions)
    return [_ad.transpose(_ad.reshape(ct, permuted),
                          tuple(int(i) for i in np.argsort(dimensions)))]


def _squeeze_transpose(ct: Any, x: Any, *, dimensions: tuple[int, ...]) -> list:
    # The squeezed axes come back as size-1 axes of a broadcast (an expand_dims, as JAX's
    # rule writes it): the cotangent's axes land on the kept positions.
    if not dimensions:
        return [ct]
    shape = x.aval.shape
    squeezed = {d % len(shape) for d in dimensions}
    kept = tuple(d for d in range(len(shape)) if d not in squeezed)
    return [_ad.broadcast_in_dim(ct, shape, kept)]


def _transpose_transpose(ct: Any, x: Any, *, permutation: tuple[int, ...]) -> list:
    return [_ad.transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


def _rev_transpose(ct: Any, x: Any, *, dimensions: tuple[int, ...]) -> list:
    return [rev_p.bind(ct, dimensions=dimensions)]


for _p, _t in ((broadcast_in_dim_p, _broadcast_in_dim_transpose),
               (reshape_p, _reshape_dims_transpose), (squeeze_p, _squeeze_transpose),
               (transpose_p, _transpose_transpose), (rev_p, _rev_transpose)):
    ad.deflinear(_p)
    _p.def_transpose(_t)
ad.defjvp_zero(iota_p)  # (no operands: its value is a constant)


# -- batching rules ------------------------------------------------------------------------------
# Each rule keeps the batch axis where the operand has it when the primitive can carry it
# there (no transpose), shifting the params' axes past it (_batching.shift_axes). iota has
# no rule: with no operands it can never see a mapped one (core/batching.py runs a primitive
# whose operands are all unmapped unbatched), so vmap never reaches one.

def _broadcast_in_dim_batch(axis: AxisData, args: list, dims: list, *,
                            shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...],
                            sharding: Any = None) -> tuple[Any, int]:
    # Operand dim i goes to output dim broadcast_dimensions[i]; the batch axis (operand dim
    # b) goes just before where operand dim b goes (after the last one when b is last), so
    # the dimension map stays increasing and the operand needs no transpose.
    (x,), (b,) = args, dims
    if b == 0:  # JAX's form (its dims NumPy integers, as JAX's np.add makes them)
        return broadcast_in_dim_p.bind(
            x, shape=(axis.size, *shape),
            broadcast_dimensions=(0, *np.add(1, np.asarray(broadcast_dimensions, np.int64))),
            sharding=sharding), 0
    out_b = broadcast_dimensions[b] if b < len(broadcast_dimensions) else len(shape)
    new_dims = (*broadcast_dimensions[:b], out_b,
                *(d + 1 for d in broadcast_dimensions[b:]))
    new_shape = (*shape[:out_b], axis.size, *shape[out_b:])
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims,
                                   sharding=sharding), out_b


def _reshape_batch(axis: AxisData, args: list, dims: list, *, new_sizes: tuple[int, ...],
                   dimensions: tuple[int, ...] | None = None, sharding: Any = None
                   ) -> tuple[Any, int]:
    # A reshape regroups the row-major order of each example's elements: with the batch
    # axis first, each example is one contiguous block and the reshape keeps it one (a
    # permutation keeps the batch axis first and shifts the others past it).
    x = batching.moveaxis(args[0], dims[0], 0)
    if dimensions is not None:
        dimensions = (0, *(int(d) + 1 for d in dimensions))
    return reshape_p.bind(x, new_sizes=(axis.size, *new_sizes), dimensions=dimensions,
                          sharding=sharding), 0


def _squeeze_batch(axis: AxisData, args: list, dims: list, *, dimensions: tuple[int, ...]
                   ) -> tuple[Any, int]:
    # the batch axis first, as JAX's rule (and its text: a transpose where it was not)
    x = batching.moveaxis(args[0], dims[0], 0)
    return squeeze_p.bind(x, dimensions=tuple(int(d) + 1 for d in dimensions)), 0


def _transpose_batch(axis: AxisData, args: list, dims: list, *, permutation: tuple[int, ...]
                     ) -> tuple[Any, int]:
    # The batch axis goes first, as JAX's rule (and text) has it: perm' = (b, perm with
    # every entry shifted past b); one transpose either way.
    (x,), (b,) = args, dims
    perm = (b, *(i if i < b else i + 1 for i in permutation))
    return _ad.transpose(x, perm), 0


def _rev_batch(axis: AxisData, args: list, dims: list, *, dimensions: tuple[int, ...]
               ) -> tuple[Any, int]:
    (x,), (b,) = args, dims
    return rev_p.bind(x, dimensions=B.shift_axes(dimensions, b)), b


for _p, _r in ((broadcast_in_dim_p, _broadcast_in_dim_batch), (reshape_p, _reshape_batch),
               (squeeze_p, _squeeze_batch), (transpose_p, _transpose_batch),
               (rev_p, _rev_batch)):
    _p.def_batch(_r)
