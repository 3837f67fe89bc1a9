"""ember.explain's subscriptions to the compile events (ember/compile_events.py).

Input: `install()`, called once by ember/__init__.py (the package top, above both the
compile pipeline and this package). Output: two subscribers that stay quiet unless a flag
asks for them, checked at each event (flags may change at any time):
- each compilation is watched by a `compile_log.CompileWatch` (the EMBER_DEBUG log, its
  jax_log_compiles level 1, the EMBER_DUMP_TO file set) while EMBER_DEBUG >= 1,
  jax_log_compiles or EMBER_DUMP_TO is set;
- each trace-cache miss is reported (`cache_miss.report_cache_miss`) while
  jax_explain_cache_misses is on.
Invariants: this module imports only the event registry, the config and the compiler's
debug level; compile_log.py and cache_miss.py are imported on the first event a flag asks
for (a quiet compile, such as a warm disk-cache hit, imports neither, nor any pass;
cache_miss.py costs ~0.7 ms of a first call).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember import compile_events
from ember.compiler import debug_level
from ember.config import config


def watched() -> bool:
    """Whether a compilation is logged or dumped: EMBER_DEBUG >= 1, jax_log_compiles or
    EMBER_DUMP_TO (what CompileWatch's log level and dump session read)."""
    return (debug_level() >= 1 or bool(config.jax_log_compiles)
            or config.ember_dump_to is not None)


def watch_compilation(closed: Any, name: str) -> Any:
    """A CompileWatch for this compilation when it is logged or dumped, else None."""
    if not watched():
        return None
    from ember.explain.compile_log import CompileWatch

    return CompileWatch(closed, name)


def report_cache_miss(fn: Any, key: tuple, cached_keys: Iterable[tuple]) -> None:
    if not config.jax_explain_cache_misses:
        return
    from ember.explain.cache_miss import report_cache_miss as report

    report(fn, key, cached_keys)


def install() -> None:
    """Subscribe to the compile events (idempotent)."""
    compile_events.add_compile_watcher(watch_compilation)
    compile_events.add_cache_miss_observer(report_cache_miss)
