"""ember.numpy.linalg: norms (norm, vector_norm, matrix_norm), the Array API's linalg
aliases of products (matmul, vecdot, outer, tensordot, trace, diagonal, matrix_transpose),
and the decompositions and solvers of `_linalg_lapack.py` and `_linalg_svd.py` (solve,
inv, cholesky, qr, eigh, eigvalsh, eig, eigvals, svd, svdvals, det, slogdet, lstsq, pinv,
matrix_rank, matrix_power, cond, multi_dot, tensorsolve, tensorinv, cross; float32,
float64, complex64, complex128).

Input: array-likes; integer inputs are promoted to the default float, as jnp does.
Output: ember arrays/tracers. Vector norms: ord None/2 -> sqrt(sum(x*x)), 1 -> sum|x|,
inf -> max|x|, -inf -> min|x|, 0 -> count of non-zeros, other p -> (sum|x|^p)^(1/p).
Matrix norms over two axes: 'fro' (and None) -> sqrt(sum(x*x)), 1/-1 -> max/min column sum
of |x|, inf/-inf -> max/min row sum, 2/-2/'nuc' -> the largest, smallest and summed singular values
(the svd primitive, so under jit too).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember import lax
from ember.core.trace import get_aval as _get_aval
from ember.numpy import _linalg, _manipulation
from ember.numpy import _linalg_svd as _svd_based
from ember.numpy._jit_wrap import jit_like_jax as _jit_like_jax
from ember.numpy._linalg_lapack import *  # noqa: F403
from ember.numpy._linalg_lapack import __all__ as _lapack_all
from ember.numpy._linalg_svd import *  # noqa: F403
from ember.numpy._linalg_svd import __all__ as _svd_all
from ember.numpy._promote import check_arraylike as _check_arraylike
from ember.numpy._promote import promote_dtypes_inexact as _promote_dtypes_inexact

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "vecdot", "outer", "tensordot",
           "trace", "diagonal", "matrix_transpose", *_lapack_all, *_svd_all]


def _reductions() -> Any:
    from ember.numpy import _reductions as r
    return r


def _abs(x: Any) -> Any:
    return lax.abs(x)


def _sum_sq(x: Any, axis: Any, keepdims: bool) -> Any:
    """sqrt(sum(real(x * conj(x)))): the 2-norm (conj and real stage nothing for reals)."""
    import ember.numpy as jnp
    return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))


def _vector_norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """The vector norm over `axis` (None: all axes), staged as JAX stages it."""
    import ember.numpy as jnp
    if ord is None or ord == 2:
        return _sum_sq(x, axis, keepdims)
    if ord == np.inf:
        # (initial=0: an empty vector's norm is 0, as in JAX)
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        real = np.finfo(_get_aval(x).dtype).dtype
        return jnp.sum(x != 0, dtype=real, axis=axis, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    abs_x = jnp.abs(x)
    dt = _get_aval(abs_x).dtype
    p = np.asarray(ord, dt)
    total = jnp.sum(abs_x ** p, axis=axis, keepdims=keepdims)
    return jnp.power(total, np.asarray(1.0 / p, dt))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    """The matrix norm over the (row, col) axes, staged as JAX stages it."""
    import ember.numpy as jnp
    row, col = axes
    if ord is None or ord in ("f", "fro"):
        return _sum_sq(x, axes, keepdims)
    if ord in (1, -1):
        # the largest (smallest) column sum: sum over the rows, then over the columns
        if not keepdims and col > row:
            col -= 1
        sums = jnp.sum(jnp.abs(x), axis=row, keepdims=keepdims)
        return (jnp.max(sums, axis=col, keepdims=keepdims, initial=0) if ord == 1 else
                jnp.min(sums, axis=col, keepdims=keepdims))
    if ord in (np.inf, -np.inf):
        # the largest (smallest) row sum
        if not keepdims and row > col:
            row -= 1
        sums = jnp.sum(jnp.abs(x), axis=col, keepdims=keepdims)
        return (jnp.max(sums, axis=row, keepdims=keepdims, initial=0) if ord == np.inf else
                jnp.min(sums, axis=row, keepdims=keepdims))
    if ord in (2, -2, "nuc"):
        return _svd_based.singular_value_norm(x, ord, axes, keepdims)
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def _norm_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"Duplicate axes given: {axis}")
    return tuple(out)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Compute a vector or matrix norm.

    Args:
        x: an array; integers promote to the default float type.
        ord: the norm's order. Over one axis (a vector norm): None or 2 (Euclidean), inf,
            -inf, 0 (the count of nonzeros), 1, or any other number p
            (``sum(|x|**p)**(1/p)``). Over two axes (a matrix norm): None or ``'fro'``
            (Frobenius), ``'nuc'`` (nuclear), 1, -1, inf, -inf (maximum/minimum absolute
            column or row sum), 2, -2 (largest/smallest singular value).
        axis: an int (vector norm), a pair of ints (matrix norm), or None: with ``ord=None``
            the 2-norm of the flattened array, otherwise the vector or matrix norm of a 1-d
            or 2-d ``x``.
        keepdims: keep the reduced axes with length 1.

    Returns:
        The norm, real (the magnitude for complex ``x``), in ``x``'s inexact dtype.

    Example:
        >>> x = jnp.array([[1.0, 2.0], [3.0, 4.0]])
        >>> jnp.linalg.norm(jnp.array([3.0, 4.0]))
        Array(5., dtype=float32)
        >>> jnp.linalg.norm(x, ord=1)
        Array(6., dtype=float32)
        >>> jnp.linalg.norm(x, axis=1)
        Array([2.236068, 5.      ], dtype=float32)
    """
    _check_arraylike("norm", x)
    if isinstance(axis, list):
        axis = tuple(axis)  # (a static argument of jit[norm]: hashable)
    return _norm(x, ord=ord, axis=axis, keepdims=keepdims)


@_jit_like_jax("norm", static_argnames=("ord", "axis", "keepdims"))
def _norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    (x,) = _promote_dtypes_inexact(x)
    ndim = _get_aval(x).ndim
    if axis is None:
        if ord is None:
            # (any rank, as NumPy allows: the 2-norm over every axis)
            return _sum_sq(x, None, keepdims)
        if ndim not in (1, 2):
            raise ValueError("Improper number of axes for norm: pass axis= for arrays of "
                             "rank other than 1 or 2 when ord is given.")
        axes: tuple[int, ...] = tuple(range(ndim))
    else:
        axes = _norm_axes(axis, ndim)
    if len(axes) == 1:
        return _vector_norm(x, 2 if ord is None else ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, (axes[0], axes[1]), keepdims)
    raise ValueError(f"Improper number of axes for norm: {axis}")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """Compute vector norms (the Array API's form).

    The counterpart of :func:`numpy.linalg.vector_norm`: unlike :func:`norm`, it is always a
    vector norm, over all axes of ``x`` (as if flattened) by default.

    Args:
        x: an array.
        axis: None (default: all axes), an int or a tuple of ints.
        keepdims: keep the reduced axes with length 1.
        ord: 2 (default), inf, -inf, 0 (the count of nonzeros), 1, or any other number p
            (``sum(|x|**p)**(1/p)``).

    Returns:
        The norm, real, in ``x``'s inexact dtype.

    Example:
        >>> x = jnp.array([[3.0, -4.0], [0.0, 0.0]])
        >>> jnp.linalg.vector_norm(x)
        Array(5., dtype=float32)
        >>> jnp.linalg.vector_norm(x, ord=1, axis=1)
        Array([7., 0.], dtype=float32)
    """
    _check_arraylike("vector_norm", x)
    (x,) = _promote_dtypes_inexact(x)
    ndim = _get_aval(x).ndim
    return _vector_norm(x, ord, None if axis is None else _norm_axes(axis, ndim), keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """Compute matrix norms over the last two axes (the Array API's form).

    The counterpart of :func:`numpy.linalg.matrix_norm`.

    Args:
        x: an array of at least two dimensions (a stack of matrices).
        keepdims: keep the two reduced axes with length 1.
        ord: ``"fro"`` (default, Frobenius), ``"nuc"`` (nuclear), 1, -1, inf, -inf
            (maximum or minimum absolute column or row sum), 2, -2 (largest or smallest
            singular value).

    Returns:
        One norm per matrix, real, in ``x``'s inexact dtype.

    Example:
        >>> x = jnp.array([[1.0, -2.0], [3.0, 4.0]])
        >>> jnp.linalg.matrix_norm(x, ord=1)
        Array(6., dtype=float32)
        >>> jnp.linalg.matrix_norm(x, ord=jnp.inf)
        Array(7., dtype=float32)
    """
    _check_arraylike("matrix_norm", x)
    (x,) = _promote_dtypes_inexact(x)
    ndim = _get_aval(x).ndim
    if ndim < 2:
        raise ValueError(f"matrix_norm requires an array of rank >= 2, got rank {ndim}")
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Compute the matrix product of two arrays.

    The counterpart of :func:`numpy.linalg.matmul` (the Array API's place for it): the same
    function as :func:`ember.numpy.matmul`, with positional-only arrays.

    Args:
        x1, x2: arrays of at least one dimension; their batch dimensions broadcast.
        precision: the product's precision, as for ``lax.dot_general``.
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``x1 @ x2``.

    Example:
        >>> jnp.linalg.matmul(jnp.array([[1, 2], [3, 4]]), jnp.array([1, -1]))
        Array([-1, -1], dtype=int32)
    """
    return _linalg.matmul(x1, x2, precision=precision,
                          preferred_element_type=preferred_element_type)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Compute the dot products of vectors along an axis.

    The counterpart of :func:`numpy.linalg.vecdot` (the Array API's place for it): the same
    function as :func:`ember.numpy.vecdot`; the first argument is conjugated.

    Args:
        x1, x2: arrays that broadcast together.
        axis: the axis holding the vectors (default the last).
        precision: the product's precision, as for ``lax.dot_general``.
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``sum(conj(x1) * x2, axis)``.

    Example:
        >>> jnp.linalg.vecdot(jnp.array([[1, 2], [3, 4]]), jnp.array([1, 1]))
        Array([3, 7], dtype=int32)
    """
    return _linalg.vecdot(x1, x2, axis=axis, precision=precision,
                          preferred_element_type=preferred_element_type)


def outer(x1: Any, x2: Any, /) -> Any:
    """Compute the outer product of two vectors.

    The counterpart of :func:`numpy.linalg.outer`: unlike :func:`ember.numpy.outer`, which
    flattens its inputs, both arguments must be 1-D.

    Args:
        x1: a 1-D array of length m.
        x2: a 1-D array of length n.

    Returns:
        The ``(m, n)`` array ``x1[:, None] * x2[None, :]``.

    Example:
        >>> jnp.linalg.outer(jnp.array([1, 2]), jnp.array([1, 10, 100]))
        Array([[  1,  10, 100],
               [  2,  20, 200]], dtype=int32)
    """
    if _get_aval(x1).ndim != 1 or _get_aval(x2).ndim != 1:
        raise ValueError("linalg.outer requires 1-D arguments, got shapes "
                         f"{_get_aval(x1).shape} and {_get_aval(x2).shape}")
    return _linalg.outer(x1, x2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Compute the tensor dot product of two arrays over the given axes.

    The counterpart of :func:`numpy.linalg.tensordot` (the Array API's place for it): the
    same function as :func:`ember.numpy.tensordot`, with ``axes`` keyword-only.

    Args:
        x1, x2: the arrays.
        axes: an int n (default 2: the last n axes of ``x1`` with the first n of ``x2``) or
            a pair of axis sequences.
        precision: the product's precision, as for ``lax.dot_general``.
        preferred_element_type: the accumulation and result dtype.

    Returns:
        The contraction: ``x1``'s free axes followed by ``x2``'s.

    Example:
        >>> a = jnp.arange(6.0).reshape(2, 3)
        >>> jnp.linalg.tensordot(a, jnp.ones((3, 2)), axes=1)
        Array([[ 3.,  3.],
               [12., 12.]], dtype=float32)
    """
    return _linalg.tensordot(x1, x2, axes, precision=precision,
                             preferred_element_type=preferred_element_type)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Return the sum along a diagonal of the last two axes (the Array API's form of
    ``jnp.trace``).

    Args:
        x: an array with at least two dimensions (a stack of matrices).
        offset: which diagonal: 0 the main one, > 0 above it, < 0 below it.
        dtype: the accumulation and result dtype (default: ``sum``'s rule).

    Returns:
        An array of ``x.ndim - 2`` dimensions: one sum per matrix. Unlike ``jnp.trace``,
        whose default axes are the first two, the matrices are in the last two axes.

    Example:
        >>> jnp.linalg.trace(jnp.arange(8.0).reshape(2, 2, 2))
        Array([ 3., 11.], dtype=float32)
        >>> jnp.linalg.trace(jnp.arange(9.0).reshape(3, 3), offset=1)
        Array(6., dtype=float32)
    """
    return _manipulation.trace(x, offset, -2, -1, dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """Return a diagonal of the last two axes (the Array API's form of ``jnp.diagonal``).

    The counterpart of :func:`numpy.linalg.diagonal`: unlike :func:`ember.numpy.diagonal`,
    whose default axes are the first two, it reads each matrix in the last two axes.

    Args:
        x: an array of at least two dimensions.
        offset: which diagonal: 0 the main one, > 0 above it, < 0 below it.

    Returns:
        An array of ``x.ndim - 1`` dimensions: the diagonal of each matrix.

    Example:
        >>> x = jnp.arange(8).reshape(2, 2, 2)
        >>> jnp.linalg.diagonal(x)
        Array([[0, 3],
               [4, 7]], dtype=int32)
        >>> jnp.linalg.diagonal(jnp.arange(9).reshape(3, 3), offset=1)
        Array([1, 5], dtype=int32)
    """
    return _manipulation.diagonal(x, offset, -2, -1)


def matrix_transpose(x: Any, /) -> Any:
    """Transpose the last two axes of an array.

    The counterpart of :func:`numpy.linalg.matrix_transpose` (the same function as
    :func:`ember.numpy.matrix_transpose`).

    Args:
        x: an array of at least two dimensions.

    Returns:
        ``x`` with its last two axes swapped (no conjugation).

    Example:
        >>> jnp.linalg.matrix_transpose(jnp.arange(6).reshape(1, 2, 3)).shape
        (1, 3, 2)
    """
    from ember.numpy._manipulation import matrix_transpose as _mt
    return _mt(x)

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
