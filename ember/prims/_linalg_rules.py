"""JVP, transpose and batching rules of the linear algebra primitives (prims/linalg.py).

Input: primals and tangents (JVP), cotangents (transpose), batched operands (vmap).
Output: the rules, registered on import. The derivatives are the standard ones JAX uses,
written with bind-level operations on batches of matrices (leading dimensions batch);
X^H is the conjugate transpose (X^T for real X):
  cholesky:  A = L L^H, dL = L Phi(L^-1 sym(dA) L^-H), Phi = lower triangle, diagonal halved
  triangular_solve: linear in b (transpose: the solve with op(a) transposed); in a, the
             solve of -op(da) x (left) or -x op(da) (right), da cut to a's read triangle
  lu:        with X = L^-1 P dA U^-1 (L, U padded to squares), dL = L tril(X, -1),
             dU = triu(X) U
  qr:        (m >= n or square) with C = Q^H dA R^-1, Omega = tril(C, -1) - tril(C, -1)^H
             plus i Im(diag C) (complex): dQ = Q (Omega - C) + dA R^-1, dR = (C - Omega) R
  eigh:      with V^H dA V = G: dw = Re diag(G), dV = V (F o G), F_ij = 1 / (w_j - w_i),
             F_ii = 0
  svd:       the reduced SVD's derivative (full matrices only for square inputs)
  tridiagonal_solve: linear in b (transpose: the solve with A^T); in the diagonals,
             dx = -A^-1 (dA x)
Every primitive batches over leading dimensions, so its batching rule moves the batch axis
to the front, except where the matrix (triangular_solve) or the diagonals
(tridiagonal_solve) are unmapped: then the batch joins b's columns and one solve serves
every member (JAX's rules; the matrix is never copied per member).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.batching import AxisData
from ember.core.trace import get_aval
from ember.prims import _ad
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

# -- matrix helpers (bind level) -----------------------------------------------------------------


def _mm(x: Any, y: Any) -> Any:
    """Batched matrix product over the leading dimensions (operands of one rank)."""
    from ember.prims.dot import dot_general_p
    nd = get_aval(x).ndim
    batch = tuple(range(nd - 2))
    dt = get_aval(x).dtype
    return dot_general_p.bind(x, y, dimension_numbers=(((nd - 1,), (nd - 2,)), (batch, batch)),
                              precision=None, preferred_element_type=dt, out_sharding=None)


def _T(x: Any) -> Any:
    nd = get_aval(x).ndim
    return _ad.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _is_complex(x: Any) -> bool:
    return np.dtype(get_aval(x).dtype).kind == "c"


def _conj(x: Any) -> Any:
    from ember.prims.complex_parts import conj
    return conj(x) if _is_complex(x) else x


def _H(x: Any) -> Any:
    """The conjugate transpose of matrices (the transpose of real ones)."""
    return _conj(_T(x))


def _real(x: Any) -> Any:
    from ember.prims.complex_parts import real
    return real(x) if _is_complex(x) else x


def _as(x: Any, like: Any) -> Any:
    """x converted to like's dtype (a real x into a complex one: a zero imaginary part)."""
    return _ad.convert(x, get_aval(like).dtype)


def _iota(shape: tuple[int, ...], dim: int) -> Any:
    from ember.prims.shape_ops import iota_p
    return iota_p.bind(dtype=np.dtype(np.int32), shape=shape, dimension=dim, sharding=None)


def _mask(shape: tuple[int, ...], direction: str, k: int = 0) -> Any:
    """pred: row `direction` col + k (GE: lower triangle from diagonal k)."""
    nd = len(shape)
    row, col = _iota(shape, nd - 2), _iota(shape, nd - 1)
    if k:
        col = _ad.sub(col, _ad.full_like(col, k))
    return _ad.compare({"GE": "ge", "LE": "le", "EQ": "eq", "GT": "gt", "LT": "lt"}[direction],
                       row, col)


def _where(mask: Any, x: Any) -> Any:
    return _ad.select(mask, x, _ad.full_like(x, 0))


def _tril(x: Any, k: int = 0) -> Any:
    return _where(_mask(get_aval(x).shape, "GE", k), x)


def _triu(x: Any, k: int = 0) -> Any:
    return _where(_mask(get_aval(x).shape, "LE", k), x)


def _eye_like(shape: tuple[int, ...], dtype: Any) -> Any:
    return _ad.convert(_mask(shape, "EQ"), dtype)


def _diag(x: Any) -> Any:
    """The diagonal of square matrices: [..., n, n] -> [..., n]."""
    aval = get_aval(x)
    return _ad.reduce_sum(_where(_mask(aval.shape, "EQ"), x), (aval.ndim - 1,))


def _pad_last2(x: Any, rows: int, cols: int) -> Any:
    """x padded with zeros at the end of its last two dimensions."""
    from ember.prims.slicing import pad_p
    aval = get_aval(x)
    cfg = ((0, 0, 0),) * (aval.ndim - 2) + ((0, rows, 0), (0, cols, 0))
    return pad_p.bind(x, np.zeros((), aval.dtype), padding_config=cfg)


def _slice_last2(x: Any, rows: int, cols: int) -> Any:
    from ember.prims.slicing import slice_p
    aval = get_aval(x)
    nd = aval.ndim
    return slice_p.bind(x, start_indices=(0,) * nd, limit_indices=aval.shape[:-2] + (rows, cols),
                        strides=None)


def _solve(a: Any, b: Any, **params: Any) -> Any:
    full = dict(left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                unit_diagonal=False)
    full.update(params)
    return triangular_solve_p.bind(a, b, **full)


# -- cholesky ------------------------------------------------------------------------------------

def _cholesky_jvp(primals: list, tangents: list) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    low = cholesky_p.bind(a)
    if isinstance(da, ad.Zero):
        return low, ad.Zero(get_aval(low))
    sym = _ad.mul(_ad.add(da, _H(da)), _ad.full_like(da, 0.5))
    x = _solve(low, sym, left_side=False, lower=True, transpose_a=True,
               conjugate_a=True)  # dA L^-H
    x = _solve(low, x, left_side=True, lower=True)  # L^-1 dA L^-T
    phi = _ad.sub(_tril(x), _ad.mul(_where(_mask(get_aval(x).shape, "EQ"), x),
                                    _ad.full_like(x, 0.5)))
    return low, _mm(low, phi)


cholesky_p.def_jvp(_cholesky_jvp)


# -- triangular_solve ----------------------------------------------------------------------------

def _read_part(da: Any, lower: bool, unit_diagonal: bool) -> Any:
    """The part of da the solve reads: its triangle, without the diagonal if unit."""
    k = (-1 if lower else 1) if unit_diagonal else 0
    return _tril(da, k) if lower else _triu(da, k)


def _triangular_solve_jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    (a, b), (da, db) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    out: Any = ad.Zero(get_aval(x))
    if not isinstance(db, ad.Zero):
        out = triangular_solve_p.bind(a, db, **params)
    if not isinstance(da, ad.Zero):
        op_da = _read_part(da, params["lower"], params["unit_diagonal"])
        if params["transpose_a"]:
            op_da = _T(op_da)
        if params["conjugate_a"]:
            op_da = _conj(op_da)
        rhs = _mm(op_da, x) if params["left_side"] else _mm(x, op_da)
        out = ad.add_tangents(out, _ad.neg(triangular_solve_p.bind(a, rhs, **params)))
    return x, out


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, **params: Any) -> list:
    if ad.is_undefined_primal(a):
        raise ValueError("triangular_solve is linear in b only")
    if isinstance(ct, ad.Zero):
        return [None, ad.Zero(b.aval)]
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, ct, **flipped)]


triangular_solve_p.def_jvp(_triangular_solve_jvp)
triangular_solve_p.def_transpose(_triangular_solve_transpose)


# -- lu --------------------------------------------------------------------------------------

def _permute_rows(x: Any, perm: Any) -> Any:
    """x[..., perm, :]: rows gathered by a batched permutation, as a one-hot product
    (P x with P_ij = [perm_i == j]), which vmap and autodiff handle as a dot."""
    aval = get_aval(x)
    m = aval.shape[-2]
    shape = aval.shape[:-2] + (m, m)
    nd = len(shape)
    p = _ad.broadcast_in_dim(perm, shape, tuple(range(nd - 1)))
    onehot = _ad.convert(_ad.compare("eq", p, _iota(shape, nd - 1)), aval.dtype)
    return _mm(onehot, x)


def _solve_lu(a: Any, b: Any) -> Any:
    """a^-1 b for square a (..., n, n) and b (..., n, k), through a's LU factors."""
    lu, _, perm = lu_p.bind(a)
    y = _solve(lu, _permute_rows(b, perm), left_side=True, lower=True, unit_diagonal=True)
    return _solve(lu, y, left_side=True, lower=False)


def _lu_jvp(primals: list, tangents: list) -> tuple[list, list]:
    (a,), (da,) = primals, tangents
    lu, pivots, perm = lu_p.bind(a)
    zeros = [ad.Zero(get_aval(pivots)), ad.Zero(get_aval(perm))]
    if isinstance(da, ad.Zero):
        return [lu, pivots, perm], [ad.Zero(get_aval(lu))] + zeros
    aval = get_aval(a)
    batch, (m, n) = aval.shape[:-2], aval.shape[-2:]
    k = min(m, n)
    # L (m x m): the unit lower factor, padded with identity columns; U (n x n) likewise
    low = _pad_last2(_tril(_slice_last2(lu, m, k), -1), 0, m - k)
    low = _ad.add(low, _eye_like(batch + (m, m), aval.dtype))
    up = _pad_last2(_triu(_slice_last2(lu, k, n)), n - k, 0)
    up = _ad.add(up, _ad.sub(_eye_like(batch + (n, n), aval.dtype),
                             _pad_last2(_eye_like(batch + (k, k), aval.dtype), n - k, n - k)))
    la = _solve(low, _permute_rows(da, perm), left_side=True, lower=True, unit_diagonal=True)
    x = _solve(up, la, left_side=False, lower=False)
    d_lu = _ad.add(_mm(low, _tril(x, -1)), _mm(_triu(x), up))
    return [lu, pivots, perm], [d_lu] + zeros


lu_p.def_jvp(_lu_jvp)
ad.defjvp_zero(lu_pivots_to_permutation_p)


# -- qr ------------------------------------------------------------------------------------------

def _qr_jvp(primals: list, tangents: list, *, full_matrices: bool, **params: Any
            ) -> tuple[list, list]:
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices, **params)
    m, n = get_aval(a).shape[-2:]
    if m < n or (full_matrices and m > n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")
    if isinstance(da, ad.Zero):
        return [q, r], [ad.Zero(get_aval(q)), ad.Zero(get_aval(r))]
    dx_rinv = _solve(r, da, left_side=False, lower=False)  # dA R^-1
    c = _mm(_H(q), dx_rinv)
    low = _tril(c, -1)
    omega = _ad.sub(low, _H(low))
    if _is_complex(c):  # the diagonal's imaginary part (Q's phase freedom, as JAX fixes it)
        im_diag = _ad.sub(c, _as(_real(c), c))
        omega = _ad.add(omega, _where(_mask(get_aval(c).shape, "EQ"), im_diag))
    dq = _ad.add(_mm(q, _ad.sub(omega, c)), dx_rinv)
    dr = _mm(_ad.sub(c, omega), r)
    return [q, r], [dq, dr]


qr_p.def_jvp(_qr_jvp)


# -- eigh ----------------------------------------------------------------------------------------

def _inverse_gaps(w: Any, dtype: Any) -> Any:
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (and where eigenvalues are equal)."""
    aval = get_aval(w)
    n = aval.shape[-1]
    shape = aval.shape + (n,)
    nd = len(shape)
    wj = _ad.broadcast_in_dim(w, shape, tuple(range(nd - 2)) + (nd - 1,))
    wi = _ad.broadcast_in_dim(w, shape, tuple(range(nd - 1)))
    gap = _ad.sub(wj, wi)
    zero = _ad.compare("eq", gap, _ad.full_like(gap, 0))
    safe = _ad.select(zero, _ad.full_like(gap, 1), gap)
    return _ad.select(zero, _ad.full_like(gap, 0), _ad.div(_ad.full_like(gap, 1), safe))


def _eigh_jvp(primals: list, tangents: list, **params: Any) -> tuple[list, list]:
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, **params)
    if isinstance(da, ad.Zero):
        return [v, w], [ad.Zero(get_aval(v)), ad.Zero(get_aval(w))]
    g = _mm(_mm(_H(v), da), v)
    dv = _mm(v, _ad.mul(_as(_inverse_gaps(w, get_aval(w).dtype), g), g))
    return [v, w], [dv, _real(_diag(g))]


eigh_p.def_jvp(_eigh_jvp)


# -- svd -----------------------------------------------------------------------------------------

def _svd_jvp(primals: list, tangents: list, *, full_matrices: bool, compute_uv: bool,
             **params: Any) -> tuple[list, list]:
    (a,), (da,) = primals, tangents
    aval = get_aval(a)
    m, n = aval.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True, **params)
    outs = [s, u, vt] if compute_uv else [s]
    if isinstance(da, ad.Zero):
        return outs, [ad.Zero(get_aval(o)) for o in outs]
    v = _H(vt)
    ds_mat = _mm(_mm(_H(u), da), v)  # U^H dA V (k x k)
    ds = _real(_diag(ds_mat))
    if not compute_uv:
        return outs, [ds]
    kk = get_aval(s).shape[-1]
    shape = get_aval(s).shape + (kk,)
    nd = len(shape)
    sc = _as(s, a)  # (the singular values in a's dtype, to scale complex matrices)
    s_row = _ad.broadcast_in_dim(sc, shape, tuple(range(nd - 2)) + (nd - 1,))  # s_j
    s_col = _ad.broadcast_in_dim(sc, shape, tuple(range(nd - 1)))  # s_i
    # F_ij = 1 / (s_j^2 - s_i^2) off the diagonal (0 where equal)
    f = _as(_inverse_gaps(_ad.mul(s, s), get_aval(s).dtype), a)
    dss = _ad.mul(s_row, ds_mat)  # dS diag(s)
    sds = _ad.mul(s_col, ds_mat)  # diag(s) dS
    s_zero = _ad.compare("eq", s, _ad.full_like(s, 0))
    s_inv = _ad.select(s_zero, _ad.full_like(s, 0),
                       _ad.div(_ad.full_like(s, 1), _ad.select(s_zero, _ad.full_like(s, 1), s)))
    s_inv_mat = _where(_mask(shape, "EQ"), _ad.broadcast_in_dim(_as(s_inv, a), shape,
                                                                tuple(range(nd - 1))))
    half_skew = _ad.mul(_ad.mul(_ad.sub(ds_mat, _H(ds_mat)), _ad.full_like(ds_mat, 0.5)),
                        s_inv_mat)
    du = _mm(u, _ad.add(_ad.mul(f, _ad.add(dss, _H(dss))), half_skew))
    dv = _mm(v, _ad.mul(f, _ad.add(sds, _H(sds))))
    if m > n:  # the part of dA V outside U's columns
        dav = _mm(da, v)
        du = _ad.add(du, _ad.div(_ad.sub(dav, _mm(u, _mm(_H(u), dav))),
                                 _ad.broadcast_in_dim(sc, get_aval(dav).shape,
                                                      tuple(range(nd - 2)) + (nd - 1,))))
    if n > m:
        dau = _mm(_H(da), u)
        dv = _ad.add(dv, _ad.div(_ad.sub(dau, _mm(v, _mm(vt, dau))),
                                 _ad.broadcast_in_dim(sc, get_aval(dau).shape,
                                                      tuple(range(nd - 2)) + (nd - 1,))))
    return outs, [ds, du, _H(dv)]


svd_p.def_jvp(_svd_jvp)


# -- tridiagonal_solve ---------------------------------------------------------------------------
# x = A^-1 b is linear in b; in the diagonals, dx = -A^-1 (dA x) with
# (dA x)_i = ddl_i x_{i-1} + dd_i x_i + ddu_i x_{i+1} (ddl_0 and ddu_{m-1} outside A).
# The transpose in b solves with A^T, whose sub-diagonal is A's super-diagonal shifted
# down one place (dl'_i = du_{i-1}) and whose super-diagonal is A's sub-diagonal shifted up.

def _shift(v: Any, down: bool) -> Any:
    """v moved one place along its last axis (down: v'_i = v_{i-1}), zero filled."""
    aval = get_aval(v)
    m = aval.shape[-1]
    nd = aval.ndim
    from ember.prims.slicing import pad_p, slice_p
    kept = slice_p.bind(v, start_indices=(0,) * (nd - 1) + ((0,) if down else (1,)),
                        limit_indices=aval.shape[:-1] + ((m - 1,) if down else (m,)),
                        strides=None)
    cfg = ((0, 0, 0),) * (nd - 1) + (((1, 0, 0),) if down else ((0, 1, 0),))
    return pad_p.bind(kept, np.zeros((), aval.dtype), padding_config=cfg)


def _band_times(ddl: Any, dd: Any, ddu: Any, x: Any) -> Any:
    """(dA x) for the tridiagonal dA of (ddl, dd, ddu), x (..., m, n)."""
    aval = get_aval(x)
    nd = aval.ndim

    def col(v: Any) -> Any:  # (..., m) -> (..., m, n)
        return _ad.broadcast_in_dim(v, aval.shape, tuple(range(nd - 1)))

    xt = _T(x)  # (..., n, m): shift rows through the last axis
    x_prev = _T(_shift(xt, down=True))  # x_{i-1}
    x_next = _T(_shift(xt, down=False))  # x_{i+1}
    m = aval.shape[-2]
    lo = _ad.mul(ddl, _ad.convert(_ad.compare("gt", _iota(get_aval(ddl).shape, nd - 2),
                                              _ad.full_like(_iota(get_aval(ddl).shape, nd - 2),
                                                            0)), get_aval(ddl).dtype))
    up = _ad.mul(ddu, _ad.convert(_ad.compare("lt", _iota(get_aval(ddu).shape, nd - 2),
                                              _ad.full_like(_iota(get_aval(ddu).shape, nd - 2),
                                                            m - 1)), get_aval(ddu).dtype))
    return _ad.add(_ad.add(_ad.mul(col(lo), x_prev), _ad.mul(col(dd), x)),
                   _ad.mul(col(up), x_next))


def _tridiagonal_solve_jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    dl, d, du, b = primals
    tdl, td, tdu, tb = tangents
    x = tridiagonal_solve_p.bind(dl, d, du, b, **params)
    rhs: Any = None if isinstance(tb, ad.Zero) else tb
    if not all(isinstance(t, ad.Zero) for t in (tdl, td, tdu)):
        z = [ad.instantiate_zeros(t) for t in (tdl, td, tdu)]
        band = _band_times(*z, x)
        rhs = _ad.neg(band) if rhs is None else _ad.sub(rhs, band)
    if rhs is None:
        return x, ad.Zero(get_aval(x))
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs, **params)


def _tridiagonal_solve_transpose(ct: Any, dl: Any, d: Any, du: Any, b: Any, **params: Any
                                 ) -> list:
    if any(ad.is_undefined_primal(v) for v in (dl, d, du)):
        raise ValueError("tridiagonal_solve is linear in b only")
    if isinstance(ct, ad.Zero):
        return [None, None, None, ad.Zero(b.aval)]
    return [None, None, None, tridiagonal_solve_p.bind(_shift(du, down=True), d,
                                                       _shift(dl, down=False), ct, **params)]


tridiagonal_solve_p.def_jvp(_tridiagonal_solve_jvp)
tridiagonal_solve_p.def_transpose(_tridiagonal_solve_transpose)


# -- batching: every primitive maps over leading dimensions ------------------------------------

def _front_rule(prim: Any) -> Any:
    def rule(axis: AxisData, args: list, dims: list, **params: Any) -> tuple[Any, Any]:
        moved = [batching.bdim_at_front(x, d, axis.size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def _triangular_solve_batch(axis: AxisData, args: list, dims: list, **params: Any
                            ) -> tuple[Any, Any]:
    # An unmapped matrix solves every batch member's right-hand sides at once: the batch
    # axis joins b's columns (left_side) or rows, so the matrix is never copied per member
    # and a vmapped solve is one solve of k columns (JAX's rule, and its text)
    a, b = args
    da, db = dims
    if da is not batching.not_mapped or db is batching.not_mapped:
        return _front_rule(triangular_solve_p)(axis, args, dims, **params)
    shape = get_aval(b).shape
    nd = len(shape)
    if params["left_side"]:
        b = batching.moveaxis(b, db, nd - 1)
        bs = get_aval(b).shape
        flat = _ad.reshape(b, bs[:-2] + (bs[-2] * bs[-1],))
        out_dim = nd - 1
    else:
        b = batching.moveaxis(b, db, nd - 2)
        bs = get_aval(b).shape
        flat = _ad.reshape(b, bs[:-3] + (bs[-3] * bs[-2], bs[-1]))
        out_dim = nd - 2
    out = triangular_solve_p.bind(a, flat, **params)
    return _ad.reshape(out, bs), out_dim


def _tridiagonal_solve_batch(axis: AxisData, args: list, dims: list, **params: Any
                             ) -> tuple[Any, Any]:
    # Unmapped diagonals solve every member's right-hand sides at once (the batch axis
    # joins b's columns), as JAX's rule; otherwise everything moves to the front
    *diags, b = args
    *ddims, db = dims
    if any(d is not batching.not_mapped for d in ddims):
        return _front_rule(tridiagonal_solve_p)(axis, args, dims, **params)
    nd = get_aval(b).ndim
    b = batching.moveaxis(b, db, nd - 2)
    bs = get_aval(b).shape
    flat = _ad.reshape(b, bs[:-3] + (bs[-3], bs[-2] * bs[-1]))
    out = tridiagonal_solve_p.bind(*diags, flat, **params)
    return _ad.reshape(out, bs), nd - 2


for _p in (cholesky_p, lu_p, lu_pivots_to_permutation_p, qr_p, eigh_p, svd_p):
    _p.def_batch(_front_rule(_p))
triangular_solve_p.def_batch(_triangular_solve_batch)
tridiagonal_solve_p.def_batch(_tridiagonal_solve_batch)
