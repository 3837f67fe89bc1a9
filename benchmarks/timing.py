"""Timing shared by the benchmark scripts: the median of repeated calls after a warm-up."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

# OpenBLAS's and XLA's worker threads (and Ember's) spin-wait on their cores for a while
# after a call; a measurement started sooner shares its cores with them
IDLE_GAP_S = 0.3


def median_ms(fn: Callable[[], object], repeat: int, idle: bool = False) -> float:
    """Median wall time of `fn()` in milliseconds over `repeat` calls (after one warm-up call,
    which also compiles, for JITs). `idle`: first wait IDLE_GAP_S, so the threads of
    whatever ran before have gone to sleep."""
    if idle:
        time.sleep(IDLE_GAP_S)
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e3)
