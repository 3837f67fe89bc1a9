"""Watching a pass pipeline run: hooks called around every leaf pass.

Input: observers installed with `with observing(obs): pipeline.run(module)`. Output: for
each leaf pass (not a PassPipeline or Fix) the pipeline calls `obs.before_pass(module,
pipeline, pass_name)` just before it runs and `obs.after_pass(module, pipeline, pass_name,
changed)` just after (after the checks of EMBER_ENABLE_CHECKS), in the order the passes run.
Invariants: observers are per context (a ContextVar), so a pipeline run on another thread
never reports to this one's observers; observers see the live module and must not mutate
its structure (tagging metadata is fine: printing, canonical text and cache keys ignore
unknown metadata keys). Who uses this: `EMBER_DUMP_TO` (dump.py) and `ember.explain`
(snapshots before fusion, per-pass diffs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Protocol

from ember.hlo.ir import Module


class PassObserver(Protocol):
    def before_pass(self, module: Module, pipeline: str, pass_name: str) -> None: ...

    def after_pass(self, module: Module, pipeline: str, pass_name: str,
                   changed: bool) -> None: ...


_OBSERVERS: ContextVar[tuple[PassObserver, ...]] = ContextVar("ember_pass_observers",
                                                              default=())


@contextlib.contextmanager
def observing(observer: PassObserver) -> Iterator[PassObserver]:
    """Report every leaf pass run inside the block to `observer` (nesting allowed)."""
    token = _OBSERVERS.set((*_OBSERVERS.get(), observer))
    try:
        yield observer
    finally:
        _OBSERVERS.reset(token)


def notify_before(module: Module, pipeline: str, pass_name: str) -> None:
    for obs in _OBSERVERS.get():
        obs.before_pass(module, pipeline, pass_name)


def notify_after(module: Module, pipeline: str, pass_name: str, changed: bool) -> None:
    for obs in _OBSERVERS.get():
        obs.after_pass(module, pipeline, pass_name, changed)
