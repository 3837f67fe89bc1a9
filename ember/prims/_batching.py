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

from ember.core import batching
from ember.core.batching import AxisData, not_mapped
from ember.core.trace import get_aval
from ember.prims import _ad


def _rank(x: Any) -> int:
    return len(get_aval(x).shape)


def elementwise_operands(args: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    """The operands of an elementwise op under vmap, batch axis first where mapped.

    With r the largest unbatched rank: a mapped operand of unbatched rank 0 (among operands
    of rank r > 0) becomes (B, 1, ..., 1); an unmapped operand of rank r gets a leading size-1
    axis; unmapped rank-0 operands stay rank 0.
    """
    ranks = [_rank(x) - (d is not not_mapped) for x, d in zip(args, dims)]
    r = max(ranks)
    out = []
    for x, d, k in zip(args, dims, ranks):
        if d is not_mapped:
            out.append(x if k == 0 else _ad.reshape(x, (1, *get_aval(x).shape)))
            continue
        x = batching.moveaxis(x, d, 0)
        if k < r:
            x = _ad.reshape(x, (get_aval(x).shape[0],) + (1,) * r)
        out.append(x)
    return out


def elementwise_rule(prim: Any) -> None:
    """Register the batching rule of an elementwise primitive: apply it to the operands
    lined up by `elementwise_operands`; the result is mapped along axis 0."""
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, int]:
        return prim.bind(*elementwise_operands(args, dims), **params), 0

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
