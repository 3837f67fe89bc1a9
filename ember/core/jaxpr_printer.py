"""Print jaxprs exactly as JAX 0.10.2 prints them.

Input: a Jaxpr. Output: text such as
    { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b in (c,) }
Invariants: variables are named a..z, ba, bb, ... in order of first appearance (constvars,
invars, then equations, outputs before params before inputs), one naming context for the
whole text including nested jaxprs; an inner `jit` jaxpr reuses the names of the outer
variables passed to it and bound from it; literals print as `2.0:f32[]`; params are sorted
by name (unless a primitive's `pp_params` returns an ordered list of pairs) and each
primitive may hide params JAX does not show (`Primitive.pp_params`); lines
break as JAX's Wadler printer breaks them at width 80.
"""

from __future__ import annotations

from typing import Any

from ember.core import pretty as pp
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var


class PpContext:
    """One naming scope for a printed jaxpr and every jaxpr nested inside it."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.count = 0

    def name(self, v: Var) -> str:
        name = self.names.get(v.id)
        if name is None:
            name = encode_name(self.count)
            self.count += 1
            self.names[v.id] = name
        return name

    def alias(self, inner: Var, outer_name: str) -> None:
        if inner.id not in self.names:
            self.names[inner.id] = outer_name


def encode_name(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba: base 26 with the letters as digits."""
    digits = []
    while True:
        n, r = divmod(n, 26)
        digits.append(chr(ord("a") + r))
        if n == 0:
            break
    return "".join(reversed(digits))


def pp_atom(v: Any, ctx: PpContext) -> str:
    if isinstance(v, Literal):
        return repr(v)
    return ctx.name(v)


def pp_vars(vs: list, ctx: PpContext, *, separator: str = "",
            print_shapes: bool = False) -> pp.Doc:
    if print_shapes:
        items = [pp.text(pp_atom(v, ctx) + ":" + v.aval.str_short()) for v in vs]
    else:
        items = [pp.text(pp_atom(v, ctx)) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), items)))


def pp_param_value(v: Any) -> str:
    if hasattr(v, "dtype") and not hasattr(v, "shape"):
        return str(v)
    return str(v)


def pp_kv_pair(k: str, v: Any, ctx: PpContext) -> pp.Doc:
    if isinstance(v, ClosedJaxpr):
        return pp.text(f"{k}=") + pp_jaxpr(v.jaxpr, ctx)
    if isinstance(v, Jaxpr):
        return pp.text(f"{k}=") + pp_jaxpr(v, ctx)
    if type(v) is tuple and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        inner = [pp_jaxpr(j.jaxpr if isinstance(j, ClosedJaxpr) else j, ctx) for j in v]
        return pp.text(f"{k}=") + pp.group(pp.nest(2, pp.concat([
            pp.text("("), pp.brk(""), pp.join(pp.text(",") + pp.brk(), inner)]))
            + pp.brk("") + pp.text(")"))
    return pp.text(f"{k}={pp_param_value(v)}")


def pp_kv_pairs(pairs: list[tuple[str, Any]], ctx: PpContext) -> pp.Doc:
    if not pairs:
        return pp.nil()
    return pp.group(pp.nest(2, pp.concat([
        pp.text("["), pp.brk(""), pp.join(pp.brk(), [pp_kv_pair(k, v, ctx) for k, v in pairs])]))
        + pp.brk("") + pp.text("]"))


def _alias_call_vars(eqn: JaxprEqn, ctx: PpContext) -> None:
    """Name an inner jit's binders after the outer variables passed in and bound out."""
    inner = eqn.params.get("jaxpr")
    if inner is None:
        return
    jaxpr = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
    for inner_var, outer in zip(jaxpr.invars, eqn.invars):
        if isinstance(outer, Var):
            ctx.alias(inner_var, ctx.name(outer))
    bound = {v.id for v in jaxpr.invars} | {v.id for v in jaxpr.constvars}
    for inner_var, outer in zip(jaxpr.outvars, eqn.outvars):
        if isinstance(inner_var, Var) and inner_var.id not in bound:
            ctx.alias(inner_var, ctx.name(outer))


def pp_eqn(eqn: JaxprEqn, ctx: PpContext) -> pp.Doc:
    lhs = pp_vars(eqn.outvars, ctx, print_shapes=True)
    prim = eqn.primitive
    if getattr(prim, "pp_alias_call_vars", False):
        _alias_call_vars(eqn, ctx)
    shown = prim.pp_params(eqn.params) if hasattr(prim, "pp_params") else eqn.params
    pairs = sorted(shown.items()) if isinstance(shown, dict) else list(shown)
    rhs = [pp.text(prim.name), pp_kv_pairs(pairs, ctx),
           pp.text(" ") + pp_vars(eqn.invars, ctx)]
    return pp.concat([lhs, pp.text(" = "), *rhs])


def pp_jaxpr(jaxpr: Jaxpr, ctx: PpContext) -> pp.Doc:
    constvars = pp_vars(jaxpr.constvars, ctx, print_shapes=True)
    invars = pp_vars(jaxpr.invars, ctx, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, ctx, separator=","),
                         pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
        pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.text("in "), outvars])) + pp.text(" }"))


def pp_toplevel(jaxpr: Jaxpr, width: int = 80) -> str:
    return pp_jaxpr(jaxpr, PpContext()).format(width)
