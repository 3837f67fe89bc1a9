"""What this machine can do: measured memory bandwidth and peak compute, cached on disk.

Input: nothing (the host, the number of threads Ember's kernels use). Output: `machine()` ->
`Machine(bandwidth, peak_flops_f32, threads, ...)`, the ceilings of a roofline.
- Memory bandwidth: a STREAM-style triad `a = b + 3 * c` over `TRIAD_BYTES` (>= 200 MB
  across the three f32 arrays, far more than any cache), compiled by Ember's own CPU
  backend (so it uses the same threads as Ember's kernels) and timed per kernel with the
  instrumented build (`backends/cpu/profiling/profile.py`): bytes = 3 * n * 4 (read b and c, write
  a; the write-allocate read STREAM does not count is not counted either); the best of
  several runs.
- Peak compute: `backends/cpu/peak.py`'s FMA loop (12-16 independent vector FMA chains, no
  memory traffic) on one thread, best of three, times the thread count; f64 peak = f32
  peak / 2 (half the lanes per vector).
Cache: `machine.json` in Ember's cache directory (`EMBER_CACHE_DIR`, default
`~/.cache/ember`; "off" keeps it in memory), keyed by the target (triple, CPU, features,
LLVM version) and the thread count. Written atomically; an unreadable file is remeasured.
A measurement taken while other processes keep the CPUs busy (load average above the CPU
count minus one) is kept in memory only, so a noisy moment is not remembered for good.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

TRIAD_BYTES = 216_000_000  # 3 arrays of 18M f32: well past any L3
MEASUREMENTS = {"count": 0}  # how many times this process measured (tests read it)
_MEMORY: dict[str, Machine] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Machine:
    bandwidth: float        # bytes per second, triad, `threads` threads
    peak_flops_f32: float   # flop/s over `threads` threads (an FMA counts 2)
    threads: int            # 0 on an accelerator (its peak is the matrix unit's)
    target: str
    triad_bytes: int

    def peak_flops(self, dtype: Any = np.float32) -> float:
        """Peak flop/s for arithmetic on `dtype` (f64: half the f32 lanes)."""
        return self.peak_flops_f32 / 2 if np.dtype(dtype).itemsize >= 8 else self.peak_flops_f32

    def __str__(self) -> str:
        if self.threads == 0:  # (an accelerator: ember/explain/device_roofline.py)
            return (f"{self.bandwidth / 1e9:.1f} GB/s memory bandwidth (triad over "
                    f"{self.triad_bytes / 1e6:.0f} MB), {self.peak_flops_f32 / 1e12:.1f} "
                    f"TFLOP/s peak (bf16 product) on {self.target}")
        return (f"{self.bandwidth / 1e9:.1f} GB/s memory bandwidth (triad over "
                f"{self.triad_bytes / 1e6:.0f} MB), {self.peak_flops_f32 / 1e9:.0f} GFLOP/s "
                f"f32 peak, {self.threads} thread{'s' if self.threads != 1 else ''}")


def _triad(b: Any, c: Any) -> Any:
    return b + 3.0 * c


def measure_bandwidth(triad_bytes: int = TRIAD_BYTES, runs: int = 10) -> float:
    """Bytes per second of the triad kernel over `triad_bytes` (best of `runs`)."""
    import ember
    from ember.backends.cpu.profiling.profile import compile_profiled

    n = max(triad_bytes // 12, 1)
    spec = ember.ShapeDtypeStruct((n,), np.float32)
    module = ember.jit(_triad).lower(spec, spec)._lowered.module
    prof = compile_profiled(module)
    b = np.full(n, 1.0, np.float32)
    c = np.full(n, 2.0, np.float32)
    best = float("inf")
    for k in range(runs + 1):
        out, times = prof.run(b, c)
        del out  # the caching allocator recycles it: no page faults on the next run
        if k:  # the first run faults the output's pages in
            best = min(best, sum(times))
    return 3 * n * 4 / best


def measure_peak_flops(threads: int, seconds: float = 0.05) -> float:
    """f32 flop/s of the FMA kernel: one thread's best of three runs, times `threads`.

    One thread at a time, because on a shared machine running every thread at once
    measures the neighbours' load rather than the hardware; cores of one machine are alike
    (logical CPUs sharing a core would overstate it: set EMBER_NUM_THREADS to the cores)."""
    from ember.backends.cpu.profiling.peak import fma_kernel

    kernel = fma_kernel()
    iters = 10_000
    while True:  # calibrate: one call should take about `seconds`
        t0 = time.perf_counter()
        kernel.fn(iters)
        dt = time.perf_counter() - t0
        if dt > seconds / 4 or iters > 1 << 40:
            break
        iters *= 4
    iters = max(int(iters * seconds / max(dt, 1e-9)), 1)
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        kernel.fn(iters)
        best = max(best, iters * kernel.flops_per_iter / (time.perf_counter() - t0))
    return best * threads


def busy() -> tuple[float, int] | None:
    """(load average, CPUs) when other processes keep this machine's CPUs busy, else None."""
    try:
        load = os.getloadavg()[0]
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    return (load, cpus) if load > max(cpus - 1, 0.5) else None


def _cache_file() -> str | None:
    from ember.backends.cpu.jit.disk_cache import cache_dir

    d = cache_dir()
    return None if d is None else os.path.join(str(d), "machine.json")


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _store(path: str, key: str, m: Machine) -> None:
    data = _load(path)
    data[key] = asdict(m)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".machine-")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def machine(*, refresh: bool = False, triad_bytes: int = TRIAD_BYTES) -> Machine:
    """This machine's measured ceilings (measured once per target and thread count)."""
    from ember.backends.cpu import get_num_threads
    from ember.backends.cpu.jit.llvm_target import target

    threads = get_num_threads()
    key = f"{target().key}|threads={threads}|triad={triad_bytes}"
    with _LOCK:
        if not refresh and key in _MEMORY:
            return _MEMORY[key]
        path = _cache_file()
        if not refresh and path is not None:
            found = _load(path).get(key)
            try:
                if found is not None:
                    _MEMORY[key] = Machine(**found)
                    return _MEMORY[key]
            except TypeError:
                pass  # written by another version: measure again
        MEASUREMENTS["count"] += 1
        m = Machine(measure_bandwidth(triad_bytes), measure_peak_flops(threads), threads,
                    target().key, triad_bytes)
        _MEMORY[key] = m
        if path is not None and busy() is None:  # a busy machine's numbers are not kept
            try:
                _store(path, key, m)
            except OSError:
                pass  # a read-only cache directory: keep the measurement in memory
        return m
