"""Lowering of the control-flow primitives (prims/control_flow.py) to HLO.

  cond(index, *ops)  => conditional(index, operand, ..., operand),
                        branch_computations={branch_0, ...}
      every branch receives the same operand: the single value, or a tuple of all of
      them; a branch returns its single result, or a tuple of its results.
  while(cc, bc, init) => while(tuple(cc..., bc..., init...)), condition=%while_cond,
                        body=%while_body
      the loop state holds the consts too (a body has one parameter); the body passes
      them through unchanged, so LICM and DCE see them as invariant.
  scan(c, init, xs)  => while over the state (i: s32, c..., carry..., xs..., ys...):
      the condition is `i < trips`; an iteration reads x_t = dynamic-slice(xs, [t, 0..])
      and writes ys = dynamic-update-slice(ys, y_t, [t, 0..]) with t = i (or
      length - 1 - i when reverse); `unroll = u` puts u copies of the body in one loop
      iteration for length // u iterations, and a second loop of one copy runs the
      remaining length % u steps. ys start as zeros; length 0 makes no loop.
Every rule returns one instruction per result (get-tuple-elements of the loop or
conditional); sub-jaxprs are lowered with `ctx.lower_sub`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.jaxpr import ClosedJaxpr
from ember.hlo.builder import Builder
from ember.hlo.ir import Instruction


def _pack(b: Builder, xs: list[Instruction]) -> Instruction:
    """One value as itself; zero or several as a tuple."""
    return xs[0] if len(xs) == 1 else b.tuple(xs)


def _unpack(b: Builder, x: Instruction, n: int) -> list[Instruction]:
    return [x] if n == 1 else [b.get_tuple_element(x, k) for k in range(n)]


def _elements(b: Builder, state: Instruction) -> list[Instruction]:
    return [b.get_tuple_element(state, k) for k in range(len(state.shape.tuple_shapes))]


def _s32(b: Builder, value: int) -> Instruction:
    return b.constant(np.int32(value))


def cond_lowering(ctx: Any, index: Instruction, *args: Instruction,
                  branches: tuple[ClosedJaxpr, ...]) -> list[Instruction]:
    operand = _pack(ctx.b, list(args))
    nout = len(ctx.avals_out)
    comps = []
    for k, branch in enumerate(branches):
        sb = ctx.sub_builder(f"branch_{k}")
        param = sb.parameter(operand.shape, "arg" if len(args) == 1 else "arg_tuple")
        outs = ctx.lower_sub(sb, branch, _unpack(sb, param, len(args)), f"branch_{k}_fun")
        comps.append(sb.build_computation(_pack(sb, outs)))
    result = ctx.b.conditional(index, comps, [operand] * len(comps))
    return _unpack(ctx.b, result, nout)


def while_lowering(ctx: Any, *args: Instruction, cond_nconsts: int, cond_jaxpr: ClosedJaxpr,
                   body_nconsts: int, body_jaxpr: ClosedJaxpr) -> list[Instruction]:
    nc, nb = cond_nconsts, body_nconsts
    state = ctx.b.tuple(list(args))

    cb = ctx.sub_builder("while_cond")
    el = _elements(cb, cb.parameter(state.shape, "arg_tuple"))
    (pred,) = ctx.lower_sub(cb, cond_jaxpr, el[:nc] + el[nc + nb:], "cond")
    cond = cb.build_computation(pred)

    bb = ctx.sub_builder("while_body")
    el = _elements(bb, bb.parameter(state.shape, "arg_tuple"))
    new = ctx.lower_sub(bb, body_jaxpr, el[nc:], "body")
    body = bb.build_computation(bb.tuple(el[:nc + nb] + new))

    loop = ctx.b.while_loop(cond, body, state)
    return [ctx.b.get_tuple_element(loop, nc + nb + j) for j in range(len(args) - nc - nb)]


def _zeros(b: Builder, aval: ShapedArray, shape: tuple[int, ...]) -> Instruction:
    return b.broadcast(b.constant(np.zeros((), aval.dtype)), shape)


class _ScanLayout:
    """Where each kind of value sits in the scan loop's state tuple."""

    def __init__(self, num_consts: int, num_carry: int, num_xs: int, num_ys: int):
        self.consts = range(1, 1 + num_consts)
        self.carry = range(self.consts.stop, self.consts.stop + num_carry)
        self.xs = range(self.carry.stop, self.carry.stop + num_xs)
        self.ys = range(self.xs.stop, self.xs.stop + num_ys)


def scan_lowering(ctx: Any, *args: Instruction, reverse: bool, length: int,
                  jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                  unroll: int) -> list[Instruction]:
    nx = len(args) - num_consts - num_carry
    y_avals = jaxpr.out_avals[num_carry:]
    init = list(args[num_consts:num_consts + num_carry])
    ys0 = [_zeros(ctx.b, a, (length, *a.shape)) for a in y_avals]
    if length == 0:
        return init + ys0
    layout = _ScanLayout(num_consts, num_carry, nx, len(y_avals))
    state = ctx.b.tuple([_s32(ctx.b, 0), *args, *ys0])
    copies = length if unroll <= 0 or unroll >= length else int(unroll)
    main = length - length % copies
    loop = _scan_loop(ctx, state, layout, jaxpr, copies, main, length, reverse)
    if main < length:
        loop = _scan_loop(ctx, loop, layout, jaxpr, 1, length, length, reverse)
    return ([ctx.b.get_tuple_element(loop, k) for k in layout.carry]
            + [ctx.b.get_tuple_element(loop, k) for k in layout.ys])


def _scan_loop(ctx: Any, state: Instruction, layout: _ScanLayout, jaxpr: ClosedJaxpr,
               copies: int, limit: int, length: int, reverse: bool) -> Instruction:
    """A while loop running `copies` scan steps per iteration until the counter reaches
    `limit` (a multiple of `copies` past the counter's start)."""
    cb = ctx.sub_builder("scan_cond")
    counter = cb.get_tuple_element(cb.parameter(state.shape, "arg_tuple"), 0)
    cond = cb.build_computation(cb.compare(counter, _s32(cb, limit), "LT"))

    bb = ctx.sub_builder("scan_body")
    el = _elements(bb, bb.parameter(state.shape, "arg_tuple"))
    i = el[0]
    consts = [el[k] for k in layout.consts]
    carry = [el[k] for k in layout.carry]
    xs = [el[k] for k in layout.xs]
    ys = [el[k] for k in layout.ys]
    for copy in range(copies):
        step = i if copy == 0 else bb.add(i, _s32(bb, copy))
        t = bb.subtract(_s32(bb, length - 1), step) if reverse else step
        x_t = [_index_slice(bb, x, t) for x in xs]
        outs = ctx.lower_sub(bb, jaxpr, consts + carry + x_t, "body")
        carry = outs[:len(carry)]
        ys = [_index_update(bb, y, v, t) for y, v in zip(ys, outs[len(carry):])]
    i_next = bb.add(i, _s32(bb, copies))
    body = bb.build_computation(bb.tuple([i_next, *consts, *carry, *xs, *ys]))
    return ctx.b.while_loop(cond, body, state)


def _index_slice(b: Builder, x: Instruction, t: Instruction) -> Instruction:
    """x[t] for a traced s32 scalar t: dynamic-slice of one row, reshaped to drop it."""
    rest = x.shape.dimensions[1:]
    zero = _s32(b, 0)
    row = b.dynamic_slice(x, [t] + [zero] * len(rest), (1, *rest))
    return b.reshape(row, rest)


def _index_update(b: Builder, ys: Instruction, y: Instruction, t: Instruction) -> Instruction:
    """ys with row t replaced by y: dynamic-update-slice of one row."""
    rest = ys.shape.dimensions[1:]
    zero = _s32(b, 0)
    row = b.reshape(y, (1, *rest))
    return b.dynamic_update_slice(ys, row, [t] + [zero] * len(rest))

