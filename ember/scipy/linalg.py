"""ember.scipy.linalg: `jax.scipy.linalg`'s dense linear algebra (float32, float64,
complex64, complex128: trans=2 and the Cholesky solves use the adjoint).

Input: array-likes (integers promote to the default float), matrices in the last two
dimensions with leading batch dimensions. Output: ember arrays, as jax.scipy.linalg returns
them: solve_triangular, lu (p, l, u), lu_factor (lu, piv), lu_solve, cho_factor
((c, lower)), cho_solve, cholesky, eigh, qr (modes 'full', 'economic', 'r'), svd, inv,
det, solve (assume_a 'gen', 'sym', 'pos'), expm (scaling and squaring with the degree-13
Padé approximant), polar (from the SVD), and the structured matrices toeplitz, hankel,
circulant (batched over leading dimensions), block_diag, hilbert, companion, leslie,
hadamard, helmert; expm_frechet (expm's JVP) and eigh_tridiagonal (through the dense
eigh). `overwrite_*` and `check_finite` are accepted and ignored, as in JAX.
Generalized problems (eigh with b) and `schur` are not supported (NotImplementedError).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax
from ember.core.trace import get_aval
from ember.lax import linalg as lax_linalg
from ember.numpy import _linalg_lapack as _np_linalg
from ember.numpy._promote import check_arraylike
from ember.numpy._promote import promote_dtypes_inexact as _promote_inexact

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "det", "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "hadamard", "hankel",
           "helmert", "hilbert", "inv", "leslie", "lu", "lu_factor", "lu_solve", "polar", "qr",
           "schur", "solve", "solve_triangular", "svd", "toeplitz"]


def _jnp() -> Any:
    import ember.numpy as jnp
    return jnp


def _inexact(name: str, *xs: Any) -> list[Any]:
    check_arraylike(name, *xs)
    return list(_promote_inexact(*xs))


def _T(x: Any) -> Any:
    return _jnp().swapaxes(x, -1, -2)


def _H(x: Any) -> Any:
    """The conjugate transpose of matrices (the transpose of real ones)."""
    return _np_linalg._H(x)


def _trans_flags(trans: Any) -> tuple[bool, bool]:
    """(transpose_a, conjugate_a) of SciPy's trans: 0/'N', 1/'T', 2/'C' (the adjoint)."""
    if trans in (0, "N"):
        return False, False
    if trans in (1, "T"):
        return True, False
    if trans in (2, "C"):
        return True, True
    raise ValueError(f"Invalid 'trans' value {trans}")


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Any:
    """x with op(a) x = b for a triangular a (the `lower` or upper triangle is read)."""
    a, b = _inexact("solve_triangular", a, b)
    vector = get_aval(b).ndim == get_aval(a).ndim - 1
    if vector:
        b = b[..., None]
    transpose, conjugate = _trans_flags(trans)
    x = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose,
                                    conjugate_a=conjugate, unit_diagonal=unit_diagonal)
    return x[..., 0] if vector else x


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[Any, Any]:
    """(lu, piv): L (unit, below the diagonal) and U packed, and LAPACK's 0-based swaps."""
    (a,) = _inexact("lu_factor", a)
    lu_, piv, _ = lax_linalg.lu(a)
    return lu_, piv


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
       ) -> tuple[Any, ...]:
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) when permute_l."""
    jnp = _jnp()
    (a,) = _inexact("lu", a)
    aval = get_aval(a)
    m, n = aval.shape[-2:]
    k = min(m, n)
    lu_, _, perm = lax_linalg.lu(a)
    low = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=aval.dtype)
    up = jnp.triu(lu_[..., :k, :])
    # a[perm] = l u, so a = p l u with p[perm[i], i] = 1
    p = _T(jnp.asarray(perm[..., :, None] == jnp.arange(m, dtype=perm.dtype),
                       dtype=aval.dtype))
    if permute_l:
        return jnp.matmul(p, low), up
    return p, low, up


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """x with a x = b (trans 0), a^T x = b (trans 1) or a^H x = b (trans 2) from
    lu_factor's result."""
    jnp = _jnp()
    lu_, piv = lu_and_piv
    lu_, b = _inexact("lu_solve", lu_, b)
    m = get_aval(lu_).shape[-1]
    vector = get_aval(b).ndim == 1
    if vector:
        b = b[:, None]
    perm = lax_linalg.lu_pivots_to_permutation(jnp.asarray(piv, jnp.int32), m)
    batch = tuple(np.broadcast_shapes(get_aval(lu_).shape[:-2], get_aval(b).shape[:-2]))
    lu_ = jnp.broadcast_to(lu_, batch + get_aval(lu_).shape[-2:])
    b = jnp.broadcast_to(b, batch + get_aval(b).shape[-2:])
    perm = jnp.broadcast_to(perm, batch + (m,))
    transpose, conjugate = _trans_flags(trans)
    if not transpose:
        pb = jnp.take_along_axis(b, perm[..., :, None], axis=-2)
        y = lax_linalg.triangular_solve(lu_, pb, left_side=True, lower=True,
                                        unit_diagonal=True)
        x = lax_linalg.triangular_solve(lu_, y, left_side=True, lower=False)
    else:  # a^T = U^T L^T P (a^H likewise): solve U^T, then L^T, then undo the permutation
        y = lax_linalg.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True,
                                        conjugate_a=conjugate)
        z = lax_linalg.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                                        conjugate_a=conjugate, unit_diagonal=True)
        inv_perm = jnp.argsort(perm, axis=-1)
        x = jnp.take_along_axis(z, inv_perm[..., :, None], axis=-2)
    return x[..., 0] if vector else x


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor: upper (a = u^H u) by default, lower when `lower`."""
    (a,) = _inexact("cholesky", a)
    low = lax_linalg.cholesky(a)
    return low if lower else _H(low)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """(c, lower): the Cholesky factor for cho_solve."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """x with a x = b, from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    vector = get_aval(b).ndim == get_aval(c).ndim - 1
    if vector:
        b = b[..., None]
    # a = L L^H (lower) or U^H U (upper, U = L^H): two triangular solves
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                    transpose_a=not lower, conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return x[..., 0] if vector else x


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: None = None, type: int = 1, check_finite: bool = True) -> Any:
    """Eigenvalues w (ascending) and eigenvectors v (columns) of a symmetric a: (w, v), or
    w alone when eigvals_only."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _inexact("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=False)
    return w if eigvals_only else (w, v)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> tuple[Any, ...]:
    """QR: (q, r) for mode 'full' or 'economic', (r,) for mode 'r'."""
    if pivoting:
        raise NotImplementedError("Ember's scipy.linalg.qr does not support pivoting yet")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'" if mode != "raw" else
                         "Unsupported QR decomposition mode 'raw'")
    (a,) = _inexact("qr", a)
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    """Singular value decomposition: (u, s, vh), or s alone."""
    (a,) = _inexact("svd", a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of square matrices."""
    return _np_linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of square matrices."""
    return _np_linalg.det(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """x with a x = b; assume_a='pos' solves through Cholesky (reading the `lower` or
    upper triangle), 'gen'/'sym'/'her' through LU."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of 'gen', 'sym', 'her', 'pos'; got "
                         f"{assume_a!r}")
    a, b = _inexact("solve", a, b)
    if assume_a != "pos":
        vector = get_aval(b).ndim == get_aval(a).ndim - 1
        x = _np_linalg.solve(a, b[..., None] if vector else b)
        return x[..., 0] if vector else x
    jnp = _jnp()
    tri = jnp.tril(a) if lower else jnp.triu(a)
    full = tri + _H(jnp.tril(a, -1) if lower else jnp.triu(a, 1))
    return cho_solve(cho_factor(full, lower=True), b)


# -- expm: scaling and squaring (Higham 2005), the [13/13] Padé approximant -------------------

# the coefficients b_0..b_13 of the degree-13 Padé approximant to exp
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152  # the largest 1-norm for which [13/13] is accurate in f64


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """exp of square matrices: A scaled by 2^-s so its 1-norm is at most theta_13, the
    Padé approximant r = (V - U)^-1 (V + U), squared s times (s <= max_squarings)."""
    jnp = _jnp()
    (A,) = _inexact("expm", A)
    aval = get_aval(A)
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"expected A to be a (batched) square matrix, got {aval.shape}")
    n = aval.shape[-1]
    dtype = aval.dtype
    norm = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)  # 1-norm, per matrix
    safe = jnp.where(norm > 0, norm, 1)
    s = jnp.clip(jnp.ceil(jnp.log2(safe / _THETA13)), 0, max_squarings)
    s = jnp.where(norm > 0, s, 0)
    scaled = A / (2.0 ** s)[..., None, None].astype(dtype)
    b = [jnp.asarray(c, dtype) for c in _PADE13]
    eye = jnp.broadcast_to(jnp.eye(n, dtype=dtype), aval.shape)
    a2 = jnp.matmul(scaled, scaled)
    a4 = jnp.matmul(a2, a2)
    a6 = jnp.matmul(a4, a2)
    u = jnp.matmul(scaled, jnp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                   + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = (jnp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4
         + b[2] * a2 + b[0] * eye)
    r = _np_linalg.solve(v - u, v + u)
    steps = s.astype(jnp.int32)

    def square(i: Any, r: Any) -> Any:
        squared = jnp.matmul(r, r)
        return jnp.where((i < steps)[..., None, None], squared, r)

    return lax.fori_loop(0, int(max_squarings), square, r)


# -- structured matrices and polar ---------------------------------------------------------------

def _gathered(vals: Any, idx: np.ndarray) -> Any:
    """vals[..., idx]: the last axis read at a static index matrix."""
    return _jnp().take(vals, idx, axis=-1)


def _vector_pair(name: str, c: Any, r: Any) -> tuple[Any, Any]:
    jnp = _jnp()
    check_arraylike(name, c, *([] if r is None else [r]))
    c = jnp.atleast_1d(jnp.asarray(c))
    r = c if r is None else jnp.atleast_1d(jnp.asarray(r))
    dtype = jnp.promote_types(c.dtype, r.dtype)
    batch = tuple(np.broadcast_shapes(c.shape[:-1], r.shape[:-1]))
    c = jnp.broadcast_to(c.astype(dtype), batch + c.shape[-1:])
    r = jnp.broadcast_to(r.astype(dtype), batch + r.shape[-1:])
    return c, r


def toeplitz(c: Any, r: Any = None) -> Any:
    """T[..., i, j] = c[..., i - j] for i >= j, r[..., j - i] above (r defaults to c)."""
    jnp = _jnp()
    c, r = _vector_pair("toeplitz", c, r)
    m, n = c.shape[-1], r.shape[-1]
    vals = jnp.concatenate([c, r[..., 1:]], axis=-1)
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return _gathered(vals, np.where(i >= j, i - j, m - 1 + j - i))


def hankel(c: Any, r: Any = None) -> Any:
    """H[..., i, j] = c[..., i + j] while i + j < len(c), then r[..., i + j - len(c) + 1]
    (r defaults to zeros)."""
    jnp = _jnp()
    if r is None:
        check_arraylike("hankel", c)
        r = jnp.zeros_like(jnp.atleast_1d(jnp.asarray(c)))
    c, r = _vector_pair("hankel", c, r)
    m, n = c.shape[-1], r.shape[-1]
    vals = jnp.concatenate([c, r[..., 1:]], axis=-1)
    return _gathered(vals, np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c: Any) -> Any:
    """C[..., i, j] = c[..., (i - j) mod n]."""
    jnp = _jnp()
    check_arraylike("circulant", c)
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    return _gathered(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def block_diag(*arrs: Any) -> Any:
    """The block diagonal matrix of the arrays (scalars and vectors as 1-row matrices)."""
    jnp = _jnp()
    if not arrs:
        return jnp.zeros((1, 0))
    check_arraylike("block_diag", *arrs)
    blocks = [jnp.atleast_2d(jnp.asarray(a)) for a in arrs]
    for k, b in enumerate(blocks):
        if b.ndim > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got {b.shape} at argument {k}.")
    dtype = jnp.result_type(*blocks)
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = jnp.zeros((rows, cols), dtype)
    r0 = c0 = 0
    for b in blocks:
        out = out.at[r0:r0 + b.shape[0], c0:c0 + b.shape[1]].set(b.astype(dtype))
        r0, c0 = r0 + b.shape[0], c0 + b.shape[1]
    return out


def hilbert(n: int) -> Any:
    """H[i, j] = 1 / (i + j + 1)."""
    jnp = _jnp()
    i = jnp.arange(n, dtype=jnp.result_type(float))
    return 1.0 / (i[:, None] + i[None, :] + 1)


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """(u, p) with a = u p (side 'right') or a = p u ('left'), u with orthonormal columns
    (or rows) and p symmetric positive semidefinite; computed from the SVD whatever the
    method named (both give the same factors)."""
    jnp = _jnp()
    if side not in ("right", "left"):
        raise ValueError(f"side={side} was invalid.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"method={method} is unsupported.")
    (a,) = _inexact("polar", a)
    if get_aval(a).ndim != 2:
        raise ValueError("The input `a` must be a 2-D array.")
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    unitary = jnp.matmul(u, vh)
    if side == "right":
        p = jnp.matmul(_H(vh) * s.astype(u.dtype)[None, :], vh)
    else:
        p = jnp.matmul(u * s.astype(u.dtype)[None, :], _H(u))
    return unitary, p


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients a (highest first): first
    row -a[1:] / a[0], ones below the diagonal."""
    jnp = _jnp()
    check_arraylike("companion", a)
    a = jnp.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"Incorrect shape for companion: expected 1D array, got {a.ndim}D")
    n = a.shape[0]
    if n < 2:
        raise ValueError("The length of `a` must be at least 2.")
    first = -a[1:] / a[0]
    below = jnp.eye(n - 2, n - 1, dtype=first.dtype)
    return jnp.concatenate([first[None, :], below], axis=0)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities f in the first row, survival rates s below the
    diagonal."""
    jnp = _jnp()
    check_arraylike("leslie", f, s)
    f, s = jnp.asarray(f), jnp.asarray(s)
    if f.ndim != 1 or s.ndim != 1 or f.shape[0] != s.shape[0] + 1:
        raise ValueError("Incorrect lengths for leslie: len(f) must equal len(s) + 1, got "
                         f"f.shape={f.shape}, s.shape={s.shape}")
    dtype = jnp.result_type(f, s)
    n = f.shape[0]
    below = jnp.zeros((n - 1, n), dtype).at[jnp.arange(n - 1), jnp.arange(n - 1)].set(s)
    return jnp.concatenate([f.astype(dtype)[None, :], below], axis=0)


def hadamard(n: int, dtype: Any = int) -> Any:
    """The n x n Hadamard matrix (Sylvester's construction; n a power of 2)."""
    jnp = _jnp()
    if n < 1 or n & (n - 1):
        raise ValueError("n must be a positive power of 2.")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype=dtype)


def helmert(n: int, full: bool = False) -> Any:
    """The (n-1) x n Helmert matrix (n x n with its first row 1/sqrt(n) when full): row k
    holds k entries 1/sqrt(k (k + 1)), then -k/sqrt(k (k + 1))."""
    jnp = _jnp()
    h = np.zeros((n, n))
    h[0] = 1 / np.sqrt(n) if n else 0
    for k in range(1, n):
        h[k, :k] = 1 / np.sqrt(k * (k + 1))
        h[k, k] = -k / np.sqrt(k * (k + 1))
    return jnp.asarray(h if full else h[1:], dtype=jnp.result_type(float))


def expm_frechet(A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True
                 ) -> Any:
    """The Frechet derivative of expm at A in the direction E (the JVP of expm), with
    expm(A) first when compute_expm."""
    from ember.ad_api import jvp
    A, E = _inexact("expm_frechet", A, E)
    if get_aval(A).shape != get_aval(E).shape:
        raise ValueError("expected A and E to be the same shape, got "
                         f"{get_aval(A).shape} and {get_aval(E).shape}")
    value, derivative = jvp(expm, (A,), (E,))
    return (value, derivative) if compute_expm else derivative


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key: Any = None) -> Any:
    """Eigenvalues (ascending; and eigenvectors unless eigvals_only) of the symmetric
    tridiagonal matrix with diagonal d and off-diagonal e, from the dense eigh; select
    'a' (all) or 'i' (the indices select_range[0]..select_range[1], inclusive)."""
    jnp = _jnp()
    d, e = _inexact("eigh_tridiagonal", d, e)
    n = get_aval(d).shape[-1]
    if get_aval(e).shape[-1] != n - 1:
        raise ValueError("e must have one element fewer than d")
    t = jnp.zeros(get_aval(d).shape + (n,), get_aval(d).dtype)
    idx = jnp.arange(n)
    t = t.at[..., idx, idx].set(d)
    t = t.at[..., idx[1:], idx[:-1]].set(e).at[..., idx[:-1], idx[1:]].set(e)
    v, w = lax_linalg.eigh(t, symmetrize_input=False)
    if select == "i":
        if select_range is None:
            raise ValueError("select='i' needs select_range=(lo, hi)")
        lo, hi = (int(x) for x in select_range)
        w, v = w[..., lo:hi + 1], v[..., :, lo:hi + 1]
    elif select != "a":
        raise NotImplementedError(f"eigh_tridiagonal select={select!r} is not implemented")
    return w if eigvals_only else (w, v)


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """Not supported yet (needs LAPACK gees)."""
    raise NotImplementedError("Ember's scipy.linalg.schur is not implemented yet")


from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
