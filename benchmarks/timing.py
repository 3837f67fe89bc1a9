"""Timing shared by the benchmark scripts: medians of repeated calls after a warm-up, one
function at a time or several taking turns."""

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


def interleaved_median_ms(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median ms of each function over `repeat` rounds in which every function runs once
    (after one warm-up call each): a burst of load from another user of a shared machine
    then lands on all of them alike instead of on whichever ran its block of calls then."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: float(np.median(v) * 1e3) for k, v in times.items()}


def interleaved_ms(fns: dict[str, Callable[[], object]], repeat: int,
                   rounds: int = 3) -> dict[str, float]:
    """Median ms of each function: `rounds` rounds in which each function runs a block of
    calls after an idle gap and untimed calls for WARM_UP_S (two at least). Blocks, not
    single calls, take turns: a call right after another library's call would pay for
    that library's threads still spinning on the cores (OpenBLAS's and XLA's do, for a
    while); rounds still spread other users' load over all of them alike."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    per_round = max(1, -(-repeat // rounds))
    for _ in range(rounds):
        for k, fn in fns.items():
            time.sleep(IDLE_GAP_S)  # the previous library's threads stop spinning
            _warm_up(fn)
            for _ in range(per_round):
                t0 = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t0)
    return {k: float(np.median(v) * 1e3) for k, v in times.items()}


# Untimed calls after an idle gap, by time rather than by count: cores that idled run slow
# for a while (clock ramp, the virtual machine's scheduling), which two calls of a 2 ms
# kernel do not cover but two of a 50 ms one do (measured here: a 1.6 ms softmax took
# 2.0-4.7 ms in the calls right after a 0.3-1 s sleep).
WARM_UP_S = 0.1


def _warm_up(fn: Callable[[], object]) -> None:
    t0 = time.perf_counter()
    calls = 0
    while calls < 2 or time.perf_counter() - t0 < WARM_UP_S:
        fn()
        calls += 1
