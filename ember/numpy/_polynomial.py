"""Polynomials as coefficient arrays (highest power first) for ember.numpy: polyval,
polyfit, poly, roots, polyadd, polysub, polymul, polydiv, polyder, polyint, and trim_zeros.

Input: 1-D coefficient array-likes (polyval also takes p of shape (n, ...) for several
polynomials at once); orders (`deg`, `m`) are static ints. Output: ember arrays.
Invariants: polyval is Horner's rule (y <- y x + p[i]) in a scan, written out when `unroll`
covers p's length; polyfit solves the
column-scaled Vandermonde least-squares problem with a Householder QR written here
(numerically as good as the SVD for full-rank problems); roots are the eigenvalues of the
companion matrix and poly of a square matrix is the polynomial of its eigenvalues (both
complex, as in JAX: jnp.linalg.eigvals, LAPACK's geev).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["polyval", "polyfit", "poly", "roots", "polyadd", "polysub", "polymul",
           "polydiv", "polyder", "polyint", "trim_zeros"]

def _static_order(m: Any, what: str) -> int:
    if isinstance(m, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {m}\n"
            f"{what}")
    return operator.index(m)


@jit_like_jax("polyval", static_argnames=("unroll",))
def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """Evaluate a polynomial at given points.

    Args:
        p: the coefficients, highest power first; a 2-d ``p`` holds one polynomial per
            column (evaluated against the matching ``x``).
        x: the points, broadcast against ``p.shape[1:]``.
        unroll: how many Horner steps the scan performs per iteration (static).

    Returns:
        ``p[0] x**(n-1) + ... + p[n-1]`` by Horner's rule, in the promoted dtype of ``p``
        and ``x``.

    Example:
        >>> jnp.polyval(jnp.array([1.0, 0.0, -2.0]), jnp.array([0.0, 1.0, 2.0]))
        Array([-2., -1.,  2.], dtype=float32)
    """
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(jnp.asarray(p), jnp.asarray(x))
    shape = jnp.broadcast_shapes(p.shape[1:], x.shape)
    y = lax.full_like(x, 0, shape=shape)
    # (a scan unrolled `unroll` steps at a time, as JAX stages it)
    y, _ = lax.scan(lambda y, c: (y * x + c, None), y, p, unroll=unroll)
    return y


def _householder_lstsq(a: Any, b: Any) -> tuple[Any, Any, Any]:
    """min ||a c - b|| for a (n, k) with n >= k of full column rank, b (n,) or (n, r):
    returns (c, the sum of squared residuals, R of a = QR). Column j: the reflector
    H = I - 2 v v^T with v ~ x - alpha e1, alpha = -sign(x0) ||x||, zeroes a[j+1:, j]."""
    n, k = a.shape
    vec = b.ndim == 1
    bm = b[:, None] if vec else b
    for j in builtins.range(k):
        x = a[j:, j]
        norm = jnp.sqrt(jnp.sum(x * x))
        alpha = -jnp.where(x[0] >= 0, 1.0, -1.0).astype(a.dtype) * norm
        v = x.at[0].add(-alpha)
        vnorm = jnp.sqrt(jnp.sum(v * v))
        v = jnp.where(vnorm > 0, v / jnp.where(vnorm > 0, vnorm, 1), 0)
        a = a.at[j:, :].add(-2 * v[:, None] * (v @ a[j:, :])[None, :])
        bm = bm.at[j:, :].add(-2 * v[:, None] * (v @ bm[j:, :])[None, :])
    r = jnp.triu(a[:k, :])
    # Back substitution: c[i] = (qb[i] - sum_{l > i} r[i, l] c[l]) / r[i, i].
    qb = bm[:k]
    rows = [None] * k
    for i in builtins.range(k - 1, -1, -1):
        acc = qb[i]
        for l_ in builtins.range(i + 1, k):
            acc = acc - r[i, l_] * rows[l_]
        rows[i] = acc / r[i, i]
    c = jnp.stack(rows) if k else jnp.zeros((0, bm.shape[1]), a.dtype)
    resid = jnp.sum(bm[k:] ** 2, axis=0)
    return (c[:, 0] if vec else c), (resid[0] if vec else resid), r


def _upper_inverse(r: Any) -> Any:
    """R^-1 of an upper-triangular k x k R, column by column by back substitution."""
    k = r.shape[0]
    eye = jnp.eye(k, dtype=r.dtype)
    rows = [None] * k
    for i in builtins.range(k - 1, -1, -1):
        acc = eye[i]
        for l_ in builtins.range(i + 1, k):
            acc = acc - r[i, l_] * rows[l_]
        rows[i] = acc / r[i, i]
    return jnp.stack(rows)


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: Any = False) -> Any:
    """Fit a polynomial to points by least squares.

    The counterpart of :func:`numpy.polyfit`, solved by a Householder QR of the
    column-scaled Vandermonde matrix. ``full=True`` and fewer points than coefficients are
    not supported yet (``NotImplementedError``).

    Args:
        x: the sample points, 1-D.
        y: the values at ``x``: 1-D, or 2-D with one column per data set.
        deg: the degree of the polynomial (static).
        rcond: accepted for NumPy compatibility; the QR solve does not use it.
        full: only False is supported.
        w: optional weights, one per point, multiplying the residuals.
        cov: True also returns the covariance of the coefficients, scaled by the residual
            sum of squares over ``len(x) - deg - 1``; ``"unscaled"`` leaves that factor out.

    Returns:
        The ``deg + 1`` coefficients, highest power first (one column per data set for a
        2-D ``y``); with ``cov``, the pair ``(coefficients, covariance)``.

    Example:
        >>> x = jnp.array([0.0, 1.0, 2.0, 3.0])
        >>> jnp.polyfit(x, 2 * x * x - 1, 2).round(4) + 0.0  # + 0.0: no -0.
        Array([ 2.,  0., -1.], dtype=float32)
        >>> jnp.polyfit(x, jnp.stack([x, -x], axis=1), 1).round(4) + 0.0
        Array([[ 1., -1.],
               [ 0.,  0.]], dtype=float32)
    """
    if w is None:
        check_arraylike("polyfit", x, y)
    else:
        check_arraylike("polyfit", x, y, w)
    x, y = jnp.asarray(x), jnp.asarray(y)
    deg = _static_order(deg, "deg must be int")
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if full:
        raise NotImplementedError("polyfit(full=True) (residuals, rank, singular values) "
                                  "is not implemented yet.")
    if x.shape[0] < order:
        raise NotImplementedError("polyfit with fewer points than coefficients (the "
                                  "minimum-norm least-squares solution) is not implemented "
                                  "yet.")
    x, y = promote_dtypes_inexact(x, y)
    lhs = jnp.vander(x, order)
    rhs = y
    if w is not None:
        (w,) = promote_dtypes_inexact(jnp.asarray(w))
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    # Scaling each column to unit norm keeps the Vandermonde problem well conditioned.
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, r = _householder_lstsq(lhs, rhs)
    c = (c.T / scale).T if c.ndim > 1 else c / scale
    if not cov:
        return c
    rinv = _upper_inverse(r)
    vbase = (rinv @ rinv.T) / jnp.outer(scale, scale)  # (lhs^T lhs)^-1, unscaled columns
    if cov == "unscaled":
        fac = jnp.array(1.0, vbase.dtype)
    else:
        if x.shape[0] <= order:
            raise ValueError("the number of data points must exceed order"
                             " to scale the covariance matrix")
        fac = resids / (x.shape[0] - order)
    if y.ndim == 1:
        return c, vbase * jnp.atleast_1d(fac)[None]
    return c, vbase[:, :, None] * jnp.atleast_1d(fac)[None, None, :]


def poly(seq_of_zeros: Any) -> Any:
    """Return the coefficients of the monic polynomial with given roots.

    Args:
        seq_of_zeros: a 1-d array of roots (a square matrix, whose characteristic polynomial
            NumPy computes, needs complex eigenvalues: not available yet).

    Returns:
        The coefficients of ``prod_k (x - z_k)``, highest power first (``[1.]`` for no
        roots).

    Example:
        >>> jnp.poly(jnp.array([1.0, 2.0]))
        Array([ 1., -3.,  2.], dtype=float32)
    """
    check_arraylike("poly", seq_of_zeros)
    (z,) = promote_dtypes_inexact(jnp.asarray(seq_of_zeros))
    z = jnp.atleast_1d(z)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        z = jnp.linalg.eigvals(z)  # the characteristic polynomial (complex, as in JAX)
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return jnp.ones((), dtype=z.dtype)
    a = jnp.ones((1,), dtype=z.dtype)
    for k in builtins.range(z.shape[0]):
        # Multiplying by (x - z_k) shifts the coefficients up one power and subtracts z_k a.
        a = jnp.concatenate([a, jnp.zeros((1,), z.dtype)]) - \
            jnp.concatenate([jnp.zeros((1,), z.dtype), a * z[k]])
    return a


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """Return the roots of a polynomial given its coefficients (highest power first).

    Args:
        p: a rank-1 array of coefficients.
        strip_zeros: drop leading zero coefficients first, as NumPy does (needs concrete
            ``p``: under ``jit`` pass ``strip_zeros=False``, which keeps the length and
            gives NaN for the roots a leading zero removes).

    Returns:
        The roots, a complex array (whatever the roots' values, as in JAX): the
        eigenvalues of the companion matrix, in LAPACK's order.

    Example:
        >>> jnp.roots(jnp.array([1.0, -3.0, 2.0]))
        Array([2.+0.j, 1.+0.j], dtype=complex64)
    """
    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(jnp.asarray(p))
    p = jnp.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    cdtype = np.result_type(p.dtype, np.complex64)
    if p.shape[0] < 2:
        return jnp.zeros((0,), cdtype)
    nonzero = p != 0
    leading = jnp.where(jnp.all(~nonzero), p.shape[0], jnp.argmax(nonzero))
    if strip_zeros:
        if isinstance(leading, Tracer):
            raise ConcretizationTypeError(
                "The error occurred in the jnp.roots() function. To use this within a "
                "JIT-compiled context, pass strip_zeros=False, but be aware that leading "
                "zeros will result in some returned roots being set to NaN.")
        return _companion_roots(p[int(leading):], cdtype)
    # a zero polynomial has no defined roots: solve a harmless one, then mask every root
    p = jnp.where(leading == p.shape[0], jnp.ones_like(p), p)
    r = _companion_roots(jnp.roll(p, -leading), cdtype)  # the leading zeros moved last:
    # each adds a root at 0; sort those to the end and make them NaN
    r = _zeros_last(r)
    keep = jnp.arange(r.shape[0]) < r.shape[0] - leading
    return jnp.where(keep, r, jnp.asarray(complex(np.nan, np.nan), cdtype))


def _zeros_last(r: Any) -> Any:
    """r with its exact zeros moved to the end, the other entries in their order."""
    order = jnp.argsort((r == 0).astype(jnp.int32), stable=True)
    return r[order]


def _companion_roots(p: Any, cdtype: Any) -> Any:
    """The eigenvalues of the companion matrix of p (p[0] != 0 unless p is all zero)."""
    n = p.shape[0]
    if n < 2:
        return jnp.zeros((0,), cdtype)
    a = jnp.diag(jnp.ones((n - 2,), p.dtype), -1)
    a = a.at[0, :].set(-p[1:] / p[0])
    return jnp.linalg.eigvals(a)


@jit_like_jax("polyadd")
def polyadd(a1: Any, a2: Any) -> Any:
    """Add two polynomials.

    Args:
        a1, a2: 1-d coefficient arrays, highest power first (of any lengths).

    Returns:
        The coefficients of the sum: the shorter array is added to the low powers of the
        longer one.

    Example:
        >>> jnp.polyadd(jnp.array([1, 2]), jnp.array([1, 0, 0]))
        Array([1, 1, 2], dtype=int32)
    """
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(jnp.asarray(a1), jnp.asarray(a2))
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[-a2.shape[0]:].add(a2)
    return a2.at[-a1.shape[0]:].add(a1)


@jit_like_jax("polysub")
def polysub(a1: Any, a2: Any) -> Any:
    """Subtract one polynomial from another.

    Args:
        a1, a2: 1-d coefficient arrays, highest power first (of any lengths).

    Returns:
        The coefficients of ``a1 - a2``, aligned on the low powers.

    Example:
        >>> jnp.polysub(jnp.array([1, 2]), jnp.array([1, 0, 0]))
        Array([-1,  1,  2], dtype=int32)
    """
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(jnp.asarray(a1), jnp.asarray(a2))
    return polyadd(a1, -a2)


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """Multiply two polynomials.

    Args:
        a1, a2: 1-d coefficient arrays, highest power first; they promote to an inexact
            dtype.
        trim_leading_zeros: drop leading zero coefficients first (needs concrete inputs).

    Returns:
        The coefficients of the product: the full convolution of ``a1`` and ``a2``.

    Example:
        >>> jnp.polymul(jnp.array([1.0, 1.0]), jnp.array([1.0, -1.0]))
        Array([ 1.,  0., -1.], dtype=float32)
    """
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(jnp.asarray(a1), jnp.asarray(a2))
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = jnp.zeros(1, dtype=a2.dtype)
    if a2.shape[0] == 0:
        a2 = jnp.zeros(1, dtype=a1.dtype)
    return jnp.convolve(a1, a2, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Divide one polynomial by another.

    Args:
        u: the dividend's coefficients, highest power first.
        v: the divisor's coefficients, highest power first (``v[0]`` nonzero).
        trim_leading_zeros: drop the remainder's leading coefficients below ``sqrt(eps)``
            (needs concrete inputs, as in JAX).

    Returns:
        ``(quotient, remainder)`` by long division; unlike NumPy, the remainder keeps
        ``u``'s length (static shapes) unless ``trim_leading_zeros``.

    Example:
        >>> q, r = jnp.polydiv(jnp.array([1.0, 0.0, -1.0]), jnp.array([1.0, 1.0]))
        >>> q
        Array([ 1., -1.], dtype=float32)
    """
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(jnp.asarray(u), jnp.asarray(v))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = jnp.zeros(builtins.max(m - n + 1, 1), dtype=u.dtype)
    for k in builtins.range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        if isinstance(u, Tracer):
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected\n"
                "Error arose in the `filt` argument of trim_zeros_tol()")
        tol = float(np.sqrt(dtypes.finfo(u.dtype).eps))
        ua = np.asarray(u)
        nz = np.nonzero(np.abs(ua) >= tol)[0]
        u = u[nz[0]:] if nz.size else u[:0]
    return q, u


@jit_like_jax("polyder", static_argnames=("m",))
def polyder(p: Any, m: int = 1) -> Any:
    """Differentiate a polynomial.

    Args:
        p: the coefficients, highest power first.
        m: the order of the derivative (a static int >= 0).

    Returns:
        The coefficients of the m-th derivative (``m`` fewer), in an inexact dtype.

    Example:
        >>> jnp.polyder(jnp.array([1.0, 2.0, 3.0, 4.0]))
        Array([3., 4., 3.], dtype=float32)
    """
    check_arraylike("polyder", p)
    m = _static_order(m, "'m' argument of jnp.polyder")
    (p,) = promote_dtypes_inexact(jnp.asarray(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    # The coefficient of x^j gains the factor j (j - 1) ... (j - m + 1): the product down
    # the columns of a grid of (m..n-1) - (0..m-1), reversed (JAX's staging).
    coeff = jnp.prod(jnp.arange(m, p.shape[0], dtype=p.dtype)[np.newaxis]
                     - jnp.arange(m, dtype=p.dtype)[:, np.newaxis], axis=0)
    return p[:-m] * coeff[::-1]


@jit_like_jax("polyint", static_argnames=("m",))
def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """Integrate a polynomial.

    Args:
        p: the coefficients, highest power first.
        m: the order of the antiderivative (a static int >= 0).
        k: the integration constants: a scalar (used for every step) or ``m`` values,
            ``k[0]`` the constant of the first integration.

    Returns:
        The coefficients of the m-th antiderivative (``m`` more), in an inexact dtype.

    Example:
        >>> jnp.polyint(jnp.array([3.0, 2.0, 1.0]))
        Array([1., 1., 1., 0.], dtype=float32)
        >>> jnp.polyint(jnp.array([6.0]), 2, k=jnp.array([1.0, 2.0]))
        Array([3., 1., 2.], dtype=float32)
    """
    m = _static_order(m, "'m' argument of jnp.polyint")
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(jnp.asarray(p), k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = jnp.atleast_1d(k)
    if k.shape[0] == 1:
        k = jnp.full((m,), k[0])
    if k.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    # The coefficient of x^j in the result is the input's times 1 / ((j)(j-1)...(j-m+1)),
    # and the constants k fill the m lowest powers, each divided by its own falling factor
    # (the factors at least 1: JAX's grid of (0..n+m-1) - (0..m-1), clipped, multiplied
    # down the columns and reversed).
    grid = (jnp.arange(p.shape[0] + m, dtype=p.dtype)[np.newaxis]
            - jnp.arange(m, dtype=p.dtype)[:, np.newaxis])
    coeff = jnp.prod(jnp.maximum(1, grid), axis=0)[::-1]
    return jnp.true_divide(jnp.concatenate((p, k)), coeff)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """Remove leading and/or trailing zeros.

    Args:
        filt: an array (its values must be concrete: the result's shape depends on them).
        trim: ``'f'`` (front), ``'b'`` (back) or ``'fb'`` (both, the default).
        axis: the axes to trim along (all by default): the all-zero hyperplanes at the
            borders are removed.

    Returns:
        The trimmed array.

    Example:
        >>> jnp.trim_zeros(jnp.array([0, 0, 1, 2, 0]))
        Array([1, 2], dtype=int32)
        >>> jnp.trim_zeros(jnp.array([0, 0, 1, 2, 0]), trim="b")
        Array([0, 0, 1, 2], dtype=int32)
    """
    check_arraylike("trim_zeros", filt)
    filt = jnp.asarray(filt)
    if isinstance(filt, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            "Error arose in the `filt` argument of trim_zeros()")
    nd = filt.ndim
    if axis is None:
        axes = set(builtins.range(nd))
    else:
        axes = {operator.index(a) % nd for a in (axis if isinstance(axis, (tuple, list))
                                                  else (axis,))}
    lower = trim.lower()
    if not axes or ("f" not in lower and "b" not in lower):
        return filt
    host = np.asarray(filt) != 0
    index = []
    for ax in builtins.range(nd):
        if ax not in axes:
            index.append(builtins.slice(None))
            continue
        mask = host.any(axis=tuple(i for i in builtins.range(nd) if i != ax))
        if not mask.any():
            index.append(builtins.slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in lower else None
        stop = filt.shape[ax] - int(mask[::-1].argmax()) if "b" in lower else None
        index.append(builtins.slice(start, stop))
    return filt[tuple(index)]
