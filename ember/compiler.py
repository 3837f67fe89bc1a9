"""The compile pipeline of a jitted function: jaxpr -> HLO -> passes -> backend executable.

Input: a ClosedJaxpr and the function's name. Output: a `CompiledModule` holding the HLO
before optimization (what `Lowered.as_text()` shows), the optimized HLO (what
`Compiled.as_text()` shows), the backend's executable, and the hidden constant arguments.
Invariants:
- The module handed to the backend has been through the backend's pass pipeline
  (`EMBER_DISABLE_PASSES`, `EMBER_DUMP_TO`, `ember_unsafe_math` honoured).
- With `EMBER_ENABLE_CHECKS=1` every compiled module is also checked: its text round-trips
  through the parser (print -> parse -> print is the identity) and the module evaluates the
  same before and after the passes on random inputs (bit-exact, except float reductions,
  whose summation order passes may change: compared within a tolerance).
- The compile log and dump files (ember/explain/compile_log.py) are imported only while
  something asks for them (EMBER_DEBUG >= 1, jax_log_compiles, EMBER_DUMP_TO): a quiet
  compile, such as a fresh process's warm disk-cache hit, imports neither them nor any pass.
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

from ember import callbacks
from ember.config import config
from ember.core.jaxpr import ClosedJaxpr
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

    def _results_are_traced_types(self) -> bool:
        root = self.lowered.module.entry.root.shape  # (passes keep the entry's types)
        outs = list(root.tuple_shapes) if self.lowered.tuple_result else [root]
        avals = self.lowered.out_avals
        return len(outs) == len(avals) and all(
            s.dtype == a.dtype and tuple(s.dimensions) == a.shape for s, a in zip(outs, avals))


def checks_enabled() -> bool:
    return config.ember_enable_checks


def backend_name() -> str:
    """`EMBER_BACKEND=cpu|interpreter`, default cpu: jitted code compiled through LLVM for
    the host. The interpreter (the NumPy evaluator of the optimized HLO) stays selectable;
    both give the same bits, except float sums and dots, whose order differs (XLA promises
    none either). Modules with opcodes the CPU backend does not compile yet run on the
    interpreter either way (`compile_jaxpr`)."""
    return config.ember_backend  # (raises ValueError for any other name)


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


def _watched() -> bool:
    """Whether a compilation is logged or dumped: EMBER_DEBUG >= 1, jax_log_compiles or
    EMBER_DUMP_TO (what CompileWatch's log level and dump session read)."""
    return (debug_level() >= 1 or bool(config.jax_log_compiles)
            or config.ember_dump_to is not None)


def compile_jaxpr(closed: ClosedJaxpr, name: str = "main",
                  donated: tuple[int, ...] = ()) -> CompiledModule:
    """Lower, optimize and compile; the CPU backend unless the module holds opcodes it does
    not compile yet (then the interpreter runs it, and EMBER_DEBUG=1 says so). `donated`:
    argument positions (donate_argnums) whose memory outputs of the same type may reuse.
    EMBER_DEBUG / jax_log_compiles log it and EMBER_DUMP_TO dumps it (ember/explain/
    compile_log.py)."""
    if _watched():
        from ember.explain.compile_log import CompileWatch

        with CompileWatch(closed, name) as watch:
            lowered, compiled = _lower_and_compile(closed, name, donated, watch)
    else:
        lowered, compiled = _lower_and_compile(closed, name, donated, None)
    compiled = callbacks.guard(compiled, closed)  # host callbacks, jax_debug_nans
    if checks_enabled():
        check_round_trip(lowered.module)
        check_round_trip(compiled.optimized)
        check_same_values(lowered.module, compiled.optimized, lowered.hidden_consts)
    return compiled


def _lower_and_compile(closed: ClosedJaxpr, name: str, donated: tuple[int, ...],
                       watch: Any) -> tuple[LoweredModule, CompiledModule]:
    """The stages, reported to `watch` (a CompileWatch, or None when nothing watches)."""
    lowered = lower_jaxpr(closed, name)
    if watch is not None:
        watch.did_lower(lowered)
    unsafe = bool(config.ember_unsafe_math)
    compiled = None
    if backend_name() == "cpu":
        # (while dumping, the caches are bypassed so every pass runs and is dumped)
        dumping = watch is not None and watch.dumping
        compiled = _compile_cpu(lowered, unsafe, use_cache=not dumping, donated=donated)
    if compiled is None:
        compiled = _compile_interpreter(lowered, unsafe)
    if watch is not None:
        watch.did_compile(compiled)
    return lowered, compiled


def _compile_cpu(lowered: LoweredModule, unsafe: bool, use_cache: bool = True,
                 donated: tuple[int, ...] = ()) -> CompiledModule | None:
    from ember.backends import cpu

    try:
        exe = cpu.compile(lowered.module, unsafe_math=unsafe, use_cache=use_cache,
                          donated=donated)
    except cpu.UnsupportedOnCpu as e:
        if debug_level() >= 1:
            print(f"[ember] {lowered.module.name}: running on the interpreter backend: {e}",
                  file=sys.stderr)
        return None
    def optimized() -> Module:
        from ember.explain.provenance import carries_metadata_of

        module = exe.module
        if not carries_metadata_of(module, lowered.module):
            # A cache hit compiled for another function of the same structure (the cache
            # keys ignore names and metadata): same code, but the optimized HLO users see
            # must carry this function's names and source lines, so run the passes on it
            # again (no codegen).
            from ember.backends.cpu.compiler import _optimized

            module = _optimized(lowered.module, unsafe, True)
        return module

    compiled = CompiledModule(lowered, optimized, exe, "cpu")
    compiled.donated = tuple(donated)
    return compiled


def _compile_interpreter(lowered: LoweredModule, unsafe: bool) -> CompiledModule:
    from ember.backends import interpreter

    optimized = lowered.module.clone()
    interpreter.pipeline(unsafe_math=unsafe).run(optimized)
    exe = interpreter.compile(optimized, run_passes=False)
    return CompiledModule(lowered, optimized, exe, "interpreter")


def check_round_trip(module: Module) -> None:
    """print -> parse -> print is the identity, and the parsed module evaluates the same."""
    from ember.hlo.parser import parse_module
    from ember.hlo.printer import print_module

    text = print_module(module)
    again = print_module(parse_module(text))
    if again != text:
        raise CheckFailure(f"HLO text does not round-trip:\n{text}\n---\n{again}")


def _random_inputs(module: Module, hidden: list[np.ndarray], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    params = module.entry.parameters
    n_args = len(params) - len(hidden)
    args = []
    for p in params[:n_args]:
        dtype = p.shape.dtype
        shape = p.shape.dimensions
        if dtype.kind == "f":
            args.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "b":
            args.append(rng.random(shape) < 0.5)
        else:
            info = np.iinfo(dtype)
            lo, hi = max(info.min, -100), min(info.max, 100)
            args.append(rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype))
    return args + list(hidden)


def _has_float_reduction(module: Module) -> bool:
    """Whether some reduce or dot sums floats (passes may legally reorder those sums)."""
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in ("reduce", "dot") and any(
                    not o.shape.is_tuple and o.shape.dtype.kind == "f" for o in inst.operands):
                return True
    return False


def check_same_values(before: Module, after: Module, hidden: list[np.ndarray]) -> None:
    from ember.backends.interpreter import evaluate
    from ember.backends.interpreter.evaluator import EvaluationError, while_iteration_limit

    args = _random_inputs(before, hidden)
    try:  # a while loop random inputs keep running (to convergence, say) is not checked
        with while_iteration_limit(10_000):
            want = evaluate(before, *args)
    except EvaluationError:
        return
    with while_iteration_limit(100_000):
        got = evaluate(after, *args)
    wants = want if isinstance(want, tuple) else (want,)
    gots = got if isinstance(got, tuple) else (got,)
    loose = _has_float_reduction(before)
    for w, g in zip(wants, gots):
        w, g = np.asarray(w), np.asarray(g)
        if w.shape != g.shape or w.dtype != g.dtype:
            raise CheckFailure(f"passes changed a result's type: {w.dtype}{w.shape} -> "
                               f"{g.dtype}{g.shape}")
        if loose and w.dtype.kind == "f":
            # a reordered sum is off by about eps x the sum of |terms|, which for a result
            # near zero dwarfs any relative tolerance: scale the absolute one by the largest
            # result (a column of random normals sums to -50..50 and to ~0.01 alike)
            finite = np.abs(w[np.isfinite(w)]) if w.size else w
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            ok = np.allclose(w, g, rtol=1e-5, atol=1e-6 * scale, equal_nan=True)
        else:
            ok = np.ascontiguousarray(w).tobytes() == np.ascontiguousarray(g).tobytes()
        if not ok:
            raise CheckFailure(f"passes changed the values of module {before.name}")
