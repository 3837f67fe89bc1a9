"""Reductions: sum, prod, max, min, mean, var, std, all, any, argmax, argmin, ptp, average,
nansum, nanprod, nanmax, nanmin, nanmean, quantile, percentile, median.

Input: an array and `axis` (None, an int or a tuple; negative axes count from the end).
Output: the reduced array. `keepdims` broadcasts the result back with size-1 dimensions, as
JAX does (a reduce then a broadcast_in_dim); `where=` masks elements out with the
reduction's identity (max/min need `initial=` with it, as in JAX); `dtype=` casts before
reducing. Sums and products of bool and small integers accumulate in the default
int/uint, as in JAX; mean/var/std of integers give the default float and compute float16
in float32.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._eager_cache import eager_cached
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, ensure_array, promote_dtypes_inexact

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "argmax",
    "argmin", "ptp", "average", "nansum", "nanprod", "nanmax", "nanmin", "nanmean",
    "quantile", "percentile", "median", "nanargmax", "nanargmin",
]


def normalize_axes(axis: Any, ndim: int, keep_order: bool = False) -> tuple[int, ...]:
    """The axes in [0, ndim), sorted (in the order given with keep_order, as JAX passes a
    reduction's axes to its primitive: reduce_sum[axes=(1, 0)])."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = [int(a) for a in axis]
    else:
        axes = [int(axis.__index__() if hasattr(axis, "__index__") else axis)]
    out = []
    for a in axes:
        if not -ndim <= a < builtins.max(ndim, 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in reduction: {axis}")
    if not ndim:
        return ()
    return tuple(out) if keep_order else tuple(sorted(out))


def _keepdims(out: Any, in_shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    shape = tuple(1 if i in axes else s for i, s in enumerate(in_shape))
    kept = tuple(i for i in range(len(in_shape)) if i not in axes)
    return lax.broadcast_in_dim(out, shape, kept)


def _upcast_small_int(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < dtypes.default_int().itemsize):
        return dtypes.default_int()
    if dtype.kind == "u" and dtype.itemsize < dtypes.default_uint().itemsize:
        return dtypes.default_uint()
    return dtype


def _is_half(dtype: np.dtype) -> bool:
    """float16 or bfloat16: the types JAX sums and averages in float32."""
    return dtype == dtypes.float16 or dtypes.is_bfloat16(dtype)


def _reduction(a: Any, name: str, lax_reduce: Callable[[Any, tuple[int, ...]], Any],
               identity: Callable[[np.dtype], Any], axis: Any, dtype: Any, keepdims: bool,
               initial: Any, where: Any, upcast: bool = False, bool_op: bool = False,
               upcast_f16: bool = False) -> Any:
    check_arraylike(name, a)
    a = ensure_array(a)
    aval = get_aval(a)
    # A float16 or bfloat16 sum or product computes in float32 and rounds once at the end
    # (as JAX's jaxpr does: the staged program says so, so eager, jit and every backend
    # agree); accumulating in float16 loses a digit every few hundred terms.
    low = aval.dtype
    result_f16 = upcast_f16 and dtype is None and _is_half(low)
    if result_f16:
        a = lax.convert_element_type(a, dtypes.float32)
    if bool_op:
        if dtypes.kind(aval.dtype) == "c":
            # (JAX converts the real part only, so any([1j]) is False there; NumPy's True
            # is kept: compare with zero)
            a = lax.ne(a, lax.full_like(a, 0))
        elif dtypes.kind(aval.dtype) != "b":
            a = lax.convert_element_type(a, np.dtype(bool))  # (as JAX stages it)
    elif dtype is not None:
        if upcast and dtypes.kind(aval.dtype) == "b":
            # (a sum or product of bools counts in the default int first, as JAX stages it)
            a = lax.convert_element_type(a, dtypes.default_int())
        a = lax.convert_element_type(a, dtypes.canonicalize(np.dtype(dtype)))
    elif upcast:
        target = _upcast_small_int(aval.dtype)
        if target != aval.dtype:
            a = lax.convert_element_type(a, target)
    aval = get_aval(a)
    axes = normalize_axes(axis, aval.ndim, keep_order=True)
    if where is not None:
        from ember.numpy._manipulation import where as _where
        # (the identity as a 0-d constant of a's dtype, broadcast inside `_where`, as JAX)
        a = _where(where, a, lax.convert_element_type(identity(aval.dtype), aval.dtype))
        aval = get_aval(a)
    out = lax_reduce(a, axes)  # (also for no axes: JAX stages reduce_*[axes=()])
    if initial is not None:
        from ember.numpy._ufuncs import maximum, minimum
        combine = {"max": maximum, "min": minimum}.get(name, lax.add if name == "sum" else lax.mul)
        # (initial on the left, as JAX orders the operands)
        out = combine(lax.convert_element_type(initial, get_aval(out).dtype), out)
    if result_f16:
        out = lax.convert_element_type(out, low)
    if keepdims:
        out = _keepdims(out, aval.shape, axes)
    return out


def _lowest(dtype: np.dtype) -> Any:
    if dtypes.kind(dtype) == "f":
        return -np.inf
    return False if dtypes.kind(dtype) == "b" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    if dtypes.kind(dtype) == "f":
        return np.inf
    return True if dtypes.kind(dtype) == "b" else np.iinfo(dtype).max


@eager_cached
def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    """Sum the elements of an array, over all axes or the given ones.

    Args:
        a: an array or scalar (lists are rejected, as in JAX: wrap them in ``jnp.array``).
        axis: an int or tuple of ints; None sums over every axis.
        dtype: the accumulation and result dtype.
        out: not supported (must be None), as in JAX.
        keepdims: keep the summed axes with size 1.
        initial: a value added to the sum.
        where: a bool array broadcast against ``a``: only its True entries are summed.
        promote_integers: sum small integers (and bools) in the default integer type, as
            NumPy does; False keeps the input's dtype.

    Returns:
        The sum. Unlike NumPy, the default integer is int32 unless x64 is enabled, so large
        integer sums can wrap where NumPy's int64 would not.

    Example:
        >>> x = jnp.array([[1, 2, 3], [4, 5, 6]])
        >>> jnp.sum(x, axis=0)
        Array([5, 7, 9], dtype=int32)
    """
    return _reduction(a, "sum", lax.reduce_sum, lambda d: 0, axis, dtype, keepdims, initial,
                      where, upcast=promote_integers, upcast_f16=True)


@eager_cached
def prod(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    """Multiply the elements of an array, over all axes or the given ones.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints; None multiplies over every axis.
        dtype: the accumulation and result dtype.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with size 1.
        initial: a value the product is multiplied by.
        where: a bool array broadcast against ``a``: only its True entries are multiplied.
        promote_integers: multiply small integers in the default integer type, as NumPy does.

    Returns:
        The product (1 over an empty axis).

    Example:
        >>> jnp.prod(jnp.array([1.0, 2.0, 3.0, 4.0]))
        Array(24., dtype=float32)
    """
    return _reduction(a, "prod", lax.reduce_prod, lambda d: 1, axis, dtype, keepdims, initial,
                      where, upcast=promote_integers, upcast_f16=True)


@eager_cached
def max(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    """Return the maximum of an array, over all axes or the given ones.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints; None reduces over every axis.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with size 1.
        initial: a lower bound on the result; needed for an empty axis.
        where: a bool array broadcast against ``a``: only its True entries count (needs
            ``initial``).

    Returns:
        The maximum; NaN where a NaN is among the values (see ``nanmax`` to skip them). An
        empty axis without ``initial`` raises ``ValueError``, as in NumPy.

    Example:
        >>> jnp.max(jnp.array([[1, 5], [7, 2]]), axis=1)
        Array([5, 7], dtype=int32)
    """
    _check_nonempty("max", a, axis, initial, where)
    return _reduction(a, "max", lax.reduce_max, _lowest, axis, None, keepdims, initial, where)


@eager_cached
def min(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    """Return the minimum of an array, over all axes or the given ones.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints; None reduces over every axis.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with size 1.
        initial: an upper bound on the result; needed for an empty axis.
        where: a bool array broadcast against ``a``: only its True entries count (needs
            ``initial``).

    Returns:
        The minimum; NaN where a NaN is among the values (see ``nanmin``). An empty axis
        without ``initial`` raises ``ValueError``.

    Example:
        >>> jnp.min(jnp.array([[1, 5], [7, 2]]), axis=0)
        Array([1, 2], dtype=int32)
    """
    _check_nonempty("min", a, axis, initial, where)
    return _reduction(a, "min", lax.reduce_min, _highest, axis, None, keepdims, initial, where)


amax, amin = max, min


def _check_nonempty(name: str, a: Any, axis: Any, initial: Any, where: Any) -> None:
    aval = get_aval(a)
    if where is not None and initial is None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if initial is not None:
        return
    axes = normalize_axes(axis, aval.ndim)
    if builtins.any(aval.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")


@eager_cached
def all(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Test whether all elements are true, over all axes or the given ones.

    Args:
        a: an array or scalar; non-bool values are compared with zero.
        axis: an int or tuple of ints; None reduces over every axis.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with size 1.
        where: a bool array broadcast against ``a``: only its True entries are tested.

    Returns:
        A bool array (True over an empty axis). Under ``jit`` it is traced: use it with
        ``lax.cond`` or ``jnp.where``, not a Python ``if``.

    Example:
        >>> jnp.all(jnp.array([[True, False], [True, True]]), axis=1)
        Array([False,  True], dtype=bool)
    """
    return _reduction(a, "all", lax.reduce_and, lambda d: True, axis, None, keepdims, None,
                      where, bool_op=True)


@eager_cached
def any(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Test whether any element is true, over all axes or the given ones.

    Args:
        a: an array or scalar; non-bool values are compared with zero.
        axis: an int or tuple of ints; None reduces over every axis.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with size 1.
        where: a bool array broadcast against ``a``: only its True entries are tested.

    Returns:
        A bool array (False over an empty axis).

    Example:
        >>> jnp.any(jnp.array([0.0, 0.5]))
        Array(True, dtype=bool)
    """
    return _reduction(a, "any", lax.reduce_or, lambda d: False, axis, None, keepdims, None,
                      where, bool_op=True)


def _count(aval_shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= aval_shape[i]
    return n


def _inexact_computation(a: Any, dtype: Any, upcast_half: bool = True
                         ) -> tuple[Any, np.dtype, np.dtype]:
    """(a cast to the computation dtype, computation dtype, result dtype) for mean/var:
    integers and bools give the default float; float16 computes in float32 when
    `upcast_half`."""
    a = ensure_array(a)
    src = get_aval(a).dtype
    out = dtypes.canonicalize(np.dtype(dtype)) if dtype is not None else (
        src if dtypes.kind(src) in "fc" else dtypes.default_float())
    comp = out if dtypes.kind(out) in "fc" else dtypes.default_float()
    if upcast_half and _is_half(comp):
        comp = np.dtype(np.float32)
    return lax.convert_element_type(a, comp, get_aval(a).weak_type), comp, out


def _count_where(where: Any, shape: tuple[int, ...], axis: Any, dtype: np.dtype,
                 keepdims: bool) -> Any:
    from ember.numpy._manipulation import broadcast_to
    return sum(broadcast_to(where, shape), axis, dtype=dtype, keepdims=keepdims)


@eager_cached
def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         *, where: Any = None) -> Any:
    """Return the arithmetic mean, over all axes or the given ones.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints; None averages over every axis.
        dtype: the computation and result dtype; default ``a``'s float type (integers and
            bools average in the default float: float32 unless x64 is enabled, where NumPy
            uses float64). Without ``dtype`` a float16/bfloat16 ``a`` is summed in float32;
            an explicit half ``dtype`` sums in that dtype, as NumPy and JAX do.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with size 1.
        where: a bool array broadcast against ``a``: only its True entries are averaged.

    Returns:
        ``sum / count``; NaN over an empty axis.

    Example:
        >>> jnp.mean(jnp.array([[1, 2], [3, 5]]), axis=0)
        Array([2. , 3.5], dtype=float32)
    """
    check_arraylike("mean", a)
    a, comp, res = _inexact_computation(a, dtype, upcast_half=dtype is None)
    aval = get_aval(a)
    axes = normalize_axes(axis, aval.ndim)
    # (the count first, then the sum, as JAX stages them)
    if where is None:
        count: Any = lax.convert_element_type(_count(aval.shape, axes), comp)
    else:
        count = _count_where(where, aval.shape, axis, comp, keepdims)
    # (a half computation dtype is an explicit dtype=: summed in it, not upcast by sum)
    total = sum(a, axis, dtype=comp if _is_half(comp) else None, keepdims=keepdims,
                where=where)
    return lax.convert_element_type(lax.div(total, count), res, get_aval(a).weak_type
                                    and dtype is None)


def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """Return the variance, over all axes or the given ones.

    Args:
        a: an array or scalar.
        axis: an int or tuple of ints; None uses every axis.
        dtype: the computation and result dtype (default ``a``'s float type).
        out: not supported (must be None), as in JAX.
        ddof: delta degrees of freedom: the divisor is ``n - ddof`` (1 gives the unbiased
            estimate).
        keepdims: keep the reduced axes with size 1.
        where: a bool array broadcast against ``a``: only its True entries are used.
        correction: the Array API name of ``ddof`` (give one or the other).

    Returns:
        ``sum(abs(a - mean(a)) ** 2) / (n - ddof)``; real for complex input.

    Example:
        >>> jnp.var(jnp.array([1.0, 2.0, 3.0, 4.0]), ddof=1)
        Array(1.6666666, dtype=float32)
    """
    check_arraylike("var", a)
    axis, ddof = _var_args(axis, ddof, correction)
    # (under a trace one jit[name=_var] equation, the correction a traced argument, as JAX)
    return _var(a, axis=axis, dtype=dtype, correction=ddof, keepdims=keepdims, where=where)


def _var_args(axis: Any, ddof: Any, correction: Any) -> tuple[Any, Any]:
    """(axis hashable, the correction) from var/std's arguments."""
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    return (tuple(axis) if isinstance(axis, list) else axis), ddof


@jit_like_jax("_var", static_argnames=("axis", "dtype", "keepdims"))
def _var(a: Any, *, axis: Any, dtype: Any, correction: Any, keepdims: bool,
         where: Any) -> Any:
    # JAX's op order: the centered squares, the divisor n - correction, then the sum; a
    # divisor <= 0 gives NaN (as JAX; NumPy gives inf where the sum is not 0, and warns).
    from ember.numpy._manipulation import where as _where
    from ember.numpy._ufuncs import greater
    a, comp, res = _inexact_computation(a, dtype)
    aval = get_aval(a)
    axes = normalize_axes(axis, aval.ndim)
    centered = lax.sub(a, mean(a, axis, keepdims=True, where=where))
    if dtypes.kind(comp) == "c":
        # |a - mean|^2 = re^2 + im^2: a real variance, in the parts' dtype (as NumPy, JAX)
        sq = lax.add(lax.square(lax.real(centered)), lax.square(lax.imag(centered)))
        comp = get_aval(sq).dtype
        if dtypes.kind(res) == "c":
            res = comp
    else:
        sq = lax.square(centered)
    if where is None:
        n: Any = lax.convert_element_type(_count(aval.shape, axes), comp)
    else:
        n = _count_where(where, aval.shape, axis, comp, keepdims)
    n = lax.sub(n, lax.convert_element_type(correction, comp))
    total = sum(sq, axis, keepdims=keepdims, where=where)
    result = lax.convert_element_type(lax.div(total, n), res)
    return _where(greater(n, 0), result, np.nan)


def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """Compute the standard deviation along the given axes.

    The counterpart of :func:`numpy.std`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        dtype: the result's dtype (by default the promoted inexact dtype of ``a``).
        out: unsupported (JAX arrays are immutable); must be None.
        ddof: delta degrees of freedom: the divisor is ``N - ddof``.
        keepdims: whether to keep the reduced axes with size 1.
        where: a bool mask of the elements to include.
        correction: the Array API's name for ``ddof``.

    Returns:
        ``sqrt(var(a, ...))``; NaN where ``N - ddof <= 0``.

    Example:
        >>> x = jnp.array([[1.0, 2.0], [3.0, 6.0]])
        >>> jnp.std(x)
        Array(1.8708287, dtype=float32)
        >>> jnp.std(x, axis=0, ddof=1)
        Array([1.4142135, 2.828427 ], dtype=float32)
    """
    check_arraylike("std", a)
    axis, ddof = _var_args(axis, ddof, correction)
    if dtype is not None and dtypes.kind(np.dtype(dtype)) not in "fc":
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype)}")
    return _std(a, axis=axis, dtype=dtype, correction=ddof, keepdims=keepdims, where=where)


@jit_like_jax("_std", static_argnames=("axis", "dtype", "keepdims"))
def _std(a: Any, *, axis: Any, dtype: Any, correction: Any, keepdims: bool,
         where: Any) -> Any:
    return lax.sqrt(var(a, axis, dtype, None, correction, keepdims, where=where))


def _arg_reduce(a: Any, axis: Any, keepdims: bool, lax_fn: Callable[..., Any],
                name: str) -> Any:
    check_arraylike(name, a)
    aval = get_aval(a)
    if aval.dtype.kind == "c":  # JAX's argmax/argmin compare with gt/lt, which refuse complex
        op = "gt" if name == "argmax" else "lt"
        raise TypeError(f"{op} does not accept dtype {aval.dtype.name} at position 0. Accepted "
                        "dtypes at position 0 are subtypes of integer, floating, bool.")
    if axis is None:
        from ember.numpy._manipulation import ravel
        a = ravel(a)
        axis = 0
        if aval.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
    ax = normalize_axes(axis, get_aval(a).ndim)[0]
    out = lax_fn(a, ax, dtypes.default_int())
    if keepdims:
        if aval.ndim == get_aval(a).ndim:
            out = _keepdims(out, aval.shape, (ax,))
        else:
            out = lax.broadcast_in_dim(out, (1,) * aval.ndim, ())
    return out


def argmax(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Return the index of the maximum value along an axis.

    Args:
        a: an array or scalar.
        axis: an int; None takes the index into the flattened array.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axis with size 1.

    Returns:
        int32 indices (int64 with x64) of the first maximum; a NaN counts as the maximum,
        as in NumPy. An empty axis raises ``ValueError``.

    Example:
        >>> jnp.argmax(jnp.array([[1, 9, 3], [8, 2, 8]]), axis=1)
        Array([1, 0], dtype=int32)
    """
    return _arg_reduce(a, axis, keepdims, lax.argmax, "argmax")


def argmin(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Return the index of the minimum value along an axis.

    Args:
        a: an array or scalar.
        axis: an int; None takes the index into the flattened array.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axis with size 1.

    Returns:
        int32 indices (int64 with x64) of the first minimum; a NaN counts as the minimum,
        as in NumPy. An empty axis raises ``ValueError``.

    Example:
        >>> jnp.argmin(jnp.array([4.0, 1.0, 1.0]))
        Array(1, dtype=int32)
    """
    return _arg_reduce(a, axis, keepdims, lax.argmin, "argmin")


def _nan_arg_extreme(a: Any, axis: Any, keepdims: bool, pick: Callable[..., Any],
                     nan_as: float) -> Any:
    """pick (argmax or argmin) with NaN entries read as `nan_as` (-inf for argmax, inf for
    argmin, so they never win), and -1 where a slice is all NaN, as JAX gives."""
    from ember.numpy._manipulation import where as _where
    from ember.numpy._ufuncs import isnan
    a = ensure_array(a)
    if dtypes.kind(get_aval(a).dtype) != "f":
        return pick(a, axis, keepdims=keepdims)
    nan = isnan(a)
    found = pick(_where(nan, nan_as, a), axis, keepdims=keepdims)
    return _where(all(nan, axis, keepdims=keepdims), -1, found)


def nanargmax(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Return the index of the largest value along an axis, ignoring NaNs.

    Args:
        a: an array.
        axis: the axis to search; None (the default) searches the flattened array.
        out: not supported (must be None), as in JAX.
        keepdims: keep the searched axis with length 1.

    Returns:
        Integer indices. Unlike NumPy, which raises, a slice of only NaNs gives -1.

    Example:
        >>> jnp.nanargmax(jnp.array([2.0, jnp.nan, 5.0, 1.0]))
        Array(2, dtype=int32)
    """
    return _nanargmax(ensure_array(a), axis=None if axis is None else operator.index(axis),
                      keepdims=bool(keepdims))


@jit_like_jax("_nanargmax", static_argnames=("axis", "keepdims"))
def _nanargmax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _nan_arg_extreme(a, axis, keepdims, argmax, -np.inf)


@jit_like_jax("_nanargmin", static_argnames=("axis", "keepdims"))
def _nanargmin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _nan_arg_extreme(a, axis, keepdims, argmin, np.inf)


def nanargmin(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Return the index of the smallest value along an axis, ignoring NaNs.

    Args:
        a: an array.
        axis: the axis to search; None (the default) searches the flattened array.
        out: not supported (must be None), as in JAX.
        keepdims: keep the searched axis with length 1.

    Returns:
        Integer indices. Unlike NumPy, which raises, a slice of only NaNs gives -1.

    Example:
        >>> jnp.nanargmin(jnp.array([[jnp.nan, 1.0], [jnp.nan, jnp.nan]]), axis=1)
        Array([ 1, -1], dtype=int32)
    """
    return _nanargmin(ensure_array(a), axis=None if axis is None else operator.index(axis),
                      keepdims=bool(keepdims))


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """Return the range (maximum minus minimum) of the values along the given axes.

    The counterpart of :func:`numpy.ptp` ("peak to peak").

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        out: unsupported; must be None.
        keepdims: whether to keep the reduced axes with size 1.

    Returns:
        ``max(a, axis) - min(a, axis)``; for integers the difference wraps around like any
        integer subtraction.

    Example:
        >>> x = jnp.array([[4, 9, 2], [3, 5, 7]])
        >>> jnp.ptp(x)
        Array(7, dtype=int32)
        >>> jnp.ptp(x, axis=0)
        Array([1, 4, 5], dtype=int32)
    """
    if isinstance(axis, list):  # a static argument of the nested jit must be hashable
        axis = tuple(axis)
    check_arraylike("ptp", a)
    return _ptp(ensure_array(a), axis, out, keepdims)


@jit_like_jax("_ptp", static_argnames=("axis", "keepdims"))
def _ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Compute the weighted mean along the given axes.

    The counterpart of :func:`numpy.average`; without weights it is :func:`mean`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        weights: weights shaped like ``a``, or a 1-D array as long as ``a``'s single
            reduced ``axis``.
        returned: also return the sum of the weights.
        keepdims: whether to keep the reduced axes with size 1.

    Returns:
        ``sum(a * weights) / sum(weights)``, in ``a``'s inexact dtype; with ``returned``,
        the pair ``(average, sum_of_weights)``, the sum broadcast to the average's shape.

    Example:
        >>> x = jnp.array([[1.0, 2.0], [3.0, 4.0]])
        >>> jnp.average(x, axis=1, weights=jnp.array([3.0, 1.0]))
        Array([1.25, 3.25], dtype=float32)
        >>> jnp.average(x, weights=x, returned=True)
        (Array(3., dtype=float32), Array(10., dtype=float32))
    """
    from ember.numpy._manipulation import broadcast_to
    check_arraylike("average", a)
    a = ensure_array(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        aval = get_aval(a)
        n = _count(aval.shape, normalize_axes(axis, aval.ndim))
        return avg, lax.broadcast_in_dim(lax.convert_element_type(n, get_aval(avg).dtype),
                                         get_aval(avg).shape, ())
    a, w = promote_dtypes_inexact(a, ensure_array(weights))
    a_shape, w_shape = get_aval(a).shape, get_aval(w).shape
    if a_shape != w_shape:
        if axis is None:
            raise ValueError("Axis must be specified when shapes of a and weights differ.")
        ax = normalize_axes(axis, len(a_shape), keep_order=True)
        if w_shape != tuple(a_shape[d] for d in ax):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        # weights laid along their axes with unit axes elsewhere (a reshape, as JAX's;
        # its axes first put in increasing order of the axes of a they lie along)
        new_shape = tuple(s if i in ax else 1 for i, s in enumerate(a_shape))
        w = lax.reshape(w, new_shape, tuple(int(i) for i in np.argsort(ax)))
    weights_sum = sum(w, axis, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(a, w), axis, keepdims=keepdims), weights_sum)
    if returned:
        return avg, broadcast_to(weights_sum, get_aval(avg).shape)
    return avg


def _nan_fill(a: Any, value: Any) -> Any:
    from ember.numpy._manipulation import where as _where
    from ember.numpy._ufuncs import isnan
    a = ensure_array(a)
    if dtypes.kind(get_aval(a).dtype) not in "fc":  # (a complex NaN is one with a NaN part)
        return a
    return _where(isnan(a), lax.convert_element_type(value, get_aval(a).dtype), a)


@jit_like_jax("nansum", static_argnames=("axis", "dtype", "keepdims"))
def nansum(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Sum the elements along the given axes, ignoring NaNs (counted as 0).

    The counterpart of :func:`numpy.nansum`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        dtype: the accumulation and result dtype.
        out: unsupported; must be None.
        keepdims: whether to keep the reduced axes with size 1.
        initial: a starting value added to the sum.
        where: a bool mask of the elements to include.

    Returns:
        The sum of the non-NaN elements (0 where all are NaN).

    Example:
        >>> x = jnp.array([[1.0, jnp.nan], [jnp.nan, jnp.nan]])
        >>> jnp.nansum(x)
        Array(1., dtype=float32)
        >>> jnp.nansum(x, axis=1)
        Array([1., 0.], dtype=float32)
    """
    return sum(_nan_fill(a, 0), axis, dtype, keepdims=keepdims, initial=initial, where=where)


@jit_like_jax("nanprod", static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Multiply the elements along the given axes, ignoring NaNs (counted as 1).

    The counterpart of :func:`numpy.nanprod`.

    Args:
        a: the array.
        axis: an int, a tuple of ints, or None for all axes.
        dtype: the accumulation and result dtype.
        out: unsupported; must be None.
        keepdims: whether to keep the reduced axes with size 1.
        initial: a starting value multiplied into the product.
        where: a bool mask of the elements to include.

    Returns:
        The product of the non-NaN elements (1 where all are NaN).

    Example:
        >>> jnp.nanprod(jnp.array([[2.0, jnp.nan], [jnp.nan, jnp.nan]]), axis=1)
        Array([2., 1.], dtype=float32)
    """
    return prod(_nan_fill(a, 1), axis, dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extreme(a: Any, axis: Any, keepdims: bool, initial: Any, where: Any,
                 fill: float, fn: Callable[..., Any]) -> Any:
    from ember.numpy._manipulation import where as _where
    from ember.numpy._ufuncs import isnan
    a = ensure_array(a)
    out = fn(_nan_fill(a, fill), axis, keepdims=keepdims, initial=initial, where=where)
    if dtypes.kind(get_aval(a).dtype) != "f" or initial is not None:
        return out  # (with an initial value, an all-NaN slice gives it, as in JAX)
    # All-NaN slices give NaN, as NumPy (which also warns).
    nan_mask = isnan(a) if where is None else lax.bitwise_and(*_bcast_bool(isnan(a), where))
    all_nan = all(nan_mask if where is None else
                  lax.bitwise_or(nan_mask, lax.bitwise_not(_bcast_bool(where, a)[0])),
                  axis, keepdims=keepdims)
    # (NaN as a strongly typed constant of out's dtype, as JAX passes it)
    return _where(all_nan, lax.convert_element_type(np.nan, get_aval(out).dtype), out)


def _bcast_bool(x: Any, other: Any) -> tuple[Any, Any]:
    from ember.numpy._manipulation import broadcast_arrays
    x = ensure_array(x)
    if dtypes.kind(get_aval(x).dtype) != "b":
        x = lax.ne(x, lax.convert_element_type(0, get_aval(x).dtype))
    o = ensure_array(other)
    if dtypes.kind(get_aval(o).dtype) != "b":
        o = lax.ne(o, lax.convert_element_type(0, get_aval(o).dtype))
    bx, bo = broadcast_arrays(x, o)
    return bx, bo


@jit_like_jax("nanmax", static_argnames=("axis", "keepdims"))
def nanmax(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Return the maximum along the given axes, ignoring NaNs.

    Args:
        a: an array.
        axis: the axis or tuple of axes to reduce; None (the default) reduces them all.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with length 1.
        initial: a value the maximum is taken with, as in ``jnp.max``.
        where: a bool mask of the elements to include.

    Returns:
        The maximum of the non-NaN elements; NaN where a slice holds only NaNs and no
        ``initial`` is given (there NumPy also warns), ``initial`` where one is.

    Example:
        >>> jnp.nanmax(jnp.array([[1.0, jnp.nan, 3.0], [jnp.nan, jnp.nan, jnp.nan]]), axis=1)
        Array([ 3., nan], dtype=float32)
    """
    return _nan_extreme(a, axis, keepdims, initial, where, -np.inf, max)


@jit_like_jax("nanmin", static_argnames=("axis", "keepdims"))
def nanmin(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Return the minimum along the given axes, ignoring NaNs.

    Args:
        a: an array.
        axis: the axis or tuple of axes to reduce; None (the default) reduces them all.
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with length 1.
        initial: a value the minimum is taken with, as in ``jnp.min``.
        where: a bool mask of the elements to include.

    Returns:
        The minimum of the non-NaN elements; NaN where a slice holds only NaNs and no
        ``initial`` is given (there NumPy also warns), ``initial`` where one is.

    Example:
        >>> jnp.nanmin(jnp.array([[1.0, jnp.nan, 3.0], [jnp.nan, jnp.nan, jnp.nan]]), axis=1)
        Array([ 1., nan], dtype=float32)
    """
    return _nan_extreme(a, axis, keepdims, initial, where, np.inf, min)


@jit_like_jax("nanmean", static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, where: Any = None) -> Any:
    """Return the mean along the given axes, ignoring NaNs.

    Args:
        a: an array; integers and bools promote to the default float type.
        axis: the axis or tuple of axes to reduce; None (the default) reduces them all.
        dtype: the dtype to accumulate and return in (default: the promoted dtype).
        out: not supported (must be None), as in JAX.
        keepdims: keep the reduced axes with length 1.
        where: a bool mask of the elements to include.

    Returns:
        The sum of the non-NaN elements divided by their count; NaN where a slice holds
        only NaNs.

    Example:
        >>> jnp.nanmean(jnp.array([[1.0, jnp.nan, 3.0], [jnp.nan, jnp.nan, jnp.nan]]), axis=1)
        Array([ 2., nan], dtype=float32)
    """
    from ember.numpy._ufuncs import isnan
    a = ensure_array(a)
    if dtypes.kind(get_aval(a).dtype) not in "fc":
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    # nansum / (the number of non-NaN entries), both in the result dtype: JAX's formulation,
    # traced in its order so the nested jit prints alike.
    if dtype is None:
        dtype = get_aval(a).dtype
    # (JAX's sum of a bool mask with a float dtype goes through the default int first.)
    not_nan = lax.convert_element_type(lax.bitwise_not(isnan(a)), dtypes.default_int())
    count = sum(not_nan, axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), count)


# quantile, percentile and median live in _quantile.py (exported from here).
from ember.numpy._quantile import median, percentile, quantile  # noqa: E402, F401
