"""Roofline report: each kernel's time, achieved bandwidth and flops against the machine's.

Input: a function and example arguments (`profile(f, *args)`; ShapeDtypeStructs become
random arrays). Output: a `Profile` (printed unless `print_report=False`): one row per
top-level step of the entry, in the order it runs them (a kernel; or a whole native while
loop or conditional, all its iterations and kernels in one row), with the bytes it moves,
its flops and transcendentals (XLA cost model: `ember.hlo.cost_analysis`), its best time,
the achieved GB/s and GFLOP/s, and those as fractions of this machine's measured memory
bandwidth and peak compute (`hardware.py`), plus the time of one whole jitted call.
A loop's or conditional's cost is its nested kernels' costs times how many times each ran
in the timed call (the instrumented build counts iterations and branches taken), plus the
bytes of the copies that move the loop state; when some count could not be taken the row
shows `?` and a note says why, rather than a guess.
How: the module is compiled by the CPU backend's instrumented build
(`backends/cpu/profiling/profile.py`), which timestamps every top-level step inside the one native
call;
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

import math
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
    detail: str = ""      # a loop's or conditional's summary ("loop: 3 kernels inside, ...")

    @property
    def label(self) -> str:
        return f"{self.name} ({self.detail})" if self.detail else self.name

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
        """Which ceiling the kernel is closer to ('?' when its cost is unknown)."""
        if math.isnan(self.bandwidth_fraction) or math.isnan(self.peak_fraction):
            return "?"
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
    if math.isnan(x):
        return "?"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def _bytes(n: float) -> str:
    from ember.explain.refusals import format_bytes

    return "?" if math.isnan(n) else format_bytes(n)


def _num(x: float, spec: str) -> str:
    return "?" if math.isnan(x) else format(x, spec)


def _time(s: float) -> str:
    return f"{s * 1e3:.3f} ms" if s >= 1e-4 else f"{s * 1e6:.1f} us"


def format_profile(p: Profile) -> str:
    head = ["kernel", "kind", "bytes", "flops", "transc.", "time", "GB/s", "GFLOP/s",
            "% mem bw", "% peak", "bound", "source"]
    rows = []
    for k in p.kernels:
        rows.append([k.label, k.kind, _bytes(k.bytes), _si(k.flops),
                     _si(k.transcendentals), _time(k.seconds), _num(k.gbps, ".3g"),
                     _num(k.gflops, ".3g"), _num(100 * k.bandwidth_fraction, ".0f") + "%",
                     _num(100 * k.peak_fraction, ".1f") + "%", k.bound, k.source])
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(len(head))]
    lines = [f"Roofline of jit({p.function}): this machine does {p.machine}.",
             "  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    for r in rows:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    if p.machine.threads == 0:  # (a device: times are the device's)
        lines.append(f"  one whole call on the device: {_time(p.call_seconds)}")
    else:
        lines.append(f"  kernels: {_time(p.kernel_seconds)} in all (best of {p.runs} runs); "
                     f"one whole jitted call: {_time(p.call_seconds)} (Python, output "
                     "allocation and argument checks included)")
    if any(k.bandwidth_fraction > 1 for k in p.kernels):
        lines.append("  note: above 100% of the memory bandwidth means the data came from "
                     "cache (the bandwidth is DRAM's); time a larger input for memory speed")
    lines += [f"  note: {n}" for n in p.notes]
    return "\n".join(lines)


def example_arguments(fn: Any, args: tuple, kwargs: dict, seed: int = 0) -> list[np.ndarray]:
    """The flat array arguments of a call (ShapeDtypeStructs filled with random values)."""
    from ember.api import ShapeDtypeStruct

    _, _, _, leaves, avals, _ = fn.flatten_call(args, kwargs)
    rng = np.random.default_rng(seed)
    out = []
    for leaf, aval in zip(leaves, avals):
        dt = np.dtype(aval.dtype)
        if isinstance(leaf, ShapeDtypeStruct):
            out.append(random_array(rng, aval.shape, dt))
        else:
            out.append(np.asarray(leaf, dtype=dt, order="C"))  # 0-d stays 0-d
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
            file: Any = None, backend: str | None = None, **kwargs: Any) -> Profile:
    """Run `f` compiled by the CPU backend, time each kernel, and report it against this
    machine's ceilings (see the module docstring). `machine` overrides the measured one.
    `backend="tpu"` (or no backend while `jax_platforms` names the TPU): on the chip,
    against its own ceilings (ember/explain/device_roofline.py)."""
    from ember.compiler import platform_name

    if backend == "tpu" or (backend is None and platform_name() == "tpu"):
        from ember.explain.device_roofline import profile as device_profile

        return device_profile(f, *args, print_report=print_report, machine=machine,
                              file=file, **kwargs)
    if backend not in (None, "cpu"):
        raise ValueError(f"profile(backend={backend!r}): 'cpu' or 'tpu'")
    from ember.api import JitFunction, fun_name, jit
    from ember.backends import cpu
    from ember.backends.cpu.profiling.profile import compile_profiled
    from ember.config import config
    from ember.explain.hardware import machine as measured_machine
    from ember.lowering import lower_jaxpr

    fn = f if isinstance(f, JitFunction) else jit(f)
    closed = fn.trace(*args, **kwargs).jaxpr
    lowered = lower_jaxpr(closed, fun_name(fn.fun))
    values = example_arguments(fn, args, kwargs) + list(lowered.hidden_consts)
    unsafe = bool(config.ember_unsafe_math)
    prof = compile_profiled(lowered.module, unsafe_math=unsafe)
    mach = machine or measured_machine()
    samples, runs = _median_runs(lambda: prof.run(*values)[1])
    exe = cpu.compile(lowered.module, unsafe_math=unsafe)
    calls, _ = _median_runs(lambda: _timed(exe, values))
    by_name = {i.name: i for i in prof.module.entry.instructions}
    rows, notes = [], []
    for k, name in enumerate(prof.step_names):
        inst = by_name[name]
        seconds = min(s[k] for s in samples)
        if inst.opcode in ("while", "conditional"):
            row, note = _control_row(prof, inst, seconds, mach)
            notes += [note] if note else []
        else:
            row = _kernel_row(inst, seconds, mach)
        rows.append(row)
    notes += _load_notes(mach.threads)
    result = Profile(fun_name(fn.fun), rows, mach, runs, min(calls), notes)
    if print_report:
        print(result, file=file or sys.stdout, flush=True)
    return result


def _kernel_row(inst: Any, seconds: float, mach: Machine) -> KernelProfile:
    from ember.explain.kernels import kernel_instructions, kernel_kind
    from ember.hlo.cost_analysis import instruction_cost

    cost = instruction_cost(inst)
    return KernelProfile(
        inst.name, kernel_kind(inst), cost.get("bytes accessed", 0.0), cost.get("flops", 0.0),
        cost.get("transcendentals", 0.0), seconds, mach.peak_flops(_element_dtype(inst)),
        mach.bandwidth, _source(kernel_instructions(inst)))


def _control_row(prof: Any, inst: Any, seconds: float, mach: Machine
                 ) -> tuple[KernelProfile, str]:
    """One row for a whole loop or conditional: its nested kernels' costs times the runs
    counted in the last timed call (all calls run the same data, so the same counts)."""
    from ember.hlo.cost_analysis import instruction_cost

    runs = prof.control_runs(inst.name)
    totals = {"bytes accessed": runs.copy_bytes, "flops": 0.0, "transcendentals": 0.0}
    heaviest, most = inst, -1.0  # the kernel whose element type sets the peak
    for kern, n in runs.kernels.items():
        cost = instruction_cost(kern)
        for key in totals:
            c = cost.get(key, 0.0)
            totals[key] = None if totals[key] is None or n is None else totals[key] + c * n
        weight = (cost.get("flops", 0.0) + cost.get("transcendentals", 0.0)) * (n or 1)
        if weight > most:
            heaviest, most = kern, weight
    nested = len(runs.kernels)
    inside = f"{nested} kernel{'s' if nested != 1 else ''} inside"
    if inst.opcode == "while":
        iters = runs.counts.get((inst.name, "body"))
        detail = f"loop: {inside}, " + (f"{iters} iteration{'s' if iters != 1 else ''}"
                                         if iters is not None else "iterations unknown")
    else:
        taken = [k for k in range(len(inst.branch_computations))
                 if runs.counts.get((inst.name, f"branch{k}"))]
        unknown = any(runs.counts.get((inst.name, f"branch{k}")) is None
                      for k in range(len(inst.branch_computations)))
        if unknown:
            which = "branch taken unknown"
        elif taken:
            which = "ran branch " + ", ".join(map(str, taken))
        else:
            which = "no branch ran"
        detail = f"conditional: {inside}, {which}"
    note = ""
    if runs.unknown:
        note = (f"{inst.name}: some of its step lists run only threaded kernels, which the "
                "profiled build does not count, so how often they ran (and the row's bytes "
                "and flops) is unknown")
    row = KernelProfile(
        inst.name, inst.opcode, _or_nan(totals["bytes accessed"]), _or_nan(totals["flops"]),
        _or_nan(totals["transcendentals"]), seconds,
        mach.peak_flops(_element_dtype(heaviest)), mach.bandwidth, _source([inst]),
        detail)
    return row, note


def _or_nan(x: float | None) -> float:
    return float("nan") if x is None else float(x)


def _source(instructions: list[Any]) -> str:
    from ember.explain.kernels import source_lines

    lines = source_lines(instructions)
    return f"{_short(lines[0].file)}:{lines[0].line}" if lines else ""


def _load_notes(threads: int) -> list[str]:
    """A warning when other processes keep the CPUs busy (their time lands in ours)."""
    from ember.explain.hardware import busy

    found = busy()
    if found is None:
        return []
    note = (f"this machine is busy (load average {found[0]:.1f} on {found[1]} CPUs): times "
            "include waiting for other processes")
    if threads > 1:
        note += ("; a threaded kernel waits for every chunk a busy core's worker has "
                 "claimed, so EMBER_NUM_THREADS=1 gives steadier numbers")
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
