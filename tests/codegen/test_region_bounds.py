"""Kernels split at pad, concatenate and update borders never read outside their inputs: a
child process runs random programs of those ops (region_programs.py) on inputs placed
right after one inaccessible guard page and right before another, so a read of even one
element before or beyond an input faults; the results must also equal the interpreter's.
A fault kills the child (no Python exception can report it): the test then fails and
names the program it was running."""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import ctypes, mmap, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from region_programs import random_program
from ember.backends import cpu
from ember.hlo import print_module
from ember.hlo.evaluator import evaluate

libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
keep = []

def guarded(a, at_end):
    # a copy of `a` between two PROT_NONE pages, touching the first or the second
    pages = max(1, -(-a.nbytes // PAGE))
    mm = mmap.mmap(-1, (pages + 2) * PAGE)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    off = PAGE + (pages * PAGE - a.nbytes if at_end else 0)
    out = np.frombuffer(mm, dtype=a.dtype, count=a.size, offset=off).reshape(a.shape)
    out[...] = a
    for p in (base, base + (pages + 1) * PAGE):
        assert libc.mprotect(p, PAGE, 0) == 0
    keep.append(mm)
    return out

def same(g, w):
    g, w = np.asarray(g), np.asarray(w)
    if g.dtype.kind == "c":
        return same(g.real.copy(), w.real.copy()) and same(g.imag.copy(), w.imag.copy())
    if g.dtype.kind == "f":
        return np.array_equal(g.view(f"u{g.itemsize}"), w.view(f"u{w.itemsize}")) or (
            np.array_equal(g, w, equal_nan=True))
    return np.array_equal(g, w)

bad = []
for seed in range(int(sys.argv[2])):
    m, args = random_program(np.random.default_rng(5000 + seed), min_outer=1)
    print("START", seed, flush=True)
    print(print_module(m), flush=True)
    exe = cpu.compile(m)
    want = evaluate(m, *args)
    for at_end in (False, True):
        if not same(exe(*[guarded(a, at_end) for a in args]), want):
            bad.append(seed)
    print("DONE", seed, flush=True)
print("BAD", bad)
"""


def test_region_kernels_stay_inside_their_inputs():
    n = 40
    env = dict(os.environ, EMBER_BACKEND="cpu")
    r = subprocess.run([sys.executable, "-c", CHILD, HERE, str(n)], capture_output=True,
                       text=True, timeout=600, env=env)
    out = r.stdout
    if r.returncode != 0:
        last = out.rsplit("START", 1)[-1] if "START" in out else out
        raise AssertionError(f"child died ({r.returncode}) in program START{last[-3000:]}\n"
                             f"{r.stderr[-2000:]}")
    assert f"DONE {n - 1}" in out
    assert out.strip().endswith("BAD []"), out[-2000:]
