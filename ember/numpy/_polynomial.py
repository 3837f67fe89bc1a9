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
from ember.numpy._promote import check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["polyval", "polyfit", "poly", "roots", "polyadd", "polysub", "polymul",
           "polydiv", "polyder", "polyint", "trim_zeros"]

def _static_order(m: Any, what: str) -> int:
    if isinstance(m, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {m}\n"
            f"{what}")
    return operator.index(m)


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """p[0] x^(n-1) + ... + p[n-1], by Horner's rule (a scan over p's first axis)."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(jnp.asarray(p), jnp.asarray(x))
    shape = jnp.broadcast_shapes(p.shape[1:], x.shape)
    y = jnp.zeros(shape, x.dtype)
    if p.shape[0] <= unroll:
        # A scan unrolled at least its length is straight-line code: written out directly
        # (the same operations in the same order, and it maps under vmap without a loop).
        for i in builtins.range(p.shape[0]):
            y = y * x + p[i]
        return y
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
    """Least-squares coefficients (highest power first) of the degree-`deg` polynomial
    through (x, y) (y may hold several columns), optionally weighted by w; cov=True also
    returns the scaled covariance of the coefficients ('unscaled' leaves out the residual
    factor)."""
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
        raise NotImplementedError("polyfit(full=True) returns singular values: it needs "
                                  "jnp.linalg.svd, which Ember does not have yet.")
    if x.shape[0] < order:
        raise NotImplementedError("polyfit with fewer points than coefficients needs the "
                                  "minimum-norm least-squares solution (jnp.linalg.lstsq), "
                                  "which Ember does not have yet.")
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
    """The coefficients of prod_k (x - z_k) (1 for no zeros)."""
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


def polyadd(a1: Any, a2: Any) -> Any:
    """Sum of two polynomials (the shorter one aligned to the low powers)."""
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(jnp.asarray(a1), jnp.asarray(a2))
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[a1.shape[0] - a2.shape[0]:].add(a2)
    return a2.at[a2.shape[0] - a1.shape[0]:].add(a1)


def polysub(a1: Any, a2: Any) -> Any:
    """Difference of two polynomials."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(jnp.asarray(a1), jnp.asarray(a2))
    return polyadd(a1, -a2)


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """Product of two polynomials (their convolution)."""
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
    """(quotient, remainder) of u / v by long division; the remainder keeps u's length
    unless trim_leading_zeros (then its leading near-zeros, below sqrt(eps), go)."""
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


def polyder(p: Any, m: int = 1) -> Any:
    """The m-th derivative: coefficient of x^j times j (j - 1) ... (j - m + 1)."""
    check_arraylike("polyder", p)
    m = _static_order(m, "'m' argument of jnp.polyder")
    (p,) = promote_dtypes_inexact(jnp.asarray(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    powers = np.arange(n - 1, -1, -1)[:n - m] if n > m else np.zeros((0,), np.int64)
    coeff = np.prod([powers - i for i in builtins.range(m)], axis=0) if n > m else powers
    return p[:builtins.max(n - m, 0)] * jnp.asarray(np.asarray(coeff, np.float64), p.dtype)


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The m-th antiderivative, with integration constants k (scalar or length m; k[0]
    is the constant of the first integration, i.e. the highest of the new low powers)."""
    m = _static_order(m, "'m' argument of jnp.polyint")
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(jnp.asarray(p), jnp.asarray(k))
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
    # and the constants k fill the m lowest powers, each divided by its own falling factor.
    total = p.shape[0] + m
    powers = np.arange(total - 1, -1, -1)
    denom = np.prod([np.maximum(1, powers - i) for i in builtins.range(m)], axis=0)
    return jnp.concatenate([p, k]) / jnp.asarray(denom.astype(np.float64), p.dtype)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """filt without its leading ('f') and / or trailing ('b') zeros (along each axis of
    `axis`, all by default: the zero hyperplanes at the borders). Needs concrete input."""
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
