"""Shared machinery of the special-function primitives (special_*.py): a primitive defined
by one recipe written in elementwise primitives.

Input: a recipe `f(*operands) -> array`, written with `_ad`'s bound operations on operands
of one float dtype and one shape. Output: a `Primitive` whose abstract eval is JAX's n-ary
float rule (same dtypes, elementwise broadcasting of rank-0 and size-1 operands), whose
lowering inlines the recipe traced for the operands' types (so it fuses and compiles
natively, as XLA expands its chlo ops; no callback), and whose eager rule runs the same
traced recipe through the NumPy evaluator, so eager and compiled results share every edge
case. 16-bit operands run the recipe in float32 (`widened`) and round back, as XLA does.
Batching is elementwise. `while_lanes` is a convergence loop over lanes: it repeats a body
while any lane is still active (and under a fixed iteration cap), finished lanes keeping
their state, as XLA's expansions of igamma and betainc loop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.eval import eval_closed_numpy
from ember.core.jaxpr import ClosedJaxpr
from ember.core.primitive import Primitive
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import get_aval
from ember.prims import _ad, _batching
from ember.prims import _rules as R


class Ops:
    """Elementwise arithmetic on bound primitives, constants typed like `x`."""

    def __init__(self, x: Any):
        self.x = x
        self.dtype = get_aval(x).dtype

    def c(self, value: float) -> np.ndarray:
        return _ad.const(value, self.x)

    def full(self, value: float) -> Any:
        return _ad.full_like(self.x, value)

    def lt(self, a: Any, b: Any) -> Any:
        return _ad.compare("lt", a, b)

    def log(self, a: Any) -> Any:
        return _ad.unary("log", a)

    def u(self, name: str, a: Any) -> Any:
        return _ad.unary(name, a)

    def any_of(self, *preds: Any) -> Any:
        from ember.prims.elementwise import or_p
        out = preds[0]
        for p in preds[1:]:
            out = or_p.bind(out, p)
        return out

    def all_of(self, *preds: Any) -> Any:
        from ember.prims.elementwise import and_p
        out = preds[0]
        for p in preds[1:]:
            out = and_p.bind(out, p)
        return out

    def not_(self, p: Any) -> Any:
        from ember.prims.elementwise import not_p
        return not_p.bind(p)

    def isnan(self, a: Any) -> Any:
        return _ad.compare("ne", a, a)

    def eq(self, a: Any, value: float) -> Any:
        return _ad.compare("eq", a, self.c(value))

    def eps(self) -> float:
        return float(np.finfo(self.dtype).eps)


def widened(recipe: Callable[..., Any], *xs: Any) -> Any:
    """The recipe in float32 for 16-bit floats (their 11 bits cannot carry the series), the
    result rounded back."""
    dtype = get_aval(xs[0]).dtype
    if dtype.itemsize >= 4:
        return recipe(*xs)
    wide = [_ad.convert(x, np.dtype(np.float32)) for x in xs]
    return _ad.convert(recipe(*wide), dtype)


def broadcast_operands(xs: Sequence[Any]) -> list[Any]:
    """The operands stretched to their common (elementwise-broadcast) shape (the recipes
    and the JVP rules work on one shape)."""
    shape = R.broadcasting_shape("special", *[get_aval(x) for x in xs])
    out = []
    for x in xs:
        aval = get_aval(x)
        out.append(_ad.broadcast_to(x, ShapedArray(shape, aval.dtype, False)))
    return out


@functools.lru_cache(maxsize=256)
def traced(recipe: Callable[..., Any], avals: tuple[ShapedArray, ...]) -> ClosedJaxpr:
    """The recipe (operands broadcast, 16-bit widened) traced for these operand types."""
    closed, _ = trace_to_jaxpr(
        lambda *v: [widened(recipe, *broadcast_operands(v))], list(avals))
    return closed


def define(name: str, recipe: Callable[..., Any], nargs: int) -> Primitive:
    """A float primitive of `nargs` operands defined by `recipe` (see the module doc)."""
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(*avals: ShapedArray) -> ShapedArray:
        if len(avals) != nargs:
            raise TypeError(f"{name} takes {nargs} operand{'s' * (nargs > 1)}, "
                            f"got {len(avals)}")
        dtype = R.check_nary(name, avals, R.FLOAT)
        shape = R.broadcasting_shape(name, *avals)
        return ShapedArray(shape, dtype, R.all_weak(*avals))

    @prim.def_impl
    def _impl(*xs: np.ndarray) -> np.ndarray:
        arrays = [np.asarray(x) for x in xs]
        avals = tuple(ShapedArray(np.shape(x), x.dtype, False) for x in arrays)
        return eval_closed_numpy(traced(recipe, avals), arrays)[0]

    def _lowering(ctx: Any, *xs: Any, **params: Any) -> Any:
        if ctx.lowerer is None:
            raise NotImplementedError("this lowering context cannot lower sub-jaxprs")
        avals = tuple(ShapedArray(a.shape, a.dtype, False) for a in ctx.avals_in)
        closed = traced(recipe, avals)
        return ctx.lowerer.lower_jaxpr(closed.jaxpr, closed.consts, list(xs),
                                       ctx.name_stack)[0]

    prim.def_lowering(_lowering)
    _batching.elementwise_rule(prim)
    return prim


def while_lanes(body: Callable[..., tuple[Any, list[Any]]], active: Any,
                state: Sequence[Any], consts: Sequence[Any], max_iterations: int
                ) -> tuple[list[Any], Any]:
    """Repeat `active, state = body(*consts, *state)` on the lanes still active.

    `body` returns the new state of every lane and which lanes stay active; lanes that were
    not active keep their old state. The loop stops when no lane is active or after
    `max_iterations` rounds. Returns the final state and the lanes still active then (those
    that did not converge within the cap).
    """
    from ember.prims.control_flow import while_p
    from ember.prims.reductions import reduce_or_p

    state = list(state)
    consts = list(consts)
    shape = get_aval(active).shape
    counter = np.array(0, np.int32)
    carry_avals = [get_aval(v) for v in [counter, active, *state]]
    carry_avals = [ShapedArray(a.shape, a.dtype, False) for a in carry_avals]
    const_avals = [ShapedArray(get_aval(c).shape, get_aval(c).dtype, False) for c in consts]

    def cond(count: Any, act: Any, *rest: Any) -> list[Any]:
        anyone = act
        if shape:
            anyone = reduce_or_p.bind(act, axes=tuple(range(len(shape))), out_sharding=None)
        below = _ad.compare("lt", count, np.array(max_iterations, np.int32))
        from ember.prims.elementwise import and_p
        return [and_p.bind(below, anyone)]

    def step(*args: Any) -> list[Any]:
        cs, (count, act, *old) = args[:len(consts)], args[len(consts):]
        still, new = body(*cs, *old)
        from ember.prims.elementwise import and_p
        kept = [_ad.select(act, n, o) for n, o in zip(new, old)]
        return [_ad.add(count, np.array(1, np.int32)), and_p.bind(act, still), *kept]

    cond_jaxpr, _ = trace_to_jaxpr(cond, carry_avals)
    body_jaxpr, _ = trace_to_jaxpr(step, const_avals + carry_avals)
    outs = while_p.bind(*consts, counter, active, *state, cond_nconsts=0,
                        cond_jaxpr=cond_jaxpr, body_nconsts=len(consts),
                        body_jaxpr=body_jaxpr)
    return list(outs[2:]), outs[1]
