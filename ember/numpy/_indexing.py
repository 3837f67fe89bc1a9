"""NumPy indexing on Ember arrays: `x[idx]`.

The pieces: `_index_entries` parses an index and stages static slicing, `_indexer` turns
what is left into gather / scatter arguments, `_index_update` is `x.at[idx]`, `_take` is
`take` / `take_along_axis`; the semantics below hold for all of them.

Input: an array (ember.Array, tracer or NumPy value) and a NumPy index expression: ints
(negative count from the end), slices with any static step, None, Ellipsis, integer arrays
(static NumPy/lists or traced, any shape, broadcast together), boolean masks (concrete
only: their result shape depends on their values) and scalar booleans.
Output: what NumPy returns, built from lax primitives as JAX 0.10.2 builds it:
- only static ints and slices: one `slice` (+ `rev` for negative steps), `squeeze` for the
  ints, `broadcast_in_dim` for None (`x[1:]` is `slice[limit_indices=(4,) ...]`);
- scalar integer indices of which some are traced, with contiguous slices: `dynamic_slice` +
  `squeeze`, negative indices wrapped by `lt; add; select_n` (the golden `x[i]`);
- anything else: static slices first, then one `gather` over the integer-array dims.
Invariants, as JAX: out-of-range integer-array and traced indices are clamped by `x[idx]`
(gather mode PROMISE_IN_BOUNDS, which XLA clamps); `take`/`take_along_axis` fill them
(NaN for floats) by default; `.at[...]` updates drop out-of-range windows (FILL_OR_DROP);
negative indices are wrapped once (i + n) before the mode applies; advanced-index dims go
where NumPy puts them (at the first advanced index when all advanced indices, ints
included, are adjacent, else first). Values given to `.at[...]` are cast to x's dtype and
broadcast to the indexed shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax
from ember.core.trace import get_aval
from ember.lax._slicing import GatherScatterMode
from ember.numpy._index_entries import (
    _apply_static_slices,
    _Array,
    _as_array,
    _basic_take,
    _Int,
    _None,
    _operand_dims,
    _parse,
    _Slice,
)
from ember.numpy._indexer import _gather

__all__ = ["_rewriting_take"]


# ---------------------------------------------------------------------------------------------
# x[idx]
# ---------------------------------------------------------------------------------------------

def _dynamic_slice_take(x: Any, entries: list[Any]) -> Any | None:
    """x[i, j:k, ...] with scalar integer indices of which some are traced, as JAX stages it:
    `dynamic_slice` (+ `squeeze`); None when the index has another form."""
    shape = get_aval(x).shape
    if any(isinstance(e, _None) for e in entries):
        return None
    if not any(isinstance(e, _Array) for e in entries):
        return None
    starts: list[Any] = []
    sizes: list[int] = []
    squeeze: list[int] = []
    revs: list[int] = []
    for d, (e, size) in enumerate(zip(entries, shape)):
        if isinstance(e, _Array):
            if e.static or e.shape != () or size == 0:
                return None
            v = e.value
            if get_aval(v).dtype.itemsize < 4:
                # Widen narrow indices so i + size and the static starts fit the index dtype.
                v = lax.convert_element_type(v, np.int32)
            starts.append(v)
            sizes.append(1)
            squeeze.append(d)
        elif isinstance(e, _Int):
            if not -size <= e.value < size:
                return None
            starts.append(e.value + size if e.value < 0 else e.value)
            sizes.append(1)
            squeeze.append(d)
        elif e.step == 1:
            starts.append(e.start)
            sizes.append(e.size)
        elif e.step == -1 and e.size == size:
            revs.append(d)  # x[::-1] along this dim: a reverse, then the whole dim
            starts.append(0)
            sizes.append(size)
        else:
            return None
    if revs:
        x = lax.rev(x, revs)
    out = lax.dynamic_slice(x, starts, sizes)
    return lax.squeeze(out, squeeze) if squeeze else out


def _rewriting_take(arr: Any, idx: Any, indices_are_sorted: bool = False,
                    unique_indices: bool = False, mode: Any = None, fill_value: Any = None
                    ) -> Any:
    """arr[idx] (see the module docstring for what each form of index stages)."""
    x = _as_array(arr)
    shape = get_aval(x).shape
    entries, unit_axes = _parse(idx, shape)
    if unit_axes:
        x = lax.expand_dims(x, unit_axes)
        shape = get_aval(x).shape
    parsed_mode = None if mode is None else GatherScatterMode.from_any(mode)
    ints_ok = all(-s <= e.value < s for e, s in zip(
        entries, [shape[d] if d is not None else 0 for d in _operand_dims(entries)])
        if isinstance(e, _Int))
    if not any(isinstance(e, _Array) for e in entries) and ints_ok:
        return _basic_take(x, entries)
    if parsed_mode in (None, GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
        out = _dynamic_slice_take(x, entries)
        if out is not None:
            return out
    # Static slices first (they never go out of bounds), then a gather over what is left.
    sliced = _apply_static_slices(x, [e if isinstance(e, (_Slice, _None)) else _Whole()
                                      for e in entries])
    rest = [_Slice(0, get_aval(sliced).shape[d], 1) if isinstance(e, _Slice) else e
            for e, d in zip(entries, _operand_dims(entries))]
    return _gather(sliced, rest, mode=mode, fill_value=fill_value,
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)


class _Whole:
    """A whole operand dim, for _apply_static_slices (left for the gather)."""
