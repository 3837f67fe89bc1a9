"""vmap's batching rules of the control-flow primitives: `cond`, `while` and `scan`.

Input: the operands of a control-flow equation with their batch axes (core/batching.py's
rule protocol). Output: one new control-flow equation (or, for a mapped `cond` index, a
selection between all branches) whose sub-jaxprs are the batched bodies, traced by
`batching.batch_jaxpr` with every mapped value's batch axis at 0.
Design (JAX's rules):
- cond, unmapped index: one cond over the batched branches; an output is mapped when it
  is in any branch (the others broadcast it), so all branches return one type.
- cond, mapped index: every branch runs on the whole batch and `select_n` picks each
  example's result by its index. A branch's operands are `select(index == i, x,
  stop_gradient(x))`, so under reverse mode an example's cotangent never flows through a
  branch it did not take (a NaN derivative there would poison the sum otherwise).
- while: which carries are mapped is a fixed point (a carry some iteration makes mapped is
  mapped from the start). With an unmapped predicate the loop runs the batched body. With
  a mapped predicate every carry is mapped; the loop runs while any example's predicate
  holds (`reduce_or`), and each step keeps the old carry of the examples whose predicate
  is false (`select_n`): finished examples are frozen.
- scan: the carry's fixed point as for while; mapped consts and carries have their batch
  axis at 0, mapped xs at 1 (axis 0 is the scanned one), so each slice and each stacked y
  has it at 0 and 1.
Invariants: the sub-jaxprs bound have no consts: constants the batching rules created are
hoisted into leading operands (consts of cond, cond_consts/body_consts of while,
num_consts of scan).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import batching
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, batch_jaxpr, eval_body, not_mapped
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Var
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import get_aval
from ember.prims import _ad
from ember.prims.control_flow import cond_p, scan_p, while_p
from ember.prims.conversion import select_n_p, stop_gradient_p
from ember.prims.reductions import reduce_or_p


def _hoist(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """`closed` with its consts turned into leading invars, and their values."""
    j = closed.jaxpr
    return (ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), []),
            list(closed.consts))


def _stage(fun: Callable[..., list], in_avals: Sequence[ShapedArray]
           ) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace `fun` into a jaxpr with its consts hoisted (see `_hoist`)."""
    closed, _ = trace_to_jaxpr(fun, list(in_avals))
    return _hoist(closed)


def _run(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_body(closed.jaxpr, closed.consts, *args)


def _fixed_point(out_batched: Callable[[list[bool]], list[bool]], carry: list[bool]
                 ) -> list[bool]:
    """The least carry pattern that contains `carry` and what one iteration maps."""
    while True:
        new = [a or b for a, b in zip(carry, out_batched(carry))]
        if new == carry:
            return carry
        carry = new


def _front(x: Any, d: int | None) -> Any:
    """A mapped x with its batch axis at 0; an unmapped x as it is."""
    return x if d is not_mapped else batching.moveaxis(x, d, 0)


def _lanes(pred: Any, shape: tuple[int, ...]) -> Any:
    """A per-example (B,) predicate or index stretched over a (B, ...) value's shape."""
    if len(get_aval(pred).shape) == len(shape):
        return pred
    return _ad.broadcast_in_dim(pred, shape, (0,))


def _select_lanes(pred: Any, on_true: Any, on_false: Any) -> Any:
    return _ad.select(_lanes(pred, get_aval(on_true).shape), on_true, on_false)


# -- cond ---------------------------------------------------------------------------------------

def _join_operands(parts: Sequence[tuple[ClosedJaxpr, list[Any]]]
                   ) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Branches that each lead with their own hoisted consts, made to take every branch's
    consts (unused invars for the others'), for one operand list."""
    all_consts = [c for _, cs in parts for c in cs]
    out = []
    offset = 0
    for closed, cs in parts:
        j, n = closed.jaxpr, len(cs)
        slots: list[Var] = [Var(get_aval(c)) for c in all_consts]
        slots[offset:offset + n] = j.invars[:n]
        out.append(ClosedJaxpr(Jaxpr([], slots + j.invars[n:], j.outvars, j.eqns), []))
        offset += n
    return out, all_consts


def _cond_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                branches: tuple[ClosedJaxpr, ...]) -> tuple[list[Any], list[int | None]]:
    index, ops = args[0], list(args[1:])
    index_dim, op_dims = dims[0], list(dims[1:])
    if index_dim is not not_mapped:
        return _cond_select(axis, index, index_dim, ops, op_dims, branches)
    in_bat = [d is not not_mapped for d in op_dims]
    ops = [_front(x, d) for x, d in zip(ops, op_dims)]
    out_bat = [False] * len(branches[0].out_avals)
    for br in branches:
        out_bat = [a or b for a, b in zip(out_bat, batch_jaxpr(br, axis, in_bat, False)[1])]
    # A branch object shared by several indices (switch(i, [g, g, h])) stays shared.
    done: dict[int, tuple[ClosedJaxpr, list[Any]]] = {}
    parts = [done.setdefault(id(br), _hoist(batch_jaxpr(br, axis, in_bat, out_bat)[0]))
             for br in branches]
    jaxprs, consts = _join_operands(parts)
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    return outs, [0 if b else not_mapped for b in out_bat]


def _cond_select(axis: AxisData, index: Any, index_dim: int, ops: list[Any],
                 op_dims: list[int | None], branches: tuple[ClosedJaxpr, ...]
                 ) -> tuple[list[Any], list[int | None]]:
    """A cond with a per-example index: all branches on the whole batch, then select_n."""
    index = batching.moveaxis(index, index_dim, 0)
    ops = [batching.bdim_at_front(x, d, axis.size) for x, d in zip(ops, op_dims)]
    results = []
    for i, br in enumerate(branches):
        batched, _ = batch_jaxpr(br, axis, [True] * len(ops), True)
        taken = _ad.compare("eq", index, np.int32(i))
        guarded = [_select_lanes(taken, x, stop_gradient_p.bind(x)) for x in ops]
        results.append(_run(batched, guarded))
    outs = [select_n_p.bind(_lanes(index, get_aval(cases[0]).shape), *cases)
            for cases in zip(*results)]
    return outs, [0] * len(outs)


# -- while --------------------------------------------------------------------------------------

def _while_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                 cond_nconsts: int, cond_jaxpr: ClosedJaxpr, body_nconsts: int,
                 body_jaxpr: ClosedJaxpr) -> tuple[list[Any], list[int | None]]:
    nc, nb = cond_nconsts, body_nconsts
    bat = [d is not not_mapped for d in dims]
    cc_bat, bc_bat, carry_bat = bat[:nc], bat[nc:nc + nb], bat[nc + nb:]
    carry_bat = _fixed_point(
        lambda cb: batch_jaxpr(body_jaxpr, axis, bc_bat + cb, cb)[1], carry_bat)
    _, (pred_bat,) = batch_jaxpr(cond_jaxpr, axis, cc_bat + carry_bat, False)
    if pred_bat:
        carry_bat = [True] * len(carry_bat)
    vals = [_front(x, d) for x, d in zip(args, dims)]
    cconsts, bconsts = vals[:nc], vals[nc:nc + nb]
    init = [batching.bdim_at_front(x, d, axis.size) if b else x
            for x, d, b in zip(args[nc + nb:], dims[nc + nb:], carry_bat)]
    body_b, _ = batch_jaxpr(body_jaxpr, axis, bc_bat + carry_bat, carry_bat)
    cond_b, _ = batch_jaxpr(cond_jaxpr, axis, cc_bat + carry_bat, False)
    out_dims = [0 if b else not_mapped for b in carry_bat]
    if not pred_bat:
        cond_j, ck = _hoist(cond_b)
        body_j, bk = _hoist(body_b)
        outs = while_p.bind(*ck, *cconsts, *bk, *bconsts, *init,
                            cond_nconsts=len(ck) + nc, cond_jaxpr=cond_j,
                            body_nconsts=len(bk) + nb, body_jaxpr=body_j)
        return outs, out_dims
    cc_avals = cond_b.in_avals[:nc]
    carry_avals = body_b.in_avals[nb:]

    def any_lane(*a: Any) -> list[Any]:
        pred = _run(cond_b, a)[0]
        return [reduce_or_p.bind(pred, axes=(0,), out_sharding=None)]

    def step(*a: Any) -> list[Any]:
        # Examples whose predicate is false keep their carry: they finished earlier.
        cc, bc, carry = a[:nc], a[nc:nc + nb], list(a[nc + nb:])
        live = _run(cond_b, [*cc, *carry])[0]
        new = _run(body_b, [*bc, *carry])
        return [_select_lanes(live, n, o) for n, o in zip(new, carry)]

    cond_j, ck = _stage(any_lane, [*cc_avals, *carry_avals])
    body_j, bk = _stage(step, [*cc_avals, *body_b.in_avals[:nb], *carry_avals])
    outs = while_p.bind(*ck, *cconsts, *bk, *cconsts, *bconsts, *init,
                        cond_nconsts=len(ck) + nc, cond_jaxpr=cond_j,
                        body_nconsts=len(bk) + nc + nb, body_jaxpr=body_j)
    return outs, out_dims


# -- scan ---------------------------------------------------------------------------------------

def _scan_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
                reverse: bool, length: int, jaxpr: ClosedJaxpr, num_consts: int,
                num_carry: int, unroll: int) -> tuple[list[Any], list[int | None]]:
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    bat = [d is not not_mapped for d in dims]
    k_bat, c_bat, x_bat = bat[:nc], bat[nc:nc + nk], bat[nc + nk:]
    c_bat = _fixed_point(
        lambda cb: batch_jaxpr(jaxpr, axis, k_bat + cb + x_bat, cb + [False] * ny)[1][:nk],
        c_bat)
    batched, out_bat = batch_jaxpr(jaxpr, axis, k_bat + c_bat + x_bat, c_bat + [False] * ny)
    body, hoisted = _hoist(batched)
    consts = [_front(x, d) for x, d in zip(args[:nc], dims[:nc])]
    init = [batching.bdim_at_front(x, d, axis.size) if b else x
            for x, d, b in zip(args[nc:nc + nk], dims[nc:nc + nk], c_bat)]
    # The scanned axis of xs is 0, so their batch axis goes to 1: a slice has it at 0.
    xs = [x if d is not_mapped else batching.moveaxis(x, d, 1)
          for x, d in zip(args[nc + nk:], dims[nc + nk:])]
    outs = scan_p.bind(*hoisted, *consts, *init, *xs, reverse=reverse, length=length,
                       jaxpr=body, num_consts=len(hoisted) + nc, num_carry=nk, unroll=unroll)
    out_dims = [0 if b else not_mapped for b in c_bat] + \
        [1 if b else not_mapped for b in out_bat[nk:]]
    return outs, out_dims


cond_p.def_batch(_cond_batch)
while_p.def_batch(_while_batch)
scan_p.def_batch(_scan_batch)
