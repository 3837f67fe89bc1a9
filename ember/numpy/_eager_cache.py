"""Eager dispatch cache: an ember.numpy function called eagerly again with the same
argument types replays its primitives without the Python layers above them.

Input: a jnp function (`eager_cached(fun)`) and each eager call's arguments. Output: what
`fun(*args, **kwargs)` returns, computed as eager mode computes it: each primitive's NumPy
rule (`impl`) on the same NumPy values, in the same order, so results are bit-identical;
only promotion, broadcasting decisions, parameter checks, abstract evaluation and the
`bind` machinery, which depend on the argument types alone, are done once.

How: the key is (fun, each argument's type: an Array's aval, or the value itself for a
Python scalar, None, a dtype, a string or a tuple of them, the keyword arguments likewise,
the tracing flags). On a miss, `fun` is traced with the Arrays as abstract inputs and the
other arguments as the constants they are (so a function that branches on a Python
scalar, `power(x, 2)`, takes the same branch as eagerly); the jaxpr, with the `jit`
equations of functions wrapped like JAX's (`_jit_wrap.py`, eagerly they run inline)
inlined, becomes a flat list of (impl, params, input slots, output slots); an equation
whose inputs are all constants (a scalar broadcast to the operands' shape) is computed
once, by its rule, when the plan is made; an elementwise equation whose operand types
say which native code its rule ends in (a math kernel, a float ufunc) calls that code
directly (`_eager_steps.py`: the same bits, without the rule's layers). A call then
reads each Array's NumPy value, runs the list, and wraps the outputs in Arrays with the
traced avals. A function whose trace fails (a value-dependent function, bad input),
warns, holds a primitive with effects or without a NumPy rule, or returns a constant is
remembered as not cacheable and always runs `fun` itself, which raises or warns as before.
Invariants: only calls outside any staging trace, without jax_debug_nans (which checks
every primitive's result) and whose positional arguments are Arrays or plain values take
the cache; a NumPy array or a tracer argument never does. A key is traced on its second
call, not its first: a loop whose Python scalar changes every step (`x * t`) makes a new
key each time and must not pay for a trace per call. The cache holds at most
`MAX_ENTRIES` keys (cleared when full). `STATS` counts hits, traces and fallbacks.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ember.array import ArrayImpl
from ember.config import config
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import _plain_key, current_dynamic, to_numpy
from ember.numpy._eager_steps import direct_step
from ember.prims import elementwise
from ember.tree_util import tree_flatten, tree_structure, tree_unflatten

F = TypeVar("F", bound=Callable[..., Any])
MAX_ENTRIES = 2048
FOLD_MAX_ELEMENTS = 1 << 16  # (larger constants are not kept in a plan: memory)
STATS = {"hits": 0, "traces": 0, "uncacheable": 0}
_PLANS: dict[tuple, Any] = {}
_SEEN: dict[tuple, None] = {}  # keys called once, not traced yet
_UNCACHEABLE = object()
_LEAF = tree_structure(0)


class _Plan:
    """A flat replay of a traced jnp call (see the module doc)."""

    __slots__ = ("steps", "base", "in_slots", "out_slots", "out_avals", "tree", "outer",
                 "single")

    def __init__(self, steps: list, base: list, in_slots: list[int], out_slots: list[int],
                 out_avals: list, tree: Any, outer: dict[int, int]) -> None:
        self.steps = steps
        self.base = base
        self.in_slots = in_slots
        self.out_slots = out_slots
        self.out_avals = out_avals
        self.tree = tree
        self.outer = outer  # output position -> argument position (returned unchanged)
        # (slot, aval) of the one computed result of the common plan, else None
        self.single = (out_slots[0], out_avals[0]) if tree is None and not outer else None

    def run(self, arrays: list[ArrayImpl]) -> Any:
        env = list(self.base)
        for slot, a in zip(self.in_slots, arrays):
            env[slot] = a._ember_value()
        for impl, params, ins, outs, avals in self.steps:
            out = impl(*[env[k] for k in ins], **params)
            if avals is None:  # one result
                env[outs] = out
                continue
            for k, o, aval in zip(outs, out, avals):
                env[k] = _as_result(o, aval)
        single = self.single
        if single is not None:
            return ArrayImpl._from_rule(env[single[0]], single[1])
        outer = self.outer
        results = [arrays[outer[pos]] if pos in outer else ArrayImpl._from_rule(env[slot], aval)
                   for pos, (slot, aval) in enumerate(zip(self.out_slots, self.out_avals))]
        if self.tree is None:  # (one Array, the common case)
            return results[0]
        return tree_unflatten(self.tree, results)


def _broadcasts_operands(prim: Any) -> bool:
    """Whether `prim`'s rule is prims/elementwise.py's, which stretches its operands to
    their common shape (`_broadcast_all`) before the NumPy rule runs."""
    impl = prim._impl
    return (getattr(impl, "__module__", None) == elementwise.__name__
            and getattr(impl, "__qualname__", "") == "_define.<locals>._impl")


def _as_result(out: Any, aval: Any) -> np.ndarray:
    """A rule's result as eager mode hands it to the next primitive: the value of the
    Array `ArrayImpl._from_rule` makes of it (an ndarray of the aval's dtype and shape)."""
    arr = np.asarray(out)
    if arr.dtype != aval.dtype:
        with np.errstate(all="ignore"):
            arr = arr.astype(aval.dtype)
    if arr.shape != aval.shape:
        arr = np.broadcast_to(arr, aval.shape)
    return arr


def _one(impl: Callable, aval: Any) -> Callable:
    """A one-result rule whose result `_as_result` normalizes."""
    def run(*args: Any, **params: Any) -> np.ndarray:
        return _as_result(impl(*args, **params), aval)
    return run


def eager_cached(fun: F) -> F:
    """Decorator: serve eager calls of `fun` from the cache (see the module doc)."""

    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_dynamic().level > 0 or config.jax_debug_nans:
            return fun(*args, **kwargs)
        key = _key(fun, args, kwargs)
        if key is None:
            return fun(*args, **kwargs)
        plan = _PLANS.get(key)
        if plan is None:
            if key not in _SEEN:  # a first sighting runs uncached (see the module doc)
                if len(_SEEN) >= 4 * MAX_ENTRIES:
                    _SEEN.clear()
                _SEEN[key] = None
                return fun(*args, **kwargs)
            plan = _build(fun, args, kwargs)
            if len(_PLANS) >= MAX_ENTRIES:
                _PLANS.clear()
            _PLANS[key] = plan
        elif plan is not _UNCACHEABLE:
            STATS["hits"] += 1
        if plan is _UNCACHEABLE:
            STATS["uncacheable"] += 1
            return fun(*args, **kwargs)
        return plan.run([a for a in args if type(a) is ArrayImpl])

    wrapper.__wrapped_eager__ = fun  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _key(fun: Callable, args: tuple, kwargs: dict) -> tuple | None:
    """The cache key of a call, or None when an argument is neither an Array nor plain."""
    parts: list[Any] = [fun, config.trace_context()]
    for a in args:
        if type(a) is ArrayImpl:
            parts.append(a._ember_aval)  # (a static part is never an aval: no mix-up)
            continue
        k = _static_key(a)
        if k is None:
            return None
        parts.append(k)
    for name, v in kwargs.items():
        k = _static_key(v)
        if k is None:
            return None
        parts.append((name, k))
    return tuple(parts)


def _static_key(v: Any) -> Any:
    """A plain value's key part: floats by their bits' text (0.0 and -0.0 differ, a NaN
    equals itself), anything else through `_plain_key`; None when not plain."""
    if type(v) is float:
        return (float, v.hex())
    if isinstance(v, tuple) and any(type(x) is float for x in v):
        return None  # (rare: not worth a nested float rule)
    return _plain_key(v)


def _build(fun: Callable, args: tuple, kwargs: dict) -> Any:
    """Trace `fun` on the call's types and flatten its jaxpr into a `_Plan`, or
    `_UNCACHEABLE`."""
    STATS["traces"] += 1
    dyn = [k for k, a in enumerate(args) if type(a) is ArrayImpl]
    tree: list[Any] = []

    def flat(*tracers: Any) -> list:
        full = list(args)
        for k, t in zip(dyn, tracers):
            full[k] = t
        leaves, treedef = tree_flatten(fun(*full, **kwargs))
        tree.append(treedef)
        return leaves

    try:
        # (recorded, not raised: a warning turned into an error could take another branch)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            closed, _ = trace_to_jaxpr(flat, [args[k]._ember_aval for k in dyn])
            plan = _flatten(closed, tree[0])
    except Exception:  # value-dependent, bad input, a jaxpr `_flatten` does not replay:
        return _UNCACHEABLE  # `fun` itself answers (and raises)
    if warned:  # a warning is the uncached call's to give, every time
        return _UNCACHEABLE
    return plan


class _NotPlain(Exception):
    """The jaxpr holds something a flat replay does not run as eager mode would."""


def _flatten(closed: ClosedJaxpr, tree: Any) -> _Plan:
    base: list[Any] = []
    steps: list = []

    def new_slot(value: Any = None) -> int:
        base.append(value)
        return len(base) - 1

    def inline(jaxpr: Jaxpr, consts: list, inputs: list[int]) -> list[int]:
        """Append `jaxpr`'s steps; its outputs' slots."""
        env: dict[int, int] = {}

        def read(v: Any) -> int:
            if isinstance(v, Literal):
                return new_slot(to_numpy(v.val, v.aval))
            return env[v.id]

        for v, c in zip(jaxpr.constvars, consts):
            env[v.id] = new_slot(to_numpy(c))
        for v, k in zip(jaxpr.invars, inputs):
            env[v.id] = k
        for eqn in jaxpr.eqns:
            prim = eqn.primitive
            ins = [read(v) for v in eqn.invars]
            if prim.is_call:
                if prim.name != "jit":
                    raise _NotPlain(prim.name)
                inner = eqn.params["jaxpr"]
                outs = inline(inner.jaxpr, list(inner.consts), ins)
                for v, k in zip(eqn.outvars, outs):
                    env[v.id] = k
                continue
            if getattr(prim, "has_effects", False) or prim._impl is None:
                raise _NotPlain(prim.name)
            outs = [new_slot() for _ in eqn.outvars]
            for v, k in zip(eqn.outvars, outs):
                env[v.id] = k
            if all(base[k] is not None for k in ins) and all(
                    math.prod(v.aval.shape) <= FOLD_MAX_ELEMENTS for v in eqn.outvars):
                # constants only (a scalar broadcast to the operands' shape, a converted
                # literal): computed once, by the same rule, as every call would compute it
                vals = prim._impl(*[base[k] for k in ins], **eqn.params)
                if not prim.multiple_results:
                    vals = [vals]
                for k, val, v in zip(outs, vals, eqn.outvars):
                    base[k] = _as_result(val, v.aval)
                    if base[k].flags.writeable:
                        base[k].setflags(write=False)
                continue
            if _broadcasts_operands(prim):
                # a constant operand of another shape is stretched to the result's shape
                # once, here, as the rule's own broadcast would stretch it on every call
                # (the same read-only view: elementwise._broadcast_all then passes it on)
                shape = eqn.outvars[0].aval.shape
                ins = [new_slot(elementwise._stretch(base[k], shape))
                       if base[k] is not None and np.shape(base[k]) != shape else k
                       for k in ins]
            if prim.multiple_results:
                steps.append((prim._impl, dict(eqn.params), ins, outs,
                              [v.aval for v in eqn.outvars]))
            else:
                out_aval = eqn.outvars[0].aval
                generic = _one(prim._impl, out_aval)
                direct = None
                if not eqn.params and _broadcasts_operands(prim):
                    types = [(v.aval.shape, v.aval.dtype) if base[k] is None
                             else (np.shape(base[k]), base[k].dtype)
                             for v, k in zip(eqn.invars, ins)]
                    direct = direct_step(prim, types, out_aval, generic)
                steps.append((direct or generic, dict(eqn.params), ins, outs[0], None))
        return [read(v) for v in jaxpr.outvars]

    j = closed.jaxpr
    in_slots = [new_slot() for _ in j.invars]
    out_slots = inline(j, list(closed.consts), in_slots)
    outer: dict[int, int] = {}
    for pos, slot in enumerate(out_slots):
        if slot in in_slots:
            outer[pos] = in_slots.index(slot)
        elif base[slot] is not None:  # a constant result: not worth a rule of its own
            raise _NotPlain("constant output")
    out_avals = [v.aval for v in j.outvars]
    if tree == _LEAF:
        tree = None
    return _Plan(steps, base, in_slots, out_slots, out_avals, tree, outer)


def clear() -> None:
    """Forget every cached plan (tests; a plan never goes stale by itself: its key holds
    everything it depends on)."""
    _PLANS.clear()
    _SEEN.clear()


__all__: list[str] = []
