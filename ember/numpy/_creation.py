"""Array creation: array, asarray, zeros, ones, full, empty (and `_like` forms), arange,
linspace, logspace, geomspace, eye, identity, tri, tril, triu, meshgrid, mgrid, ogrid,
indices, diag, diagflat.

Input: Python scalars, NumPy values, nested sequences, ember Arrays or tracers, and static
shapes/sizes (Python ints or concrete values). Output: ember Arrays eagerly; under jit the
same staging JAX does (`arange(3, dtype=f32)` is one `iota`, `zeros` a broadcast of a scalar
literal, `eye` a comparison of two iotas). Invariants: shapes, sizes, `k` offsets and
`arange` bounds are static (a tracer there raises ConcretizationTypeError); every result
dtype is canonical (64-bit types narrow unless jax_enable_x64); Python scalars stay weakly
typed where JAX keeps them weak (`full((2,), 1.0)` is a weak f32).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.array import ArrayImpl
from ember.core import dtypes
from ember.core.trace import Tracer, get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, ensure_array, is_array

__all__ = [
    "array", "asarray", "copy", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
    "full_like", "empty_like", "arange", "linspace", "logspace", "geomspace", "eye", "identity",
    "tri", "tril", "triu", "meshgrid", "mgrid", "ogrid", "indices", "diag", "diagflat",
    "frombuffer", "fromiter",
]

_OBJECT = np.dtype(object)


def _shape(shape: Any) -> tuple[int, ...]:
    """A static shape from an int or a sequence of ints (concrete Arrays allowed)."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    traced = [d for d in dims if isinstance(d, Tracer)]
    if traced:
        raise _shape_error(dims, traced[0])
    return tuple(_size(d) for d in dims)


def _size(v: Any) -> int:
    if isinstance(v, Tracer):
        raise _shape_error((v,), v)
    n = operator.index(v)
    if n < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n}")
    return n


def _shape_error(dims: tuple, tracer: Tracer) -> Exception:
    """JAX's text for a traced dimension, then which argument it depends on and where (the
    trace's concretization error), so the user sees what to mark static."""
    detail = _concrete_error("a shape argument", tracer)
    return type(detail)(
        f"Shapes must be 1D sequences of concrete values of integer type, got {dims!r}.\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller "
        f"subfunctions.\n{detail}")


def _concrete_error(fname: str, tracer: Tracer) -> Exception:
    """The trace's concretization error (it names the argument the value depends on and
    the line) for a value that sets a result's shape."""
    return tracer._trace.concretization_error(
        tracer, f"{fname} (the result's shape would depend on data)")


def _dtype(dtype: Any, fname: str, default: np.dtype | None = None) -> np.dtype:
    """The canonical dtype of a `dtype=` argument of `fname` (warning, as JAX does, when a
    64-bit type is asked for with x64 off); `default` (or the default float) for None."""
    if dtype is None:
        return default if default is not None else dtypes.default_float()
    return dtypes.canonicalize_requested(dtype, fname)


def _static(v: Any, fname: str) -> Any:
    """The concrete Python value of a static argument."""
    if isinstance(v, Tracer):
        raise _concrete_error(fname, v)
    if isinstance(v, (ArrayImpl, np.ndarray, np.generic)):
        return np.asarray(v).item()
    return v


# ---------------------------------------------------------------------------------------------
# array / asarray
# ---------------------------------------------------------------------------------------------

def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = None,
          ndmin: int = 0, *, device: Any = None) -> Any:
    """Create an array from a value.

    Args:
        object: an Array, a tracer, a NumPy array, a scalar, or nested lists and tuples of
            these.
        dtype: the element type; default the value's (a Python list of ints or floats takes
            the default int or float, which is 32-bit unless x64 is enabled, where NumPy's
            is 64-bit).
        copy: accepted for NumPy compatibility; Ember's arrays are immutable, so a copy and
            the original cannot be told apart.
        order: ignored (Ember stores every array in C order).
        ndmin: the minimum number of dimensions (leading axes of size 1 are added).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An ``ember.Array``, or a tracer under a transformation. A Python scalar gives a weakly
        typed array; a Python int that the integer dtype cannot hold raises
        ``OverflowError`` (as in JAX), never wraps around.

    Example:
        >>> jnp.array([[1, 2], [3, 4]], dtype=jnp.float32)
        Array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    return _array(object, None if dtype is None else _dtype(dtype, "array"), ndmin)


def _array(object: Any, dt: np.dtype | None, ndmin: int = 0) -> Any:
    """array() for a dtype already canonical (None: the value's own)."""
    if hasattr(object, "__jax_array__") and not is_array(object):
        object = object.__jax_array__()
    if is_array(object):
        out = object if dt is None else lax.convert_element_type(object, dt)
    elif isinstance(object, (list, tuple)) and _contains_array(object):
        out = _stack_nested(object, dt)
    elif dtypes.is_python_scalar(object):
        if dt is None:
            aval = get_aval(object)  # (raises for an int the default int cannot hold)
            out = lax.convert_element_type(object, aval.dtype, True)
        else:
            if type(object) is int:
                dtypes.check_int_fits(object, dt)
            out = lax.convert_element_type(object, dt, False)
    else:
        value = np.asarray(object)
        if value.dtype == _OBJECT or dtypes.kind(value.dtype) in "USVM":
            raise TypeError(f"ember.numpy.array: cannot convert {object!r} to an array "
                            f"(dtype {value.dtype})")
        if isinstance(object, (list, tuple)):
            target = _list_dtype(object, value.dtype) if dt is None else dt
            _check_list_ints(value, target)
            value = value.astype(target, copy=False)
        elif dt is not None:
            value = value.astype(dt, copy=False)
        out = ArrayImpl._from_user(value)
    if ndmin and get_aval(out).ndim < ndmin:
        out = lax.broadcast_to_rank(out, ndmin)
    return out


def _check_list_ints(value: np.ndarray, target: np.dtype) -> None:
    """The Python ints of a list (read by NumPy as int64/uint64) must fit the integer type
    they become: NumPy's error, as JAX gives it, where astype would wrap silently."""
    bounds = dtypes.INT_BOUNDS.get(target)
    if bounds is None or dtypes.kind(value.dtype) not in "iu" or not value.size:
        return
    lo, hi = int(value.min()), int(value.max())
    if lo < bounds[0] or hi > bounds[1]:
        bad = lo if lo < bounds[0] else hi
        raise OverflowError(f"Python integer {bad} out of bounds for {target}")


def _contains_array(seq: Any) -> bool:
    if isinstance(seq, (list, tuple)):
        return any(_contains_array(s) for s in seq)
    return is_array(seq)


def _stack_nested(seq: Sequence[Any], dtype: np.dtype | None) -> Any:
    """array([...]) of a sequence holding Arrays/tracers: stack its elements (recursively),
    promoted together as JAX does (`array([x, 1.0])` with x f32 is f32)."""
    if dtype is None:
        # The dtype all leaves promote to (a list is never weakly typed: jnp.array([1.0])
        # is a strong f32); each leaf is then converted to it before it is stacked, JAX's
        # order of equations (a weak i32 leaf gets its own convert to the strong i32).
        typed = [(get_aval(v).dtype, get_aval(v).weak_type) for v in _leaves(seq)]
        if not typed:
            return _array(np.zeros((0,)), None)
        dtype = dtypes.canonicalize(dtypes.promote(*typed)[0])
    if not seq:
        return _array(np.zeros((0,)), dtype)
    # Each element goes straight to the dtype and gains the new axis before the next one is
    # read (as JAX stages it): no detour through another type, so no double rounding.
    parts = []
    for s in seq:
        item = _stack_nested(s, dtype) if isinstance(s, (list, tuple)) else ensure_array(s)
        parts.append(lax.expand_dims(lax.convert_element_type(item, dtype, False), (0,)))
    if len({get_aval(p).shape for p in parts}) > 1:
        raise ValueError("all input arrays must have the same shape")
    return lax.concatenate(parts, 0)


def _list_dtype(obj: Any, np_dtype: np.dtype) -> np.dtype:
    """Python lists of ints/floats take the default int/float dtypes (as in JAX); lists that
    hold NumPy scalars or arrays take their joined dtype."""
    leaves = list(_leaves(obj))
    if leaves and all(dtypes.is_python_scalar(v) for v in leaves):
        if dtypes.kind(np_dtype) == "f":
            return dtypes.default_float()
        if dtypes.kind(np_dtype) in "iu":
            return dtypes.default_int()
        if dtypes.kind(np_dtype) == "c":
            return dtypes.canonicalize(np.complex128)
        return dtypes.canonicalize(np_dtype)
    typed = [(get_aval(v).dtype, get_aval(v).weak_type) for v in leaves]
    return dtypes.promote(*typed)[0] if typed else dtypes.canonicalize(np_dtype)


def _leaves(obj: Any) -> Any:
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    else:
        yield obj


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None) -> Any:
    """Convert a value to an array, without copying an array that already has the dtype.

    Args:
        a: an Array, a tracer, a NumPy array, a scalar, or nested lists and tuples of these.
        dtype: the element type (default the value's, as in ``array``).
        order: ignored (Ember stores every array in C order).
        copy: accepted for NumPy compatibility (arrays are immutable).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        ``a`` itself when it is already an array of that dtype, else ``array(a, dtype)``.

    Example:
        >>> jnp.asarray([1.5, 2.5])
        Array([1.5, 2.5], dtype=float32)
    """
    dt = None if dtype is None else _dtype(dtype, "asarray")
    if is_array(a) and (dt is None or dt == get_aval(a).dtype):
        return a
    return _array(a, dt)


def copy(a: Any, order: str | None = None) -> Any:
    """Return a copy of an array.

    Args:
        a: an array, scalar or nested sequence.
        order: accepted for NumPy compatibility; only the default C order exists.

    Returns:
        An array equal to ``a``. Arrays are immutable, so the copy may share ``a``'s buffer:
        nothing can write through either one.

    Example:
        >>> jnp.copy(jnp.array([1, 2]))
        Array([1, 2], dtype=int32)
    """
    return array(a, copy=True)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """Interpret a buffer of bytes as a 1-d array.

    Args:
        buffer: an object exposing the buffer protocol (bytes, a NumPy array, ...).
        dtype: the element type of the data (default float, i.e. float64 bytes, as NumPy);
            64-bit types become 32-bit unless x64 is on.
        count: the number of elements to read; -1 reads to the end.
        offset: the byte offset to start at.

    Returns:
        A 1-d array. Unlike NumPy's, which shares the buffer's memory, the bytes are copied
        (so later writes to ``buffer`` do not show); it runs on the host, so it cannot be
        traced.

    Example:
        >>> jnp.frombuffer(bytes([1, 2, 3, 4]), dtype=jnp.uint8)
        Array([1, 2, 3, 4], dtype=uint8)
    """
    return array(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromiter(iterable: Any, dtype: Any, count: int = -1) -> Any:
    """Create a 1-d array from an iterable.

    Args:
        iterable: an iterable of scalars (consumed on the host, so it cannot be traced).
        dtype: the element type (required, as in NumPy).
        count: the number of items to read; -1 reads the whole iterable.

    Returns:
        A 1-d array of the items.

    Example:
        >>> jnp.fromiter((i * i for i in range(4)), dtype=jnp.int32)
        Array([0, 1, 4, 9], dtype=int32)
    """
    return array(np.fromiter(iterable, dtype=dtype, count=count))


# ---------------------------------------------------------------------------------------------
# Filled arrays
# ---------------------------------------------------------------------------------------------

def _filled(shape: tuple[int, ...], fill_value: Any, dtype: np.dtype, weak: bool) -> Any:
    """broadcast_in_dim of the converted scalar: what JAX stages for zeros/full. A Python int
    fill value must fit an integer dtype (NumPy 2's OverflowError; JAX would wrap it)."""
    if type(fill_value) is int:
        dtypes.check_int_fits(fill_value, dtype)
    value = lax.convert_element_type(fill_value, dtype, weak)
    return lax.broadcast_in_dim(value, shape, ())


def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Create an array of the given shape filled with zeros.

    Args:
        shape: an int or a sequence of ints (static: under ``jit`` it cannot depend on a
            traced value).
        dtype: the element type; default the default float (float32 unless x64 is enabled,
            where NumPy's default is float64).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An array of ``shape`` and ``dtype`` holding zeros.

    Example:
        >>> jnp.zeros((2, 3), dtype=jnp.int32)
        Array([[0, 0, 0],
               [0, 0, 0]], dtype=int32)
    """
    return _filled(_shape(shape), 0, _dtype(dtype, "zeros"), False)


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Create an array of the given shape filled with ones.

    Args:
        shape: an int or a sequence of ints (static under ``jit``).
        dtype: the element type; default the default float (float32 unless x64 is enabled).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An array of ``shape`` and ``dtype`` holding ones.

    Example:
        >>> jnp.ones(3)
        Array([1., 1., 1.], dtype=float32)
    """
    return _filled(_shape(shape), 1, _dtype(dtype, "ones"), False)


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Create an array of the given shape; as in JAX it holds zeros.

    The counterpart of :func:`numpy.empty`. XLA has no uninitialized memory, so unlike
    NumPy the contents are defined: ``empty`` is ``zeros``.

    Args:
        shape: an int or a sequence of ints (static under ``jit``).
        dtype: the element type; default the default float.
        device: accepted for JAX compatibility; the result is placed as ``zeros`` places it.

    Returns:
        An array of ``shape`` and ``dtype`` holding zeros.

    Example:
        >>> jnp.empty((2, 3), dtype=jnp.int32)
        Array([[0, 0, 0],
               [0, 0, 0]], dtype=int32)
    """
    return _filled(_shape(shape), 0, _dtype(dtype, "empty"), False)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """Create an array of the given shape filled with one value.

    Args:
        shape: an int or a sequence of ints (static under ``jit``).
        fill_value: a scalar, or an array broadcast to ``shape``; it may be traced.
        dtype: the element type; default ``fill_value``'s (a Python scalar keeps its weak
            type, so ``jnp.full(3, 2.0) + x`` takes ``x``'s dtype, as in JAX).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An array of ``shape`` filled with ``fill_value``.

    Example:
        >>> jnp.full((2, 2), 7, dtype=jnp.float32)
        Array([[7., 7.],
               [7., 7.]], dtype=float32)
    """
    shape = _shape(shape)
    dt = None if dtype is None else _dtype(dtype, "full")
    return _full(shape, fill_value, dt)


def _full(shape: tuple[int, ...], fill_value: Any, dt: np.dtype | None) -> Any:
    """full() for a dtype already canonical (None: fill_value's dtype and weak type)."""
    if isinstance(fill_value, (list, tuple)):
        fill_value = _array(fill_value, None)
    if type(fill_value) is int and dt is not None:
        return _filled(shape, fill_value, dt, False)  # (checked against dt, not the default)
    fill_aval = get_aval(fill_value)
    if fill_aval.ndim:
        from ember.numpy._manipulation import broadcast_to
        value = ensure_array(fill_value)
        if dt is not None:
            value = lax.convert_element_type(value, dt)
        return broadcast_to(value, shape)
    if dt is None:
        return _filled(shape, fill_value, fill_aval.dtype, fill_aval.weak_type)
    return _filled(shape, fill_value, dt, False)


def _like(a: Any, dtype: Any, shape: Any, fname: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """(shape, dtype, weak) of a `_like` result: a's unless given; a's weak type is kept only
    when dtype is not given (JAX's full_like)."""
    check_arraylike(fname, a)
    aval = get_aval(a)
    return (aval.shape if shape is None else _shape(shape),
            aval.dtype if dtype is None else _dtype(dtype, fname),
            dtype is None and aval.weak_type)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Create an array of zeros with the shape and dtype of another.

    Args:
        a: an array (or anything with ``shape`` and ``dtype``); only its shape and dtype are
            used, never its values.
        dtype: overrides ``a``'s dtype.
        shape: overrides ``a``'s shape.
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An array of zeros; it keeps ``a``'s weak type when ``dtype`` is not given.

    Example:
        >>> jnp.zeros_like(jnp.arange(3))
        Array([0, 0, 0], dtype=int32)
    """
    return _filled(*_like_args(a, dtype, shape, 0, "zeros_like"))


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Create an array of ones with the shape and dtype of another.

    Args:
        a: an array; only its shape and dtype are used.
        dtype: overrides ``a``'s dtype.
        shape: overrides ``a``'s shape.
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An array of ones; it keeps ``a``'s weak type when ``dtype`` is not given.

    Example:
        >>> jnp.ones_like(jnp.zeros((2,), jnp.float32))
        Array([1., 1.], dtype=float32)
    """
    return _filled(*_like_args(a, dtype, shape, 1, "ones_like"))


def empty_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Create an array with the shape and dtype of another, filled with zeros.

    Args:
        a: an array (or anything with a shape and dtype) to take them from.
        dtype: overrides ``a``'s dtype.
        shape: overrides ``a``'s shape.
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        ``zeros_like(a, dtype, shape)``: XLA has no uninitialized memory, so unlike NumPy's
        the contents are defined, as in JAX.

    Example:
        >>> jnp.empty_like(jnp.array([1.5, 2.5]))
        Array([0., 0.], dtype=float32)
    """
    return _filled(*_like_args(a, dtype, shape, 0, "empty_like"))


def _like_args(a: Any, dtype: Any, shape: Any, fill: Any, fname: str) -> tuple:
    s, d, weak = _like(a, dtype, shape, fname)
    return s, fill, d, weak


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None) -> Any:
    """Create an array filled with a value, with the shape and dtype of another.

    Args:
        a: an array; only its shape and dtype are used.
        fill_value: a scalar, or an array broadcast to the shape; it may be traced.
        dtype: overrides ``a``'s dtype.
        shape: overrides ``a``'s shape.
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An array filled with ``fill_value`` converted to the dtype.

    Example:
        >>> jnp.full_like(jnp.arange(3), 5)
        Array([5, 5, 5], dtype=int32)
    """
    s, d, weak = _like(a, dtype, shape, "full_like")
    if type(fill_value) is not int and get_aval(fill_value).ndim:
        return _full(s, fill_value, d)
    return _filled(s, fill_value, d, weak)


# ---------------------------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------------------------

def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None) -> Any:
    """Return evenly spaced values in the half-open interval ``[start, stop)``.

    Args:
        start: the first value, or, when ``stop`` is None, the end (the range starts at 0).
        stop: the end, excluded.
        step: the spacing (default 1).
        dtype: the element type; default the promoted type of the bounds (Python ints give
            the default int, floats the default float).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        A 1-d array of ``ceil((stop - start) / step)`` values. The bounds must be static
        (concrete) values, as in JAX: the length of an array cannot depend on a traced value.
        ``arange(n)`` traces as one ``iota``; other bounds give NumPy's values as a constant.

    Example:
        >>> jnp.arange(2, 11, 3)
        Array([2, 5, 8], dtype=int32)
    """
    if isinstance(start, Tracer) or isinstance(stop, Tracer) or isinstance(step, Tracer):
        tracer = next(v for v in (start, stop, step) if isinstance(v, Tracer))
        raise _concrete_error("arange", tracer)
    bounds = [v for v in (start, stop, step) if v is not None]
    for v in bounds:
        if get_aval(v).ndim:
            raise ValueError("arange requires scalar (0-d) start, stop and step")
    if dtype is None:
        dt = dtypes.promote(*[(get_aval(v).dtype, False) for v in bounds])[0]
    else:
        dt = _dtype(dtype, "arange")
    start_v = _static(start, "arange")
    stop_v = None if stop is None else _static(stop, "arange")
    step_v = None if step is None else _static(step, "arange")
    if step_v is None and (stop_v is None or start_v == 0):
        n = start_v if stop_v is None else stop_v
        return lax.iota(dt, max(int(np.ceil(n)), 0))
    if step_v is None:
        # start + iota, as JAX stages arange(N, M) (exact: iota's values are integers)
        return lax.add(lax.convert_element_type(start_v, dt),
                       lax.iota(dt, max(int(np.ceil(stop_v - start_v)), 0)))
    if step_v == 0:
        raise ZeroDivisionError("arange: step cannot be zero")
    return array(np.arange(start_v, stop_v, step_v, dtype=dt))


def _inexact_dtype(*vals: Any, dtype: Any, fname: str) -> tuple[np.dtype, np.dtype]:
    """(result dtype, computation dtype): the promoted float type of the values (the
    default float for integers), and dtype if given; integers compute in the default float."""
    typed = [(get_aval(v).dtype, get_aval(v).weak_type) for v in vals]
    computed = dtypes.promote(*typed, (dtypes.default_float(), True))[0]
    if dtypes.kind(computed) not in "fc":
        computed = dtypes.default_float()
    out = computed if dtype is None else _dtype(dtype, fname)
    if dtypes.kind(out) in "fc" and out.itemsize > computed.itemsize:
        computed = out
    return out, computed


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Any:
    """Return ``num`` evenly spaced samples from ``start`` to ``stop``.

    Args:
        start: the first sample (a scalar or an array; arrays broadcast with ``stop``).
        stop: the last sample, included when ``endpoint`` is true.
        num: the number of samples (static).
        endpoint: whether ``stop`` is the last sample (True) or the end of a half-open range.
        retstep: also return the spacing.
        dtype: the element type; default the promoted float type of ``start`` and ``stop``.
            Integer dtypes take the floor of the float samples, as in JAX.
        axis: where the sample axis goes when ``start``/``stop`` are arrays.
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        The samples ``start * (1 - t) + stop * t`` for ``t = i / (num - 1)`` (or ``i / num``
        without the endpoint), computed as JAX computes them so the last one is ``stop``
        exactly; with ``retstep``, ``(samples, step)``.

    Example:
        >>> jnp.linspace(0.0, 1.0, 5)
        Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    num = operator.index(_static(num, "linspace"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    out_dtype, comp = _inexact_dtype(start, stop, dtype=dtype, fname="linspace")
    nd = len(np.broadcast_shapes(np.shape(start), np.shape(stop)))
    ax = operator.index(axis)
    if not -(nd + 1) <= ax <= nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd + 1}")
    return _linspace(ensure_array(start), ensure_array(stop), num, bool(endpoint),
                     bool(retstep), out_dtype, comp, ax % (nd + 1))


@jit_like_jax("_linspace", static_argnames=("num", "endpoint", "retstep", "out_dtype",
                                            "comp", "axis"))
def _linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: bool,
              out_dtype: np.dtype, comp: np.dtype, axis: int) -> Any:
    # Staged in JAX's order (so make_jaxpr prints jit[_linspace] as JAX does): the first
    # `div` samples are start * (1 - t) + stop * t with t = i / div on a length-`div` iota
    # laid along `axis`, and with the endpoint `stop` itself is concatenated after them,
    # so the last sample is exact.
    from ember.numpy._manipulation import broadcast_to
    start = lax.convert_element_type(start, comp)
    stop = lax.convert_element_type(stop, comp)
    bshape = np.broadcast_shapes(get_aval(start).shape, get_aval(stop).shape)
    bstart, bstop = broadcast_to(start, bshape), broadcast_to(stop, bshape)
    ishape = list(bshape)
    ishape.insert(axis, 1)
    div = num - 1 if endpoint else num
    if num > 1:
        delta = lax.div(lax.sub(stop, start), lax.convert_element_type(div, comp))
        tshape = [1] * len(ishape)
        tshape[axis] = div
        t = lax.div(lax.reshape(lax.iota(comp, div), tuple(tshape)),
                    lax.convert_element_type(div, comp))
        one = lax.convert_element_type(1, comp)
        out = lax.add(lax.mul(lax.reshape(bstart, tuple(ishape)), lax.sub(one, t)),
                      lax.mul(lax.reshape(bstop, tuple(ishape)), t))
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(bstop, (axis,))], axis)
    elif num == 1:
        delta = (lax.convert_element_type(np.nan, comp) if endpoint
                 else lax.sub(stop, start))
        out = lax.reshape(bstart, tuple(ishape))
    else:  # no samples: an empty array, as NumPy gives
        ishape[axis] = 0
        delta = lax.convert_element_type(np.nan, comp)
        out = lax.full(tuple(ishape), 0, comp)
    if dtypes.kind(out_dtype) in "iu":
        out = lax.floor(out)
    out = lax.convert_element_type(out, out_dtype)
    if retstep:
        return out, lax.convert_element_type(delta, out_dtype)
    return out


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """Return numbers spaced evenly on a log scale.

    Args:
        start, stop: the exponents of the first and last values.
        num: the number of samples.
        endpoint: whether ``base ** stop`` is the last sample.
        base: the base of the powers.
        dtype: the result dtype (default: the inexact type of the inputs).
        axis: where the samples' axis goes when start and stop are arrays.

    Returns:
        ``base ** linspace(start, stop, num, endpoint)``.

    Example:
        >>> jnp.logspace(0.0, 3.0, 4, base=2.0)
        Array([1., 2., 4., 8.], dtype=float32)
    """
    from ember.numpy._ufuncs import power
    out_dtype, comp = _inexact_dtype(start, stop, dtype=dtype, fname="logspace")
    lin = linspace(start, stop, num, endpoint=endpoint, dtype=comp, axis=axis)
    base = lax.convert_element_type(ensure_array(base), comp)
    if get_aval(base).ndim:
        base = _expand_for_axis(base, axis, get_aval(lin).ndim)
    out = power(base, lin)
    if dtypes.kind(out_dtype) in "iu":
        out = lax.floor(out)
    return lax.convert_element_type(out, out_dtype)


def _expand_for_axis(x: Any, axis: int, ndim: int) -> Any:
    from ember.numpy._manipulation import expand_dims
    return expand_dims(x, operator.index(axis) % ndim)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              dtype: Any = None, axis: int = 0) -> Any:
    """Return numbers spaced evenly on a log scale (a geometric progression).

    Args:
        start, stop: the first and last values; nonzero and of the same sign.
        num: the number of samples.
        endpoint: whether ``stop`` is the last sample.
        dtype: the result dtype (default: the inexact type of start and stop).
        axis: where the samples' axis goes when start and stop are arrays.

    Returns:
        ``sign(start) * 10 ** linspace(log10(|start|), log10(|stop|), num)``; the end points
        are set to ``start`` and ``stop`` exactly.

    Example:
        >>> jnp.geomspace(1.0, 1000.0, 4)
        Array([   1.,   10.,  100., 1000.], dtype=float32)
    """
    from ember.numpy._manipulation import expand_dims
    from ember.numpy._ufuncs import log10
    out_dtype, comp = _inexact_dtype(start, stop, dtype=dtype, fname="geomspace")
    start = lax.convert_element_type(ensure_array(start), comp)
    stop = lax.convert_element_type(ensure_array(stop), comp)
    sign = lax.sign(start)
    res = logspace(log10(lax.div(start, sign)), log10(lax.div(stop, sign)), num,
                   endpoint=endpoint, base=10.0, dtype=comp, axis=axis)
    sign_nd = get_aval(sign).ndim
    if sign_nd:
        sign = expand_dims(sign, operator.index(axis) % (sign_nd + 1))
    out = lax.mul(*_bcast_pair(sign, res))
    return lax.convert_element_type(out, out_dtype)


def _bcast_pair(a: Any, b: Any) -> tuple[Any, Any]:
    from ember.numpy._manipulation import broadcast_arrays
    x, y = broadcast_arrays(a, b)
    return x, y


# ---------------------------------------------------------------------------------------------
# Matrices: eye, identity, tri, tril, triu, diag
# ---------------------------------------------------------------------------------------------

def _index_grid(n: int, m: int, k: int) -> tuple[Any, Any]:
    """(i + k, j) over an n x m grid as int32 iotas: the comparisons behind eye and tri."""
    rows = lax.broadcasted_iota(np.int32, (n, m), 0)
    cols = lax.broadcasted_iota(np.int32, (n, m), 1)
    if k:
        rows = lax.add(rows, lax.convert_element_type(k, np.int32))
    return rows, cols


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *,
        device: Any = None) -> Any:
    """Create a 2-d array with ones on a diagonal and zeros elsewhere.

    Args:
        N: the number of rows.
        M: the number of columns (default ``N``).
        k: the diagonal: 0 the main one, > 0 above it, < 0 below it.
        dtype: the element type; default the default float.
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        An ``(N, M)`` array whose entry ``(i, j)`` is 1 where ``i + k == j``.

    Example:
        >>> jnp.eye(2, 3, k=1)
        Array([[0., 1., 0.],
               [0., 0., 1.]], dtype=float32)
    """
    n = _size(_static(N, "eye"))
    m = n if M is None else _size(_static(M, "eye"))
    # The indices in k's dtype, as JAX's: a Python int's is the default int (int64 with
    # x64), a NumPy integer's its own (canonicalized).
    index = (dtypes.canonicalize(np.asarray(k).dtype) if isinstance(k, np.integer)
             else dtypes.default_int())
    k = operator.index(_static(k, "eye"))
    # JAX's order (its jaxpr text): both iotas, then i + k (even for k == 0), then ==.
    rows = lax.broadcasted_iota(index, (n, m), 0)
    cols = lax.broadcasted_iota(index, (n, m), 1)
    rows = lax.add(rows, lax.convert_element_type(k, index))
    return lax.convert_element_type(lax.eq(rows, cols), _dtype(dtype, "eye"))


def identity(n: int, dtype: Any = None) -> Any:
    """Create the ``n x n`` identity matrix.

    Args:
        n: the number of rows and columns.
        dtype: the element type; default the default float.

    Returns:
        ``eye(n, dtype=dtype)``.

    Example:
        >>> jnp.identity(2, dtype=jnp.int32)
        Array([[1, 0],
               [0, 1]], dtype=int32)
    """
    dt = _dtype(dtype, "identity")  # (canonical: eye gives no second warning)
    return eye(n, dtype=dt)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Return an array with ones at and below a diagonal and zeros elsewhere.

    Args:
        N: the number of rows.
        M: the number of columns (default ``N``).
        k: the diagonal at and below which the array is filled: 0 the main one, > 0 above
            it, < 0 below it.
        dtype: the element type (default the default float type).

    Returns:
        An ``(N, M)`` array with ``1`` where ``j <= i + k``.

    Example:
        >>> jnp.tri(3, 4, k=1, dtype=jnp.int32)
        Array([[1, 1, 0, 0],
               [1, 1, 1, 0],
               [1, 1, 1, 1]], dtype=int32)
    """
    n = _size(_static(N, "tri"))
    m = n if M is None else _size(_static(M, "tri"))
    k = operator.index(_static(k, "tri"))
    # JAX's order (its jaxpr text): iota over rows, i + k (even for k == 0), iota over
    # columns, then >=.
    rows = lax.add(lax.broadcasted_iota(np.int32, (n, m), 0),
                   lax.convert_element_type(k, np.int32))
    cols = lax.broadcasted_iota(np.int32, (n, m), 1)
    return lax.convert_element_type(lax.ge(rows, cols), _dtype(dtype, "tri"))


def _tri_select(m: Any, k: int, lower: bool) -> Any:
    m = ensure_array(m)
    aval = get_aval(m)
    if aval.ndim < 2:
        name = "tril" if lower else "triu"
        raise ValueError(f"{name} requires an array of at least two dimensions, got "
                         f"{aval.ndim}")
    n, cols = aval.shape[-2:]
    k = operator.index(_static(k, "tril" if lower else "triu"))
    mask = tri(n, cols, k if lower else k - 1, dtype=np.bool_)
    mask = lax.broadcast_in_dim(mask, aval.shape, (aval.ndim - 2, aval.ndim - 1))
    zero = lax.broadcast_in_dim(lax.convert_element_type(0, aval.dtype, aval.weak_type),
                                aval.shape, ())
    return lax.select(mask, m, zero) if lower else lax.select(mask, zero, m)


@jit_like_jax("tril", static_argnames=("k",))
def tril(m: Any, k: int = 0) -> Any:
    """Return a copy of a matrix (or stack of matrices) with the part above a diagonal zeroed.

    Args:
        m: an array of at least two dimensions; its last two axes are the matrices.
        k: the diagonal kept as the boundary: 0 is the main diagonal, ``k > 0`` one above
            it, ``k < 0`` one below it. A static Python int.

    Returns:
        ``m`` with every element ``m[..., i, j]`` where ``j > i + k`` set to zero.

    Example:
        >>> jnp.tril(jnp.arange(1, 10).reshape(3, 3))
        Array([[1, 0, 0],
               [4, 5, 0],
               [7, 8, 9]], dtype=int32)
    """
    return _tri_select(m, k, True)


@jit_like_jax("triu", static_argnames=("k",))
def triu(m: Any, k: int = 0) -> Any:
    """Return a copy of a matrix (or stack of matrices) with the part below a diagonal zeroed.

    Args:
        m: an array of at least two dimensions; its last two axes are the matrices.
        k: the diagonal kept as the boundary: 0 is the main diagonal, ``k > 0`` one above
            it, ``k < 0`` one below it. A static Python int.

    Returns:
        ``m`` with every element ``m[..., i, j]`` where ``j < i + k`` set to zero.

    Example:
        >>> jnp.triu(jnp.arange(1, 10).reshape(3, 3), 1)
        Array([[0, 2, 3],
               [0, 0, 6],
               [0, 0, 0]], dtype=int32)
    """
    return _tri_select(m, k, False)


def diag(v: Any, k: int = 0) -> Any:
    """Extract a diagonal of a 2-d array, or build a 2-d array with a 1-d array on a diagonal.

    Args:
        v: a 1-d or 2-d array.
        k: which diagonal: 0 the main one, > 0 above it, < 0 below it (a static int).

    Returns:
        For a 1-d ``v`` of length n: the ``(n + |k|, n + |k|)`` array with ``v`` on its k-th
        diagonal and zeros elsewhere. For a 2-d ``v``: its k-th diagonal, as ``diagonal``
        gives it (a copy, not NumPy's read-only view).

    Example:
        >>> jnp.diag(jnp.array([1, 2]), k=1)
        Array([[0, 1, 0],
               [0, 0, 2],
               [0, 0, 0]], dtype=int32)
        >>> jnp.diag(jnp.arange(9).reshape(3, 3), k=-1)
        Array([3, 7], dtype=int32)
    """
    v = ensure_array(v)
    # (under a trace one jit[name=_diag] equation with k static, as JAX stages it)
    return _diag(v, k=operator.index(_static(k, "diag")))


@jit_like_jax("_diag", static_argnames=("k",))
def _diag(v: Any, k: int) -> Any:
    from ember.numpy._manipulation import diagonal, where
    aval = get_aval(v)
    if aval.ndim == 1:
        # v padded to n = len(v) + |k| (zeros first for k < 0), spread along the rows and
        # kept where row + k == col: entry (i, i + k) is the padded v[i].
        n = aval.shape[0] + abs(k)
        zero = lax.convert_element_type(0, aval.dtype)
        v = lax.pad(v, zero, ((max(0, -k), max(0, k), 0),))
        return where(eye(n, k=k, dtype=np.bool_), lax.broadcast_in_dim(v, (n, 1), (0,)),
                     zero)
    if aval.ndim == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def _pad_1d(v: Any, lo: int, hi: int) -> Any:
    """v with lo leading and hi trailing zeros (concatenation with zero blocks)."""
    from ember.numpy._manipulation import concatenate
    if lo == 0 and hi == 0:
        return v
    aval = get_aval(v)
    parts = []
    if lo:
        parts.append(_filled((lo,), 0, aval.dtype, aval.weak_type))
    parts.append(v)
    if hi:
        parts.append(_filled((hi,), 0, aval.dtype, aval.weak_type))
    return concatenate(parts)


def diagflat(v: Any, k: int = 0) -> Any:
    """Build a 2-d array with the flattened input on a diagonal.

    Args:
        v: an array of any shape; it is flattened first.
        k: which diagonal: 0 the main one, > 0 above it, < 0 below it.

    Returns:
        ``diag(ravel(v), k)``.

    Example:
        >>> jnp.diagflat(jnp.array([[1, 2]]))
        Array([[1, 0],
               [0, 2]], dtype=int32)
    """
    # JAX's staging: v scattered into a flat zero array at the positions of the diagonal,
    # then reshaped (the same n^2 writes as a select over an eye mask)
    import ember.numpy as jnp
    from ember.numpy._manipulation import ravel
    check_arraylike("diagflat", v)
    v_ravel = ravel(v)
    n = len(v_ravel)
    size = n + abs(k)
    res = jnp.zeros(size * size, dtype=get_aval(v_ravel).dtype)
    i = jnp.arange(0, size - abs(k))
    fi = i + k + i * size if k >= 0 else i + (i - k) * size
    return res.at[fi].set(v_ravel).reshape(size, size)


# ---------------------------------------------------------------------------------------------
# Grids: meshgrid, indices, mgrid, ogrid
# ---------------------------------------------------------------------------------------------

def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Return coordinate arrays from coordinate vectors.

    Args:
        *xi: 1-d arrays, one per axis of the grid.
        copy: accepted for NumPy compatibility (the outputs are always new arrays).
        sparse: return arrays with size-1 dimensions that broadcast to the grid instead of
            full grids.
        indexing: ``'xy'`` (Cartesian, the default: the first two output axes are swapped
            relative to ``'ij'``) or ``'ij'`` (matrix indexing).

    Returns:
        A list of ``len(xi)`` arrays.

    Example:
        >>> xs, ys = jnp.meshgrid(jnp.array([1, 2, 3]), jnp.array([10, 20]))
        >>> xs
        Array([[1, 2, 3],
               [1, 2, 3]], dtype=int32)
        >>> ys
        Array([[10, 10, 10],
               [20, 20, 20]], dtype=int32)
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    args = [ensure_array(x) for x in xi]
    for a in args:
        if get_aval(a).ndim != 1:
            raise ValueError(f"Arguments to ember.numpy.meshgrid must be 1D, got shape "
                             f"{get_aval(a).shape}")
    # With 'xy' the first two inputs trade places, are broadcast in input order, and their
    # outputs trade back (so the second input's broadcast is staged first, as in JAX).
    nd = len(args)
    if indexing == "xy" and nd >= 2:
        args[0], args[1] = args[1], args[0]
    sizes = [get_aval(a).shape[0] for a in args]
    out = []
    for i, a in enumerate(args):
        shape = tuple(s if d == i else 1 for d, s in enumerate(sizes)) if sparse else \
            tuple(sizes)
        out.append(lax.broadcast_in_dim(a, shape, (i,)))
    if indexing == "xy" and nd >= 2:
        out[0], out[1] = out[1], out[0]
    return out


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """Return arrays holding the indices of a grid.

    Args:
        dimensions: the grid's shape, a sequence of ints.
        dtype: the index dtype (default the default int type).
        sparse: return one broadcastable array per axis instead of one dense array.

    Returns:
        Dense: an array of shape ``(len(dimensions), *dimensions)`` whose k-th entry holds
        the k-th index of each grid position. Sparse: a tuple of arrays, the k-th of shape 1
        everywhere but along axis k.

    Example:
        >>> rows, cols = jnp.indices((2, 3))
        >>> cols
        Array([[0, 1, 2],
               [0, 1, 2]], dtype=int32)
    """
    dims = tuple(_size(_static(d, "indices")) for d in dimensions)
    dt = _dtype(dtype, "indices", dtypes.default_int())
    outs = []
    for k, n in enumerate(dims):
        if sparse:
            shape = tuple(n if j == k else 1 for j in range(len(dims)))
        else:
            shape = dims
        outs.append(lax.broadcasted_iota(dt, shape, k))
    if sparse:
        return tuple(outs)
    if not outs:
        return zeros((0,), dt)
    from ember.numpy._manipulation import stack
    return stack(outs, 0)


class _IndexGrid:
    """mgrid / ogrid: `mgrid[0:3, 0:4]` as NumPy (a complex step `5j` means 5 points,
    stop included, via linspace; otherwise arange)."""

    def __init__(self, sparse: bool, name: str):
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key: Any) -> Any:
        single = isinstance(key, slice)
        keys = (key,) if single else tuple(key)
        axes = [self._axis(k) for k in keys]
        if single:
            return axes[0]
        if not axes:
            return zeros((0,), dtypes.default_int())
        # Integer ranges keep the default int unless a float range is present.
        if any(dtypes.kind(get_aval(a).dtype) == "f" for a in axes):
            axes = [lax.convert_element_type(a, dtypes.default_float()) for a in axes]
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids
        from ember.numpy._manipulation import stack
        return stack(grids, 0)

    @staticmethod
    def _axis(s: Any) -> Any:
        if not isinstance(s, slice):
            raise TypeError("mgrid/ogrid indices must be slices")
        start = 0 if s.start is None else s.start
        stop, step = s.stop, s.step
        if isinstance(step, complex):
            n = int(abs(step))
            return linspace(start, stop, n, endpoint=True)
        return arange(start, stop, 1 if step is None else step)

    def __repr__(self) -> str:
        return f"ember.numpy.{self.name}"


mgrid = _IndexGrid(False, "mgrid")
ogrid = _IndexGrid(True, "ogrid")
