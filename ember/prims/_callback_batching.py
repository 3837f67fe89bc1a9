"""vmap of the host callbacks: `pure_callback` by its `vmap_method`, and the debug callbacks
once per example, as JAX 0.10.2 batches them.

Input: the callback's flat operands with their batch axes (core/batching.py's protocol).
Output: pure_callback's results mapped along axis 0; the debug primitives have none.
pure_callback, with B the batch size:
- "legacy_vectorized": one call on the batched operands (mapped ones with the batch axis in
  front, unmapped ones as they are); results declared with a leading B.
- "expand_dims" / "broadcast_all": the same, but unmapped operands get a leading axis of
  size 1 / of size B (a broadcast), so every operand has the batch axis in front.
- "sequential" / "sequential_unrolled": the user's callback runs once per example, in
  order, on that example's operands (unmapped ones whole); JAX loops with `scan`, Ember
  loops on the host inside one call (`Sequential`), which the jaxpr shows as one
  pure_callback with the batched results (nested vmaps nest the loops).
- None (the default): NotImplementedError with JAX's text naming the allowed methods.
debug_callback / debug_print: JAX unrolls them: for each example b in order, one
equation on operand b of each mapped operand (read by a gather, whose batching rule an
enclosing vmap uses) and the unmapped operands; so nested vmaps print the inner index as the
outer loop, as JAX does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.prims import _ad
from ember.prims.callback import (
    ResultAvals,
    _callback_name,
    check_results,
    debug_callback_p,
    debug_print_p,
    pure_callback_p,
)
from ember.prims.gather_scatter import GatherDimensionNumbers, GatherScatterMode, gather_p

_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
            "legacy_vectorized")


class Sequential:
    """A pure callback run once per example: `callback(*example b's operands)` for b in
    order, the results checked against the per-example avals and stacked along axis 0."""

    def __init__(self, callback: Any, mapped: tuple[bool, ...],
                 result_avals: tuple[ShapedArray, ...]) -> None:
        self.callback = callback
        self.mapped = mapped
        self.result_avals = result_avals

    @property
    def callback_func(self) -> Any:  # what errors and the lowering name the callback by
        return self.callback.callback_func

    def __call__(self, *flat_args: np.ndarray) -> list[np.ndarray]:
        size = next(a.shape[0] for a, m in zip(flat_args, self.mapped) if m)
        name = _callback_name(self.callback_func)
        per = [check_results(name, self.callback(*[a[b] if m else a for a, m in
                                                   zip(flat_args, self.mapped)]),
                             self.result_avals) for b in range(size)]
        if size == 0:
            return [np.empty((0, *a.shape), a.dtype) for a in self.result_avals]
        return [np.stack(outs) for outs in zip(*per)]

    def __repr__(self) -> str:
        return f"Sequential(callback={self.callback!r}, mapped={self.mapped})"


def _batched_avals(avals: Sequence[ShapedArray], size: int) -> ResultAvals:
    return ResultAvals(ShapedArray((size, *a.shape), a.dtype, a.weak_type) for a in avals)


def _pure_callback_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                         callback: Any, result_avals: tuple[ShapedArray, ...],
                         vmap_method: str | None, **params: Any) -> tuple[list, list]:
    if vmap_method not in _METHODS:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got {vmap_method=}.")
    size = axis.size
    front = [x if d is not_mapped else _ad.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    out_avals = _batched_avals(result_avals, size)
    if vmap_method in ("expand_dims", "broadcast_all"):
        lead = size if vmap_method == "broadcast_all" else 1
        front = [x if d is not not_mapped else _ad.broadcast_in_dim(
                     x, (lead, *get_aval(x).shape), tuple(range(1, get_aval(x).ndim + 1)))
                 for x, d in zip(front, dims)]
    elif vmap_method in ("sequential", "sequential_unrolled"):
        callback = Sequential(callback, tuple(d is not not_mapped for d in dims),
                              tuple(result_avals))
    outs = pure_callback_p.bind(*front, callback=callback, result_avals=out_avals,
                                vmap_method=vmap_method, **params)
    return list(outs), [0] * len(outs)


def _example(x: Any, d: int, b: int) -> Any:
    """x's example b along its batch axis d (a gather of one index: the same read under any
    enclosing vmap's gather rule)."""
    shape = get_aval(x).shape
    dn = GatherDimensionNumbers(offset_dims=tuple(range(len(shape) - 1)),
                                collapsed_slice_dims=(d,), start_index_map=(d,))
    return gather_p.bind(x, np.array([b], np.int32), dimension_numbers=dn,
                         slice_sizes=tuple(1 if k == d else n for k, n in enumerate(shape)),
                         indices_are_sorted=True, unique_indices=True,
                         mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)


def _debug_batch(prim: Primitive) -> Callable[..., tuple[list, list]]:
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[list, list]:
        for b in range(axis.size):
            prim.bind(*[x if d is not_mapped else _example(x, d, b)
                        for x, d in zip(args, dims)], **params)
        return [], []
    return rule


pure_callback_p.def_batch(_pure_callback_batch)
debug_callback_p.def_batch(_debug_batch(debug_callback_p))
debug_print_p.def_batch(_debug_batch(debug_print_p))
