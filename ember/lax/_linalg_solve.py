"""Linear solves through an LU factorization, staged as JAX 0.10.2's `lax.linalg` stages
them: `lu_solve` (a `jit[name=_lu_solve]` of one row gather and two triangular solves)
and `solve` (JAX's `_solve`), the body of `jnp.linalg.solve`.

Input: `lu`, `permutation` from `lax.linalg.lu`, right-hand sides `b` ((..., m) vectors
or (..., m, k) matrices); for `solve`, a (..., m, m) matrix `a` and such a `b`.
Output: x with a x = b (trans=0), a^T x = b (1) or a^H x = b (2).
Invariants: `solve` factors `stop_gradient(a)` once and solves inside
`custom_linear_solve` whose matvec is `a @ x`, so derivatives come from implicit
differentiation of `a x = b` (one more solve with the same factors, its transpose with
a^T), never through the factorization. A (..., m, k) right-hand side is the vector solve
under `vmap` over its k columns, as JAX does; the triangular solves' batching rule folds
those columns back into one solve of k columns (prims/_linalg_rules.py), so the cost is
one factorization and two triangular solves whatever k.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ember.lax import _ops as L
from ember.lax._base import aval_of


def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """x broadcast to `shape` by its trailing dimensions (lax.broadcast_in_dim)."""
    nd = aval_of(x).ndim
    return L.broadcast_in_dim(x, shape, tuple(range(len(shape) - nd, len(shape))))


def _broadcast_to_linear(x: Any, shape: tuple[int, ...]) -> Any:
    """`_broadcast_to` as JAX stages it: an identity broadcast is dropped when staged or
    run, but a JVP (linearize) trace records it, so the transpose (a solve's vecmat)
    holds its empty `reduce_sum`."""
    from ember.core.ad import JVPTracer
    from ember.prims.shape_ops import broadcast_in_dim_p
    aval = aval_of(x)
    if aval.shape != tuple(shape) or not isinstance(x, JVPTracer):
        return _broadcast_to(x, shape)
    return broadcast_in_dim_p.bind(x, shape=tuple(shape),
                                   broadcast_dimensions=tuple(range(aval.ndim)), sharding=None)


def _broadcasted_matvec(a: Any, b: Any) -> Any:
    """(..., n, m) @ (..., m) -> (..., n), batch dimensions broadcast, at HIGHEST
    precision."""
    from ember.lax._linalg import Precision, dot_general
    ash, bsh = aval_of(a).shape, aval_of(b).shape
    batch = tuple(np.broadcast_shapes(ash[:-2], bsh[:-1]))
    nb = len(batch)
    a = _broadcast_to_linear(a, batch + ash[-2:])
    b = _broadcast_to_linear(b, batch + bsh[-1:])
    dims = (([nb + 1], [nb]), (list(range(nb)), list(range(nb))))
    return dot_general(a, b, dims, precision=Precision.HIGHEST)


def _lu_solve_core(lu: Any, permutation: Any, b: Any, trans: int) -> Any:
    """One system: lu (m, m), permutation (m,), b (m, ...)."""
    from ember.lax._sorting import sort_key_val
    from ember.lax.linalg import triangular_solve
    m = aval_of(lu).shape[0]
    bshape = aval_of(b).shape
    x = L.reshape(b, (m, math.prod(bshape[1:])))
    if trans == 0:
        x = x[permutation, :]
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        x = triangular_solve(lu, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = triangular_solve(lu, x, left_side=True, lower=False, transpose_a=True,
                             conjugate_a=conj)
        x = triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True,
                             transpose_a=True, conjugate_a=conj)
        _, ind = sort_key_val(permutation, L.iota(np.int32, aval_of(permutation).shape[0]))
        x = x[ind, :]
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return L.reshape(x, bshape)


def _lu_solve_body(lu: Any, permutation: Any, b: Any, trans: int) -> Any:
    """JAX's `_lu_solve`: b a vector (rank of lu minus one) or matrices; batch dimensions
    broadcast, and the one-system core is vmapped over them."""
    from ember.vmap_api import vmap
    lsh, psh, bsh = aval_of(lu).shape, aval_of(permutation).shape, aval_of(b).shape
    if len(lsh) < 2 or lsh[-1] != lsh[-2]:
        raise ValueError("last two dimensions of LU decomposition must be equal, got shape "
                         f"{lsh}")
    if len(bsh) < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {bsh}")
    rhs_vector = len(lsh) == len(bsh) + 1
    if rhs_vector:
        if bsh[-1] != lsh[-1]:
            raise ValueError("When LU decomposition matrix and b have the same number of "
                             f"dimensions, last axis of LU decomposition matrix (shape {lsh}) "
                             f"and b array (shape {bsh}) must match")
        b = b[..., np.newaxis]
        bsh = aval_of(b).shape
    elif bsh[-2] != lsh[-1]:
        raise ValueError("When LU decomposition matrix and b different numbers of dimensions, "
                         f"last axis of LU decomposition matrix (shape {lsh}) and second to "
                         f"last axis of b array (shape {bsh}) must match")
    batch = tuple(np.broadcast_shapes(lsh[:-2], psh[:-1], bsh[:-2]))
    lu = _broadcast_to(lu, batch + lsh[-2:])
    permutation = _broadcast_to(permutation, batch + psh[-1:])
    b = _broadcast_to(b, batch + bsh[-2:])
    fn: Any = functools.partial(_lu_solve_core, trans=trans)
    for _ in batch:
        fn = vmap(fn, in_axes=(0, 0, 0))
    x = fn(lu, permutation, b)
    return x[..., 0] if rhs_vector else x


_LU_SOLVE: list[Any] = []


def lu_solve(lu: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """x with op(a) x = b from a's LU factors (`lax.linalg.lu`); op is a (trans=0), a^T
    (1) or a^H (2). Under a trace, one `jit[name=_lu_solve]` equation, as in JAX."""
    if not _LU_SOLVE:
        from ember.numpy._jit_wrap import jit_like_jax
        _LU_SOLVE.append(jit_like_jax("_lu_solve", static_argnames=("trans",))(
            _lu_solve_body))
    return _LU_SOLVE[0](lu, permutation, b, trans=int(trans))


def check_solve_shapes(a: Any, b: Any) -> None:
    """JAX's check (and error text): a (..., m, m) with b (..., m) or (..., m, k)."""
    ash, bsh = aval_of(a).shape, aval_of(b).shape
    if not (len(ash) >= 2 and len(bsh) in (len(ash), len(ash) - 1)
            and ash[-1] == ash[-2] == bsh[len(ash) - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={ash} and b={bsh}")


def solve(a: Any, b: Any) -> Any:
    """x with a x = b (JAX's `lax.linalg._solve`): a (..., m, m), b (..., m) or
    (..., m, k) whose leading dimensions broadcast against a's."""
    from ember.lax._custom_solvers import custom_linear_solve
    from ember.lax.linalg import lu
    from ember.vmap_api import vmap
    check_solve_shapes(a, b)
    ash, bsh = aval_of(a).shape, aval_of(b).shape
    # custom_linear_solve needs b's leading dimensions as a's
    out_shape = tuple(da if db == 1 else db for da, db in zip(ash[:-1] + (1,), bsh))
    b = L.broadcast_in_dim(b, out_shape, tuple(range(len(bsh))))
    lu_, _, permutation = lu(L.stop_gradient(a))
    custom_solve = functools.partial(
        custom_linear_solve, lambda x: _broadcasted_matvec(a, x),
        solve=lambda _, x: lu_solve(lu_, permutation, x, trans=0),
        transpose_solve=lambda _, x: lu_solve(lu_, permutation, x, trans=1))
    if len(ash) == len(bsh) + 1:
        return custom_solve(b)
    return vmap(custom_solve, len(bsh) - 1, max(len(ash), len(bsh)) - 1)(b)
