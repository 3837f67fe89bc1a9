"""stack, unstack, tile: JAX 0.10.2's primitives for jnp.stack, jnp.unstack and jnp.tile.

Input/params, as JAX names and prints them:
    stack[axis=0]     n >= 1 operands of one shape and dtype -> one array with a new axis
                      `axis` (0 <= axis <= ndim) of length n
    unstack[axis=0]   one operand -> multiple_results, its slices along `axis` (that axis
                      removed), one per index
    tile[reps=(1, 2)] one operand, one repetition count per axis (len(reps) == ndim) ->
                      each axis d long becomes d * r long, the operand repeated r times
Output: arrays of the operands' dtype (weakly typed only when every operand is).
Lowering: stack is a reshape of each operand (the new axis of length 1) and a concatenate;
unstack one slice and reshape per index; tile one broadcast to (r0, d0, r1, d1, ...) and a
reshape, all of which the CPU fuses into their users.
Autodiff: all three are linear. Transposes: stack <-> unstack (zeros for an output no
cotangent reaches), tile's is a reshape to (r0, d0, r1, d1, ...) summed over the r axes.
Batching: the batch axis is moved to the front and the axis (reps) shifted past it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.hlo.ir import Instruction
from ember.prims import _ad

stack_p = Primitive("stack")
unstack_p = Primitive("unstack", multiple_results=True)
tile_p = Primitive("tile")


def _inserted(shape: tuple[int, ...], axis: int, n: int) -> tuple[int, ...]:
    return shape[:axis] + (n,) + shape[axis:]


# ---------------------------------------------------------------------------------------------
# stack
# ---------------------------------------------------------------------------------------------

@stack_p.def_abstract_eval
def _stack_abstract(*xs: ShapedArray, axis: int) -> ShapedArray:
    if not xs:
        raise ValueError("stack requires at least one operand")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError("stack operands must all have the same shape, got "
                         + ", ".join(str(x.shape) for x in xs))
    if any(x.dtype != xs[0].dtype for x in xs):
        raise TypeError("stack operands must all have the same dtype, got "
                        + ", ".join(x.dtype.name for x in xs))
    if not 0 <= axis <= xs[0].ndim:
        raise ValueError(f"stack axis {axis} is out of bounds for operands of shape "
                         f"{xs[0].shape}")
    return ShapedArray(_inserted(xs[0].shape, axis, len(xs)), xs[0].dtype,
                       all(x.weak_type for x in xs))


@stack_p.def_impl
def _stack_impl(*xs: np.ndarray, axis: int) -> np.ndarray:
    return np.stack(xs, axis=axis)


@stack_p.def_lowering
def _stack_lowering(ctx: Any, *xs: Instruction, axis: int) -> Instruction:
    shape = _inserted(ctx.avals_in[0].shape, axis, 1)
    parts = [ctx.b.reshape(x, shape) for x in xs]
    return parts[0] if len(parts) == 1 else ctx.b.concatenate(parts, axis)


def _stack_transpose(ct: Any, *xs: Any, axis: int) -> list:
    pieces = unstack_p.bind(ct, axis=axis)
    return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


def _stack_batch(axis_data: AxisData, args: list, dims: list, *, axis: int
                 ) -> tuple[Any, int]:
    xs = [batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(args, dims)]
    return stack_p.bind(*xs, axis=axis + 1), 0


# ---------------------------------------------------------------------------------------------
# unstack
# ---------------------------------------------------------------------------------------------

@unstack_p.def_abstract_eval
def _unstack_abstract(x: ShapedArray, *, axis: int) -> list[ShapedArray]:
    if not 0 <= axis < x.ndim:
        raise ValueError(f"unstack axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    piece = ShapedArray(x.shape[:axis] + x.shape[axis + 1:], x.dtype, x.weak_type)
    return [piece] * x.shape[axis]


@unstack_p.def_impl
def _unstack_impl(x: np.ndarray, *, axis: int) -> list[np.ndarray]:
    return [np.array(np.take(x, i, axis=axis), copy=True) for i in range(x.shape[axis])]


@unstack_p.def_lowering
def _unstack_lowering(ctx: Any, x: Instruction, *, axis: int) -> list[Instruction]:
    shape = ctx.avals_in[0].shape
    out = []
    for i in range(shape[axis]):
        starts = [0] * len(shape)
        limits = list(shape)
        starts[axis], limits[axis] = i, i + 1
        piece = ctx.b.slice(x, starts, limits)
        out.append(ctx.b.reshape(piece, shape[:axis] + shape[axis + 1:]))
    return out


def _unstack_transpose(cts: list, x: Any, *, axis: int) -> list:
    parts = [_ad.zeros(c.aval) if isinstance(c, ad.Zero) else c for c in cts]
    if not parts:  # an empty axis: no piece, a zero-size cotangent
        return [_ad.zeros(x.aval)]
    return [stack_p.bind(*parts, axis=axis)]


def _unstack_batch(axis_data: AxisData, args: list, dims: list, *, axis: int
                   ) -> tuple[list, list]:
    (x,), (b,) = args, dims
    x = batching.bdim_at_front(x, b, axis_data.size)
    out = unstack_p.bind(x, axis=axis + 1)
    return out, [0] * len(out)


# ---------------------------------------------------------------------------------------------
# tile
# ---------------------------------------------------------------------------------------------

@tile_p.def_abstract_eval
def _tile_abstract(x: ShapedArray, *, reps: tuple[int, ...]) -> ShapedArray:
    if len(reps) != x.ndim:
        raise ValueError(f"tile reps must have one entry per axis of the operand, got "
                         f"reps={reps} for an operand of shape {x.shape}")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile reps must be nonnegative, got reps={reps}")
    return ShapedArray(tuple(int(d * r) for d, r in zip(x.shape, reps)), x.dtype,
                       x.weak_type)


@tile_p.def_impl
def _tile_impl(x: np.ndarray, *, reps: tuple[int, ...]) -> np.ndarray:
    return np.array(np.tile(x, reps), copy=True) if x.ndim else np.array(x, copy=True)


def _interleaved(shape: tuple[int, ...], reps: tuple[int, ...]) -> tuple[int, ...]:
    """(r0, d0, r1, d1, ...): the tiled array before its axis pairs are merged."""
    return tuple(v for r, d in zip(reps, shape) for v in (int(r), d))


@tile_p.def_lowering
def _tile_lowering(ctx: Any, x: Instruction, *, reps: tuple[int, ...]) -> Instruction:
    shape = ctx.avals_in[0].shape
    wide = ctx.b.broadcast(x, _interleaved(shape, reps), tuple(range(1, 2 * len(shape), 2)))
    return ctx.b.reshape(wide, ctx.avals_out[0].shape)


def _tile_transpose(ct: Any, x: Any, *, reps: tuple[int, ...]) -> list:
    # Each operand element was copied to one place per repetition: its cotangent is the sum
    # over those places, the rep axes of the interleaved shape.
    shape = x.aval.shape
    wide = _ad.reshape(ct, _interleaved(shape, reps))
    return [_ad.reduce_sum(wide, tuple(range(0, 2 * len(shape), 2)))]


def _tile_batch(axis_data: AxisData, args: list, dims: list, *, reps: tuple[int, ...]
                ) -> tuple[Any, int]:
    (x,), (b,) = args, dims
    return tile_p.bind(x, reps=(*reps[:b], 1, *reps[b:])), b


for _p, _t, _b in ((stack_p, _stack_transpose, _stack_batch),
                   (unstack_p, _unstack_transpose, _unstack_batch),
                   (tile_p, _tile_transpose, _tile_batch)):
    ad.deflinear(_p)
    _p.def_transpose(_t)
    _p.def_batch(_b)
