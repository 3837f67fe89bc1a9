"""Dense linear algebra primitives (f32, f64, c64, c128): cholesky, triangular_solve, lu,
lu_pivots_to_permutation, qr, eigh and svd, as `jax.lax.linalg` defines them.

Input: arrays whose last two dimensions are matrices; leading dimensions are a batch.
Output (per matrix; the NumPy rules are the evaluator's, hlo/evaluator/linalg.py):
  cholesky(a) -> l            lower factor of the lower triangle of a (a = l l^H), zeros
                              above the diagonal; NaN on and below the diagonal if a is not
                              positive definite (as JAX)
  triangular_solve(a, b)      x with op(a) x = b (left_side) or x op(a) = b; params
                              left_side, lower, transpose_a, conjugate_a, unit_diagonal
                              (op = a, a^T, conj(a) or a^H by the two flags)
  lu(a) -> (lu, pivots, permutation)  P a = L U with partial pivoting, L unit lower and U
                              packed in lu; int32 0-based row swaps (min(m, n)) and the
                              permutation they make (m)
  lu_pivots_to_permutation(pivots; permutation_size) -> permutation (int32)
  qr(a; full_matrices) -> (q, r)   q orthonormal columns (m x m full, m x k reduced),
                              r upper triangular (m x n full, k x n reduced), k = min(m, n)
  eigh(a; lower, sort_eigenvalues) -> (v, w)   symmetric (Hermitian) eigendecomposition
                              from the lower (or upper) triangle: eigenvalues ascending
                              (real dtype), eigenvectors in v's columns
  svd(a; full_matrices, compute_uv) -> (s, u, vt) or (s,)   singular values descending
                              (real dtype), a = u diag(s) vt
  tridiagonal_solve(dl, d, du, b; perturb_singular) -> x   the tridiagonal system (sub-,
                              main and super-diagonal, each (..., m); dl[0], du[m-1]
                              unread) solved for b (..., m, n); NaN where singular
                              (perturb_singular=True, JAX's perturbed pivots, is refused)
HLO: cholesky and triangular-solve are XLA opcodes; the rest are custom calls named as
XLA's CPU LAPACK calls are (lapack_dgetrf_ffi, lapack_sgeqrf_ffi + lapack_sorgqr_ffi,
lapack_dsyevd_ffi, lapack_dgesdd_ffi, lapack_dgtsv_ffi; complex: lapack_zheevd_ffi,
lapack_cungqr_ffi, ...), with XLA's info codes turned into NaNs here, as JAX's lowering
does. The JVP and batching rules are in `_linalg_rules.py`. Other dtypes (integers,
halves) are refused with a TypeError naming the dtype.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.hlo.builder import Builder
from ember.hlo.evaluator import linalg as npl
from ember.hlo.shape import Shape, numpy_dtype
from ember.prims import _eager_native
from ember.prims import _lower as L

cholesky_p = Primitive("cholesky")
cholesky_p.hlo_opcode = "cholesky"  # type: ignore[attr-defined]
triangular_solve_p = Primitive("triangular_solve")
triangular_solve_p.hlo_opcode = "triangular-solve"  # type: ignore[attr-defined]
lu_p = Primitive("lu", multiple_results=True)
lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")
qr_p = Primitive("qr", multiple_results=True)
eigh_p = Primitive("eigh", multiple_results=True)
svd_p = Primitive("svd", multiple_results=True)
tridiagonal_solve_p = Primitive("tridiagonal_solve")


# -- shape checks ---------------------------------------------------------------------------------

_LAPACK_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                              np.complex128))


def _real_dtype(dtype: Any) -> np.dtype:
    """c64 -> f32, c128 -> f64; real dtypes unchanged."""
    return np.empty((), dtype).real.dtype


def _check_float(name: str, a: ShapedArray, position: int = 0) -> None:
    if np.dtype(a.dtype) not in _LAPACK_DTYPES:
        kinds = "floating, complexfloating"
        raise TypeError(f"{name} does not accept dtype {a.dtype} at position {position}. "
                        f"Accepted dtypes at position {position} are subtypes of {kinds}."
                        if dtypes.kind(np.dtype(a.dtype)) not in "fc" else
                        f"{name} requires a float32, float64, complex64 or complex128 "
                        f"operand, got {a.dtype}")


def _check_matrix(name: str, a: ShapedArray, square: bool = False) -> None:
    _check_float(name, a)
    if a.ndim < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got "
                        f"shape={a.shape}")
    if square and a.shape[-1] != a.shape[-2]:
        what = {"eigh": "symmetric eigendecomposition"}.get(name, name)
        raise ValueError(f"Argument to {what} must have shape [..., n, n], got shape "
                         f"{a.shape}")


def _check_no_subset(name: str, subset_by_index: Any) -> None:
    """JAX's `subset_by_index` param: only None (every value) is computed here."""
    if subset_by_index is not None:
        raise NotImplementedError(f"Ember's {name} does not support subset_by_index yet")


def _check_no_pivoting(pivoting: bool) -> None:
    if pivoting:
        raise NotImplementedError("Ember's qr does not support pivoting=True yet")


# -- cholesky ------------------------------------------------------------------------------------

@cholesky_p.def_abstract_eval
def _cholesky_abstract(a: ShapedArray) -> ShapedArray:
    _check_matrix("cholesky", a, square=True)
    return ShapedArray(a.shape, a.dtype)


@cholesky_p.def_impl
def _cholesky_impl(a: np.ndarray) -> np.ndarray:
    out = _eager_native.compiled(cholesky_p, [a], {})
    if out is not None:  # (float operands: jit's bits, ember/eager_native.py)
        return out
    return np.tril(npl.cholesky(a, lower=True))  # as the lowering: NaN below, 0 above


def _tri_mask(ctx: Any, shape: tuple[int, ...], lower: bool, k: int = 0) -> Any:
    """pred[shape]: (row >= col - k) for lower, (row <= col - k) for upper (diagonal k)."""
    b = ctx.b
    nd = len(shape)
    row = b.iota(Shape("s32", shape), nd - 2)
    col = b.iota(Shape("s32", shape), nd - 1)
    if k:
        col = b.subtract(col, b.broadcast(b.constant(np.int32(k)), shape, ()))
    return b.compare(row, col, "GE" if lower else "LE")


def _triangle(ctx: Any, x: Any, lower: bool, k: int = 0) -> Any:
    """x with the entries outside its lower (upper) triangle zeroed: tril/triu."""
    shape = tuple(x.shape.dimensions)
    dtype = numpy_dtype(x.shape.element_type)
    zero = ctx.b.broadcast(ctx.b.constant(np.zeros((), dtype)), shape, ())
    return ctx.b.select(_tri_mask(ctx, shape, lower, k), x, zero)


@cholesky_p.def_lowering
def _cholesky_lowering(ctx: Any, a: Any) -> Any:
    # XLA leaves the other triangle unspecified: zero it, as the result promises
    return _triangle(ctx, ctx.b.op("cholesky", [a], {"lower": True}), lower=True)


# -- triangular_solve --------------------------------------------------------------------------

@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract(a: ShapedArray, b: ShapedArray, *, left_side: bool, lower: bool,
                               transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                               ) -> ShapedArray:
    _check_float("triangular_solve", a)
    _check_float("triangular_solve", b, 1)
    for k, x in enumerate((a, b)):
        if x.ndim < 2:
            raise TypeError(f"Input {k} to triangular_solve must have rank at least 2, but "
                            f"got shape={x.shape}")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a.shape}.")
    if a.dtype != b.dtype:
        raise TypeError("triangular_solve requires both arguments to have the same dtype, "
                        f"got {a.dtype} and {b.dtype}.")
    common = b.shape[-2] if left_side else b.shape[-1]
    if common != a.shape[-1] or b.ndim != a.ndim or a.shape[:-2] != b.shape[:-2]:
        raise ValueError("Incompatible shapes for arguments to triangular_solve: "
                         f"{a.shape} and {b.shape}.")
    return ShapedArray(b.shape, b.dtype)


@triangular_solve_p.def_impl
def _triangular_solve_impl(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                           transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                           ) -> np.ndarray:
    params = {"left_side": left_side, "lower": lower, "transpose_a": transpose_a,
              "conjugate_a": conjugate_a, "unit_diagonal": unit_diagonal}
    out = _eager_native.compiled(triangular_solve_p, [a, b], params)
    if out is not None:  # (float operands: jit's bits, ember/eager_native.py)
        return out
    return npl.triangular_solve(a, b, left_side=left_side, lower=lower,
                                transpose_a=transpose_a, conjugate_a=conjugate_a,
                                unit_diagonal=unit_diagonal)


@triangular_solve_p.def_lowering
def _triangular_solve_lowering(ctx: Any, a: Any, b: Any, *, left_side: bool, lower: bool,
                               transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                               ) -> Any:
    is_complex = dtypes.kind(np.dtype(ctx.avals_in[0].dtype)) == "c"
    conj = conjugate_a and is_complex  # (real: conjugation is the identity)
    if conj and not transpose_a:  # XLA has no conjugate-only solve: conjugate a first
        a = ctx.b.op("complex", (ctx.b.op("real", (a,)),
                                 ctx.b.negate(ctx.b.op("imag", (a,)))))
    mode = ("ADJOINT" if conj else "TRANSPOSE") if transpose_a else "NO_TRANSPOSE"
    attrs = {"left_side": left_side, "lower": lower, "unit_diagonal": unit_diagonal,
             "transpose_a": mode}
    return ctx.b.op("triangular-solve", [a, b], attrs)


# -- lu ------------------------------------------------------------------------------------------

def _permutation_np(pivots: np.ndarray, size: int) -> np.ndarray:
    perm = np.empty(pivots.shape[:-1] + (size,), np.int32)
    for idx in np.ndindex(*pivots.shape[:-1]):
        # (the swaps are sequential: on Python lists, not NumPy scalars, 10x faster)
        p = list(range(size))
        for k, j in enumerate(pivots[idx].tolist()):
            p[k], p[j] = p[j], p[k]
        perm[idx] = p
    return perm


@lu_p.def_abstract_eval
def _lu_abstract(a: ShapedArray) -> list[ShapedArray]:
    _check_matrix("lu", a)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (min(m, n),), np.dtype(np.int32)),
            ShapedArray(batch + (m,), np.dtype(np.int32))]


@lu_p.def_impl
def _lu_impl(a: np.ndarray) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lu, ipiv, _ = npl.getrf(a)
    pivots = ipiv - 1
    return [lu, pivots, _permutation_np(pivots, a.shape[-2])]


def _permutation_hlo(ctx: Any, pivots: Any, size: int) -> Any:
    """HLO: the permutation `pivots`' swaps make of iota(size), as a while loop over the
    pivots whose step swaps perm[k] and perm[pivots[k]] with one-hot selects, so every
    batch element swaps its own entries (O(k size) work, beside LU's O(size^3))."""
    b = ctx.b
    pshape = tuple(pivots.shape.dimensions)
    batch, k = pshape[:-1], pshape[-1]
    perm_shape = batch + (size,)
    if k == 0:
        return b.iota(Shape("s32", perm_shape), len(batch))
    s32 = Shape("s32", ())
    state = Shape.tuple_of([s32, Shape("s32", perm_shape), Shape("s32", pshape)])
    add = Builder.scalar_computation("add", "s32")

    cb = Builder("lu_perm_cond")
    p = cb.parameter(state, "state")
    i = cb.get_tuple_element(p, 0)
    cond = cb.build_computation(cb.compare(i, cb.constant(np.int32(k)), "LT"))

    bb = Builder("lu_perm_body")
    p = bb.parameter(state, "state")
    i, perm, piv = (bb.get_tuple_element(p, j) for j in range(3))
    zero = bb.constant(np.int32(0))
    nb = len(batch)
    pk = bb.dynamic_slice(piv, [zero] * nb + [i], batch + (1,))
    pk = bb.broadcast(bb.reshape(pk, batch), perm_shape, tuple(range(nb)))
    iota = bb.iota(Shape("s32", perm_shape), nb)
    is_k = bb.compare(iota, bb.broadcast(i, perm_shape, ()), "EQ")
    is_p = bb.compare(iota, pk, "EQ")
    zeros = bb.broadcast(zero, perm_shape, ())

    def pick(mask: Any) -> Any:  # perm[..., where mask], broadcast back over the row
        row = bb.reduce(bb.select(mask, perm, zeros), zero, (nb,), add)
        return bb.broadcast(row, perm_shape, tuple(range(nb)))

    at_k, at_p = pick(is_k), pick(is_p)
    new = bb.select(is_k, at_p, bb.select(is_p, at_k, perm))
    nxt = bb.add(i, bb.constant(np.int32(1)))
    body = bb.build_computation(bb.tuple([nxt, new, piv]))

    init_perm = b.iota(Shape("s32", perm_shape), nb)
    out = b.while_loop(cond, body, b.tuple([b.constant(np.int32(0)), init_perm, pivots]))
    return b.get_tuple_element(out, 1)


def _nan_unless_ok(ctx: Any, x: Any, info: Any, ok: str = "EQ") -> Any:
    """x where the matrix's info code is 0 (ok="GE": >= 0), NaN elsewhere (per matrix)."""
    b = ctx.b
    shape = tuple(x.shape.dimensions)
    batch = tuple(info.shape.dimensions)
    good = b.compare(info, b.broadcast(b.constant(np.int32(0)), batch, ()) if batch
                     else b.constant(np.int32(0)), ok)
    good = b.broadcast(good, shape, tuple(range(len(batch))))
    nan_value = complex(np.nan, np.nan)  # (complex results: NaN in both parts)
    dtype = numpy_dtype(x.shape.element_type)
    nan = b.broadcast(b.constant(np.array(nan_value if dtype.kind == "c" else np.nan, dtype)),
                      shape, ())
    return b.select(good, x, nan)


def _custom(ctx: Any, routine: str, operands: list, avals: list[ShapedArray],
            config: str | None = None) -> list:
    b = ctx.b
    shapes = [Shape(L.et(a.dtype), a.shape) for a in avals]
    target = npl.lapack_target(routine, ctx.avals_in[0].dtype)
    out = b.custom_call(target, operands, Shape.tuple_of(shapes), backend_config=config)
    return [b.get_tuple_element(out, j) for j in range(len(avals))]


@lu_p.def_lowering
def _lu_lowering(ctx: Any, a: Any) -> list:
    lu_aval, piv_aval, perm_aval = ctx.avals_out
    batch = lu_aval.shape[:-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    lu, ipiv, info = _custom(ctx, "getrf", [a], [lu_aval, piv_aval, info_aval])
    one = ctx.b.broadcast(ctx.b.constant(np.int32(1)), piv_aval.shape, ())
    pivots = ctx.b.subtract(ipiv, one)
    # info > 0 (an exact zero pivot) still gives valid factors; only info < 0 is a failure
    lu = _nan_unless_ok(ctx, lu, info, "GE")
    return [lu, pivots, _permutation_hlo(ctx, pivots, lu_aval.shape[-2])]


@lu_pivots_to_permutation_p.def_abstract_eval
def _l2p_abstract(pivots: ShapedArray, *, permutation_size: int) -> ShapedArray:
    if np.dtype(pivots.dtype) != np.dtype(np.int32) or pivots.ndim < 1:
        raise ValueError("Argument to lu_pivots_to_permutation must have rank >= 1 and "
                         f"dtype int32. Got shape={pivots.shape} and dtype={pivots.dtype}")
    if permutation_size < pivots.shape[-1]:
        raise ValueError("Output permutation size must match or exceed the trailing "
                         f"dimension of the pivots. Got pivots.shape[-1]={pivots.shape[-1]} "
                         f"and permutation_size={permutation_size}.")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), np.dtype(np.int32))


@lu_pivots_to_permutation_p.def_impl
def _l2p_impl(pivots: np.ndarray, *, permutation_size: int) -> np.ndarray:
    return _permutation_np(np.asarray(pivots), permutation_size)


@lu_pivots_to_permutation_p.def_lowering
def _l2p_lowering(ctx: Any, pivots: Any, *, permutation_size: int) -> Any:
    return _permutation_hlo(ctx, pivots, permutation_size)


# -- qr ------------------------------------------------------------------------------------------

def _qr_shapes(a: ShapedArray, full_matrices: bool) -> tuple[tuple, tuple]:
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    if full_matrices:
        return batch + (m, m), batch + (m, n)
    return batch + (m, k), batch + (k, n)


@qr_p.def_abstract_eval
def _qr_abstract(a: ShapedArray, *, full_matrices: bool, pivoting: bool = False,
                 use_magma: Any = None) -> list[ShapedArray]:
    _check_no_pivoting(pivoting)
    _check_matrix("qr", a)
    qs, rs = _qr_shapes(a, full_matrices)
    return [ShapedArray(qs, a.dtype), ShapedArray(rs, a.dtype)]


@qr_p.def_impl
def _qr_impl(a: np.ndarray, *, full_matrices: bool, pivoting: bool = False,
             use_magma: Any = None) -> list[np.ndarray]:
    m, n = a.shape[-2:]
    k = min(m, n)
    h, tau = npl.geqrf(a)
    if full_matrices and m > n:
        pad = [(0, 0)] * (a.ndim - 1) + [(0, m - n)]
        q = npl.orgqr(np.pad(h, pad), tau)
        r = np.triu(h)
    else:
        q = npl.orgqr(h[..., :, :k], tau)
        r = np.triu(h[..., :k, :])
    return [q, r]


@qr_p.def_lowering
def _qr_lowering(ctx: Any, a: Any, *, full_matrices: bool, pivoting: bool = False,
                 use_magma: Any = None) -> list:
    b = ctx.b
    aval = ctx.avals_in[0]
    nd, (m, n) = aval.ndim, aval.shape[-2:]
    k = min(m, n)
    batch = aval.shape[:-2]
    h, tau = _custom(ctx, "geqrf", [a], [aval, ShapedArray(batch + (k,), aval.dtype)])
    starts = [0] * nd
    if full_matrices and m > n:
        zero = b.constant(np.zeros((), aval.dtype))
        padded = b.pad(h, zero, [(0, 0, 0)] * (nd - 1) + [(0, m - n, 0)])
        q_in, r = padded, h
    else:
        q_in = b.slice(h, starts, list(batch) + [m, k])
        r = b.slice(h, starts, list(batch) + [k, n])
    q_aval = ShapedArray(tuple(q_in.shape.dimensions), aval.dtype)
    shapes = Shape(L.et(aval.dtype), q_aval.shape)
    q = b.custom_call(npl.lapack_target("orgqr", aval.dtype), [q_in, tau], shapes)
    return [q, _triangle(ctx, r, lower=False)]


# -- eigh ----------------------------------------------------------------------------------------

@eigh_p.def_abstract_eval
def _eigh_abstract(a: ShapedArray, *, lower: bool, sort_eigenvalues: bool,
                   subset_by_index: Any = None, algorithm: Any = None) -> list[ShapedArray]:
    _check_no_subset("eigh", subset_by_index)
    _check_matrix("eigh", a, square=True)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], _real_dtype(a.dtype))]


@eigh_p.def_impl
def _eigh_impl(a: np.ndarray, *, lower: bool, sort_eigenvalues: bool,
               subset_by_index: Any = None, algorithm: Any = None) -> list[np.ndarray]:
    v, w, _ = npl.syevd(a, lower)
    return [v, w]  # syevd's eigenvalues are ascending already


@eigh_p.def_lowering
def _eigh_lowering(ctx: Any, a: Any, *, lower: bool, sort_eigenvalues: bool,
                   subset_by_index: Any = None, algorithm: Any = None) -> list:
    v_aval, w_aval = ctx.avals_out
    info_aval = ShapedArray(v_aval.shape[:-2], np.dtype(np.int32))
    v, w, info = _custom(ctx, "syevd", [a], [v_aval, w_aval, info_aval],
                         "uplo=L" if lower else "uplo=U")
    return [_nan_unless_ok(ctx, v, info), _nan_unless_ok(ctx, w, info)]


# -- svd -----------------------------------------------------------------------------------------

def _svd_avals(a: ShapedArray, full_matrices: bool, compute_uv: bool) -> list[ShapedArray]:
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    s = ShapedArray(batch + (k,), _real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    us, vs = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return [s, ShapedArray(batch + us, a.dtype), ShapedArray(batch + vs, a.dtype)]


@svd_p.def_abstract_eval
def _svd_abstract(a: ShapedArray, *, full_matrices: bool, compute_uv: bool,
                  subset_by_index: Any = None, algorithm: Any = None) -> list[ShapedArray]:
    _check_no_subset("svd", subset_by_index)
    _check_matrix("svd", a)
    return _svd_avals(a, full_matrices, compute_uv)


def _svd_mode(full_matrices: bool, compute_uv: bool) -> str:
    return "N" if not compute_uv else ("A" if full_matrices else "S")


@svd_p.def_impl
def _svd_impl(a: np.ndarray, *, full_matrices: bool, compute_uv: bool,
              subset_by_index: Any = None, algorithm: Any = None) -> list[np.ndarray]:
    return list(npl.gesdd(a, _svd_mode(full_matrices, compute_uv))[:-1])


@svd_p.def_lowering
def _svd_lowering(ctx: Any, a: Any, *, full_matrices: bool, compute_uv: bool,
                  subset_by_index: Any = None, algorithm: Any = None) -> list:
    avals = list(ctx.avals_out)
    info_aval = ShapedArray(avals[0].shape[:-1], np.dtype(np.int32))
    *outs, info = _custom(ctx, "gesdd", [a], avals + [info_aval],
                          "mode=" + _svd_mode(full_matrices, compute_uv))
    return [_nan_unless_ok(ctx, x, info) for x in outs]


# -- tridiagonal_solve ---------------------------------------------------------------------

@tridiagonal_solve_p.def_abstract_eval
def _tridiagonal_solve_abstract(dl: ShapedArray, d: ShapedArray, du: ShapedArray,
                                b: ShapedArray, *, perturb_singular: bool = False
                                ) -> ShapedArray:
    if perturb_singular:
        raise NotImplementedError("Ember's tridiagonal_solve does not support "
                                  "perturb_singular=True yet")
    for k, x in enumerate((dl, d, du)):
        _check_float("tridiagonal_solve", x, k)
        if x.ndim < 1:
            raise TypeError(f"Input {k} to tridiagonal_solve must have rank at least 1, but "
                            f"got shape={x.shape}")
    _check_float("tridiagonal_solve", b, 3)
    if b.ndim < 2:
        raise TypeError("Input 3 to tridiagonal_solve must have rank at least 2, but got "
                        f"shape={b.shape}")
    if not dl.shape == d.shape == du.shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                        "shape.")
    if dl.shape != b.shape[:-1]:
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        "equal the dimensions of the diagonal arguments.")
    if len({np.dtype(x.dtype) for x in (dl, d, du, b)}) != 1:
        raise TypeError("tridiagonal_solve requires all arguments to have the same dtype.")
    return ShapedArray(b.shape, b.dtype)


@tridiagonal_solve_p.def_impl
def _tridiagonal_solve_impl(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray,
                            *, perturb_singular: bool = False) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return npl.gtsv(dl, d, du, b)[0]


@tridiagonal_solve_p.def_lowering
def _tridiagonal_solve_lowering(ctx: Any, dl: Any, d: Any, du: Any, b: Any, *,
                                perturb_singular: bool = False) -> Any:
    x_aval = ctx.avals_out[0]
    info_aval = ShapedArray(x_aval.shape[:-2], np.dtype(np.int32))
    x, info = _custom(ctx, "gtsv", [dl, d, du, b], [x_aval, info_aval])
    return _nan_unless_ok(ctx, x, info)


# the JVP and batching rules
from ember.prims import _linalg_rules  # noqa: E402, F401

__all__ = ["cholesky_p", "eigh_p", "lu_p", "lu_pivots_to_permutation_p", "qr_p", "svd_p",
           "triangular_solve_p", "tridiagonal_solve_p"]
