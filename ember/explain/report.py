"""The whole story of one jitted function, in pipeline order (`python -m ember explain`).

Input: a function and example arguments (arrays, or ShapeDtypeStructs filled with random
values), a directory for the drawings. Output, printed section by section:
  1. the jaxpr (and, for a jit over a mesh, the per-device module, its collectives with
     the bytes each device sends and receives, and the partitioner's refusals)
  2. the HLO before optimization
  3. every pass run that changed the module, with a unified diff
  4. the HLO after optimization
  5. the fusion decisions: why each array that goes through memory was not fused
  6. the kernels: what each computes, its source lines, its cost (bytes, flops,
     transcendentals) and, measured here, its time against the machine's roofline
  7. timing: the compiled function against the same function run eagerly, op by op
  8. where the drawings were written (`<name>.fusion.dot`, and `.svg` when Graphviz's
     `dot` is installed)
`tell(...)` returns a `Story` with the paths written and the profile.
Invariants: the CPU backend compiles what is shown (whatever EMBER_BACKEND says), since the
kernels and their timing are the point; a module the CPU backend cannot compile yet gets
sections 1-4 and a note instead of 5-7. Timings are informative only (best of a few runs
on a possibly shared machine).
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ember.explain.analysis import Analysis, analyze

TIMING_SECONDS = 0.3  # per side of the jit-vs-eager comparison


@dataclass
class Story:
    analysis: Analysis
    drawings: list[str] = field(default_factory=list)
    profile: Any = None
    jit_seconds: float | None = None
    eager_seconds: float | None = None


def _best_time(fn: Callable[[], Any], budget: float = TIMING_SECONDS) -> tuple[float, int]:
    fn()  # warm up: caches, page faults, lazy compiles
    best, runs, t_end = float("inf"), 0, time.perf_counter() + budget
    while runs < 3 or (time.perf_counter() < t_end and runs < 100):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        runs += 1
    return best, runs


def _ms(s: float) -> str:
    return f"{s * 1e3:.3f} ms"


class _Printer:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.n = 0

    def section(self, title: str) -> None:
        self.n += 1
        print(f"\n== {self.n}. {title} ==\n", file=self.stream, flush=True)

    def body(self, text: str, indent: str = "    ") -> None:
        print(textwrap.indent(text.rstrip("\n"), indent, lambda _: True), file=self.stream,
              flush=True)

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)


def _arg_types(analysis: Analysis) -> str:
    return ", ".join(a.str_short() for a in analysis.jaxpr.in_avals)


def tell(f: Callable, *args: Any, out_dir: str, stream: TextIO | None = None,
         profile_kernels: bool = True, **kwargs: Any) -> Story:
    """Print the story of `f(*args, **kwargs)` (see the module docstring)."""
    from ember.explain.kernels import kernels
    from ember.explain.refusals import format_report
    from ember.explain.roofline import concrete_arguments
    from ember.hlo.printer import print_module

    out = _Printer(stream or sys.stdout)
    args, kwargs = concrete_arguments(args, kwargs)
    analysis = analyze(f, *args, **kwargs)
    story = Story(analysis)
    out.line(f"The story of jit({analysis.name}) on ({_arg_types(analysis)}), "
             "as the CPU backend compiles it.")

    out.section("The jaxpr (what ember.make_jaxpr prints)")
    out.body(str(analysis.jaxpr))

    _partitioning(out, f, args, kwargs)

    out.section("HLO before optimization (jit(f).lower(...).as_text())")
    lowered_text = print_module(analysis.lowered.module, mode="display")
    out.body(lowered_text)

    changed = analysis.changed_steps
    out.section(f"Passes that changed the module ({len(changed)} of "
                f"{len(analysis.steps)} pass runs)")
    if analysis.steps and analysis.steps[0].before != print_module(analysis.lowered.module):
        out.line("    (calls to other jitted functions were inlined first)")
    runs: dict[str, int] = {}
    for step in analysis.steps:
        key = f"{step.pipeline}.{step.name}"
        runs[key] = runs.get(key, 0) + 1
        if step in changed:
            out.line(f"    -- {key} (run {runs[key]}) --")
            out.body(step.diff(), "      ")
    if not changed:
        out.line("    none: the lowered module was already as simple as the passes make it")

    out.section("HLO after optimization (jit(f).lower(...).compile().as_text())")
    out.body(print_module(analysis.fused, mode="display"))

    if analysis.executable is None:
        out.section("Kernels")
        out.line(f"    The CPU backend cannot compile this module yet ({analysis.unsupported}); "
                 "it runs on the interpreter, so there are no kernels to show.")
        return story

    out.section("Fusion decisions (why each array that goes through memory was not fused)")
    out.body(format_report(analysis))

    infos = kernels(analysis.executable, analysis.fused)
    out.section(f"Kernels ({len(infos)}), their cost and their time on this machine")
    for k in infos:
        c = k.cost
        out.line(f"    {k.name} ({k.kind}{', threaded' if k.parallel else ''}): "
                 f"{', '.join(op for op in k.ops if op != 'constant')}")
        out.line(f"      cost: {c.get('bytes accessed', 0):.0f} bytes, "
                 f"{c.get('flops', 0):.0f} flops, "
                 f"{c.get('transcendentals', 0):.0f} transcendentals")
        for s in k.source_lines:
            out.line(f"      from {s}")
    if profile_kernels:
        from ember.explain.roofline import profile

        out.line()
        story.profile = profile(f, *args, print_report=False, **kwargs)
        out.body(str(story.profile))

    out.section("Timing: compiled vs the same function run eagerly, op by op")
    _timing(out, story, f, args, kwargs)

    out.section("Drawings")
    _drawings(out, story, out_dir)
    return story


def _partitioning(out: _Printer, f: Callable, args: tuple, kwargs: dict) -> None:
    """For a jit over a mesh: the per-device module, its collectives and the refusals (the
    sections after this one show the whole program on one device)."""
    from ember.api import JitFunction
    from ember.explain.partitioning import collectives
    from ember.spmd._jit import is_for_mesh

    if not (isinstance(f, JitFunction) and is_for_mesh(f, args, kwargs)):
        return
    report = collectives(f, *args, **kwargs)
    out.section("The per-device module (jit(f).lower(...).compile().as_text())")
    out.body(report.module)
    out.section("Collectives, bytes per device, and refusals of the partitioner")
    out.body(str(report))
    out.line("    (the sections below show the whole program compiled for one device)")


def _timing(out: _Printer, story: Story, f: Callable, args: tuple, kwargs: dict) -> None:
    import ember
    from ember.api import JitFunction
    from ember.explain.roofline import example_arguments

    fn = f if isinstance(f, JitFunction) else ember.jit(f)
    exe = story.analysis.executable
    values = example_arguments(fn, args, kwargs) + list(story.analysis.lowered.hidden_consts)
    t_jit, n_jit = _best_time(lambda: exe(*values))

    def eager() -> Any:
        with ember.disable_jit():
            return ember.block_until_ready(fn.fun(*args, **kwargs))

    t_eager, n_eager = _best_time(eager)
    story.jit_seconds, story.eager_seconds = t_jit, t_eager
    out.line(f"    compiled (one native call):    {_ms(t_jit)}  (best of {n_jit})")
    out.line(f"    eager (ember.numpy op by op):  {_ms(t_eager)}  (best of {n_eager})")
    if t_jit > 0:
        out.line(f"    eager / compiled = {t_eager / t_jit:.2f}  (informative only: "
                 "shared machines are noisy)")


def _drawings(out: _Printer, story: Story, out_dir: str) -> None:
    from ember.explain.diagram import fusion_dot
    from ember.explain.graphviz import GraphvizMissing, dot_program, render

    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"{_safe(story.analysis.name)}.fusion")
    dot = fusion_dot(story.analysis)
    with open(stem + ".dot", "w") as fh:
        fh.write(dot)
    story.drawings.append(stem + ".dot")
    out.line(f"    Graphviz source: {os.path.abspath(stem + '.dot')}")
    if dot_program() is None:
        from ember.explain.graphviz import INSTALL_HINT

        out.line(f"    {INSTALL_HINT}")
        return
    try:
        path = render(dot, stem + ".svg")
    except (GraphvizMissing, RuntimeError, OSError) as e:
        out.line(f"    could not draw it: {e}")
        return
    story.drawings.append(path)
    out.line(f"    before/after fusion diagram: {os.path.abspath(path)}")


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
