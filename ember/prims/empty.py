"""`empty2`: a scalar whose value does not matter (JAX's primitive of that name), used to
fill the residual slots a `cond` branch does not write (prims/_control_flow_ad.py).

Input: params `dtype` and `memory_space` (always `MemorySpace.Device` here: Ember has one
memory space per device). Output: a rank-0 value of `dtype`; callers broadcast it to the
slot's shape, so no large constant is ever built. Ember's value is zero (the HLO lowering
is a constant 0, which folds away wherever the slot is never read); nothing may depend on
it, so any other value would do.
Invariants: no operands, so no tangent (a symbolic zero) and no batching rule can apply.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive


class MemorySpace(enum.Enum):
    """Where a value lives (JAX's enum of that name; Ember's arrays are all on the device)."""

    Device = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"


empty2_p = Primitive("empty2")


@empty2_p.def_abstract_eval
def _empty2_abstract(*, dtype: np.dtype, memory_space: MemorySpace) -> ShapedArray:
    return ShapedArray((), np.dtype(dtype), False)


@empty2_p.def_impl
def _empty2_impl(*, dtype: np.dtype, memory_space: MemorySpace) -> np.ndarray:
    return np.zeros((), np.dtype(dtype))


@empty2_p.def_lowering
def _empty2_lowering(ctx: Any, *, dtype: np.dtype, memory_space: MemorySpace) -> Any:
    return ctx.b.constant(np.zeros((), np.dtype(dtype)))


ad.defjvp_zero(empty2_p)  # (no operands: nothing to differentiate)


def empty_like(aval: ShapedArray) -> Any:
    """A value of `aval`'s shape and dtype whose contents do not matter: `empty2`, then a
    broadcast to the shape (none for a scalar)."""
    from ember.prims import _ad
    x = empty2_p.bind(dtype=np.dtype(aval.dtype), memory_space=MemorySpace.Device)
    return x if aval.shape == () else _ad.broadcast_in_dim(x, aval.shape, ())
