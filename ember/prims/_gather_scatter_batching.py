"""vmap of gather and of every scatter: one gather / scatter whose dimension numbers carry
the batch, never a loop over the examples.

Input: the operands of `gather(operand, indices)` or `scatter*(operand, indices, updates)`
with their batch axes (core/batching.py's rule protocol). Output: one primitive of the same
kind on the whole batch, mapped along axis 0.
How the batch enters the dimension numbers (JAX's rules), with B the batch size:
- only the operand is mapped (gather) / only operand or updates (scatter): the batch is a
  window dimension of full size B at the front: gather reads slices (B, *slice_sizes) and
  the output has an extra leading offset dim; a scatter's update windows span all B.
- the indices are mapped (gather, unmapped operand): the batch is one more batch dim of
  the indices, in front; the output's batch dims follow it.
- both mapped (or indices mapped in a scatter): the batch is an operand batching dim paired
  with an indices batching dim (operand_batching_dims / start_indices_batching_dims), so
  example b reads (writes) only operand[b]. Lowering turns the pair into an iota index
  component (gather_scatter.py `_with_batching_iotas`).
Invariants: every other operand/indices/output dim number is shifted by one; an unmapped
scatter operand or updates is broadcast to the batch (the scatter writes per example);
indices batched over examples that index one shared operand may collide, so that gather
gives up `unique_indices` / `indices_are_sorted`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import batching
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.prims.gather_scatter import (
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    gather_p,
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)


def _shift(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(d) + 1 for d in dims)


def _shift_np(dims: Sequence[int]) -> tuple[Any, ...]:
    """`_shift` as JAX's scatter rule computes it (np.add(1, dims)): NumPy integers, which
    print as `np.int64(1)` in a jaxpr, as JAX's do; they compare and hash as ints."""
    return tuple(np.add(1, np.asarray(dims, np.int64)))


def _gather_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                  dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                  indices_are_sorted: bool, unique_indices: bool, mode: Any,
                  fill_value: Any) -> tuple[Any, int]:
    operand, indices = args
    op_dim, idx_dim = dims
    dn = dimension_numbers
    params = dict(mode=mode, fill_value=fill_value)
    if idx_dim is not_mapped:
        # Window of the whole batch along operand dim 0: output dim 0 is that offset dim.
        operand = batching.moveaxis(operand, op_dim, 0)
        new = GatherDimensionNumbers(
            offset_dims=(0,) + _shift_np(dn.offset_dims),
            collapsed_slice_dims=_shift_np(dn.collapsed_slice_dims),
            start_index_map=_shift_np(dn.start_index_map),
            operand_batching_dims=_shift_np(dn.operand_batching_dims),
            start_indices_batching_dims=tuple(dn.start_indices_batching_dims))
        out = gather_p.bind(operand, indices, dimension_numbers=new,
                            slice_sizes=(axis.size, *slice_sizes),
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, **params)
        return out, 0
    indices = batching.moveaxis(indices, idx_dim, 0)
    if op_dim is not_mapped:
        # One more leading batch dim of the indices; it leads the output's batch dims.
        new = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims),
            collapsed_slice_dims=tuple(dn.collapsed_slice_dims),
            start_index_map=tuple(dn.start_index_map),
            operand_batching_dims=tuple(dn.operand_batching_dims),
            start_indices_batching_dims=_shift_np(dn.start_indices_batching_dims))
        out = gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=slice_sizes,
                            indices_are_sorted=False, unique_indices=False, **params)
        return out, 0
    # Both mapped: operand dim 0 and indices dim 0 are a batching pair (example b reads
    # operand[b]); its slice size is 1 (0 for an empty batch, so the window fits).
    operand = batching.moveaxis(operand, op_dim, 0)
    new = GatherDimensionNumbers(
        offset_dims=_shift_np(dn.offset_dims),
        collapsed_slice_dims=_shift_np(dn.collapsed_slice_dims),
        start_index_map=_shift_np(dn.start_index_map),
        operand_batching_dims=(0,) + _shift_np(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _shift_np(dn.start_indices_batching_dims))
    out = gather_p.bind(operand, indices, dimension_numbers=new,
                        slice_sizes=(min(axis.size, 1), *slice_sizes),
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        **params)
    return out, 0


def _scatter_batch(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
             dimension_numbers: ScatterDimensionNumbers, **params: Any) -> tuple[Any, int]:
        operand, indices, updates = args
        op_dim, idx_dim, upd_dim = dims
        dn = dimension_numbers
        size = axis.size
        # Every example writes its own copy of the operand, with its own updates.
        operand = batching.bdim_at_front(operand, op_dim, size)
        updates = batching.bdim_at_front(updates, upd_dim, size)
        if idx_dim is not_mapped:
            # The batch is a window dim spanning all B (updates dim 0, operand dim 0).
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + _shift_np(dn.update_window_dims),
                inserted_window_dims=_shift_np(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift_np(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_shift_np(dn.operand_batching_dims),
                scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims))
        else:
            # Operand dim 0 paired with indices dim 0: example b writes operand[b] only.
            indices = batching.moveaxis(indices, idx_dim, 0)
            new = ScatterDimensionNumbers(
                update_window_dims=_shift_np(dn.update_window_dims),
                inserted_window_dims=_shift_np(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shift_np(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0,) + _shift_np(dn.operand_batching_dims),
                scatter_indices_batching_dims=(0,) + _shift_np(dn.scatter_indices_batching_dims))
        assert get_aval(operand).shape[0] == size
        return prim.bind(operand, indices, updates, dimension_numbers=new, **params), 0
    return rule


gather_p.def_batch(_gather_batch)
for _prim in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _prim.def_batch(_scatter_batch(_prim))
