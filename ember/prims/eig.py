"""The general eigendecomposition primitive, `eig`, as `jax.lax.linalg.eig` (CPU only).

Input: a (..., n, n) of f32, f64, c64 or c128; params compute_left_eigenvectors,
compute_right_eigenvectors, enable_eigvec_derivs, implementation (JAX's; the last must be
None). Output: [w] + [vl if left] + [vr if right], all complex (f32 -> c64, f64 -> c128):
w (..., n) the eigenvalues in LAPACK's order (not sorted), vl / vr (..., n, n) the left
(u^H a = w u^H) and right (a v = w v) eigenvectors in their columns, unit 2-norm with the
largest component real. A matrix where LAPACK does not converge gives NaNs.
HLO: one custom call lapack_?geev_ffi (backend_config "jobvl=V|N,jobvr=V|N") with an info
output made into NaNs, as XLA's CPU LAPACK call; the CPU backend runs it through
backends/cpu/lapack/eig.py, the evaluator through hlo/evaluator/linalg.py (which is also
the eager rule, so eager and compiled results agree).
Derivatives: of the eigenvalues only (JAX's rule: dw = diag(V^-1 dA V)); asking for the
derivative of eigenvectors raises NotImplementedError, as in JAX. Batching: over leading
dimensions.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.evaluator import linalg as npl
from ember.hlo.shape import Shape
from ember.prims import _lower as L
from ember.prims.linalg import _check_matrix, _nan_unless_ok

eig_p = Primitive("eig", multiple_results=True)


def _complex_dtype(dtype: Any) -> np.dtype:
    return np.result_type(np.dtype(dtype), np.complex64)


@eig_p.def_abstract_eval
def _eig_abstract(a: ShapedArray, *, compute_left_eigenvectors: bool,
                  compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
                  implementation: Any) -> list[ShapedArray]:
    _check_matrix("eig", a)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to nonsymmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {a.shape}")
    if implementation is not None:
        raise NotImplementedError(f"eig: implementation={implementation!r} is not supported "
                                  "by Ember (only LAPACK on the CPU)")
    dtype = _complex_dtype(a.dtype)
    vecs = [ShapedArray(a.shape, dtype)] * (int(compute_left_eigenvectors)
                                            + int(compute_right_eigenvectors))
    return [ShapedArray(a.shape[:-1], dtype), *vecs]


@eig_p.def_impl
def _eig_impl(a: np.ndarray, *, compute_left_eigenvectors: bool,
              compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
              implementation: Any) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        *outs, info = npl.geev(np.asarray(a), compute_left_eigenvectors,
                               compute_right_eigenvectors)
    bad = info != 0
    for x in outs:
        x[bad] = complex(np.nan, np.nan)
    return outs


@eig_p.def_lowering
def _eig_lowering(ctx: Any, a: Any, *, compute_left_eigenvectors: bool,
                  compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
                  implementation: Any) -> list:
    b = ctx.b
    avals = list(ctx.avals_out)
    info = ShapedArray(avals[0].shape[:-1], np.dtype(np.int32))
    shapes = [Shape(L.et(x.dtype), x.shape) for x in avals + [info]]
    config = (f"jobvl={'V' if compute_left_eigenvectors else 'N'},"
              f"jobvr={'V' if compute_right_eigenvectors else 'N'}")
    out = b.custom_call(npl.lapack_target("geev", ctx.avals_in[0].dtype), [a],
                        Shape.tuple_of(shapes), backend_config=config)
    parts = [b.get_tuple_element(out, j) for j in range(len(shapes))]
    return [_nan_unless_ok(ctx, x, parts[-1]) for x in parts[:-1]]


def _eig_jvp(primals: list, tangents: list, *, compute_left_eigenvectors: bool,
             compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
             implementation: Any) -> tuple[list, list]:
    from ember.prims._linalg_rules import _as, _diag, _mm, _solve_lu
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "The derivatives of eigenvectors are not implemented, only eigenvalues. See "
            "https://github.com/jax-ml/jax/issues/2748 for discussion.")
    (a,), (da,) = primals, tangents
    w, v = eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
                      enable_eigvec_derivs=False, implementation=implementation)
    if isinstance(da, ad.Zero):
        return [w], [ad.Zero(get_aval(w))]
    # dw_i = (V^-1 dA V)_ii (the eigenvalues' first-order change, for distinct ones)
    return [w], [_diag(_mm(_solve_lu(v, _as(da, v)), v))]


def _eig_batch(axis: AxisData, args: list, dims: list, **params: Any) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    out = eig_p.bind(batching.bdim_at_front(x, d, axis.size), **params)
    return out, [0] * len(out)


eig_p.def_jvp(_eig_jvp)
eig_p.def_batch(_eig_batch)


__all__ = ["eig_p"]
