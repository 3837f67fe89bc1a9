"""One function followed through the compiler, with every intermediate kept for reports.

Input: a Python function and example arguments (arrays or ShapeDtypeStructs), or a
ClosedJaxpr. Output: an `Analysis`: the jaxpr, the lowered HLO, every pass the CPU
backend's pipeline ran (module text before and after, changed or not), a copy of the
module just before fusion, the fused module, the fusion pass's refusals and multi-output
merges, and the CPU executable (None when the module holds opcodes only the interpreter
runs).
Invariants:
- The passes run exactly as `ember.backends.cpu.compile` runs them (same function, on a
  clone), so the fused module here prints the same as the executable's.
- Just before the fusion pass every instruction of the module is tagged with
  `metadata["ember_origin"] = its name`; fused copies keep that metadata, so a fused
  instruction can be traced back to the instruction the fusion decisions name (fusion
  renames the copies it puts in fused computations). Printing and cache keys ignore the tag.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ember.core.jaxpr import ClosedJaxpr
from ember.hlo.ir import Instruction, Module
from ember.hlo.printer import print_module
from ember.lowering import LoweredModule, lower_jaxpr

ORIGIN = "ember_origin"


def origin(inst: Instruction) -> str:
    """The name `inst` had when fusion started (its own name if it was not fused)."""
    return str(inst.metadata.get(ORIGIN) or inst.name)


@dataclass
class PassStep:
    """One run of one leaf pass: the module text before and after it."""

    pipeline: str
    name: str
    changed: bool
    before: str
    after: str

    def diff(self, context: int = 2) -> str:
        """A unified diff of the module text (empty when nothing changed)."""
        lines = difflib.unified_diff(self.before.splitlines(), self.after.splitlines(),
                                     f"before {self.name}", f"after {self.name}", lineterm="",
                                     n=context)
        return "\n".join(lines)


@dataclass
class _Recorder:
    """Pass observer: records each pass's text and snapshots the module before fusion."""

    steps: list[PassStep] = field(default_factory=list)
    before_fusion: Module | None = None
    _text: str = ""

    def before_pass(self, module: Module, pipeline: str, pass_name: str) -> None:
        if pass_name == "fusion" and self.before_fusion is None:
            for comp in module.computations:
                for inst in comp.instructions:
                    inst.metadata[ORIGIN] = inst.name
            self.before_fusion = module.clone()
        self._text = print_module(module)

    def after_pass(self, module: Module, pipeline: str, pass_name: str,
                   changed: bool) -> None:
        self.steps.append(PassStep(pipeline, pass_name, changed, self._text,
                                   print_module(module)))


@dataclass
class Analysis:
    name: str
    jaxpr: ClosedJaxpr
    lowered: LoweredModule
    steps: list[PassStep]
    before_fusion: Module          # after the simplification passes, before fusion
    fused: Module                  # the optimized module the backend compiles
    decisions: list                # FusionDecision (ember.passes.fusion)
    executable: Any = None         # ember.backends.cpu Executable, or None
    unsupported: str | None = None  # why the CPU backend cannot compile it
    merges: list = field(default_factory=list)  # FusionMerge (ember.passes.fusion_merge)

    @property
    def changed_steps(self) -> list[PassStep]:
        """The passes that changed the module's text, in the order they ran."""
        return [s for s in self.steps if s.changed and s.before != s.after]


def trace(f: Callable, *args: Any, **kwargs: Any) -> tuple[ClosedJaxpr, str]:
    """(jaxpr, function name) of `f` at these arguments (`f` may already be jitted)."""
    from ember.api import JitFunction, fun_name, jit

    fn = f if isinstance(f, JitFunction) else jit(f)
    return fn.trace(*args, **kwargs).jaxpr, fun_name(fn.fun)


def analyze(f: Callable, *args: Any, compile: bool = True, **kwargs: Any) -> Analysis:
    """Follow `f(*args, **kwargs)` through the CPU backend's pipeline (see module doc)."""
    closed, name = trace(f, *args, **kwargs)
    return analyze_jaxpr(closed, name, compile=compile)


def analyze_jaxpr(closed: ClosedJaxpr, name: str, *, compile: bool = True,
                  lowered: LoweredModule | None = None) -> Analysis:
    from ember.backends import cpu
    from ember.config import config
    from ember.passes.observe import observing

    lowered = lowered or lower_jaxpr(closed, name)
    unsafe = bool(config.ember_unsafe_math)
    recorder = _Recorder()
    unsupported = None
    try:
        cpu.check_supported(lowered.module)
    except cpu.UnsupportedOnCpu as e:
        unsupported = str(e)
    with observing(recorder):
        if unsupported is None:
            fused = cpu.optimize(lowered.module, unsafe_math=unsafe)
        else:
            from ember.backends.interpreter import pipeline

            fused = lowered.module.clone()
            pipeline(unsafe).run(fused)
    before = recorder.before_fusion or fused.clone()
    exe = None
    if compile and unsupported is None:
        exe = cpu.compile(lowered.module, unsafe_math=unsafe)
    return Analysis(name, closed, lowered, recorder.steps, before, fused,
                    list(getattr(fused, "fusion_decisions", [])), exe, unsupported,
                    list(getattr(fused, "fusion_merges", [])))
