"""The evaluator's dense linear algebra: the `cholesky` and `triangular-solve` opcodes and the
LAPACK custom calls, in NumPy/SciPy (f32, f64, c64, c128).

Input: row-major arrays whose last two dimensions are the matrices; any leading dimensions
are a batch, each matrix solved on its own. Output: NumPy arrays, in the operand's dtype
(pivots and info codes int32). The functions here are also the primitives' eager rules
(prims/linalg.py), so eager mode and the interpreter agree.

Semantics (what each opcode / custom-call target computes, per matrix):
  cholesky(a), lower=L: the triangular factor from the L (lower) or upper triangle of a
      (read as a Hermitian matrix: a = L L^H), the other triangle zero; a matrix that is
      not positive definite gives all NaN.
  triangular-solve(a, b): BLAS trsm: x with op(a) x = b (left_side) or x op(a) = b, where
      op is the identity, transpose or adjoint (transpose_a NO_TRANSPOSE, TRANSPOSE,
      ADJOINT) of the `lower` (else upper)
      triangle of a, its diagonal taken as ones when unit_diagonal; a zero on the diagonal
      gives infinities and NaNs, never an error.
  lapack_?getrf_ffi(a) -> (lu, ipiv, info): LU with partial pivoting, P a = L U; ipiv holds
      LAPACK's 1-based row swaps, info > 0 when U has an exact zero on its diagonal.
  lapack_?geqrf_ffi(a) -> (a', tau): Householder QR (R in a' on and above the diagonal,
      the reflectors below it); lapack_?orgqr_ffi(a', tau) -> q: the product of the
      reflectors, with a's shape.
      Complex: lapack_?ungqr_ffi in orgqr's place.
  lapack_?syevd_ffi(a) -> (v, w, info): eigenvalues ascending (w, real) and eigenvectors
      (the columns of v) of the symmetric matrix read from its lower triangle
      (backend_config "uplo=U": the upper); no convergence gives NaNs. Complex:
      lapack_?heevd_ffi, the Hermitian matrix (the diagonal's imaginary parts unread).
  lapack_?gtsv_ffi(dl, d, du, b) -> (x, info): the tridiagonal solve (dl[0] and du[m-1]
      unread), NaN where the matrix is singular (info > 0).
  lapack_?gesdd_ffi(a) -> (s, u, vt, info) (backend_config "mode=A": full u and vt,
      "mode=S": reduced, "mode=N": (s, info) only): singular values descending (real).
  lapack_?geev_ffi(a) -> (w, [vl], [vr], info) (backend_config "jobvl=V|N,jobvr=V|N" says
      which eigenvector matrices are outputs): the eigenvalues and left / right eigenvectors
      (columns, unit norm, largest component real) of a general matrix, all complex; the
      real routines' conjugate pairs unpacked (v_j = x_j + i x_{j+1}, v_{j+1} its conjugate).
      No convergence (info > 0), or a NaN or infinity in the matrix (info = n + 1, geev not
      called), leaves the outputs undefined: the lowering makes NaNs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ember.hlo.evaluator.custom_calls import register_custom_call

LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                 np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
# the complex routines' names where they differ from the real ones
_COMPLEX_NAME = {"syevd": "heevd", "orgqr": "ungqr"}


def lapack_target(routine: str, dtype: Any) -> str:
    """XLA's name of the LAPACK custom call for `routine` on `dtype`: lapack_dgetrf_ffi,
    lapack_zheevd_ffi (syevd on complex128)."""
    prefix = LAPACK_PREFIX[np.dtype(dtype)]
    if prefix in "cz":
        routine = _COMPLEX_NAME.get(routine, routine)
    return f"lapack_{prefix}{routine}_ffi"


def _is_complex(a: np.ndarray) -> bool:
    return a.dtype.kind == "c"


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.empty((), dtype).real.dtype


def _H(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _lapack(name: str, dtype: np.dtype) -> Callable[..., Any]:
    from scipy.linalg import lapack

    if np.dtype(dtype).kind == "c":
        name = _COMPLEX_NAME.get(name, name)
    return lapack.get_lapack_funcs((name,), dtype=dtype)[0]


def _matrices(*arrays: np.ndarray) -> Iterator[tuple[int, ...]]:
    """The batch indices of arrays sharing leading dimensions."""
    return np.ndindex(*arrays[0].shape[:-2])


def _read_triangle(a: np.ndarray, lower: bool) -> np.ndarray:
    """The symmetric (complex: Hermitian) matrix whose `lower` (else upper) triangle is
    a's."""
    tri = np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    return tri + _H(strict)


def cholesky(a: np.ndarray, lower: bool = True) -> np.ndarray:
    a = np.asarray(a)
    out = np.zeros_like(a)
    sym = _read_triangle(a, lower)
    for idx in _matrices(a):
        try:
            low = np.linalg.cholesky(sym[idx])
            out[idx] = low if lower else _H(low)
        except np.linalg.LinAlgError:
            out[idx] = np.nan
    return out


def triangular_solve(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                     transpose_a: bool, unit_diagonal: bool, conjugate_a: bool = False
                     ) -> np.ndarray:
    """conjugate_a with transpose_a: the adjoint; alone: the conjugate of a."""
    from scipy.linalg import blas

    a, b = np.asarray(a), np.asarray(b)
    out = np.empty_like(b)
    if b.size == 0:
        return out
    trsm = blas.get_blas_funcs("trsm", dtype=b.dtype)
    conj = conjugate_a and _is_complex(a)
    if conj and not transpose_a:
        a = np.conj(a)
    trans = 2 if conj and transpose_a else int(transpose_a)
    for idx in _matrices(b):
        # BLAS on the raw arrays: no singularity check (inf/NaN as trsm gives them)
        out[idx] = trsm(1.0, a[idx], b[idx], side=0 if left_side else 1, lower=int(lower),
                        trans_a=trans, diag=int(unit_diagonal))
    return out


def getrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.asarray(a)
    k = min(a.shape[-2:])
    lu = np.array(a, copy=True)
    ipiv = np.zeros(a.shape[:-2] + (k,), np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size == 0:
        return lu, ipiv, info
    fn = _lapack("getrf", a.dtype)
    for idx in _matrices(a):
        lu[idx], piv, info[idx] = fn(a[idx])
        ipiv[idx] = piv + 1  # SciPy's wrapper makes them 0-based; LAPACK's are 1-based
    return lu, ipiv, info


def geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a)
    out = np.array(a, copy=True)
    tau = np.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    if a.size == 0:
        return out, tau
    fn = _lapack("geqrf", a.dtype)
    for idx in _matrices(a):
        out[idx], tau[idx] = fn(a[idx])[:2]
    return out, tau


def orgqr(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    q = np.zeros_like(a)
    if a.size == 0:
        return q
    fn = _lapack("orgqr", a.dtype)
    for idx in _matrices(a):
        q[idx] = fn(a[idx], tau[idx])[0]
    return q


def syevd(a: np.ndarray, lower: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # LAPACK on the column-major view of the row-major matrix (its transpose, the same
    # symmetric matrix with the other triangle), as the CPU kernel calls it, so eager mode
    # and compiled code pick the same eigenvector signs. A Hermitian matrix's transpose is
    # its conjugate, whose eigenvectors are the conjugates of its own.
    a = np.asarray(a)
    n = a.shape[-1]
    v = np.zeros_like(a)
    w = np.zeros(a.shape[:-1], _real_dtype(a.dtype))
    info = np.zeros(a.shape[:-2], np.int32)
    if n == 0:
        return v, w, info
    fn = _lapack("syevd", a.dtype)
    for idx in _matrices(a):
        w[idx], vecs, info[idx] = fn(a[idx].T, compute_v=1, lower=0 if lower else 1)
        v[idx] = np.conj(vecs) if _is_complex(a) else vecs
        if info[idx]:
            v[idx], w[idx] = np.nan, np.nan
    return v, w, info


def gesdd(a: np.ndarray, mode: str = "A") -> tuple[np.ndarray, ...]:
    # The SVD of the transpose (the column-major view, as the CPU kernel takes it):
    # a^T = U' S V'^T gives a = V' S U'^T (complex: a^T = U' S V'^H gives a = conj(V') S
    # U'^T, and conj(V') is what a row-major read of V'^H is: the same swap)
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    info = np.zeros(batch, np.int32)
    full = mode == "A"
    ushape = batch + ((m, m) if full else (m, k))
    vshape = batch + ((n, n) if full else (k, n))
    s = np.zeros(batch + (k,), _real_dtype(a.dtype))
    u = np.zeros(ushape, a.dtype)
    vt = np.zeros(vshape, a.dtype)
    if a.size == 0:
        u[...] = np.eye(*ushape[-2:], dtype=a.dtype)
        vt[...] = np.eye(*vshape[-2:], dtype=a.dtype)
        return (s, info) if mode == "N" else (s, u, vt, info)
    fn = _lapack("gesdd", a.dtype)
    for idx in _matrices(a):
        ut, s[idx], vtt, info[idx] = fn(a[idx].T, compute_uv=int(mode != "N"),
                                        full_matrices=int(full))
        if mode != "N":
            u[idx], vt[idx] = vtt.T, ut.T
        if info[idx]:
            s[idx], u[idx], vt[idx] = np.nan, np.nan, np.nan
    return (s, info) if mode == "N" else (s, u, vt, info)


def gtsv(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray]:
    # dl[..., 0] and du[..., m-1] lie outside the matrix and are not read
    b = np.asarray(b)
    x = np.array(b, copy=True)
    info = np.zeros(b.shape[:-2], np.int32)
    if b.size == 0:
        return x, info
    fn = _lapack("gtsv", b.dtype)
    for idx in np.ndindex(*b.shape[:-2]):
        if b.shape[-2] == 1:  # (SciPy's wrapper rejects the empty off-diagonals)
            info[idx] = d[idx][0] == 0
            x[idx] = b[idx] / d[idx][0] if not info[idx] else np.nan
            continue
        *_, x[idx], info[idx] = fn(dl[idx][1:], d[idx], du[idx][:-1], b[idx])
        if info[idx]:
            x[idx] = np.nan
    return x, info


def _unpack_pairs(x: np.ndarray, wi: np.ndarray) -> np.ndarray:
    """Real geev's eigenvector columns as complex ones (a pair at wi_j > 0 shares x_j,
    x_{j+1}: v_j = x_j + i x_{j+1}, v_{j+1} = x_j - i x_{j+1})."""
    out = x.astype(np.result_type(x.dtype, np.complex64))
    for j in np.flatnonzero(wi > 0):
        if j + 1 < len(wi):
            out[:, j] = x[:, j] + 1j * x[:, j + 1]
            out[:, j + 1] = x[:, j] - 1j * x[:, j + 1]
    return out


def geev(a: np.ndarray, left: bool = True, right: bool = True) -> tuple[np.ndarray, ...]:
    a = np.asarray(a)
    n = a.shape[-1]
    cdtype = np.result_type(a.dtype, np.complex64)
    w = np.zeros(a.shape[:-1], cdtype)
    vl = np.zeros(a.shape, cdtype)
    vr = np.zeros(a.shape, cdtype)
    info = np.zeros(a.shape[:-2], np.int32)
    if n:
        fn = _lapack("geev", a.dtype)
        for idx in _matrices(a):
            if not np.all(np.isfinite(a[idx])):  # (geev calls it an illegal argument)
                info[idx] = n + 1
                continue
            if _is_complex(a):
                w[idx], lv, rv, info[idx] = fn(a[idx], compute_vl=int(left),
                                               compute_vr=int(right))
            else:
                wr, wi, lv, rv, info[idx] = fn(a[idx], compute_vl=int(left),
                                               compute_vr=int(right))
                w[idx] = wr + 1j * wi
                lv, rv = _unpack_pairs(lv, wi), _unpack_pairs(rv, wi)
            if left:
                vl[idx] = lv
            if right:
                vr[idx] = rv
    return (w, *([vl] if left else []), *([vr] if right else []), info)


def _config(backend_config: str | None) -> dict[str, str]:
    """'uplo=L,mode=S' -> {'uplo': 'L', 'mode': 'S'}."""
    if not backend_config:
        return {}
    return dict(item.split("=", 1) for item in backend_config.split(",") if "=" in item)


def _register() -> None:
    def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, shape: Any, backend_config: str | None = None) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # singular matrices are results, not errors
                return fn(*args, **_config(backend_config))
        return run

    for p in "sdcz":
        orgqr_name, syevd_name = ("ungqr", "heevd") if p in "cz" else ("orgqr", "syevd")
        register_custom_call(f"lapack_{p}getrf_ffi", quiet(lambda a: getrf(a)))
        register_custom_call(f"lapack_{p}geqrf_ffi", quiet(lambda a: geqrf(a)))
        register_custom_call(f"lapack_{p}{orgqr_name}_ffi", quiet(lambda a, tau: orgqr(a, tau)))
        register_custom_call(f"lapack_{p}{syevd_name}_ffi",
                             quiet(lambda a, uplo="L": syevd(a, uplo == "L")))
        register_custom_call(f"lapack_{p}gtsv_ffi", quiet(lambda *ops: gtsv(*ops)))
        register_custom_call(f"lapack_{p}geev_ffi", quiet(
            lambda a, jobvl="N", jobvr="N": geev(a, jobvl == "V", jobvr == "V")))
        register_custom_call(f"lapack_{p}gesdd_ffi",
                             quiet(lambda a, mode="A": gesdd(a, mode)))


_register()

__all__ = ["LAPACK_PREFIX", "cholesky", "geev", "geqrf", "gesdd", "getrf", "gtsv",
           "lapack_target", "orgqr", "syevd", "triangular_solve"]
