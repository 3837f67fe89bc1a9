"""Per-kernel timing and the roofline report: the instrumented build
(backends/cpu/profiling.py), the peak kernel (backends/cpu/peak.py), the machine's ceilings
(explain/hardware.py) and the report (explain/roofline.py). No timed assertions: only
structure, consistency and hand-counted costs."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.peak import fma_ir
from ember.backends.cpu.profiling import compile_profiled
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
    assert [k.kind for k in p.kernels] == ["exponential", "kInput", "kLoop"]
    exp, red, mul = p.kernels
    assert (exp.bytes, exp.flops, exp.transcendentals) == (8 * n, 0, n)
    assert (red.bytes, red.flops, red.transcendentals) == (4 * n + 4, 2 * n - 1, 0)
    assert (mul.bytes, mul.flops, mul.transcendentals) == (8 * n, n, 0)
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
    assert "exponential.0  exponential  8 kB" in out


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
