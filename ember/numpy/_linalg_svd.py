"""ember.numpy.linalg's functions built on the singular value decomposition: pinv,
matrix_rank, lstsq, cond, and the 2, -2 and 'nuc' matrix norms (float32, float64,
complex64, complex128).

Input: array-likes (integers promote to the default float), matrices in the last two
dimensions (lstsq: one matrix). Output: ember arrays. Each stages as JAX 0.10.2's does
(jit[name=...]; pinv as custom_jvp of jit[_pinv] with JAX's cutoff 10 max(m, n) eps and
its derivative), so make_jaxpr prints JAX's text. Where JAX and NumPy differ in a value,
the docstring says which one is followed (a given matrix_rank rtol is relative, as in
NumPy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._linalg_lapack import _H, _T, _jnp, _real_dtype, _square, inv, svd, svdvals
from ember.numpy._promote import check_arraylike
from ember.numpy._promote import promote_dtypes_inexact as _promote_inexact


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """Compute the Moore-Penrose pseudo-inverse of matrices.

    The counterpart of :func:`numpy.linalg.pinv`, from the singular value decomposition.

    Args:
        a: a matrix or a stack of them, shape ``(..., m, n)``.
        rtol: singular values at most ``rtol * max(s)`` are treated as zero; default
            ``10 * max(m, n) * eps`` (JAX's; NumPy's default is ``1e-15``).
        hermitian: ``a`` is Hermitian: its SVD comes from ``eigh``.
        rcond: NumPy's older name for ``rtol`` (give only one of them).

    Returns:
        The ``(..., n, m)`` pseudo-inverse.

    Example:
        >>> jnp.round(jnp.linalg.pinv(jnp.array([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]])), 4)
        Array([[1. , 0. , 0. ],
               [0. , 0. , 0.5]], dtype=float32)
    """
    check_arraylike("pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    if not _PINV:
        _PINV.append(_make_pinv())
    return _PINV[0](a, rtol, hermitian)


_PINV: list[Any] = []


def _pinv(a: Any, rtol: Any, hermitian: bool) -> Any:
    """JAX's pinv body: singular values at most rtol * s_max dropped (as infinities the
    division turns into zeros); rtol defaults to 10 * max(m, n) * eps."""
    jnp = _jnp()
    (arr,) = _promote_inexact(a)
    aval = get_aval(arr)
    m, n = aval.shape[-2:]
    if m == 0 or n == 0:
        return jnp.zeros(aval.shape[:-2] + (n, m), aval.dtype)
    arr = jnp.conj(arr)
    if rtol is None:
        rtol = 10. * max(m, n) * jnp.array(dtypes.finfo(aval.dtype).eps)
    rtol = jnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = jnp.expand_dims(rtol[..., np.newaxis], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = jnp.where(s > cutoff, s, np.inf).astype(u.dtype)
    from ember import lax
    res = jnp.matmul(_T(vh), jnp.divide(_T(u), s[..., np.newaxis]),
                     precision=lax.Precision.HIGHEST)
    return lax.convert_element_type(res, aval.dtype)


def _make_pinv() -> Any:
    from ember.custom_derivatives import custom_jvp
    jitted = jit_like_jax("_pinv", static_argnames=("hermitian",))(_pinv)
    pinv_ = custom_jvp(jitted, nondiff_argnums=(1, 2))

    def _pinv_jvp(rtol: Any, hermitian: bool, primals: Any, tangents: Any) -> Any:
        # d pinv(A) (Golub and Pereyra, 1973), with p = pinv(A), products grouped by the
        # shape so the n x m or m x n side is the inner one
        from ember import lax
        jnp = _jnp()
        (a,), (a_dot,) = primals, tangents
        p = pinv_(a, rtol, hermitian)
        if hermitian:  # (svd(hermitian=True) symmetrizes its input: so does the JVP)
            a = (a + _H(a)) / 2
            a_dot = (a_dot + _H(a_dot)) / 2
        m, n = get_aval(a).shape[-2:]

        def mm(x: Any, y: Any) -> Any:
            return jnp.matmul(x, y, precision=lax.Precision.HIGHEST)
        if m >= n:
            s = mm(mm(p, _H(p)), _H(a_dot))
            t = mm(mm(_H(a_dot), _H(p)), p)
            p_dot = -mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
        else:
            s = mm(p, mm(_H(p), _H(a_dot)))
            t = mm(_H(a_dot), mm(_H(p), p))
            p_dot = -mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
        return p, p_dot

    pinv_.defjvp(_pinv_jvp)
    return pinv_


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """Compute the rank of matrices from their singular values.

    The counterpart of :func:`numpy.linalg.matrix_rank`.

    Args:
        M: a matrix or a stack of them, shape ``(..., m, n)`` (a 0-d or 1-d ``M`` has rank 1
            unless it is all zeros).
        rtol: the relative tolerance: singular values above ``rtol * max(s)`` count; default
            ``max(m, n) * eps``.
        hermitian: ``M`` is Hermitian: its singular values come from ``eigh``.
        tol: an absolute tolerance, used instead of ``rtol``.

    Returns:
        The number of singular values above the tolerance, as an int32 array of the batch
        shape.

    Example:
        >>> jnp.linalg.matrix_rank(jnp.array([[1.0, 2.0], [2.0, 4.0]]))
        Array(1, dtype=int32)
        >>> jnp.linalg.matrix_rank(jnp.eye(3))
        Array(3, dtype=int32)
    """
    check_arraylike("matrix_rank", M)
    return _matrix_rank(M, rtol, hermitian=hermitian, tol=tol)


@jit_like_jax("matrix_rank", static_argnames=("hermitian",))
def _matrix_rank(M: Any, rtol: Any, hermitian: bool, tol: Any) -> Any:
    # (JAX's staging; a given rtol stays relative and tol absolute, as in NumPy, where
    # JAX compares the singular values with rtol itself)
    jnp = _jnp()
    (M,) = _promote_inexact(M)
    aval = get_aval(M)
    if aval.ndim < 2:
        return (M != 0).any().astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    sdt = get_aval(s).dtype
    if tol is not None:
        cut = jnp.asarray(tol, sdt)
    elif rtol is not None:
        cut = jnp.asarray(rtol, sdt) * jnp.max(s, axis=-1, initial=0)
    else:
        if aval.shape[-1] == 0 or aval.shape[-2] == 0:
            return jnp.zeros(aval.shape[:-2], np.int32)
        cut = (jnp.max(s, axis=-1) * np.max(aval.shape[-2:]).astype(sdt)
               * dtypes.finfo(sdt).eps)
    cut = jnp.expand_dims(cut, np.ndim(cut))
    return jnp.sum(s > cut, axis=-1)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False
          ) -> tuple[Any, Any, Any, Any]:
    """Solve a linear least-squares problem.

    The counterpart of :func:`numpy.linalg.lstsq`, from the singular value decomposition.

    Args:
        a: the ``(m, n)`` coefficient matrix.
        b: the right-hand side, ``(m,)`` or ``(m, k)``.
        rcond: singular values below ``rcond * max(s)`` are treated as zero; default
            ``max(m, n) * eps``; a negative value means ``eps``.
        numpy_resid: give the residuals only where NumPy does (full rank and ``m > n``,
            else zeros); by default they are always computed, as in JAX.

    Returns:
        ``(x, residuals, rank, s)``: the minimum-norm solution minimizing
        ``|b - a @ x|``, the squared residual norm per column of ``b``, the effective rank
        of ``a`` and its singular values.

    Example:
        >>> a = jnp.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
        >>> x, resid, rank, s = jnp.linalg.lstsq(a, jnp.array([1.0, 2.0, 2.0]))
        >>> jnp.round(x, 4)
        Array([1.1667, 0.5   ], dtype=float32)
        >>> rank
        Array(2, dtype=int32)
    """
    check_arraylike("lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jit_lstsq(a, b, rcond)


def _lstsq(a: Any, b: Any, rcond: Any, *, numpy_resid: bool = False
           ) -> tuple[Any, Any, Any, Any]:
    """JAX's lstsq body: the minimum-norm solution from the reduced SVD, singular values
    below rcond * s[0] (or zero) dropped."""
    from ember import lax
    from ember.numpy.linalg import norm
    jnp = _jnp()
    a, b = _promote_inexact(a, b)
    ash, bsh = get_aval(a).shape, get_aval(b).shape
    if len(ash) != 2:
        raise TypeError(f"{len(ash)}-dimensional array given. Array must be two-dimensional")
    if len(bsh) not in (1, 2):
        raise TypeError(f"{len(bsh)}-dimensional array given. Array must be one or "
                        "two-dimensional")
    if ash[0] != bsh[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = len(bsh)
    if b_orig_ndim == 1:
        b = b[:, None]
    m, n = ash
    dtype = get_aval(a).dtype
    if m * n == 0:
        s = jnp.zeros(0, dtype=_real_dtype(dtype))
        rank = jnp.array(0, dtype=np.int32)
        x = jnp.zeros((n, *get_aval(b).shape[1:]), dtype=dtype)
    else:
        if rcond is None:
            rcond = float(dtypes.finfo(dtype).eps) * max(n, m)
        else:
            rcond = jnp.where(rcond < 0, dtypes.finfo(dtype).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= jnp.array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = jnp.where(mask, s, 1).astype(dtype)
        s_inv = jnp.where(mask, 1 / safe_s, 0)[:, np.newaxis]
        uTb = jnp.matmul(_H(u), b, precision=lax.Precision.HIGHEST)
        x = jnp.matmul(_H(vt), s_inv * uTb, precision=lax.Precision.HIGHEST)
    b_estimate = jnp.matmul(a, x, precision=lax.Precision.HIGHEST)
    resid = norm(b - b_estimate, axis=0) ** 2
    if numpy_resid:
        # (NumPy gives residuals only at full rank with m > n; zeros elsewhere, so the
        # shapes stay static under jit)
        full = (rank == n) & (m > n)
        resid = jnp.where(full, resid, jnp.zeros_like(resid))
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


_jit_lstsq = jit_like_jax("_lstsq")(_lstsq)


def cond(x: Any, p: Any = None) -> Any:
    """Compute the condition number of matrices.

    The counterpart of :func:`numpy.linalg.cond`.

    Args:
        x: a matrix or a stack of them, shape ``(..., m, n)``.
        p: the norm: None or 2 (default: the ratio of the largest to the smallest singular
            value), -2 (its inverse), or any matrix norm of :func:`norm` (``"fro"``,
            ``"nuc"``, 1, -1, inf, -inf), which needs square matrices.

    Returns:
        ``norm(x, p) * norm(inv(x), p)``; inf for a singular matrix.

    Example:
        >>> jnp.linalg.cond(jnp.array([[2.0, 0.0], [0.0, 0.5]]))
        Array(4., dtype=float32)
        >>> jnp.linalg.cond(jnp.array([[1.0, 1.0], [1.0, 1.0]]), p=1)
        Array(inf, dtype=float32)
    """
    check_arraylike("cond", x)
    return _cond(x, p=p)


@jit_like_jax("cond", static_argnames=("p",))
def _cond(x: Any, p: Any) -> Any:
    jnp = _jnp()
    x = jnp.asarray(x)  # (promoted by svdvals, norm and inv, as in JAX)
    aval = get_aval(x)
    if aval.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got {aval.shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        from ember.numpy.linalg import norm
        _square("cond", x)
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    # a singular matrix (NaN from the inverse) has an infinite condition number
    return jnp.where(jnp.isnan(r) & ~jnp.isnan(x).any(axis=(-2, -1)), jnp.inf, r)


def singular_value_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    """norm(ord=2 | -2 | 'nuc') over `axes`: the largest, smallest or summed singular
    values."""
    jnp = _jnp()
    s = svdvals(jnp.moveaxis(x, axes, (-2, -1)))
    if ord == 2:
        out = jnp.max(s, axis=-1, initial=0)
    elif ord == -2:
        out = jnp.min(s, axis=-1) if get_aval(s).shape[-1] else jnp.sum(s, axis=-1)
    else:
        out = jnp.sum(s, axis=-1)
    return jnp.expand_dims(out, sorted(axes)) if keepdims else out


__all__ = ["cond", "lstsq", "matrix_rank", "pinv"]
