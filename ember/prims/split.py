"""split: one operand cut into consecutive pieces along one axis (JAX 0.10.2's primitive).

Input: one operand; params `axis` (a normalized axis) and `sizes` (the pieces' lengths
along it, non-negative, summing to the axis; NumPy integers are kept as given, so
jnp.split's widths print as JAX's `sizes=(np.int64(2), np.int64(2))`).
Output: multiple_results, one array per size, each of the operand's dtype and weak type.
Lowering: one HLO slice per piece (XLA has no split op; the slices fuse into their users).
Autodiff: linear; the transpose concatenates the pieces' cotangents (zeros for a piece
none reaches). Batching: the same split along the axis shifted past the batch axis.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.hlo.ir import Instruction
from ember.prims import _ad, _batching
from ember.prims.slicing import concatenate_p

split_p = Primitive("split", multiple_results=True)


def _piece_shapes(shape: tuple[int, ...], sizes: tuple[Any, ...], axis: int
                  ) -> list[tuple[int, ...]]:
    return [shape[:axis] + (int(s),) + shape[axis + 1:] for s in sizes]


@split_p.def_abstract_eval
def _split_abstract(x: ShapedArray, *, sizes: tuple[Any, ...], axis: int
                    ) -> list[ShapedArray]:
    if not 0 <= axis < x.ndim:
        raise ValueError(f"split axis {axis} is out of bounds for an operand of shape "
                         f"{x.shape}")
    if any(s < 0 for s in sizes):
        raise ValueError(f"split sizes must be nonnegative, got sizes={sizes}")
    if sum(int(s) for s in sizes) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(int(s) for s in sizes)} must be equal to "
                         f"dimension {x.shape[axis]} of the operand shape {x.shape}")
    return [ShapedArray(s, x.dtype, x.weak_type) for s in _piece_shapes(x.shape, sizes, axis)]


@split_p.def_impl
def _split_impl(x: np.ndarray, *, sizes: tuple[Any, ...], axis: int) -> list[np.ndarray]:
    bounds = np.cumsum([int(s) for s in sizes])[:-1]
    return [np.array(p, copy=True) for p in np.split(x, bounds, axis=axis)]


@split_p.def_lowering
def _split_lowering(ctx: Any, x: Instruction, *, sizes: tuple[Any, ...], axis: int
                    ) -> list[Instruction]:
    shape = ctx.avals_in[0].shape
    out, start = [], 0
    for s in sizes:
        starts = [0] * len(shape)
        limits = list(shape)
        starts[axis], limits[axis] = start, start + int(s)
        out.append(ctx.b.slice(x, starts, limits))
        start += int(s)
    return out


def _split_transpose(cts: list, x: Any, *, sizes: tuple[Any, ...], axis: int) -> list:
    # The operand's cotangent is the pieces' cotangents joined back in order; a piece no
    # cotangent reached contributes zeros of its shape.
    parts = [_ad.zeros(c.aval) if isinstance(c, ad.Zero) else c for c in cts]
    if len(parts) == 1:
        return [parts[0]]
    return [concatenate_p.bind(*parts, dimension=axis)]


def _split_batch(axis_data: AxisData, args: list, dims: list, *, sizes: tuple[Any, ...],
                 axis: int) -> tuple[list, list]:
    (x,), (b,) = args, dims
    out = split_p.bind(x, sizes=sizes, axis=_batching.shift_axis(axis, b))
    return out, [b] * len(out)


ad.deflinear(split_p)
split_p.def_transpose(_split_transpose)
split_p.def_batch(_split_batch)
