"""Donated arguments: may a compiled call write its output into this Array's memory?

Input: an `ember.Array` passed in a donated position (`jit(..., donate_argnums=...)`).
Output: `exclusive_value(x)`: its C-contiguous NumPy buffer when nothing but `x` can see
that memory, else None. The compiled call then writes an aliased output (cpu
RuntimeSpec `aliases`) into that buffer and `x` is deleted; with None, the runtime copies
the value first, so the caller's data is never written (XLA's CPU client does the same:
a donated buffer with external references is not reused).

Who else might see the memory: a NumPy array the user got from `np.asarray(x)` (the
same object, or a view of it), views of it (`.base`), another Array sharing it (eager
views), a traced program's constants, the caching allocator's pool (allocator.py), or
memory NumPy does not own (a user's buffer). Every one of them holds a reference to the
buffer's array or to the array owning its memory, so counting references finds them:
the counts must equal exactly the holders this module knows of. Counts are compared with
a probe array referenced the same way, so the interpreter's own bookkeeping (the argument
of `sys.getrefcount`, locals) cancels out.
"""

from __future__ import annotations

import sys

import numpy as np

from ember.array import ArrayImpl


def _probe_count() -> int:
    """References `sys.getrefcount` reports for an array held by one local only."""
    probe = np.empty(1)
    return sys.getrefcount(probe)


def exclusive_value(x: object) -> np.ndarray | None:
    """`x`'s buffer when `x` alone references it (see the module docstring)."""
    if type(x) is not ArrayImpl or x._deleted:
        return None
    v = x._value
    if type(v) is not np.ndarray or not (v.flags.c_contiguous and v.flags.aligned):
        return None
    cached = x._cval
    if cached is not None and cached is not v:
        return None  # a second buffer derived from it: keep the rule simple
    # holders of v besides this frame's `v`: x._value, and x._cval when it is v
    holders = 1 + (cached is v)
    del cached
    if sys.getrefcount(v) - _probe_count() != holders:
        return None
    return _owned_memory(v)


def exclusive_shard(x: object, device: object) -> np.ndarray | None:
    """The buffer of `x`'s shard on `device` (x a sharded Array passed in a donated
    position) when nothing but that shard references it: not another device's shard (a
    replicated array may share one buffer), not the assembled value, not a user's view."""
    from ember.sharding._array import ShardedArray

    if type(x) is not ShardedArray or x._deleted:
        return None
    v = x._shards.get(device)
    if type(v) is not np.ndarray or not (v.flags.c_contiguous and v.flags.aligned):
        return None
    # holders besides this frame's `v`: the shard table, and x._value / x._cval when v
    holders = 1 + (x._value is v) + (x._cval is v)
    if sys.getrefcount(v) - _probe_count() != holders:
        return None
    return _owned_memory(v)


def _owned_memory(v: np.ndarray) -> np.ndarray | None:
    """`v` (referenced only by its known holders) when no one else can reach its memory
    either: it owns it, or its owner is an allocator block nobody else holds."""
    owner = v.base
    if owner is None:
        return v  # v owns its memory: every view of it references v itself
    if type(owner) is not np.ndarray or owner.base is not None:
        return None  # memory NumPy does not own, or a chain of owners
    # holders of the owner besides this frame's `owner`: v.base, the allocator's pool slot
    from ember.backends.cpu.runtime.allocator import ALLOCATOR

    if sys.getrefcount(owner) - _probe_count() != 1 + ALLOCATOR.pool_refs(owner):
        return None
    return v


__all__ = ["exclusive_shard", "exclusive_value"]
