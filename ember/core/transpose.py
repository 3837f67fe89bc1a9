"""Reverse-mode autodiff: linearize (JVP + partial evaluation) and the backward pass.

Input: a function on flat lists of values and its primal inputs. Output:
- `linearize_flat`: the primal outputs, computed now (eagerly, or staged into an enclosing
  jit), and a `Linearized`: a jaxpr of the tangent computation alone, linear in its
  inputs, whose consts are the residuals (primal values the tangent needs: cos(x) for sin).
- `backward_pass`: the cotangents of a linear jaxpr's inputs given its outputs'.
Partial evaluation is JVP under a staging trace that is not the dynamic one: the JVP trace
sits above a `DynamicJaxprTrace` whose arguments are the input tangents. A primitive on
primal values only finds the enclosing (dynamic) trace and runs there: it is "known". A
primitive that touches a tangent finds the staging trace and becomes an equation of the
linear jaxpr: it is "unknown"; the known values it uses become the jaxpr's consts.
Invariants:
- Every equation of the linear jaxpr has a tangent among its inputs, so all of them are
  linear in the inputs; transposing them needs only the rules of linear primitives.
- Cotangents accumulate with add_any (core/ad.py add_tangents, as JAX sums them);
  symbolic zeros (`Zero`) are never materialized in the backward pass, and an equation
  whose output cotangents are all zero is skipped.
- Integer and bool inputs get no tangent input (their tangent is a symbolic zero) and a
  `Zero` cotangent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.core.ad import (
    JVPTrace,
    JVPTracer,
    UndefinedPrimal,
    Zero,
    add_tangents,
    instantiate_zeros,
    is_differentiable,
)
from ember.core.aval import ShapedArray
from ember.core.eval import eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from ember.core.staging import DynamicJaxprTrace, JaxprBuilder
from ember.core.trace import get_aval, new_main


class Linearized:
    """The linear part of a function at a point.

    `jaxpr` maps the tangents of the differentiable inputs (`in_mask[i]` is True for those)
    to the tangents of the outputs whose tangent is not a symbolic zero (`out_zero[j]` is
    True for the others); its consts are the residuals.
    """

    __slots__ = ("jaxpr", "in_avals", "in_mask", "out_avals", "out_zero")

    def __init__(self, jaxpr: ClosedJaxpr, in_avals: list[ShapedArray], in_mask: list[bool],
                 out_avals: list[ShapedArray], out_zero: list[bool]):
        self.jaxpr = jaxpr
        self.in_avals = in_avals
        self.in_mask = in_mask
        self.out_avals = out_avals
        self.out_zero = out_zero

    def jvp(self, tangents: Sequence[Any]) -> list[Any]:
        """The output tangents (zeros materialized) for the input tangents."""
        ins = [t for t, m in zip(tangents, self.in_mask) if m]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *ins))
        return [instantiate_zeros(Zero(a)) if z else next(outs)
                for a, z in zip(self.out_avals, self.out_zero)]

    def vjp(self, cotangents: Sequence[Any]) -> list[Any]:
        """The input cotangents for the output cotangents (Zero where none reaches)."""
        cts = [c for c, z in zip(cotangents, self.out_zero) if not z]
        got = iter(backward_pass(self.jaxpr.jaxpr, self.jaxpr.consts, cts))
        return [next(got) if m else Zero(a) for a, m in zip(self.in_avals, self.in_mask)]


# The staging traces of the linearizations in progress: a tangent staged into one of them
# is being linearized for reverse mode (a rule that has no reverse mode checks this).
_linearizing: set[int] = set()


def is_linearized_tangent(t: Any) -> bool:
    """Whether tangent `t` is staged by a `linearize_flat` in progress (reverse mode)."""
    trace = getattr(t, "_trace", None)
    return trace is not None and id(trace.main) in _linearizing


def linearizing() -> bool:
    """Whether a `linearize_flat` is in progress (its JVP may reach reverse-mode-less code)."""
    return bool(_linearizing)


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any]
                   ) -> tuple[list[Any], Linearized]:
    """Primal outputs of `fun(*primals)` and its linearization at `primals`."""
    in_avals = [get_aval(p) for p in primals]
    in_mask = [is_differentiable(a) for a in in_avals]
    builder = JaxprBuilder()
    # The staging trace is pushed first (lower level), not as the dynamic trace: primal
    # work keeps going to the enclosing trace, tangent work is staged here.
    with new_main(DynamicJaxprTrace, payload=builder) as pe_main:
        pe = DynamicJaxprTrace(pe_main)
        _linearizing.add(id(pe_main))
        try:
            return _linearize_in(fun, primals, in_avals, in_mask, builder, pe)
        finally:
            _linearizing.discard(id(pe_main))


def _linearize_in(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
                  in_avals: list[ShapedArray], in_mask: list[bool], builder: JaxprBuilder,
                  pe: DynamicJaxprTrace) -> tuple[list[Any], Linearized]:
    tangents = [pe.new_arg(a.strip_weak_type()) if m else Zero(a)
                for a, m in zip(in_avals, in_mask)]
    with new_main(JVPTrace) as jvp_main:
        trace = JVPTrace(jvp_main)
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = [trace.full_raise(o) for o in fun(*ins)]
        out_primals = [o.primal for o in outs]
        out_tangents = [o.tangent for o in outs]
    out_zero = [isinstance(t, Zero) for t in out_tangents]
    outvars = [pe.full_raise(t)._var for t in out_tangents if not isinstance(t, Zero)]
    closed = builder.to_closed_jaxpr(outvars)
    out_avals = [get_aval(p) for p in out_primals]
    return out_primals, Linearized(closed, in_avals, in_mask, out_avals, out_zero)


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], cotangents: Sequence[Any],
                  accumulators: Sequence[Any] = ()) -> list[Any]:
    """Transpose the linear `jaxpr`: cotangents of its invars from those of its outvars.

    `accumulators` (optional, for the first invars) seed their cotangents: each
    contribution is added to the seed where it arises (a transposed scan's running sum of
    its consts' cotangents, as JAX's accumulators do), and the sum is returned.

    Equations that do not depend on an invar (none are staged by linearize_flat, but a
    linear jaxpr from elsewhere may hold them) are evaluated forward first; the others run
    backwards through their primitives' transpose rules, which see their linear inputs as
    `UndefinedPrimal`s. Returns a `Zero` for an invar no cotangent reaches.
    """
    known: dict[int, Any] = {v.id: c for v, c in zip(jaxpr.constvars, consts)}
    linear: set[int] = {v.id for v in jaxpr.invars}

    def read_known(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else known[v.id]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(isinstance(v, Var) and v.id in linear for v in eqn.invars):
            linear_eqns.append(eqn)
            linear.update(v.id for v in eqn.outvars)
            continue
        out = eqn.primitive.bind(*[read_known(v) for v in eqn.invars], **eqn.params)
        for v, o in zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]):
            known[v.id] = o

    ct_env: dict[int, Any] = {}

    def write_ct(v: Any, ct: Any) -> None:
        if ct is None or isinstance(ct, Zero) or not isinstance(v, Var) or v.id not in linear:
            return
        ct_env[v.id] = add_tangents(ct_env[v.id], ct) if v.id in ct_env else ct

    for v, ct in zip(jaxpr.invars, accumulators):
        write_ct(v, ct)
    for v, ct in zip(jaxpr.outvars, cotangents):
        write_ct(v, ct)
    for eqn in reversed(linear_eqns):
        cts_out = [ct_env.pop(v.id, None) for v in eqn.outvars]
        if all(c is None for c in cts_out):
            continue  # nothing flows back through this equation
        prim = eqn.primitive
        rule = prim.transpose_rule
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{prim.name}' not implemented")
        args = [UndefinedPrimal(v.aval) if isinstance(v, Var) and v.id in linear
                else read_known(v) for v in eqn.invars]
        if prim.multiple_results:
            ct = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts_out)]
        else:
            ct = cts_out[0]
        cts_in = rule(ct, *args, **eqn.params)
        for v, c in zip(eqn.invars, cts_in):
            write_ct(v, c)
    return [ct_env.get(v.id, Zero(v.aval)) for v in jaxpr.invars]
