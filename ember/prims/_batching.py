"""Helpers the batching rules of prims/*.py share (vmap's rules: core/batching.py).

Input: operands with their batch axes (an int, or `not_mapped`) and the `AxisData` of the
vmap being traced. Output: operands arranged so one primitive call handles the whole
batch, and the batch axis of the result.
Invariants: an elementwise primitive broadcasts rank-0 operands and size-1 dimensions of
equal-rank operands (Ember's broadcasting, as lax's), so `elementwise` lines every mapped
operand up with its batch axis first and gives unmapped operands a size-1 batch axis (or
leaves them rank 0): no operand is copied out to the batch size. The structural rules
share the axis bookkeeping: a per-example axis a is axis a + (a >= b) of a value batched at
b (`shift_axes`), and `common_bdim` puts operands that must agree in shape on one batch axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core import batching
from ember.core.batching import AxisData, not_mapped
from ember.core.trace import get_aval
from ember.prims import _ad


def _rank(x: Any) -> int:
    return len(get_aval(x).shape)


def elementwise_operands(args: Sequence[Any], dims: Sequence[int | None]
                         ) -> tuple[list[Any], int]:
    """The operands of an elementwise op under vmap, and the batch axis of its result.

    As JAX's broadcast batcher: when every operand that is not rank 0 is mapped, at one
    axis, with one shape, they go as they are (the result is mapped there). Otherwise each
    mapped operand's batch axis moves to the front and each unmapped one of rank > 0 gets a
    leading size-1 axis (a broadcast_in_dim); then a mapped operand of lower rank than the
    highest gets trailing size-1 axes (lax.expand_dims). Unmapped rank-0 operands stay
    rank 0, and the result is mapped along axis 0.
    """
    shapes = [get_aval(x).shape for x in args]
    first = next(k for k, d in enumerate(dims) if d is not not_mapped)
    if all(shape == shapes[first] and d == dims[first]
           for shape, d in zip(shapes, dims) if shape):
        return list(args), dims[first]
    out = []
    for x, d, shape in zip(args, dims, shapes):
        if not shape:
            out.append(x)
        elif d is not_mapped:
            # (the dims are NumPy integers, as JAX's np.delete makes them: they print so)
            out.append(_ad.broadcast_in_dim(x, (1, *shape), tuple(np.arange(1, len(shape) + 1))))
        else:
            out.append(batching.moveaxis(x, d, 0))
    nd = max(_rank(x) for x in out)
    return [x if d is not_mapped or _rank(x) == nd else
            _ad.broadcast_in_dim(x, (*get_aval(x).shape, *(1,) * (nd - _rank(x))),
                                 tuple(range(_rank(x))))
            for x, d in zip(out, dims)], 0


def elementwise_rule(prim: Any) -> None:
    """Register the batching rule of an elementwise primitive: apply it to the operands
    lined up by `elementwise_operands`."""
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, int]:
        operands, bdim = elementwise_operands(args, dims)
        return prim.bind(*operands, **params), bdim

    prim.def_batch(rule)


# -- axis bookkeeping shared by the structural rules -------------------------------------------
# A primitive's params name axes of the per-example value; with the batch axis at `bdim` of
# the batched value, per-example axis a is batched axis a + (a >= bdim).

def shift_axis(axis: int, bdim: int) -> int:
    """Per-example axis `axis` in the coordinates of a value whose batch axis is `bdim`."""
    return axis + (axis >= bdim)


def shift_axes(axes: Sequence[int], bdim: int) -> tuple[int, ...]:
    return tuple(shift_axis(a, bdim) for a in axes)


def bdim_after_removing(bdim: int, removed: Sequence[int]) -> int:
    """Where the batch axis `bdim` lands once the (batched-coordinate) axes `removed`, none
    of them `bdim`, are dropped: one place down per removed axis before it."""
    return bdim - sum(1 for a in removed if a < bdim)


def common_bdim(args: Sequence[Any], dims: Sequence[int | None], size: int
                ) -> tuple[list[Any], int]:
    """Every operand with its batch axis at one position: the first mapped operand's (so
    that operand moves nowhere); other mapped operands are moved there and unmapped ones
    broadcast there. For primitives whose operands must share one shape (concatenate's
    other dims, sort, select_n's cases)."""
    dst = next(d for d in dims if d is not not_mapped)
    return [batching.bdim_at(x, d, size, dst) for x, d in zip(args, dims)], dst
