"""ember.numpy.linalg's decompositions and what is built on them (float32, float64,
complex64, complex128).

Input: array-likes (integers promote to the default float, as jnp does), matrices in the
last two dimensions with any leading batch. Output: ember arrays, with JAX's result
namedtuples (EighResult, QRResult, SVDResult, SlogdetResult) and error texts.
Built on ember.lax.linalg (prims/linalg.py): solve/inv/det/slogdet on LU (what is built
on the SVD is in _linalg_svd.py). Under a trace each function stages as JAX
0.10.2's does (its own `jit[name=...]`, solve through custom_linear_solve and
lax/_linalg_solve.py, pinv through custom_jvp), so make_jaxpr prints JAX's text; eager
calls run the same primitives without tracing. Singular or non-positive-definite input
gives NaNs/infinities as in JAX, never an exception. eig/eigvals: LAPACK's geev (complex
results whatever the input, as JAX's; CPU only).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ember.core import dtypes
from ember.core.trace import get_aval
from ember.lax import linalg as lax_linalg
from ember.numpy._jit_wrap import _tracing, jit_like_jax
from ember.numpy._promote import check_arraylike
from ember.numpy._promote import promote_dtypes_inexact as _promote_inexact


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


def _jnp() -> Any:
    import ember.numpy as jnp
    return jnp


def _inexact(name: str, *xs: Any) -> list[Any]:
    check_arraylike(name, *xs)
    return list(_promote_inexact(*xs))


def _square(name: str, a: Any, suffix: str = ".") -> None:
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {shape}{suffix}")


def _T(x: Any) -> Any:
    return _jnp().swapaxes(x, -1, -2)


def _H(x: Any) -> Any:
    """The conjugate transpose of matrices (the transpose of real ones)."""
    jnp = _jnp()
    t = jnp.swapaxes(x, -1, -2)
    return jnp.conj(t) if dtypes.kind(get_aval(t).dtype) == "c" else t


def _real_dtype(dtype: Any) -> np.dtype:
    """c64 -> f32, c128 -> f64 (the dtype of singular values and eigh's eigenvalues)."""
    return np.empty((), dtype).real.dtype


def _diag(x: Any) -> Any:
    return _jnp().diagonal(x, 0, -2, -1)


# -- factorizations ------------------------------------------------------------------------------

def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """Compute the Cholesky factor of symmetric (Hermitian) positive definite matrices.

    The counterpart of :func:`numpy.linalg.cholesky`.

    Args:
        a: a matrix or a stack of them, shape ``(..., n, n)``; integers promote to the
            default float type.
        upper: return the upper factor ``U = L^H`` (``a = U^H U``) instead of the lower
            one.
        symmetrize_input: first replace ``a`` by ``(a + a^H) / 2``, as JAX does, so the
            result (and its derivative) does not depend on one triangle alone.

    Returns:
        The triangular factor ``L`` with ``a = L @ L^H``. Unlike NumPy, a matrix that is not
        positive definite gives NaNs rather than raising ``LinAlgError``.

    Example:
        >>> jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 5.0]]))
        Array([[2., 0.],
               [1., 2.]], dtype=float32)
        >>> jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 5.0]]), upper=True)
        Array([[2., 1.],
               [0., 2.]], dtype=float32)
    """
    check_arraylike("cholesky", a)
    return _cholesky(a, upper=upper, symmetrize_input=symmetrize_input)


@jit_like_jax("cholesky", static_argnames=("upper", "symmetrize_input"))
def _cholesky(a: Any, upper: bool, symmetrize_input: bool) -> Any:
    (a,) = _promote_inexact(a)
    low = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(low) if upper else low


def qr(a: Any, mode: str = "reduced") -> Any:
    """Compute the QR decomposition of matrices.

    The counterpart of :func:`numpy.linalg.qr`.

    Args:
        a: a matrix or a stack of them, shape ``(..., m, n)``; integers promote to the
            default float type.
        mode: ``"reduced"`` (default): ``Q`` is ``(..., m, k)`` and ``R`` ``(..., k, n)``
            with ``k = min(m, n)``; ``"complete"``: ``Q`` is square ``(..., m, m)``; ``"r"``:
            only ``R``.

    Returns:
        ``QRResult(Q, R)`` with orthonormal (unitary) columns in ``Q`` and an upper
        triangular ``R``, ``a = Q @ R``; just ``R`` for ``mode="r"``. The signs of the
        columns of ``Q`` (and rows of ``R``) are LAPACK's Householder convention.

    Example:
        >>> q, r = jnp.linalg.qr(jnp.array([[3.0, 1.0], [4.0, 2.0]]))
        >>> jnp.round(r, 4) + 0.0
        Array([[-5. , -2.2],
               [ 0. ,  0.4]], dtype=float32)
        >>> jnp.round(q @ r, 4) + 0.0
        Array([[3., 1.],
               [4., 2.]], dtype=float32)
    """
    check_arraylike("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    return _qr(a, mode=mode)


@jit_like_jax("qr", static_argnames=("mode",))
def _qr(a: Any, mode: str) -> Any:
    (a,) = _promote_inexact(a)
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Compute the eigenvalues and eigenvectors of symmetric (Hermitian) matrices.

    The counterpart of :func:`numpy.linalg.eigh`.

    Args:
        a: a matrix or a stack of them, shape ``(..., n, n)``; integers promote to the
            default float type.
        UPLO: ``"L"`` (default) or ``"U"``: which triangle is read when
            ``symmetrize_input`` is False.
        symmetrize_input: first replace ``a`` by ``(a + a^H) / 2`` (JAX's default).

    Returns:
        ``EighResult(eigenvalues, eigenvectors)``: real eigenvalues in ascending order,
        shape ``(..., n)``, and the orthonormal eigenvectors as the columns of an
        ``(..., n, n)`` array (each determined up to its sign or phase).

    Example:
        >>> a = jnp.array([[2.0, 1.0], [1.0, 2.0]])
        >>> w, v = jnp.linalg.eigh(a)
        >>> jnp.round(w, 4) + 0.0
        Array([1., 3.], dtype=float32)
        >>> jnp.round(jnp.abs(v), 4)
        Array([[0.7071, 0.7071],
               [0.7071, 0.7071]], dtype=float32)
    """
    check_arraylike("eigh", a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    return _eigh(a, UPLO=UPLO, symmetrize_input=symmetrize_input)


@jit_like_jax("eigh", static_argnames=("UPLO", "symmetrize_input"))
def _eigh(a: Any, UPLO: str | None, symmetrize_input: bool) -> EighResult:
    (a,) = _promote_inexact(a)
    v, w = lax_linalg.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """Compute the eigenvalues of symmetric (Hermitian) matrices.

    The counterpart of :func:`numpy.linalg.eigvalsh`: the eigenvalues of :func:`eigh`.

    Args:
        a: a matrix or a stack of them, shape ``(..., n, n)``.
        UPLO: ``"L"`` (default) or ``"U"``: which triangle is read when
            ``symmetrize_input`` is False.
        symmetrize_input: first replace ``a`` by ``(a + a^H) / 2`` (JAX's default).

    Returns:
        The real eigenvalues in ascending order, shape ``(..., n)``.

    Example:
        >>> jnp.round(jnp.linalg.eigvalsh(jnp.array([[2.0, 0.0], [0.0, -1.0]])), 4)
        Array([-1.,  2.], dtype=float32)
    """
    check_arraylike("eigvalsh", a)
    return _eigvalsh(a, UPLO=UPLO, symmetrize_input=symmetrize_input)


@jit_like_jax("eigvalsh", static_argnames=("UPLO", "symmetrize_input"))
def _eigvalsh(a: Any, UPLO: str | None, symmetrize_input: bool) -> Any:
    (a,) = _promote_inexact(a)
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Compute the singular value decomposition of matrices.

    The counterpart of :func:`numpy.linalg.svd`.

    Args:
        a: a matrix or a stack of them, shape ``(..., m, n)``; integers promote to the
            default float type.
        full_matrices: True (default): ``U`` is ``(..., m, m)`` and ``Vh`` ``(..., n, n)``;
            False: ``(..., m, k)`` and ``(..., k, n)`` with ``k = min(m, n)``.
        compute_uv: False returns the singular values alone.
        hermitian: ``a`` is Hermitian (symmetric): the SVD comes from ``eigh`` (the
            singular values are the eigenvalues' magnitudes), as in NumPy and JAX.
        subset_by_index: ``(start, stop)``: keep only the singular values (and vectors) of
            those indices, in descending order.

    Returns:
        ``SVDResult(U, S, Vh)`` with ``a = U @ diag(S) @ Vh`` and ``S`` real, non-negative
        and descending; just ``S`` when ``compute_uv`` is False. Singular vectors are
        determined up to sign (or phase).

    Example:
        >>> a = jnp.array([[3.0, 0.0], [0.0, -2.0], [0.0, 0.0]])
        >>> u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        >>> jnp.round(s, 4)
        Array([3., 2.], dtype=float32)
        >>> jnp.round(u * s @ vh, 4) + 0.0
        Array([[ 3.,  0.],
               [ 0., -2.],
               [ 0.,  0.]], dtype=float32)
    """
    check_arraylike("svd", a)
    if isinstance(subset_by_index, list):
        subset_by_index = tuple(subset_by_index)  # (a static argument: hashable)
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv, hermitian=hermitian,
                subset_by_index=subset_by_index)


@jit_like_jax("svd", static_argnames=("full_matrices", "compute_uv", "hermitian",
                                      "subset_by_index"))
def _svd(a: Any, full_matrices: bool, compute_uv: bool, hermitian: bool,
         subset_by_index: tuple[int, int] | None) -> Any:
    (a,) = _promote_inexact(a)
    if hermitian:
        return _svd_hermitian(a, compute_uv, subset_by_index)
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def _svd_hermitian(a: Any, compute_uv: bool, subset_by_index: Any) -> Any:
    """The SVD of Hermitian matrices from their eigendecomposition (NumPy's and JAX's
    hermitian=True): the singular values are |eigenvalues| sorted descending, U the
    eigenvectors in that order and Vh = (U sign(eigenvalues))^H."""
    from ember import lax
    vecs, vals = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(vals)
    last = s.ndim - 1
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), dimensions=[last])
    sign = lax.sign(vals)
    n = get_aval(s).shape[-1]
    idxs = lax.broadcasted_iota(np.uint64 if n > np.iinfo(np.uint32).max else np.uint32,
                                get_aval(s).shape, dimension=last)
    s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
    s = lax.rev(s, dimensions=[last])
    idxs = lax.rev(idxs, dimensions=[last])
    sign = lax.rev(sign, dimensions=[last])
    u = _jnp().take_along_axis(vecs, idxs[..., None, :], axis=-1)
    vh = _H(u * sign[..., None, :].astype(get_aval(u).dtype))
    return SVDResult(u, s, vh)


def svdvals(x: Any, /) -> Any:
    """Compute the singular values of matrices.

    The counterpart of :func:`numpy.linalg.svdvals` (NumPy 2):
    ``svd(x, compute_uv=False)``.

    Args:
        x: a matrix or a stack of them, shape ``(..., m, n)``.

    Returns:
        The ``min(m, n)`` singular values of each matrix, real and descending.

    Example:
        >>> jnp.linalg.svdvals(jnp.array([[0.0, 2.0], [1.0, 0.0]]))
        Array([2., 1.], dtype=float32)
    """
    return svd(x, compute_uv=False)


def eig(a: Any) -> EigResult:
    """Compute the eigenvalues and eigenvectors of a general square matrix.

    Args:
        a: an array of shape ``(..., n, n)``; integers promote to the default float type.

    Returns:
        ``EigResult(eigenvalues, eigenvectors)``: complex arrays (``complex64`` for
        ``float32`` input) of shapes ``(..., n)`` and ``(..., n, n)``, with
        ``a @ v[:, i] == w[i] * v[:, i]``; each eigenvector (a column) has unit norm.
        The eigenvalues are not sorted. Only eigenvalues have derivatives (as in JAX).

    Example:
        >>> w, v = jnp.linalg.eig(jnp.array([[0.0, -1.0], [1.0, 0.0]]))
        >>> w
        Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    (a,) = _inexact("eig", a)
    _square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """Compute the eigenvalues of a general square matrix.

    Args:
        a: an array of shape ``(..., n, n)``; integers promote to the default float type.

    Returns:
        The eigenvalues, a complex array of shape ``(..., n)``, unsorted (LAPACK's
        order). Differentiable (``dw = diag(V^-1 da V)``).

    Example:
        >>> jnp.linalg.eigvals(jnp.array([[2.0, 0.0], [0.0, 3.0]]))
        Array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    check_arraylike("eigvals", a)
    return _eigvals(a)


@jit_like_jax("eigvals")
def _eigvals(a: Any) -> Any:
    (a,) = _promote_inexact(a)
    _square("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


# -- LU-based ------------------------------------------------------------------------------------

def solve(a: Any, b: Any) -> Any:
    """Solve the linear system ``a @ x = b`` for ``x``.

    Args:
        a: a square matrix or a stack of them, shape ``(..., n, n)``; integers promote to
            the default float type.
        b: the right-hand side: a vector of shape ``(n,)`` (one system per matrix of
            ``a``), or matrices of shape ``(..., n, k)`` whose batch axes broadcast with
            ``a``'s. As in JAX since v0.5.0, a ``b`` of shape ``(..., n)`` with a batch
            is refused with a ``ValueError``; write ``solve(a, b[..., None])[..., 0]``.

    Returns:
        ``x``, of ``b``'s shape (with the broadcast batch axes) and the promoted dtype. It
        is found by LU factorization with partial pivoting; unlike NumPy, a singular ``a``
        gives infinities or NaNs rather than raising ``LinAlgError``.

    Example:
        >>> jnp.linalg.solve(jnp.array([[2.0, 1.0], [1.0, 3.0]]), jnp.array([3.0, 5.0]))
        Array([0.8, 1.4], dtype=float32)
    """
    check_arraylike("solve", a, b)
    return _solve(a, b)


@jit_like_jax("solve")
def _solve(a: Any, b: Any) -> Any:
    """JAX's staging: one `custom_linear_solve` per system, through jnp.vectorize."""
    from ember.lax import _linalg_solve
    a, b = _promote_inexact(a, b)
    ash, bsh = get_aval(a).shape, get_aval(b).shape
    if len(ash) < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={ash}")
    if len(bsh) > 1 and len(ash) == len(bsh) + 1 and ash[-1] == bsh[-1] and ash[-1] != bsh[-2]:
        raise ValueError(f"Invalid shapes for solve: {ash}, {bsh}. Prior to JAX v0.5.0, this "
                         "would have been treated as a batched 1-dimensional solve. To recover "
                         "this behavior, use solve(a, b[..., None]).squeeze(-1).")
    if not _tracing((a, b), {}):
        # Eagerly, the values custom_linear_solve computes, without tracing its four
        # jaxprs per call: one factorization, the row gather and two triangular solves
        jnp = _jnp()
        if len(bsh) == 1:
            b = jnp.broadcast_to(b, ash[:-1])
        else:  # (stacks of matrices: the batch dimensions broadcast, as vectorize does)
            batch = tuple(np.broadcast_shapes(ash[:-2], bsh[:-2]))
            a = jnp.broadcast_to(a, batch + ash[-2:])
            b = jnp.broadcast_to(b, batch + bsh[-2:])
        _linalg_solve.check_solve_shapes(a, b)
        lu, _, perm = lax_linalg.lu(a)
        return _linalg_solve.lu_solve(lu, perm, b)
    signature = "(m,m),(m)->(m)" if len(bsh) == 1 else "(m,m),(m,n)->(m,n)"
    return _jnp().vectorize(_linalg_solve.solve, signature=signature)(a, b)


def inv(a: Any) -> Any:
    """Compute the inverse of a square matrix, or of each matrix in a stack.

    Args:
        a: an array of shape ``(..., n, n)``; integers promote to the default float type.
            Other shapes raise a ``ValueError``.

    Returns:
        The inverse, ``solve(a, eye(n))``, of ``a``'s shape. Unlike NumPy, which raises
        ``LinAlgError``, a singular matrix gives infinities or NaNs.

    Example:
        >>> jnp.linalg.inv(jnp.array([[2.0, 1.0], [1.0, 3.0]]))
        Array([[ 0.6, -0.2],
               [-0.2,  0.4]], dtype=float32)
    """
    check_arraylike("inv", a)
    return _inv(a)


@jit_like_jax("inv")
def _inv(a: Any) -> Any:
    from ember import lax
    a = _jnp().asarray(a)
    _square("inv", a)
    shape = get_aval(a).shape
    return solve(a, lax.broadcast(_jnp().eye(shape[-1], dtype=get_aval(a).dtype), shape[:-2]))


def _parity_sign(pivots: Any, dtype: Any) -> Any:
    """(-1)^(number of actual row swaps) of LU's pivots."""
    jnp = _jnp()
    k = get_aval(pivots).shape[-1]
    swaps = jnp.sum(pivots != jnp.arange(k, dtype=pivots.dtype), axis=-1)
    return jnp.where(swaps % 2 == 1, -1, 1).astype(dtype)


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    jnp = _jnp()
    dtype = get_aval(a).dtype
    lu, pivots, _ = lax_linalg.lu(a)
    d = _diag(lu)
    zero = jnp.any(d == 0, axis=-1)
    # (complex: sign(d) = d / |d|, a unit complex number; log|det| is real)
    sign = _parity_sign(pivots, dtype) * jnp.prod(jnp.sign(d), axis=-1)
    logdet = jnp.sum(jnp.log(jnp.abs(d)), axis=-1)
    sign = jnp.where(zero, jnp.zeros((), dtype), sign)
    logdet = jnp.where(zero, jnp.array(-np.inf, _real_dtype(dtype)), logdet)
    return sign, logdet


def _make_slogdet() -> Any:
    from ember.custom_derivatives import custom_jvp

    @custom_jvp
    def slogdet_(a: Any) -> tuple[Any, Any]:
        return _slogdet_lu(a)

    @slogdet_.defjvp
    def slogdet_jvp(primals: Any, tangents: Any) -> Any:
        (a,), (da,) = primals, tangents
        jnp = _jnp()
        sign, logdet = _slogdet_lu(a)
        # d log det a = trace(a^-1 da) = t: log|det| moves by Re t; a real sign is
        # piecewise constant, a complex one turns by i Im t
        t = jnp.trace(solve(a, da), axis1=-2, axis2=-1)
        if dtypes.kind(get_aval(t).dtype) != "c":
            return (sign, logdet), (jnp.zeros_like(sign), t)
        return (sign, logdet), (sign * (t - jnp.real(t)), jnp.real(t))

    return slogdet_


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """Compute the sign and the logarithm of the absolute value of determinants.

    The counterpart of :func:`numpy.linalg.slogdet`; it avoids the overflow and underflow
    of :func:`det` for large matrices.

    Args:
        a: a square matrix or a stack of them, shape ``(..., n, n)``; integers promote to
            the default float type.
        method: ``"lu"`` or None (default, the same): from the LU factorization with partial
            pivoting.

    Returns:
        ``SlogdetResult(sign, logabsdet)`` with ``det(a) = sign * exp(logabsdet)``: ``sign``
        is -1, 0 or 1 (a unit-modulus complex number for complex ``a``), and a singular
        matrix gives ``(0, -inf)``.

    Example:
        >>> jnp.linalg.slogdet(jnp.array([[0.0, 2.0], [4.0, 0.0]]))
        SlogdetResult(sign=Array(-1., dtype=float32), logabsdet=Array(2.0794415, dtype=float32))
    """
    (a,) = _inexact("slogdet", a)
    _square("slogdet()", a, "")
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`), and 'qr'." if method != "qr" else
                         "slogdet method 'qr' is not supported by Ember yet")
    if not _SLOGDET:
        _SLOGDET.append(_make_slogdet())
    sign, logdet = _SLOGDET[0](a)
    return SlogdetResult(sign, logdet)


_SLOGDET: list[Any] = []


def _det_lu(a: Any) -> Any:
    lu, pivots, _ = lax_linalg.lu(a)
    return _parity_sign(pivots, get_aval(a).dtype) * _jnp().prod(_diag(lu), axis=-1)


def _adjugate(a: Any) -> Any:
    """adj(a) (= det(a) a^-1 where a is invertible), finite for singular a too: from the
    SVD a = U S V^H, adj(a) = det(U) det(V^H) V diag(p) U^H with p_i the product of the
    singular values but s_i (prefix times suffix products: no division)."""
    jnp = _jnp()
    u, s, vt = lax_linalg.svd(a, full_matrices=False)
    ones = jnp.ones_like(s[..., :1])
    before = jnp.cumprod(jnp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = jnp.flip(jnp.cumprod(jnp.concatenate([ones, jnp.flip(s, -1)[..., :-1]], axis=-1),
                                 axis=-1), -1)
    sign = _det_lu(u) * _det_lu(vt)
    p = (before * after).astype(get_aval(a).dtype)
    return sign[..., None, None] * jnp.matmul(_H(vt) * p[..., None, :], _H(u))


def _make_det() -> Any:
    from ember.custom_derivatives import custom_jvp

    @custom_jvp
    def det_(a: Any) -> Any:
        return _det_lu(a)

    @det_.defjvp
    def det_jvp(primals: Any, tangents: Any) -> Any:
        (a,), (da,) = primals, tangents
        # d det(a) = trace(adj(a) da): defined (and finite) at singular a as well
        return _det_lu(a), _jnp().sum(_T(_adjugate(a)) * da, axis=(-2, -1))

    return det_


_DET: list[Any] = []


def det(a: Any) -> Any:
    """Compute the determinant of a square matrix, or of each matrix in a stack.

    Args:
        a: an array of shape ``(..., n, n)``; integers promote to the default float type.

    Returns:
        The determinants, of shape ``a.shape[:-2]``. The value is the product of the LU
        factor's diagonal times the sign of the row permutation; its derivative is
        ``trace(adj(a) @ da)``, finite at singular matrices too, as in JAX.

    Example:
        >>> jnp.linalg.det(jnp.array([[2.0, 1.0], [1.0, 3.0]]))
        Array(5., dtype=float32)
    """
    check_arraylike("det", a)
    return _det(a)


def _det_2x2(a: Any) -> Any:
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a: Any) -> Any:
    # (the rule of Sarrus, in JAX's order of terms, so its rounding is JAX's too)
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@jit_like_jax("det")
def _det(a: Any) -> Any:
    """JAX's staging: the explicit products for 2x2 and 3x3 matrices (differentiated as
    polynomials), LU otherwise."""
    (a,) = _promote_inexact(a)
    _square("_det()", a, "")
    n = get_aval(a).shape[-1]
    if n == 2:
        return _det_2x2(a)
    if n == 3:
        return _det_3x3(a)
    if not _DET:
        _DET.append(_make_det())
    return _DET[0](a)


def matrix_power(a: Any, n: int) -> Any:
    """Raise square matrices to an integer power.

    The counterpart of :func:`numpy.linalg.matrix_power`, by repeated squaring.

    Args:
        a: a square matrix or a stack of them, shape ``(..., n, n)``.
        n: the exponent, a static int: 0 gives the identity, a negative one powers the
            inverse.

    Returns:
        ``a @ a @ ... @ a`` (``n`` factors), in ``a``'s dtype (integers stay integers unless
        ``n < 0``).

    Example:
        >>> a = jnp.array([[1, 1], [0, 1]])
        >>> jnp.linalg.matrix_power(a, 3)
        Array([[1, 3],
               [0, 1]], dtype=int32)
        >>> jnp.linalg.matrix_power(jnp.array([[2.0, 0.0], [0.0, 4.0]]), -1)
        Array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    check_arraylike("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    return _matrix_power(_jnp().asarray(a), n)


@jit_like_jax("matrix_power", static_argnames=("n",))
def _matrix_power(a: Any, n: int) -> Any:
    """a^n, multiplied in JAX's order (so its rounding is JAX's too)."""
    jnp = _jnp()
    shape = get_aval(a).shape
    if len(shape) < 2:
        raise TypeError(f"{len(shape)}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if shape[-1] != shape[-2]:
        raise TypeError("Last 2 dimensions of the array must be square")
    if n == 0:
        return jnp.broadcast_to(jnp.eye(shape[-1], dtype=get_aval(a).dtype), shape)
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a
    if n == 2:
        return jnp.matmul(a, a)
    if n == 3:
        return jnp.matmul(jnp.matmul(a, a), a)
    result = z = None
    while n > 0:  # binary powering: z = a^(2^i), multiplied in where n's bit i is set
        z = a if z is None else jnp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else jnp.matmul(result, z)
    return result


# -- products and tensor solves ------------------------------------------------------------------

def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """Multiply a chain of matrices in the cheapest order.

    The counterpart of :func:`numpy.linalg.multi_dot`: the order of the products is chosen
    by the classic dynamic program over the matrices' shapes, so the result equals
    ``arrays[0] @ arrays[1] @ ...`` with the fewest multiplications.

    Args:
        arrays: two or more arrays: the first may be 1-D (a row vector), the last may be 1-D
            (a column vector), the others must be 2-D.
        precision: passed to each product, as for :func:`matmul`.

    Returns:
        The product, with the dimensions of 1-D ends removed.

    Example:
        >>> a = jnp.ones((2, 3))
        >>> b = jnp.arange(12.0).reshape(3, 4)
        >>> jnp.linalg.multi_dot([a, b, jnp.ones(4)])
        Array([66., 66.], dtype=float32)
    """
    jnp = _jnp()
    arrs = [jnp.asarray(x) for x in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    first_1d, last_1d = arrs[0].ndim == 1, arrs[-1].ndim == 1
    if first_1d:
        arrs[0] = arrs[0][None, :]
    if last_1d:
        arrs[-1] = arrs[-1][:, None]
    for x in arrs:
        if x.ndim != 2:
            raise ValueError("multi_dot: arrays must be 2-D, except the first and last, "
                             f"which may be 1-D; got shape {x.shape}")
    # the classic chain-order dynamic program on the dimensions
    dims = [arrs[0].shape[0]] + [x.shape[1] for x in arrs]
    k = len(arrs)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = -1
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def product(i: int, j: int) -> Any:
        if i == j:
            return arrs[i]
        s = split[i][j]
        return jnp.matmul(product(i, s), product(s + 1, j), precision=precision)

    out = product(0, k - 1)
    if first_1d:
        out = out[0]
    if last_1d:
        out = out[..., 0]
    return out


def tensorinv(a: Any, ind: int = 2) -> Any:
    """Compute the inverse of an array seen as a tensor operator.

    The counterpart of :func:`numpy.linalg.tensorinv`: the first ``ind`` axes of ``a`` are
    its outputs and the rest its inputs, so that ``tensordot(tensorinv(a), a, ind)`` is the
    identity.

    Args:
        a: an array whose first ``ind`` dimensions have the same number of elements as the
            others.
        ind: how many leading axes are the outputs (default 2).

    Returns:
        An array of shape ``a.shape[ind:] + a.shape[:ind]``.

    Example:
        >>> a = jnp.eye(4).reshape(4, 2, 2) * 2
        >>> jnp.linalg.tensorinv(a, ind=1).shape
        (2, 2, 4)
        >>> jnp.linalg.tensorinv(a, ind=1)[0]
        Array([[0.5, 0. , 0. , 0. ],
               [0. , 0.5, 0. , 0. ]], dtype=float32)
    """
    jnp = _jnp()
    (a,) = _inexact("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got {ind=}")
    shape = get_aval(a).shape
    first, rest = shape[:ind], shape[ind:]
    size = int(np.prod(first))
    if size != int(np.prod(rest)):
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={shape} with ind={ind}.")
    return jnp.reshape(inv(jnp.reshape(a, (size, -1))), rest + first)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """Solve the tensor equation ``tensordot(a, x, x.ndim) = b`` for ``x``.

    The counterpart of :func:`numpy.linalg.tensorsolve`.

    Args:
        a: the coefficient tensor; its leading dimensions are ``b``'s shape and the
            number of elements of the rest equals ``b.size``.
        b: the right-hand side.
        axes: axes of ``a`` to move to the end first, as in NumPy.

    Returns:
        ``x``, of shape ``a.shape[b.ndim:]``.

    Example:
        >>> a = jnp.eye(6).reshape(6, 2, 3) * 2
        >>> jnp.linalg.tensorsolve(a, jnp.arange(6.0))
        Array([[0. , 0.5, 1. ],
               [1.5, 2. , 2.5]], dtype=float32)
    """
    jnp = _jnp()
    a, b = _inexact("tensorsolve", a, b)
    bsh = get_aval(b).shape
    if axes is not None:
        ndim = get_aval(a).ndim
        axes = tuple(ax % ndim for ax in axes)
        a = jnp.moveaxis(a, axes, tuple(range(ndim - len(axes), ndim)))
    ash = get_aval(a).shape
    out_shape = ash[len(bsh):]
    size = int(np.prod(bsh))
    if int(np.prod(out_shape)) != size:
        raise ValueError("tensorsolve: the product of a's trailing dimensions "
                         f"{out_shape} must equal b's size {size}")
    x = solve(jnp.reshape(a, (size, size)), jnp.ravel(b))
    return jnp.reshape(x, out_shape)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Compute the cross product of 3-element vectors (the Array API's form).

    The counterpart of :func:`numpy.linalg.cross`: unlike :func:`ember.numpy.cross`, both
    vectors must have 3 elements along ``axis``.

    Args:
        x1, x2: arrays whose ``axis`` has length 3; the other dimensions broadcast.
        axis: the axis holding the vectors (default the last).

    Returns:
        The cross products ``x1 x x2``, in the promoted dtype.

    Example:
        >>> jnp.linalg.cross(jnp.array([1, 0, 0]), jnp.array([0, 1, 0]))
        Array([0, 0, 1], dtype=int32)
        >>> jnp.linalg.cross(jnp.array([[1.0, 2.0, 3.0]]), jnp.array([4.0, 5.0, 6.0]))
        Array([[-3.,  6., -3.]], dtype=float32)
    """
    jnp = _jnp()
    check_arraylike("cross", x1, x2)
    s1, s2 = get_aval(jnp.asarray(x1)).shape, get_aval(jnp.asarray(x2)).shape
    if not s1 or not s2 or s1[axis] != 3 or s2[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {s1} and {s2} dimensional instead")
    a, b = jnp.broadcast_arrays(*_promote_inexact_or_int(x1, x2))
    a, b = jnp.moveaxis(a, axis, -1), jnp.moveaxis(b, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return jnp.moveaxis(out, -1, axis)


def _promote_inexact_or_int(*xs: Any) -> list[Any]:
    from ember.numpy._promote import promote_dtypes
    return list(promote_dtypes(*xs))


__all__ = ["EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky",
           "cross", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matrix_power",
           "multi_dot", "qr", "slogdet", "solve", "svd", "svdvals", "tensorinv",
           "tensorsolve"]
