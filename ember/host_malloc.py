"""glibc's malloc, set so that eager results of a few MB are recycled, not faulted in again.

Input: env `EMBER_MALLOC_TUNING` ("0" leaves the C library's settings alone). Output:
`tune()` (called once by `import ember`) sets two of glibc's `mallopt` parameters and
returns what it did; `TUNED` records it. Other C libraries (musl, macOS, Windows) are left
alone.

Why: eager ops return NumPy arrays, which NumPy takes from malloc. glibc's defaults adapt:
freeing a block that was mmapped raises the mmap threshold to its size (so later blocks of
that size come from the heap) and the trim threshold to twice that. A heap whose top then
holds more free memory than the trim threshold is handed back to the kernel on a `free`,
so the next op faults every page of its result in again: 1 us a page on a VM, 1 ms for a
4 MB result, more than the op itself. Whether a program hits this depends on where its
long-lived allocations happen to sit. Measured (`python -m ember demo`, the eager run of
`a * sin(x) + b` on 1M f32): 8.5 ms with ~3900 page faults per call, 1.5-2 ms with none.

What it sets (it also turns glibc's adaptation off, so both are fixed):
  M_MMAP_THRESHOLD = 32 MB    blocks up to this come from the heap and are reused (glibc's
                              own ceiling for the adaptive threshold); larger ones are
                              still mmapped and returned to the kernel on free
  M_TRIM_THRESHOLD = 128 MB   the heap's top gives memory back to the kernel only beyond
                              this much free memory
Invariant: at most ~128 MB of freed heap stays mapped beyond what glibc would keep; jitted
calls' outputs do not depend on this (they come from Ember's caching allocator).
"""

from __future__ import annotations

import ctypes
import os

from ember.config import config

# mallopt parameter numbers (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 << 20
TRIM_THRESHOLD_BYTES = 128 << 20

TUNED: dict[str, int] = {}


def _is_glibc() -> bool:
    """Whether this process runs on glibc. confstr answers at once; platform.libc_ver()
    reads the Python executable (~2 ms of every `import ember`)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # not POSIX, or not a GNU libc name
        return False


def tune() -> dict[str, int]:
    """Set glibc's thresholds (once); {} where it is not glibc or the user opted out."""
    if TUNED or not config.ember_malloc_tuning:
        return TUNED
    if not _is_glibc():
        return TUNED
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return TUNED
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success
    if mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1:
        TUNED["mmap_threshold"] = MMAP_THRESHOLD_BYTES
    if mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1:
        TUNED["trim_threshold"] = TRIM_THRESHOLD_BYTES
    return TUNED
