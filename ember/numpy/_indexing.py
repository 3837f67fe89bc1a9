"""NumPy indexing on Ember arrays: `x[idx]`, `x.at[idx].set/add/...`, take, take_along_axis.

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

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.array import ArrayImpl
from ember.core import dtypes
from ember.core.errors import NonConcreteBooleanIndexError
from ember.core.trace import Tracer, get_aval
from ember.lax._slicing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers

__all__ = ["take", "take_along_axis", "_rewriting_take", "_IndexUpdateHelper",
           "_IndexUpdateRef"]

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1


# ---------------------------------------------------------------------------------------------
# Index entries: an index expression normalized to one entry per operand dim (plus None).
# ---------------------------------------------------------------------------------------------

class _None:
    """A new axis of size 1."""


class _Int:
    """A static integer (not yet wrapped)."""

    def __init__(self, value: int):
        self.value = value


class _Slice:
    """A static slice, resolved against its dim: start, stop, step as range() takes them."""

    def __init__(self, start: int, stop: int, step: int):
        self.start, self.stop, self.step = start, stop, step
        self.size = len(range(start, stop, step))


class _Array:
    """An integer index array: a NumPy array (static) or an Array / tracer (dynamic)."""

    def __init__(self, value: Any):
        self.value = value
        self.static = isinstance(value, np.ndarray)
        self.shape = value.shape if self.static else get_aval(value).shape


def _is_dynamic(x: Any) -> bool:
    return isinstance(x, (Tracer, ArrayImpl))


def _as_array(x: Any) -> Any:
    """An ember value for x (Arrays and tracers pass through, NumPy values are converted)."""
    if _is_dynamic(x):
        return x
    aval = get_aval(np.asarray(x) if isinstance(x, (list, tuple)) else x)
    value = np.asarray(x) if isinstance(x, (list, tuple)) else x
    return lax.convert_element_type(value, aval.dtype, aval.weak_type)


def _static_slice_part(v: Any, what: str, s: slice) -> int | None:
    if v is None:
        return None
    if isinstance(v, Tracer):
        raise IndexError(
            f"Array slice indices must have static start/stop/step to be used with NumPy "
            f"indexing syntax. Found slice({s.start}, {s.stop}, {s.step}) with a traced {what}. "
            f"To index a statically sized array at a dynamic position, try "
            f"lax.dynamic_slice/dynamic_update_slice (Ember, like JAX, does not support "
            f"dynamically sized arrays within jit compiled functions).")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"slice indices must be integers or None, got {v!r} as the {what} of "
                        f"{s!r}") from None


def _mask_value(x: Any) -> np.ndarray:
    """The concrete value of a boolean index, or NonConcreteBooleanIndexError."""
    if isinstance(x, Tracer):
        raise NonConcreteBooleanIndexError(
            f"Array boolean indices must be concrete; got {x.aval.str_short()}. A boolean "
            f"mask selects a number of elements that depends on its values, and inside jit "
            f"shapes must be static. Use ember.numpy.where(mask, x, fill) to keep the shape, "
            f"or compute the mask outside jit (a concrete mask works under jit too).")
    if isinstance(x, ArrayImpl):
        return np.asarray(x)
    return np.asarray(x, dtype=bool)


def _classify(item: Any) -> Any:
    """One raw index item -> None / Ellipsis / slice / _Int / ('mask', ndarray) / _Array."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        return slice(_static_slice_part(item.start, "start", item),
                     _static_slice_part(item.stop, "stop", item),
                     _static_slice_part(item.step, "step", item))
    if isinstance(item, (bool, np.bool_)):
        return ("mask", np.asarray(item, dtype=bool))
    if isinstance(item, (int, np.integer)):
        return _Int(int(item))
    if isinstance(item, (list, tuple)):
        try:
            item = np.asarray(item)
        except Exception:  # a sequence holding tracers: let ember.numpy stack it
            from ember import numpy as jnp
            item = jnp.asarray(item)
        if isinstance(item, np.ndarray) and item.dtype == object:
            raise TypeError(f"Indexer must be an integer or boolean array, or a sequence of "
                            f"them; got a sequence that is not a rectangular array: {item!r}")
        if isinstance(item, np.ndarray) and item.size == 0 and item.dtype.kind == "f":
            item = item.astype(np.int64)  # `[]` is an empty integer index, as in NumPy
    if isinstance(item, (np.ndarray, np.generic)) or _is_dynamic(item):
        dtype = item.dtype if isinstance(item, (np.ndarray, np.generic)) else get_aval(item).dtype
        if dtype.kind == "b":
            return ("mask", _mask_value(item))
        if dtype.kind not in "iu":
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                            f"{dtype.name}.")
        if isinstance(item, (np.ndarray, np.generic)):
            arr = np.asarray(item)
            return _Int(int(arr)) if arr.ndim == 0 else _Array(arr.astype(np.int64))
        return _Array(item)
    if hasattr(item, "__jax_array__"):
        return _classify(item.__jax_array__())
    raise TypeError(f"Indexing with an object of type {type(item).__name__} is not supported: "
                    f"use integers, slices, None, Ellipsis, or integer or boolean arrays. Got "
                    f"{item!r}.")


def _parse(idx: Any, shape: tuple[int, ...]) -> tuple[list[Any], tuple[int, ...]]:
    """Normalize an index against `shape`.

    Returns the entries (one per operand dim, plus _None) and the positions where scalar
    booleans insert a unit axis into the operand (NumPy treats `True` as a mask over a new
    axis of size 1, so x[True] has shape (1, *x.shape) and x[False] (0, *x.shape)).
    """
    items = [_classify(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")

    def consumed(i: Any) -> int:
        if i is None or i is Ellipsis:
            return 0
        if isinstance(i, tuple):
            return i[1].ndim
        return 1

    used = sum(consumed(i) for i in items)
    if used > len(shape):
        raise IndexError(f"Too many indices: {len(shape)}-dimensional array indexed with "
                         f"{used} regular indices.")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (len(shape) - used)
    else:
        items += [slice(None)] * (len(shape) - used)
    # Scalar booleans add an operand axis of size 1; find where, then resolve every entry.
    entries: list[Any] = []
    unit_axes: list[int] = []
    dim = 0
    for i in items:
        if i is None:
            entries.append(_None())
        elif isinstance(i, tuple):
            mask = i[1]
            if mask.ndim == 0:
                unit_axes.append(dim + len(unit_axes))
                entries.append(_Array(np.zeros(1 if mask else 0, np.int64)))
                continue
            got, want = mask.shape, shape[dim:dim + mask.ndim]
            if got != want:
                raise IndexError(f"boolean index did not match shape of indexed array in index "
                                 f"{dim}: got {got}, expected {want}")
            entries.extend(_Array(nz.astype(np.int64)) for nz in np.nonzero(mask))
            dim += mask.ndim
        elif isinstance(i, slice):
            entries.append(_Slice(*i.indices(shape[dim])))
            dim += 1
        else:
            entries.append(i)
            dim += 1
    return entries, tuple(unit_axes)


def _operand_dims(entries: list[Any]) -> list[int | None]:
    """The operand dim each entry indexes (None for new axes)."""
    out, d = [], 0
    for e in entries:
        if isinstance(e, _None):
            out.append(None)
        else:
            out.append(d)
            d += 1
    return out


# ---------------------------------------------------------------------------------------------
# Static slicing: `slice` + `rev` for the slices, `squeeze` for ints, new axes for None.
# ---------------------------------------------------------------------------------------------

def _apply_static_slices(x: Any, entries: list[Any]) -> Any:
    """Apply every _Slice (and every in-range _Int as a length-1 slice) with one `slice`
    and one `rev`; the dims stay (ints keep a size-1 dim)."""
    shape = get_aval(x).shape
    starts, limits, strides, revs = [], [], [], []
    for e, d in zip(entries, _operand_dims(entries)):
        if d is None:
            continue
        size = shape[d]
        if isinstance(e, _Slice) and e.size > 0:
            if e.step > 0:
                starts.append(e.start)
                limits.append(e.start + (e.size - 1) * e.step + 1)
                strides.append(e.step)
            else:
                # Elements start, start+step, ..., lowest: slice them in increasing order
                # (stride -step from the lowest one), then reverse the dim.
                low = e.start + (e.size - 1) * e.step
                starts.append(low)
                limits.append(e.start + 1)
                strides.append(-e.step)
                if e.size > 1:
                    revs.append(d)
        elif isinstance(e, _Slice):
            starts.append(0)
            limits.append(0)
            strides.append(1)
        elif isinstance(e, _Int):
            i = e.value + size if e.value < 0 else e.value
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(size)
            strides.append(1)
    # Strides collapse to 1 where they make no difference (a single element).
    strides = [1 if lim - s <= 1 else st for s, lim, st in zip(starts, limits, strides)]
    if tuple(starts) != (0,) * len(shape) or tuple(limits) != shape or any(
            st != 1 for st in strides):
        x = lax.slice(x, starts, limits, None if all(st == 1 for st in strides) else strides)
    if revs:
        x = lax.rev(x, revs)
    return x


def _basic_take(x: Any, entries: list[Any]) -> Any:
    x = _apply_static_slices(x, entries)
    dims = [d for e, d in zip(entries, _operand_dims(entries)) if isinstance(e, _Int)]
    if dims:
        x = lax.squeeze(x, dims)
    return _insert_new_axes(x, entries)


def _insert_new_axes(x: Any, entries: list[Any]) -> Any:
    """Add the None axes, at their positions among the non-int entries."""
    kept = [e for e in entries if not isinstance(e, _Int)]
    new = [i for i, e in enumerate(kept) if isinstance(e, _None)]
    return lax.expand_dims(x, new) if new else x


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
                if normalize:
                    value = _wrap_negative(value, operand_shape[d])
                rank = len(np.shape(value)) if isinstance(value, np.ndarray) else \
                    get_aval(value).ndim
                # Right-aligned broadcasting into the 'B' dims.
                comps.append((d, value, where["B"][len(self.batch) - rank:]))
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
    if aval.dtype.kind != "i":
        return value
    if aval.dtype.itemsize < 4:
        # Widen first so i + size cannot overflow a narrow index dtype.
        value = lax.convert_element_type(value, np.int32)
    return lax.select_n(lax.lt(value, 0), value, lax.add(value, size))


def _stack_components(comps: list[tuple[int, Any, list[int]]], batch_shape: tuple[int, ...]
                      ) -> Any:
    """The (*batch_shape, k) index array: component j broadcast into its batch dims."""
    dtype = _index_dtype(comps)
    k = len(comps)
    nb = len(batch_shape)
    if all(isinstance(v, np.ndarray) for _, v, _ in comps):
        out = np.zeros(batch_shape + (k,), dtype)
        for j, (_, v, bdims) in enumerate(comps):
            shape = [1] * nb
            for b, s in zip(bdims, v.shape):
                shape[b] = s
            # Out-of-range values stay out of range after the clip to the index dtype.
            info = np.iinfo(dtype)
            out[..., j] = np.clip(v, info.min, info.max).reshape(shape)
        return out
    cols = []
    for _, v, bdims in comps:
        if isinstance(v, np.ndarray):
            info = np.iinfo(dtype)
            v = lax.convert_element_type(np.clip(v, info.min, info.max).astype(dtype), dtype)
        else:
            v = lax.convert_element_type(v, dtype)
        cols.append(lax.broadcast_in_dim(v, batch_shape + (1,), tuple(bdims)))
    return cols[0] if k == 1 else lax.concatenate(cols, nb)


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


# ---------------------------------------------------------------------------------------------
# x.at[idx]
# ---------------------------------------------------------------------------------------------

def _scatter_update(x: Any, idx: Any, values: Any, scatter: Callable[..., Any], *,
                    indices_are_sorted: bool, unique_indices: bool, mode: Any) -> Any:
    """x with `values` combined in at x[idx] by a lax scatter function."""
    x = _as_array(x)
    aval = get_aval(x)
    entries, unit_axes = _parse(idx, aval.shape)
    operand = lax.expand_dims(x, unit_axes) if unit_axes else x
    ix = _Indexer(get_aval(operand).shape, entries)
    if isinstance(values, (list, tuple)):
        values = _as_array(values)
    # NumPy values and Python scalars convert right away (no equation is staged for them).
    values = lax.convert_element_type(values, aval.dtype, aval.weak_type)
    from ember.numpy._manipulation import broadcast_to
    updates = lax.reshape(broadcast_to(values, ix.shape), ix.squeezed)
    out = scatter(operand, ix.indices, updates, ix.scatter_dnums(),
                  indices_are_sorted=bool(indices_are_sorted or ix.sorted),
                  unique_indices=bool(unique_indices or ix.unique), mode=mode)
    return lax.reshape(out, aval.shape) if unit_axes else out


class _IndexUpdateHelper:
    """What `x.at` returns: `x.at[idx]` is an _IndexUpdateRef."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: functional versions of `x[idx] = v`, `x[idx] += v`, ...

    Each method returns a new array; out-of-bounds updates are dropped unless `mode` says
    otherwise ('clip' clamps the indices; 'promise_in_bounds' drops, as XLA does).
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None, out_sharding: Any = None) -> Any:
        """x[idx], with the chosen out-of-bounds `mode` ('fill' uses `fill_value`)."""
        return _rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode,
                               fill_value=fill_value)

    def _update(self, values: Any, scatter: Callable[..., Any], indices_are_sorted: bool,
                unique_indices: bool, mode: Any) -> Any:
        return _scatter_update(self.array, self.index, values, scatter,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = values (for duplicate indices the last value wins)."""
        return self._update(values, lax.scatter, indices_are_sorted, unique_indices, mode)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] += values (duplicates accumulate)."""
        return self._update(values, lax.scatter_add, indices_are_sorted, unique_indices, mode)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] *= values (duplicates accumulate)."""
        return self._update(values, lax.scatter_mul, indices_are_sorted, unique_indices, mode)

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] /= values, as JAX: x / ones_like(x).at[idx].multiply(values)."""
        from ember import numpy as jnp
        x = _as_array(self.array)
        denom = _scatter_update(jnp.ones_like(x), self.index, values, lax.scatter_mul,
                                indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices, mode=mode)
        return jnp.divide(x, denom)

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] **= values, as JAX: x ** ones_like(x).at[idx].multiply(values)."""
        from ember import numpy as jnp
        x = _as_array(self.array)
        exponent = _scatter_update(jnp.ones_like(x), self.index, values, lax.scatter_mul,
                                   indices_are_sorted=indices_are_sorted,
                                   unique_indices=unique_indices, mode=mode)
        return jnp.power(x, exponent)

    def min(self, values: Any, *, indices_are_sorted: bool = False,  # noqa: A003
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = minimum(x[idx], values) (duplicates accumulate)."""
        return self._update(values, lax.scatter_min, indices_are_sorted, unique_indices, mode)

    def max(self, values: Any, *, indices_are_sorted: bool = False,  # noqa: A003
            unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = maximum(x[idx], values) (duplicates accumulate)."""
        return self._update(values, lax.scatter_max, indices_are_sorted, unique_indices, mode)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """x[idx] = func(x[idx]), applied once per occurrence of a duplicate index."""
        x = _as_array(self.array)

        def scatter(operand: Any, indices: Any, updates: Any, dnums: Any, **kw: Any) -> Any:
            return lax.scatter_apply(operand, indices, func, dnums,
                                     update_shape=get_aval(updates).shape, **kw)
        return _scatter_update(x, self.index, lax.full((), 0, get_aval(x).dtype), scatter,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)


# ---------------------------------------------------------------------------------------------
# take, take_along_axis
# ---------------------------------------------------------------------------------------------

def _index_operand(indices: Any, fname: str) -> Any:
    if isinstance(indices, (list, tuple)):
        indices = np.asarray(indices)
    if isinstance(indices, (np.ndarray, np.generic, int)) and not isinstance(indices, bool):
        value = np.asarray(indices)
        if value.dtype.kind not in "iu":
            raise TypeError(f"{fname} indices must be integers, got {value.dtype.name}")
        return value.astype(np.int64)
    dt = get_aval(indices).dtype
    if dt.kind not in "iu":
        raise TypeError(f"{fname} indices must be integers, got {dt.name}")
    return indices


def _mode_for_take(mode: Any, fname: str) -> tuple[Any, bool, bool]:
    """(gather mode, wrap negatives once, wrap modulo the size) for take's mode strings."""
    if mode is None or mode == "fill" or mode is GatherScatterMode.FILL_OR_DROP:
        return GatherScatterMode.FILL_OR_DROP, True, False
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{fname} is not supported.")
    if mode == "wrap":
        return GatherScatterMode.PROMISE_IN_BOUNDS, False, True
    if mode == "clip" or mode is GatherScatterMode.CLIP:
        return GatherScatterMode.CLIP, False, False
    if mode == "promise_in_bounds" or mode is GatherScatterMode.PROMISE_IN_BOUNDS:
        return GatherScatterMode.PROMISE_IN_BOUNDS, True, False
    raise ValueError(f"Invalid mode '{mode}' for np.{fname}")


def _mod_index(value: Any, size: int) -> Any:
    """value mod size, in [0, size) (NumPy's 'wrap')."""
    if isinstance(value, np.ndarray):
        return np.mod(value, size)
    r = lax.rem(value, lax.convert_element_type(size, get_aval(value).dtype))
    if get_aval(value).dtype.kind == "u":
        return r
    return lax.select_n(lax.lt(r, 0), r, lax.add(r, size))


def _take_on_axis(a: Any, idx_entry: Any, axis: int, fname: str, mode: Any,
                  fill_value: Any, unique_indices: bool = False,
                  indices_are_sorted: bool = False, other: list[Any] | None = None) -> Any:
    gmode, normalize, wrap = _mode_for_take(mode, fname)
    size = get_aval(a).shape[axis]
    if wrap:
        if size == 0:
            raise IndexError(f"Cannot do a non-empty jnp.{fname}() from an empty axis.")
        idx_entry = _mod_index(idx_entry, size)
    entries = list(other) if other is not None else [_Slice(0, s, 1)
                                                     for s in get_aval(a).shape]
    entries[axis] = _Array(idx_entry)
    if size == 0 and int(np.prod(entries[axis].shape, dtype=np.int64)):
        raise IndexError(f"Cannot do a non-empty jnp.{fname}() from an empty axis.")
    return _gather(a, entries, mode=gmode, fill_value=fill_value,
                   indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                   normalize=normalize)


def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: Any = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """Elements of `a` at `indices` along `axis` (the flattened array when None).

    mode None / 'fill': out-of-range indices give fill_value (NaN for floats, INT_MIN for
    signed, UINT_MAX for unsigned, True for bool); negative indices count from the end.
    'clip' clamps (negatives go to 0), 'wrap' wraps modulo the size; 'raise' is not
    supported (it would need a data-dependent error).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a = _as_array(a)
    idx = _index_operand(indices, "take")
    if axis is None:
        a = lax.reshape(a, (get_aval(a).size,))
        axis = 0
    ndim = get_aval(a).ndim
    if ndim == 0:
        raise ValueError("take: the array must have at least one dimension (axis=None "
                         "flattens it)")
    axis = _canonical_axis(axis, ndim)
    return _take_on_axis(a, idx, axis, "take", mode, fill_value, unique_indices,
                         indices_are_sorted)


def _canonical_axis(axis: Any, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None) -> Any:
    """out[..., i, ...] = arr[..., indices[..., i, ...], ...] along `axis`; the other dims
    of arr and indices broadcast. Out-of-range indices fill by default, as `take`."""
    a = _as_array(arr)
    idx = _index_operand(indices, "take_along_axis")
    idx_shape = idx.shape if isinstance(idx, np.ndarray) else get_aval(idx).shape
    if axis is None:
        if len(idx_shape) != 1:
            raise ValueError(f"when axis=None, `indices` must have a single dimension, got "
                             f"shape {idx_shape}")
        a = lax.reshape(a, (get_aval(a).size,))
        axis = 0
    shape = get_aval(a).shape
    if len(idx_shape) != len(shape):
        raise ValueError(f"indices and arr must have the same number of dimensions; "
                         f"{len(idx_shape)} vs. {len(shape)}")
    axis = _canonical_axis(axis, len(shape))
    for d, (s, t) in enumerate(zip(shape, idx_shape)):
        if d != axis and s != t and 1 not in (s, t):
            raise ValueError(f"indices and arr shapes are not broadcast-compatible: "
                             f"{idx_shape} vs. {shape}")
    # Every other dim d is read through iota(shape[d]) aligned on dim d, so all index arrays
    # broadcast to the result shape and the gather collapses every operand dim.
    rank = len(shape)
    other: list[Any] = []
    for d, s in enumerate(shape):
        line = np.arange(s, dtype=np.int64).reshape([s if i == d else 1 for i in range(rank)])
        other.append(_Array(line))
    return _take_on_axis(a, idx, axis, "take_along_axis", mode, fill_value, other=other)
