"""A size-keyed caching allocator for the outputs and temporaries of compiled executables.

Why: writing a fresh 40 MB output costs about 10 ms of page faults (glibc hands blocks
above its mmap threshold back to the kernel on free, so every call faults its output in
again). Reusing a block the user has dropped costs nothing.

Input: requests for `nbytes` (outputs: `empty(dims, dtype)`; temporaries: `take(nbytes)` and
`give_back(block)`). Output: NumPy arrays viewing 64-byte aligned blocks. Blocks are NumPy
arrays themselves (so large ones get NumPy's huge-page advice) over-allocated by 64 bytes.
Requests below `MIN_BYTES` bypass the pool: malloc recycles small blocks without faults.

Invariants:
- A block handed to the user as an output is reused only once nothing references it: every
  view NumPy makes of an output (slices, reshapes, `.base`) keeps a reference to the block
  array, so its reference count falls back to the pool's own only when all are gone. A
  result is therefore never written while the user can still see it.
- Free blocks are bounded in bytes (`limit_bytes`, env `EMBER_ALLOCATOR_BYTES`, default
  1 GiB); blocks idle for `IDLE_S` seconds are released by a daemon timer.
- Thread-safe: one lock around the pool's lists (no native code runs under it).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np

from ember.config import config

MIN_BYTES = 1 << 18  # below this, np.empty is as fast and pays no page faults
ALIGN = 64
IDLE_S = 5.0
MAX_TRACKED = 16  # handed-out blocks watched per size; older ones become plain arrays
# references to a block's array while only the pool holds it: the `_Block.arr` slot and
# getrefcount's own argument (each output array or view of it adds one, through `.base`)
_POOL_REFS = 2


def _round(nbytes: int) -> int:
    return (nbytes + 4095) // 4096 * 4096


class _Block:
    """A pooled allocation: the owning array and the aligned offset into it."""

    __slots__ = ("arr", "off", "last_used")

    def __init__(self, size: int) -> None:
        self.arr = np.empty(size + ALIGN, np.uint8)
        self.off = (-self.arr.__array_interface__["data"][0]) % ALIGN
        self.last_used = time.monotonic()

    @property
    def address(self) -> int:
        return self.arr.__array_interface__["data"][0] + self.off


class Allocator:
    def __init__(self, limit_bytes: int | None = None) -> None:
        if limit_bytes is None:
            limit_bytes = config.ember_allocator_bytes
        self.limit_bytes = limit_bytes
        self._free: dict[int, list[_Block]] = {}
        self._out: dict[int, list[_Block]] = {}
        self._held = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.stats = {"hits": 0, "misses": 0, "recycled": 0, "trimmed": 0}

    # -- requests --------------------------------------------------------------------------

    def empty(self, dims: Sequence[int], dtype: np.dtype) -> np.ndarray:
        """An uninitialized output array; recycled once every reference to it is gone."""
        # (math.prod: exact Python ints, and np.prod's first call in a process costs ~0.1 ms)
        nbytes = math.prod(dims) * dtype.itemsize
        if nbytes < MIN_BYTES:
            return np.empty(dims, dtype)
        size = _round(nbytes)
        with self._lock:
            blk = self._pop_free(size) or self._scan(size)
            if blk is None:
                self.stats["misses"] += 1
                blk = _Block(size)
            tracked = self._out.setdefault(size, [])
            tracked.append(blk)
            if len(tracked) > MAX_TRACKED:
                del tracked[0]  # the user keeps many: stop watching the oldest
        return np.ndarray(tuple(dims), dtype, buffer=blk.arr, offset=blk.off)

    def take(self, nbytes: int) -> _Block | None:
        """A temporary block (returned with `give_back`); None for small requests."""
        if nbytes < MIN_BYTES:
            return None
        size = _round(nbytes)
        with self._lock:
            blk = self._pop_free(size) or self._scan(size)
            if blk is None:
                self.stats["misses"] += 1
                blk = _Block(size)
        return blk

    def give_back(self, blk: _Block) -> None:
        with self._lock:
            self._push_free(len(blk.arr) - ALIGN, blk)
        self._arm_timer()

    # -- bookkeeping (lock held) --------------------------------------------------------------

    def _pop_free(self, size: int) -> _Block | None:
        lst = self._free.get(size)
        if not lst:
            return None
        blk = lst.pop()
        self._held -= size
        self.stats["hits"] += 1
        return blk

    def _scan(self, size: int) -> _Block | None:
        """A handed-out block of `size` that nothing references any more."""
        tracked = self._out.get(size)
        if not tracked:
            return None
        for k, blk in enumerate(tracked):
            if sys.getrefcount(blk.arr) <= _POOL_REFS:
                del tracked[k]
                self.stats["hits"] += 1
                self.stats["recycled"] += 1
                return blk
        return None

    def _push_free(self, size: int, blk: _Block) -> None:
        if self._held + size > self.limit_bytes:
            return  # over the bound: let NumPy free it
        blk.last_used = time.monotonic()
        self._free.setdefault(size, []).append(blk)
        self._held += size

    def _collect_dropped(self) -> None:
        """Move handed-out blocks nobody references into the free lists."""
        for size, tracked in self._out.items():
            keep = []
            for blk in tracked:
                if sys.getrefcount(blk.arr) <= _POOL_REFS:
                    self._push_free(size, blk)
                else:
                    keep.append(blk)
            tracked[:] = keep

    # -- trimming -------------------------------------------------------------------------------

    def trim(self, idle_s: float = 0.0) -> int:
        """Release free blocks idle for at least `idle_s` seconds; returns bytes released."""
        released = 0
        with self._lock:
            self._collect_dropped()
            now = time.monotonic()
            for size, lst in self._free.items():
                keep = [b for b in lst if now - b.last_used < idle_s]
                released += size * (len(lst) - len(keep))
                lst[:] = keep
            self._held -= released
            if released:
                self.stats["trimmed"] += released
        return released

    def _arm_timer(self) -> None:
        if self._timer is not None:
            return
        self._timer = threading.Timer(IDLE_S, self._on_timer)
        self._timer.daemon = True
        self._timer.start()

    def _on_timer(self) -> None:
        self._timer = None
        self.trim(IDLE_S)
        if self._held or any(self._out.values()):
            self._arm_timer()

    def pool_refs(self, arr: np.ndarray) -> int:
        """References the pool itself holds to `arr` (1 for a handed-out block it still
        watches, else 0): what ember/donation.py discounts when it counts holders."""
        with self._lock:
            return sum(1 for tracked in self._out.values() for blk in tracked if blk.arr is arr)

    def bytes_held(self) -> int:
        with self._lock:
            return self._held

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            outstanding = sum(size * len(t) for size, t in self._out.items())
            return {**self.stats, "bytes_held": self._held,
                    "bytes_outstanding": outstanding, "limit_bytes": self.limit_bytes}


ALLOCATOR = Allocator()
