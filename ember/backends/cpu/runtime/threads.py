"""Threads for large kernels: Ember's own pool (pool.py), called from inside native code.

A thread hop from Python costs tens of microseconds; a pool region a few atomic operations
(and a futex wake per sleeping worker). The generated entry point calls
`ember_parallel_for(chunk, data, extent, T)` for kernels big enough to win (see emitter.py):
the calling thread runs chunks of the kernel's outer loop itself and awake workers take
chunks too, so a worker the OS wakes late never delays the call. Every index is computed
by one chunk call of the same code, so results never depend on the thread count or on which
thread ran which chunk.

Input: env `EMBER_NUM_THREADS` (default: the CPUs this process may run on) or
`set_num_threads(n)`. Output: `NUM_THREADS`, a C int whose address every executable's
pointer table carries (read by native code on each call, so changing it takes effect at
once; 1 runs every kernel inline on the calling thread); `register_symbols(llvm)` makes
`ember_parallel_for` visible to the JIT linker (True), or returns False where the pool
cannot run (then `NUM_THREADS` is pinned to 1 and the emitter splits nothing).
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from ember.backends.cpu.jit.host_symbol import HostSymbol
from ember.backends.cpu.runtime import pool
from ember.config import config

# Below this many elements a kernel runs on one thread. 2^15: measured on 2 idle cores, a
# loop body of 256x256 f32 (65,536 elements) runs in ~7 us, and the warm pool's region costs
# far less: the padded heat stencil's 100 steps 0.74 -> 0.46 ms, red-black Gauss-Seidel's 50
# sweeps 0.91 -> 0.54 ms (2^17 before; 2^14 gained nothing more).
PARALLEL_MIN_ELEMENTS = 1 << 15
MAX_THREADS = pool.MAX_THREADS


def _default_threads() -> int:
    env = config.ember_num_threads
    if env is not None:
        return min(MAX_THREADS, max(1, int(env)))
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return min(MAX_THREADS, max(1, n))


NUM_THREADS = ctypes.c_int32(_default_threads())
NUM_THREADS_ADDRESS = ctypes.addressof(NUM_THREADS)


def _install(llvm: Any) -> bool:
    """Build the pool and bind `ember_parallel_for`; where it cannot run here, pin the
    thread count to 1 (the emitter then splits nothing)."""
    if pool.install(llvm):
        return True
    NUM_THREADS.value = 1
    return False


_POOL = HostSymbol(_install)


def set_num_threads(n: int) -> None:
    """Threads large kernels use from the next call on (1: never go parallel)."""
    if _POOL.bound and not _POOL.result:
        NUM_THREADS.value = 1
    else:
        NUM_THREADS.value = min(MAX_THREADS, max(1, int(n)))


def get_num_threads() -> int:
    return int(NUM_THREADS.value)


def register_symbols(llvm: Any) -> bool:
    """Build the pool (once per process) and tell the JIT linker where
    `ember_parallel_for` is; False where the pool cannot run here."""
    return _POOL.register(llvm)
