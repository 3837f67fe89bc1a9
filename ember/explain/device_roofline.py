"""Roofline of a program on an accelerator (the tpu backend): its kernels against the chip's
own measured bandwidth and peak.

Input: a function and example arguments (`profile(f, *args, backend="tpu")`, or any call of
`ember.explain.profile` while the TPU is the default platform). Output: the `Profile` of
ember/explain/roofline.py, printed the same way: one row per Ember Mosaic kernel in the
module, timed alone on the device (a module holding just its `tpu_custom_call`, on random
operands of its window shapes), one row for the rest of the program (what the TPU compiler
generates: the whole call's time minus the kernels', with the rest of the cost), and the
whole call's device time.

How time is measured: no profiler; `CALLS` calls are queued before waiting for the last one
(a synchronous call costs about 0.55 ms of round trip on the TPU host, far more than most
kernels), and the best of `BURSTS` such bursts, divided by the calls, is the device time.
The ceilings (`device_machine`): the bandwidth of a triad `b + 3c` over `TRIAD_BYTES`
compiled by the same backend (XLA's fusion: the chip's memory, as Ember's kernels see it),
and the peak of a bfloat16 product of `PRODUCT_N`^3 (the matrix unit; f32 products at the
default precision are one bf16 pass on a TPU). Measured once per process and device kind.
Invariant: the kernels timed are the module's own (same text, same block shapes).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.explain.hardware import Machine

CALLS = 20
BURSTS = 5
TRIAD_BYTES = 216_000_000
PRODUCT_N = 4096
_MACHINES: dict[str, Machine] = {}


def device_seconds(run: Callable[[], list[Any]], calls: int = CALLS,
                   bursts: int = BURSTS) -> float:
    """Device seconds of one `run()` (which enqueues and returns device buffers): the best
    over `bursts` of `calls` queued runs, per run."""
    _block(run())
    best = float("inf")
    for _ in range(bursts):
        t0 = time.perf_counter()
        for _ in range(calls - 1):
            run()
        _block(run())
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def _block(out: list[Any]) -> None:
    for o in out:
        o.block_until_ready()


def _runner(backend: str, text: str, args: list[np.ndarray],
            kernels: Sequence[Any] = ()) -> Callable[[], list[Any]]:
    """A module's HLO text compiled by the backend's XLA route, on device copies of
    `args`; the calls of `kernels` in it get their layouts pinned for XLA only (Ember's
    parser reads the text as Ember prints it, without XLA's layout attributes)."""
    from ember import backends
    from ember.backends.tpu.custom_calls import pin_layouts
    from ember.backends.xla import XlaExecutable, out_types
    from ember.hlo.parser import parse_module

    be = backends.get(backend)
    plat = be._platform()
    module = parse_module(text)
    xla_text = pin_layouts(text, list(kernels))
    exe = XlaExecutable(module, xla_text, plat, plat.compile(xla_text), -1,
                        out_types(module))
    bufs = [plat.put(a) for a in args]
    return lambda: exe.run_buffers(*bufs)


def device_machine(backend: str = "tpu") -> Machine:
    """The device's ceilings (see the module docstring), measured once per process."""
    from ember import backends

    plat = backends.get(backend)._platform()
    kind = str(getattr(plat.device, "device_kind", backend))
    if kind in _MACHINES:
        return _MACHINES[kind]
    n = TRIAD_BYTES // 12
    triad = (f"HloModule triad\nENTRY %main (b: f32[{n}], c: f32[{n}]) -> f32[{n}] {{\n"
             f"  %b = f32[{n}] parameter(0)\n  %c = f32[{n}] parameter(1)\n"
             f"  %k = f32[] constant(3)\n  %kb = f32[{n}] broadcast(%k), dimensions={{}}\n"
             f"  %m = f32[{n}] multiply(%kb, %c)\n  ROOT %a = f32[{n}] add(%b, %m)\n}}\n")
    ones = np.ones(n, np.float32)
    bandwidth = 3 * n * 4 / device_seconds(_runner(backend, triad, [ones, ones]))
    p = PRODUCT_N
    product = (f"HloModule product\nENTRY %main (a: bf16[{p},{p}], b: bf16[{p},{p}]) -> "
               f"bf16[{p},{p}] {{\n  %a = bf16[{p},{p}] parameter(0)\n"
               f"  %b = bf16[{p},{p}] parameter(1)\n  ROOT %d = bf16[{p},{p}] dot(%a, %b), "
               f"lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n}}\n")
    import ml_dtypes  # (jaxlib's dependency: the device backends have it)

    m = np.ones((p, p), ml_dtypes.bfloat16)
    peak = 2 * p ** 3 / device_seconds(_runner(backend, product, [m, m]))
    machine = Machine(bandwidth, peak, 0, f"{kind} ({backend})", 3 * n * 4)
    _MACHINES[kind] = machine
    return machine


def kernel_module(kernel: Any, config: str) -> str:
    """HLO text of a module that runs one Ember kernel alone: its windows as parameters,
    the `tpu_custom_call` (with `config`, its backend_config) as the root. As Ember prints
    it: `_runner` pins the call's layouts for XLA."""
    import json

    from ember.backends.tpu.custom_calls import TARGET

    ins, out = kernel.windows[:-1], kernel.windows[-1]

    def ty(w: Any) -> str:
        return f"{w.element_type}[{w.dims[0]},{w.dims[1]}]"

    params = ", ".join(f"p{i}: {ty(w)}" for i, w in enumerate(ins))
    lines = [f"HloModule kernel_{kernel.name}", f"ENTRY %main ({params}) -> {ty(out)} {{"]
    lines += [f"  %p{i} = {ty(w)} parameter({i})" for i, w in enumerate(ins)]
    operands = ", ".join(f"%p{i}" for i in range(len(ins)))
    lines += [f"  ROOT %k = {ty(out)} custom-call({operands}), "
              f'custom_call_target="{TARGET}", backend_config={json.dumps(config)}', "}", ""]
    return "\n".join(lines)


def kernel_configs(module: Any) -> dict[str, str]:
    """Each kernel call's backend_config in a module, by its Mosaic text."""
    from ember.backends.tpu.custom_calls import TARGET, kernel_text

    return {kernel_text(i.attrs["backend_config"]): i.attrs["backend_config"]
            for c in module.computations for i in c.instructions
            if i.opcode == "custom-call" and i.attrs.get("custom_call_target") == TARGET}


def profile(f: Callable, *args: Any, backend: str = "tpu", print_report: bool = True,
            machine: Machine | None = None, file: Any = None, **kwargs: Any) -> Any:
    """Time `f` on the device and its Ember kernels alone (see the module docstring)."""
    from ember import backends
    from ember.api import JitFunction, fun_name, jit
    from ember.backends.tpu import tpu_module
    from ember.explain.roofline import KernelProfile, Profile, example_arguments, random_array
    from ember.hlo.cost_analysis import cost_analysis
    from ember.hlo.shape import numpy_dtype
    from ember.lowering import lower_jaxpr

    fn = f if isinstance(f, JitFunction) else jit(f)
    closed = fn.trace(*args, **kwargs).jaxpr
    lowered = lower_jaxpr(closed, fun_name(fn.fun))
    values = example_arguments(fn, args, kwargs) + list(lowered.hidden_consts)
    mach = machine or device_machine(backend)
    exe = backends.get(backend).compile(lowered.module)
    bufs = [exe.platform.put(v) for v in values]
    whole = device_seconds(lambda: exe.run_buffers(*bufs))
    optimized = exe.module  # (the backend's optimized module: its passes ran once)
    total = cost_analysis(optimized)
    rows, rng = [], np.random.default_rng(0)
    tm = tpu_module(optimized)
    configs = kernel_configs(tm.module)
    kernel_seconds = 0.0
    spent = {"bytes accessed": 0.0, "flops": 0.0, "transcendentals": 0.0}
    for kernel in tm.kernels:
        operands = [random_array(rng, w.dims, numpy_dtype(w.element_type))
                    for w in kernel.windows[:-1]]
        seconds = device_seconds(_runner(backend, kernel_module(kernel, configs[kernel.text]),
                                         operands, [kernel]))
        cost = _kernel_cost(configs[kernel.text])
        for key in spent:
            spent[key] += cost.get(key, 0.0)
        kernel_seconds += seconds
        rows.append(KernelProfile(kernel.name, f"Ember {kernel.kind} kernel",
                                  cost.get("bytes accessed", 0.0), cost.get("flops", 0.0),
                                  cost.get("transcendentals", 0.0), seconds,
                                  mach.peak_flops_f32, mach.bandwidth))
    rest = max(whole - kernel_seconds, 0.0)
    left = {key: max(total.get(key, 0.0) - spent[key], 0.0) for key in spent}
    notes = [f"times are device times of {CALLS} queued calls (best of {BURSTS}); Ember's "
             "kernels are timed alone, the TPU compiler's part as the whole call's time "
             "minus theirs (no profiler: its fusions are not timed one by one; "
             "compiled.runtime_hlo() lists them)"]
    if tm.kernels and not any(left.values()):  # (Ember's kernels are the whole program)
        notes.append("Ember's kernels do all of the program's work: no row for XLA's part")
    else:
        rows.append(KernelProfile(
            "the rest (XLA)" if tm.kernels else "the program (XLA)",
            "TPU compiler's fusions", left["bytes accessed"], left["flops"],
            left["transcendentals"], rest, mach.peak_flops_f32, mach.bandwidth))
    result = Profile(fun_name(fn.fun), rows, mach, CALLS * BURSTS, whole, notes)
    if print_report:
        print(result, file=file or sys.stdout, flush=True)
    return result


def _kernel_cost(config: str) -> dict[str, float]:
    """The fusion's cost the kernel call carries (its `cost_estimate`), in XLA's names."""
    import json

    est = json.loads(config)["custom_call_config"]["cost_estimate"]
    return {"bytes accessed": float(est["bytes_accessed"]), "flops": float(est["flops"]),
            "transcendentals": float(est["transcendentals"])}
