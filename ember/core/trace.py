"""The trace stack: Trace, Tracer, MainTrace, and `bind`, as in JAX's core.

Input: `prim.bind(*args, **params)` calls from ember.lax. Output: the result of the
innermost relevant trace: concrete ember.Arrays under the eval trace (eager mode), staged
equations under a jit trace, or whatever a custom trace (JVP, batching, a test's) does.
Invariants:
- A stack of MainTraces per thread, each with a level; level 0 is the eval trace.
- `find_top_trace` picks the highest level among the arguments' tracers and the current
  dynamic trace (the innermost jit being traced), so ops on constants are staged too.
- A value from a lower level is lifted into the top trace (`Trace.full_raise`); a tracer
  whose main trace has ended (an escaped tracer) raises UnexpectedTracerError.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ember.config import config as _config
from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)


class MainTrace:
    __slots__ = ("level", "trace_type", "payload", "alive")

    def __init__(self, level: int, trace_type: type, payload: Any = None):
        self.level = level
        self.trace_type = trace_type
        self.payload = payload
        self.alive = True

    def with_cur_sublevel(self) -> Trace:
        return self.trace_type(self)

    def __repr__(self) -> str:
        return f"MainTrace({self.level}, {self.trace_type.__name__})"


class _TraceState(threading.local):
    def __init__(self) -> None:
        base = MainTrace(0, EvalTrace)
        self.stack: list[MainTrace] = [base]
        self.dynamic: MainTrace = base


_state: _TraceState  # created at the end of this module, once EvalTrace exists


@contextlib.contextmanager
def new_main(trace_type: type, *, dynamic: bool = False, payload: Any = None
             ) -> Iterator[MainTrace]:
    """Push a new MainTrace on this thread's stack for the duration of the block."""
    state = _state
    main = MainTrace(len(state.stack), trace_type, payload)
    state.stack.append(main)
    prev_dynamic = state.dynamic
    if dynamic:
        state.dynamic = main
    try:
        yield main
    finally:
        state.dynamic = prev_dynamic
        state.stack.pop()
        main.alive = False


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Within the block, operations on concrete values run eagerly (the eval trace is the
    dynamic trace) even inside a jit being traced; operations on tracers still go to their
    own traces. A jit traced inside the block makes itself dynamic as usual."""
    state = _state
    prev_dynamic = state.dynamic
    state.dynamic = state.stack[0]
    try:
        yield
    finally:
        state.dynamic = prev_dynamic


def current_dynamic() -> MainTrace:
    return _state.dynamic


def eval_main() -> MainTrace:
    return _state.stack[0]


def transforms_active() -> bool:
    """Whether a trace other than the eval trace is on this thread's stack (a jit being
    traced, a jvp, a vmap...): only then must a custom-derivative function be staged."""
    return len(_state.stack) > 1


def _escaped(tracer: Tracer) -> UnexpectedTracerError:
    where = getattr(tracer, "source_info", None)
    line = f" It was created at {where}." if where is not None else ""
    return UnexpectedTracerError(
        f"Encountered an unexpected tracer: a value of type {tracer.aval.str_short()} "
        "escaped the jit (or other transformation) that created it, through a side effect "
        f"such as storing it in a global or a list, and was used after that trace ended.{line}"
        " Return the value from the function instead.")


def find_top_trace(args: tuple) -> Trace:
    top = _state.dynamic
    for x in args:
        if isinstance(x, Tracer):
            main = x._trace.main
            if not main.alive:
                raise _escaped(x)
            if main.level > top.level:
                top = main
    return top.with_cur_sublevel()


class Trace:
    """One level of interpretation; subclasses say what a primitive does at this level."""

    __slots__ = ("main", "level")

    def __init__(self, main: MainTrace):
        self.main = main
        self.level = main.level

    def full_raise(self, val: Any) -> Any:
        if not isinstance(val, Tracer):
            return self.pure(val)
        trace = val._trace
        if trace.main is self.main:
            return val
        if not trace.main.alive or trace.level > self.level:
            raise _escaped(val)
        if trace.level < self.level:
            return self.lift(val)
        raise UnexpectedTracerError(
            f"Tracer from a different trace at the same level: {val!r}")

    def pure(self, val: Any) -> Any:
        raise NotImplementedError

    def lift(self, tracer: Tracer) -> Any:
        raise NotImplementedError

    def process_primitive(self, prim: Any, tracers: list, params: dict) -> Any:
        raise NotImplementedError

    def process_call(self, prim: Any, tracers: list, params: dict) -> list:
        """A call primitive (jit) by default is inlined: its equations run at this level."""
        from ember.core.eval import eval_jaxpr
        closed = params["jaxpr"]
        return eval_jaxpr(closed.jaxpr, closed.consts, *tracers)

    def concretization_error(self, tracer: Tracer, context: str,
                             kind: type = ConcretizationTypeError) -> Exception:
        return kind(
            f"Abstract tracer value encountered where a concrete value is expected: "
            f"{tracer.aval.str_short()} used by {context}.")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(level={self.level})"


class Tracer:
    """A value being traced. Array methods and operators are installed by ember.numpy."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __bool__(self) -> bool:
        raise self._trace.concretization_error(self, "bool() (an `if`, `while`, `and`, `or` "
                                               "or `not` on a traced value)",
                                               TracerBoolConversionError)

    def __int__(self) -> int:
        raise self._trace.concretization_error(self, "int()", TracerIntegerConversionError)

    def __index__(self) -> int:
        raise self._trace.concretization_error(self, "__index__ (used as a Python index, "
                                               "a range() bound or a shape)",
                                               TracerIntegerConversionError)

    def __float__(self) -> float:
        raise self._trace.concretization_error(self, "float()", ConcretizationTypeError)

    def __complex__(self) -> complex:
        raise self._trace.concretization_error(self, "complex()", ConcretizationTypeError)

    def __array__(self, dtype=None, copy=None):
        raise self._trace.concretization_error(
            self, "numpy.asarray() (a NumPy function cannot run on a traced value; use "
            "ember.numpy instead)", TracerArrayConversionError)

    def item(self) -> Any:
        raise self._trace.concretization_error(self, "item()", ConcretizationTypeError)

    def tolist(self) -> Any:
        raise self._trace.concretization_error(self, "tolist()", ConcretizationTypeError)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<{self._trace!r}>"


# ---------------------------------------------------------------------------------------------
# Concrete values and the eval trace (eager mode).
# ---------------------------------------------------------------------------------------------

_SCALAR_AVALS: dict[tuple[type, bool], ShapedArray] = {}
# the default int's range: a Python int outside it would wrap when it becomes a weakly typed
# array (int32 checked first, inline: it holds nearly every int a program writes)
_INT32_MIN, _INT32_MAX = -2 ** 31, 2 ** 31 - 1


def _fits_int64(x: int) -> bool:
    return -2 ** 63 <= x < 2 ** 63


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a tracer, an ember.Array, a NumPy value or a Python scalar."""
    if isinstance(x, Tracer):
        return x.aval
    if type(x) in dtypes.PYTHON_SCALAR_TYPES:
        # int, float and complex are weakly typed; a Python bool is a strong bool (as JAX).
        # One (immutable) aval per type and x64 setting serves every scalar.
        key = (type(x), bool(_config.jax_enable_x64))
        aval = _SCALAR_AVALS.get(key)
        if aval is None:
            aval = ShapedArray((), dtypes.python_scalar_dtype(x), type(x) is not bool)
            _SCALAR_AVALS[key] = aval
        # A Python int takes the default int type, which must hold it (JAX's OverflowError,
        # not NumPy's silent wrap): one chained comparison for the ints that fit.
        if key[0] is int and not (_INT32_MIN <= x <= _INT32_MAX or key[1] and _fits_int64(x)):
            raise dtypes.int_too_large(x, aval.dtype)
        return aval
    aval = getattr(x, "_ember_aval", None)
    if aval is not None:
        return aval
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(np.shape(x), dtypes.canonicalize(x.dtype), False)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid Ember array "
                        "type; pass an array instead (ember.numpy.asarray(...)).")
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid Ember type")


def to_numpy(x: Any, aval: ShapedArray | None = None) -> np.ndarray:
    """The NumPy value of a concrete argument, in its canonical dtype."""
    value = getattr(x, "_ember_value", None)
    if value is not None:
        return value()
    if aval is None:
        aval = get_aval(x)
    arr = np.asarray(x)
    if arr.dtype != aval.dtype:
        with np.errstate(all="ignore"):
            arr = arr.astype(aval.dtype)
    return arr


class EvalTrace(Trace):
    """Level 0: run each primitive's NumPy rule at once and return ember.Arrays."""

    __slots__ = ()

    def pure(self, val: Any) -> Any:
        return val

    def full_raise(self, val: Any) -> Any:
        if isinstance(val, Tracer):
            raise _escaped(val)
        return val

    def process_primitive(self, prim: Any, args: list, params: dict) -> Any:
        on_device = DEVICE_EAGER[0]
        if on_device is not None:  # (an operand on an accelerator: the op runs there)
            out = on_device(prim, args, params)
            if out is not None:
                return out
        avals = [get_aval(x) for x in args]
        out_avals = eager_abstract_eval(prim, avals, params)
        vals = [to_numpy(x, a) for x, a in zip(args, avals)]
        out = prim.impl(*vals, **params)
        if _config.jax_debug_nans:  # eager debug_nans: this op made a NaN?
            from ember.debug_nans import check_eager
            check_eager(prim, out)
        if prim.multiple_results:
            return wrap_results(out, out_avals, args, vals)
        return wrap_results([out], [out_avals], args, vals)[0]

    def process_call(self, prim: Any, args: list, params: dict) -> list:
        return prim.call_impl(args, params)


# The eager rule for operands on an accelerator: `(prim, args, params) -> result`, or None
# when no operand is on one (then the NumPy rule runs). Installed by ember/device_array.py
# when the first accelerator device is made (this layer imports no backend).
DEVICE_EAGER: list[Any] = [None]


# Eager ops repeat the same (primitive, operand types, params) over and over: their output
# types are kept, keyed also by the flags that change tracing (x64 among them). Only
# params of plain value types take part (others, e.g. functions, are evaluated each time);
# failures are never kept, so a bad call raises with its own source line every time.
_EAGER_AVALS: dict[tuple, Any] = {}
_EAGER_AVALS_MAX = 4096
_PLAIN = (int, float, bool, str, type(None), np.dtype)


def _plain_key(v: Any) -> Any:
    """A hashable stand-in for a param value of plain types (nested tuples included), or
    None when it holds anything else."""
    if isinstance(v, _PLAIN):
        return (type(v), v)
    if isinstance(v, tuple):
        parts = []
        for x in v:
            k = _plain_key(x)
            if k is None:
                return None
            parts.append(k)
        return (type(v), tuple(parts))
    return None


def eager_abstract_eval(prim: Any, avals: list[ShapedArray], params: dict) -> Any:
    """`prim.checked_abstract_eval(avals, params)`, answered from `_EAGER_AVALS` when the
    same question was asked before."""
    key_parts = []
    for name, v in params.items():
        k = _plain_key(v)
        if k is None:
            return prim.checked_abstract_eval(avals, params)
        key_parts.append((name, k))
    key = (prim, tuple(avals), tuple(key_parts), _config.trace_context())
    hit = _EAGER_AVALS.get(key)
    if hit is not None:
        return list(hit) if prim.multiple_results else hit
    out = prim.checked_abstract_eval(avals, params)
    if len(_EAGER_AVALS) >= _EAGER_AVALS_MAX:
        _EAGER_AVALS.clear()
    _EAGER_AVALS[key] = tuple(out) if prim.multiple_results else out
    return out


def wrap_results(outs: list, avals: list[ShapedArray], args: list, vals: list) -> list:
    """ember.Arrays for rule results, copying any that alias memory the user can write.

    A rule may return a view of an input (reshape, slice, identity); an input that is the
    user's NumPy array must not be visible through an immutable Array, so such results are
    copied. Views of ember.Arrays are kept (they are immutable too).
    """
    from ember.array import ArrayImpl
    user = [v for x, v in zip(args, vals)
            if not isinstance(x, ArrayImpl) and isinstance(v, np.ndarray)]
    results = []
    for out, aval in zip(outs, avals):
        if user and isinstance(out, np.ndarray):
            if out.size == 0:
                # may_share_memory says False for empty arrays, yet the rule may have
                # returned the user's own (empty) array: a fresh one costs nothing.
                out = np.empty(out.shape, out.dtype)
            elif any(np.may_share_memory(out, u) for u in user):
                out = out.copy()
        results.append(ArrayImpl._from_rule(out, aval))
    return results


def _collective_axis_names(value: Any, found: set) -> set:
    """The axis names the collectives in a call's params (its jaxpr, and the jaxprs of its
    equations' params: loop bodies, branches) name."""
    if isinstance(value, (tuple, list)):
        for v in value:
            _collective_axis_names(v, found)
        return found
    jaxpr = getattr(value, "jaxpr", value)
    for eqn in getattr(jaxpr, "eqns", ()):
        param = eqn.primitive.axis_name_param
        if param is not None:
            names = eqn.params[param]
            found.update(names if isinstance(names, (tuple, list)) else (names,))
        for v in eqn.params.values():
            _collective_axis_names(v, found)
    return found


def bind(prim: Any, args: tuple, params: dict) -> Any:
    trace = find_top_trace(args)
    names: Any = None
    if prim.axis_name_param is not None:
        # a collective binds at least at the vmap that defines the axis it names, even when
        # none of its operands is mapped there (psum(1, 'i') is the size of axis i)
        names = params[prim.axis_name_param]
    elif prim.is_call:
        # so does a jitted call whose body holds one: jit(lambda: axis_index('i'))() inside
        # the vmap naming i is inlined there, as if its body were written in place
        from ember.core.batching import bound_axis_names
        if bound_axis_names():
            names = tuple(_collective_axis_names(tuple(params.values()), set()))
    if names:
        from ember.core.batching import named_axis_trace
        named = named_axis_trace(names)
        if named is not None and named.level > trace.level:
            trace = named
    tracers = [trace.full_raise(a) for a in args]
    if prim.is_call:
        return trace.process_call(prim, tracers, params)
    return trace.process_primitive(prim, tracers, params)


_state = _TraceState()
