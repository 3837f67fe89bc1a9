"""A process-wide bound on the signatures that jitted functions keep traced and compiled.

Input: each jitted function's trace-cache insertions (`admit(fn, key)`) and slow-path hits
(`touch(fn, key)`). Output: while more than `config.ember_jit_cache_size` signatures
(env EMBER_JIT_CACHE_SIZE, default 512) are cached across all jitted functions, the least
recently used is dropped from its function's cache (`fn._forget(key)`: the trace and its
fast path), so its jaxpr, HLO and executable are freed once nothing else references them.

Why: every executable owns its MCJIT engine, which keeps the native code for as long as
the executable lives (~85 KB for a small elementwise function, measured by
benchmarks/fault_memory.py). The CPU compiler's own LRU (`CACHE_SIZE` executables) frees
only what nothing else holds, and a jitted function's trace cache held every signature it
ever saw: 2000 shapes of one function kept 2000 engines (~170 MB). JAX bounds its jit
caches the same way (LRU caches of a few thousand entries).

Invariants:
- At most the bound's number of signatures stay cached (keys of dead functions are removed
  by a weakref callback, so they take no room).
- A dropped signature called again is traced again and compiled, which the CPU compiler's
  in-memory LRU or the disk cache usually answer without LLVM: results never change.
- A signature that is its function's current fast path (the one repeated calls take, which
  do not report here) is spared once when it is the oldest: a hot loop does not lose its
  fast path because other functions compiled many shapes meanwhile.
- Thread-safe: one lock around the order; functions are told to forget outside it.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any

from ember.config import config

# (id(fn), key) of every cached signature, least recently used first (values unused)
_ORDER: OrderedDict[tuple[int, Any], None] = OrderedDict()
# id(fn) -> (weak reference to fn, its keys in _ORDER); the reference's callback queues the
# id in _DEAD, processed under the lock (a collection may run the callback inside it)
_FNS: dict[int, tuple[weakref.ref, set]] = {}
_DEAD: list[weakref.ref] = []
_LOCK = threading.Lock()
STATS: dict[str, int] = {"admitted": 0, "dropped": 0}


def limit() -> int:
    return max(1, int(config.ember_jit_cache_size))


def admit(fn: Any, key: Any) -> None:
    """`fn` cached a new signature `key`; drop the least recently used beyond the bound."""
    fid = id(fn)
    drop: list[tuple[Any, Any]] = []
    with _LOCK:
        _reap()
        rec = _FNS.get(fid)
        if rec is not None and rec[0]() is not fn:  # (an id reused: the old one died)
            _remove(fid)
            rec = None
        if rec is None:
            rec = _FNS[fid] = (weakref.ref(fn, _DEAD.append), set())
        rec[1].add(key)
        _ORDER[(fid, key)] = None
        _ORDER.move_to_end((fid, key))
        STATS["admitted"] += 1
        bound, spared = limit(), 0
        while len(_ORDER) > bound:
            ofid, okey = next(iter(_ORDER))
            owner = _FNS[ofid][0]()
            if owner is not None and spared < len(_ORDER) and (ofid, okey) != (fid, key) \
                    and owner._is_fast_path(okey):
                _ORDER.move_to_end((ofid, okey))
                spared += 1
                continue
            del _ORDER[(ofid, okey)]
            _FNS[ofid][1].discard(okey)
            STATS["dropped"] += 1
            if owner is not None:
                drop.append((owner, okey))
    for owner, okey in drop:  # (outside the lock: forgetting frees executables)
        owner._forget(okey)


def touch(fn: Any, key: Any) -> None:
    """`fn`'s signature `key` was used again (a trace-cache hit on the slow path)."""
    with _LOCK:
        k = (id(fn), key)
        if k in _ORDER:
            _ORDER.move_to_end(k)


def forget_all(fn: Any) -> None:
    """`fn` cleared its cache: its keys no longer count."""
    with _LOCK:
        _reap()
        rec = _FNS.get(id(fn))
        if rec is not None and rec[0]() is fn:
            _remove(id(fn))


def live() -> int:
    """Signatures cached across all jitted functions."""
    with _LOCK:
        _reap()
        return len(_ORDER)


def _reap() -> None:
    """Remove the keys of functions that died (lock held)."""
    while _DEAD:
        ref = _DEAD.pop()
        for fid, rec in list(_FNS.items()):
            if rec[0] is ref:
                _remove(fid)
                break


def _remove(fid: int) -> None:
    _, keys = _FNS.pop(fid)
    for key in keys:
        _ORDER.pop((fid, key), None)
