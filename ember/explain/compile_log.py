"""What each compilation did: the `EMBER_DEBUG` log and the `EMBER_DUMP_TO` file set.

Input: a `CompileWatch(closed, name)` watches a compilation whenever EMBER_DEBUG >= 1,
jax_log_compiles or EMBER_DUMP_TO asks for it (ember/explain/observers.py subscribes it to
`ember.compile_events`; ember.compiler enters it and reports the stages; a quiet compile
imports none of this); the trace time comes from
`ember.compiler.record_trace` (called by jit after every trace; re-exported here).
Output, on stderr, by level
(`EMBER_DEBUG=n`; `config.update("jax_log_compiles", True)` gives at least level 1):
  1  one line per compilation: the function, its argument and result types, the backend,
     the time to trace, lower, optimize (the HLO passes) and generate code (everything
     else the backend does: scheduling, IR emission, LLVM O3, machine code, loading; the
     first compile of a process also imports the backend), with the part of it LLVM's
     optimization and machine code took, the number of kernels (the first
     KERNEL_NAMES named), and what the caches did (in-memory hit, disk hit, or compiled
     and written to disk)
  2  + the time of each HLO pass (the costliest first), the jaxpr and the optimized HLO
  3  + each kernel's LLVM IR and why-not-fused: the fusion pass's reason for every array
     that crosses a kernel boundary (`ember.explain.refusals`)
  4  + each kernel's assembly
and, when `EMBER_DUMP_TO=dir` is set, one file set per compilation (names in
`ember/passes/dump.py`): `jaxpr.txt`, `before_optimizations.hlo.txt`, one `.hlo.txt` per
pass, `after_optimizations.hlo.txt`, `ir-no-opt.ll`, `ir-with-opt.ll`, `asm.s`,
`buffer-assignment.txt` (memory_analysis and who shares which scratch memory).
Invariants: with neither EMBER_DEBUG, jax_log_compiles nor EMBER_DUMP_TO the watch only
reads the environment and a clock; while dumping, jit bypasses the CPU backend's caches so
every pass runs (and is dumped) even for a module compiled before.
"""

from __future__ import annotations

import sys
import textwrap
import time
from types import TracebackType
from typing import Any

from ember.compiler import record_trace, trace_record
from ember.core.jaxpr import ClosedJaxpr

__all__ = ["CompileWatch", "emit", "log_level", "record_trace"]


# Kernels the level-1 line names (an unrolled program has thousands: the rest are counted).
KERNEL_NAMES = 16


def log_level() -> int:
    """EMBER_DEBUG (0 when unset or not a number), at least 1 with jax_log_compiles."""
    from ember.config import config

    return max(config.ember_debug, 1 if config.jax_log_compiles else 0)


def emit(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def _types(avals: list) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _cpu_counters() -> dict[str, float]:
    from ember.backends.cpu import cache_stats

    return dict(cache_stats())


class CompileWatch:
    """Times one compilation's stages, writes its dump files, logs it on exit."""

    def __init__(self, closed: ClosedJaxpr, name: str) -> None:
        from ember.lowering import module_name
        from ember.passes.dump import dump_session

        self.closed = closed
        self.name = name
        self.level = log_level()
        self._session_cm = dump_session(module_name(name))
        self.dump: Any = None
        self.times: dict[str, float] = {}
        self.codegen_parts: dict[str, float] = {}  # LLVM's part of "codegen"
        self.cache = ""
        self.lowered: Any = None
        self.compiled: Any = None
        self._counters: dict[str, float] = {}

    @property
    def dumping(self) -> bool:
        return self.dump is not None

    @property
    def bypass_caches(self) -> bool:
        """While dumping, the compiler skips the CPU backend's caches: every pass runs."""
        return self.dumping

    def __enter__(self) -> CompileWatch:
        from ember.passes.observe import observing

        self._observing = observing(self)  # times the HLO passes (before_pass/after_pass)
        self._observing.__enter__()
        self._pass_s = 0.0
        self.pass_times: dict[str, float] = {}  # leaf pass -> seconds
        self.dump = self._session_cm.__enter__()
        if self.dump is not None:
            self.dump.write("jaxpr", "txt", str(self.closed) + "\n")
        self._t = time.perf_counter()
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._session_cm.__exit__(exc_type, exc, tb)
        self._observing.__exit__(exc_type, exc, tb)
        if exc is None and self.level >= 1 and self.compiled is not None:
            emit(self.report())

    # -- pass observer -----------------------------------------------------------------------

    def before_pass(self, module: Any, pipeline: str, pass_name: str) -> None:
        self._pass_t0 = time.perf_counter()

    def after_pass(self, module: Any, pipeline: str, pass_name: str, changed: bool) -> None:
        spent = time.perf_counter() - self._pass_t0
        self._pass_s += spent
        self.pass_times[pass_name] = self.pass_times.get(pass_name, 0.0) + spent

    # -- stages, in order ------------------------------------------------------------------

    def did_lower(self, lowered: Any) -> None:
        from ember.hlo.printer import print_module

        now = time.perf_counter()
        self.times["lower"] = now - self._t
        self._t = now
        self.lowered = lowered
        if self.dump is not None:
            self.dump.write("before_optimizations", "hlo.txt",
                            print_module(lowered.module, metadata=True))
        if self.level >= 1 and "ember.backends.cpu.compiler" in sys.modules:
            self._counters = _cpu_counters()

    def did_compile(self, compiled: Any) -> None:
        from ember.hlo.printer import print_module

        total = time.perf_counter() - self._t
        self.compiled = compiled
        if compiled.backend == "cpu":
            self._split_cpu_time(total)
        else:
            self.times["optimize"] = self._pass_s
            self.cache = "interpreter backend (nothing compiled to native code)"
        if self.dump is not None:
            self.dump.write("after_optimizations", "hlo.txt",
                            print_module(compiled.optimized, metadata=True))
            if compiled.backend == "cpu":
                exe = compiled.executable
                self.dump.write("ir-no-opt", "ll", exe.unoptimized_ir)
                self.dump.write("ir-with-opt", "ll", exe.llvm_ir)
                self.dump.write("asm", "s", exe.assembly())
                stats = exe.memory_analysis()
                self.dump.write("buffer-assignment", "txt",
                                f"{stats!r}\n\n{stats.buffer_assignment}\n")

    def _split_cpu_time(self, total: float) -> None:
        if self.level < 1:
            return
        before = self._counters or {}
        now = _cpu_counters()

        def delta(k: str) -> float:
            return float(now.get(k, 0)) - float(before.get(k, 0))

        init = delta("llvm_init_s")  # the process's first compile initializes LLVM
        self.times["optimize"] = self._pass_s
        self.times["codegen"] = max(total - self._pass_s - init, 0.0)
        # (LLVM's part of it: the rest is Ember's planning, IR emission and loading)
        self.codegen_parts = {"LLVM optimize": delta("optimize_s"),
                              "machine code": delta("codegen_s")}
        if init > 0:
            self.times["LLVM initialization"] = init
        if self.dumping:
            self.cache = "bypassed while EMBER_DUMP_TO is set"
        elif delta("cache_hits") > 0:
            self.cache = "in-memory hit"
        elif delta("disk_hits") > 0:
            self.cache = "disk hit (no LLVM work)"
        elif delta("disk_writes") > 0:
            self.cache = "miss (compiled, written to the disk cache)"
        else:
            self.cache = "miss (compiled)"

    # -- the log ----------------------------------------------------------------------------

    def report(self) -> str:
        c = self.compiled
        trace, where = trace_record(self.closed)
        times = ([f"trace {_ms(trace)}"] if trace is not None else [])
        times += [f"{k} {_ms(v)}" + (self._codegen_parts() if k == "codegen" else "")
                  for k, v in self.times.items()]
        head = (f"[ember] compiled jit({self.name})"
                + (f" (defined at {where})" if where else "")
                + f" for {_types(self.closed.in_avals)} -> {_types(self.closed.out_avals)}"
                + f" on {c.backend}: " + ", ".join(times))
        lines = [head]
        if c.backend == "cpu":
            names = c.executable.kernel_names
            shown = ", ".join(names[:KERNEL_NAMES]) + (
                f", ... {len(names) - KERNEL_NAMES} more" if len(names) > KERNEL_NAMES else "")
            lines.append(f"[ember]   {len(names)} kernel{'s' if len(names) != 1 else ''}"
                         + (f" ({shown})" if names else "")
                         + f"; cache: {self.cache}")
        else:
            lines.append(f"[ember]   {self.cache}")
        if self.level >= 2:
            from ember.hlo.printer import print_module

            if self.pass_times:
                costliest = sorted(self.pass_times.items(), key=lambda kv: -kv[1])
                lines.append("[ember]   passes: "
                             + ", ".join(f"{k} {_ms(v)}" for k, v in costliest))

            lines.append(_section("jaxpr", str(self.closed)))
            lines.append(_section("optimized HLO", print_module(c.optimized, mode="display")))
        if self.level >= 3 and c.backend == "cpu":
            lines += self._kernel_sections()
        return "\n".join(lines)

    def _codegen_parts(self) -> str:
        """" (LLVM optimize X ms, machine code Y ms)" when LLVM ran in this compile."""
        parts = {k: v for k, v in self.codegen_parts.items() if v > 0}
        if not parts:
            return ""
        return " (" + ", ".join(f"{k} {_ms(v)}" for k, v in parts.items()) + ")"

    def _kernel_sections(self) -> list[str]:
        from ember.explain.analysis import analyze_jaxpr
        from ember.explain.kernels import kernels
        from ember.explain.refusals import format_report

        out = []
        analysis = analyze_jaxpr(self.closed, self.name, compile=False, lowered=self.lowered)
        out.append(_section("why not fused", format_report(analysis)))
        for k in kernels(self.compiled.executable, analysis.fused):
            where = "; ".join(f"{s.file}:{s.line}" for s in k.source_lines)
            title = f"kernel {k.name} ({k.kind}{', threaded' if k.parallel else ''})"
            out.append(_section(title + (f" from {where}" if where else ""), k.hlo))
            out.append(_section(f"LLVM IR of {k.name}", k.llvm_ir))
            if self.level >= 4:
                out.append(_section(f"assembly of {k.name}", k.asm))
        return out


def _section(title: str, body: str) -> str:
    return f"[ember] --- {title} ---\n" + textwrap.indent(body.rstrip("\n"), "    ")
