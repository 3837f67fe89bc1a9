"""The gather / scatter indexer: where an index expression reads or writes.

Input: the operand shape and the parsed entries (`_index_entries`). Output: `_Indexer`, whose
attributes are the arguments of `lax.gather` / `lax.scatter` (index array, dimension
numbers, slice sizes) and the indexed result shape in NumPy's axis order. Invariants:
negative indices are wrapped once; advanced-index dims go where NumPy puts them. Under a
trace the index array is staged as JAX stages it (a user's constant index array gets the
lt/add/select_n fix-up, which constant folding removes; advanced indices are broadcast to
their common shape, converted, then placed), so jaxpr texts match JAX's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import current_dynamic, get_aval
from ember.lax._slicing import GatherDimensionNumbers, ScatterDimensionNumbers
from ember.numpy._index_entries import _Array, _Int, _None, _operand_dims, _Slice

# ---------------------------------------------------------------------------------------------
# The gather / scatter indexer for everything else.
# ---------------------------------------------------------------------------------------------

class _Indexer:
    """Where an index expression reads or writes, as gather / scatter arguments.

    Output tokens, in NumPy's order: 'N' (new axis), 'W' (a contiguous slice kept as a
    window), 'S' (a strided slice, read through an index vector of its own), 'B' (the
    broadcast shape of the advanced indices). `shape` is the indexed result's shape;
    `squeezed` is that without the new axes (the gather output / scatter updates shape).
    """

    def __init__(self, operand_shape: tuple[int, ...], entries: list[Any], *,
                 normalize: bool = True):
        self.operand_shape = operand_shape
        dims = _operand_dims(entries)
        adv = [i for i, e in enumerate(entries) if isinstance(e, (_Int, _Array))]
        adv_shapes = [() if isinstance(entries[i], _Int) else entries[i].shape for i in adv]
        try:
            self.batch = tuple(np.broadcast_shapes(*adv_shapes)) if adv else ()
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                             "with shapes " + " ".join(map(str, adv_shapes))) from None
        adjacent = bool(adv) and adv == list(range(adv[0], adv[-1] + 1))
        tokens: list[tuple[str, Any, Any]] = []
        if adv and not adjacent:
            tokens.append(("B", None, None))
        for i, (e, d) in enumerate(zip(entries, dims)):
            if isinstance(e, _None):
                tokens.append(("N", None, None))
            elif isinstance(e, _Slice):
                tokens.append(("W" if e.step == 1 else "S", d, e))
            elif adjacent and i == adv[0]:
                tokens.append(("B", None, None))
        self.tokens = tokens
        self.shape = tuple(s for t in tokens for s in self._token_shape(t))
        self.new_axes = tuple(_positions(tokens, self._token_shape, "N"))
        self.squeezed = tuple(s for t in tokens if t[0] != "N" for s in self._token_shape(t))
        plain = [t for t in tokens if t[0] != "N"]
        self.offset_dims = tuple(_positions(plain, self._token_shape, "W"))
        # Batch dims of the index array: the 'S' and 'B' tokens' dims, in output order.
        batch_shape: list[int] = []
        where: dict[int | str, list[int]] = {}
        for t in plain:
            if t[0] == "S":
                where[t[1]] = [len(batch_shape)]
                batch_shape.append(t[2].size)
            elif t[0] == "B":
                where["B"] = list(range(len(batch_shape), len(batch_shape) + len(self.batch)))
                batch_shape.extend(self.batch)
        self.batch_shape = tuple(batch_shape)
        # One index component per operand dim that needs a start: advanced, strided, and
        # windows that do not start at 0.
        comps: list[tuple[int, Any, list[int]]] = []
        adv_at: list[int] = []  # (the positions in comps of the advanced indices)
        sizes = list(operand_shape)
        collapsed = []
        for e, d in zip(entries, dims):
            if d is None:
                continue
            if isinstance(e, _Slice) and e.step == 1:
                sizes[d] = e.size
                if e.start != 0 and e.size > 0:
                    comps.append((d, np.asarray(e.start, np.int64), []))
            elif isinstance(e, _Slice):
                sizes[d] = 1
                collapsed.append(d)
                comps.append((d, np.arange(e.start, e.stop, e.step, dtype=np.int64), where[d]))
            else:
                sizes[d] = 1
                collapsed.append(d)
                value = np.asarray(e.value, np.int64) if isinstance(e, _Int) else e.value
                if isinstance(e, _Array) and _stages_fixup(e, operand_shape[d]):
                    value = _staged_wrap_negative(e, operand_shape[d], normalize)
                elif normalize:
                    value = _wrap_negative(value, operand_shape[d])
                rank = len(np.shape(value)) if isinstance(value, np.ndarray) else \
                    get_aval(value).ndim
                # Right-aligned broadcasting into the 'B' dims.
                adv_at.append(len(comps))
                comps.append((d, value, where["B"][len(self.batch) - rank:]))
        if adv_at:
            adv_entries = [e for e in entries if isinstance(e, (_Int, _Array))]
            _broadcast_advanced(comps, adv_at, adv_entries, self.batch, where["B"])
        self.slice_sizes = tuple(sizes)
        self.collapsed = tuple(collapsed)
        self.start_map = tuple(d for d, _, _ in comps)
        self.indices = _stack_components(comps, self.batch_shape)
        self.has_arrays = any(isinstance(e, _Array) and e.shape != () for e in entries)
        self.sorted = not self.has_arrays and all(
            not isinstance(e, _Slice) or e.step > 0 for e in entries)
        self.unique = not self.has_arrays
        self.collapsed_sizes = {d: operand_shape[d] for d in collapsed}

    def _token_shape(self, t: tuple[str, Any, Any]) -> tuple[int, ...]:
        kind = t[0]
        if kind == "N":
            return (1,)
        if kind in ("W", "S"):
            return (t[2].size,)
        return self.batch

    def gather_dnums(self) -> GatherDimensionNumbers:
        return GatherDimensionNumbers(offset_dims=self.offset_dims,
                                      collapsed_slice_dims=self.collapsed,
                                      start_index_map=self.start_map)

    def scatter_dnums(self) -> ScatterDimensionNumbers:
        return ScatterDimensionNumbers(update_window_dims=self.offset_dims,
                                       inserted_window_dims=self.collapsed,
                                       scatter_dims_to_operand_dims=self.start_map)


def _positions(tokens: list[tuple[str, Any, Any]], size_of: Callable[..., tuple[int, ...]],
               kind: str) -> list[int]:
    out, at = [], 0
    for t in tokens:
        n = len(size_of(t))
        if t[0] == kind:
            out.extend(range(at, at + n))
        at += n
    return out


def _index_dtype(comps: list[tuple[int, Any, list[int]]]) -> np.dtype:
    wide = any(not isinstance(v, np.ndarray) and get_aval(v).dtype.itemsize == 8
               for _, v, _ in comps)
    return np.dtype(np.int64) if wide and dtypes.x64_enabled() else np.dtype(np.int32)


def _wrap_negative(value: Any, size: int) -> Any:
    """i < 0 -> i + size, once (NumPy's negative indices), statically when possible."""
    if isinstance(value, np.ndarray):
        return np.where(value < 0, value + size, value)
    aval = get_aval(value)
    if dtypes.kind(aval.dtype) != "i":
        return value
    if aval.dtype.itemsize < 4:
        # Widen first so i + size cannot overflow a narrow index dtype.
        value = lax.convert_element_type(value, np.int32)
    return lax.select_n(lax.lt(value, 0), value, lax.add(value, size))


def _stages_fixup(e: _Array, size: int) -> bool:
    """Whether a static index array from the user is staged as JAX stages it: only under a
    trace, for an integer index dtype whose range holds the values and the axis length
    (else the static path, which keeps out-of-range values out of range)."""
    dt = e.source_dtype
    if e.source is None or dt is None or current_dynamic().level == 0:
        return False
    if dtypes.kind(dt) not in "iu" or not e.value.size:
        return False
    # (the values must also fit int32, the index dtype they are converted to: a larger
    # unsigned value would wrap around into range)
    lo, hi = int(e.value.min()), int(e.value.max())
    return size <= np.iinfo(dt).max and _fits(lo, dt) and _fits(hi, dt) and \
        _fits(lo, np.dtype(np.int32)) and _fits(hi, np.dtype(np.int32))


def _staged_wrap_negative(e: _Array, size: int, normalize: bool) -> Any:
    """A static index array as a constant of the user's dtype with i < 0 -> i + size staged
    as JAX stages it (select_n of `add i size`, on `lt i 0` for a list, on a NumPy bool
    constant for a NumPy array; nothing for unsigned dtypes), so the jaxpr text matches;
    the compiled program folds it away (all its operands are constants)."""
    from ember.numpy._creation import asarray
    dt = e.source_dtype
    const = asarray(e.value.astype(dt))
    if not normalize or dtypes.kind(dt) == "u":
        return const
    negative = lax.lt(const, dt.type(0)) if e.source == "list" else np.less(e.value, 0)
    return lax.select_n(negative, const, lax.add(const, dt.type(size)))


def _broadcast_advanced(comps: list[tuple[int, Any, list[int]]], at: list[int],
                        entries: list[Any], batch: tuple[int, ...], bdims: list[int]) -> None:
    """JAX broadcasts the advanced indices to their common shape first (a scalar integer
    as a weakly typed array), then places each in the index array: done the same way when
    one of them is staged, so the texts match (in place on `comps`)."""
    values = [comps[k][1] for k in at]
    if all(isinstance(v, np.ndarray) for v in values):
        return
    shapes = [np.shape(v) if isinstance(v, np.ndarray) else get_aval(v).shape
              for v in values]
    if all(s == shapes[0] for s in shapes):
        return
    from ember.numpy._creation import asarray
    nb = len(batch)
    for k, e, v, s in zip(at, entries, values, shapes):
        if isinstance(v, np.ndarray):
            dt = np.dtype(np.int32) if e.dtype is None else e.dtype
            if v.ndim or current_dynamic().level == 0 or not _fits(int(v), dt):
                continue  # (left to the static path)
            # (a Python int is weakly typed, a NumPy integer keeps its dtype)
            v = asarray(int(v)) if e.dtype is None else asarray(v.astype(dt))
        if s != batch:
            v = lax.broadcast_in_dim(v, batch, tuple(range(nb - len(s), nb)))
        comps[k] = (comps[k][0], v, list(bdims))


def _fits(v: int, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return info.min <= v <= info.max


def _stack_components(comps: list[tuple[int, Any, list[int]]], batch_shape: tuple[int, ...]
                      ) -> Any:
    """The (*batch_shape, k) index array: component j broadcast into its batch dims."""
    dtype = _index_dtype(comps)
    k = len(comps)
    nb = len(batch_shape)
    # Static indices become one NumPy constant in eager mode; under a trace each component is
    # staged (a broadcast_in_dim of its literal, then one concatenate), as JAX stages them.
    if all(isinstance(v, np.ndarray) for _, v, _ in comps) and (
            current_dynamic().level == 0 or not comps):
        out = np.zeros(batch_shape + (k,), dtype)
        for j, (_, v, bdims) in enumerate(comps):
            shape = [1] * nb
            for b, s in zip(bdims, v.shape):
                shape[b] = s
            # Out-of-range values stay out of range after the clip to the index dtype.
            info = np.iinfo(dtype)
            out[..., j] = np.clip(v, info.min, info.max).reshape(shape)
        return out
    # Every component converted to the index dtype first, then each broadcast into place
    # (JAX's order of equations).
    # The components are promoted together, as JAX's: weak only when every one is (a lone
    # weak index stays as it is; a weak int beside a constant list becomes strong).
    weak = all(not isinstance(v, np.ndarray) and get_aval(v).weak_type for _, v, _ in comps)
    converted = []
    for _, v, _ in comps:
        if isinstance(v, np.ndarray):
            info = np.iinfo(dtype)
            v = lax.convert_element_type(np.clip(v, info.min, info.max).astype(dtype), dtype)
        else:
            v = lax.convert_element_type(v, dtype, weak)
        converted.append(v)
    cols = [lax.broadcast_in_dim(v, batch_shape + (1,), tuple(bdims))
            for v, (_, _, bdims) in zip(converted, comps)]
    return cols[0] if k == 1 else lax.concatenate(cols, nb)


def _gather(x: Any, entries: list[Any], *, mode: Any, fill_value: Any,
            indices_are_sorted: bool, unique_indices: bool, normalize: bool = True) -> Any:
    aval = get_aval(x)
    ix = _Indexer(aval.shape, entries, normalize=normalize)
    empty_dims = [d for d, n in ix.collapsed_sizes.items() if n == 0]
    if empty_dims:
        if int(np.prod(ix.batch_shape, dtype=np.int64)):
            raise IndexError(f"index is out of bounds for axis {empty_dims[0]} with size 0")
        return lax.full(ix.shape, 0, aval.dtype)
    out = lax.gather(x, ix.indices, ix.gather_dnums(), ix.slice_sizes,
                     indices_are_sorted=bool(indices_are_sorted or ix.sorted),
                     unique_indices=bool(unique_indices or ix.unique),
                     mode=mode, fill_value=fill_value)
    return lax.expand_dims(out, ix.new_axes) if ix.new_axes else out
