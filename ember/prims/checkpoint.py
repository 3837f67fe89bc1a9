"""The `checkpoint` primitive (`ember.checkpoint` / `ember.remat`): recompute instead of save.

  checkpoint(*args; jaxpr, prevent_cse, differentiated, policy)
      jaxpr: a ClosedJaxpr without consts, (*args) -> outs; the results are its results.
      policy: None (save nothing) or `policy(prim, *in_avals, **params) -> bool`, which
      says whether the outputs of an equation of that kind may be saved for the backward
      pass (ember.checkpoint_policies). prevent_cse and differentiated are JAX's flags,
      carried for printing and nesting.
Rules: abstract eval (the body's output types), NumPy impl (the body op by op), lowering
(the body inlined: outside of differentiation a checkpoint is its body), batching (a
checkpoint of the vmapped body), JVP (forward mode: a checkpoint of the body's JVP), and
the one that matters, its linearization:
- Under `linearize` (core/transpose.py) the body is linearized once at trace time into a
  known part K (inputs -> outputs and residuals) and a linear part (residuals, tangents
  -> output tangents). Of K's equations, those the policy allows are "saved": walking back
  from the residuals, the walk stops at a saved equation (its live outputs are kept for
  the backward pass) and at the inputs; every other equation it meets is "recomputed".
- The known side evaluates K for the outputs and the saved values only (in the enclosing
  trace: eagerly, or staged into the enclosing jit or scan body).
- The linear side is one `checkpoint` equation (differentiated=True) on (the inputs the
  recomputation reads, the saved values, the tangents): its body recomputes the other
  residuals, then runs the linear part. It is linear in the tangents only; its transpose
  (`backward_pass` on the body) evaluates the recomputation forward, then transposes the
  linear part: the recomputation happens in the backward pass. Around a scan body this
  turns the scan's stacked residuals into the carries (and xs) the recomputation reads.
Invariants: the linear equation reads no tangent in its recomputation; a policy is asked
only about equations of K, with their input avals and params.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import batching
from ember.core.ad import UndefinedPrimal, Zero
from ember.core.aval import ShapedArray
from ember.core.eval import eval_closed_numpy, eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from ember.core.primitive import Primitive
from ember.core.staging import eqn_has_effects
from ember.core.trace import get_aval
from ember.core.transpose import backward_pass, is_linearized_tangent, linearize_flat
from ember.prims._control_flow_ad import _jvp_jaxpr, _trace
from ember.prims._scan_reverse import dce
from ember.prims.barrier import _barrier_lowering
from ember.prims.control_flow import check_inputs

# (named as JAX 0.10.2 prints it: `remat2`, its params in sorted order)
checkpoint_p = Primitive("remat2", multiple_results=True)

Policy = Callable[..., bool]


@checkpoint_p.def_abstract_eval
def _checkpoint_abstract(*args: ShapedArray, jaxpr: ClosedJaxpr, prevent_cse: bool,
                         differentiated: bool, policy: Policy | None) -> list[ShapedArray]:
    check_inputs("checkpoint jaxpr", jaxpr, list(args))
    return list(jaxpr.out_avals)


@checkpoint_p.def_impl
def _checkpoint_impl(*args: np.ndarray, jaxpr: ClosedJaxpr, prevent_cse: bool,
                     differentiated: bool, policy: Policy | None) -> list[np.ndarray]:
    return eval_closed_numpy(jaxpr, list(args))


def _checkpoint_lowering(ctx: Any, *args: Any, jaxpr: ClosedJaxpr, prevent_cse: bool,
                         differentiated: bool, policy: Policy | None) -> list[Any]:
    # The body inlined into the enclosing computation (its ops keep the checkpoint's path
    # in their op_name). What is recomputed was decided by the linearization, not here.
    # A recomputation (differentiated) reads its inputs through a barrier when prevent_cse
    # asks, so CSE cannot merge it back into the forward pass's values.
    ins = list(args)
    flags = (prevent_cse,) if isinstance(prevent_cse, bool) else tuple(prevent_cse)
    fence = ([bool(p) for p in flags] if len(flags) == len(ins)
             else [any(flags)] * len(ins))  # (one flag, or flags not per operand)
    if differentiated and any(fence):
        at = [i for i, f in enumerate(fence) if f]
        fenced = _barrier_lowering(ctx, *[ins[i] for i in at])
        for i, v in zip(at, fenced):
            ins[i] = v
    return ctx.lower_sub(ctx.b, jaxpr, ins, "checkpoint")


checkpoint_p.def_lowering(_checkpoint_lowering)


def _saveable(eqn: JaxprEqn, policy: Policy | None) -> bool:
    if policy is None or eqn_has_effects(eqn):
        return False
    return bool(policy(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params))


def _remat_plan(k: Jaxpr, residuals: Sequence[Any], policy: Policy | None
                ) -> tuple[list[JaxprEqn], list[Var], list[Var]]:
    """Walk back from the residuals of K: the equations to recompute (in order), the
    values to save (outputs of saveable equations the walk reaches) and the inputs of K
    the recomputation reads (or that are residuals themselves)."""
    producer = {v.id: e for e in k.eqns for v in e.outvars}
    invar_ids = {v.id for v in k.invars}
    need = [v for v in residuals if isinstance(v, Var)]
    seen: set[int] = set()
    recompute: set[int] = set()
    saved: dict[int, Var] = {}
    inputs: dict[int, Var] = {}
    while need:
        v = need.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        if v.id in invar_ids:
            inputs[v.id] = v
            continue
        eqn = producer[v.id]
        if _saveable(eqn, policy):
            saved[v.id] = v
            continue
        if id(eqn) not in recompute:
            recompute.add(id(eqn))
            need.extend(x for x in eqn.invars if isinstance(x, Var))
    eqns = [e for e in k.eqns if id(e) in recompute]
    order = {v.id: i for i, v in enumerate(k.invars)}
    ins = sorted(inputs.values(), key=lambda v: order[v.id])
    return eqns, list(saved.values()), ins


def _checkpoint_linearize(args: Sequence[Any], tangents: Sequence[Any], *,
                          jaxpr: ClosedJaxpr, prevent_cse: bool, policy: Policy | None
                          ) -> tuple[list[Any], list[Any]]:
    nz_in = [not isinstance(t, Zero) for t in tangents]
    lins: list[Any] = []

    def known(*a: Any) -> list[Any]:
        def body(*dyn: Any) -> list[Any]:
            it = iter(dyn)
            full = [next(it) if m else x for x, m in zip(a, nz_in)]
            return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *full)
        outs, lin = linearize_flat(body, [x for x, m in zip(a, nz_in) if m])
        lins.append(lin)
        return list(outs) + list(lin.jaxpr.consts)

    k, k_consts = _trace(known, [get_aval(a) for a in args])
    lin = lins[0]
    kj = k.jaxpr
    n_out = len(jaxpr.out_avals)
    residuals = kj.outvars[n_out:]
    eqns, saved, ins = _remat_plan(kj, residuals, policy)

    # Known side: the outputs and the saved values, in the enclosing trace.
    operands = [*k_consts, *args]
    got = eval_jaxpr(dce(kj, kj.outvars[:n_out] + saved), [], *operands)
    outs, saved_vals = got[:n_out], got[n_out:]
    out_zero = lin.out_zero
    if all(out_zero):
        return outs, [Zero(get_aval(o)) for o in outs]

    # Linear side: one checkpoint equation, recomputing the unsaved residuals from `ins`
    # and the saved values, then running the linear part on the tangents.
    pos = {v.id: i for i, v in enumerate(kj.invars)}
    in_vals = [operands[pos[v.id]] for v in ins]
    recompute = Jaxpr([], [*ins, *saved], list(residuals), eqns)
    t_in = [t for t in tangents if not isinstance(t, Zero)]
    t_avals = [get_aval(t).strip_weak_type() for t in t_in]
    n_known = len(ins) + len(saved)

    def linear(*a: Any) -> list[Any]:
        res = eval_jaxpr(recompute, [], *a[:n_known])
        tout = iter(eval_jaxpr(lin.jaxpr.jaxpr, res, *a[n_known:]))
        return [next(tout) for z in out_zero if not z]

    body, body_consts = _trace(linear, [*(v.aval for v in ins), *(v.aval for v in saved),
                                        *t_avals])
    lin_outs = iter(checkpoint_p.bind(*body_consts, *in_vals, *saved_vals, *t_in,
                                      jaxpr=body, prevent_cse=prevent_cse,
                                      differentiated=True, policy=policy))
    return outs, [Zero(get_aval(o)) if z else next(lin_outs) for o, z in zip(outs, out_zero)]


def _checkpoint_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
                    prevent_cse: bool, differentiated: bool, policy: Policy | None
                    ) -> tuple[list[Any], list[Any]]:
    if any(is_linearized_tangent(t) for t in tangents):
        return _checkpoint_linearize(primals, tangents, jaxpr=jaxpr, prevent_cse=prevent_cse,
                                     policy=policy)
    # Forward mode: a checkpoint of the body's JVP (primals and tangents in one body).
    nz_in = [not isinstance(t, Zero) for t in tangents]
    n_out = len(jaxpr.out_avals)
    body, consts, out_nz = _jvp_jaxpr(jaxpr, nz_in, [False] * n_out)
    outs = checkpoint_p.bind(*consts, *primals, *[t for t in tangents
                                                  if not isinstance(t, Zero)],
                             jaxpr=body, prevent_cse=prevent_cse,
                             differentiated=differentiated, policy=policy)
    touts = iter(outs[n_out:])
    return outs[:n_out], [next(touts) if nz else Zero(get_aval(o))
                          for o, nz in zip(outs[:n_out], out_nz)]


def _checkpoint_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr,
                          prevent_cse: bool, differentiated: bool, policy: Policy | None
                          ) -> list[Any]:
    """Transpose a checkpoint linear in its `UndefinedPrimal` operands: the backward pass
    of its body, which first recomputes (forward) what does not depend on them, staged as
    a checkpoint of its own (differentiated, so that prevent_cse fences its inputs and
    the recomputation stays apart from the forward pass's values)."""
    lin = [isinstance(a, UndefinedPrimal) for a in args]
    j = jaxpr.jaxpr
    split = Jaxpr([v for v, m in zip(j.invars, lin) if not m],
                  [v for v, m in zip(j.invars, lin) if m], j.outvars, j.eqns)
    known_vals = [a for a, m in zip(args, lin) if not m]
    live = [i for i, c in enumerate(cts) if not isinstance(c, Zero)]
    lin_avals = [a.aval for a, m in zip(args, lin) if m]
    zero_out: list[bool] = []

    def backward(*a: Any) -> list[Any]:
        full: list[Any] = list(cts)
        for i, c in zip(live, a[len(known_vals):]):
            full[i] = c
        got = backward_pass(split, list(a[:len(known_vals)]), full)
        zero_out[:] = [isinstance(g, Zero) for g in got]
        return [g for g in got if not isinstance(g, Zero)]

    body, consts = _trace(backward, [*(get_aval(v) for v in known_vals),
                                     *(get_aval(cts[i]) for i in live)])
    outs = iter(checkpoint_p.bind(*consts, *known_vals, *[cts[i] for i in live],
                                  jaxpr=body, prevent_cse=prevent_cse, differentiated=True,
                                  policy=policy) if not all(zero_out) else [])
    got = iter([Zero(a) if z else next(outs) for a, z in zip(lin_avals, zero_out)])
    return [next(got) if m else None for m in lin]


def _checkpoint_batch(axis: Any, args: Sequence[Any], dims: Sequence[int | None], *,
                      jaxpr: ClosedJaxpr, prevent_cse: bool, differentiated: bool,
                      policy: Policy | None) -> tuple[list[Any], list[int]]:
    """vmap: a checkpoint of the vmapped body (every output mapped along axis 0)."""
    def batched(*xs: Any) -> list[Any]:
        return batching.vmap_flat(lambda *ys: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *ys),
                                  xs, dims, lambda n: [0] * n, axis)

    body, consts = _trace(batched, [get_aval(a) for a in args])
    outs = checkpoint_p.bind(*consts, *args, jaxpr=body, prevent_cse=prevent_cse,
                             differentiated=differentiated, policy=policy)
    return list(outs), [0] * len(outs)


checkpoint_p.def_batch(_checkpoint_batch)
checkpoint_p.def_jvp(_checkpoint_jvp)
checkpoint_p.def_transpose(_checkpoint_transpose)
