"""Python Array API standard (2024.12) pieces of ember.numpy that have no NumPy-named home:
`__array_namespace_info__`, `from_dlpack`, `diff`.

Input: arrays. Output: as the standard specifies. The rest of the standard's names live in
the family modules (permute_dims, matrix_transpose, concat, unstack and astype in
_manipulation; acos-style names, bitwise_invert, bitwise_left_shift, pow, copysign, hypot,
logaddexp, signbit, trunc and clip in _ufuncs; isdtype in _dtypes; std/var take
`correction=` in _reductions). Invariant: the inspection object reflects the current
jax_enable_x64 setting each time it is asked (default dtypes are 32-bit unless x64).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember.array import devices as _devices
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import ensure_array

__all__ = ["__array_namespace_info__", "from_dlpack", "diff"]


class _NamespaceInfo:
    """What `xp.__array_namespace_info__()` returns: capabilities, devices and dtypes."""

    def capabilities(self) -> dict[str, Any]:
        # Boolean-mask indexing and nonzero without a static size have data-dependent
        # shapes, which jit cannot trace (as in JAX).
        return {"boolean indexing": False, "data-dependent shapes": False,
                "max dimensions": None}

    def default_device(self) -> Any:
        return _devices()[0]

    def devices(self) -> list[Any]:
        return list(_devices())

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        x64 = dtypes.x64_enabled()
        return {
            "real floating": dtypes.default_float(),
            "complex floating": np.dtype(np.complex128 if x64 else np.complex64),
            "integral": dtypes.default_int(),
            "indexing": dtypes.default_int(),
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        """The supported dtypes by name, optionally of a kind (an isdtype kind or a tuple)."""
        from ember.numpy._dtypes import isdtype
        names = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16",
                 "float32"]
        if dtypes.x64_enabled():
            names += ["int64", "uint64", "float64"]
        out = {n: np.dtype(n) for n in names}
        if kind is None:
            return out
        return {n: d for n, d in out.items() if isdtype(d, kind)}


def __array_namespace_info__() -> _NamespaceInfo:  # noqa: N807
    return _NamespaceInfo()


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """Copy the data of an object that exports DLPack into an Ember array.

    The counterpart of :func:`numpy.from_dlpack`: any object with ``__dlpack__`` (a NumPy
    array, a PyTorch tensor, another Ember array) is read through NumPy's DLPack import.

    Args:
        x: the object exporting DLPack.
        device: accepted for Array API compatibility.
        copy: accepted for Array API compatibility; the data is always copied.

    Returns:
        An Ember array with ``x``'s shape, dtype (canonicalized as ``jnp.array`` does) and
        values.

    Example:
        >>> jnp.from_dlpack(np.arange(3, dtype=np.int32))
        Array([0, 1, 2], dtype=int32)
    """
    from ember.numpy._creation import array
    return array(np.from_dlpack(x))


@jit_like_jax("diff", static_argnames=("n", "axis"))
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """Compute the n-th discrete difference along an axis.

    Args:
        a: an array.
        n: how many times to difference (a static int; 0 returns ``a``).
        axis: the axis to difference along.
        prepend: values joined before ``a`` along ``axis`` first (a scalar is broadcast).
        append: values joined after ``a`` along ``axis`` first.

    Returns:
        ``out[i] = a[i + 1] - a[i]`` applied ``n`` times (``a[i + 1] != a[i]`` for bools),
        so ``axis`` shrinks by ``n``.

    Example:
        >>> jnp.diff(jnp.array([1, 4, 9, 16]))
        Array([3, 5, 7], dtype=int32)
        >>> jnp.diff(jnp.array([1, 4, 9, 16]), n=2)
        Array([2, 2], dtype=int32)
    """
    from ember.numpy._manipulation import _axis, _slice_axis, broadcast_to, concatenate
    from ember.numpy._ufuncs import not_equal, subtract
    a = ensure_array(a)
    aval = get_aval(a)
    if aval.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    ax = _axis(axis, aval.ndim)
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            continue
        e = ensure_array(extra)
        if get_aval(e).ndim == 0:
            shape = list(aval.shape)
            shape[ax] = 1
            e = broadcast_to(e, tuple(shape))
        parts.append(e)
    if prepend is not None or append is not None:
        pieces = ([parts[0]] if prepend is not None else []) + [a] + (
            [parts[-1]] if append is not None else [])
        a = concatenate(pieces, ax)
    for _ in range(n):
        length = get_aval(a).shape[ax]
        if length == 0:
            break
        hi = _slice_axis(a, ax, 1, length)
        lo = _slice_axis(a, ax, 0, length - 1)
        a = not_equal(hi, lo) if dtypes.kind(get_aval(a).dtype) == "b" else subtract(hi, lo)
    return a

