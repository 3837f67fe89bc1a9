"""The NumPy twin's helpers: JAX's semantics for the calls whose NumPy spelling differs.

A generated program's NumPy twin calls these as `_h.name(...)` where the Ember program calls
`lax.name(...)`, `x.at[idx].op(v)` or a reduction: the same arguments, computed in NumPy.
Input: NumPy arrays (and Python callables for the control flow). Output: NumPy arrays in
the dtype JAX gives. Invariants: float sums, products, means, dots and cumulative sums are
computed in float64 and rounded once to the result's dtype (the reference a correct
float32-accumulating implementation must come within a few ulps of); integer ones wrap in
the result's dtype, as JAX's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core import dtypes


def sign(x: Any) -> np.ndarray:
    """`jnp.sign`: as NumPy's, except that a zero keeps its sign (sign(-0.0) is -0.0)."""
    x = np.asarray(x)
    return np.where(x == 0, x, np.sign(x))


def _acc(x: np.ndarray, dtype: str) -> np.ndarray:
    """`x` in the type the reduction accumulates in: float64 for floats, else `dtype`."""
    return np.asarray(x, np.float64 if dtypes.kind(np.dtype(dtype)) == "f" else dtype)


def reduce(how: str, x: Any, axis: Any, keepdims: bool, dtype: str) -> np.ndarray:
    """sum/prod/mean/max/min/any/all of `x` over `axis`, the result in `dtype`."""
    x = np.asarray(x)
    if how in ("max", "min", "any", "all"):
        out = getattr(np, how)(x, axis=axis, keepdims=keepdims)
    else:
        with np.errstate(all="ignore"):
            out = getattr(np, how)(_acc(x, dtype), axis=axis, keepdims=keepdims)
    return np.asarray(out).astype(dtype)


def cumsum(x: Any, axis: int, dtype: str) -> np.ndarray:
    """Cumulative sum along `axis` in `dtype` (bool counts in the default integer)."""
    return np.cumsum(_acc(x, dtype), axis=axis).astype(dtype)


def dot(a: Any, b: Any, dtype: str) -> np.ndarray:
    """`jnp.dot(a, b)`, its result in `dtype`."""
    with np.errstate(all="ignore"):
        return np.asarray(np.dot(_acc(a, dtype), _acc(b, dtype))).astype(dtype)


def at(x: Any, idx: Any, op: str, v: Any) -> np.ndarray:
    """`x.at[idx].op(v)` for in-bounds, duplicate-free indices: a copy of `x` updated."""
    out = np.array(x, copy=True)
    cur = out[idx]
    if op == "set":
        new = v
    elif op == "add":
        new = cur + v
    elif op == "multiply":
        new = cur * v
    elif op == "min":
        new = np.minimum(cur, v)
    else:
        new = np.maximum(cur, v)
    out[idx] = np.asarray(new).astype(out.dtype)
    return out


def scatter_add(x: Any, idx: Any, v: Any) -> np.ndarray:
    """`x.at[idx].add(v)` with an integer array `idx` (duplicates accumulate)."""
    out = np.array(x, copy=True)
    np.add.at(out, idx, np.asarray(v).astype(out.dtype))
    return out


def dynamic_slice_in_dim(x: Any, start: Any, size: int, axis: int = 0) -> np.ndarray:
    """`lax.dynamic_slice_in_dim` with an in-bounds start."""
    x = np.asarray(x)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(int(start), int(start) + size)
    return x[tuple(idx)]


def dynamic_update_slice_in_dim(x: Any, update: Any, start: Any, axis: int) -> np.ndarray:
    """`lax.dynamic_update_slice_in_dim` with an in-bounds start."""
    out = np.array(x, copy=True)
    idx = [slice(None)] * out.ndim
    update = np.asarray(update)
    idx[axis] = slice(int(start), int(start) + update.shape[axis])
    out[tuple(idx)] = update
    return out


def cond(pred: Any, true_fn: Callable, false_fn: Callable, *ops: Any) -> Any:
    """`lax.cond`: one branch run."""
    return true_fn(*ops) if bool(pred) else false_fn(*ops)


def switch(index: Any, branches: list[Callable], *ops: Any) -> Any:
    """`lax.switch` with the index clamped into range, as JAX clamps it."""
    i = min(max(int(index), 0), len(branches) - 1)
    return branches[i](*ops)


def fori_loop(lower: int, upper: int, body: Callable, init: Any) -> Any:
    """`lax.fori_loop`: the index is an int32, as under JAX."""
    carry = init
    for i in range(lower, upper):
        carry = body(np.int32(i), carry)
    return carry


def while_loop(cond_fn: Callable, body: Callable, init: Any) -> Any:
    """`lax.while_loop`."""
    carry = init
    while bool(cond_fn(carry)):
        carry = body(carry)
    return carry


def scan(fn: Callable, init: Any, xs: Any) -> tuple[Any, Any]:
    """`lax.scan` over the leading axis of an array (or a tuple of arrays: tuples of their
    rows), with one array output per step shaped as `init` (or, when `init` is a tuple,
    as its first element: what the generators produce)."""
    rows = list(zip(*xs)) if isinstance(xs, tuple) else list(np.asarray(xs))
    carry, ys = init, []
    for r in rows:
        carry, y = fn(carry, r)
        ys.append(np.asarray(y))
    if not ys:
        c = np.asarray(init[0] if isinstance(init, tuple) else init)
        return carry, np.zeros((0,) + c.shape, c.dtype)
    return carry, np.stack(ys)
