"""Timing shared by the benchmark scripts: the median of repeated calls after a warm-up."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of `fn()` in milliseconds over `repeat` calls (after one warm-up call,
    which also compiles, for JITs)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e3)
