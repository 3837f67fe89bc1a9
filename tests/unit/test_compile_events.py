"""ember.compile_events: the compile path's events reach subscribers, in order, and cost
nothing when nobody subscribes (see the module docstring)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import compile_events


class Watch:
    def __init__(self, log: list, tag: str, bypass: bool = False) -> None:
        self.log, self.tag, self.bypass_caches = log, tag, bypass

    def __enter__(self):
        self.log.append((self.tag, "enter"))
        return self

    def __exit__(self, *exc):
        self.log.append((self.tag, "exit"))

    def did_lower(self, lowered):
        self.log.append((self.tag, "lowered", lowered.module.name))

    def did_compile(self, compiled):
        self.log.append((self.tag, "compiled", compiled.backend))


@pytest.fixture
def subscribed():
    added: list = []

    def add(kind: str, fn) -> None:
        getattr(compile_events, f"add_{kind}")(fn)
        added.append((kind, fn))

    yield add
    for kind, fn in added:
        getattr(compile_events, f"remove_{kind}")(fn)


def test_compilation_stages_reach_every_watcher_in_order(subscribed):
    log: list = []
    subscribed("compile_watcher", lambda closed, name: Watch(log, "a"))
    subscribed("compile_watcher", lambda closed, name: None)  # not interested
    subscribed("compile_watcher", lambda closed, name: Watch(log, "b"))
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(ember.jit(lambda v: v * 3 + 1)(x)), x * 3 + 1)
    assert [e[:2] for e in log] == [("a", "enter"), ("b", "enter"), ("a", "lowered"),
                                    ("b", "lowered"), ("a", "compiled"), ("b", "compiled"),
                                    ("b", "exit"), ("a", "exit")]


def test_a_watch_can_bypass_the_caches(subscribed):
    from ember.backends import cpu

    f = lambda v: v * 5 - 2  # noqa: E731
    x = np.arange(6, dtype=np.float32)
    ember.jit(f).lower(x).compile()
    log: list = []
    subscribed("compile_watcher", lambda closed, name: Watch(log, "a", bypass=True))
    before = cpu.cache_stats()["cache_hits"]
    ember.jit(f).lower(x).compile()
    assert cpu.cache_stats()["cache_hits"] == before
    assert ("a", "compiled", "cpu") in log


def test_cache_misses_reach_observers(subscribed):
    seen: list = []
    subscribed("cache_miss_observer", lambda fn, key, keys: seen.append((fn, len(list(keys)))))
    f = ember.jit(lambda v: v + 1)
    f(np.ones(3, np.float32))
    f(np.ones(3, np.float32))  # a hit: nothing
    f(np.ones(4, np.float32))
    assert seen == [(f, 0), (f, 1)]


def test_subscribing_twice_subscribes_once(subscribed):
    seen: list = []

    def observer(fn, key, keys):
        seen.append(fn)

    subscribed("cache_miss_observer", observer)
    compile_events.add_cache_miss_observer(observer)
    compile_events.cache_miss("f", (), [])
    assert seen == ["f"]


def test_explain_is_subscribed_by_the_package():
    from ember.explain import observers

    assert observers.watch_compilation in compile_events._WATCH_FACTORIES
    assert observers.report_cache_miss in compile_events._CACHE_MISS_OBSERVERS
