"""Reverse mode through `scan`: its linearization (two scans) and the transpose of a linear scan.

Input: the primals and tangents of a scan equation under `linearize` (core/transpose.py),
or, for the transpose, the cotangents of a scan that is linear in its `UndefinedPrimal`
operands. Output: new scan equations.
Design (JAX's): the body is linearized once, at trace time, into a known part (the primal
step, which also returns the residuals the tangent step needs) and a linear part (the
tangent step, reading those residuals).
- The known scan runs the primal loop and returns each iteration's residuals as extra ys,
  stacked along the scan axis: per-iteration memory is what reverse mode must keep.
  Residuals that depend only on the scan's consts are the same in every iteration: they
  are computed once, before the loop, and passed to the linear scan as consts; a residual
  that is one of the body's x slices is read from that xs operand instead of a copy.
- The linear scan takes (invariant residuals, tangents of the consts; carry tangents;
  stacked residuals, tangents of the xs) and returns (carry tangents; ys tangents). It is
  bound on the tangents, so under linearize it is one equation of the linear jaxpr.
- Its transpose is a scan in the other direction: its carry holds the cotangent of the
  carry and the running sum of the consts' cotangents; its xs are the cotangents of the
  ys and the known xs (stacked residuals); its ys are the cotangents of the xs. Its body
  is the backward pass of the linear body.
Invariants: every carry of a linear scan is linear (a known init, e.g. a materialized zero,
gets no cotangent); integer carries never have a tangent, so they stay in the known scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.core import dtypes
from ember.core.ad import (
    UndefinedPrimal,
    Zero,
    instantiate_zeros,
    zeros_like_aval,
)
from ember.core.aval import ShapedArray
from ember.core.eval import eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from ember.core.staging import eqn_has_effects
from ember.core.trace import get_aval
from ember.core.transpose import backward_pass, linearize_flat
from ember.prims._control_flow_ad import _trace
from ember.prims.control_flow import scan_p


def dce(jaxpr: Jaxpr, outvars: Sequence[Any], invars: Sequence[Var] | None = None, *,
        keep_effects: bool = True) -> Jaxpr:
    """`jaxpr` returning `outvars` (and taking `invars`, by default its own), without the
    equations none of them needs; equations with effects are kept when `keep_effects`."""
    live = {v.id for v in outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if (keep_effects and eqn_has_effects(eqn)) or any(v.id in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(v.id for v in eqn.invars if isinstance(v, Var))
    return Jaxpr([], list(jaxpr.invars if invars is None else invars), list(outvars),
                 kept[::-1])


def _variant_vars(jaxpr: Jaxpr, varying: Sequence[Var]) -> set[int]:
    """Ids of the vars of `jaxpr` computed from one of `varying` (or by an effect)."""
    out = {v.id for v in varying}
    for eqn in jaxpr.eqns:
        if eqn_has_effects(eqn) or any(isinstance(v, Var) and v.id in out
                                       for v in eqn.invars):
            out.update(v.id for v in eqn.outvars)
    return out


def _slice_aval(a: ShapedArray) -> ShapedArray:
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def scan_linearize(primals: Sequence[Any], tangents: Sequence[Any], nz_c: list[bool], *,
                   reverse: bool, length: int, jaxpr: ClosedJaxpr, num_consts: int,
                   num_carry: int, unroll: int) -> tuple[list[Any], list[Any]]:
    """The scan's JVP under linearize: a known scan (primal outputs and stacked residuals)
    and a linear scan on the tangents. `nz_c` marks the carries whose tangent is nonzero
    (the fixed point of the body's zero pattern, `_scan_jvp`)."""
    nc, nk = num_consts, num_carry
    consts, init, xs = (list(primals[:nc]), list(primals[nc:nc + nk]),
                        list(primals[nc + nk:]))
    ny = len(jaxpr.out_avals) - nk
    nz = [not isinstance(t, Zero) for t in tangents]
    nz_k, nz_x = nz[:nc], nz[nc + nk:]
    nz_in = nz_k + nz_c + nz_x
    avals = jaxpr.in_avals

    # 1. The body linearized w.r.t. the inputs with nonzero tangents, traced once: the
    #    known step returns (*carry, *y, *residuals); `lin` is the linear step.
    lins: list[Any] = []

    def known(*a: Any) -> list[Any]:
        def step(*dyn: Any) -> list[Any]:
            it = iter(dyn)
            full = [next(it) if m else x for x, m in zip(a, nz_in)]
            return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *full)
        outs, lin = linearize_flat(step, [x for x, m in zip(a, nz_in) if m])
        lins.append(lin)
        return list(outs) + list(lin.jaxpr.consts)

    body, body_consts = _trace(known, avals)
    lin = lins[0]
    q = len(body_consts)
    bj = body.jaxpr
    const_vars = bj.invars[:q + nc]
    x_vars = bj.invars[q + nc + nk:]
    res_vars = bj.outvars[nk + ny:]
    res_avals = [v.aval for v in lin.jaxpr.jaxpr.constvars]
    nz_y = [not z for z in lin.out_zero[nk:]]

    # 2. Sort the residuals: loop-invariant (hoisted), a slice of an xs operand
    #    (forwarded), or stacked by the known scan.
    variant = _variant_vars(bj, bj.invars[q + nc:])
    x_pos = {v.id: j for j, v in enumerate(x_vars)}
    kinds: list[tuple[str, int]] = []
    inv_out: list[Any] = []
    stack_out: list[Any] = []
    for v in res_vars:
        if isinstance(v, Var) and v.id in x_pos:
            kinds.append(("x", x_pos[v.id]))
        elif isinstance(v, Literal) or v.id not in variant:
            kinds.append(("inv", len(inv_out)))
            inv_out.append(v)
        else:
            kinds.append(("stack", len(stack_out)))
            stack_out.append(v)

    inv_vals: list[Any] = []
    if inv_out:
        hoist = dce(bj, inv_out, const_vars, keep_effects=False)
        inv_vals = eval_jaxpr(hoist, [], *body_consts, *consts)

    # 3. The known scan: the primal loop, with the varying residuals as extra ys.
    known_body = ClosedJaxpr(dce(bj, bj.outvars[:nk + ny] + stack_out), [])
    outs = scan_p.bind(*body_consts, *consts, *init, *xs, reverse=reverse, length=length,
                       jaxpr=known_body, num_consts=q + nc, num_carry=nk, unroll=unroll)
    carry_out, ys, stacked = outs[:nk], outs[nk:nk + ny], outs[nk + ny:]
    if not any(nz_c) and not any(nz_y):
        return carry_out + ys, [Zero(get_aval(o)) for o in carry_out + ys]

    # 4. The linear scan: (*inv res, *consts' tangents; *carry tangents; *varying
    #    residuals, *xs' tangents) -> (*carry tangents; *ys' tangents).
    x_res = [(kind, i) for kind, i in kinds if kind != "inv"]
    x_res_vals = [stacked[i] if kind == "stack" else xs[i] for kind, i in x_res]
    t_avals = [a.strip_weak_type() for a, m in zip(avals, nz_in) if m]
    nkt, nct = sum(nz_k), sum(nz_c)
    inv_avals = [res_avals[j] for j, (kind, _) in enumerate(kinds) if kind == "inv"]
    xr_avals = [res_avals[j] for j, (kind, _) in enumerate(kinds) if kind != "inv"]
    n_inv, n_xr = len(inv_avals), len(xr_avals)
    out_avals = jaxpr.out_avals

    def linear(*a: Any) -> list[Any]:
        inv = a[:n_inv]
        kt = a[n_inv:n_inv + nkt]
        ct = a[n_inv + nkt:n_inv + nkt + nct]
        xr = a[n_inv + nkt + nct:n_inv + nkt + nct + n_xr]
        xt = a[n_inv + nkt + nct + n_xr:]
        it_inv, it_xr = iter(inv), iter(xr)
        res = [next(it_inv) if kind == "inv" else next(it_xr) for kind, _ in kinds]
        got = iter(eval_jaxpr(lin.jaxpr.jaxpr, res, *kt, *ct, *xt))
        touts = [next(got) if not z else None for z in lin.out_zero]
        want = nz_c + nz_y
        return [zeros_like_aval(out_avals[k].strip_weak_type()) if t is None else t
                for k, t in enumerate(touts) if want[k]]

    kt_avals = t_avals[:nkt]
    ct_avals = t_avals[nkt:nkt + nct]
    xt_avals = t_avals[nkt + nct:]
    lin_body, lin_consts = _trace(linear, [*inv_avals, *kt_avals, *ct_avals, *xr_avals,
                                           *xt_avals])
    kt = [t for t in tangents[:nc] if not isinstance(t, Zero)]
    ct0 = [instantiate_zeros(t) for t, m in zip(tangents[nc:nc + nk], nz_c) if m]
    xt = [t for t in tangents[nc + nk:] if not isinstance(t, Zero)]
    touts = scan_p.bind(*lin_consts, *inv_vals, *kt, *ct0, *x_res_vals, *xt, reverse=reverse,
                        length=length, jaxpr=lin_body,
                        num_consts=len(lin_consts) + n_inv + nkt, num_carry=nct,
                        unroll=unroll)
    it_c, it_y = iter(touts[:nct]), iter(touts[nct:])
    t_carry = [next(it_c) if m else Zero(get_aval(p)) for p, m in zip(carry_out, nz_c)]
    t_ys = [next(it_y) if m else Zero(get_aval(p)) for p, m in zip(ys, nz_y)]
    return carry_out + ys, t_carry + t_ys


def scan_transpose(cts: Sequence[Any], *args: Any, reverse: bool, length: int,
                   jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, unroll: int
                   ) -> list[Any]:
    """Transpose a scan linear in its `UndefinedPrimal` consts and xs and in its carry:
    a scan the other way round (see the module docstring)."""
    nc, nk = num_consts, num_carry
    consts, init, xs = list(args[:nc]), list(args[nc:nc + nk]), list(args[nc + nk:])
    k_lin = [isinstance(a, UndefinedPrimal) for a in consts]
    x_lin = [isinstance(a, UndefinedPrimal) for a in xs]
    known_k = [a for a, m in zip(consts, k_lin) if not m]
    known_x = [a for a, m in zip(xs, x_lin) if not m]
    j = jaxpr.jaxpr
    k_vars, c_vars, x_vars = j.invars[:nc], j.invars[nc:nc + nk], j.invars[nc + nk:]
    lk_avals = [v.aval.strip_weak_type() for v, m in zip(k_vars, k_lin) if m]
    c_avals = [v.aval.strip_weak_type() for v in c_vars]
    for a in c_avals:
        if dtypes.kind(a.dtype) not in "fc":
            raise NotImplementedError(
                f"transposing a scan with a non-float carry ({a.str_short()}): a linear "
                "scan's carries must all be linear")
    kx_avals = [v.aval for v, m in zip(x_vars, x_lin) if not m]
    ct_carry = [instantiate_zeros(Zero(a)) if isinstance(c, Zero) else c
                for c, a in zip(cts[:nk], c_avals)]
    ct_ys = list(cts[nk:])
    y_live = [not isinstance(c, Zero) for c in ct_ys]
    y_avals = [a.strip_weak_type() for a in jaxpr.out_avals[nk:]]
    live_ys = [c for c in ct_ys if not isinstance(c, Zero)]
    split = Jaxpr([v for v, m in zip(k_vars, k_lin) if not m]
                  + [v for v, m in zip(x_vars, x_lin) if not m],
                  [v for v, m in zip(k_vars, k_lin) if m] + list(c_vars)
                  + [v for v, m in zip(x_vars, x_lin) if m], j.outvars, j.eqns)
    n_kk, n_lk, n_kx = len(known_k), len(lk_avals), len(kx_avals)

    def bwd(*a: Any) -> list[Any]:
        kk = list(a[:n_kk])
        acc = a[n_kk:n_kk + n_lk]
        cc = list(a[n_kk + n_lk:n_kk + n_lk + nk])
        n_y = len(a) - (n_kk + n_lk + nk + n_kx)
        it_y = iter(a[n_kk + n_lk + nk:n_kk + n_lk + nk + n_y])
        kx = list(a[n_kk + n_lk + nk + n_y:])
        cy = [next(it_y) if live else Zero(av) for live, av in zip(y_live, y_avals)]
        # (the consts' running sums seed the backward pass: each contribution is added
        # where it arises, as in JAX's transposed body)
        got = backward_pass(split, kk + kx, cc + cy, accumulators=acc)
        g_k, g_c, g_x = got[:n_lk], got[n_lk:n_lk + nk], got[n_lk + nk:]
        new_acc = [instantiate_zeros(g) for g in g_k]
        g_c = [instantiate_zeros(Zero(av)) if isinstance(g, Zero) else g
               for g, av in zip(g_c, c_avals)]
        g_x = [instantiate_zeros(g) for g in g_x]
        return new_acc + g_c + g_x

    live_y_avals = [_slice_aval(get_aval(c)) for c in live_ys]
    # (xs: the ys' cotangents, then the known xs, as JAX orders them)
    body, body_consts = _trace(bwd, [*[get_aval(v) for v in known_k], *lk_avals, *c_avals,
                                     *live_y_avals,
                                     *[_slice_aval(get_aval(v)) for v in known_x]])
    acc0 = [zeros_like_aval(a) for a in lk_avals]
    outs = scan_p.bind(*body_consts, *known_k, *acc0, *ct_carry, *live_ys, *known_x,
                       reverse=not reverse, length=length, jaxpr=body,
                       num_consts=len(body_consts) + n_kk, num_carry=n_lk + nk, unroll=unroll)
    g_k = iter(outs[:n_lk])
    g_c = outs[n_lk:n_lk + nk]
    g_x = iter(outs[n_lk + nk:])
    return ([next(g_k) if m else None for m in k_lin]
            + [g if isinstance(a, UndefinedPrimal) else None for g, a in zip(g_c, init)]
            + [next(g_x) if m else None for m in x_lin])


scan_p.def_transpose(scan_transpose)
