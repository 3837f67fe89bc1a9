"""NumPy implementations of XLA's indexing opcodes: gather, scatter, pad, dynamic slices.

Input: NumPy arrays and the instruction's attrs (dimension numbers as in `ember/hlo/opcodes`).
Output: a new NumPy array; operands are never written to.
Semantics: gather and dynamic-slice clamp start indices so the whole window is in bounds;
scatter skips any update window that would fall (partly) outside the operand; updates are
combined in row-major order of the update array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.hlo.evaluator.reductions import combine_at


def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """Indices with the index vector moved last: shape (*batch, K)."""
    if index_vector_dim == indices.ndim:
        indices = indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1).astype(np.int64)


def gather(operand: np.ndarray, indices: np.ndarray, attrs: dict[str, Any]) -> np.ndarray:
    sizes = tuple(attrs["slice_sizes"])
    collapsed = tuple(attrs["collapsed_slice_dims"])
    offset_dims = tuple(attrs["offset_dims"])
    start_map = tuple(attrs["start_index_map"])
    vec = _index_vectors(indices, attrs["index_vector_dim"])
    batch_shape = vec.shape[:-1]
    nb = len(batch_shape)
    rank = operand.ndim
    # Per operand dim: start (clamped so the window fits) + window offset, as broadcastable
    # grids of shape (*batch, S_0, ..., S_{rank-1}).
    grids = []
    for d in range(rank):
        start = np.zeros(batch_shape, np.int64)
        if d in start_map:
            start = vec[..., start_map.index(d)]
        start = np.clip(start, 0, operand.shape[d] - sizes[d])
        start = start.reshape(batch_shape + (1,) * rank)
        offs = np.arange(sizes[d]).reshape((1,) * nb + tuple(
            sizes[d] if i == d else 1 for i in range(rank)))
        grids.append(start + offs)
    window = operand[tuple(grids)] if rank else np.broadcast_to(operand, batch_shape).copy()
    # Drop the collapsed window dims, then interleave batch and offset dims as offset_dims says.
    window = window.reshape(batch_shape + tuple(
        s for d, s in enumerate(sizes) if d not in collapsed))
    out_rank = window.ndim
    batch_pos = [i for i in range(out_rank) if i not in offset_dims]
    src = [0] * out_rank
    for j, p in enumerate(batch_pos):
        src[p] = j
    for j, p in enumerate(offset_dims):
        src[p] = nb + j
    return np.asarray(np.transpose(window, src), order="C")


_UFUNC_AT = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum,
             "minimum": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or}


def scatter(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray,
            attrs: dict[str, Any], combiner: str | None,
            apply: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Scatter `updates` into a copy of `operand`.

    `combiner` names the to_apply computation when it is a plain binary opcode (fast path
    through ufunc.at), "overwrite" when it returns its second parameter, else None and
    `apply(old, new)` combines scalars one update at a time.
    """
    out = np.array(operand, copy=True)
    window_dims = tuple(attrs["update_window_dims"])
    inserted = tuple(attrs["inserted_window_dims"])
    to_operand = tuple(attrs["scatter_dims_to_operand_dims"])
    vec = _index_vectors(indices, attrs["index_vector_dim"])
    rank = operand.ndim
    scatter_dims = [i for i in range(updates.ndim) if i not in window_dims]
    window_operand_dims = [d for d in range(rank) if d not in inserted]
    # Updates as (*scatter, *window), and the window size along every operand dim.
    upd = np.transpose(updates, scatter_dims + list(window_dims))
    scatter_shape = upd.shape[:len(scatter_dims)]
    win_shape = upd.shape[len(scatter_dims):]
    full_win = [1] * rank
    for j, d in enumerate(window_operand_dims):
        full_win[d] = win_shape[j]
    vec = vec.reshape(scatter_shape + (vec.shape[-1],))
    ns = len(scatter_shape)
    starts = []
    ok = np.ones(scatter_shape, bool)
    for d in range(rank):
        s = np.zeros(scatter_shape, np.int64)
        if d in to_operand:
            s = vec[..., to_operand.index(d)]
        ok &= (s >= 0) & (s <= operand.shape[d] - full_win[d])
        starts.append(s)
    # Operand coordinates of every update element: start + window position.
    coords = []
    for d in range(rank):
        s = starts[d].reshape(scatter_shape + (1,) * len(win_shape))
        if d in window_operand_dims:
            j = window_operand_dims.index(d)
            w = np.arange(win_shape[j]).reshape((1,) * ns + tuple(
                win_shape[j] if i == j else 1 for i in range(len(win_shape))))
            coords.append(np.broadcast_to(s + w, upd.shape))
        else:
            coords.append(np.broadcast_to(s, upd.shape))
    keep = np.broadcast_to(ok.reshape(scatter_shape + (1,) * len(win_shape)), upd.shape)
    flat = tuple(c[keep] for c in coords)
    vals = upd[keep]
    if combiner == "overwrite":
        out[flat] = vals
    elif combiner in _UFUNC_AT:
        combine_at(combiner, out, flat, vals)  # (max/min with IEEE zeros)
    else:
        for k in range(vals.shape[0]):
            idx = tuple(int(c[k]) for c in flat)
            out[idx] = apply(out[idx], vals[k])
    return out


def pad(x: np.ndarray, value: np.ndarray, padding: tuple[tuple[int, int, int], ...]) -> np.ndarray:
    """Interior padding first, then low/high edges (negative edges crop)."""
    inner_shape = tuple(d + max(d - 1, 0) * i for d, (_, _, i) in zip(x.shape, padding))
    inner = np.full(inner_shape, value, dtype=x.dtype)
    inner[tuple(slice(None, None, i + 1) for (_, _, i) in padding)] = x
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi, _ in padding]
    padded = np.pad(inner, widths, mode="constant", constant_values=value) if x.ndim else inner
    crop = tuple(slice(max(-lo, 0), padded.shape[k] - max(-hi, 0))
                 for k, (lo, hi, _) in enumerate(padding))
    return np.asarray(padded[crop], order="C")


def _clamped_starts(starts: list[np.ndarray], shape: tuple[int, ...],
                    sizes: tuple[int, ...]) -> list[int]:
    return [int(np.clip(int(s), 0, d - z)) for s, d, z in zip(starts, shape, sizes)]


def dynamic_slice(x: np.ndarray, starts: list[np.ndarray], sizes: tuple[int, ...]) -> np.ndarray:
    st = _clamped_starts(starts, x.shape, sizes)
    return x[tuple(slice(s, s + z) for s, z in zip(st, sizes))].copy()


def dynamic_update_slice(x: np.ndarray, update: np.ndarray,
                         starts: list[np.ndarray]) -> np.ndarray:
    out = np.array(x, copy=True)
    st = _clamped_starts(starts, x.shape, update.shape)
    out[tuple(slice(s, s + z) for s, z in zip(st, update.shape))] = update
    return out
