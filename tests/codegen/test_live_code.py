"""Bounded live code: each executable owns its MCJIT engine, so evicted executables free
their code, and llvmlite's pass managers are freed: compiling 500 distinct modules and
making 1e5 calls grows the resident set by a bounded amount."""

from __future__ import annotations

import gc

import numpy as np

from ember.backends import cpu
from ember.backends.cpu import compiler
from ember.hlo import Builder, Shape


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def _module(c: float):
    b = Builder("m")
    x = b.parameter(Shape("f32", (5,)))
    return b.build(b.multiply(b.add(x, b.broadcast(b.scalar(c, "f32"), (5,), ())), x))


def test_many_modules_and_calls_keep_memory_bounded(monkeypatch):
    # ~6 s: 500 compiles at ~10 ms each. The leaks this guards against cost ~65 KB per
    # module, about 26 MB over the 400 measured (after the first 100 fill the 64-entry
    # cache and warm the allocator), twice the 12 MB bound; without a leak the set grows
    # by ~3 MB (measured), the 1e5 calls included.
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    monkeypatch.setattr(compiler, "CACHE_SIZE", 64)
    cpu.clear_cache()
    x = np.ones(5, np.float32)
    start = None
    exe = None
    for k in range(500):
        exe = cpu.compile(_module(1000.0 + k))
        assert exe(x)[0] == (1001.0 + k)
        if k == 99:
            gc.collect()
            start = _rss_mb()
    for _ in range(100_000):
        exe(x)
    gc.collect()
    assert len(compiler._CACHE) == 64
    assert _rss_mb() - start < 12
