"""Index construction for ember.numpy: ravel_multi_index, unravel_index, tril_indices,
triu_indices (and their `_from`), mask_indices, diag_indices, diag_indices_from,
fill_diagonal, ix_, and the index objects r_, c_, s_, index_exp.

Input: array-likes; sizes (n, k, m, dims, ndim) are static Python ints. Output: ember
arrays (index arrays in the default int dtype), or for s_/index_exp the plain Python index.
Invariants (JAX's): unravel_index clips out-of-range indices to the shape's corners instead
of raising; ravel_multi_index's mode='raise' checks concrete indices and under jit asks for
'wrap' or 'clip'; fill_diagonal returns a new array (inplace=True raises).
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer
from ember.numpy._promote import check_arraylike

__all__ = ["ravel_multi_index", "unravel_index", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "mask_indices", "diag_indices",
           "diag_indices_from", "fill_diagonal", "ix_", "r_", "c_", "s_", "index_exp"]


def _static_index(v: Any, what: str) -> int:
    if isinstance(v, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {v}\n"
            f"The error occurred because of the {what}.")
    return operator.index(v)


def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise", order: str = "C",
                      *, dtype: Any = None) -> Any:
    """Convert multi-indices into flat indices of an array of a given shape.

    Args:
        multi_index: a tuple of integer arrays, one per dimension, broadcast together.
        dims: the array's shape.
        mode: ``'raise'`` (the default: indices are checked when concrete; under ``jit``
            they cannot be, as in JAX), ``'wrap'`` (modulo each dimension) or ``'clip'``.
        order: ``'C'`` (row-major, the default) or ``'F'`` (column-major).
        dtype: the result's integer dtype (default the default int type).

    Returns:
        The flat indices, of the broadcast shape of ``multi_index``.

    Example:
        >>> jnp.ravel_multi_index((jnp.array([0, 1, 2]), jnp.array([1, 0, 3])), (3, 4))
        Array([ 1,  4, 11], dtype=int32)
    """
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(_static_index(d, "`dims` argument of ravel_multi_index()") for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    idx = [jnp.asarray(i) for i in multi_index]
    if dtype is None:
        dtype = jnp.result_type(int, *idx)
    dtype = np.dtype(dtype)
    if not jnp.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold flattened"
            f" index for dims={dims}. Use the dtype argument to pass a suitable"
            " dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
    for i, d in builtins.zip(idx, dims):
        if mode == "raise":
            if isinstance(i, Tracer):
                raise ConcretizationTypeError(
                    "Abstract tracer value encountered where concrete value is expected\n"
                    "The error occurred because ravel_multi_index was jit-compiled"
                    " with mode='raise'. Use mode='wrap' or mode='clip' instead.")
            if np.any(np.asarray(i) >= d) or np.any(np.asarray(i) < 0):
                raise ValueError("invalid entry in coordinates array")
        elif mode not in ("wrap", "clip"):
            raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
        if not jnp.issubdtype(i.dtype, np.integer):
            raise TypeError("only int indices permitted")
    if order == "F":
        idx, dims = idx[::-1], dims[::-1]
    elif order != "C":
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    out = jnp.zeros((), dtype)
    stride = 1
    for i, d in builtins.zip(idx[::-1], dims[::-1]):
        if mode == "wrap":
            i = i % d
        elif mode == "clip":
            i = jnp.clip(i, 0, d - 1)
        out = out + i.astype(dtype) * jnp.asarray(stride, dtype)
        stride *= d
    return out


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """Convert flat indices into multi-indices of an array of a given shape.

    Args:
        indices: an integer array of flat (row-major) indices.
        shape: the array's shape.

    Returns:
        A tuple of integer arrays, one per dimension. As in JAX (where NumPy raises), a
        negative index in ``[-size, 0)`` counts from the end, and indices beyond either end
        are clipped to the first or last position.

    Example:
        >>> jnp.unravel_index(jnp.array([1, 5, 11]), (3, 4))
        (Array([0, 1, 2], dtype=int32), Array([1, 1, 3], dtype=int32))
    """
    check_arraylike("unravel_index", indices)
    rest = jnp.asarray(indices)
    try:
        dims = list(shape)
    except TypeError:
        dims = [shape]
    if builtins.any(np.ndim(s) != 0 for s in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out: list[Any] = [0] * len(dims)
    for i in builtins.range(len(dims) - 1, -1, -1):
        rest, out[i] = jnp.divmod(rest, dims[i])
    above = rest > 0
    below = jnp.asarray(False) if jnp.issubdtype(rest.dtype, np.unsignedinteger) else rest < -1
    return tuple(jnp.where(above, s - 1, jnp.where(below, 0, i))
                 for s, i in builtins.zip(dims, out))


def _tri_indices(fname: str, n: Any, k: Any, m: Any, lower: bool) -> tuple[Any, Any]:
    n = _static_index(n, f"n argument of jnp.{fname}")
    k = _static_index(k, f"k argument of jnp.{fname}")
    m = n if m is None else _static_index(m, f"m argument of jnp.{fname}")
    # The sizes are static, so the index pattern is too: computed once on the host.
    i, j = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    dt = dtypes.default_int()
    return jnp.asarray(i.astype(dt)), jnp.asarray(j.astype(dt))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Return the indices of the lower triangle of an ``(n, m)`` array.

    Args:
        n: the number of rows.
        k: the diagonal at and below which the indices lie: 0 the main one, > 0 above it,
            < 0 below it.
        m: the number of columns (default ``n``).

    Returns:
        ``(rows, cols)``: 1-d integer arrays of the positions with ``j <= i + k``, in
        row-major order.

    Example:
        >>> jnp.tril_indices(3, k=-1, m=4)
        (Array([1, 2, 2], dtype=int32), Array([0, 0, 1], dtype=int32))
    """
    return _tri_indices("tril_indices", n, k, m, True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Return the indices of the upper triangle of an ``(n, m)`` array.

    Args:
        n: the number of rows.
        k: the diagonal at and above which the indices lie: 0 the main one, > 0 above it,
            < 0 below it.
        m: the number of columns (default ``n``).

    Returns:
        ``(rows, cols)``: 1-d integer arrays of the positions with ``j >= i + k``, in
        row-major order.

    Example:
        >>> jnp.triu_indices(3, k=1)
        (Array([0, 0, 1], dtype=int32), Array([1, 2, 2], dtype=int32))
    """
    return _tri_indices("triu_indices", n, k, m, False)


def _shape_2d(fname: str, arr: Any) -> tuple[int, ...]:
    if not hasattr(arr, "shape"):
        check_arraylike(fname, arr)
        arr = jnp.asarray(arr)
    if len(arr.shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tuple(arr.shape)


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """Return the indices of the lower triangle of a 2-d array.

    Args:
        arr: a 2-d array (only its shape is used).
        k: the diagonal at and below which the indices lie.

    Returns:
        ``tril_indices(arr.shape[0], k, arr.shape[1])``.

    Example:
        >>> jnp.tril_indices_from(jnp.zeros((2, 3)))
        (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
    """
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """Return the indices of the upper triangle of a 2-d array.

    Args:
        arr: a 2-d array (only its shape is used).
        k: the diagonal at and above which the indices lie.

    Returns:
        ``triu_indices(arr.shape[0], k, arr.shape[1])``.

    Example:
        >>> jnp.triu_indices_from(jnp.zeros((2, 2)))
        (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


def mask_indices(n: int, mask_func: Any, k: int = 0, *, size: int | None = None) -> Any:
    """Return the indices where a masking function of a square array is nonzero.

    Args:
        n: the size of the ``(n, n)`` array the mask is computed on.
        mask_func: a function like ``jnp.triu`` or ``jnp.tril``, called as
            ``mask_func(ones((n, n)), k)``.
        k: the second argument passed to ``mask_func``.
        size: the static number of indices, needed under ``jit``.

    Returns:
        ``(rows, cols)`` of the nonzero positions of the mask.

    Example:
        >>> jnp.mask_indices(3, jnp.triu, 1)
        (Array([0, 0, 1], dtype=int32), Array([1, 2, 2], dtype=int32))
    """
    a = jnp.ones((n, n), dtype=np.int32)
    return jnp.nonzero(mask_func(a, k), size=size)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Return the indices of the main diagonal of an ``n x ... x n`` array.

    Args:
        n: the length of each dimension.
        ndim: the number of dimensions.

    Returns:
        A tuple of ``ndim`` copies of ``arange(n)``: indexing with it reads or (through
        ``.at``) writes the diagonal.

    Example:
        >>> jnp.diag_indices(3)
        (Array([0, 1, 2], dtype=int32), Array([0, 1, 2], dtype=int32))
    """
    n = _static_index(n, "'n' argument of jnp.diag_indices()")
    ndim = _static_index(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (jnp.arange(n, dtype=dtypes.default_int()),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """Return the indices of the main diagonal of an array.

    Args:
        arr: an array with at least 2 dimensions, all of the same length.

    Returns:
        ``diag_indices(arr.shape[0], arr.ndim)``.

    Example:
        >>> jnp.diag_indices_from(jnp.zeros((2, 2)))
        (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    check_arraylike("diag_indices_from", arr)
    shape = np.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], ndim=len(shape))


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """Return a copy of an array with its main diagonal set.

    Args:
        a: an array with at least 2 dimensions (all of the same length beyond 2-d).
        val: the value, or an array of values used in order and repeated cyclically.
        wrap: must be False (NumPy's continuation of the diagonal in a tall 2-d array is
            not supported, as in JAX).
        inplace: must be False: arrays are immutable, so the updated copy is returned; the
            default True raises ``NotImplementedError``, as in JAX.

    Returns:
        The updated copy.

    Example:
        >>> jnp.fill_diagonal(jnp.zeros((3, 3), int), jnp.array([1, 2]), inplace=False)
        Array([[1, 0, 0],
               [0, 2, 0],
               [0, 0, 1]], dtype=int32)
    """
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a, v = jnp.asarray(a), jnp.asarray(val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not builtins.all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(a.shape)
    if v.ndim:
        flat = jnp.ravel(v)
        if flat.shape[0] == 0:
            return a
        v = jnp.tile(flat, -(-n // flat.shape[0]))[:n]
    return a.at[diag_indices(n, a.ndim)].set(v)


def ix_(*args: Any) -> tuple[Any, ...]:
    """Build an open mesh from 1-d index sequences.

    Args:
        *args: 1-d integer sequences, one per axis (bool masks are not supported, as
            in JAX).

    Returns:
        A tuple of arrays, the i-th holding its values along axis i and size 1 elsewhere, so
        that ``a[ix_(rows, cols)]`` selects the cross product of rows and columns.

    Example:
        >>> rows, cols = jnp.ix_(jnp.array([0, 1]), jnp.array([2, 0, 1]))
        >>> rows.shape, cols.shape
        ((2, 1), (1, 3))
    """
    check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = jnp.asarray(a)
        if a.ndim != 1:
            raise ValueError(
                f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}")
        if a.dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = a.shape[0]
        if a.shape[0] == 0:  # NumPy gives an empty index array the integer index type
            out.append(jnp.zeros(shape, dtypes.canonicalize(np.intp)))
        else:
            out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))  # (as JAX stages it)
    return tuple(out)


def _grid_1d(s: slice) -> Any:
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):  # n points, stop included
        return jnp.linspace(start, s.stop, int(builtins.abs(step)), endpoint=True)
    return jnp.arange(start, s.stop, step)


class _AxisConcat:
    """r_ / c_: concatenate slices (as ranges), scalars and arrays along an axis. A leading
    string sets 'axis,ndmin,trans1d' (or 'r' / 'c' for a row / column matrix)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive == "r":
                params[3] = 0
            elif directive == "c":
                params[3] = 1
            else:
                parts: list[Any] = directive.split(",")
                parts = parts + params[len(parts):] if len(parts) < 4 \
                    else parts[:3] + [params[3]]
                try:
                    params = [int(p) for p in parts]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        pieces = []
        for item in items:
            if isinstance(item, slice):
                obj, item_nd = _grid_1d(item), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                obj = jnp.asarray(item)
                item_nd = obj.ndim
            obj = jnp.array(obj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_nd > 0:
                # The item's own axes move to where trans1d says (NumPy's rule): rotate
                # the axis order left by ndmin - |ndmin + trans1d + 1| mod ndmin.
                order = list(builtins.range(ndmin))
                shift = ndmin - builtins.abs(ndmin + trans1d + 1) % ndmin
                obj = jnp.transpose(obj, order[shift:] + order[:shift])
            pieces.append(obj)
        res = jnp.concatenate(pieces, axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = jnp.expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"ember.numpy.{self.name}"


r_ = _AxisConcat(0, 1, -1, "r_")
c_ = _AxisConcat(-1, 2, 0, "c_")


class _IndexExpression:
    """s_ / index_exp: `s_[1:3, ::2]` is the index itself (index_exp always a tuple)."""

    def __init__(self, maketuple: bool) -> None:
        self.maketuple = maketuple

    def __getitem__(self, item: Any) -> Any:
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)
