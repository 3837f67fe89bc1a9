"""ember.lax.linalg: dense linear algebra as `jax.lax.linalg` (f32, f64, c64, c128).

Input: arrays whose last two dimensions are matrices (leading dimensions batch).
Output: the primitives' results (prims/linalg.py):
  cholesky(x, symmetrize_input=True) -> lower factor (NaN when not positive definite)
  triangular_solve(a, b, left_side=False, lower=False, transpose_a=False,
                   conjugate_a=False, unit_diagonal=False) -> x
  lu(x) -> (lu, pivots, permutation); lu_pivots_to_permutation(pivots, permutation_size)
  qr(x, full_matrices=True) -> (q, r)
  eigh(x, lower=True, symmetrize_input=True, sort_eigenvalues=True) -> (v, w)
  svd(x, full_matrices=True, compute_uv=True) -> (u, s, vh), or s
  tridiagonal_solve(dl, d, du, b) -> x
  eig(x, compute_left_eigenvectors=True, compute_right_eigenvectors=True) -> [w, vl, vr]
      (the vectors as asked for; complex; CPU only, as in JAX: prims/eig.py)
`pivoting=True` QR and `subset_by_index` are not supported: they raise
NotImplementedError. Symmetrizing a complex input makes it Hermitian: (x + x^H) / 2.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import dtypes
from ember.lax import _ops as L
from ember.lax._base import aval_of
from ember.prims.eig import eig_p
from ember.prims.linalg import (
    cholesky_p,
    eigh_p,
    lu_p,
    lu_pivots_to_permutation_p,
    qr_p,
    svd_p,
    triangular_solve_p,
    tridiagonal_solve_p,
)

__all__ = ["cholesky", "cholesky_p", "eig", "eig_p", "eigh", "eigh_p", "lu", "lu_p",
           "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "qr", "qr_p", "svd",
           "svd_p", "triangular_solve", "triangular_solve_p", "tridiagonal_solve",
           "tridiagonal_solve_p"]


def _sym(x: Any, name: str) -> Any:
    """(x + x^H) / 2 over the last two dimensions (x^T for real x), staged as JAX's
    `symmetrize`: transpose, [conj,] add, div by a weak 2."""
    nd = aval_of(x).ndim
    if nd < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got "
                        f"shape={aval_of(x).shape}")
    xt = L.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    if aval_of(x).dtype.kind == "c":
        xt = L.conj(xt)
    return L.div(L.add(x, xt), 2)


def _tril(x: Any, k: int = 0) -> Any:
    """x with the entries above its diagonal k zeroed, staged as JAX's `_tril`: the
    (n, m) mask row + k >= col, broadcast over the batch, selects x or a zero."""
    shape = aval_of(x).shape
    n, m = shape[-2:]
    it = dtypes.default_int()  # (int64 under x64, as JAX's _tri)
    row = L.add(L.broadcasted_iota(it, (n, m), 0), np.asarray(k, it))
    mask = L.ge(row, L.broadcasted_iota(it, (n, m), 1))
    if len(shape) > 2:
        mask = L.broadcast(mask, shape[:-2])
    return L.select(mask, x, L.full_like(x, 0))


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor of symmetric positive definite matrices (NaN if not)."""
    if symmetrize_input:
        x = _sym(x, "cholesky")
    # (the primitive zeroes the upper triangle already; JAX's tril after it is kept so the
    # text is JAX's: an O(n^2) select beside the O(n^3) factorization)
    return _tril(cholesky_p.bind(x))


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """x with op(a) x = b (left_side) or x op(a) = b, reading a's `lower` (else upper)
    triangle; op transposes a when transpose_a (conjugate_a is moot for real a)."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting: (lu, pivots, permutation), where
    x[..., permutation, :] = L U, L unit lower (below lu's diagonal), U upper."""
    out = lu_p.bind(x)
    return out[0], out[1], out[2]


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation of range(permutation_size) made by LU's row swaps `pivots`."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, Any]:
    """QR decomposition: (q, r), q with orthonormal columns, r upper triangular."""
    if pivoting:
        raise NotImplementedError("Ember's qr does not support pivoting=True yet")
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices), pivoting=False,
                     use_magma=use_magma)
    return q, r


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: Any = None) -> tuple[Any, Any]:
    """Eigendecomposition of symmetric matrices: (v, w), eigenvectors in v's columns,
    eigenvalues w ascending."""
    if subset_by_index is not None:
        raise NotImplementedError("Ember's eigh does not support subset_by_index yet")
    if symmetrize_input:
        x = _sym(x, "eigh")
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=None, algorithm=implementation)
    return v, w


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Any:
    """Singular value decomposition: (u, s, vh) with s descending, or s alone."""
    if subset_by_index is not None:
        raise NotImplementedError("Ember's svd does not support subset_by_index yet")
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=None, algorithm=algorithm)
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False
                      ) -> Any:
    """x with A x = b for the tridiagonal A of sub-diagonal dl, diagonal d and
    super-diagonal du (each (..., m); dl[..., 0] and du[..., m-1] are not read); NaN where A
    is singular."""
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, use_magma: bool | None = None,
        implementation: Any = None) -> list[Any]:
    """Eigendecomposition of general square matrices: [w, vl, vr] (the vectors as asked
    for), complex, eigenvectors in the columns (unit norm, largest component real), the
    eigenvalues unsorted (LAPACK's geev)."""
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=False, implementation=implementation)


from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402

_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
