"""Helpers the batching rules of prims/*.py share (vmap's rules: core/batching.py).

Input: operands with their batch axes (an int, or `not_mapped`) and the `AxisData` of the
vmap being traced. Output: operands arranged so one primitive call handles the whole
batch, and the batch axis of the result.
Invariants: an elementwise primitive broadcasts rank-0 operands and size-1 dimensions of
equal-rank operands (Ember's broadcasting, as lax's), so `elementwise` lines every mapped
operand up with its batch axis first and gives unmapped operands a size-1 batch axis (or
leaves them rank 0): no operand is copied out to the batch size.
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
