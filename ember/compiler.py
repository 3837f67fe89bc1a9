"""The compile pipeline of a jitted function: jaxpr -> HLO -> passes -> backend executable.

Input: a ClosedJaxpr and the function's name. Output: a `CompiledModule` holding the HLO
before optimization (what `Lowered.as_text()` shows), the optimized HLO (what
`Compiled.as_text()` shows), the backend's executable, and the hidden constant arguments.
Invariants:
- The module handed to the backend has been through the backend's pass pipeline
  (`EMBER_DISABLE_PASSES`, `EMBER_DUMP_TO`, `ember_unsafe_math` honoured).
- With `EMBER_ENABLE_CHECKS=1` every compiled module is also checked: its text round-trips
  through the parser (print -> parse -> print is the identity) and the module evaluates the
  same before and after the passes on random inputs (bit-exact, except float results of
  reductions, whose summation order passes may change: compared within a tolerance): the
  passes' own differential checker (`ember.hlo.evaluator.differential.Reference`),
  run once more end to end, with the hidden constants' real values.
- Whoever watches compilations (ember/compile_events.py; ember.explain's compile log and
  dump files while EMBER_DEBUG >= 1, jax_log_compiles or EMBER_DUMP_TO asks for them) is
  told each stage; this module imports nothing from ember.explain. A quiet compile, such
  as a fresh process's warm disk-cache hit, imports no pass.
  Trace times are recorded here for every trace (`record_trace`), so the log can still
  report the trace of a function compiled after logging was turned on.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ember import backends, callbacks, compile_events
from ember.config import config
from ember.core.jaxpr import ClosedJaxpr
from ember.gc_pause import paused_gc
from ember.hlo.ir import Module
from ember.lowering import LoweredModule, lower_jaxpr


class CheckFailure(AssertionError):
    pass


@dataclass
class CompiledModule:
    """A compiled jitted function: `module(args) -> [outputs]` on NumPy arguments, hidden
    constants appended. `fast_runner()` is the backend's cached-call path, if it has one."""

    lowered: LoweredModule
    _optimized: Any  # the optimized Module, or a function making it (on first use)
    executable: Any
    backend: str
    _runner: Any = field(default=None, init=False, repr=False, compare=False)
    donated: tuple[int, ...] = ()  # parameters outputs may be written into (cpu backend)
    called: bool = field(default=False, init=False, repr=False, compare=False)  # by dispatch

    @property
    def optimized(self) -> Module:
        """The optimized HLO (made on first use: a disk-cache hit runs no pass until
        someone looks at it)."""
        if not isinstance(self._optimized, Module):
            self._optimized = self._optimized()
        return self._optimized

    @property
    def hidden_consts(self) -> list[np.ndarray]:
        return self.lowered.hidden_consts

    def __call__(self, args: list[np.ndarray], owned: Any = ()) -> list[np.ndarray]:
        """`owned`: positions of donated arguments whose memory the caller gives up."""
        if self.donated:
            out = self.executable(*args, *self.lowered.hidden_consts, owned=owned)
        else:
            out = self.executable(*args, *self.lowered.hidden_consts)
        if self.lowered.tuple_result:
            return list(out)
        return [out]

    def fast_runner(self, *, ready_only: bool = False
                    ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """`run(vals) -> [outputs]`: the same results as `self(vals)` for arguments already
        of the parameters' exact dtypes and shapes, C-contiguous; outputs are always fresh
        (never an input, never shared), read-only, and of the traced out avals' exact
        dtypes and shapes. Built once; None where the backend has no such path (the
        interpreter, whose results may be views of its inputs or of other types).
        `ready_only`: None rather than generate code for it (a first call should not pay
        for a path only repeated calls need); a later call may still build it."""
        runner = self._runner
        if runner is None:
            make = getattr(self.executable, "fast_runner", None)
            if make is None or not self._results_are_traced_types():
                self._runner = False
                return None
            runner = make(self.lowered.hidden_consts, ready_only=ready_only)
            if runner is None and ready_only:
                return None
            self._runner = runner if runner is not None else False
        return runner or None

    # -- the native code, for Compiled.kernels() / llvm_ir() / asm() and the reports -----

    def cpu_executable(self) -> Any:
        """The CPU executable: its own when the CPU backend compiled it, else the CPU
        backend's build of the same lowered module (cached), so the native code can be
        looked at whichever backend runs the calls. ValueError when the CPU backend cannot
        compile the module."""
        if self.backend == "cpu":
            return self.executable
        from ember.backends import cpu

        try:
            return cpu.compile(self.lowered.module,
                               unsafe_math=bool(config.ember_unsafe_math))
        except cpu.UnsupportedOnCpu as e:
            raise ValueError(f"no native code: the CPU backend cannot compile this program "
                             f"yet ({e}); it runs on the interpreter") from None

    def cpu_optimized(self) -> Module:
        """This compilation's own CPU-optimized module, with its own names and source lines
        (`optimized` under the CPU backend, which reruns the passes when a cache hit's
        module came from another program; else the CPU passes rerun on the lowered module:
        deterministic, so names match `cpu_executable()`'s kernels)."""
        if self.backend == "cpu":
            return self.optimized
        from ember.backends import cpu

        return cpu.optimize(self.lowered.module, unsafe_math=bool(config.ember_unsafe_math))

    def kernels(self) -> list[Any]:
        """The native kernels in the order they run, with this function's source lines
        (`ember.backends.cpu.kernel_records.KernelInfo`)."""
        return self.cpu_executable().kernels(self.cpu_optimized())

    def llvm_ir(self, kernel: str | None = None) -> str:
        """Optimized LLVM IR: the whole module, or one kernel's functions."""
        if kernel is None:
            return self.cpu_executable().llvm_ir
        return self._kernel(kernel).llvm_ir

    def asm(self, kernel: str | None = None) -> str:
        """Assembly: the whole module, or one kernel's functions."""
        if kernel is None:
            return self.cpu_executable().assembly()
        return self._kernel(kernel).asm

    def _kernel(self, name: str) -> Any:
        by_name = {k.name: k for k in self.kernels()}
        if name not in by_name:
            raise KeyError(f"no kernel named {name!r}; the kernels are {sorted(by_name)}")
        return by_name[name]

    def _results_are_traced_types(self) -> bool:
        root = self.lowered.module.entry.root.shape  # (passes keep the entry's types)
        outs = list(root.tuple_shapes) if self.lowered.tuple_result else [root]
        avals = self.lowered.out_avals
        return len(outs) == len(avals) and all(
            s.dtype == a.dtype and tuple(s.dimensions) == a.shape for s, a in zip(outs, avals))


def checks_enabled() -> bool:
    return config.ember_enable_checks


def backend_name() -> str:
    """`EMBER_BACKEND=cpu|interpreter|xla-cpu|tpu`, default cpu: jitted code compiled
    through LLVM for the host; xla-cpu hands the optimized HLO to XLA (ember/backends/xla_cpu/,
    needs jaxlib), tpu to the TPU's compiler with Ember's Mosaic kernels
    (ember/backends/tpu/). The interpreter (the NumPy evaluator of the optimized HLO) stays
    selectable; both give the same bits, except float sums and dots, whose order differs
    (XLA promises none either). Modules with opcodes the CPU backend does not compile yet run on the
    interpreter either way (`compile_jaxpr`). `jax_platforms` (EMBER_PLATFORM) naming "tpu"
    first makes the tpu backend the default."""
    if platform_name() == "tpu":
        return "tpu"
    return config.ember_backend  # (raises ValueError for any other name)


def platform_name() -> str:
    """The default platform: `jax_platforms`' first entry ("cpu" when unset)."""
    platforms = config.jax_platforms
    return platforms.split(",")[0].strip() if platforms else "cpu"


def debug_level() -> int:
    return config.ember_debug


# jaxpr -> (seconds its trace took, "file:line" of the traced function), for the log
_TRACES: weakref.WeakKeyDictionary[ClosedJaxpr, tuple[float, str]] = (
    weakref.WeakKeyDictionary())


def record_trace(closed: ClosedJaxpr, seconds: float, fun: Any = None) -> None:
    """Remember how long tracing took (and where the function is) for the compile log."""
    where = ""
    code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
    if code is not None:
        where = f"{code.co_filename}:{code.co_firstlineno}"
    try:
        _TRACES[closed] = (seconds, where)
    except TypeError:
        pass


def trace_record(closed: ClosedJaxpr) -> tuple[float | None, str]:
    """(seconds, "file:line") `record_trace` stored for `closed`, else (None, "")."""
    return _TRACES.get(closed, (None, ""))


def compile_jaxpr(closed: ClosedJaxpr, name: str = "main",
                  donated: tuple[int, ...] = (), backend: str | None = None,
                  manual: tuple[tuple[str, int], ...] | None = None) -> CompiledModule:
    """Lower, optimize and compile; the CPU backend unless the module holds opcodes it does
    not compile yet (then the interpreter runs it, and EMBER_DEBUG=1 says so). `donated`:
    argument positions (donate_argnums) whose memory outputs of the same type may reuse.
    `backend`: a name of `backends.NAMES` (jit's `backend=`), else EMBER_BACKEND's.
    `manual`: a shard_map body's mesh axes, lowered for one device (lowering.py).
    Watchers of compilations (compile_events.watch_compilation) are told each stage."""
    watch = compile_events.watch_compilation(closed, name)
    with paused_gc():  # (gc_pause.py: the collector's walks were 30% of a long compile)
        if watch is not None:
            with watch:
                lowered, compiled = _lower_and_compile(closed, name, donated, watch, backend,
                                                       manual)
        else:
            lowered, compiled = _lower_and_compile(closed, name, donated, None, backend,
                                                   manual)
    compiled = callbacks.guard(compiled, closed)  # host callbacks, jax_debug_nans
    if checks_enabled():
        check_round_trip(lowered.module)
        check_round_trip(compiled.optimized)
        if manual is None:  # (collectives evaluate only on the devices of a run)
            check_same_values(lowered.module, compiled.optimized, lowered.hidden_consts)
    return compiled


def _lower_and_compile(closed: ClosedJaxpr, name: str, donated: tuple[int, ...],
                       watch: compile_events.CompilationWatch | None,
                       backend: str | None = None,
                       manual: tuple[tuple[str, int], ...] | None = None
                       ) -> tuple[LoweredModule, CompiledModule]:
    """The stages, reported to `watch` (None when nothing watches): lowering, then the
    chosen backend, then the interpreter if that backend does not run the module."""
    lowered = lower_jaxpr(closed, name, manual=manual)
    if watch is not None:
        watch.did_lower(lowered)
    unsafe = bool(config.ember_unsafe_math)
    # (a watch that dumps bypasses the caches, so every pass runs and is dumped)
    use_cache = not (watch is not None and watch.bypass_caches)
    chosen = backend or backend_name()
    compiled = None
    for name_ in dict.fromkeys((chosen, "interpreter")):  # (the interpreter runs anything)
        compiled = _compile_on(backends.get(name_), lowered, unsafe, use_cache, donated)
        if compiled is not None:
            break
    assert compiled is not None
    if watch is not None:
        watch.did_compile(compiled)
    return lowered, compiled


def _compile_on(backend: Any, lowered: LoweredModule, unsafe: bool, use_cache: bool,
                donated: tuple[int, ...]) -> CompiledModule | None:
    """`lowered` compiled by `backend` (the interface of ember/backends/__init__.py), or
    None when it raises `Unsupported` for this module."""
    try:
        exe = backend.compile(lowered.module, unsafe_math=unsafe, use_cache=use_cache,
                              donated=donated)
    except backends.Unsupported as e:
        if debug_level() >= 1:
            print(f"[ember] {lowered.module.name}: not on the {backend.NAME} backend: {e}",
                  file=sys.stderr)
        return None

    def optimized() -> Module:
        from ember.hlo.provenance import carries_metadata_of

        module = exe.module
        if not carries_metadata_of(module, lowered.module):
            # A cache hit compiled for another function of the same structure (the cache
            # keys ignore names and metadata): same code, but the optimized HLO users see
            # must carry this function's names and source lines, so run the passes on it
            # again (no codegen).
            module = backend.optimize(lowered.module, unsafe_math=unsafe)
        return module

    compiled = CompiledModule(lowered, optimized, exe, backend.NAME)
    # (a backend whose executables never write over an argument takes no donations: the
    # interpreter; the caller then keeps its arrays)
    compiled.donated = tuple(donated) if getattr(exe, "takes_donations", True) else ()
    return compiled


def check_round_trip(module: Module) -> None:
    """print -> parse -> print is the identity, and the parsed module evaluates the same."""
    from ember.hlo.parser import parse_module
    from ember.hlo.printer import print_module

    text = print_module(module)
    again = print_module(parse_module(text))
    if again != text:
        raise CheckFailure(f"HLO text does not round-trip:\n{text}\n---\n{again}")


def check_same_values(before: Module, after: Module, hidden: list[np.ndarray]) -> None:
    """`after` (the optimized module) computes what `before` (the lowered one) computes on
    random arguments and the real hidden constants (DifferentialError otherwise); skipped
    where the checker skips (see ember/hlo/evaluator/differential.py)."""
    from ember.hlo.evaluator.differential import Reference

    reference = Reference.capture(before, fixed=hidden)
    if reference is not None:
        reference.check(after, "the optimization passes")
