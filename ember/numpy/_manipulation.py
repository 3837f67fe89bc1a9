"""Shape manipulation and selection: reshape, ravel, transpose, moveaxis, broadcast_to, where,
astype, squeeze, expand_dims, concatenate, stack, split, flip, roll, rot90, tile, repeat,
atleast_nd, diagonal, trace, ... (pad lives in _pad.py and is re-exported here)

Input: arrays (or array-likes) and static shapes/axes/sizes (Python ints or concrete
values). Output: ember Arrays (eager) or staged equations (jit) built from lax's shape
primitives (reshape, transpose, broadcast_in_dim, squeeze, rev), slicing primitives
(slice, concatenate) and JAX's split, stack, unstack and tile primitives. Invariants:
negative axes count from the end and are normalized before any primitive is bound;
functions that only move data never change dtype or weak type (except concatenate/stack,
which promote their inputs together as JAX does).
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer, get_aval
from ember.numpy._eager_cache import eager_cached
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._pad import pad
from ember.numpy._promote import check_arraylike, ensure_array, promote_dtypes

__all__ = [
    "astype", "reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "moveaxis",
    "swapaxes", "broadcast_shapes", "broadcast_to", "broadcast_arrays", "where", "select",
    "squeeze", "expand_dims", "concatenate", "concat", "stack", "hstack", "vstack", "dstack",
    "column_stack", "row_stack", "split", "array_split", "hsplit", "vsplit", "dsplit",
    "unstack", "flip", "fliplr", "flipud", "roll", "rot90", "tile", "repeat", "pad",
    "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size", "diagonal", "trace",
    "append",
]

_ensure_array = ensure_array  # older spelling used by sibling modules


def _axis(axis: Any, ndim: int, name: str = "axis") -> int:
    """A normalized static axis in [0, ndim)."""
    if isinstance(axis, Tracer):
        raise ConcretizationTypeError(f"{name} must be static, got a traced value")
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{name} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_axis(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis: {axis}")
    return out


def shape(a: Any) -> tuple[int, ...]:
    """Return the shape of an array.

    Args:
        a: an array, a scalar or a nested sequence.

    Returns:
        A tuple of Python ints (static, also for a traced array); ``()`` for a scalar.

    Example:
        >>> jnp.shape(jnp.zeros((2, 3)))
        (2, 3)
    """
    return get_aval(a).shape


def ndim(a: Any) -> int:
    """Return the number of dimensions of an array.

    Args:
        a: an array, a scalar or a nested sequence.

    Returns:
        A Python int (known without running anything, also for a traced array).

    Example:
        >>> jnp.ndim(jnp.zeros((2, 3)))
        2
    """
    return get_aval(a).ndim


def size(a: Any, axis: int | None = None) -> int:
    """Return the number of elements of an array, or its length along an axis.

    Args:
        a: an array, a scalar or a nested sequence.
        axis: an axis, or None (the default) for the total count.

    Returns:
        A Python int (static, also for a traced array).

    Example:
        >>> jnp.size(jnp.zeros((2, 3)))
        6
        >>> jnp.size(jnp.zeros((2, 3)), axis=1)
        3
    """
    aval = get_aval(a)
    return aval.size if axis is None else aval.shape[_axis(axis, aval.ndim)]


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """Convert an array to a dtype.

    Args:
        x: an array or scalar.
        dtype: the target dtype (a 64-bit type becomes 32-bit unless x64 is on, as in JAX).
        copy: accepted for the Array API; arrays are immutable, so it changes nothing.
        device: not supported beyond the default device (must be None).

    Returns:
        ``x`` in ``dtype``, strongly typed. Floats convert to integers by truncation toward
        zero; out-of-range values follow XLA's conversion rather than NumPy's (which is
        undefined there). A complex ``x`` becomes bool as ``x != 0`` and a real type from
        its real part (with JAX's ComplexWarning).

    Example:
        >>> jnp.astype(jnp.array([1.7, -1.7]), jnp.int32)
        Array([ 1, -1], dtype=int32)
    """
    x = ensure_array(x)
    new = dtypes.canonicalize_requested(dtype, "astype")
    if dtypes.kind(get_aval(x).dtype) == "c" and dtypes.kind(np.dtype(new)) != "c":
        if dtypes.kind(np.dtype(new)) == "b":
            return lax.ne(x, lax.full_like(x, 0))
        warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                      "Please first use jnp.real or jnp.imag to take the real/imaginary "
                      "component of your input.", DeprecationWarning, stacklevel=2)
        x = lax.real(x)
    return lax.convert_element_type(x, new, False)


# ---------------------------------------------------------------------------------------------
# Reshaping and permuting
# ---------------------------------------------------------------------------------------------

def _resolve_shape(new: Any, size: int) -> tuple[int, ...]:
    if not isinstance(new, (tuple, list)):
        new = (new,)
    dims = [operator.index(s) for s in new]
    unknown = [i for i, s in enumerate(dims) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(s < -1 for s in dims):
        raise ValueError(f"negative dimensions not allowed: {tuple(dims)}")
    if unknown:
        known = math.prod(s for s in dims if s != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of size {size} into shape {tuple(new)}")
        dims[unknown[0]] = size // known
    if math.prod(dims) != size:
        raise TypeError(f"cannot reshape array of size {size} into shape {tuple(dims)}")
    return tuple(dims)


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: bool | None = None) -> Any:
    """Give an array a new shape without changing its elements.

    Args:
        a: an array or scalar.
        shape: an int or tuple of ints (static); one entry may be -1, inferred from the size.
        order: ``"C"`` (row-major, the default) or ``"F"``: read and write the elements in
            column-major order (reverse the axes, reshape to the reversed shape, reverse
            back).
        newshape: the older NumPy name of ``shape``.
        copy: accepted for NumPy compatibility (Ember's arrays are immutable).

    Returns:
        An array of ``shape`` with ``a``'s elements (always a new array: there are no views,
        so writing through a reshaped array is not possible, as in JAX).

    Example:
        >>> jnp.reshape(jnp.arange(6), (2, -1))
        Array([[0, 1, 2],
               [3, 4, 5]], dtype=int32)
    """
    a = ensure_array(a)
    if shape is None:
        if newshape is None:
            raise TypeError("reshape() missing required argument 'shape'")
        shape = newshape
    aval = get_aval(a)
    new = _resolve_shape(shape, aval.size)
    if order == "F":
        # (JAX's form: one reshape whose dimensions reverse the axes, then a transpose)
        rev = tuple(reversed(range(aval.ndim)))
        out = lax.reshape(a, tuple(reversed(new)), rev)
        return lax.transpose(out, tuple(reversed(range(len(new)))))
    if order not in ("C", "A"):
        raise ValueError(f"reshape: unknown order {order!r} (expected 'C' or 'F')")
    return lax.reshape(a, new)


def ravel(a: Any, order: str = "C") -> Any:
    """Flatten an array to one dimension.

    Args:
        a: an array.
        order: ``'C'`` (row-major, the default) or ``'F'`` (column-major); NumPy's ``'A'``
            and ``'K'`` are not supported, as in JAX.

    Returns:
        A 1-d array of ``a.size`` elements (a copy, never a view).

    Example:
        >>> jnp.ravel(jnp.array([[1, 2], [3, 4]]))
        Array([1, 2, 3, 4], dtype=int32)
    """
    a = ensure_array(a)
    return reshape(a, (get_aval(a).size,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute the axes of an array.

    Args:
        a: an array or scalar.
        axes: a permutation of ``range(a.ndim)`` (negative axes allowed); None reverses the
            axes.

    Returns:
        An array whose axis ``i`` is ``a``'s axis ``axes[i]`` (a new array, not a view).

    Example:
        >>> jnp.transpose(jnp.zeros((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    a = ensure_array(a)
    nd = get_aval(a).ndim
    if axes is None:
        perm = tuple(reversed(range(nd)))
    else:
        perm = tuple(_axis(ax, nd) for ax in axes)
        if sorted(perm) != list(range(nd)):
            raise ValueError(f"axes {tuple(axes)} don't match array of dimension {nd}")
    return lax.transpose(a, perm)


def permute_dims(a: Any, /, axes: Sequence[int]) -> Any:
    """Permute the axes of an array (the Array API's name for ``transpose``).

    Args:
        a: an array.
        axes: a permutation of ``range(a.ndim)``: output axis i is input axis ``axes[i]``.

    Returns:
        The transposed array (a copy: there are no strided views, and under ``jit`` the
        transpose usually fuses into its consumer).

    Example:
        >>> jnp.permute_dims(jnp.zeros((2, 3, 4)), (2, 0, 1)).shape
        (4, 2, 3)
    """
    return transpose(a, axes)


def matrix_transpose(x: Any, /) -> Any:
    """Transpose the last two axes of an array (a stack of matrices).

    Args:
        x: an array with at least two dimensions.

    Returns:
        ``x`` with its last two axes swapped; leading (batch) axes stay in place.

    Example:
        >>> jnp.matrix_transpose(jnp.arange(6).reshape(1, 2, 3)).shape
        (1, 3, 2)
    """
    x = ensure_array(x)
    nd = get_aval(x).ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes of an array to new positions, keeping the others in order.

    Args:
        a: an array.
        source: an int or sequence of ints: the axes to move.
        destination: an int or sequence of ints (as many as ``source``): where they go.

    Returns:
        ``a`` transposed so that axis ``source[i]`` is at ``destination[i]``.

    Example:
        >>> jnp.moveaxis(jnp.zeros((2, 3, 4)), 0, -1).shape
        (3, 4, 2)
    """
    a = ensure_array(a)
    nd = get_aval(a).ndim
    src = _axes(source, nd)
    dst = _axes(destination, nd)
    if len(src) != len(dst):
        raise ValueError("Inconsistent number of elements: "
                         f"{len(src)} vs {len(dst)}")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(a, tuple(perm))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Interchange two axes of an array.

    Args:
        a: an array.
        axis1: the first axis.
        axis2: the second axis.

    Returns:
        ``a`` with the two axes exchanged (a transpose; a new array, not a view).

    Example:
        >>> jnp.swapaxes(jnp.zeros((2, 3, 4)), 0, 2).shape
        (4, 3, 2)
    """
    a = ensure_array(a)
    nd = get_aval(a).ndim
    i, j = _axis(axis1, nd), _axis(axis2, nd)
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, tuple(perm))


def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove axes of length one from an array's shape.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints: the axes to remove, each of size 1 (else a
            ``ValueError``); None removes every size-1 axis.

    Returns:
        ``a`` reshaped without those axes.

    Example:
        >>> jnp.squeeze(jnp.zeros((1, 3, 1))).shape
        (3,)
    """
    a = ensure_array(a)
    aval = get_aval(a)
    if axis is None:
        dims = tuple(i for i, s in enumerate(aval.shape) if s == 1)
    else:
        dims = _axes(axis, aval.ndim) if aval.ndim else ()
        for d in dims:
            if aval.shape[d] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={aval.shape} and dimensions={dims}")
    return lax.squeeze(a, dims)


def expand_dims(a: Any, axis: Any) -> Any:
    """Insert axes of length one into an array's shape.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints: the positions of the new axes in the result
            (negative ones count from the end of the result).

    Returns:
        ``a`` reshaped with size-1 axes at ``axis``.

    Example:
        >>> jnp.expand_dims(jnp.arange(3), (0, 2)).shape
        (1, 3, 1)
    """
    a = ensure_array(a)
    nd = get_aval(a).ndim
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_nd = nd + len(axes)
    return lax.expand_dims(a, _axes(axes, out_nd))


# ---------------------------------------------------------------------------------------------
# Broadcasting and selection
# ---------------------------------------------------------------------------------------------

def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Return the shape that arrays of the given shapes broadcast to.

    Args:
        *shapes: tuples of ints (an int stands for a 1-d shape).

    Returns:
        The broadcast shape, a tuple of ints; ``ValueError`` when the shapes do not
        broadcast.

    Example:
        >>> jnp.broadcast_shapes((3, 1), (4,), 1)
        (3, 4)
    """
    norm = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*norm))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={norm}") from None


def broadcast_to(array: Any, shape: Any) -> Any:
    """Broadcast an array to a shape.

    Args:
        array: an array or scalar.
        shape: the target shape: leading axes are added, size-1 axes stretched (NumPy's
            rules; an incompatible shape raises ``ValueError``).

    Returns:
        An array of ``shape`` (a new array: there are no read-only views as in NumPy).

    Example:
        >>> jnp.broadcast_to(jnp.array([1, 2]), (2, 2))
        Array([[1, 2],
               [1, 2]], dtype=int32)
    """
    a = ensure_array(array)
    aval = get_aval(a)
    shape = tuple(operator.index(s) for s in shape) if isinstance(shape, (tuple, list)) \
        else (operator.index(shape),)
    if aval.shape == shape:
        return a
    lead = len(shape) - aval.ndim
    if lead < 0 or any(s not in (1, t) for s, t in zip(aval.shape, shape[lead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {aval.shape} and requested "
                         f"shape {shape}")
    # One broadcast_in_dim onto the trailing dims, size-1 dims stretching, as JAX 0.10.2's
    # lax.broadcast_to stages it.
    return lax.broadcast_in_dim(a, shape, tuple(range(lead, len(shape))))


def broadcast_arrays(*args: Any) -> list[Any]:
    """Broadcast any number of arrays against each other.

    Args:
        *args: arrays or scalars with shapes that broadcast together (NumPy's rules).

    Returns:
        A list of arrays, all of the broadcast shape. Unlike NumPy's read-only views, these
        are new arrays (under ``jit`` the broadcasts are fused away).

    Example:
        >>> a, b = jnp.broadcast_arrays(jnp.array([[1], [2]]), jnp.array([10, 20, 30]))
        >>> a
        Array([[1, 1, 1],
               [2, 2, 2]], dtype=int32)
        >>> b.shape
        (2, 3)
    """
    shp = broadcast_shapes(*[get_aval(a).shape for a in args])
    return [broadcast_to(a, shp) for a in args]


def _to_bool(x: Any) -> Any:
    x = ensure_array(x)
    if dtypes.kind(get_aval(x).dtype) == "b":
        return x
    return lax.ne(x, lax.convert_element_type(0, get_aval(x).dtype))


@eager_cached
def where(condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None,
          fill_value: Any = None) -> Any:
    """Select elements from ``x`` or ``y`` by ``condition``, element-wise.

    With one argument, ``where(condition)`` is ``nonzero(condition, size=size,
    fill_value=fill_value)``, which needs a static ``size`` under ``jit``.

    Args:
        condition: a bool array (other dtypes are compared with zero).
        x: the values where ``condition`` is true.
        y: the values where ``condition`` is false.
        size: with one argument only: the static number of indices to return.
        fill_value: with one argument only: the index that pads the result to ``size``.

    Returns:
        ``x`` where ``condition`` is true and ``y`` elsewhere, the three broadcast together
        and ``x`` and ``y`` promoted to a common dtype. Under a trace it is one
        ``jit[name=_where]`` equation, as JAX prints it.

    Example:
        >>> jnp.where(jnp.array([True, False, True]), jnp.arange(3), -1)
        Array([ 0, -1,  2], dtype=int32)
    """
    if x is None and y is None:
        from ember import numpy as jnp
        return jnp.nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         "to jax.numpy.where")
    check_arraylike("where", condition, x, y)
    return _where(condition, x, y)


@jit_like_jax("_where")
def _where(condition: Any, x: Any, y: Any) -> Any:
    """Three-argument `where`: staged as JAX's jitted `_where` (see _jit_wrap.py)."""
    cond = _to_bool(condition)  # (before the promotion: JAX's order of equations)
    x, y = promote_dtypes(x, y)
    shp = broadcast_shapes(get_aval(cond).shape, get_aval(x).shape, get_aval(y).shape)
    # select_n takes a scalar predicate as it is (as JAX's _where leaves it unbroadcast)
    operands = (x, y) if get_aval(cond).ndim == 0 else (cond, x, y)
    broadcast = [broadcast_to(v, shp) for v in operands]
    if len(broadcast) == 2:
        broadcast.insert(0, cond)
    cond, x, y = broadcast
    return lax.select(cond, x, y)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """Choose, element-wise, from a list of arrays by the first condition that holds.

    Args:
        condlist: a sequence of bool arrays.
        choicelist: a sequence of arrays, one per condition; all broadcast together with the
            conditions.
        default: the value where no condition holds.

    Returns:
        At each position, the element of the first choice whose condition is True there,
        else ``default``.

    Example:
        >>> x = jnp.array([1, 2, 3])
        >>> jnp.select([x < 2, x < 3], [x, x * 10], default=-1)
        Array([ 1, 20, -1], dtype=int32)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        if dtypes.kind(get_aval(c).dtype) != "b":
            raise TypeError("condlist must be boolean arrays")
        out = where(c, v, out)
    return out


# ---------------------------------------------------------------------------------------------
# Joining and splitting
# ---------------------------------------------------------------------------------------------

def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    """Join a sequence of arrays along an existing axis.

    Args:
        arrays: a sequence of arrays with the same shape except along ``axis`` (an array is
            taken as the sequence of its leading-axis slices).
        axis: the axis to join along; None flattens the arrays first.
        dtype: the result dtype (default the promoted dtype of the inputs).

    Returns:
        The joined array.

    Example:
        >>> jnp.concatenate([jnp.array([[1, 2]]), jnp.array([[3, 4], [5, 6]])], axis=0)
        Array([[1, 2],
               [3, 4],
               [5, 6]], dtype=int32)
    """
    if isinstance(arrays, (Tracer, np.ndarray)) or hasattr(arrays, "_ember_aval"):
        return _concatenate_array(arrays, axis, dtype)
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    nd = get_aval(arrays[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    ax = _axis(axis, nd)
    for a in arrays[1:]:
        s0, s = get_aval(arrays[0]).shape, get_aval(a).shape
        if len(s) != nd or any(p != q for i, (p, q) in enumerate(zip(s0, s)) if i != ax):
            raise ValueError(f"Cannot concatenate arrays with shapes that differ in dimensions "
                             f"other than the one being concatenated: concatenating along "
                             f"dimension {ax} for shapes {s0}, {s}.")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, ax)


def _concatenate_array(arr: Any, axis: int | None, dtype: Any) -> Any:
    """concatenate of one array's rows (JAX's path for an array argument): the leading
    axis merged into `axis` by one reshape whose `dimensions` bring it there, not one
    slice per row."""
    arr = ensure_array(arr)
    if dtype is not None:
        arr = astype(arr, dtype)
    shape = get_aval(arr).shape
    if not shape or shape[0] == 0:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return lax.reshape(arr, (math.prod(shape),))
    if len(shape) == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    ax = _axis(axis, len(shape) - 1)
    perm = (*range(1, ax + 1), 0, *range(ax + 1, len(shape)))
    return lax.reshape(arr, shape[1:ax + 1] + (shape[0] * shape[ax + 1],) + shape[ax + 2:],
                       perm)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """Join a sequence of arrays along an existing axis (the Array API's name for
    ``concatenate``).

    Args:
        arrays: arrays with the same shape except along ``axis``; their dtypes are promoted
            together.
        axis: the axis to join along; None flattens every array first.

    Returns:
        The joined array.

    Example:
        >>> jnp.concat([jnp.array([[1]]), jnp.array([[2, 3]])], axis=1)
        Array([[1, 2, 3]], dtype=int32)
        >>> jnp.concat([jnp.array([[1]]), jnp.array([[2, 3]])], axis=None)
        Array([1, 2, 3], dtype=int32)
    """
    return concatenate(arrays, axis)


def stack(arrays: Sequence[Any], axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """Join a sequence of arrays of one shape along a new axis.

    Args:
        arrays: a sequence of arrays of the same shape (or an array: its leading-axis
            slices).
        axis: where the new axis goes in the result.
        out: not supported (must be None), as in JAX.
        dtype: the result dtype (default the promoted dtype of the inputs).

    Returns:
        An array with one more dimension than the inputs, of size ``len(arrays)`` at
        ``axis``.

    Example:
        >>> jnp.stack([jnp.arange(3), jnp.arange(3) * 10], axis=1)
        Array([[ 0,  0],
               [ 1, 10],
               [ 2, 20]], dtype=int32)
    """
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if hasattr(arrays, "_ember_aval") or isinstance(arrays, (Tracer, np.ndarray)):
        # One array: its rows stacked, as JAX stages it (a new axis after `axis`, then the
        # leading axis merged into it).
        nd = get_aval(arrays).ndim
        ax = _axis(axis, nd)
        return _concatenate_array(lax.expand_dims(ensure_array(arrays), (ax + 1,)), ax, dtype)
    arrays = [ensure_array(a) for a in arrays]
    shapes = {get_aval(a).shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError("All input arrays must have the same shape.")
    ax = _axis(axis, get_aval(arrays[0]).ndim + 1)
    # JAX's order: the operands promoted together (or each converted to `dtype`), then one
    # stack[axis=] equation.
    arrays = promote_dtypes(*arrays) if dtype is None else [astype(a, dtype) for a in arrays]
    return lax.stack(arrays, ax)


def _atleast(n: int, *arys: Any) -> Any:
    if not arys:
        return []
    out = []
    for a in arys:
        a = ensure_array(a)
        aval = get_aval(a)
        if aval.ndim < n:
            if n == 3 and aval.ndim == 2:
                a = lax.expand_dims(a, (2,))
            elif n == 3 and aval.ndim == 1:
                a = lax.expand_dims(a, (0, 2))
            else:
                a = lax.broadcast_to_rank(a, n)
        out.append(a)
    return out[0] if len(out) == 1 else out


# (each a jit of its own under a trace, as JAX stages them)
@jit_like_jax("atleast_1d")
def atleast_1d(*arys: Any) -> Any:
    """Convert inputs to arrays with at least 1 dimension.

    Args:
        *arys: arrays or scalars.

    Returns:
        One array if one input was given, else a list. A scalar becomes shape ``(1,)``. Arrays with
        1 or more dimensions are returned unchanged.

    Example:
        >>> jnp.atleast_1d(3)
        Array([3], dtype=int32, weak_type=True)
    """
    return _atleast(1, *arys)


@jit_like_jax("atleast_2d")
def atleast_2d(*arys: Any) -> Any:
    """Convert inputs to arrays with at least 2 dimensions.

    Args:
        *arys: arrays or scalars.

    Returns:
        One array if one input was given, else a list. A scalar becomes shape ``(1, 1)``, a 1-d
        ``(n,)`` becomes ``(1, n)``. Arrays with 2 or more dimensions are returned unchanged.

    Example:
        >>> jnp.atleast_2d(jnp.array([1, 2]))
        Array([[1, 2]], dtype=int32)
    """
    return _atleast(2, *arys)


@jit_like_jax("atleast_3d")
def atleast_3d(*arys: Any) -> Any:
    """Convert inputs to arrays with at least 3 dimensions.

    Args:
        *arys: arrays or scalars.

    Returns:
        One array if one input was given, else a list. A scalar becomes ``(1, 1, 1)``, a 1-d
        ``(n,)`` becomes ``(1, n, 1)`` and a 2-d ``(m, n)`` becomes ``(m, n, 1)``. Arrays with 3 or
        more dimensions are returned unchanged.

    Example:
        >>> jnp.atleast_3d(jnp.array([1, 2])).shape
        (1, 2, 1)
    """
    if len(arys) > 1:  # (one nested atleast_3d per array, as JAX stages it)
        return [atleast_3d(a) for a in arys]
    return _atleast(3, *arys)


def _as_list(tup: Any) -> list[Any]:
    if hasattr(tup, "_ember_aval") or isinstance(tup, Tracer):
        return [tup[i] for i in range(get_aval(tup).shape[0])]
    return list(tup)


def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack arrays horizontally: concatenate along axis 1 (axis 0 for 1-d arrays).

    Args:
        tup: a sequence of arrays, or an array (its leading-axis slices).
        dtype: the result dtype (default the promoted dtype of the inputs).

    Returns:
        The stacked array.

    Example:
        >>> jnp.hstack([jnp.array([1, 2]), jnp.array([3])])
        Array([1, 2, 3], dtype=int32)
    """
    arrs = [atleast_1d(a) for a in _as_list(tup)]
    axis = 0 if arrs and get_aval(arrs[0]).ndim == 1 else 1
    return concatenate(arrs, axis, dtype)


def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack arrays vertically: concatenate along axis 0 after making them at least 2-d.

    Args:
        tup: a sequence of arrays (1-d arrays become rows), or an array (its leading-axis
            slices).
        dtype: the result dtype (default the promoted dtype of the inputs).

    Returns:
        The stacked array.

    Example:
        >>> jnp.vstack([jnp.array([1, 2]), jnp.array([3, 4])])
        Array([[1, 2],
               [3, 4]], dtype=int32)
    """
    return concatenate([atleast_2d(a) for a in _as_list(tup)], 0, dtype)


row_stack = vstack


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack arrays along the third axis (depth-wise).

    Args:
        tup: a sequence of arrays; each is first made at least 3-d (``(n,)`` becomes
            ``(1, n, 1)``, ``(m, n)`` becomes ``(m, n, 1)``).
        dtype: the dtype of the result (default: the arrays' promoted dtype).

    Returns:
        The arrays concatenated along axis 2.

    Example:
        >>> jnp.dstack([jnp.array([1, 2]), jnp.array([3, 4])])
        Array([[[1, 3],
                [2, 4]]], dtype=int32)
    """
    return concatenate([atleast_3d(a) for a in _as_list(tup)], 2, dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """Stack 1-d or 2-d arrays as columns of a 2-d array.

    Args:
        tup: a sequence of arrays: 1-d arrays of length n become columns ``(n, 1)``; 2-d
            arrays are joined as they are.

    Returns:
        The arrays concatenated along axis 1.

    Example:
        >>> jnp.column_stack([jnp.array([1, 2]), jnp.array([3, 4])])
        Array([[1, 3],
               [2, 4]], dtype=int32)
    """
    arrs = []
    for a in _as_list(tup):
        a = ensure_array(a)
        if get_aval(a).ndim < 2:
            a = transpose(atleast_2d(a))  # (a column: jit[atleast_2d], then .T, as JAX)
        arrs.append(a)
    return concatenate(arrs, 1)


@jit_like_jax("append", static_argnames=("axis",))
def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """Append values to the end of an array.

    Args:
        arr: an array.
        values: the values to append; with ``axis`` they must match ``arr``'s shape except
            along ``axis``.
        axis: the axis to append along. None (the default) flattens both first.

    Returns:
        A new array (Ember arrays are immutable, so this never appends in place): the
        concatenation of ``arr`` and ``values``, flattened when ``axis`` is None.

    Example:
        >>> jnp.append(jnp.array([1, 2]), jnp.array([[3, 4]]))
        Array([1, 2, 3, 4], dtype=int32)
        >>> jnp.append(jnp.array([[1, 2]]), jnp.array([[3, 4]]), axis=0)
        Array([[1, 2],
               [3, 4]], dtype=int32)
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def _slice_axis(a: Any, ax: int, start: int, stop: int, stride: int = 1) -> Any:
    """a[..., start:stop:stride, ...] along axis ax, with static in-range bounds."""
    aval = get_aval(a)
    if start == 0 and stop == aval.shape[ax] and stride == 1:
        return a
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    strides = [1] * aval.ndim
    starts[ax], limits[ax], strides[ax] = start, stop, stride
    return lax.slice(a, tuple(starts), tuple(limits),
                     None if stride == 1 else tuple(strides))


def _split(name: str, ary: Any, indices_or_sections: Any, axis: int,
           even: bool) -> list[Any]:
    ary = ensure_array(ary)
    aval = get_aval(ary)
    ax = _axis(axis, aval.ndim)
    n = aval.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)) or (
            hasattr(indices_or_sections, "__index__")
            and get_aval(indices_or_sections).ndim == 0):
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if even and n % sections:
            raise ValueError("array split does not result in an equal division")
        # array_split: the first n % sections pieces get one extra element.
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        if isinstance(indices_or_sections, Tracer):
            raise ConcretizationTypeError(f"{name}: split indices must be static")
        idx = [operator.index(i) for i in np.asarray(indices_or_sections).ravel()]
        # Python slice semantics: negative indices count from the end; out-of-range clamps.
        bounds = [0] + [slice(i, None).indices(n)[0] for i in idx] + [n]
    if all(a <= b for a, b in zip(bounds[:-1], bounds[1:])):
        # Consecutive pieces covering the axis: JAX's split primitive, its sizes as NumPy
        # integers (JAX's text prints them as np.int64).
        return list(lax.split(ary, [np.int64(b - a) for a, b in zip(bounds[:-1], bounds[1:])],
                              ax))
    # Decreasing indices (NumPy's pieces then overlap or are empty): one slice per piece.
    pieces = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        stop = builtins.max(start, stop)
        pieces.append(_slice_axis(ary, ax, int(start), int(stop)))
    return pieces


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split an array into sub-arrays along an axis.

    Args:
        ary: the array.
        indices_or_sections: an int ``n``: ``n`` equal sections (the axis size must divide
            evenly, else ``ValueError``); or a sequence of indices where the pieces start.
            Static in both cases: the pieces' shapes cannot depend on traced values.
        axis: the axis to split along.

    Returns:
        A list of arrays.

    Example:
        >>> jnp.split(jnp.arange(6), [2, 5])
        [Array([0, 1], dtype=int32), Array([2, 3, 4], dtype=int32), Array([5], dtype=int32)]
    """
    return _split("split", ary, indices_or_sections, axis, even=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split an array into sub-arrays, allowing sections of unequal size.

    Args:
        ary: an array.
        indices_or_sections: an int N: N sections, the first ``len % N`` of them one element
            longer; or a sequence of split points along ``axis``.
        axis: the axis to split along.

    Returns:
        A list of arrays. The split points must be static (Python ints), as in JAX: the
        pieces' shapes cannot depend on traced values.

    Example:
        >>> jnp.array_split(jnp.arange(7), 3)
        [Array([0, 1, 2], dtype=int32), Array([3, 4], dtype=int32), Array([5, 6], dtype=int32)]
    """
    return _split("array_split", ary, indices_or_sections, axis, even=False)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split an array into sub-arrays along the second axis (the first for a 1-d array).

    Args:
        ary: an array with at least 1 dimension.
        indices_or_sections: an int N (the axis is split into N equal sections; it must
            divide the axis' length) or a sequence of split points.

    Returns:
        A list of arrays: ``split(ary, indices_or_sections, axis=1 (0 for 1-d))``. The split points
        must be static, as in JAX.

    Example:
        >>> left, right = jnp.hsplit(jnp.arange(6).reshape(2, 3), [1])
        >>> right
        Array([[1, 2],
               [4, 5]], dtype=int32)
    """
    a = ensure_array(ary)
    return split(a, indices_or_sections, 1 if get_aval(a).ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split an array into sub-arrays along the first axis (row-wise).

    Args:
        ary: an array with at least 2 dimensions.
        indices_or_sections: an int N (the axis is split into N equal sections; it must
            divide the axis' length) or a sequence of split points.

    Returns:
        A list of arrays: ``split(ary, indices_or_sections, axis=0)``. The split points
        must be static, as in JAX.

    Example:
        >>> jnp.vsplit(jnp.arange(6).reshape(3, 2), 3)
        [Array([[0, 1]], dtype=int32), Array([[2, 3]], dtype=int32), Array([[4, 5]], dtype=int32)]
    """
    a = ensure_array(ary)
    if get_aval(a).ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split an array into sub-arrays along the third axis (depth).

    Args:
        ary: an array with at least 3 dimensions.
        indices_or_sections: an int N (the axis is split into N equal sections; it must
            divide the axis' length) or a sequence of split points.

    Returns:
        A list of arrays: ``split(ary, indices_or_sections, axis=2)``. The split points
        must be static, as in JAX.

    Example:
        >>> [a.shape for a in jnp.dsplit(jnp.zeros((2, 2, 6)), 3)]
        [(2, 2, 2), (2, 2, 2), (2, 2, 2)]
    """
    a = ensure_array(ary)
    if get_aval(a).ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """Split an array into its slices along an axis.

    Args:
        x: an array with at least one dimension.
        axis: the axis to unstack along.

    Returns:
        A tuple of ``x.shape[axis]`` arrays, each without that axis (the inverse of
        ``stack``).

    Example:
        >>> jnp.unstack(jnp.array([[1, 2], [3, 4]]), axis=1)
        (Array([1, 3], dtype=int32), Array([2, 4], dtype=int32))
    """
    x = ensure_array(x)
    aval = get_aval(x)
    if aval.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    ax = _axis(axis, aval.ndim)
    return tuple(lax.unstack(x, ax))


# ---------------------------------------------------------------------------------------------
# Reordering: flip, roll, rot90
# ---------------------------------------------------------------------------------------------

def flip(m: Any, axis: Any = None) -> Any:
    """Reverse the order of the elements along the given axes.

    Args:
        m: an array or scalar.
        axis: an int or a sequence of ints: the axes to reverse; None reverses them all.

    Returns:
        ``m`` with those axes reversed (a new array: JAX arrays have no views).

    Example:
        >>> jnp.flip(jnp.array([[1, 2], [3, 4]]), axis=1)
        Array([[2, 1],
               [4, 3]], dtype=int32)
    """
    check_arraylike("flip", m)
    m = ensure_array(m)
    if isinstance(axis, list):  # a static argument of the nested jit must be hashable
        axis = tuple(axis)
    return _flip(m, axis)


@jit_like_jax("_flip", static_argnames=("axis",))
def _flip(m: Any, axis: Any = None) -> Any:
    nd = get_aval(m).ndim
    dims = tuple(range(nd)) if axis is None else tuple(sorted(_axes(axis, nd)))
    return lax.rev(m, dims) if dims else m


def fliplr(m: Any) -> Any:
    """Reverse the order of the columns (axis 1) of an array.

    Args:
        m: an array of at least two dimensions (fewer raise a ``ValueError``).

    Returns:
        ``m[:, ::-1]``, the same as ``jnp.flip(m, 1)``.

    Example:
        >>> jnp.fliplr(jnp.array([[1, 2], [3, 4]]))
        Array([[2, 1],
               [4, 3]], dtype=int32)
    """
    m = ensure_array(m)
    if get_aval(m).ndim < 2:
        raise ValueError("fliplr requires an array of at least 2 dimensions")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    """Reverse the order of the rows (axis 0) of an array.

    Args:
        m: an array of at least one dimension (a 0-d one raises a ``ValueError``).

    Returns:
        ``m[::-1]``, the same as ``jnp.flip(m, 0)``.

    Example:
        >>> jnp.flipud(jnp.array([[1, 2], [3, 4]]))
        Array([[3, 4],
               [1, 2]], dtype=int32)
    """
    m = ensure_array(m)
    if get_aval(m).ndim < 1:
        raise ValueError("flipud requires an array of at least 1 dimension")
    return flip(m, 0)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift the elements of an array cyclically along one or more axes.

    Args:
        a: an array.
        shift: how many places to move the elements (negative: toward the start); an int,
            a traced integer scalar, or a tuple with one shift per axis.
        axis: the axis or tuple of axes to roll along. None (the default) rolls the
            flattened array and restores its shape. A single shift with several axes
            applies to each of them.

    Returns:
        An array of ``a``'s shape and dtype where the element at index ``i`` along an axis
        of size ``n`` has moved to ``(i + shift) mod n``.

    Example:
        >>> jnp.roll(jnp.arange(5), 2)
        Array([3, 4, 0, 1, 2], dtype=int32)
        >>> jnp.roll(jnp.array([[1, 2], [3, 4]]), 1, axis=0)
        Array([[3, 4],
               [1, 2]], dtype=int32)
    """
    # As JAX: a static shift (ints) is `jit[name=_roll_static]` with the shifts and axes
    # static; anything else (a traced or array shift) is `jit[name=_roll_dynamic]`.
    a = ensure_array(a)
    aval = get_aval(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), aval.shape)
    axes = tuple(_axis(ax, aval.ndim) for ax in
                 (axis if isinstance(axis, (tuple, list)) else (axis,)))
    try:
        shifts = _index_tuple(shift)
    except TypeError:
        from ember.numpy._creation import asarray
        return _roll_dynamic(a, asarray(shift), axes)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length "
                         "(or one of them length 1)")
    return _roll_static(a, shifts, axes)


def _index_tuple(x: Any) -> tuple[int, ...]:
    """x as a tuple of Python ints; TypeError for a tracer or a non-integer."""
    if isinstance(x, Tracer):
        raise TypeError("traced shift")
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(v) for v in x)


def _pairs(axes: tuple[int, ...], shifts: Sequence[Any]) -> list[tuple[int, Any]]:
    n = builtins.max(len(axes), len(shifts))
    return [(axes[0 if len(axes) == 1 else i], shifts[0 if len(shifts) == 1 else i])
            for i in range(n)]


@jit_like_jax("_roll_static", static_argnames=("shift", "axis"))
def _roll_static(a: Any, shift: tuple[int, ...], axis: tuple[int, ...]) -> Any:
    # A shift s along an axis of size n: out = concat(a[i:], a[:i]) with i = -s mod n (the
    # slices carry unit strides, as lax.slice_in_dim passes them in JAX).
    for ax, s in _pairs(axis, shift):
        shape = get_aval(a).shape
        n = shape[ax]
        if n == 0:
            continue
        i = (-s) % n
        ones = [1] * len(shape)
        first_lo, first_hi = [0] * len(shape), list(shape)
        first_lo[ax] = i
        second_hi = list(shape)
        second_hi[ax] = i
        a = lax.concatenate([lax.slice(a, first_lo, first_hi, ones),
                             lax.slice(a, [0] * len(shape), second_hi, ones)], ax)
    return a


@jit_like_jax("_roll_dynamic", static_argnames=("axis",))
def _roll_dynamic(a: Any, shift: Any, axis: tuple[int, ...]) -> Any:
    # A traced shift: a doubled array [a, a] sliced dynamically at n - (shift mod n).
    from ember.numpy._ufuncs import remainder
    sh = get_aval(shift).shape
    if len(sh) > 1 or (sh and sh[0] not in (1, len(axis)) and len(axis) != 1):
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    count = builtins.max(sh[0] if sh else 1, len(axis))
    shifts = broadcast_to(shift, (count,))
    for k, ax in enumerate(axis * count if len(axis) == 1 else axis):
        x = lax.squeeze(lax.slice(shifts, [k], [k + 1], [1]), (0,))
        n = get_aval(a).shape[ax]
        size = np.array(n, np.int32)
        x = remainder(lax.convert_element_type(x, np.int32), lax.max(size, np.int32(1)))
        doubled = lax.concatenate([a, a], ax)
        a = lax.dynamic_slice_in_dim(doubled, lax.sub(size, x), n, axis=ax)
    return a


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate an array by 90 degrees in the plane of two axes.

    Args:
        m: an array with at least two dimensions.
        k: the number of quarter turns (any int; taken modulo 4).
        axes: the two axes of the plane; the rotation goes from the first toward the
            second.

    Returns:
        The rotated array (``k`` odd swaps the two axes' sizes). Under a trace it is one
        ``jit[name=rot90]`` equation, as JAX prints it.

    Example:
        >>> jnp.rot90(jnp.array([[1, 2], [3, 4]]))
        Array([[2, 4],
               [1, 3]], dtype=int32)
    """
    m = ensure_array(m)
    return _rot90(m, operator.index(k), tuple(axes))


@jit_like_jax("rot90", static_argnames=("k", "axes"))
def _rot90(m: Any, k: int, axes: tuple[int, ...]) -> Any:
    nd = get_aval(m).ndim
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    ax0, ax1 = _axis(axes[0], nd), _axis(axes[1], nd)
    if ax0 == ax1:
        raise ValueError("Axes must be different.")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:  # (two flips, one per axis, as JAX traces it)
        return flip(flip(m, ax0), ax1)
    perm = list(range(nd))
    perm[ax0], perm[ax1] = perm[ax1], perm[ax0]
    if k == 1:
        return lax.transpose(flip(m, ax1), tuple(perm))
    return flip(lax.transpose(m, tuple(perm)), ax1)


# ---------------------------------------------------------------------------------------------
# Repetition: tile, repeat
# ---------------------------------------------------------------------------------------------

def tile(A: Any, reps: Any) -> Any:
    """Repeat a whole array a number of times along each axis.

    As in JAX, the shapes are padded with leading 1s to a common rank ``d`` and one
    ``tile[reps=]`` equation is staged; it lowers to a broadcast of ``A`` (``a_0 ..
    a_d-1``) to ``(r_0, a_0, ..., r_d-1, a_d-1)`` and a reshape to
    ``(r_0 a_0, ..., r_d-1 a_d-1)``.

    Args:
        A: an array or scalar.
        reps: an int or a sequence of ints (static): the repetitions per axis, aligned with
            ``A``'s trailing axes.

    Returns:
        The tiled array, of rank ``max(A.ndim, len(reps))``.

    Example:
        >>> jnp.tile(jnp.array([1, 2]), (2, 2))
        Array([[1, 2, 1, 2],
               [1, 2, 1, 2]], dtype=int32)
    """
    A = ensure_array(A)
    reps = (reps,) if not isinstance(reps, (tuple, list)) else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    nd = get_aval(A).ndim
    # JAX's staging: reps padded with leading 1s to the array's rank, the array given leading
    # axes of 1 to the reps' length, then one tile[reps=] equation.
    reps = (1,) * (nd - len(reps)) + reps
    if len(reps) > nd:
        A = lax.expand_dims(A, tuple(range(len(reps) - nd)))
    return lax.tile(A, reps)


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Repeat each element of an array.

    Ember's plan: a scalar count ``r`` broadcasts to ``(..., n, r, ...)`` and merges the two
    axes; static per-element counts take the index vector ``np.repeat(arange(n), repeats)``
    along the axis; traced counts need the static ``total_repeat_length`` (output index
    ``j`` takes the element ``i`` with ``c[i-1] <= j < c[i]``, ``c`` the running sum of the
    counts).

    Args:
        a: an array or scalar.
        repeats: an int, or one count per element along ``axis``.
        axis: the axis to repeat along; None repeats the flattened array.
        total_repeat_length: the output length along ``axis``, required under ``jit`` when
            ``repeats`` is traced (JAX's extension: the length must be static); extra
            counts are cut off and a short total is padded with the last element.

    Returns:
        The array with each element repeated.

    Example:
        >>> jnp.repeat(jnp.array([1, 2, 3]), jnp.array([2, 0, 1]))
        Array([1, 1, 3], dtype=int32)
    """
    a = ensure_array(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    aval = get_aval(a)
    ax = _axis(axis, aval.ndim)
    n = aval.shape[ax]
    traced = isinstance(repeats, Tracer)
    if not traced and np.ndim(np.asarray(repeats) if not hasattr(repeats, "_ember_aval")
                              else repeats) == 0:
        r = operator.index(repeats)
        if r < 0:
            raise ValueError("repeats may not contain negative values")
        if total_repeat_length is not None and total_repeat_length != n * r:
            return _repeat_by_index(a, ax, np.full((n,), r), total_repeat_length)
        shp = aval.shape
        big = (*shp[:ax + 1], r, *shp[ax + 1:])
        dims = tuple(i if i <= ax else i + 1 for i in range(aval.ndim))
        out = lax.broadcast_in_dim(a, big, dims)
        return lax.reshape(out, (*shp[:ax], n * r, *shp[ax + 1:]))
    if traced:
        if total_repeat_length is None:
            raise ConcretizationTypeError(
                "repeat with traced repeats needs a static total_repeat_length")
        return _repeat_by_index(a, ax, repeats, total_repeat_length)
    reps = np.asarray(repeats).astype(np.int64)
    if reps.shape not in ((n,), (1,)):
        raise ValueError(f"repeats has shape {reps.shape}, expected ({n},)")
    reps = np.broadcast_to(reps, (n,))
    if (reps < 0).any():
        raise ValueError("repeats may not contain negative values")
    total = int(reps.sum()) if total_repeat_length is None else total_repeat_length
    return _repeat_by_index(a, ax, reps, total)


def _repeat_by_index(a: Any, ax: int, reps: Any, total: int) -> Any:
    from ember import numpy as jnp
    if not isinstance(reps, Tracer):
        reps = np.asarray(reps)
        idx = np.repeat(np.arange(reps.shape[0]), reps)
        if idx.shape[0] >= total:
            idx = idx[:total]
        else:
            # Shorter than total: the last index fills the tail, as in JAX.
            last = idx[-1] if idx.size else 0
            idx = np.concatenate([idx, np.full(total - idx.shape[0], last)])
        return jnp.take(a, idx.astype(dtypes.default_int()), axis=ax)
    reps = lax.convert_element_type(reps, np.int32)
    n = get_aval(reps).shape[0]
    # c_i = sum_{l <= i} reps_l via a lower-triangular mask; element of output j is the
    # count of i with c_i <= j (clamped to n - 1 past the end).
    mask = _tri_int(n)
    c = lax.reduce_sum(lax.mul(lax.broadcast_in_dim(reps, (n, n), (1,)), mask), (1,))
    j = lax.iota(np.int32, total)
    le = lax.le(lax.broadcast_in_dim(c, (total, n), (1,)),
                lax.broadcast_in_dim(j, (total, n), (0,)))
    idx = lax.reduce_sum(lax.convert_element_type(le, np.int32), (1,))
    idx = lax.min(idx, lax.convert_element_type(builtins.max(n - 1, 0), np.int32))
    return jnp.take(a, idx, axis=ax)


def _tri_int(n: int) -> Any:
    """int32 n x n with ones at and below the diagonal (i >= j)."""
    rows = lax.broadcasted_iota(np.int32, (n, n), 0)
    cols = lax.broadcasted_iota(np.int32, (n, n), 1)
    return lax.convert_element_type(lax.ge(rows, cols), np.int32)


# ---------------------------------------------------------------------------------------------
# Diagonals
# ---------------------------------------------------------------------------------------------

def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Return the diagonal of an array, or of each of its 2-d planes.

    Args:
        a: an array of at least two dimensions.
        offset: which diagonal: 0 the main one, ``offset > 0`` above it, ``offset < 0``
            below it.
        axis1, axis2: the two axes whose planes hold the diagonals.

    Returns:
        The diagonal elements, along a new last axis; the other axes of ``a`` come first in
        their order. As in JAX (and unlike NumPy, which may return a read-only view), it is
        a new array.

    Example:
        >>> jnp.diagonal(jnp.arange(9).reshape(3, 3))
        Array([0, 4, 8], dtype=int32)
        >>> jnp.diagonal(jnp.arange(9).reshape(3, 3), 1)
        Array([1, 5], dtype=int32)
    """
    a = ensure_array(a)
    aval = get_aval(a)
    if aval.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    ax1, ax2 = _axis(axis1, aval.ndim), _axis(axis2, aval.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 must not be equal")
    # (under a trace one jit[name=diagonal] equation, its arguments static, as in JAX)
    return _diagonal(a, offset=operator.index(offset), axis1=ax1, axis2=ax2)


@jit_like_jax("diagonal", static_argnames=("offset", "axis1", "axis2"))
def _diagonal(a: Any, offset: int, axis1: int, axis2: int) -> Any:
    # JAX's formulation: with the two axes moved last, the elements (i, i + k) for k >= 0
    # ((i - k, i) for k < 0) read by advanced indexing with two aranges (a gather). (JAX
    # 0.10.2 stages a square 2-d case as a platform-dependent cond, which Ember does not.)
    from ember.numpy._creation import arange
    shape = get_aval(a).shape
    k = offset
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    size = builtins.max(0, builtins.min(shape[axis1] + builtins.min(k, 0),
                                        shape[axis2] - builtins.max(k, 0)))
    i = arange(size)
    j = arange(abs(k), abs(k) + size)
    return a[..., i, j] if k >= 0 else a[..., j, i]


@jit_like_jax("trace", static_argnames=("axis1", "axis2", "dtype"))
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Any:
    """Sum of the elements on a diagonal of ``a``.

    Args:
        a: array with at least two dimensions.
        offset: which diagonal: 0 the main one, > 0 above it, < 0 below it; an int or a
            traced integer scalar (under a trace a given offset is an argument of the
            nested jit, as in JAX).
        axis1, axis2: the two axes holding the matrices (default the first two).
        dtype: the accumulation and output dtype (default: ``sum``'s rule, so small
            integers accumulate as the default integer type).
        out: not supported (must be None), as in JAX.

    Returns:
        An array of ``a.ndim - 2`` dimensions: ``sum_i a[..., i, i + offset]`` over the
        other axes.

    Example:
        >>> jnp.trace(jnp.arange(9.0).reshape(3, 3))
        Array(12., dtype=float32)
    """
    from ember.numpy._creation import zeros_like
    from ember.numpy._reductions import sum as _sum
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    check_arraylike("trace", a)
    a = ensure_array(a)
    ndim = get_aval(a).ndim
    if _axis(axis1, ndim) == _axis(axis2, ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    rows, cols = get_aval(a).shape[axis1], get_aval(a).shape[axis2]
    # Masking the diagonal and summing both axes (not slicing it out) is JAX's formulation:
    # the traced text then matches JAX's `jit[name=trace]` op for op.
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    # The mask row + offset == col (eye's formulation, with the offset possibly traced).
    if isinstance(offset, Tracer) or hasattr(offset, "_ember_aval"):
        aval = get_aval(offset)
        if aval.shape != () or dtypes.kind(aval.dtype) not in "iu":
            raise TypeError(f"trace: offset must be an integer scalar, got {aval.str_short()}")
    else:
        offset = operator.index(offset)
    row = lax.broadcasted_iota(np.int32, (rows, cols), 0)
    col = lax.broadcasted_iota(np.int32, (rows, cols), 1)
    mask = lax.eq(lax.add(row, lax.convert_element_type(offset, np.int32)), col)
    a = where(mask, a, zeros_like(a))
    return _sum(a, axis=(-2, -1), dtype=dtype)
