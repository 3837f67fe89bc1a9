"""`jit`, `make_jaxpr`, `eval_shape` and the stage objects (Traced, Lowered, Compiled).

Input: a Python function over pytrees of arrays. Output: a wrapped function that traces
once per (pytree structure, abstract values, static arguments, tracing config) and runs the
cached trace; `make_jaxpr` returns the trace itself.
Invariants: Python scalars are weakly typed and NumPy scalars strongly typed; keyword
arguments are dynamic unless named static; a cache hit never re-runs the Python function;
a jit called inside another trace is staged as one `jit` equation (or inlined by traces
that do not stage); tracers of an enclosing trace closed over by the function become
extra arguments of that equation.
"""

from __future__ import annotations

import collections
import functools
import inspect
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ember import backends as _backends
from ember import compile_events, device_fastpath, dispatch, fastpath, live_signatures
from ember.ad_api import float0_outputs_as_nodes
from ember.array import ArrayImpl
from ember.compiler import record_trace
from ember.config import config
from ember.core import dtypes, traceback_util
from ember.core.aval import ShapedArray
from ember.core.batching import bound_axis_names, named_axis_trace
from ember.core.jaxpr import ClosedJaxpr, Jaxpr
from ember.core.source_info import locate_error
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import Tracer, current_dynamic, get_aval
from ember.gc_pause import paused_gc
from ember.prims.call import jit_p
from ember.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (for `lower`, `eval_shape`)."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    @property
    def ndim(self) -> int:
        """The number of dimensions: ``len(shape)``."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements: the product of ``shape``."""
        return int(np.prod(self.shape))

    @property
    def _ember_aval(self) -> ShapedArray:
        return ShapedArray(self.shape, dtypes.canonicalize(self.dtype), self.weak_type)

    def _ember_value(self) -> np.ndarray:
        raise TypeError("a ShapeDtypeStruct has no value; use it with .lower() or eval_shape")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


class TraceResult(NamedTuple):
    closed_jaxpr: ClosedJaxpr
    hoisted: list[Any]          # outer tracers the body closes over (extra leading args)
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    arg_names: list[str]        # how each flat argument was passed: `x`, `params['w']`
    params: dict[str, Any]      # the `jit` equation's params (jaxpr, name, donated_invars)


def _normalize_argnums(argnums: int | Sequence[int] | None) -> tuple[int, ...]:
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        return (argnums,)
    return tuple(argnums)


def _normalize_argnames(argnames: str | Sequence[str] | None) -> tuple[str, ...]:
    if argnames is None:
        return ()
    if isinstance(argnames, str):
        return (argnames,)
    return tuple(argnames)


def _signature(fun: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _check_argnums(sig: inspect.Signature, argnums: tuple[int, ...], what: str) -> None:
    """JAX's check at `jit()`: every index names a positional parameter (`-n <= i < n`),
    unless `*args` takes any number of them."""
    params = sig.parameters.values()
    if not argnums or any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    npos = sum(p.kind in _POSITIONAL for p in params)
    if -min(argnums) > npos or max(argnums) >= npos:
        raise ValueError(f"Jitted function has {what}={argnums}, but only accepts {npos} "
                         "positional arguments.")


def _check_argnames(sig: inspect.Signature, argnames: tuple[str, ...], what: str) -> None:
    """JAX's check at `jit()`: every name is a parameter that can be passed by keyword
    (any name when the function takes `**kwargs`, but never a positional-only one)."""
    params = sig.parameters.values()
    not_keyword = {p.name for p in params
                   if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)} & set(argnames)
    if not_keyword:
        raise ValueError(f"Jitted function has invalid argnames {not_keyword} in {what}. "
                         "These are positional-only")
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return
    unknown = set(argnames) - {p.name for p in params
                               if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if unknown:
        raise ValueError(f"Jitted function has invalid argnames {unknown} in {what}. "
                         "Function does not take these args.")


def _resolve_argnums(fun: Callable, sig: inspect.Signature | None, static_argnums: Any,
                     static_argnames: Any, donate_argnums: Any, donate_argnames: Any
                     ) -> tuple[set[int], set[str], set[int], set[str]]:
    """Check jit's argument annotations against `fun`'s signature (JAX's errors, raised by
    `jit()` itself, not at the first call) and complete each number with its name and each
    name with its number, so that `f(x, n=3)` and `f(x, 3)` are both static."""
    nums, names = _normalize_argnums(static_argnums), _normalize_argnames(static_argnames)
    dnums, dnames = _normalize_argnums(donate_argnums), _normalize_argnames(donate_argnames)
    if sig is None:     # a builtin without a signature: nothing to check or infer (as JAX)
        if dnames:
            raise ValueError(f"Getting the signature of function {fun} failed. Pass "
                             "donate_argnums instead of donate_argnames.")
    else:
        _check_argnums(sig, nums, "static_argnums")
        _check_argnames(sig, names, "static_argnames")
        _check_argnums(sig, dnums, "donate_argnums")
        _check_argnames(sig, dnames, "donate_argnames")
    snums, snames, sdnums, sdnames = set(nums), set(names), set(dnums), set(dnames)
    if sig is not None:
        positional = [p for p in sig.parameters.values() if p.kind in _POSITIONAL]
        npos = len(positional)
        # A negative argnum counts from the end of the positional parameters.
        for i, p in enumerate(positional):
            for argset, nameset in ((snums, snames), (sdnums, sdnames)):
                if p.name in nameset:
                    argset.add(i)
                if (i in argset or i - npos in argset) and p.kind != p.POSITIONAL_ONLY:
                    nameset.add(p.name)
    both = snames & sdnames
    if both:
        raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                         f"names {both} appear in both static_argnames and donate_argnames")
    if snums & sdnums:
        raise ValueError(f"`static_argnums` {sorted(snums)} and `donate_argnums` "
                         f"{sorted(sdnums)} cannot intersect.")
    return snums, snames, sdnums, sdnames


def fun_name(fun: Callable) -> str:
    """The name jit gives `fun` (its `__name__`, else its type's)."""
    return getattr(fun, "__name__", None) or type(fun).__name__


def fun_location(fun: Callable) -> str:
    """`file:line` of `fun`'s definition (through functools.wraps), else `<unknown>`."""
    code = getattr(inspect.unwrap(fun), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else "<unknown>"


class _StaticKey:
    """A static argument in a cache key: hashed once, compared by type and value."""

    __slots__ = ("value", "hash")

    def __init__(self, value: Any, what: str, fun: Callable):
        try:
            self.hash = hash((type(value), value))
        except TypeError as e:
            raise ValueError(
                f"Non-hashable static arguments are not supported: {what} of "
                f"{fun_name(fun)} is a {type(value).__name__} ({e}). Pass a hashable value "
                "(a tuple instead of a list, for example), or make the argument dynamic."
            ) from None
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _StaticKey) and type(self.value) is type(other.value)
                and bool(self.value == other.value))

    def __hash__(self) -> int:
        return self.hash


class JitFunction:
    """The result of `ember.jit(fun)`: call it, or stage it with trace/lower/compile.

    A call first tries the fast path of the last signature that hit the cache (`_fast`, see
    fastpath.py: positional Array/ndarray arguments, no trace active; about a microsecond).
    Otherwise the normal path on a cache hit is: split static from dynamic arguments
    (skipped when the function has no static arguments and is called without keywords),
    one `tree_flatten`, one `get_aval` per leaf, one dict lookup, one `bind`; a hit that
    the fast path could serve installs it for the next call. Everything that needs the
    signature or leaf paths (argument names for error messages, donation flags) is computed
    once, in `__init__` or at trace time, and stored in the cache entry.
    """

    def __init__(self, fun: Callable, static_argnums: Any = None, static_argnames: Any = None,
                 donate_argnums: Any = None, donate_argnames: Any = None,
                 keep_unused: bool = False, inline: bool = False, backend: str | None = None):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        self.fun = fun
        self.sig = _signature(fun)
        nums, names, dnums, dnames = _resolve_argnums(
            fun, self.sig, static_argnums, static_argnames, donate_argnums, donate_argnames)
        # Names of the positional parameters, for error messages ("argument `x`").
        self._pos_names: list[str] = []
        if self.sig is not None:
            self._pos_names = [p.name for p in self.sig.parameters.values()
                               if p.kind in _POSITIONAL]
        self.static_argnums = tuple(sorted(nums))
        self.static_argnames = tuple(sorted(names))
        self.donate_argnums = tuple(sorted(dnums))
        self.donate_argnames = tuple(sorted(dnames))
        self._static_name_set = frozenset(names)
        self._no_static = not nums and not names
        self.keep_unused = keep_unused
        self.inline = inline
        self._backend = backend  # an Ember backend's name (backends.NAMES), or None
        self._name = fun_name(fun)
        self._cache: dict[Any, TraceResult] = {}
        self._fast: Callable[[tuple], Any] | None = None  # the last signature's fast path
        self._fast_paths: dict[int, tuple] = {}  # per cache entry: (entry, fast, config)
        self.trace_count = 0
        self._dropped: collections.deque[int] | None = None  # live_signatures' drops
        # Copy __name__, __doc__, ... but not __dict__: merging a jitted `fun`'s instance
        # dict would overwrite this wrapper's own fun and cache.
        functools.update_wrapper(self, fun, updated=())

    # -- arguments ---------------------------------------------------------------------------
    def _static_positions(self, nargs: int) -> frozenset[int]:
        """The static positions of a call with `nargs` positional arguments. As JAX: an
        index past the end is skipped (the parameter takes its default, or comes by
        keyword); a negative one must lie within the call's arguments."""
        for i in self.static_argnums:
            if i < -nargs:
                raise ValueError(
                    "Positional argument indices, e.g. for `static_argnums`, must have value "
                    "greater than or equal to -len(args) and less than len(args), but got "
                    f"value {i} for len(args) == {nargs}.")
        return frozenset(i if i >= 0 else i + nargs for i in self.static_argnums)

    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple]:
        """Separate static from dynamic arguments: (dyn_args, dyn_kwargs, static key).

        Keyword arguments are sorted by name, so `f(x=1, y=2)` and `f(y=2, x=1)` share a
        trace. The static key holds `(position or name, _StaticKey)` pairs.
        """
        if self._no_static:
            if not kwargs:
                return args, {}, ()
            return args, {k: kwargs[k] for k in sorted(kwargs)}, ()
        static_pos = self._static_positions(len(args))
        static: list[Any] = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in static_pos:
                static.append((i, _StaticKey(a, f"static argument `{self.arg_name(i)}`",
                                             self.fun)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            v = kwargs[k]
            if k in self._static_name_set:
                static.append((k, _StaticKey(v, f"static argument `{k}`", self.fun)))
            else:
                dyn_kwargs[k] = v
        return tuple(dyn_args), dyn_kwargs, tuple(static)

    def arg_name(self, i: int) -> str:
        """The name of positional argument `i` in messages (`x`, else `args[i]`)."""
        return self._pos_names[i] if i < len(self._pos_names) else f"args[{i}]"

    def _rebuild_call(self, args: tuple, kwargs: dict, dyn_args: tuple, dyn_kwargs: dict
                      ) -> tuple[tuple, dict]:
        """The full call of `fun`: static values back in place, dynamic ones replaced."""
        static_pos = self._static_positions(len(args))
        it = iter(dyn_args)
        full_args = tuple(a if i in static_pos else next(it) for i, a in enumerate(args))
        full_kwargs = {k: (v if k in self._static_name_set else dyn_kwargs[k])
                       for k, v in kwargs.items()}
        return full_args, full_kwargs

    def _leaf_paths(self, args: tuple, dyn_args: tuple, dyn_kwargs: dict) -> list[str]:
        """`x`, `params['w']`, `args[2][0]`: how each flat leaf was passed (trace time only)."""
        static_pos = self._static_positions(len(args))
        dyn_names = [self.arg_name(i) for i in range(len(args)) if i not in static_pos]
        with_path, _ = tree_flatten_with_path((dyn_args, dyn_kwargs))
        return [self.path_name(p, dyn_names) for p, _ in with_path]

    @staticmethod
    def path_name(path: tuple, dyn_names: list[str]) -> str:
        """How the leaf at `path` of (dyn_args, dyn_kwargs) was passed: `params['w']`."""
        # path[0] selects args (0) or kwargs (1); path[1] the position or keyword.
        if len(path) < 2:
            return keystr(path)
        top = path[0].idx if hasattr(path[0], "idx") else 0
        head = dyn_names[path[1].idx] if top == 0 else str(path[1].key)
        return head + keystr(path[2:])

    def _donation_flags(self, args: tuple, kwargs: dict) -> tuple[bool, ...]:
        """One flag per dynamic leaf: was it passed in a donated argument."""
        static_pos = self._static_positions(len(args))
        donate_pos = {i if i >= 0 else i + len(args) for i in self.donate_argnums}
        flags: list[bool] = []
        for i, a in enumerate(args):
            if i not in static_pos:
                flags.extend([i in donate_pos] * len(tree_flatten(a)[0]))
        for k in sorted(kwargs):
            if k not in self._static_name_set:
                flags.extend([k in self.donate_argnames] * len(tree_flatten(kwargs[k])[0]))
        return tuple(flags)

    # -- tracing -------------------------------------------------------------------------------
    def _abstractify_error(self, args: tuple, dyn_args: tuple, dyn_kwargs: dict,
                           leaves: list) -> TypeError:
        paths = self._leaf_paths(args, dyn_args, dyn_kwargs)
        for leaf, path in zip(leaves, paths):
            try:
                get_aval(leaf)
            except TypeError:
                return TypeError(
                    f"Error interpreting argument to {self._name} as an abstract array. The "
                    f"problematic value is of type {type(leaf).__name__} and was passed to "
                    f"the function at path {path}. This typically means that a jit-wrapped "
                    "function was called with a non-array argument that was not marked as "
                    "static using static_argnums or static_argnames.")
        return TypeError(f"could not interpret the arguments of {self._name} as arrays")

    def _overflow_error(self, args: tuple, dyn_args: tuple, dyn_kwargs: dict,
                        leaves: list) -> OverflowError:
        """JAX's error for an argument that get_aval rejects as too large (trace time only)."""
        paths = self._leaf_paths(args, dyn_args, dyn_kwargs)
        for leaf, path in zip(leaves, paths):
            try:
                get_aval(leaf)
            except OverflowError:
                return OverflowError(
                    "An overflow was encountered while parsing an argument to a jitted "
                    f"computation, whose argument path is {path}. Got {type(leaf)} with value "
                    f"{leaf}")
        return OverflowError(f"an argument of {self._name} is too large for its type")

    def flatten_call(self, args: tuple, kwargs: dict) -> tuple:
        """(dyn_args, dyn_kwargs, in_tree, leaves, avals, static key) of one call."""
        dyn_args, dyn_kwargs, static = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        try:
            avals = tuple(map(get_aval, leaves))
        except TypeError:
            raise self._abstractify_error(args, dyn_args, dyn_kwargs, leaves) from None
        except OverflowError:  # a Python int the default int cannot hold: say which one
            raise self._overflow_error(args, dyn_args, dyn_kwargs, leaves) from None
        return dyn_args, dyn_kwargs, in_tree, leaves, avals, static

    def _lookup(self, args: tuple, kwargs: dict) -> tuple[TraceResult, list]:
        """The cached trace for these arguments (tracing on a miss) and the flat leaves."""
        dyn_args, dyn_kwargs, in_tree, leaves, avals, static = self.flatten_call(args, kwargs)
        # (the named vmap axes being traced: a trace holding collectives depends on their
        # sizes, e.g. pmean's divisor, as JAX keys its cache on the axis environment)
        key = (in_tree, avals, static, config.trace_context(), _axis_env())
        hit = self._cache.get(key)
        if hit is not None:
            live_signatures.touch(self, key)
            return hit, leaves
        compile_events.cache_miss(self, key, self._cache.keys())  # (jax_explain_cache_misses)
        t0 = time.perf_counter()
        with paused_gc():  # (gc_pause.py)
            result = self._trace_uncached(args, kwargs, dyn_args, dyn_kwargs, in_tree, avals)
        record_trace(result.closed_jaxpr, time.perf_counter() - t0, self.fun)
        # A trace that closed over an enclosing trace's tracers is only valid inside that
        # trace; it is not cached.
        if not result.hoisted:
            self._cache[key] = result
            live_signatures.admit(self, key)  # (may drop the least recently used signature)
        return result, leaves

    def _check_outputs(self, out: Any, leaves: list, traced_for: str) -> None:
        """JAX's error for a result that is not an array: it names the function, its
        definition's line and where in the result the value sits."""
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, Tracer):
                continue
            try:
                get_aval(leaf)
            except TypeError:
                path = keystr(tree_flatten_with_path(out)[0][i][0])
                where = f" at output component {path}" if path else ""
                raise TypeError(
                    f"function {self._name} at {fun_location(self.fun)} traced for "
                    f"{traced_for} returned a value of type {type(leaf)}{where}, which is not "
                    "a valid JAX type") from None

    def _trace_uncached(self, args: tuple, kwargs: dict, dyn_args: tuple, dyn_kwargs: dict,
                        in_tree: PyTreeDef, avals: tuple[ShapedArray, ...],
                        traced_for: str = "jit") -> TraceResult:
        self.trace_count += 1
        paths = self._leaf_paths(args, dyn_args, dyn_kwargs)
        out_tree_box: list[PyTreeDef] = []

        def flat_fun(*tracers: Any) -> list:
            t_args, t_kwargs = tree_unflatten(in_tree, tracers)
            full_args, full_kwargs = self._rebuild_call(args, kwargs, t_args, t_kwargs)
            out = float0_outputs_as_nodes(self.fun(*full_args, **full_kwargs))
            out_leaves, out_tree = tree_flatten(out)
            self._check_outputs(out, out_leaves, traced_for)
            out_tree_box.append(out_tree)
            return out_leaves

        try:
            closed, _ = trace_to_jaxpr(flat_fun, list(avals), paths, debug_info=self._name)
        except (TypeError, ValueError) as e:
            locate_error(e)     # shape/dtype errors name the user's line
            raise
        closed, hoisted = _hoist_tracer_consts(closed)
        params: dict[str, Any] = {"jaxpr": closed, "name": self._name}
        if self._backend is not None:
            params["backend"] = self._backend
        if self.donate_argnums or self.donate_argnames:
            flags = self._donation_flags(args, kwargs)
            if any(flags):
                params["donated_invars"] = (False,) * len(hoisted) + flags
        return TraceResult(closed, hoisted, in_tree, out_tree_box[0], paths, params)

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # A traceback boundary inline (no wrapper frame on the fast path; `try` is free):
        # an error leaves with Ember's frames filtered out (core/traceback_util.py).
        try:
            fast = self._fast
            if fast is not None and not kwargs:
                out = fast(args)
                if out is not fastpath.MISS:
                    return out
            fastpath.STATS["slow_calls"] += 1
            if config.jax_disable_jit or (self.inline and current_dynamic().level > 0):
                # inline=True inside a staging trace: fun's operations join the caller's
                # jaxpr.
                return self.fun(*args, **kwargs)
            traces = self.trace_count
            result, leaves = self._lookup(args, kwargs)
            if (_spans_devices(leaves) or _constrained(result)) \
                    and current_dynamic().level == 0:
                from ember.spmd._jit import call_partitioned  # (over a mesh: partitioned)

                out = call_partitioned(self, args, kwargs)
                if out is not None:
                    return out
            outs = jit_p.bind(*result.hoisted, *leaves, **result.params)
            if (traces == self.trace_count and not kwargs and self._no_static
                    and not result.hoisted and current_dynamic().level == 0
                    and not _axis_env()):
                if fastpath.eligible(args):
                    self._install_fast(result, args)
                elif device_fastpath.eligible(args):
                    self._install_fast(result, args, device=True)
            return tree_unflatten(result.out_tree, outs)
        except Exception as e:
            traceback_util.filter_exception(e)
            raise

    def _install_fast(self, result: TraceResult, args: tuple, device: bool = False) -> None:
        """After a cache hit run by the eval trace: make calls like this one take the fast
        path (see fastpath.py). Not on the first call, which traced: a function called once
        never pays for it."""
        ctx = config.trace_context()  # a fast path serves only the config it was built in
        built = self._fast_paths.get(id(result))
        if built is not None and built[0] is result and built[2] is ctx:
            self._fast = built[1]  # signatures taking turns: reuse
            return
        closed = result.closed_jaxpr
        backend = result.params.get("backend") or (dispatch.placed_backend(args)
                                                   if device else None)
        compiled = dispatch.compile_jaxpr(closed, self._name,
                                          dispatch.donated_positions(result.params), backend)
        build = device_fastpath.build if device else fastpath.build
        fast = build(closed.in_avals, closed.out_avals, result.out_tree,
                     result.params.get("donated_invars"), args, compiled)
        if fast is not None:
            self._fast_paths[id(result)] = (result, fast, ctx)
            self._fast = fast

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # `@jit` on a method: the instance is the first (dynamic) argument, as in JAX; mark
        # it static (static_argnums=0) or jit the bound method `jit(obj.method)` instead.
        if obj is None:
            return self
        return functools.partial(self, obj)

    @traceback_util.api_boundary
    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """Trace the function at these arguments' shapes and dtypes (nothing is compiled).

        Returns:
            A ``Traced``, whose ``jaxpr`` is the traced program and whose ``lower()``
            continues to the next stage.
        """
        result, _ = self._lookup(args, kwargs)
        return Traced(self, result)

    @traceback_util.api_boundary
    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """Trace and lower the function at these arguments: ``trace(*args).lower()``.

        Returns:
            A ``Lowered``: the HLO before optimization, whose ``compile()`` compiles it.
            For a call partitioned over a mesh (shardings, sharded arguments or
            constraints over several devices), its stages: ``compile().as_text()`` is
            the per-device module (ember/spmd/_jit.py).
        """
        from ember.spmd._jit import PartitionedLowered, is_for_mesh

        if is_for_mesh(self, args, kwargs):
            return PartitionedLowered(self, args, kwargs)
        return self.trace(*args, **kwargs).lower()

    @traceback_util.api_boundary
    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The shapes and dtypes of the result at these arguments, without running it.

        Returns:
            A pytree of ``ShapeDtypeStruct`` like the function's output.
        """
        result, _ = self._lookup(args, kwargs)
        return tree_unflatten(result.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in result.closed_jaxpr.out_avals])

    def clear_cache(self) -> None:
        """Forget this function's traced and compiled specializations (the next call
        traces and compiles again)."""
        self._cache.clear()
        self._fast = None
        self._fast_paths.clear()
        live_signatures.forget_all(self)

    def _forget(self, key: Any) -> None:
        """Drop one signature (ember/live_signatures.py bounds them process-wide): its
        trace and fast path, so its executable is freed when nothing else holds it."""
        result = self._cache.pop(key, None)
        if result is None:
            return
        if self._dropped is None:  # (hashes only, the last 64: for jax_explain_cache_misses)
            self._dropped = collections.deque(maxlen=64)
        self._dropped.append(hash(key))
        built = self._fast_paths.pop(id(result), None)
        if built is not None and built[1] is self._fast:
            self._fast = None

    def _is_fast_path(self, key: Any) -> bool:
        """Whether `key`'s signature is the one repeated calls take now."""
        result = self._cache.get(key)
        built = self._fast_paths.get(id(result)) if result is not None else None
        return built is not None and built[1] is self._fast

    def _cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<ember.jit of {self._name} at {fun_location(self.fun)}>"


traceback_util.register_boundary(JitFunction.__call__)


def _constrained(result: TraceResult) -> bool:
    """Whether the program constrains a value to a mesh of several devices (it is then
    partitioned; ember/spmd/_jit.py keeps the answer per trace)."""
    from ember.spmd._constraints import constrained_over_devices

    return bool(constrained_over_devices(result.closed_jaxpr))


def _spans_devices(leaves: list) -> bool:
    """Whether an argument is laid out over several devices (a ShardedArray of a mesh):
    the call then runs partitioned, as its arguments' shardings say."""
    for x in leaves:
        t = type(x)
        if t is not ArrayImpl and t is not np.ndarray and isinstance(x, ArrayImpl) \
                and getattr(x, "spans_devices", False):
            return True
    return False


def _hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turn constvars whose values are outer tracers into leading invars."""
    jaxpr = closed.jaxpr
    if not any(isinstance(c, Tracer) for c in closed.consts):
        return closed, []
    keep_vars, keep_vals, hoist_vars, hoisted = [], [], [], []
    for v, c in zip(jaxpr.constvars, closed.consts):
        if isinstance(c, Tracer):
            hoist_vars.append(v)
            hoisted.append(c)
        else:
            keep_vars.append(v)
            keep_vals.append(c)
    new = Jaxpr(keep_vars, hoist_vars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
    return ClosedJaxpr(new, keep_vals), hoisted


class Traced:
    """`jit(f).trace(*args)`: the jaxpr of one specialization."""

    def __init__(self, fn: JitFunction, result: TraceResult):
        self._fn = fn
        self._result = result

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The traced program (a ``ClosedJaxpr``; ``str()`` prints it as JAX does)."""
        return self._result.closed_jaxpr

    @property
    def out_info(self) -> Any:
        """The output's shapes and dtypes: a pytree of ``ShapeDtypeStruct``."""
        return tree_unflatten(self._result.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in self.jaxpr.out_avals])

    def lower(self) -> Lowered:
        """Lower the traced program to HLO: a ``Lowered``."""
        return Lowered(self._fn, self._result)


class Lowered:
    """`jit(f).lower(*args)`: the HLO handed to the compiler (before optimization)."""

    def __init__(self, fn: JitFunction, result: TraceResult):
        from ember.lowering import lower_jaxpr
        self._fn = fn
        self._result = result
        with paused_gc():  # (gc_pause.py)
            self._lowered = lower_jaxpr(result.closed_jaxpr, fun_name(fn.fun))

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The traced program the HLO was lowered from."""
        return self._result.closed_jaxpr

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The HLO text; `debug_info=True` adds each instruction's metadata (op_name path,
        source file and line)."""
        from ember.hlo.printer import print_module
        return print_module(self._lowered.module, metadata=debug_info)

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The lowered program as an object, for debugging (as jax's Lowered.compiler_ir).

        Ember's compiler takes HLO: `dialect=None` or `"hlo"` returns a copy of the HLO
        module (`ember.hlo.ir.Module`; `str()` or `.as_hlo_text()` print it, as the
        XlaComputation JAX returns for "hlo" does). JAX's default, `"stablehlo"`, is an
        MLIR module that Ember never builds: it returns None, JAX's answer for a
        representation that is unavailable. Any other dialect raises
        `ValueError("unknown dialect: ...")`.
        """
        if dialect is None or dialect == "hlo":
            return self._lowered.module.clone()
        if dialect == "stablehlo":
            return None
        raise ValueError(f"unknown dialect: {dialect}")

    def compile(self) -> Compiled:
        """Optimize and compile the HLO for the backend: a ``Compiled``, callable on
        arguments of the lowered types."""
        return Compiled(self._fn, self._result)


class Compiled:
    """`jit(f).lower(*args).compile()`: the optimized program, callable on arguments of the
    lowered types."""

    def __init__(self, fn: JitFunction, result: TraceResult):
        self._fn = fn
        self._result = result
        self._compiled = dispatch.compile_jaxpr(result.closed_jaxpr, fun_name(fn.fun),
                                                dispatch.donated_positions(result.params),
                                                result.params.get("backend"))

    def as_text(self, *, debug_info: bool = False) -> str:
        """The HLO after the optimization passes (constants over 8 elements elided)."""
        from ember.hlo.printer import print_module
        return print_module(self._compiled.optimized, mode="display", metadata=debug_info)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost model on the optimized HLO: `flops`, `transcendentals`,
        `bytes accessed` (and per-operand `bytes accessed{i}{}`, `bytes accessedout{}`)."""
        from ember.hlo.cost_analysis import cost_analysis
        return cost_analysis(self._compiled.optimized)

    def memory_analysis(self) -> Any:
        """Bytes of arguments, outputs, temporaries, aliases and generated code
        (`ember.memory_stats.CompiledMemoryStats`, XLA's field names); its
        `buffer_assignment` text says which values share which scratch memory, with sizes
        and live ranges. None on the interpreter backend, which holds no buffer plan."""
        analyze = getattr(self._compiled.executable, "memory_analysis", None)
        return analyze() if analyze is not None else None

    def llvm_ir(self, kernel: str | None = None) -> str:
        """The optimized LLVM IR of the whole program, or of one kernel (`kernel="fusion"`,
        a name from `as_text()` or `kernels()`). Under the interpreter backend the CPU
        backend builds the same program on demand, so its native code can still be seen."""
        return self._compiled.llvm_ir(kernel)

    def asm(self, kernel: str | None = None) -> str:
        """The native assembly of the whole program, or of one kernel."""
        return self._compiled.asm(kernel)

    def kernels(self) -> list[Any]:
        """The kernels in the order they run: name, kind, hlo, source_lines, cost,
        llvm_ir, asm (`ember.backends.cpu.kernel_records.KernelInfo`; ember.explain
        formats them)."""
        return self._compiled.kernels()

    def runtime_hlo(self) -> str:
        """What XLA's compiler made of the module (its optimized HLO, with its own
        fusions), for the backends that end in XLA (`xla-cpu`, `tpu`); ValueError on
        the others, whose code Ember generates itself (`llvm_ir()`, `asm()`)."""
        runtime = getattr(self._compiled.executable, "runtime_hlo", None)
        if runtime is None:
            raise ValueError("runtime_hlo() shows XLA's compilation: this function ran on "
                             "Ember's own code generator (jit(..., backend='xla-cpu' or "
                             "'tpu') hands it to XLA)")
        return runtime()

    def mosaic(self, kernel: str | None = None) -> str:
        """The Mosaic MLIR text of Ember's TPU kernel `kernel` (a name of the TPU
        pipeline's fusions, e.g. "fusion"), or of all of them, each after a `// kernel
        <name>` line. Compiled for the tpu backend: the kernels it runs; for another
        backend, the kernels the tpu backend would generate for this program (with
        EMBER_TPU_KERNELS's choice; no chip needed). ValueError if there is no such
        kernel."""
        kernels = getattr(self._compiled.executable, "mosaic_kernels", None)
        if kernels is None:
            from ember.backends import tpu
            module = self._compiled.lowered.module
            kernels = tpu.tpu_module(tpu.optimize(module)).kernels
        if kernel is None:
            if not kernels:
                raise ValueError("this program has no Mosaic kernel (EMBER_TPU_KERNELS="
                                 "'ember' also turns elementwise fusions into kernels)")
            return "".join(f"// kernel {k.name}\n{k.text}" for k in kernels)
        for k in kernels:
            if k.name == kernel:
                return k.text
        names = ", ".join(k.name for k in kernels) or "none"
        raise ValueError(f"no Mosaic kernel named {kernel!r}; the kernels are: {names}")

    @traceback_util.api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _, _, in_tree, leaves, _, _ = self._fn.flatten_call(args, kwargs)
        if in_tree != self._result.in_tree:
            raise TypeError(f"Compiled function called with a different argument structure: "
                            f"{in_tree} vs {self._result.in_tree}")
        expected = self._result.closed_jaxpr.in_avals
        for leaf, aval, name in zip(leaves, expected, self._result.arg_names):
            got = get_aval(leaf)
            if got.shape != aval.shape or got.dtype != aval.dtype:
                raise TypeError(f"Argument {name} has type {got.str_short()} but the compiled "
                                f"function expects {aval.str_short()}")
        outs = dispatch.run(self._result.closed_jaxpr, [*self._result.hoisted, *leaves],
                            fun_name(self._fn.fun), self._result.params.get("donated_invars"),
                            self._result.params.get("backend"))
        return tree_unflatten(self._result.out_tree, outs)


def _axis_env() -> tuple:
    """(name, size) of each named vmap being traced, outermost first (a shard_map body's
    mesh axes first: they are bound with their sizes, not by a vmap)."""
    from ember.core.batching import spmd_axes
    spmd = spmd_axes()
    out = []
    for name in bound_axis_names():
        trace = named_axis_trace((name,))
        out.append((name, trace.axis.size if trace is not None else spmd[name]))
    return tuple(out)


def _check_placement(backend: str | None, device: Any, in_shardings: Any,
                     out_shardings: Any, abstracted_axes: Any,
                     compiler_options: dict[str, Any] | None) -> None:
    """Accept the values of jit's placement and compiler keywords that mean what Ember does
    anyway (this machine's CPU, one device, no sharding, static shapes, no XLA options);
    raise, naming the keyword, for any other value instead of ignoring it."""
    from ember.array import devices
    if device is not None and backend is not None:
        raise ValueError("can't specify both a device and a backend for jit, got "
                         f"device={device!r} and backend={backend!r}")
    if backend is not None and backend not in _backends.NAMES:
        present = "Platforms present are: cpu"
        if backend == "gpu":
            msg = (f"Unknown backend: 'gpu' requested, but no platforms that are instances "
                   f"of gpu are present. {present}")
        else:
            msg = f"Unknown backend {backend}. {present}"
        raise RuntimeError(f"jit(backend={backend!r}): {msg} (Ember's backends: "
                           f"{', '.join(_backends.NAMES)}; None takes EMBER_BACKEND's).")
    from ember.device_array import AcceleratorDevice
    if device is not None and not isinstance(device, AcceleratorDevice) \
            and device not in devices():
        raise ValueError(f"jit(device={device!r}): not one of Ember's devices "
                         f"({devices()!r}: ember.devices()); pass one of them or None.")
    from ember.jit_placement import check
    for what, value in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        check(value, what)
    if abstracted_axes is not None:
        raise NotImplementedError(
            "jit(abstracted_axes=...): Ember traces with static shapes only (JAX needs "
            "--jax_dynamic_shapes for abstracted_axes, which Ember does not implement).")
    if compiler_options:
        raise NotImplementedError(
            f"jit(compiler_options=...): Ember's compiler takes no XLA options (got "
            f"{sorted(compiler_options)}); its passes are chosen with EMBER_DISABLE_PASSES "
            "and ember.config (print(ember.config.describe()) lists them).")


def jit(fun: Callable | None = None, /, *, in_shardings: Any = None, out_shardings: Any = None,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None,
        keep_unused: bool = False, device: Any = None, backend: str | None = None,
        inline: bool = False, abstracted_axes: Any = None,
        compiler_options: dict[str, Any] | None = None) -> Any:
    """Set up ``fun`` for just-in-time compilation, as ``jax.jit``.

    The first call traces ``fun`` with abstract arguments (shape and dtype only) into a
    jaxpr, lowers it to HLO, optimizes it and compiles it to native code for this machine's
    CPU through LLVM. Later calls with arguments of the same pytree structure, shapes,
    dtypes (weak types included) and equal static arguments run the cached code without
    calling ``fun`` again: Python side effects in ``fun`` happen once per trace. Usable as
    ``@jit``, ``@jit(static_argnums=...)`` and ``functools.partial(jit, ...)``.

    Args:
      fun: the function to compile. Its arguments and results are arrays, scalars, or
        pytrees of them (tuples, lists, dicts, registered classes); arguments marked static
        may be any hashable Python value.
      in_shardings, out_shardings: ``None`` or pytree prefixes of the positional
        arguments / of the results whose leaves are shardings (``NamedSharding``,
        ``SingleDeviceSharding``, a device, a ``PartitionSpec`` under ``with mesh:``) or
        None. Each argument is checked against its sharding, and each result comes back
        laid out by its out-sharding; over a mesh of several devices the call is
        partitioned, each device computing its blocks (ember/spmd/_jit.py), as is a call
        with arguments laid out over several devices; see ember/jit_placement.py.
      static_argnums: an int or a sequence of ints: the positional arguments that are
        static. A static argument is a compile-time constant: its value (it must be
        hashable, compared with ``==`` and by type) is part of the cache key, so each new
        value traces and compiles again. Negative indices count from the end of the
        positional parameters. The matching parameter names become static too, so the
        argument is static whether it is passed by position or by keyword. An index the
        function's signature cannot take raises ``ValueError`` here, at ``jit()``, as in
        JAX; an index past the end of a call's arguments is skipped at that call.
      static_argnames: a str or a sequence of str: the parameters, by name, that are
        static; their positions become static too. A name the function does not take (and
        it has no ``**kwargs``), or a positional-only one, raises ``ValueError``.
      donate_argnums: the positional arguments whose memory the compiled call may reuse
        for its outputs. Ember writes an output of the same shape and dtype into a donated
        ``ember.Array``'s buffer when nothing else can see that memory, then deletes the
        Array (using it later raises, as in JAX); otherwise it copies first, so the caller's
        data is never overwritten. A donated argument no output can use warns "Some donated
        buffers were not usable". A call partitioned over a mesh does the same per
        device, with each device's block of the donated array. May not overlap
        ``static_argnums``.
      donate_argnames: the same, by parameter name.
      keep_unused: in JAX, ``False`` lets XLA drop arguments the function does not use.
        Ember always keeps them (an unused argument costs one pointer per call), so both
        values give the same program.
      device: ``None`` or one of ``ember.devices()`` (the computation runs on this
        process's CPU either way); any other value raises ``ValueError``. (JAX deprecates
        this argument in favour of placing the inputs with ``device_put``.)
      backend: the Ember backend that compiles this function: ``"cpu"`` (native code for
        this machine through LLVM), ``"interpreter"`` (the optimized HLO run with NumPy),
        ``"xla-cpu"`` (the optimized HLO handed to XLA's CPU compiler; needs jaxlib) or
        ``"tpu"`` (the TPU's compiler with Ember's Mosaic kernels; needs jaxlib and a TPU:
        without one, a ``RuntimeError`` names what was asked for and what was found).
        ``None`` takes ``EMBER_BACKEND``'s (default ``"cpu"``). Another platform raises
        JAX's ``RuntimeError`` ("Unknown backend ...").
      inline: when ``True``, a call from inside another trace (an enclosing ``jit`` or
        ``make_jaxpr``) traces ``fun``'s operations straight into the caller's jaxpr
        instead of staging one nested ``jit`` equation. Called from Python, it makes no
        difference.
      abstracted_axes: accepted only as ``None``: Ember traces with static shapes.
      compiler_options: accepted only as ``None`` or ``{}``: Ember's compiler takes no XLA
        options (``EMBER_DISABLE_PASSES`` and ``ember.config`` configure its passes).

    Returns:
      A wrapped version of ``fun`` (an ``ember.api.JitFunction``): call it, or stage it
      with ``.trace(*args)``, ``.lower(*args)`` (then ``.compile()``) and look at each
      stage's text; ``.eval_shape(*args)`` gives the output shapes without compiling.

    Example:
      >>> import ember as jax
      >>> import ember.numpy as jnp
      >>> from functools import partial
      >>> @partial(jax.jit, static_argnums=1)
      ... def scaled_ones(x, n):
      ...     return x * jnp.ones(n)
      >>> scaled_ones(2.0, 3)
      Array([2., 2., 2.], dtype=float32)
    """
    _check_placement(backend, device, in_shardings, out_shardings, abstracted_axes,
                     compiler_options)
    from ember.device_array import AcceleratorDevice
    if isinstance(device, AcceleratorDevice):  # (a TPU's device: its backend compiles)
        backend, device = device.backend, None
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 inline=inline, backend=backend, device=device,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
    from ember.jit_placement import PlacedJitFunction, has_placement
    if has_placement(in_shardings) or has_placement(out_shardings):
        return PlacedJitFunction(fun, in_shardings, out_shardings, static_argnums,
                                 static_argnames, donate_argnums, donate_argnames, keep_unused,
                                 inline, backend)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                       keep_unused, inline, backend)


def make_jaxpr(fun: Callable, static_argnums: Any = None, static_argnames: Any = None,
               return_shape: bool = False) -> Callable[..., Any]:
    """Make a function that traces ``fun`` and returns its jaxpr, printed as JAX prints it.

    Args:
        fun: the function to trace, of arrays or pytrees of arrays.
        static_argnums: positions of arguments that are Python values baked into the jaxpr
            (hashable), as in ``jit``.
        static_argnames: names of such keyword arguments.
        return_shape: whether to also return the output's shapes and dtypes.

    Returns:
        A function with ``fun``'s arguments that returns the ``ClosedJaxpr`` of ``fun`` at
        their shapes and dtypes (with ``return_shape``, ``(jaxpr, shapes)``, ``shapes`` a
        pytree of ``ShapeDtypeStruct`` like ``fun``'s output). Nothing is compiled.

    Example:
        >>> print(ember.make_jaxpr(jnp.sin)(1.0))
        { lambda ; a:f32[]. let b:f32[] = sin a in (b,) }
    """
    # Always a fresh wrapper: a `fun` that is itself jitted then shows as one `jit`
    # equation, as JAX prints `make_jaxpr(jit(f))`.
    jitted = JitFunction(fun, static_argnums, static_argnames)

    @functools.wraps(fun)
    @traceback_util.api_boundary
    def make(*args: Any, **kwargs: Any) -> Any:
        dyn_args, dyn_kwargs, in_tree, _, avals, _ = jitted.flatten_call(args, kwargs)
        result = jitted._trace_uncached(args, kwargs, dyn_args, dyn_kwargs, in_tree, avals,
                                        "make_jaxpr")
        if return_shape:
            shapes = tree_unflatten(result.out_tree, [
                ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                for a in result.closed_jaxpr.out_avals])
            return result.closed_jaxpr, shapes
        return result.closed_jaxpr

    return make


@traceback_util.api_boundary
def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """Compute the shapes and dtypes of ``fun(*args, **kwargs)`` without running it, as
    ``jax.eval_shape``.

    ``fun`` is traced with abstract values only: nothing is compiled and no arithmetic is
    done, so it is cheap even for large inputs.

    Args:
      fun: the function to evaluate abstractly.
      *args: arrays, scalars, ``ember.ShapeDtypeStruct`` values (anything with ``shape``
        and ``dtype``), or pytrees of them. Every argument is dynamic; bind non-array
        arguments with ``functools.partial`` first.
      **kwargs: keyword arguments of the same kinds.

    Returns:
      A pytree of ``ember.ShapeDtypeStruct`` with the structure of ``fun``'s result.

    Example:
      >>> import ember as jax
      >>> import ember.numpy as jnp
      >>> x = jax.ShapeDtypeStruct((1000, 3), jnp.float32)
      >>> jax.eval_shape(lambda x: jnp.sum(x, axis=0), x)
      ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    return JitFunction(fun).eval_shape(*args, **kwargs)


def disable_jit(disable: bool = True) -> Any:
    """Context manager: run jitted functions op by op (as `jax.disable_jit`)."""
    import contextlib

    @contextlib.contextmanager
    def ctx():
        prev = config.jax_disable_jit
        config.update("jax_disable_jit", disable)
        try:
            yield
        finally:
            config.update("jax_disable_jit", prev)

    return ctx()


def is_hashable(x: Any) -> bool:
    return isinstance(x, Hashable)


__all__ = ["jit", "make_jaxpr", "eval_shape", "ShapeDtypeStruct", "disable_jit", "tree_map"]
