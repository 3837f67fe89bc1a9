"""Roofline report: each kernel's time, achieved bandwidth and flops against the machine's.

Input: a function and example arguments (`profile(f, *args)`; ShapeDtypeStructs become
random arrays). Output: a `Profile` (printed unless `print_report=False`): per kernel, in
the order the entry point runs them, the bytes it moves, its flops and transcendentals (XLA
cost model: `ember.hlo.cost_analysis`), its median time, the achieved GB/s and GFLOP/s, and
those as fractions of this machine's measured memory bandwidth and peak compute
(`hardware.py`), plus the time of one whole jitted call.
How: the module is compiled by the CPU backend's instrumented build
(`backends/cpu/profiling.py`), which timestamps every kernel inside the one native call;
after `WARMUP` calls (page faults, caches), it runs until `MIN_SECONDS` have passed (at
least `MIN_RUNS`, at most `MAX_RUNS` calls) and reports each kernel's best time: on a
shared machine other processes only ever add time, so the minimum is the kernel's own.
Invariants: the instrumented build runs the same kernels as the production build (same
passes, schedule and emitter); fractions use the peak of the kernel's element type (f64:
half the f32 peak). Transcendentals are not flops (XLA's convention), so a kernel of
`sin`s can be compute-bound while its GFLOP/s look small. A bandwidth fraction above 100%
means the kernel's data came from cache, not memory (the triad measures DRAM).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ember.explain.hardware import Machine

WARMUP = 2
MIN_RUNS = 5
MAX_RUNS = 200
MIN_SECONDS = 0.25


@dataclass
class KernelProfile:
    name: str
    kind: str
    bytes: float
    flops: float
    transcendentals: float
    seconds: float        # best over the runs
    peak_flops: float     # the machine's peak for this kernel's element type
    bandwidth: float      # the machine's measured bandwidth
    source: str = ""      # first source line of its operations

    @property
    def gbps(self) -> float:
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 else float("nan")

    @property
    def gflops(self) -> float:
        return self.flops / self.seconds / 1e9 if self.seconds > 0 else float("nan")

    @property
    def bandwidth_fraction(self) -> float:
        return self.gbps * 1e9 / self.bandwidth if self.bandwidth else float("nan")

    @property
    def peak_fraction(self) -> float:
        return self.gflops * 1e9 / self.peak_flops if self.peak_flops else float("nan")

    @property
    def bound(self) -> str:
        """Which ceiling the kernel is closer to."""
        return "memory" if self.bandwidth_fraction >= self.peak_fraction else "compute"


@dataclass
class Profile:
    function: str
    kernels: list[KernelProfile]
    machine: Machine
    runs: int
    call_seconds: float          # best whole jitted call (Python, allocation included)
    notes: list[str] = field(default_factory=list)

    @property
    def kernel_seconds(self) -> float:
        return sum(k.seconds for k in self.kernels)

    def __str__(self) -> str:
        return format_profile(self)


def _si(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def _time(s: float) -> str:
    return f"{s * 1e3:.3f} ms" if s >= 1e-4 else f"{s * 1e6:.1f} us"


def format_profile(p: Profile) -> str:
    from ember.explain.refusals import format_bytes

    head = ["kernel", "kind", "bytes", "flops", "transc.", "time", "GB/s", "GFLOP/s",
            "% mem bw", "% peak", "bound", "source"]
    rows = []
    for k in p.kernels:
        rows.append([k.name, k.kind, format_bytes(k.bytes), _si(k.flops),
                     _si(k.transcendentals), _time(k.seconds), f"{k.gbps:.3g}",
                     f"{k.gflops:.3g}", f"{100 * k.bandwidth_fraction:.0f}%",
                     f"{100 * k.peak_fraction:.1f}%", k.bound, k.source])
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    lines = [f"Roofline of jit({p.function}): this machine does {p.machine}.",
             "  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    for r in rows:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    lines.append(f"  kernels: {_time(p.kernel_seconds)} in all (best of {p.runs} runs); "
                 f"one whole jitted call: {_time(p.call_seconds)} (Python, output "
                 "allocation and argument checks included)")
    lines += [f"  note: {n}" for n in p.notes]
    return "\n".join(lines)


def example_arguments(fn: Any, args: tuple, kwargs: dict, seed: int = 0) -> list[np.ndarray]:
    """The flat array arguments of a call (ShapeDtypeStructs filled with random values)."""
    from ember.api import ShapeDtypeStruct

    _, _, _, leaves, avals, _ = fn._flatten(args, kwargs)
    rng = np.random.default_rng(seed)
    out = []
    for leaf, aval in zip(leaves, avals):
        dt = np.dtype(aval.dtype)
        if isinstance(leaf, ShapeDtypeStruct):
            out.append(random_array(rng, aval.shape, dt))
        else:
            out.append(np.ascontiguousarray(np.asarray(leaf), dtype=dt))
    return out


def concrete_arguments(args: tuple, kwargs: dict, seed: int = 0) -> tuple[tuple, dict]:
    """`(args, kwargs)` with every ShapeDtypeStruct replaced by a random array of its type
    (seeded, so two calls give the same values)."""
    from ember.api import ShapeDtypeStruct
    from ember.tree_util import tree_map

    rng = np.random.default_rng(seed)

    def fill(x: Any) -> Any:
        if isinstance(x, ShapeDtypeStruct):
            return random_array(rng, x.shape, x.dtype)
        return x

    return tree_map(fill, (args, kwargs), is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))


def random_array(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f" or dtype.kind == "c":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape,
                        endpoint=True).astype(dtype)


def _median_runs(run: Callable[[], Any]) -> tuple[list[Any], int]:
    for _ in range(WARMUP):
        run()
    results = []
    t0 = time.perf_counter()
    while len(results) < MAX_RUNS and (len(results) < MIN_RUNS
                                       or time.perf_counter() - t0 < MIN_SECONDS):
        results.append(run())
    return results, len(results)


def profile(f: Callable, *args: Any, print_report: bool = True, machine: Machine | None = None,
            file: Any = None, **kwargs: Any) -> Profile:
    """Run `f` compiled by the CPU backend, time each kernel, and report it against this
    machine's ceilings (see the module docstring). `machine` overrides the measured one."""
    from ember.api import JitFunction, jit
    from ember.backends import cpu
    from ember.backends.cpu.profiling import compile_profiled
    from ember.config import config
    from ember.explain.hardware import machine as measured_machine
    from ember.explain.kernels import kernel_instructions, kernel_kind, source_lines
    from ember.hlo.cost_analysis import instruction_cost
    from ember.lowering import lower_jaxpr

    fn = f if isinstance(f, JitFunction) else jit(f)
    closed = fn.trace(*args, **kwargs).jaxpr
    lowered = lower_jaxpr(closed, fn._name)
    values = example_arguments(fn, args, kwargs) + list(lowered.hidden_consts)
    unsafe = bool(config.ember_unsafe_math)
    prof = compile_profiled(lowered.module, unsafe_math=unsafe)
    mach = machine or measured_machine()
    samples, runs = _median_runs(lambda: prof.run(*values)[1])
    exe = cpu.compile(lowered.module, unsafe_math=unsafe)
    calls, _ = _median_runs(lambda: _timed(exe, values))
    by_name = {i.name: i for i in prof.module.entry.instructions}
    rows = []
    for k, name in enumerate(prof.kernel_names):
        inst = by_name[name]
        cost = instruction_cost(inst)
        dtype = _element_dtype(inst)
        lines = source_lines(kernel_instructions(inst))
        rows.append(KernelProfile(
            name, kernel_kind(inst), cost.get("bytes accessed", 0.0), cost.get("flops", 0.0),
            cost.get("transcendentals", 0.0), min(s[k] for s in samples),
            mach.peak_flops(dtype), mach.bandwidth,
            f"{_short(lines[0].file)}:{lines[0].line}" if lines else ""))
    result = Profile(fn._name, rows, mach, runs, min(calls), _load_notes(mach.threads))
    if print_report:
        print(result, file=file or sys.stdout, flush=True)
    return result


def _load_notes(threads: int) -> list[str]:
    """A warning when other processes keep the CPUs busy (their time lands in ours)."""
    from ember.explain.hardware import busy

    found = busy()
    if found is None:
        return []
    note = (f"this machine is busy (load average {found[0]:.1f} on {found[1]} CPUs): times "
            "include waiting for other processes")
    if threads > 1:
        note += ("; a threaded kernel waits for its slowest thread, so EMBER_NUM_THREADS=1 "
                 "gives steadier numbers")
    return [note]


def _timed(exe: Any, values: list[np.ndarray]) -> float:
    t0 = time.perf_counter()
    exe(*values)
    return time.perf_counter() - t0


def _element_dtype(inst: Any) -> np.dtype:
    from ember.hlo.shape import numpy_dtype

    shape = inst.shape
    while shape.is_tuple:
        shape = shape.tuple_shapes[0]
    try:
        return np.dtype(numpy_dtype(shape.element_type))
    except (KeyError, TypeError, ValueError):
        return np.dtype(np.float32)


def _short(path: str) -> str:
    import os

    return os.path.basename(path)
