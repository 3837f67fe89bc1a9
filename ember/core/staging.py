"""Staging: trace a Python function into a jaxpr (JAX's DynamicJaxprTrace).

Input: a function and the abstract values (and names) of its flattened arguments.
Output: a `ClosedJaxpr` whose constvars hold closed-over arrays, plus the output tracers.
Invariants: every primitive bound while this trace is the dynamic one becomes an equation,
even on constants (omnistaging); scalar constants become Literals, larger ones constvars
(deduplicated by identity); a tracer of an enclosing trace is lifted into a constvar whose
value is that outer tracer (so an inner jit can close over an outer tracer); unused
constvars are dropped. Equations without outputs (debug_print) are kept like any other:
staging never drops equations; `eqn_has_effects` tells later jaxpr DCEs which to keep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.errors import ConcretizationTypeError
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, python_text
from ember.core.source_info import SourceInfo, user_frame
from ember.core.trace import Trace, Tracer, get_aval, new_main, to_numpy


class JaxprBuilder:
    def __init__(self) -> None:
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.arg_names: dict[int, str] = {}
        self.constvars: list[Var] = []
        self.const_values: list[Any] = []
        self.const_by_id: dict[int, Any] = {}   # id(value) -> tracer, values kept alive
        self.producer: dict[int, JaxprEqn] = {}

    def depends_on(self, atom: Any) -> list[str]:
        """Names of the arguments a value was computed from (for error messages)."""
        if not isinstance(atom, Var):
            return []
        seen: set[int] = set()
        stack = [atom]
        names: list[str] = []
        while stack:
            v = stack.pop()
            if v.id in seen:
                continue
            seen.add(v.id)
            if v.id in self.arg_names:
                names.append(self.arg_names[v.id])
            eqn = self.producer.get(v.id)
            if eqn is not None:
                stack.extend(x for x in eqn.invars if isinstance(x, Var))
        return sorted(set(names))

    def to_closed_jaxpr(self, outvars: list[Any], debug_info: Any = None) -> ClosedJaxpr:
        used: set[int] = set()
        for eqn in self.eqns:
            used.update(v.id for v in eqn.invars if isinstance(v, Var))
        used.update(v.id for v in outvars if isinstance(v, Var))
        keep = [i for i, v in enumerate(self.constvars) if v.id in used]
        jaxpr = Jaxpr([self.constvars[i] for i in keep], self.invars, outvars, self.eqns,
                      debug_info)
        return ClosedJaxpr(jaxpr, [self.const_values[i] for i in keep])


class JaxprTracer(Tracer):
    __slots__ = ("_aval", "_var", "source_info")

    def __init__(self, trace: DynamicJaxprTrace, aval: ShapedArray, var: Any,
                 source_info: SourceInfo | None = None):
        self._trace = trace
        self._aval = aval
        self._var = var  # not `var`: that name is the jnp method x.var()
        self.source_info = source_info

    @property
    def aval(self) -> ShapedArray:
        return self._aval


class DynamicJaxprTrace(Trace):
    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.payload

    def new_arg(self, aval: ShapedArray, name: str | None = None) -> JaxprTracer:
        var = Var(aval)
        b = self.builder
        b.invars.append(var)
        if name is not None:
            b.arg_names[var.id] = name
        return JaxprTracer(self, aval, var)

    def pure(self, val: Any) -> JaxprTracer:
        b = self.builder
        hit = b.const_by_id.get(id(val))
        if hit is not None and hit[0] is val:
            return hit[1]
        aval = get_aval(val)
        if aval.shape == ():
            lit = np.array(to_numpy(val, aval))   # a copy: the user may mutate a 0-d array
            # A Python float or complex keeps its own text (JAX prints its repr, not the
            # rounded float32 value's).
            shown = val if type(val) in (float, complex) else python_text(val)
            tracer = JaxprTracer(self, aval, Literal(lit, aval, shown))
        elif isinstance(val, np.ndarray):
            # A closed-over NumPy array is copied once, at trace time, in its canonical
            # dtype: mutating it later must not change a cached trace's results, and the
            # jaxpr's results must never alias memory the user can write.
            snapshot = np.array(to_numpy(val, aval), copy=True)
            snapshot.setflags(write=False)
            tracer = self._new_const(aval, snapshot)
        else:
            tracer = self._new_const(aval, val)
        b.const_by_id[id(val)] = (val, tracer)
        return tracer

    def _new_const(self, aval: ShapedArray, val: Any) -> JaxprTracer:
        var = Var(aval)
        self.builder.constvars.append(var)
        self.builder.const_values.append(val)
        return JaxprTracer(self, aval, var)

    def lift(self, tracer: Tracer) -> JaxprTracer:
        b = self.builder
        hit = b.const_by_id.get(id(tracer))
        if hit is not None and hit[0] is tracer:
            return hit[1]
        out = self._new_const(tracer.aval, tracer)
        b.const_by_id[id(tracer)] = (tracer, out)
        return out

    def _stage(self, prim: Any, tracers: list, params: dict, out_avals: list) -> list:
        src = user_frame()
        outvars = [Var(a) for a in out_avals]
        eqn = JaxprEqn([t._var for t in tracers], outvars, prim, params, src)
        b = self.builder
        b.eqns.append(eqn)
        for v in outvars:
            b.producer[v.id] = eqn
        return [JaxprTracer(self, a, v, src) for a, v in zip(out_avals, outvars)]

    def process_primitive(self, prim: Any, tracers: list, params: dict) -> Any:
        out_avals = prim.checked_abstract_eval([t.aval for t in tracers], params)
        if prim.multiple_results:
            return self._stage(prim, tracers, params, list(out_avals))
        return self._stage(prim, tracers, params, [out_avals])[0]

    def process_call(self, prim: Any, tracers: list, params: dict) -> list:
        return self._stage(prim, tracers, params, list(params["jaxpr"].out_avals))

    def concretization_error(self, tracer: Tracer, context: str,
                             kind: type = ConcretizationTypeError) -> Exception:
        names = self.builder.depends_on(getattr(tracer, "_var", None))
        if names:
            dep = ("It depends on the argument" + ("s " if len(names) > 1 else " ")
                   + ", ".join(f"`{n}`" for n in names) + ".")
        else:
            dep = "It does not depend on any argument (a constant staged by jit)."
        src = user_frame()
        created = getattr(tracer, "source_info", None)
        made = f" The value was computed at {created}." if created is not None else ""
        return kind(
            f"Abstract tracer value encountered where a concrete value is expected: "
            f"{tracer.aval.str_short()} used by {context} at {src}. {dep}{made} "
            "Inside jit, values are abstract (only shape and dtype are known): use "
            "ember.numpy.where or lax.cond instead of Python control flow, or mark the "
            "argument static with static_argnums / static_argnames.")


def trace_to_jaxpr(fun: Callable[..., list], in_avals: list[ShapedArray],
                   arg_names: list[str] | None = None, debug_info: Any = None
                   ) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace `fun(*tracers) -> list of outputs` into a ClosedJaxpr.

    Returns the jaxpr and the out values' abstract types are those of its outvars. Consts
    that are tracers of enclosing traces stay in `consts` (the caller hoists them).
    """
    builder = JaxprBuilder()
    with new_main(DynamicJaxprTrace, dynamic=True, payload=builder) as main:
        trace = DynamicJaxprTrace(main)
        names = arg_names or [None] * len(in_avals)
        args = [trace.new_arg(a, n) for a, n in zip(in_avals, names)]
        outs = fun(*args)
        out_tracers = [trace.full_raise(o) for o in outs]
        closed = builder.to_closed_jaxpr([t._var for t in out_tracers], debug_info)
    return closed, [t.aval for t in out_tracers]


def jaxpr_has_effects(jaxpr: Jaxpr | ClosedJaxpr) -> bool:
    """Whether an equation of `jaxpr` (or of a jaxpr nested in its params) has side effects
    (its primitive sets `has_effects`, e.g. debug_print): such equations are never dropped."""
    j = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    return any(eqn_has_effects(e) for e in j.eqns)


def live_equations(jaxpr: Jaxpr) -> tuple[list[JaxprEqn], set[int]]:
    """The equations of `jaxpr` that an output reads (or that have effects), in order, and
    the ids of every variable they and the outputs read (a dead-code pass's one walk)."""
    live = {v.id for v in jaxpr.outvars if isinstance(v, Var)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v.id in live for v in eqn.outvars) or eqn_has_effects(eqn):
            eqns.append(eqn)
            live.update(v.id for v in eqn.invars if isinstance(v, Var))
    eqns.reverse()
    return eqns, live


def eqn_has_effects(eqn: JaxprEqn) -> bool:
    if getattr(eqn.primitive, "has_effects", False):
        return True
    for value in eqn.params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, (Jaxpr, ClosedJaxpr)) and jaxpr_has_effects(v):
                return True
    return False


def numpy_const(x: Any) -> np.ndarray:
    return to_numpy(x)
