"""Run a jitted function's jaxpr on concrete arguments (the normal, general call path).

Input: a ClosedJaxpr and the flat concrete arguments of a top-level call. Output: flat
ember.Arrays. The jaxpr is compiled once (trace -> HLO -> passes -> backend, see
ember/compiler.py) and the result cached on the jaxpr object.
Invariants: arguments are converted to the jaxpr's input dtypes; outputs never alias memory
the user can write; donated ember.Arrays are deleted after the call, and one that nothing
else references lends its memory to an output of its type (ember/donation.py; the CPU
backend's buffer assignment decides which output, RuntimeSpec `aliases`).
Where the backend has a fast runner (CPU; on a module's first call only if the process
already has its trampoline), arguments are made C-contiguous and its fresh, read-only
outputs are wrapped as they are; otherwise (the interpreter, a process's first call)
`wrap_results` copies any result that aliases a user's NumPy array. Repeated calls of
the same signature skip this module through `ember/fastpath.py`, which keeps these same
invariants.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

from ember.array import ArrayImpl
from ember.compiler import CompiledModule
from ember.compiler import compile_jaxpr as _compile
from ember.core.jaxpr import ClosedJaxpr
from ember.core.trace import to_numpy, wrap_results
from ember.device_array import DeviceArray, wrap_outputs
from ember.donation import exclusive_value
from ember.prims.call import jit_p

# jaxpr -> {(donated argument positions, backend name or None): compiled module}
_compiled: weakref.WeakKeyDictionary[ClosedJaxpr, dict[tuple, CompiledModule]] = (
    weakref.WeakKeyDictionary())


def donated_positions(params: dict) -> tuple[int, ...]:
    return tuple(i for i, d in enumerate(params.get("donated_invars") or ()) if d)


def compile_jaxpr(closed: ClosedJaxpr, name: str = "main",
                  donated: tuple[int, ...] = (), backend: str | None = None) -> CompiledModule:
    """The compiled module of a traced function (compiled on first use, then cached).
    `backend`: jit(backend=...)'s Ember backend, or None for EMBER_BACKEND's."""
    per_donation = _compiled.get(closed)
    if per_donation is None:
        per_donation = _compiled[closed] = {}
    key = (donated, backend)
    compiled = per_donation.get(key)
    if compiled is None:
        compiled = per_donation[key] = _compile(closed, name, donated, backend)
        _warn_unusable_donations(closed, donated)
    return compiled


def _warn_unusable_donations(closed: ClosedJaxpr, donated: tuple[int, ...]) -> None:
    """As JAX: a donated argument no output has the type of cannot lend its memory."""
    outs = [(a.shape, a.dtype) for a in closed.out_avals]
    unusable = []
    for i in donated:
        aval = closed.in_avals[i]
        if (aval.shape, aval.dtype) in outs:
            outs.remove((aval.shape, aval.dtype))
        else:
            unusable.append(aval.str_short())
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}. No output "
                      "has their shape and dtype, so their memory cannot be reused.",
                      stacklevel=4)


def _c_value(x: Any, aval: Any) -> np.ndarray:
    """`x`'s value in the aval's dtype, C-contiguous (an Array caches its own)."""
    if type(x) is ArrayImpl:
        v = x._c_value()
        if v is not None:
            return v
    v = to_numpy(x, aval)  # raises for a deleted Array
    return v if v.flags.c_contiguous else np.ascontiguousarray(v)


def placed_backend(args: list) -> str | None:
    """The backend of the first argument that lives on an accelerator (a DeviceArray):
    jit runs where its arguments are, as JAX does."""
    for x in args:
        if type(x) is DeviceArray and not x._deleted:
            return x._dev.backend
    return None


def _run_on_device(compiled: CompiledModule, closed: ClosedJaxpr, args: list,
                   donated: tuple[int, ...]) -> list:
    """A call of a device-resident executable (the tpu backend): DeviceArray arguments on
    its device go in as their buffers, others are copied there; the outputs come back as
    DeviceArrays at once, before the device has computed them (asynchronous dispatch)."""
    exe = compiled.executable
    device = device_of(compiled)
    bufs = []
    for x, aval in zip(args, closed.in_avals):
        buf = x.buffer_on(device) if type(x) is DeviceArray else None
        bufs.append(buf if buf is not None and x._aval.dtype == aval.dtype
                    else _c_value(x, aval))
    outs = exe.rebuild(exe.run_buffers(*bufs, *device_consts(compiled)))
    outs = list(outs) if compiled.lowered.tuple_result else [outs]
    for i in donated:  # (as JAX: a donated argument is gone after the call)
        if isinstance(args[i], ArrayImpl):
            args[i].delete()
    return wrap_outputs(outs, list(closed.out_avals), device)


def device_consts(compiled: CompiledModule) -> list[Any]:
    """The hidden constants as device buffers (copied there once per compilation)."""
    consts = compiled.__dict__.get("device_consts")
    if consts is None:
        put = compiled.executable.platform.put
        consts = compiled.__dict__["device_consts"] = [put(c) for c in compiled.hidden_consts]
    return consts


def device_of(compiled: CompiledModule) -> Any:
    """The AcceleratorDevice a device-resident executable runs on."""
    device = compiled.__dict__.get("device")
    if device is None:
        from ember.device_array import accelerator_devices

        runtime = compiled.executable.platform.device
        device = next(d for d in accelerator_devices(compiled.backend)
                      if d.runtime_device == runtime)
        compiled.__dict__["device"] = device
    return device


@jit_p.def_call_impl
def _jit_call_impl(args: list, params: dict) -> list:
    closed: ClosedJaxpr = params["jaxpr"]
    donated = donated_positions(params)
    backend = params.get("backend") or placed_backend(args)
    compiled = compile_jaxpr(closed, params.get("name", "main"), donated, backend)
    if getattr(compiled, "executable", None) is not None and getattr(
            compiled.executable, "device_resident", False):
        return _run_on_device(compiled, closed, args, donated)
    # donated Arrays nothing else sees lend their memory (asked before any local holds it)
    given = {i: exclusive_value(args[i]) for i in donated} if compiled.donated else {}
    owned = tuple(i for i, v in given.items() if v is not None)
    # a first call makes no trampoline for the fast runner: one-shot functions never pay
    runner = compiled.fast_runner(ready_only=not compiled.called)
    compiled.called = True
    if runner is not None:
        vals = [given[i] if given.get(i) is not None else _c_value(x, a)
                for i, (x, a) in enumerate(zip(args, closed.in_avals))]
        outs = runner(vals, owned) if owned else runner(vals)
        results = [ArrayImpl(o, a, o) for o, a in zip(outs, closed.out_avals)]
    else:
        vals = [to_numpy(x, a) for x, a in zip(args, closed.in_avals)]
        results = wrap_results(compiled(vals, owned) if owned else compiled(vals),
                               closed.out_avals, args, vals)
    del given
    for i in donated:
        if isinstance(args[i], ArrayImpl):
            args[i].delete()
    return results


def run(closed: ClosedJaxpr, args: list[Any], name: str = "main",
        donated_invars: tuple[bool, ...] | None = None, backend: str | None = None) -> list:
    return _jit_call_impl(args, {"jaxpr": closed, "name": name,
                                 "donated_invars": donated_invars, "backend": backend})
