"""Pass infrastructure: HloPass, PassPipeline, Fix, OnOpcodes.

Input: a Module, mutated in place. Output: whether anything changed.
Environment (read at each run):
- EMBER_ENABLE_CHECKS=1: run the verifier before the pipeline and after every pass, and
  evaluate the module on seeded random inputs before the outermost pipeline and after
  every pass, raising `DifferentialError` naming the pass whose output values differ
  (bit-exact, float reduce/dot results within a tolerance; expensive modules and modules
  the random generator cannot fill are skipped: see
  `ember.hlo.evaluator.differential`).
- EMBER_DISABLE_PASSES=name,name: skip passes with those names (`disabled_passes`, defined in
  the package's __init__ and re-exported here).
- EMBER_DUMP_TO=dir: after each pass write the module's text (with metadata); file names
  sort in pipeline order (see `dump.py`: inside a jit compilation the pass dumps join that
  module's file set, else `NNNN.<module>.<pipeline>.<pass>.hlo.txt`).
Observers installed with `ember.passes.observe.observing` are told before and after every
leaf pass (ember.explain uses them for per-pass diffs and the module before fusion).
`pipeline.timings` accumulates seconds per pass name.
`OnOpcodes` stands in a pipeline for a pass that can only change modules holding given
opcodes (LICM: a while; transpose folding: a dot; reduction splitting: a reduce): it
imports and runs that pass only for such modules, so a first compile imports only the
passes its program can use (each module ~0.2 ms). Under its pass's name, so disabling,
timings, dumps and observers see the same pipeline.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING

from ember.config import config
from ember.hlo.ir import Module
from ember.hlo.printer import print_module
from ember.hlo.verifier import verify
from ember.passes import disabled_passes
from ember.passes.observe import notify_after, notify_before

if TYPE_CHECKING:
    from ember.hlo.evaluator.differential import Reference

# The outermost checked pipeline's reference values, shared with nested pipelines and Fix.
_REFERENCE: ContextVar[tuple[Module, Reference | None] | None] = ContextVar(
    "ember_pass_reference", default=None)


class HloPass:
    """One transformation; `run` returns True when it changed the module."""

    name = "pass"

    def run(self, module: Module) -> bool:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class OnOpcodes(HloPass):
    """The pass `cls` of module `path` ("ember.passes.licm:LoopInvariantCodeMotion"),
    named `name` as that class is, imported and built on the first module holding one of
    `opcodes` (in any computation); on other modules it would change nothing: False."""

    def __init__(self, name: str, path: str, opcodes: frozenset[str]) -> None:
        self.name = name
        self.path = path
        self.opcodes = opcodes
        self._pass: HloPass | None = None

    def run(self, module: Module) -> bool:
        if not any(c.holds(self.opcodes) for c in module.computations):
            return False
        if self._pass is None:
            import importlib

            mod, cls = self.path.split(":")
            self._pass = getattr(importlib.import_module(mod), cls)()
            assert self._pass.name == self.name, (self._pass.name, self.name)
        return self._pass.run(module)


def _checks_enabled() -> bool:
    return config.ember_enable_checks


def _dump(module: Module, pipeline: str, pass_name: str) -> None:
    if config.ember_dump_to is None:  # dump.dump_dir(), without importing dump.py
        return
    from ember.passes.dump import dump_pass

    dump_pass(module.name, pipeline, pass_name, lambda: print_module(module, metadata=True))


class PassPipeline(HloPass):
    """Runs passes in order (nested pipelines and Fix allowed)."""

    def __init__(self, name: str, passes: Sequence[HloPass]) -> None:
        self.name = name
        self.passes = list(passes)
        self.timings: dict[str, float] = defaultdict(float)

    def run(self, module: Module) -> bool:
        checks = _checks_enabled()
        if not checks:
            return self._run_passes(module, None)
        verify(module)
        with _reference_for(module) as reference:
            return self._run_passes(module, reference)

    def _run_passes(self, module: Module, reference: Reference | None) -> bool:
        disabled = disabled_passes()
        changed = False
        for p in self.passes:
            if p.name in disabled:
                continue
            leaf = not isinstance(p, PassPipeline | Fix)
            if leaf:
                notify_before(module, self.name, p.name)
            t0 = time.perf_counter()
            c = p.run(module)
            self.timings[p.name] += time.perf_counter() - t0
            changed |= c
            if _checks_enabled():
                try:
                    verify(module)
                except Exception as e:
                    raise type(e)(f"after pass {p.name}: {e}") from e
                if leaf and reference is not None:
                    reference.check(module, f"pass {p.name}")
            if leaf:
                _dump(module, self.name, p.name)
                notify_after(module, self.name, p.name, bool(c))
        return changed


class Fix(HloPass):
    """Repeat a pass (or pipeline) until it reports no change, at most max_iterations."""

    def __init__(self, inner: HloPass, max_iterations: int = 25) -> None:
        self.inner = inner
        self.name = f"fix({inner.name})"
        self.max_iterations = max_iterations
        self.iterations = 0
        self.timings: dict[str, float] = defaultdict(float)

    def run(self, module: Module) -> bool:
        changed = False
        self.iterations = 0
        while self.iterations < self.max_iterations:
            self.iterations += 1
            if isinstance(self.inner, PassPipeline):
                c = self.inner.run(module)
            else:
                c = PassPipeline(self.name, [self.inner]).run(module)
            if not c:
                break
            changed = True
        if isinstance(self.inner, PassPipeline):
            self.timings = self.inner.timings
        return changed


@contextlib.contextmanager
def _reference_for(module: Module) -> Iterator[Reference | None]:
    """The reference values of the outermost checked pipeline running on `module`."""
    active = _REFERENCE.get()
    if active is not None and active[0] is module:
        yield active[1]
        return
    from ember.hlo.evaluator.differential import Reference  # passes -> evaluator

    reference = Reference.capture(module)
    token = _REFERENCE.set((module, reference))
    try:
        yield reference
    finally:
        _REFERENCE.reset(token)
