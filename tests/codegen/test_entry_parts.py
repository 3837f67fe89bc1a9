"""A long straight-line program's entry is split into parts of at most ENTRY_PART_CALLS
kernel calls (emitter.py: LLVM's code generation of one huge block grows faster than its
length): the parts are unoptimized `noinline` functions the entry calls in order, kernels
run in program order across the parts (serially and split among threads), and a program
short enough keeps one entry function."""

from __future__ import annotations

import re

import numpy as np
import pytest
from codegen_util import unrolled_numpy, unrolled_program

import ember
from ember.backends import cpu
from ember.backends.cpu.emit import emitter


def _exe(f, *args):
    cpu.clear_cache()  # (the part size is not part of the cache key)
    return ember.jit(f).lower(*args).compile()._compiled.executable


def _parts(exe) -> list[str]:
    return re.findall(r'^define [^@]*@"?(ember_entry\.part\d+)"?\(.*$', exe.unoptimized_ir, re.M)


@pytest.mark.parametrize("n", [1000, 300_000])  # the larger kernels split among threads
def test_parts_run_every_kernel_in_order(monkeypatch, n):
    monkeypatch.setattr(emitter, "ENTRY_PART_CALLS", 3)
    x = np.random.default_rng(0).random(n).astype(np.float32)
    steps = 5
    exe = _exe(unrolled_program(steps), x)
    calls = len(exe.kernel_names)
    assert calls > 3 * 2  # three parts at least
    parts = _parts(exe)
    assert len(parts) == -(-calls // 3)
    for line in re.findall(r'^define [^@]*@"?ember_entry\.part\d+"?\(.*$',
                           exe.unoptimized_ir, re.M):
        assert "optnone" in line and "noinline" in line
    if n > 1000:
        assert exe.parallel_kernels
    got_x, got_s = exe(x)
    want_x, want_s = unrolled_numpy(x, steps)
    np.testing.assert_allclose(got_x, want_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_s, want_s, rtol=1e-4)


def test_a_short_program_keeps_one_entry():
    x = np.random.default_rng(1).random(100).astype(np.float32)
    exe = _exe(unrolled_program(3), x)
    assert len(exe.kernel_names) <= emitter.ENTRY_PART_CALLS
    assert not _parts(exe)
    got_x, _ = exe(x)
    np.testing.assert_allclose(got_x, unrolled_numpy(x, 3)[0], rtol=1e-4, atol=1e-4)
