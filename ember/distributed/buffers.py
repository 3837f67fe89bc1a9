"""Result buffers of collectives, reused once the caller has dropped them.

Input: the shape and dtype of a collective's result. Output: `Recycler.empty(shape, dtype)`,
an uninitialized C-contiguous array the caller owns.

Why: a result of 32 MB or more is above the size glibc's malloc recycles (ember/host_malloc.py
keeps blocks up to 32 MB on the heap), so each fresh one is mmapped and every page faults in
on the first write, 8192 faults for 32 MB: a 32 MB all-reduce took 73 ms instead of 61 ms
(mpi4py writing into one preallocated buffer). So results of 1 MB and more come from a few
kept byte buffers, each handed out again only when nothing outside this pool refers to it
(`sys.getrefcount`: an array the caller still holds, or a view of it, keeps its buffer
referenced), so a result never changes behind the caller's back. Smaller ones come from
`np.empty` (malloc reuses those).
Invariants: at most `keep` buffers are kept; a buffer the caller still refers to is never
handed out twice.
"""

from __future__ import annotations

import math
import sys

import numpy as np

MIN_BYTES = 1 << 20


class Recycler:
    """A few large byte buffers, reused when free (see the module docstring)."""

    def __init__(self, keep: int = 4) -> None:
        self._keep = keep
        self._pool: list[np.ndarray] = []

    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """An uninitialized array of `shape` and `dtype`."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize  # (np.prod: microseconds)
        if nbytes < MIN_BYTES:
            return np.empty(shape, dtype)
        pool = self._pool
        for buf in pool:  # (not enumerate: its reused tuple would hold a reference)
            # references: the pool's list, `buf`, getrefcount's argument; any more is a
            # result (or a view of one) still alive
            if buf.nbytes == nbytes and sys.getrefcount(buf) == 3:
                return buf.view(dtype).reshape(shape)
        fresh = np.empty(nbytes, np.uint8)
        if len(pool) >= self._keep:  # (forget a free buffer, else the oldest one)
            free = [j for j, b in enumerate(pool) if sys.getrefcount(b) == 3]
            del pool[free[0] if free else 0]
        pool.append(fresh)
        return fresh.view(dtype).reshape(shape)
