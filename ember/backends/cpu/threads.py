"""Threads for large kernels: libgomp's `GOMP_parallel`, called from inside native code.

A thread hop from Python costs tens of microseconds; a GOMP region about one. The generated
entry point calls `GOMP_parallel(worker, data, nthreads, 0)` for kernels big enough to win,
and the worker of each thread runs a static slice of the kernel's outer loop (see
emitter.py), so results never depend on the thread count.

Input: env `EMBER_NUM_THREADS` (default: the CPUs this process may run on) or
`set_num_threads(n)`. Output: `NUM_THREADS`, a C int whose address every executable's
pointer table carries (read by native code on each call, so changing it takes effect at
once); `register_symbols(llvm)` makes the libgomp entry points visible to the JIT linker.
Without libgomp every kernel runs on the calling thread (`NUM_THREADS` is pinned to 1).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

PARALLEL_MIN_ELEMENTS = 1 << 17  # below this a kernel runs in well under a region's cost x 10
GOMP_SYMBOLS = ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads")


def _default_threads() -> int:
    env = os.environ.get("EMBER_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


NUM_THREADS = ctypes.c_int32(_default_threads())
NUM_THREADS_ADDRESS = ctypes.addressof(NUM_THREADS)
_LOCK = threading.Lock()
_REGISTERED: bool | None = None


def set_num_threads(n: int) -> None:
    """Threads large kernels use from the next call on (1: never go parallel)."""
    NUM_THREADS.value = max(1, int(n)) if _REGISTERED is not False else 1


def get_num_threads() -> int:
    return int(NUM_THREADS.value)


def register_symbols(llvm: Any) -> bool:
    """Load libgomp and tell the JIT linker where its entry points are; False if absent."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED is None:
            try:
                lib = ctypes.CDLL("libgomp.so.1")
                for name in GOMP_SYMBOLS:
                    llvm.add_symbol(name, ctypes.cast(getattr(lib, name), ctypes.c_void_p).value)
                _REGISTERED = True
            except (OSError, AttributeError):
                _REGISTERED = False
                NUM_THREADS.value = 1
        return _REGISTERED
