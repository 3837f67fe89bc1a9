"""Forward-mode autodiff: the JVP trace, symbolic zeros and the rule-registration helpers.

Input: a function on flat lists of values, primal values and their tangents. Output: the
primal outputs and their tangents (`jvp_flat`), computed by a `JVPTrace` whose tracers carry
a (primal, tangent) pair through each primitive's JVP rule (`prim.jvp_rule`).
Invariants:
- A tangent has its primal's shape and dtype, or is a symbolic `Zero(aval)`: a tangent
  known to be zero, which costs nothing and no rule ever multiplies. A primitive whose
  tangents are all `Zero` runs on its primals alone and gives `Zero` tangents.
- Integer and bool values are not differentiable: their tangents are always `Zero`.
- Rules live with their primitive (prims/*.py); this module knows no primitive. The two
  tangent operations core needs (adding two tangents, with the `add_any` primitive as JAX
  does; materializing a zero, a scalar literal at rank 0) are hooks the prims install
  (`set_tangent_ops`), so core never imports prims.
- JVP traces nest (grad of grad): each `jvp_flat` pushes its own MainTrace, and a value of
  an enclosing trace enters an inner one with a `Zero` tangent (`lift`).
Reverse mode (linearize, backward pass) is in core/transpose.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.trace import Trace, Tracer, current_dynamic, get_aval, new_main


class Zero:
    """A symbolic zero tangent (or cotangent) of abstract value `aval`."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """A linear input of a transpose rule: only its abstract value is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x: Any) -> bool:
    return isinstance(x, UndefinedPrimal)


def is_differentiable(aval: ShapedArray) -> bool:
    """Floating (and complex) values have tangents; integers and bools have only zeros."""
    return dtypes.kind(aval.dtype) in "fc"


# The tangent operations core needs, installed by prims/_ad.py (core imports no prims).
_add: Callable[[Any, Any], Any] | None = None
_zeros: Callable[[ShapedArray], Any] | None = None


def set_tangent_ops(add: Callable[[Any, Any], Any], zeros: Callable[[ShapedArray], Any]
                    ) -> None:
    global _add, _zeros
    _add, _zeros = add, zeros


def add_tangents(x: Any, y: Any) -> Any:
    """x + y where either may be a symbolic Zero (then the other is returned as is)."""
    if isinstance(x, Zero):
        return y
    if isinstance(y, Zero):
        return x
    assert _add is not None
    return _add(x, y)


def instantiate_zeros(t: Any) -> Any:
    """A real array for a symbolic Zero (a broadcast scalar 0); other tangents unchanged."""
    if isinstance(t, Zero):
        assert _zeros is not None
        return _zeros(t.aval)
    return t


def zeros_like_aval(aval: ShapedArray) -> Any:
    assert _zeros is not None
    return _zeros(aval)


# ---------------------------------------------------------------------------------------------
# The JVP trace.
# ---------------------------------------------------------------------------------------------

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)


class JVPTrace(Trace):
    __slots__ = ()

    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, Zero(get_aval(val)))

    def lift(self, tracer: Tracer) -> JVPTracer:
        return JVPTracer(self, tracer, Zero(tracer.aval))

    def process_primitive(self, prim: Any, tracers: list, params: dict) -> Any:
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(isinstance(t, Zero) for t in tangents):
            out = prim.bind(*primals, **params)
            if prim.multiple_results:
                return [JVPTracer(self, o, Zero(get_aval(o))) for o in out]
            return JVPTracer(self, out, Zero(get_aval(out)))
        rule = prim.jvp_rule
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{prim.name}' not "
                                      "implemented")
        primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)

    def process_call(self, prim: Any, tracers: list, params: dict) -> Any:
        """A jitted call stays one call (of its body's JVP, or split into a known and a
        linear call while linearizing: core/call_ad.py) while a jaxpr is being staged, as
        JAX keeps a pjit; eagerly (or when a body closes over an outer tracer) the
        callee's equations are inlined at this level (eager autodiff never compiles)."""
        if current_dynamic().level != 0:
            from ember.core import call_ad  # (call_ad imports this module)
            primals = [t.primal for t in tracers]
            tangents = [t.tangent for t in tracers]
            if all(isinstance(t, Zero) for t in tangents):
                return [JVPTracer(self, o, Zero(get_aval(o)))
                        for o in prim.bind(*primals, **params)]
            from ember.core.transpose import is_linearized_tangent
            rule = (call_ad.linearize_call if any(is_linearized_tangent(t) for t in tangents)
                    else call_ad.jvp_call)
            got = rule(prim, primals, tangents, params)
            if got is not None:
                return [JVPTracer(self, p, t) for p, t in zip(*got)]
        return super().process_call(prim, tracers, params)


def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """Run `fun(*flat values) -> flat outputs` on (primal, tangent) pairs.

    Tangents may be `Zero`; output tangents are `Zero` where no input tangent reaches them.
    """
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = [trace.full_raise(o) for o in fun(*ins)]
        return [o.primal for o in outs], [o.tangent for o in outs]


# ---------------------------------------------------------------------------------------------
# Rule helpers (JAX's defjvp, defjvp_zero, deflinear).
# ---------------------------------------------------------------------------------------------

JvpTerm = Callable[..., Any]  # (tangent, ans, *primals, **params) -> tangent contribution


def defjvp(prim: Any, *terms: JvpTerm | None,
           broadcast: Callable[[Any, ShapedArray], Any] | None = None) -> None:
    """A JVP rule as a sum of per-operand terms: t_out = sum_i term_i(t_i, ans, *primals).

    Each term is the operand's tangent times its partial derivative (so it must be linear
    in the tangent); a `None` term marks an operand that is not differentiable, and terms
    for `Zero` tangents are skipped. `broadcast(t, out_aval)` stretches a contribution to
    the output's shape (elementwise operands may be rank 0 or have size-1 dimensions).
    """
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
             ) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        out_aval = get_aval(ans)
        acc: Any = Zero(out_aval)
        for term, t in zip(terms, tangents):
            if term is None or isinstance(t, Zero):
                continue
            contribution = term(t, ans, *primals, **params)
            if broadcast is not None:
                contribution = broadcast(contribution, out_aval)
            acc = add_tangents(acc, contribution)
        return ans, acc

    prim.def_jvp(rule)


def defjvp_zero(prim: Any) -> None:
    """Not differentiable (comparisons, integer ops, floor, argmax): zero tangents out."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
             ) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero(get_aval(a)) for a in ans]
        return ans, Zero(get_aval(ans))

    prim.def_jvp(rule)


def deflinear(prim: Any) -> None:
    """A primitive linear in all its operands: its tangent is itself applied to the
    tangents (zeros materialized), t_out = prim(t_1, ..., t_n). Its transpose rule is
    registered separately (`prim.def_transpose`), which the coverage test checks."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
             ) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        t_out = prim.bind(*[instantiate_zeros(t) for t in tangents], **params)
        return ans, t_out

    prim.is_linear = True
    prim.def_jvp(rule)
