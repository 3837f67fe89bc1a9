"""Autodiff of a call primitive (jit) that stays one equation, as JAX's pjit rules keep it.

Input: a call primitive, its operands under a JVP trace (primals and tangents) or its
operands and output cotangents in a backward pass, and its params (`jaxpr`, `name`, ...).
Output: the results of new equations of the same primitive:
- `jvp_call`: one call of the body's JVP, on (primals, nonzero tangents), giving (primal
  outputs, nonzero output tangents), as JAX's `_pjit_jvp`.
- `linearize_call` (a tangent is staged by a `linearize_flat` in progress): a known call,
  primals -> (primal outputs, residuals), bound where the primals live, and an unknown
  call, (residuals, nonzero tangents) -> nonzero output tangents, staged into the linear
  jaxpr, as JAX's `_pjit_linearize`. A residual that is an input of the call is passed as
  that input, not returned; a residual equal to a primal output is returned once; a primal
  output that is an input is not returned at all (JAX's forwarding).
- `transpose_call`: one call of the transposed body, on (the known inputs the outputs
  with a nonzero cotangent read, nonzero cotangents), giving the cotangents of the linear
  inputs that some cotangent reaches (JAX's pjit DCE, then `_pjit_transpose`).
Invariants:
- Only while a jaxpr is being staged (the dynamic trace is not the eval trace); eagerly the
  callers inline the body, so eager autodiff never compiles a call's body.
- When a body's trace closes over a tracer of an enclosing trace the rules give up
  (`None`) and the caller inlines, as the batching rule does.
- The new equations keep the call's `name` (JAX 0.10.2 prints a JVP'd, linearized or
  transposed jit under its own name) and drop `donated_invars` (no new operand is donated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.core.ad import JVPTrace, JVPTracer, UndefinedPrimal, Zero
from ember.core.eval import eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ember.core.staging import DynamicJaxprTrace, JaxprBuilder, trace_to_jaxpr
from ember.core.trace import Tracer, current_dynamic, get_aval, new_main


def staging() -> bool:
    """Whether a jaxpr is being staged (only then does a call stay one equation)."""
    return current_dynamic().level != 0


def _derived_params(params: dict, jaxpr: ClosedJaxpr) -> dict:
    out = {k: v for k, v in params.items() if k != "donated_invars"}
    out["jaxpr"] = jaxpr
    return out


def _has_tracer_consts(closed: ClosedJaxpr) -> bool:
    return any(isinstance(c, Tracer) for c in closed.consts)


def _jvp_body(closed: ClosedJaxpr, primals: Sequence[Any], tangents: Sequence[Any]
              ) -> tuple[list[Any], list[Any]]:
    """The body's primal outputs and tangents on (primal, tangent) pairs, at a new level."""
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = [trace.full_raise(o) for o in eval_jaxpr(closed.jaxpr, closed.consts, *ins)]
        return [o.primal for o in outs], [o.tangent for o in outs]


def jvp_call(prim: Any, primals: list, tangents: list, params: dict
             ) -> tuple[list, list] | None:
    """(primal outputs, output tangents) of one call of the body's JVP, or None."""
    closed: ClosedJaxpr = params["jaxpr"]
    nz = [not isinstance(t, Zero) for t in tangents]
    n = len(primals)
    out_nz: list[bool] = []

    def body(*xs: Any) -> list:
        ts = iter(xs[n:])
        ins_t = [next(ts) if m else t for t, m in zip(tangents, nz)]
        outs_p, outs_t = _jvp_body(closed, xs[:n], ins_t)
        out_nz[:] = [not isinstance(t, Zero) for t in outs_t]
        return outs_p + [t for t in outs_t if not isinstance(t, Zero)]

    avals = [get_aval(p) for p in primals] + [get_aval(t) for t, m in zip(tangents, nz) if m]
    jaxpr, _ = trace_to_jaxpr(body, avals)
    if _has_tracer_consts(jaxpr):
        return None
    outs = prim.bind(*primals, *[t for t, m in zip(tangents, nz) if m],
                     **_derived_params(params, jaxpr))
    n_out = len(closed.jaxpr.outvars)
    it = iter(outs[n_out:])
    return list(outs[:n_out]), [next(it) if m else Zero(a)
                                for m, a in zip(out_nz, closed.out_avals)]


def linearize_call(prim: Any, primals: list, tangents: list, params: dict
                   ) -> tuple[list, list] | None:
    """(primal outputs, output tangents) as a known call and a staged unknown call."""
    from ember.core.transpose import _linearizing  # (transpose.py imports this module)
    closed: ClosedJaxpr = params["jaxpr"]
    nz = [not isinstance(t, Zero) for t in tangents]
    got: dict[str, Any] = {}

    def known(*xs: Any) -> list:
        builder = JaxprBuilder()
        with new_main(DynamicJaxprTrace, payload=builder) as pe_main:
            pe = DynamicJaxprTrace(pe_main)
            _linearizing.add(id(pe_main))
            try:
                ts = [pe.new_arg(get_aval(t)) if m else t for t, m in zip(tangents, nz)]
                outs_p, outs_t = _jvp_body(closed, xs, ts)
                outvars = [pe.full_raise(t)._var for t in outs_t if not isinstance(t, Zero)]
                lin = builder.to_closed_jaxpr(outvars)
            finally:
                _linearizing.discard(id(pe_main))
        got["lin"] = lin
        got["out_nz"] = [not isinstance(t, Zero) for t in outs_t]
        return list(outs_p) + list(lin.consts)

    known_jaxpr, _ = trace_to_jaxpr(known, [get_aval(p) for p in primals])
    if _has_tracer_consts(known_jaxpr):
        return None
    lin: ClosedJaxpr = got["lin"]
    n_out = len(closed.jaxpr.outvars)
    kj = known_jaxpr.jaxpr
    in_ids = {v.id: i for i, v in enumerate(kj.invars)}
    out_vars, res_vars = kj.outvars[:n_out], kj.outvars[n_out:]
    # Forwarding: primal outputs that are inputs, residuals that are inputs or outputs.
    out_fwd = [in_ids.get(v.id) if isinstance(v, Var) else None for v in out_vars]
    res_in_fwd = [in_ids.get(v.id) if isinstance(v, Var) else None for v in res_vars]
    out_pos = {v.id: j for j, v in enumerate(out_vars)
               if isinstance(v, Var) and out_fwd[j] is None}
    res_out_fwd = [out_pos.get(v.id) if isinstance(v, Var) and f is None else None
                   for v, f in zip(res_vars, res_in_fwd)]
    keep_out = [f is None for f in out_fwd]
    keep_res = [a is None and b is None for a, b in zip(res_in_fwd, res_out_fwd)]
    kept = [v for v, k in zip(out_vars, keep_out) if k]
    kept += [v for v, k in zip(res_vars, keep_res) if k]
    known_closed = _dce(ClosedJaxpr(Jaxpr(kj.constvars, kj.invars, kept, kj.eqns,
                                          kj.debug_info), known_jaxpr.consts))
    if any(keep_out) or any(keep_res):
        outs = iter(prim.bind(*primals, **_derived_params(params, known_closed)))
    else:
        outs = iter(())
    primal_outs = [next(outs) if k else primals[f] for k, f in zip(keep_out, out_fwd)]
    residuals = []
    for k, fi, fo in zip(keep_res, res_in_fwd, res_out_fwd):
        residuals.append(next(outs) if k else primals[fi] if fi is not None
                         else primal_outs[fo])
    lj = lin.jaxpr
    unknown = ClosedJaxpr(Jaxpr([], list(lj.constvars) + list(lj.invars), lj.outvars,
                                lj.eqns, lj.debug_info), [])
    t_outs = iter(prim.bind(*residuals, *[t for t, m in zip(tangents, nz) if m],
                            **_derived_params(params, unknown)))
    return primal_outs, [next(t_outs) if m else Zero(a)
                         for m, a in zip(got["out_nz"], closed.out_avals)]


def _dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop the equations no output reads (the inputs stay: the call's operands)."""
    from ember.core.staging import live_equations
    j = closed.jaxpr
    eqns, live = live_equations(j)
    keep = [i for i, v in enumerate(j.constvars) if v.id in live]
    return ClosedJaxpr(Jaxpr([j.constvars[i] for i in keep], j.invars, j.outvars,
                             eqns, j.debug_info),
                       [closed.consts[i] for i in keep])


def transpose_call(prim: Any, cts: list, args: Sequence[Any], params: dict
                   ) -> list | None:
    """Cotangents of the linear inputs (None for known ones) from one call of the
    transposed body, on (known inputs, nonzero cotangents); None to inline instead.

    The body is first cut to what the outputs with a nonzero cotangent need, and the
    known inputs that part does not read are not passed (JAX's DCE of a pjit before its
    transpose): a residual of an unused output does not reach the transposed call."""
    from ember.core.transpose import backward_pass  # (transpose.py imports this module)
    closed: ClosedJaxpr = params["jaxpr"]
    ct_nz = [not isinstance(c, Zero) for c in cts]
    inner = _dce_outputs(closed.jaxpr, ct_nz)
    linear = [isinstance(a, UndefinedPrimal) for a in args]
    live = _read_vars(inner)
    used = [lin or v.id in live for v, lin in zip(inner.invars, linear)]
    known_vars = [v for v, lin, u in zip(inner.invars, linear, used) if not lin and u]
    known_vals = [a for a, lin, u in zip(args, linear, used) if not lin and u]
    n_known = len(known_vals)
    body_jaxpr = Jaxpr(list(inner.constvars) + known_vars,
                       [v for v, lin in zip(inner.invars, linear) if lin], inner.outvars,
                       inner.eqns)
    res_nz: list[bool] = []

    def body(*xs: Any) -> list:
        it = iter(xs[n_known:])
        cts_in = [next(it) if m else c for c, m in zip(cts, ct_nz)]
        got = backward_pass(body_jaxpr, list(closed.consts) + list(xs[:n_known]), cts_in)
        res_nz[:] = [not isinstance(g, Zero) for g in got]
        return [g for g in got if not isinstance(g, Zero)]

    avals = [get_aval(a) for a in known_vals] + [get_aval(c) for c, m in zip(cts, ct_nz) if m]
    jaxpr, _ = trace_to_jaxpr(body, avals)
    if _has_tracer_consts(jaxpr):
        return None
    if jaxpr.jaxpr.outvars:
        outs = iter(prim.bind(*known_vals, *[c for c, m in zip(cts, ct_nz) if m],
                              **_derived_params(params, jaxpr)))
    else:
        outs = iter(())
    lin_avals = iter(v.aval for v, lin in zip(inner.invars, linear) if lin)
    res = iter(res_nz)
    result: list[Any] = []
    for lin in linear:
        if not lin:
            result.append(None)
            continue
        aval = next(lin_avals)
        result.append(next(outs) if next(res) else Zero(aval))
    return result


def _dce_outputs(jaxpr: Jaxpr, keep: Sequence[bool]) -> Jaxpr:
    """`jaxpr` without the equations only the outputs not kept read (the outputs stay,
    so cotangents still line up with them; a dropped output's cotangent is zero)."""
    from ember.core.staging import eqn_has_effects
    live = {v.id for v, k in zip(jaxpr.outvars, keep) if k and isinstance(v, Var)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v.id in live for v in eqn.outvars) or eqn_has_effects(eqn):
            eqns.append(eqn)
            live.update(v.id for v in eqn.invars if isinstance(v, Var))
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, list(reversed(eqns)),
                 jaxpr.debug_info)


def _read_vars(jaxpr: Jaxpr) -> set[int]:
    """The ids of the variables an equation or an output of `jaxpr` reads."""
    read = {v.id for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in jaxpr.eqns:
        read.update(v.id for v in eqn.invars if isinstance(v, Var))
    return read
