"""Per-kernel timing and the roofline report: the instrumented build
(backends/cpu/profiling/profile.py), the peak kernel (backends/cpu/profiling/peak.py), the
machine's ceilings (explain/hardware.py) and the report (explain/roofline.py). No timed
assertions: only structure, consistency and hand-counted costs."""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.profiling.peak import fma_ir
from ember.backends.cpu.profiling.profile import compile_profiled
from ember.explain import hardware
from ember.explain.hardware import Machine
from ember.explain.roofline import profile

MACHINE = Machine(bandwidth=20e9, peak_flops_f32=100e9, threads=1, target="test",
                  triad_bytes=0)


def fusion_example(x, a, b):
    return a * jnp.sin(x) + b


def exp_two_users(x):
    y = jnp.exp(x)
    return jnp.sum(y * y), y * 2.0


def int_and_float(i, x):
    return (i * 3 + 1, jnp.tanh(x) * 2.0)


def lowered(f, *args):
    return ember.jit(f).lower(*args)._lowered


CASES = [
    (fusion_example, [np.float32], 7),
    (fusion_example, [np.float64], 33),
    (exp_two_users, [np.float32], (1 << 17) + 3),  # large enough for threaded kernels
    (int_and_float, [np.int32, np.float32], 1),
]


@pytest.mark.parametrize("f, dtypes, n", CASES)
def test_profiled_build_computes_what_the_production_build_does(f, dtypes, n, x64):
    rng = np.random.default_rng(0)
    nargs = f.__code__.co_argcount
    args = [rng.standard_normal(n).astype(dtypes[k % len(dtypes)]) for k in range(nargs)]
    low = lowered(f, *args)
    prof = compile_profiled(low.module)
    exe = cpu.compile(low.module)
    assert prof.kernel_names == exe.kernel_names
    want = exe(*args)
    got, seconds = prof.run(*args)
    wants = want if isinstance(want, tuple) else (want,)
    gots = got if isinstance(got, tuple) else (got,)
    for g, w in zip(gots, wants):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()
    assert len(seconds) == len(exe.kernel_names)
    assert all(s >= 0 for s in seconds)


def test_fma_kernel_ir_has_independent_chains():
    text = fma_ir(8, 12)
    assert text.count("call <8 x float> @\"llvm.fma.v8f32\"") == 12
    assert "ember_peak_sink" in text


def test_profile_report_against_hand_counts(capsys):
    n = 1000
    p = profile(exp_two_users, np.ones(n, np.float32), machine=MACHINE)
    out = capsys.readouterr().out
    # y = exp(x) and y * 2 in one multi-output loop kernel (reads n, writes 2n), the sum
    assert [k.kind for k in p.kernels] == ["kLoop", "kInput"]
    exp, red = p.kernels
    assert (exp.bytes, exp.flops, exp.transcendentals) == (12 * n, n, n)
    assert (red.bytes, red.flops, red.transcendentals) == (4 * n + 4, 2 * n - 1, 0)
    for k in p.kernels:
        assert k.seconds > 0
        assert math.isclose(k.gbps, k.bytes / k.seconds / 1e9)
        assert math.isclose(k.bandwidth_fraction, k.gbps * 1e9 / MACHINE.bandwidth)
        assert math.isclose(k.peak_fraction, k.gflops * 1e9 / MACHINE.peak_flops_f32)
        assert k.bound in ("memory", "compute")
        assert k.source.startswith("test_explain_profile.py:")
    assert p.runs >= 5 and p.call_seconds > 0
    assert out.startswith("Roofline of jit(exp_two_users): this machine does 20.0 GB/s")
    for column in ("bytes", "flops", "transc.", "time", "GB/s", "GFLOP/s", "% mem bw",
                   "% peak", "source"):
        assert column in out
    assert re.search(r"fusion\.\d+ +kLoop +12 kB", out), out


def test_profile_uses_the_f64_peak_for_f64_kernels(x64):
    p = profile(fusion_example, *[np.ones(9, np.float64)] * 3, machine=MACHINE,
                print_report=False)
    assert p.kernels[0].peak_flops == MACHINE.peak_flops_f32 / 2
    assert (p.kernels[0].flops, p.kernels[0].transcendentals) == (18, 9)


def test_profile_fills_shape_dtype_structs_with_random_values():
    spec = ember.ShapeDtypeStruct((5,), np.float32)
    p = profile(fusion_example, spec, spec, spec, machine=MACHINE, print_report=False)
    assert [k.name for k in p.kernels] == ["fusion"] and p.kernels[0].bytes == 4 * 5 * 4


def test_machine_is_measured_once_and_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(hardware, "_MEMORY", {})
    monkeypatch.setattr(hardware, "busy", lambda: None)
    small = 3_000_000  # the real default is >= 200 MB; the mechanics are the same
    before = hardware.MEASUREMENTS["count"]
    m = hardware.machine(triad_bytes=small)
    assert m.bandwidth > 0 and m.peak_flops_f32 > 0 and m.triad_bytes == small
    assert m.threads == cpu.get_num_threads()
    assert hardware.MEASUREMENTS["count"] == before + 1
    stored = json.loads((tmp_path / "machine.json").read_text())
    assert len(stored) == 1 and next(iter(stored.values()))["bandwidth"] == m.bandwidth
    monkeypatch.setattr(hardware, "_MEMORY", {})  # as a new process: read from disk
    assert hardware.machine(triad_bytes=small) == m
    assert hardware.MEASUREMENTS["count"] == before + 1
    hardware.machine(triad_bytes=small, refresh=True)
    assert hardware.MEASUREMENTS["count"] == before + 2


def test_default_triad_is_at_least_200_mb():
    assert hardware.TRIAD_BYTES >= 200_000_000


def test_a_busy_machines_measurement_is_not_kept_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(hardware, "_MEMORY", {})
    monkeypatch.setattr(hardware, "busy", lambda: (9.0, 2))
    hardware.machine(triad_bytes=1_200_000)
    assert not (tmp_path / "machine.json").exists()


def test_unreadable_machine_file_is_remeasured(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(hardware, "_MEMORY", {})
    monkeypatch.setattr(hardware, "busy", lambda: None)
    (tmp_path / "machine.json").write_text("{not json")
    before = hardware.MEASUREMENTS["count"]
    hardware.machine(triad_bytes=1_200_000)
    assert hardware.MEASUREMENTS["count"] == before + 1
    assert os.path.getsize(tmp_path / "machine.json") > 0


# -- native loops and conditionals: one row per top-level step --------------------------------

def fori_program(x, n):
    def body(i, c):
        return c * 1.5 + jnp.sin(c)

    y = jnp.exp(x)
    z = ember.lax.fori_loop(0, n, body, y)
    return jnp.sum(z), z * 2


def fori_numpy(x, n):
    z = np.exp(x)
    for _ in range(n):
        z = z * x.dtype.type(1.5) + np.sin(z)
    return z.sum(), z * 2


def cond_program(x, p):
    y = x * 2
    z = ember.lax.cond(p > 0, lambda a: jnp.sin(a) + 1, lambda a: jnp.cos(a) * a * a, y)
    return z + 1


def nested_program(x):
    def outer(i, c):
        return ember.lax.fori_loop(0, 4, lambda j, d: d * 0.5 + 1.0, c) + 1.0

    return ember.lax.fori_loop(0, 3, outer, x)


@pytest.mark.parametrize("dtype, n, iters", [(np.float32, 1, 0), (np.float32, 7, 3),
                                             (np.float32, 1001, 7), (np.float64, 33, 5)])
def test_profiled_fori_loop_is_one_step_and_matches(dtype, n, iters, x64):
    x = np.linspace(-0.5, 0.5, n).astype(dtype)
    low = lowered(fori_program, x, np.int32(iters))
    prof = compile_profiled(low.module)
    exe = cpu.compile(low.module)
    loops = [s for s in prof.step_names if s.startswith("while")]
    assert len(loops) == 1
    assert len(prof.step_names) < len(prof.kernel_names)  # the body's kernels are in one row
    got, seconds = prof.run(x, np.int32(iters))
    assert len(seconds) == len(prof.step_names) and all(s >= 0 for s in seconds)
    want = exe(x, np.int32(iters))
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()
    ref = fori_numpy(x, iters)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[1], ref[1], rtol=rtol)
    runs = prof.control_runs(loops[0])
    assert runs.counts[(loops[0], "body")] == iters
    assert runs.counts[(loops[0], "cond")] == iters + 1
    assert not runs.unknown


def test_profile_report_of_a_fori_loop(capsys):
    n, iters = 1001, 7
    x = np.linspace(0, 1, n).astype(np.float32)
    p = profile(fori_program, x, np.int32(iters), machine=MACHINE)
    out = capsys.readouterr().out
    loops = [k for k in p.kernels if k.kind == "while"]
    assert len(loops) == 1 and len(p.kernels) == 4  # exp, the loop, the sum, the product
    loop = loops[0]
    assert loop.detail == "loop: 3 kernels inside, 7 iterations"
    assert f"{loop.name} (loop: 3 kernels inside, 7 iterations)" in out
    # hand count: per iteration c * 1.5 + sin(c) (2n flops, n sines) and the counter's add;
    # the condition's compare runs once more than the body
    assert loop.transcendentals == iters * n
    assert loop.flops == iters * (2 * n + 1) + (iters + 1)
    assert loop.bytes >= iters * 2 * 4 * n  # the body reads and writes the state
    assert loop.seconds > 0 and loop.bound in ("memory", "compute")
    assert loop.source.startswith("test_explain_profile.py:")
    assert p.kernel_seconds == pytest.approx(sum(k.seconds for k in p.kernels))


@pytest.mark.parametrize("p_value, branch", [(1, 1), (-1, 0)])
def test_profile_report_of_a_cond(p_value, branch, capsys):
    n = 9
    x = np.linspace(-1, 1, n).astype(np.float32)
    low = lowered(cond_program, x, np.int32(p_value))
    prof = compile_profiled(low.module)
    got, _ = prof.run(x, np.int32(p_value))
    y = x * 2
    want = (np.sin(y) + 1 if p_value > 0 else np.cos(y) * y * y) + 1
    np.testing.assert_allclose(got, want, rtol=1e-6)
    p = profile(cond_program, x, np.int32(p_value), machine=MACHINE)
    out = capsys.readouterr().out
    rows = [k for k in p.kernels if k.kind == "conditional"]
    assert len(rows) == 1 and len(p.kernels) == len(prof.step_names)
    row = rows[0]
    # branches in JAX's order: index 1 is the true branch
    assert row.detail == f"conditional: 2 kernels inside, ran branch {branch}"
    assert f"ran branch {branch}" in out
    # only the branch that ran counts: sin(a) + 1, or cos(a) * a * a
    assert row.transcendentals == n
    assert row.flops == (n if branch == 1 else 2 * n)


def test_nested_loops_count_every_inner_iteration():
    x = np.ones(5, np.float32)
    low = lowered(nested_program, x)
    prof = compile_profiled(low.module)
    got, seconds = prof.run(x)
    want = x.copy()
    for _ in range(3):
        for _ in range(4):
            want = want * np.float32(0.5) + np.float32(1)
        want = want + np.float32(1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    (outer,) = [s for s in prof.step_names if s.startswith("while")]
    runs = prof.control_runs(outer)
    bodies = {k: v for k, v in runs.counts.items() if k[1] == "body"}
    assert sorted(bodies.values()) == [3, 12]  # inner iterations add up over the outer ones
    assert set(runs.kernels.values()) <= {3, 4, 12, 15}


def test_profiled_packed_dot_times_its_packing_with_it():
    # the dot's lhs is packed by a call of its own before BLAS: still one step
    from ember.backends.cpu.dot.plan import plan

    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 48, 3)).astype(np.float32)
    b = rng.standard_normal((3, 64, 40)).astype(np.float32)

    def f(a, b):
        return ember.lax.dot_general(a, b, (((0,), (1,)), ((2,), (0,))))

    low = lowered(f, a, b)
    prof = compile_profiled(low.module)
    dots = [k for k in prof.schedule.kernels if k.opcode in ("dot", "fusion")]
    packed = any(role in ("lhs", "rhs") for k in dots for role, _ in plan(k).work_shapes())
    got, seconds = prof.run(a, b)
    assert len(seconds) == len(prof.step_names) == len(prof.kernel_names)
    assert got.tobytes() == cpu.compile(low.module)(a, b).tobytes()
    np.testing.assert_allclose(got, np.einsum("kib,bkj->bij", a, b), rtol=1e-4, atol=1e-4)
    assert packed or not dots  # the case this test is for


def test_uncounted_step_lists_are_inferred_or_unknown():
    from types import SimpleNamespace

    from ember.backends.cpu.plan.loops_native import CondPlan, WhilePlan
    from ember.backends.cpu.profiling.profile import ControlRuns, _walk

    class Node:  # stands for an instruction: a name, hashed by identity
        def __init__(self, name):
            self.name = name

    node = Node

    w, c, k1, k2 = node("while.1"), node("conditional.2"), node("k1"), node("k2")
    plan = WhilePlan([], [], [k1], None, [k2], [], [])
    sched = SimpleNamespace(control={w: plan}, kernels=[w])
    out = ControlRuns()
    _walk(sched, [w], 1, {("while.1", "cond"): 5}, out)  # the body is not counted
    assert out.kernels == {k1: 5, k2: 4} and not out.unknown
    out = ControlRuns()
    _walk(sched, [w], 1, {}, out)  # neither: unknown, not guessed
    assert out.kernels == {k1: None, k2: None} and out.unknown
    cplan = CondPlan(None, [([k1], []), ([k2], [])])
    sched = SimpleNamespace(control={c: cplan}, kernels=[c])
    out = ControlRuns()
    _walk(sched, [c], 1, {("conditional.2", "branch0"): 0}, out)
    assert out.kernels == {k1: 0, k2: 1}


def test_unknown_costs_print_as_question_marks():
    from ember.explain.roofline import KernelProfile, Profile, format_profile

    nan = float("nan")
    row = KernelProfile("while.3", "while", nan, nan, nan, 1e-3, 1e9, 1e9,
                        detail="loop: 2 kernels inside, iterations unknown")
    text = format_profile(Profile("f", [row], MACHINE, 5, 2e-3))
    line = next(t for t in text.splitlines() if "while.3" in t)
    assert "while.3 (loop: 2 kernels inside, iterations unknown)" in line
    assert line.split().count("?") >= 6 and row.bound == "?"


def test_example_arguments_keep_scalars_scalar():
    from ember.explain.roofline import example_arguments

    fn = ember.jit(fori_program)
    vals = example_arguments(fn, (np.ones(3, np.float32), np.int32(2)), {})
    assert [v.shape for v in vals] == [(3,), ()]
