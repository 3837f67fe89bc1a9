"""Reductions and scans with a user's combining function, as `jax.lax`: associative_scan
and reduce.

Input: pytrees of arrays and a Python function combining two pytrees of the same
structure (associative_scan: whole slices; reduce: scalars). Output: pytrees of arrays.
Invariants: associative_scan is the work-efficient parallel prefix (O(log n) levels of
strided slices): combine adjacent pairs, scan the half-length result recursively (its
entries are the prefixes ending at odd positions), fill in the even positions with one
more combine, interleave; `fn` must be associative and works on any pytree, `reverse`
scans from the end. reduce with a monoid JAX recognizes (lax.add with 0, lax.mul with 1,
lax.max/min with -inf/+inf or the dtype's extremes, bitwise and/or/xor with their
identities) is that lax reduction; any other computation is a pairwise tree of
applications of the vmapped computation over adjacent elements (so it must be associative,
as XLA's reduce requires), with init_values combined once in front. Both are written with
slices, concatenates and vmap, so they are jit-able, differentiable and batchable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import dtypes, traceback_util
from ember.core.trace import Tracer, get_aval
from ember.lax import _ops, _slicing
from ember.lax._base import convert_element_type, is_concrete_constant
from ember.tree_util import tree_flatten, tree_unflatten

__all__ = ["associative_scan", "reduce"]


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """[even0, odd0, even1, odd1, ...] along axis (even has as many entries as odd or one
    more): stacked on a new axis after `axis` and merged into it."""
    ne, no = get_aval(even).shape[axis], get_aval(odd).shape[axis]
    if ne == no + 1:  # give odd a dummy last entry, dropped after the merge
        odd = _slicing.concatenate([odd, _slicing.slice_in_dim(even, ne - 1, ne, axis=axis)],
                                   axis)
    shape = get_aval(even).shape
    stacked_shape = (*shape[:axis + 1], 1, *shape[axis + 1:])
    pair = _slicing.concatenate([_ops.reshape(even, stacked_shape),
                                 _ops.reshape(odd, stacked_shape)], axis + 1)
    merged = _ops.reshape(pair, (*shape[:axis], 2 * ne, *shape[axis + 1:]))
    return _slicing.slice_in_dim(merged, 0, ne + no, axis=axis)


@traceback_util.api_boundary
def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The inclusive prefix combination along axis: out[i] = elems[0] fn ... fn elems[i]
    (from the end when reverse), for an associative fn on pytrees of slices."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    flat, tree = tree_flatten(elems)
    if not flat:
        return elems
    flat = [_as_array(x) for x in flat]
    nd = get_aval(flat[0]).ndim
    if not -nd <= axis < nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    if reverse:
        flat = [_ops.rev(x, (axis,)) for x in flat]
    n = get_aval(flat[0]).shape[axis]
    if not all(get_aval(x).shape[axis] == n for x in flat[1:]):
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in flat]})")

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError("lax.associative_scan: fn must return a pytree with the same "
                            f"structure as its inputs: {out_tree} vs. {tree}")
        return out

    def sl(x: Any, start: int, stop: int | None, stride: int = 1) -> Any:
        return _slicing.slice_in_dim(x, start, stop, stride, axis)

    def prefix(xs: list[Any]) -> list[Any]:
        m = get_aval(xs[0]).shape[axis]
        if m < 2:
            return xs
        # pairs[j] = x[2j] fn x[2j+1]; its prefixes are the prefixes at odd positions 2j+1.
        pairs = combine([sl(x, 0, m - 1, 2) for x in xs], [sl(x, 1, None, 2) for x in xs])
        odd = prefix(pairs)
        # The prefix at even position 2j (j >= 1) is odd[j-1] fn x[2j]; position 0 is x[0].
        n_even = (m + 1) // 2 - 1
        evens = combine([sl(o, 0, n_even) for o in odd], [sl(x, 2, None, 2) for x in xs])
        even = [_slicing.concatenate([sl(x, 0, 1), e], axis) for x, e in zip(xs, evens)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = prefix(flat)
    if reverse:
        out = [_ops.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _as_array(x: Any) -> Any:
    if is_concrete_constant(x):  # a NumPy value or Python scalar: keep its (weak) type
        aval = get_aval(x)
        return convert_element_type(x, aval.dtype, aval.weak_type)
    return x


def _monoid(computation: Callable, inits: list[Any]) -> Callable | None:
    """The lax reduction computation(init, .) stands for, when JAX would recognize it: a
    single operand, a concrete init equal to the operation's identity."""
    if len(inits) != 1 or isinstance(inits[0], Tracer):
        return None
    init = np.asarray(inits[0])
    if init.shape != ():
        return None
    kind = dtypes.kind(init.dtype)
    computation = traceback_util.unwrap(computation)  # (ember.lax.add is _ops.add's entry)
    if computation is _ops.add and init == 0:
        return _ops.reduce_sum
    if computation is _ops.mul and init == 1:
        return _ops.reduce_prod
    if computation is _ops.max and _is_lowest(init):
        return _ops.reduce_max
    if computation is _ops.min and _is_highest(init):
        return _ops.reduce_min
    if computation is _ops.bitwise_or and kind in "biu" and not init.any():
        return _ops.reduce_or
    if computation is _ops.bitwise_xor and kind in "biu" and not init.any():
        return _ops.reduce_xor
    if computation is _ops.bitwise_and and kind in "biu" and _all_ones(init):
        return _ops.reduce_and
    return None


def _is_lowest(v: np.ndarray) -> bool:
    if dtypes.kind(v.dtype) == "f":
        return bool(v == -np.inf)
    if dtypes.kind(v.dtype) == "b":
        return not bool(v)
    return dtypes.kind(v.dtype) in "iu" and int(v) == np.iinfo(v.dtype).min


def _is_highest(v: np.ndarray) -> bool:
    if dtypes.kind(v.dtype) == "f":
        return bool(v == np.inf)
    if dtypes.kind(v.dtype) == "b":
        return bool(v)
    return dtypes.kind(v.dtype) in "iu" and int(v) == np.iinfo(v.dtype).max


def _all_ones(v: np.ndarray) -> bool:
    if dtypes.kind(v.dtype) == "b":
        return bool(v)
    return int(v.astype(v.dtype.str.replace("i", "u"))) == np.iinfo(
        np.dtype(v.dtype.str.replace("i", "u"))).max


def flatten_operands_and_inits(operands: Any, init_values: Any) -> tuple[list, list, Any]:
    """(operand leaves, init leaves, tree) of a reduction over pytrees (lax.reduce,
    lax.reduce_window), with JAX's errors when the two trees differ."""
    flat, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}")
    if len(flat) != len(inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(flat)} vs. {len(inits)}")
    return flat, inits, tree


@traceback_util.api_boundary
def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int]) -> Any:
    """operands reduced over `dimensions` with computation(acc, x) on pytrees of scalars,
    starting from init_values (same structure)."""
    flat, inits, tree = flatten_operands_and_inits(operands, init_values)
    dims = tuple(int(d) for d in dimensions)
    flat = [_as_array(x) for x in flat]
    monoid = _monoid(computation, inits)
    if monoid is not None:
        out = monoid(flat[0], dims)
        init_aval = get_aval(_as_array(inits[0]))
        weak = get_aval(flat[0]).weak_type and init_aval.weak_type
        return tree_unflatten(tree, [convert_element_type(out, get_aval(out).dtype, weak)])
    shape = get_aval(flat[0]).shape
    nd = len(shape)
    for x in flat[1:]:
        if get_aval(x).shape != shape:
            raise ValueError("reduce operands must all have the same shape; got "
                             f"{[get_aval(v).shape for v in flat]}")
    if any(not 0 <= d < nd for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"reduce dimensions {dims} are not distinct dimensions of an "
                         f"operand of rank {nd}")
    keep = [i for i in range(nd) if i not in dims]
    kept_shape = tuple(shape[i] for i in keep)
    n = math.prod(shape[d] for d in dims)
    m = math.prod(kept_shape)
    # (n, m): reduced dimensions flattened in front, kept ones flattened behind.
    rows = [_ops.reshape(_ops.transpose(x, (*dims, *keep)), (n, m)) for x in flat]
    inits = [_as_array(v) for v in inits]
    from ember.vmap_api import vmap

    def apply(a: list[Any], b: list[Any]) -> list[Any]:
        """computation elementwise over equally shaped 1-D operands."""
        def scalar_fn(acc: list[Any], x: list[Any]) -> list[Any]:
            out, out_tree = tree_flatten(
                computation(tree_unflatten(tree, acc), tree_unflatten(tree, x)))
            if out_tree != tree:
                raise ValueError("reduce computation must return a pytree with the same "
                                 f"structure as the operands: {out_tree} vs. {tree}")
            return out
        return vmap(scalar_fn)(a, b)

    count = n
    while count > 1:
        # Adjacent pairs (order kept, so associativity suffices), the odd one carried over.
        half = count // 2
        pairs = apply([_ops.reshape(_slicing.slice_in_dim(r, 0, 2 * half, 2, 0), (half * m,))
                       for r in rows],
                      [_ops.reshape(_slicing.slice_in_dim(r, 1, 2 * half, 2, 0), (half * m,))
                       for r in rows])
        pairs = [_ops.reshape(p, (half, m)) for p in pairs]
        if count % 2:
            pairs = [_slicing.concatenate([p, _slicing.slice_in_dim(r, count - 1, count,
                                                                     axis=0)], 0)
                     for p, r in zip(pairs, rows)]
        rows, count = pairs, half + count % 2
    starts = [_ops.broadcast_in_dim(convert_element_type(v, get_aval(r).dtype), (m,), ())
              for v, r in zip(inits, rows)]
    if n == 0:
        out = starts
    else:
        out = apply(starts, [_ops.reshape(r, (m,)) for r in rows])
    return tree_unflatten(tree, [_ops.reshape(o, kept_shape) for o in out])
