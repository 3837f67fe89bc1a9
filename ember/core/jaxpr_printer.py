"""Print jaxprs exactly as JAX 0.10.2 prints them.

Input: a Jaxpr. Output: text such as
    { lambda ; a:f32[3] b:f32[3]. let c:f32[3] = add a b in (c,) }
Invariants:
- Variables are named a..z, ba, bb, ... in order of first appearance (constvars, invars,
  then equations, outputs before params before inputs), one naming context for the whole
  text including nested jaxprs; an inner `jit` jaxpr reuses the names of the outer
  variables passed to it and bound from it.
- An output of a top-level equation that nothing reads prints as `_` (and takes no name);
  nested jaxprs print every binder.
- Shared jaxprs: a nested jaxpr that appears more than once, or that has more than 10
  equations, prints once before the top-level jaxpr as `let <name> = { lambda ... } in`
  and is referred to by that name where it is used. The name is the `name` param of the
  equation holding it (`<lambda>` as `lambda`), else `jaxpr`; repeats get 1, 2, ...
- Literals print as `2.0:f32[]`; params are sorted by name (unless a primitive's
  `pp_params` returns an ordered list of pairs) and each primitive may hide params JAX does
  not show (`Primitive.pp_params`); a tuple of jaxprs (cond's branches) prints as
  `(` jaxpr jaxpr ... `)` without commas; lines break as JAX's Wadler printer breaks them
  at width 80.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ember.core import pretty as pp
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var

# A nested jaxpr with more equations than this prints as a shared `let` binding.
MAX_INLINE_EQNS = 10


class PpContext:
    """One naming scope for a printed jaxpr and every jaxpr nested inside it."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.count = 0
        self.shared: dict[int, str] = {}       # id(Jaxpr) -> its `let` name
        self.reserved: set[str] = set()        # shared names, never used for variables

    def name(self, v: Var) -> str:
        name = self.names.get(v.id)
        if name is None:
            while True:
                name = encode_name(self.count)
                self.count += 1
                if name not in self.reserved:
                    break
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


def _as_jaxpr(j: Jaxpr | ClosedJaxpr) -> Jaxpr:
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


def _is_jaxpr_tuple(v: Any) -> bool:
    return type(v) is tuple and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v)


def pp_kv_pair(k: str, v: Any, ctx: PpContext) -> pp.Doc:
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return pp.text(f"{k}=") + pp_jaxpr(_as_jaxpr(v), ctx)
    if _is_jaxpr_tuple(v):
        inner = [pp_jaxpr(_as_jaxpr(j), ctx) for j in v]
        return pp.text(f"{k}=") + pp.group(pp.nest(2, pp.concat([
            pp.text("("), pp.brk(""), pp.join(pp.brk(), inner)]))
            + pp.brk("") + pp.text(")"))
    return pp.text(f"{k}={v}")


def pp_kv_pairs(pairs: list[tuple[str, Any]], ctx: PpContext) -> pp.Doc:
    if not pairs:
        return pp.nil()
    return pp.group(pp.nest(2, pp.concat([
        pp.text("["), pp.brk(""), pp.join(pp.brk(), [pp_kv_pair(k, v, ctx) for k, v in pairs])]))
        + pp.brk("") + pp.text("]"))


def _alias_call_vars(eqn: JaxprEqn, ctx: PpContext) -> None:
    """Name an inner jit's binders after the outer variables passed in and bound out
    (unless the inner jaxpr prints as a shared `let`)."""
    inner = eqn.params.get("jaxpr")
    if inner is None:
        return
    jaxpr = _as_jaxpr(inner)
    if id(jaxpr) in ctx.shared:
        return
    passed: set[int] = set()
    for inner_var, outer in zip(jaxpr.invars, eqn.invars):
        # (an outer variable passed twice names only the first binder, as JAX prints
        # `jit[... { lambda ; a:f32[6] c:f32[6]. ...} ] a a`)
        if isinstance(outer, Var) and outer.id not in passed:
            passed.add(outer.id)
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
    if not eqn.outvars:  # an equation without outputs (debug_print) has no `=`
        return pp.concat(rhs)
    return pp.concat([lhs, pp.text(" = "), *rhs])


def _pp_skeleton(jaxpr: Jaxpr, ctx: PpContext) -> pp.Doc:
    constvars = pp_vars(jaxpr.constvars, ctx, print_shapes=True)
    invars = pp_vars(jaxpr.invars, ctx, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, ctx, separator=","),
                         pp.text(")" if len(jaxpr.outvars) != 1 else ",)")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.text("lambda "), constvars, pp.text("; "), invars,
        pp.text(". "), pp.text("let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.text("in "), outvars])) + pp.text(" }"))


def pp_jaxpr(jaxpr: Jaxpr, ctx: PpContext) -> pp.Doc:
    name = ctx.shared.get(id(jaxpr))
    if name is not None:
        return pp.text(name)
    return _pp_skeleton(jaxpr, ctx)


def _jaxprs_in_params(params: dict) -> Iterator[Jaxpr]:
    """The jaxprs among an equation's params, in the params' order (tuples expanded)."""
    for value in params.values():
        for v in (value if isinstance(value, tuple) else (value,)):
            if isinstance(v, (Jaxpr, ClosedJaxpr)):
                yield _as_jaxpr(v)


def _shared_jaxprs(top: Jaxpr) -> list[tuple[str, Jaxpr]]:
    """The nested jaxprs that print as `let` bindings, with their names, in print order.

    A breadth-first walk counts each appearance of a jaxpr (a big nested jaxpr counts
    twice); those counted more than once are shared, in order of first appearance.
    """
    counts: dict[int, int] = {}
    by_id: dict[int, Jaxpr] = {}
    names: dict[int, str] = {}
    queue = [top]
    while queue:
        nxt: list[Jaxpr] = []
        for jaxpr in queue:
            key = id(jaxpr)
            by_id[key] = jaxpr
            counts[key] = counts.get(key, 0) + 1
            if jaxpr is not top and len(jaxpr.eqns) > MAX_INLINE_EQNS:
                counts[key] += 1
            for eqn in jaxpr.eqns:
                # A shared jit body takes the jit's name; any other shared jaxpr (a custom
                # JVP's call_jaxpr, say) is `jaxpr`, as JAX names them.
                name = eqn.params.get("name") if eqn.primitive.name == "jit" else None
                for sub in _jaxprs_in_params(eqn.params):
                    nxt.append(sub)
                    if name is not None:
                        names.setdefault(id(sub), str(name).strip("<>"))
        queue = nxt
    taken: dict[str, int] = {}
    shared = []
    for key, n in counts.items():
        if n == 1:
            continue
        name = names.get(key, "jaxpr")
        k = taken.get(name, 0)
        taken[name] = k + 1
        if k:
            # The second `jaxpr` is `jaxpr1`, and `jaxpr1` itself is taken from then on.
            name += str(k)
            taken[name] = taken.get(name, 0) + 1
        shared.append((name, by_id[key]))
    return shared


def _drop_unused(jaxpr: Jaxpr, ctx: PpContext) -> None:
    """Top-level equation outputs that nothing reads print as `_`."""
    used = {v.id for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if v.id not in used:
                ctx.names[v.id] = "_"
        used.update(v.id for v in eqn.invars if isinstance(v, Var))


def pp_toplevel(jaxpr: Jaxpr, width: int = 80) -> str:
    ctx = PpContext()
    _drop_unused(jaxpr, ctx)
    shared = _shared_jaxprs(jaxpr)
    for name, sub in shared:
        ctx.shared[id(sub)] = name
        ctx.reserved.add(name)
    docs = [pp.concat([pp.text(f"let {name} = "), _pp_skeleton(sub, ctx), pp.text(" in"),
                       pp.brk()]) for name, sub in shared]
    docs.append(_pp_skeleton(jaxpr, ctx))
    return pp.concat(docs).format(width)
