"""Autodiff rules of the control-flow primitives: `cond`, `while` and `scan`.

Input: the primals and tangents of a control-flow equation (tangents may be symbolic
`Zero`s), or for `cond`'s transpose its output cotangents. Output: new control-flow
equations whose sub-jaxprs are the derivatives of the original ones, traced here.
Design:
- cond (forward and reverse): the rule binds two conds. The first ("known") runs, in each
  branch, that branch's linearization (core/transpose.py's JVP + partial evaluation) and
  returns the primal outputs plus the branch's residuals; the residuals of the other
  branches are zeros, so all branches return the same types. The second cond takes the
  index, all residuals and the nonzero input tangents and runs the taken branch's linear
  part. Only the second one touches tangents, so under `linearize` the first stays known
  (computed now, or staged into an enclosing jit) and the second becomes one equation of
  the linear jaxpr, linear in its tangent operands, which `_cond_transpose` transposes
  branch by branch. Only the taken branch's residuals and cotangents are ever computed, so
  a branch that is NaN where it is not taken (sqrt of a negative) does not poison the
  gradient, as a `select` of both branches' derivatives would.
- while (forward only): the tangents ride in the loop state next to their primals; the
  predicate sees the primals only. Under `linearize` the JVP loop is staged whole into
  the linear jaxpr (recomputing its primals, as JAX does), so linearize works; reverse
  mode would need the per-iteration residuals of an unknown number of iterations, so
  transposing it raises JAX's error (grad, vjp).
- scan: in forward mode tangents are carried and stacked like the primals. Under
  `linearize` (reverse mode) the rule hands over to `_scan_reverse.py`: a known scan that
  stacks the residuals and a linear scan on them, which has a transpose rule (so grad
  through lax.scan and static-bound lax.fori_loop works).
Invariants: a tangent is `Zero` where no nonzero tangent can reach it; loop-carried
tangents are nonzero from the start when any iteration can make them nonzero (the fixed
point of the body's zero pattern), materialized at the loop's entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.core.ad import (
    UndefinedPrimal,
    Zero,
    instantiate_zeros,
    jvp_flat,
    zeros_like_aval,
)
from ember.core.aval import ShapedArray
from ember.core.eval import eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import get_aval
from ember.core.transpose import backward_pass, is_linearized_tangent, linearize_flat
from ember.prims.control_flow import cond_p, scan_p, while_p
from ember.prims.empty import empty_like

WHILE_REVERSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")



def _trace(fun: Callable[..., list], in_avals: Sequence[ShapedArray]
           ) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace `fun` into a jaxpr whose consts (constants the rules create) are leading
    invars, as control-flow sub-jaxprs need; returns it and the values of those invars."""
    closed, _ = trace_to_jaxpr(fun, list(in_avals))
    j = closed.jaxpr
    lifted = Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns)
    return ClosedJaxpr(lifted, []), list(closed.consts)


def _permute(closed: ClosedJaxpr, in_order: Sequence[int], out_order: Sequence[int]
             ) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([], [j.invars[i] for i in in_order], [j.outvars[i] for i in
                                                                    out_order], j.eqns), [])


def _jvp_jaxpr(closed: ClosedJaxpr, nz_in: Sequence[bool], instantiate: Sequence[bool]
               ) -> tuple[ClosedJaxpr, list[Any], list[bool]]:
    """The JVP of `closed` as a jaxpr: (*consts, *primals, *tangents of the nz_in inputs)
    -> (*primal outs, *tangents of the nonzero outs). An output's tangent is nonzero when
    an input tangent reaches it or `instantiate` asks for it (then zeros materialized).
    Returns the jaxpr, its consts and which output tangents it returns."""
    avals = closed.in_avals
    out_nz: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        primals, nz_t = list(args[:len(avals)]), iter(args[len(avals):])
        tangents = [next(nz_t) if nz else Zero(a) for a, nz in zip(avals, nz_in)]
        outs, touts = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                               primals, tangents)
        out_nz[:] = [not isinstance(t, Zero) or inst for t, inst in zip(touts, instantiate)]
        return outs + [instantiate_zeros(t) for t, nz in zip(touts, out_nz) if nz]

    t_avals = [a.strip_weak_type() for a, nz in zip(avals, nz_in) if nz]
    jaxpr, consts = _trace(fun, [*avals, *t_avals])
    return jaxpr, consts, out_nz


# -- cond ---------------------------------------------------------------------------------------

def _join_consts(parts: Sequence[tuple[ClosedJaxpr, list[Any]]]
                 ) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Branches that each lead with their own consts, made to all take every branch's
    consts (unused invars for the others'), for one cond operand list."""
    all_consts = [c for _, cs in parts for c in cs]
    out = []
    offset = 0
    for j, cs in parts:
        n = len(cs)
        slots = [Var(get_aval(c)) for c in all_consts]
        slots[offset:offset + n] = j.jaxpr.invars[:n]
        out.append(ClosedJaxpr(Jaxpr([], slots + j.jaxpr.invars[n:], j.jaxpr.outvars,
                                     j.jaxpr.eqns), []))
        offset += n
    return out, all_consts


def _residual_slots(res_avals: Sequence[Sequence[ShapedArray]]
                    ) -> tuple[list[ShapedArray], list[list[int]]]:
    """Residual slots shared between a cond's branches: only one branch runs, so the k-th
    residual of a given type in one branch can share a slot with the k-th of that type in
    another. Slots are numbered in the order the branches, first to last, first need them
    (JAX's order). Returns the slots' avals and, per branch, the slot of each residual.
    E.g. branches residuals [f32[3]] and [f32[3], f32[3], i32[]] -> slots
    [f32[3], f32[3], i32[]], where [[0], [0, 1, 2]] (not four slots)."""
    slot_of: dict[tuple[ShapedArray, int], int] = {}
    slot_avals: list[ShapedArray] = []
    where: list[list[int]] = []
    for avals in res_avals:
        seen: dict[ShapedArray, int] = {}
        mine = []
        for a in avals:
            key = (a, seen.get(a, 0))
            seen[a] = key[1] + 1
            if key not in slot_of:
                slot_of[key] = len(slot_avals)
                slot_avals.append(a)
            mine.append(slot_of[key])
        where.append(mine)
    return slot_avals, where


def _cond_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
              branches: tuple[ClosedJaxpr, ...]) -> tuple[list[Any], list[Any]]:
    index, args = primals[0], list(primals[1:])
    arg_t = list(tangents[1:])
    avals = [get_aval(a) for a in args]
    nz_in = [not isinstance(t, Zero) for t in arg_t]
    n_out = len(branches[0].out_avals)
    out_avals = branches[0].out_avals

    # 1. Each branch linearized at the primals, w.r.t. the inputs with nonzero tangents:
    #    traced once to learn its residuals and the linear jaxpr that uses them.
    lins: list[Any] = []
    first: list[tuple[ClosedJaxpr, list[Any]]] = []
    for br in branches:
        def known(*xs: Any, br: ClosedJaxpr = br) -> list[Any]:
            def g(*dyn: Any) -> list[Any]:
                it = iter(dyn)
                full = [next(it) if nz else x for x, nz in zip(xs, nz_in)]
                return eval_jaxpr(br.jaxpr, br.consts, *full)
            outs, lin = linearize_flat(g, [x for x, nz in zip(xs, nz_in) if nz])
            lins.append(lin)
            return list(outs) + list(lin.jaxpr.consts)
        first.append(_trace(known, avals))
    res_avals = [[v.aval for v in lin.jaxpr.jaxpr.constvars] for lin in lins]
    slot_avals, slots = _residual_slots(res_avals)
    # An output's tangent is nonzero if it is in any branch; the others materialize it.
    out_nz = [not all(lin.out_zero[k] for lin in lins) for k in range(n_out)]

    # 2. The known cond: branch b returns its outputs and its residuals in their slots
    #    (shared between branches by type, `_residual_slots`), `empty2` in the slots it
    #    does not write (so all branches have one type).
    known_parts = []
    for b, (j, cs) in enumerate(first):
        def padded(*a: Any, j: ClosedJaxpr = j, b: int = b) -> list[Any]:
            outs = eval_jaxpr(j.jaxpr, [], *a)
            res = [empty_like(r) for r in slot_avals]
            for k, r in zip(slots[b], outs[n_out:]):
                res[k] = r
            return outs[:n_out] + res
        jp, cs2 = _trace(padded, j.in_avals)
        known_parts.append((jp, cs2 + cs))
    known_jaxprs, known_consts = _join_consts(known_parts)
    outs = cond_p.bind(index, *known_consts, *args, branches=tuple(known_jaxprs))
    primal_out, residuals = outs[:n_out], outs[n_out:]
    if not any(out_nz):
        return primal_out, [Zero(a) for a in out_avals]

    # 3. The tangent cond: branch b runs its linear jaxpr on its residuals and the
    #    tangents; linear in the tangents, so it transposes (`_cond_transpose`).
    t_in = [instantiate_zeros(t) for t, nz in zip(arg_t, nz_in) if nz]
    t_avals = [get_aval(t).strip_weak_type() for t in t_in]
    tan_parts = []
    for lin, mine in zip(lins, slots):
        def linear(*a: Any, lin: Any = lin, mine: list[int] = mine) -> list[Any]:
            res, ts = [a[k] for k in mine], a[len(slot_avals):]
            ins = [t for t, m in zip(ts, lin.in_mask) if m]
            got = iter(eval_jaxpr(lin.jaxpr.jaxpr, res, *ins))
            return [zeros_like_aval(out_avals[k].strip_weak_type()) if z else next(got)
                    for k, z in enumerate(lin.out_zero) if out_nz[k]]
        tan_parts.append(_trace(linear, [*slot_avals, *t_avals]))
    tan_jaxprs, tan_consts = _join_consts(tan_parts)
    touts = iter(cond_p.bind(index, *tan_consts, *residuals, *t_in,
                             branches=tuple(tan_jaxprs)))
    return primal_out, [next(touts) if nz else Zero(a) for a, nz in zip(out_avals, out_nz)]


def _cond_transpose(cts: Sequence[Any], index: Any, *args: Any,
                    branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    """Transpose a cond linear in its `UndefinedPrimal` operands: a cond whose branch b
    is the backward pass of branch b (cotangents of the linear operands, from the known
    operands and the output cotangents)."""
    lin = [isinstance(a, UndefinedPrimal) for a in args]
    known_vals = [a for a, m in zip(args, lin) if not m]
    cts = [instantiate_zeros(c) for c in cts]
    in_avals = [get_aval(v) for v in known_vals] + [get_aval(c) for c in cts]
    parts = []
    for br in branches:
        j = br.jaxpr
        split = Jaxpr([v for v, m in zip(j.invars, lin) if not m],
                      [v for v, m in zip(j.invars, lin) if m], j.outvars, j.eqns)

        def bwd(*a: Any, split: Jaxpr = split) -> list[Any]:
            ks, cs = a[:len(known_vals)], a[len(known_vals):]
            got = backward_pass(split, list(ks), list(cs))
            return [instantiate_zeros(g) for g in got]
        parts.append(_trace(bwd, in_avals))
    jaxprs, consts = _join_consts(parts)
    got = iter(cond_p.bind(index, *consts, *known_vals, *cts, branches=tuple(jaxprs)))
    return [None] + [next(got) if m else None for m in lin]


# -- while --------------------------------------------------------------------------------------

def _loop_nonzero(jvp_of: Callable[[list[bool]], list[bool]], nz_carry: list[bool]
                  ) -> list[bool]:
    """The fixed point of the carry tangents' nonzero pattern: a carry tangent that some
    iteration makes nonzero is nonzero from the start (the loop state has one type)."""
    while True:
        out = jvp_of(nz_carry)
        new = [a or b for a, b in zip(nz_carry, out)]
        if new == nz_carry:
            return nz_carry
        nz_carry = new


def _while_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, cond_nconsts: int,
               cond_jaxpr: ClosedJaxpr, body_nconsts: int, body_jaxpr: ClosedJaxpr
               ) -> tuple[list[Any], list[Any]]:
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts, init = primals[:nc], primals[nc:nc + nb], list(primals[nc + nb:])
    bconst_t, init_t = tangents[nc:nc + nb], list(tangents[nc + nb:])
    nz_b = [not isinstance(t, Zero) for t in bconst_t]
    n = len(init)

    def carry_out_nz(nz_c: list[bool]) -> list[bool]:
        return _jvp_jaxpr(body_jaxpr, nz_b + nz_c, [False] * n)[2]

    nz_c = _loop_nonzero(carry_out_nz, [not isinstance(t, Zero) for t in init_t])
    body, consts, _ = _jvp_jaxpr(body_jaxpr, nz_b + nz_c, nz_c)
    # body invars: (*consts, *bconsts, *carry, *bconst tangents, *carry tangents);
    # the while wants (*consts, *bconsts, *bconst tangents, *carry, *carry tangents).
    k, nbt, nct = len(consts), sum(nz_b), sum(nz_c)
    order = [*range(k + nb), *range(k + nb + n, k + nb + n + nbt),
             *range(k + nb, k + nb + n), *range(k + nb + n + nbt, k + nb + n + nbt + nct)]
    body = _permute(body, order, range(n + nct))
    # The predicate reads the primal carry only: unused invars for the tangents.
    cj = cond_jaxpr.jaxpr
    extra = [Var(a.strip_weak_type()) for a, nz in zip(body_jaxpr.out_avals, nz_c) if nz]
    cond = ClosedJaxpr(Jaxpr([], cj.invars + extra, cj.outvars, cj.eqns), [])
    carry_t = [instantiate_zeros(t) for t, nz in zip(init_t, nz_c) if nz]
    outs = while_p.bind(*cconsts, *consts, *bconsts, *[t for t in bconst_t
                                                       if not isinstance(t, Zero)],
                        *init, *carry_t, cond_nconsts=nc, cond_jaxpr=cond,
                        body_nconsts=k + nb + nbt, body_jaxpr=body)
    touts = iter(outs[n:])
    primal_out = outs[:n]
    if any(is_linearized_tangent(t) for t in tangents):
        # Under linearize the loop above is staged whole into the linear jaxpr (it reads
        # tangents), its primal half recomputed there; the primal outputs must be known,
        # so the plain loop runs again on the primals. linearize and its jvp work; only
        # transposing the staged loop fails, with JAX's error (`_while_transpose`).
        primal_out = while_p.bind(*primals, cond_nconsts=nc, cond_jaxpr=cond_jaxpr,
                                  body_nconsts=nb, body_jaxpr=body_jaxpr)
    return primal_out, [next(touts) if nz else Zero(get_aval(p))
                      for p, nz in zip(outs[:n], nz_c)]


# -- scan ---------------------------------------------------------------------------------------

def _scan_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, reverse: bool, length: int,
              jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, unroll: int
              ) -> tuple[list[Any], list[Any]]:
    nc, nk = num_consts, num_carry
    nx = len(primals) - nc - nk
    ny = len(jaxpr.out_avals) - nk
    nz = [not isinstance(t, Zero) for t in tangents]
    nz_k, nz_x = nz[:nc], nz[nc + nk:]

    def carry_out_nz(nz_c: list[bool]) -> list[bool]:
        return _jvp_jaxpr(jaxpr, nz_k + nz_c + nz_x, [False] * (nk + ny))[2][:nk]

    nz_c = _loop_nonzero(carry_out_nz, nz[nc:nc + nk])
    if any(is_linearized_tangent(t) for t in tangents):
        # Reverse mode: a known scan stacking the residuals and a linear scan on them.
        from ember.prims._scan_reverse import scan_linearize
        return scan_linearize(primals, tangents, nz_c, reverse=reverse, length=length,
                              jaxpr=jaxpr, num_consts=nc, num_carry=nk, unroll=unroll)
    body, consts, out_nz = _jvp_jaxpr(jaxpr, nz_k + nz_c + nz_x, nz_c + [False] * ny)
    nz_y = out_nz[nk:]
    # invars: (*consts, *k, *c, *x, *kt, *ct, *xt) -> (*consts, *k, *kt, *c, *ct, *x, *xt);
    # outvars: (*c, *y, *ct, *yt) -> (*c, *ct, *y, *yt).
    q, nkt, nct, nxt, nyt = len(consts), sum(nz_k), sum(nz_c), sum(nz_x), sum(nz_y)
    p0 = q + nc + nk + nx
    order = [*range(q + nc), *range(p0, p0 + nkt), *range(q + nc, q + nc + nk),
             *range(p0 + nkt, p0 + nkt + nct), *range(q + nc + nk, p0),
             *range(p0 + nkt + nct, p0 + nkt + nct + nxt)]
    m = nk + ny
    out_order = [*range(nk), *range(m, m + nct), *range(nk, m), *range(m + nct, m + nct + nyt)]
    body = _permute(body, order, out_order)
    live = [t for t in tangents if not isinstance(t, Zero)]
    k_t = live[:nkt]
    c_t = [instantiate_zeros(t) for t, z in zip(tangents[nc:nc + nk], nz_c) if z]
    x_t = [t for t in tangents[nc + nk:] if not isinstance(t, Zero)]
    outs = scan_p.bind(*consts, *primals[:nc], *k_t, *primals[nc:nc + nk], *c_t,
                       *primals[nc + nk:], *x_t, reverse=reverse, length=length, jaxpr=body,
                       num_consts=q + nc + nkt, num_carry=nk + nct, unroll=unroll)
    carry, ct_out = outs[:nk], iter(outs[nk:nk + nct])
    ys, yt_out = outs[nk + nct:nk + nct + ny], iter(outs[nk + nct + ny:])
    t_carry = [next(ct_out) if z else Zero(get_aval(p)) for p, z in zip(carry, nz_c)]
    t_ys = [next(yt_out) if z else Zero(get_aval(p)) for p, z in zip(ys, nz_y)]
    return carry + ys, t_carry + t_ys


def _while_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    raise ValueError(WHILE_REVERSE_ERROR)


cond_p.def_jvp(_cond_jvp)
cond_p.def_transpose(_cond_transpose)
while_p.def_jvp(_while_jvp)
while_p.def_transpose(_while_transpose)
scan_p.def_jvp(_scan_jvp)

# scan's reverse mode (its linearization and transpose rule) has its own module.
from ember.prims import _scan_reverse  # noqa: E402, F401
