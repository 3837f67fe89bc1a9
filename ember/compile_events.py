"""Compile events: what the jit pipeline tells whoever watches it.

Input: subscriptions, registered once per process with `add_compile_watcher(factory)` and
`add_cache_miss_observer(observer)`; ember/__init__.py installs ember.explain's (the
EMBER_DEBUG / jax_log_compiles log, the EMBER_DUMP_TO file sets, the
jax_explain_cache_misses report: ember/explain/observers.py).
Output: the events, emitted by the layers below the reporting one:
- `cache_miss(fn, key, cached_keys)`: a jitted function's trace cache missed (ember/api.py,
  before it traces; `key` is the missing key, `cached_keys` those already cached);
- `watch_compilation(closed, name)`: one compilation of a jaxpr is about to run
  (ember/compiler.py); each factory returns a `CompilationWatch` for it, or None when its
  subscriber does not care about this one. The compiler enters the watch around the
  compilation and reports the stages to it: `did_lower(lowered)`, then
  `did_compile(compiled)`. While it is entered, every leaf pass is also reported to
  whoever ember/passes/observe.py's `observing` installed (the watch may install itself).
Invariants:
- The emitters import nothing from the subscribers (ember/compiler.py and ember/api.py
  never import ember.explain: tests/unit/test_layering.py).
- Events fire only on slow paths (a trace-cache miss, a compile), never on a cached call;
  with no subscriber an event costs a loop over an empty tuple.
- A subscriber decides per event whether it cares (its flags may change at any time) and
  does so cheaply, importing nothing when it does not: a quiet compile, such as a fresh
  process's warm disk-cache hit, imports none of ember.explain's modules beyond the
  subscription itself.
- Subscriptions are process-wide (the flags they follow are), unlike pass observers, which
  are per context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (a Protocol class costs ~0.1 ms of `import ember`; types only)
    from types import TracebackType
    from typing import Protocol

    class CompilationWatch(Protocol):
        """One watched compilation (see the module docstring for the order of the calls)."""

        @property
        def bypass_caches(self) -> bool:
            """True to compile without the backend's caches (so every pass runs: dumps)."""
            ...

        def __enter__(self) -> Any: ...

        def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                     tb: TracebackType | None) -> Any: ...

        def did_lower(self, lowered: Any) -> None: ...

        def did_compile(self, compiled: Any) -> None: ...


# (closed jaxpr, function name) -> a watch, or None
WatchFactory = Callable[[Any, str], Any]  # CompilationWatch | None
# (JitFunction, missing key, cached keys) -> None
CacheMissObserver = Callable[[Any, tuple, Iterable[tuple]], None]

_WATCH_FACTORIES: tuple[WatchFactory, ...] = ()
_CACHE_MISS_OBSERVERS: tuple[CacheMissObserver, ...] = ()


def add_compile_watcher(factory: WatchFactory) -> None:
    """Subscribe `factory` to every compilation (once: adding it again does nothing)."""
    global _WATCH_FACTORIES
    if factory not in _WATCH_FACTORIES:
        _WATCH_FACTORIES = (*_WATCH_FACTORIES, factory)


def remove_compile_watcher(factory: WatchFactory) -> None:
    global _WATCH_FACTORIES
    _WATCH_FACTORIES = tuple(f for f in _WATCH_FACTORIES if f != factory)


def add_cache_miss_observer(observer: CacheMissObserver) -> None:
    """Subscribe `observer` to every trace-cache miss of a jitted function (once)."""
    global _CACHE_MISS_OBSERVERS
    if observer not in _CACHE_MISS_OBSERVERS:
        _CACHE_MISS_OBSERVERS = (*_CACHE_MISS_OBSERVERS, observer)


def remove_cache_miss_observer(observer: CacheMissObserver) -> None:
    global _CACHE_MISS_OBSERVERS
    _CACHE_MISS_OBSERVERS = tuple(o for o in _CACHE_MISS_OBSERVERS if o != observer)


def cache_miss(fn: Any, key: tuple, cached_keys: Iterable[tuple]) -> None:
    """Tell the observers that `fn`'s trace cache has no entry for `key`."""
    for observer in _CACHE_MISS_OBSERVERS:
        observer(fn, key, cached_keys)


def watch_compilation(closed: Any, name: str) -> CompilationWatch | None:
    """The watch of the compilation of `closed` about to run, or None when nobody watches
    it (the common case: the compiler then reports nothing)."""
    watches = []
    for factory in _WATCH_FACTORIES:
        watch = factory(closed, name)
        if watch is not None:
            watches.append(watch)
    if not watches:
        return None
    return watches[0] if len(watches) == 1 else _Watches(watches)


class _Watches:
    """Several subscribers' watches of one compilation, told in subscription order."""

    def __init__(self, watches: list[CompilationWatch]) -> None:
        self.watches = watches
        self._entered: list[CompilationWatch] = []

    @property
    def bypass_caches(self) -> bool:
        return any(w.bypass_caches for w in self.watches)

    def __enter__(self) -> _Watches:
        try:
            for w in self.watches:
                w.__enter__()
                self._entered.append(w)
        except BaseException as e:  # leave the ones already entered
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        while self._entered:  # innermost first, as nested `with` blocks would
            self._entered.pop().__exit__(exc_type, exc, tb)

    def did_lower(self, lowered: Any) -> None:
        for w in self.watches:
            w.did_lower(lowered)

    def did_compile(self, compiled: Any) -> None:
        for w in self.watches:
            w.did_compile(compiled)
