"""Tracing the bodies of control flow, and the jaxpr surgery JAX 0.10.2 does on them.

Input: a Python function and the abstract values of its (pytree) arguments. Output: a
`Body`: a ClosedJaxpr whose closed-over values have become leading invars (the jaxpr
itself has no consts), the values to pass for them (outer tracers, user arrays), and the
output pytree and avals.
Invariants:
- A closed-over value is passed as itself (the outer tracer, the user's NumPy array, the
  ember.Array), so the enclosing trace hoists it as it would any other operand, and the
  same value closed over by two bodies is one operand (`merge_consts`).
- One call traces a function object once (`trace_bodies`): `switch(i, [g, g, h])` gives
  one jaxpr object for both g branches, which the printer then shows as a shared `let`.
- The surgery helpers build new jaxprs and never mutate their inputs: `forwarding` (which
  outputs are just inputs), `prune_outputs`, `move_to_front` (reorder invars), `dce`
  (drop unused equations and inputs; equations with side effects, debug_print, stay).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ember.array import ArrayImpl
from ember.core.aval import ShapedArray
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from ember.core.staging import DynamicJaxprTrace, JaxprBuilder, live_equations
from ember.core.trace import Tracer, get_aval, new_main
from ember.lax._base import convert_element_type
from ember.tree_util import PyTreeDef, tree_flatten, tree_unflatten


class Body(NamedTuple):
    jaxpr: ClosedJaxpr          # (*consts, *args) -> outs, without consts of its own
    consts: list[Any]           # values of the leading const invars
    out_tree: PyTreeDef
    out_avals: list[ShapedArray]


def trace_body(fun: Callable[..., Any], in_tree: PyTreeDef,
               in_avals: Sequence[ShapedArray]) -> Body:
    """Trace `fun(*tree_unflatten(in_tree, args))` at `in_avals` (see the module docstring).

    `in_tree` is the tree of the positional-argument tuple.
    """
    builder = JaxprBuilder()
    with new_main(DynamicJaxprTrace, dynamic=True, payload=builder) as main:
        trace = DynamicJaxprTrace(main)
        tracers = [trace.new_arg(a) for a in in_avals]
        out = fun(*tree_unflatten(in_tree, tracers))
        leaves, out_tree = tree_flatten(out)
        out_tracers = [trace.full_raise(x) for x in leaves]
        closed = builder.to_closed_jaxpr([t._var for t in out_tracers])
    original = {t._var.id: val for val, t in builder.const_by_id.values()
                if isinstance(t._var, Var)}
    jaxpr = closed.jaxpr
    consts = [original.get(v.id, c) for v, c in zip(jaxpr.constvars, closed.consts)]
    lifted = Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
    return Body(ClosedJaxpr(lifted, []), consts, out_tree, [t.aval for t in out_tracers])


def merge_consts(bodies: Sequence[Body]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Give every body all the bodies' consts (one operand list), a value closed over by
    several bodies only once (by identity, first occurrence kept)."""
    all_consts = [c for b in bodies for c in b.consts]
    first: dict[int, int] = {}
    for k, c in enumerate(all_consts):
        first.setdefault(id(c), k)
    keep = sorted(set(first.values()))
    merged = []
    done: dict[tuple[int, int], ClosedJaxpr] = {}
    offset = 0
    for b in bodies:
        n = len(b.consts)
        again = done.get((id(b), offset))
        if again is not None:
            # The same branch function twice gives one jaxpr object, as in JAX (whose
            # printer then shows it once, as a shared `let`).
            merged.append(again)
            continue
        jaxpr = b.jaxpr.jaxpr
        slots: list[Var] = []
        for k, c in enumerate(all_consts):
            mine = offset <= k < offset + n
            slots.append(jaxpr.invars[k - offset] if mine else Var(get_aval(c)))
        # A duplicate const is read through the var of its first occurrence.
        rename = {slots[k].id: slots[first[id(c)]] for k, c in enumerate(all_consts)}
        invars = [slots[k] for k in keep] + jaxpr.invars[n:]
        merged.append(ClosedJaxpr(_substitute(jaxpr, invars, rename), []))
        done[(id(b), offset)] = merged[-1]
        offset += n
    return merged, [all_consts[k] for k in keep]


def _substitute(jaxpr: Jaxpr, invars: list[Var], rename: dict[int, Var]) -> Jaxpr:
    def sub(a: Any) -> Any:
        return rename.get(a.id, a) if isinstance(a, Var) else a

    eqns = [JaxprEqn([sub(a) for a in e.invars], e.outvars, e.primitive, e.params,
                     e.source_info) for e in jaxpr.eqns]
    return Jaxpr([], invars, [sub(a) for a in jaxpr.outvars], eqns, jaxpr.debug_info)


def _forwarded_input(eqn: JaxprEqn) -> Any:
    """The input an equation's single output equals, for no-op equations, else None."""
    name = eqn.primitive.name
    if len(eqn.invars) != 1 or len(eqn.outvars) != 1:
        return None
    src, out = eqn.invars[0], eqn.outvars[0]
    if name == "convert_element_type" and src.aval == out.aval:
        return src
    if name == "broadcast_in_dim" and src.aval.shape == out.aval.shape:
        return src
    return None


def forwarding(jaxpr: Jaxpr) -> list[int | None]:
    """For each output: the index of the input it equals (through no-op converts and
    broadcasts), or None."""
    same: dict[int, Any] = {}
    for eqn in jaxpr.eqns:
        src = _forwarded_input(eqn)
        if isinstance(src, Var):
            same[eqn.outvars[0].id] = same.get(src.id, src)
    index = {v.id: k for k, v in enumerate(jaxpr.invars)}
    out: list[int | None] = []
    for v in jaxpr.outvars:
        if not isinstance(v, Var):
            out.append(None)
            continue
        v = same.get(v.id, v)
        out.append(index.get(v.id))
    return out


def trace_bodies(funs: Sequence[Callable[..., Any]], in_tree: PyTreeDef,
                 in_avals: Sequence[ShapedArray]) -> list[Body]:
    """trace_body for each function; the same function object is traced once."""
    seen: dict[int, Body] = {}
    out = []
    for f in funs:
        if id(f) not in seen:
            seen[id(f)] = trace_body(f, in_tree, in_avals)
        out.append(seen[id(f)])
    return out


def prune_outputs(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    """Drop the outputs whose flag is False (the equations stay, as in JAX)."""
    j = closed.jaxpr
    outvars = [v for v, k in zip(j.outvars, keep) if k]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, j.eqns, j.debug_info),
                       closed.consts)


def move_to_front(closed: ClosedJaxpr, flags: Sequence[bool]) -> ClosedJaxpr:
    """Reorder the inputs: those flagged first (in order), then the others."""
    j = closed.jaxpr
    front = [v for v, f in zip(j.invars, flags) if f]
    back = [v for v, f in zip(j.invars, flags) if not f]
    return ClosedJaxpr(Jaxpr(j.constvars, front + back, j.outvars, j.eqns, j.debug_info),
                       closed.consts)


def dce(closed: ClosedJaxpr, instantiate: Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """Drop equations nothing reads and inputs that are unused and not instantiated;
    returns the new jaxpr and which inputs it kept."""
    j = closed.jaxpr
    eqns, live = live_equations(j)
    kept = [v.id in live or bool(inst) for v, inst in zip(j.invars, instantiate)]
    invars = [v for v, k in zip(j.invars, kept) if k]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, eqns, j.debug_info),
                       closed.consts), kept


def as_array(x: Any) -> Any:
    """A value returned in place of a forwarded output: arrays and tracers as they are,
    Python and NumPy scalars as ember.Arrays (weak types kept)."""
    if isinstance(x, (Tracer, ArrayImpl)):
        return x
    aval = get_aval(x)
    return convert_element_type(x, aval.dtype, aval.weak_type)
