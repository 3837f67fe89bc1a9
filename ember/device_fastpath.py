"""The cached-call fast path of `ember.jit` for a device-resident executable (the tpu
backend): a repeated call on DeviceArrays skips flattening, the cache lookup and `bind`.

Input: a JitFunction cache entry's avals and output tree, the positional arguments of the
call that just hit it, and its CompiledModule. Output: `fast(args) -> result | MISS`, tried
before the normal path (the JitFunction's `_fast` slot, as ember/fastpath.py's CPU path).

A call takes it when no trace is active on this thread, the tracing config is the one the
entry was traced under, no argument is donated, and every positional argument is a live
DeviceArray on the executable's device with the entry's aval; everything else misses and
the normal path (ember/dispatch.py's `_run_on_device`) runs, which gives the same results.
What a fast call does: enqueue the executable on the arguments' buffers and the device
copies of the hidden constants, and wrap the output buffers as DeviceArrays, without
waiting for the device (asynchronous dispatch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.compiler import CompiledModule
from ember.config import config
from ember.core import trace as _trace
from ember.device_array import DeviceArray, wrap_outputs
from ember.fastpath import MISS
from ember.tree_util import PyTreeDef


def eligible(args: tuple) -> bool:
    """Whether a call with these positional arguments could take this fast path."""
    return bool(args) and all(type(x) is DeviceArray for x in args)


def build(in_avals: list, out_avals: list, out_tree: PyTreeDef, donated: tuple | None,
          args: tuple, compiled: CompiledModule) -> Callable[[tuple], Any] | None:
    """The fast path for calls like `args`, or None where none applies."""
    from ember.dispatch import device_consts, device_of

    exe = compiled.executable
    if (not getattr(exe, "device_resident", False) or any(donated or ())
            or len(args) != len(in_avals) or not out_avals):
        return None
    device = device_of(compiled)
    if any(type(x) is not DeviceArray or x._dev != device or x._aval != a
           for x, a in zip(args, in_avals)):
        return None
    consts = tuple(device_consts(compiled))
    run, rebuild = exe.run_buffers, exe.rebuild
    avals, outs_avals = tuple(in_avals), tuple(out_avals)
    tuple_result = compiled.lowered.tuple_result
    single = len(outs_avals) == 1 and out_tree.num_leaves == 1 and not tuple_result
    tls, ctx, n = _trace._state, config.trace_context(), len(args)

    def fast(args: tuple) -> Any:
        if len(args) != n or tls.dynamic.level or config._trace_context is not ctx:
            return MISS
        bufs = []
        for x, aval in zip(args, avals):
            if (type(x) is not DeviceArray or x._deleted or x._dev is not device
                    or (x._aval is not aval and x._aval != aval)):
                return MISS
            bufs.append(x._buffer)
        outs = rebuild(run(*bufs, *consts))
        if single:
            return DeviceArray(outs, outs_avals[0], device)
        return out_tree.unflatten(wrap_outputs(outs if tuple_result else (outs,), outs_avals,
                                               device))

    return fast
