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

import functools
import inspect
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ember import compile_events, dispatch, fastpath
from ember.compiler import record_trace
from ember.config import config
from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.jaxpr import ClosedJaxpr, Jaxpr
from ember.core.source_info import locate_error
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import Tracer, current_dynamic, get_aval
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
        return len(self.shape)

    @property
    def size(self) -> int:
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
                 keep_unused: bool = False, inline: bool = False):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        self.fun = fun
        self.sig = _signature(fun)
        nums = set(_normalize_argnums(static_argnums))
        names = set(_normalize_argnames(static_argnames))
        dnums = set(_normalize_argnums(donate_argnums))
        dnames = set(_normalize_argnames(donate_argnames))
        # Names of the positional parameters, for error messages ("argument `x`").
        self._pos_names: list[str] = []
        if self.sig is not None:
            params = list(self.sig.parameters.values())
            positional = [p for p in params if p.kind in
                          (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            self._pos_names = [p.name for p in positional]
            npos = len(positional)
            has_var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
            known = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
            bad = sorted(n for n in names | dnames if n not in known)
            if bad and not has_var_kw:
                raise ValueError(
                    f"jitted function {fun_name(fun)} has static_argnames or donate_argnames "
                    f"{bad} that are not parameters of the function (its parameters are "
                    f"{sorted(known)}).")
            # static_argnums <-> static_argnames, as JAX infers them from the signature; a
            # negative argnum counts from the end of the positional parameters.
            for i, p in enumerate(positional):
                for argset, nameset in ((nums, names), (dnums, dnames)):
                    if p.name in nameset:
                        argset.add(i)
                    if (i in argset or i - npos in argset) and p.kind != p.POSITIONAL_ONLY:
                        nameset.add(p.name)
        self.static_argnums = tuple(sorted(nums))
        self.static_argnames = tuple(sorted(names))
        self.donate_argnums = tuple(sorted(dnums))
        self.donate_argnames = tuple(sorted(dnames))
        self._static_name_set = frozenset(names)
        self._no_static = not nums and not names
        self.keep_unused = keep_unused
        self.inline = inline
        self._name = fun_name(fun)
        self._cache: dict[Any, TraceResult] = {}
        self._fast: Callable[[tuple], Any] | None = None  # the last signature's fast path
        self._fast_paths: dict[int, tuple] = {}  # per cache entry: (entry, fast, config)
        self.trace_count = 0
        # Copy __name__, __doc__, ... but not __dict__: merging a jitted `fun`'s instance
        # dict would overwrite this wrapper's own fun and cache.
        functools.update_wrapper(self, fun, updated=())

    # -- arguments ---------------------------------------------------------------------------
    def _static_positions(self, nargs: int) -> frozenset[int]:
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
        key = (in_tree, avals, static, config.trace_context())
        hit = self._cache.get(key)
        if hit is not None:
            return hit, leaves
        compile_events.cache_miss(self, key, self._cache.keys())  # (jax_explain_cache_misses)
        t0 = time.perf_counter()
        result = self._trace_uncached(args, kwargs, dyn_args, dyn_kwargs, in_tree, avals)
        record_trace(result.closed_jaxpr, time.perf_counter() - t0, self.fun)
        # A trace that closed over an enclosing trace's tracers is only valid inside that
        # trace; it is not cached.
        if not result.hoisted:
            self._cache[key] = result
        return result, leaves

    def _trace_uncached(self, args: tuple, kwargs: dict, dyn_args: tuple, dyn_kwargs: dict,
                        in_tree: PyTreeDef, avals: tuple[ShapedArray, ...]) -> TraceResult:
        self.trace_count += 1
        paths = self._leaf_paths(args, dyn_args, dyn_kwargs)
        out_tree_box: list[PyTreeDef] = []

        def flat_fun(*tracers: Any) -> list:
            t_args, t_kwargs = tree_unflatten(in_tree, tracers)
            full_args, full_kwargs = self._rebuild_call(args, kwargs, t_args, t_kwargs)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        try:
            closed, _ = trace_to_jaxpr(flat_fun, list(avals), paths, debug_info=self._name)
        except (TypeError, ValueError) as e:
            locate_error(e)     # shape/dtype errors name the user's line
            raise
        closed, hoisted = _hoist_tracer_consts(closed)
        params: dict[str, Any] = {"jaxpr": closed, "name": self._name}
        if self.donate_argnums or self.donate_argnames:
            flags = self._donation_flags(args, kwargs)
            if any(flags):
                params["donated_invars"] = (False,) * len(hoisted) + flags
        return TraceResult(closed, hoisted, in_tree, out_tree_box[0], paths, params)

    # -- calling ------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fast = self._fast
        if fast is not None and not kwargs:
            out = fast(args)
            if out is not fastpath.MISS:
                return out
        fastpath.STATS["slow_calls"] += 1
        if config.jax_disable_jit:
            return self.fun(*args, **kwargs)
        traces = self.trace_count
        result, leaves = self._lookup(args, kwargs)
        outs = jit_p.bind(*result.hoisted, *leaves, **result.params)
        if (traces == self.trace_count and not kwargs and self._no_static
                and not result.hoisted and current_dynamic().level == 0
                and fastpath.eligible(args)):
            self._install_fast(result, args)
        return tree_unflatten(result.out_tree, outs)

    def _install_fast(self, result: TraceResult, args: tuple) -> None:
        """After a cache hit run by the eval trace: make calls like this one take the fast
        path (see fastpath.py). Not on the first call, which traced: a function called once
        never pays for it."""
        ctx = config.trace_context()  # a fast path serves only the config it was built in
        built = self._fast_paths.get(id(result))
        if built is not None and built[0] is result and built[2] is ctx:
            self._fast = built[1]  # signatures taking turns: reuse
            return
        closed = result.closed_jaxpr
        compiled = dispatch.compile_jaxpr(closed, self._name,
                                          dispatch.donated_positions(result.params))
        fast = fastpath.build(closed.in_avals, closed.out_avals, result.out_tree,
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

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        result, _ = self._lookup(args, kwargs)
        return Traced(self, result)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        result, _ = self._lookup(args, kwargs)
        return tree_unflatten(result.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in result.closed_jaxpr.out_avals])

    def clear_cache(self) -> None:
        self._cache.clear()
        self._fast = None
        self._fast_paths.clear()

    def _cache_size(self) -> int:
        return len(self._cache)

    def __repr__(self) -> str:
        return f"<ember.jit of {self._name} at {fun_location(self.fun)}>"


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
        return self._result.closed_jaxpr

    @property
    def out_info(self) -> Any:
        return tree_unflatten(self._result.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in self.jaxpr.out_avals])

    def lower(self) -> Lowered:
        return Lowered(self._fn, self._result)


class Lowered:
    """`jit(f).lower(*args)`: the HLO handed to the compiler (before optimization)."""

    def __init__(self, fn: JitFunction, result: TraceResult):
        from ember.lowering import lower_jaxpr
        self._fn = fn
        self._result = result
        self._lowered = lower_jaxpr(result.closed_jaxpr, fun_name(fn.fun))

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._result.closed_jaxpr

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The HLO text; `debug_info=True` adds each instruction's metadata (op_name path,
        source file and line)."""
        from ember.hlo.printer import print_module
        return print_module(self._lowered.module, metadata=debug_info)

    def compile(self) -> Compiled:
        return Compiled(self._fn, self._result)


class Compiled:
    """`jit(f).lower(*args).compile()`: the optimized program, callable on arguments of the
    lowered types."""

    def __init__(self, fn: JitFunction, result: TraceResult):
        self._fn = fn
        self._result = result
        self._compiled = dispatch.compile_jaxpr(result.closed_jaxpr, fun_name(fn.fun),
                                                dispatch.donated_positions(result.params))

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
                            fun_name(self._fn.fun), self._result.params.get("donated_invars"))
        return tree_unflatten(self._result.out_tree, outs)


def jit(fun: Callable | None = None, *, static_argnums: Any = None, static_argnames: Any = None,
        donate_argnums: Any = None, donate_argnames: Any = None, keep_unused: bool = False,
        inline: bool = False, **unsupported: Any) -> Any:
    """Compile `fun` with tracing, as `jax.jit`. Usable as `@jit` and `@jit(...)`."""
    for k in unsupported:
        if k not in ("device", "backend", "in_shardings", "out_shardings", "abstracted_axes",
                     "compiler_options"):
            raise TypeError(f"jit() got an unexpected keyword argument '{k}'")
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 inline=inline)
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                       keep_unused, inline)


def make_jaxpr(fun: Callable, static_argnums: Any = None, static_argnames: Any = None,
               return_shape: bool = False) -> Callable[..., Any]:
    """`make_jaxpr(f)(*args)`: the ClosedJaxpr of f at these arguments, printed as JAX does."""
    # Always a fresh wrapper: a `fun` that is itself jitted then shows as one `jit`
    # equation, as JAX prints `make_jaxpr(jit(f))`.
    jitted = JitFunction(fun, static_argnums, static_argnames)

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> Any:
        dyn_args, dyn_kwargs, in_tree, _, avals, _ = jitted.flatten_call(args, kwargs)
        result = jitted._trace_uncached(args, kwargs, dyn_args, dyn_kwargs, in_tree, avals)
        if return_shape:
            shapes = tree_unflatten(result.out_tree, [
                ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                for a in result.closed_jaxpr.out_avals])
            return result.closed_jaxpr, shapes
        return result.closed_jaxpr

    return make

def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
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
