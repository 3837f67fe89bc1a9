"""What a process holds in memory, three ways, for the fault tests and benchmarks/fault_memory.py.

Input: nothing (reads this process). Output: `snapshot()` -> {"rss": resident bytes,
"malloc": bytes the C library's malloc has handed out and not had back (glibc's
`mallinfo2`: in-use heap blocks plus mmapped ones; -1 where there is no such call),
"blocks": Python's allocated object blocks (`sys.getallocatedblocks`)}, after a full
garbage collection.

Why three: a leak shows in whichever is exact for it. Resident pages move in 4 KB steps
and only once an allocator maps a new page, so a 100-byte leak per call needs ~10^4 calls
to show there; malloc's count is exact to the byte (NumPy's data, LLVM's heap), and the
block count is exact to the object (a Python object kept per call adds one per call). The
native code MCJIT maps is counted in the resident set only.
Invariant: Linux only for "rss" (/proc/self/statm); elsewhere it is -1.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
           "uordblks", "fordblks", "keepcost")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS]


_MALLINFO2: object = None


def _mallinfo2() -> object:
    """glibc's mallinfo2 (glibc >= 2.33; its older mallinfo wraps at 2 GB), or False."""
    global _MALLINFO2
    if _MALLINFO2 is None:
        try:
            fn = ctypes.CDLL(None).mallinfo2
            fn.restype = _Mallinfo2
            fn.argtypes = []
            _MALLINFO2 = fn
        except (OSError, AttributeError):
            _MALLINFO2 = False
    return _MALLINFO2


def rss_bytes() -> int:
    """The resident set of this process in bytes (-1 off Linux)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return -1


def malloc_bytes() -> int:
    """Bytes malloc has handed out and not had back (-1 where glibc's count is missing)."""
    fn = _mallinfo2()
    if not fn:
        return -1
    info = fn()
    return int(info.uordblks + info.hblkhd)


def snapshot() -> dict[str, int]:
    gc.collect()
    return {"rss": rss_bytes(), "malloc": malloc_bytes(), "blocks": sys.getallocatedblocks()}


def growth(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """after - before, per measure (-1 where either side could not measure it)."""
    return {k: (after[k] - before[k] if before[k] >= 0 and after[k] >= 0 else -1)
            for k in before}
