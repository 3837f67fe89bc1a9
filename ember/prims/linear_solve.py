"""`custom_linear_solve`: a linear solve x = A^-1 b whose derivatives come from A, not the solver.

Operands and params (JAX's `linear_solve_p`, named `custom_linear_solve`):
  custom_linear_solve(*matvec_consts, *vecmat_consts, *solve_consts, *transpose_solve_consts,
                      *b; const_lengths, jaxprs)
      `const_lengths` and `jaxprs` are `SolveTuple`s (matvec, vecmat, solve, transpose_solve):
      how many operands each jaxpr takes before its vector, and the jaxprs themselves (no
      consts of their own; vecmat and transpose_solve are None when the user gave no
      transpose_solve). `solve(consts, b) -> (x, *aux)`; `matvec(consts, x) -> A x`.
Results: x (b's leaves) followed by the solver's aux outputs.
Invariants: the forward computation is the solve jaxpr (eager, interpreter, lowering
inline it). Differentiating  A x = b  gives  A dx = db - dA x : the JVP solves again with
the same solver on that right-hand side (dA x is matvec's JVP with respect to its
consts); that solve is linear in b, and its transpose solves with A^T (vecmat and
transpose_solve swap in for matvec and solve). The aux outputs have zero tangents; the
consts of solve and transpose_solve are never differentiated (the solver is assumed exact).
vmap maps every vector along axis 0 and batches each jaxpr with its consts' dims.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.eval import eval_closed_numpy, eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr
from ember.core.primitive import Primitive
from ember.prims import _ad
from ember.prims.custom_derivatives import batch_jaxpr, mapped_at_front

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)


class SolveTuple(NamedTuple):
    """One entry per function of a linear solve (JAX's _LinearSolveTuple)."""

    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def __repr__(self) -> str:   # as JAX prints the params
        return "_LinearSolveTuple(" + ", ".join(f"{k}={v}" for k, v in self._asdict().items()) \
            + ")"

    def transpose(self) -> SolveTuple:
        """The entries of the transposed problem A^T y = c."""
        return SolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def split_args(args: Sequence[Any], const_lengths: SolveTuple) -> tuple[SolveTuple, list]:
    parts, k = [], 0
    for n in const_lengths:
        parts.append(list(args[k:k + n]))
        k += n
    return SolveTuple(*parts), list(args[k:])


def _flat(params: SolveTuple) -> list:
    return [x for group in params for x in group]


@linear_solve_p.def_abstract_eval
def _abstract(*avals: ShapedArray, const_lengths: SolveTuple, jaxprs: SolveTuple
              ) -> list[ShapedArray]:
    _, b = split_args(avals, const_lengths)
    outs = list(jaxprs.solve.out_avals)
    if any(x.shape != y.shape or x.dtype != y.dtype for x, y in zip(outs, b)):
        raise TypeError("custom_linear_solve: solve's outputs do not match b's types")
    return outs


@linear_solve_p.def_impl
def _impl(*args: Any, const_lengths: SolveTuple, jaxprs: SolveTuple) -> list:
    params, b = split_args(args, const_lengths)
    return eval_closed_numpy(jaxprs.solve, params.solve + b)


@linear_solve_p.def_lowering
def _lowering(ctx: Any, *ins: Any, const_lengths: SolveTuple, jaxprs: SolveTuple) -> list:
    params, b = split_args(ins, const_lengths)
    solve: ClosedJaxpr = jaxprs.solve
    return ctx.lowerer.lower_jaxpr(solve.jaxpr, solve.consts, params.solve + b,
                                   ctx.name_stack)


@linear_solve_p.def_jvp
def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, const_lengths: SolveTuple,
         jaxprs: SolveTuple) -> tuple[list, list]:
    kw = {"const_lengths": const_lengths, "jaxprs": jaxprs}
    x = linear_solve_p.bind(*primals, **kw)
    params, b = split_args(primals, const_lengths)
    params_dot, b_dot = split_args(tangents, const_lengths)
    x_leaves = x[:len(b)]
    rhs = list(b_dot)
    if any(not isinstance(t, ad.Zero) for t in params_dot.matvec):
        # dA x: matvec's tangent with respect to its consts, x held fixed
        matvec = jaxprs.matvec

        def apply(*vals: Any) -> list:
            return eval_jaxpr(matvec.jaxpr, matvec.consts, *vals)
        x_zero = [ad.Zero(ShapedArray(a.shape, a.dtype)) for a in matvec.in_avals[
            len(params.matvec):]]
        _, da_x = ad.jvp_flat(apply, params.matvec + list(x_leaves),
                              list(params_dot.matvec) + x_zero)
        rhs = [ad.add_tangents(r, _ad.neg(d)) if not isinstance(d, ad.Zero) else r
               for r, d in zip(rhs, da_x)]
    if all(isinstance(r, ad.Zero) for r in rhs):
        return x, [ad.Zero(ShapedArray(a.shape, a.dtype)) for a in jaxprs.solve.out_avals]
    rhs = [ad.instantiate_zeros(r) for r in rhs]
    x_dot = linear_solve_p.bind(*_flat(params), *rhs, **kw)
    aux = [ad.Zero(ShapedArray(a.shape, a.dtype)) for a in jaxprs.solve.out_avals[len(b):]]
    return x, list(x_dot[:len(b)]) + aux


@linear_solve_p.def_transpose
def _transpose(cts: Sequence[Any], *args: Any, const_lengths: SolveTuple, jaxprs: SolveTuple
               ) -> list:
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    params, b = split_args(args, const_lengths)
    if any(ad.is_undefined_primal(p) for p in _flat(params)):
        raise NotImplementedError("custom_linear_solve is linear in b only: its matvec and "
                                  "solver consts cannot be transposed")
    x_ct = [ad.instantiate_zeros(c) for c in cts[:len(b)]]
    got = linear_solve_p.bind(*_flat(params.transpose()), *x_ct,
                              const_lengths=const_lengths.transpose(),
                              jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(got[:len(b)])


@linear_solve_p.def_batch
def _batch(axis: batching.AxisData, args: Sequence[Any], dims: Sequence[Any], *,
           const_lengths: SolveTuple, jaxprs: SolveTuple) -> tuple[list, list]:
    # Every vector (b, x, the aux outputs) is mapped along axis 0; each jaxpr is batched
    # with its consts' dims, so the batched matvec is still linear in its vector and the
    # batched solvers still solve it: the JVP and transpose rules apply unchanged.
    params, b = split_args(args, const_lengths)
    params_dims, b_dims = split_args(dims, const_lengths)
    consts, jaxprs_b = [], []
    for group, gdims, jaxpr in zip(params, params_dims, jaxprs):
        moved, in_dims = mapped_at_front(axis, group, gdims)
        consts.append(moved)
        jaxprs_b.append(None if jaxpr is None else
                        batch_jaxpr(jaxpr, axis, in_dims + [0] * len(b)))
    vecs = [batching.bdim_at_front(x, d, axis.size) for x, d in zip(b, b_dims)]
    outs = linear_solve_p.bind(*[c for group in consts for c in group], *vecs,
                               const_lengths=const_lengths, jaxprs=SolveTuple(*jaxprs_b))
    return outs, [0] * len(outs)
