"""Sweeps fused element by element (plan/sweep_fusion.py, emit/update_slice.py): one loop over
times computes every 1-D member's row, values an earlier member wrote passed in registers.

Random bodies of 1-D window updates (`X.at[s:n-e].set(c * X[s:n-e] + d * Y[s+o : n-e+o])`,
reads ahead of and behind the window) over three float64 arrays holding NaN, infinities
and signed zeros, with odd sizes and trip counts 0 to 4 (a runtime argument), are checked
bit for bit against the HLO interpreter, with the fused loop's least length lowered so
that even short arrays fuse; bodies that write one array twice or update a 2-D array must
not fuse, and still agree. The Jacobi body's plan (chain distances, times) and its
vectorized loop are checked directly.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from codegen_util import assert_same, edge_array

import ember
from ember import lax
from ember.backends import cpu
from ember.backends.cpu.plan import sweep_fusion, sweeps
from ember.backends.cpu.plan.loops_native import WhilePlan
from ember.backends.cpu.plan.schedule import build_schedule
from ember.hlo.evaluator import evaluate


def _sweeps(module) -> list[sweeps.Sweep]:
    sched = build_schedule(module)
    return [s for p in sched.control.values() if isinstance(p, WhilePlan) for s in p.sweeps]


def _body(rng: np.random.Generator, steps: int, distinct: bool) -> list[tuple]:
    """(target, source, s, e, o, c, d) per update; `distinct`: no array written twice.
    Each update after the first reads the array the one before it wrote (so the two are
    separate kernels, and the later one reads the earlier one's new values)."""
    targets = rng.permutation(3)[:steps] if distinct else rng.integers(0, 3, steps)
    body = []
    for j, x in enumerate(targets):
        y = int(targets[j - 1] if j and targets[j - 1] != x
                else rng.choice([k for k in range(3) if k != x]))
        s, e = (int(v) for v in rng.integers(0, 4, 2))
        o = int(rng.integers(-s, e + 1))  # Y's rows [s + o, n - e + o) stay in [0, n)
        body.append((int(x), y, s, e, o, float(rng.uniform(0.2, 0.9)),
                     float(rng.uniform(-1, 1))))
    return body


def _compile(body, n: int, arrays):
    def step(i, c):
        c = list(c)
        for x, y, s, e, o, cx, dy in body:
            c[x] = c[x].at[s:n - e].set(cx * c[x][s:n - e] + dy * c[y][s + o:n - e + o])
        return tuple(c)

    f = lambda a, b, c, k: lax.fori_loop(0, k, step, (a, b, c))  # noqa: E731
    module = ember.jit(f).lower(*arrays, 3)._lowered.module
    # (the planner's constants are not in the cache key)
    return module, cpu.compile(module, use_cache=False)


def _check_trips(module, exe, arrays, what: str) -> None:
    for k in range(5):
        args = (*arrays, np.int64(k))
        assert_same(tuple(exe(*args)), tuple(evaluate(module, *args)), what=f"{what} trips {k}")


@pytest.mark.parametrize("seed", range(10))
def test_random_fused_bodies_are_bit_exact(seed, x64, monkeypatch) -> None:
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)
    monkeypatch.setattr(sweep_fusion, "MIN_TIMES", 1)
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(15, 40)) | 1
    arrays = [edge_array("float64", (n,), seed=seed * 3 + k) for k in range(3)]
    body = _body(rng, int(rng.integers(2, 4)), distinct=True)
    module, exe = _compile(body, n, arrays)
    (sweep,) = _sweeps(exe.module)
    assert sweep.fusion is not None, body
    assert ".fused" in exe.llvm_ir
    _check_trips(module, exe, arrays, f"body {body}")


@pytest.mark.parametrize("seed", range(4))
def test_an_array_written_twice_is_not_fused(seed, x64, monkeypatch) -> None:
    """A second writer would leave the first one's register values stale: such sweeps
    stay blocks (and agree bit for bit)."""
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)
    monkeypatch.setattr(sweep_fusion, "MIN_TIMES", 1)
    rng = np.random.default_rng(200 + seed)
    n = 23
    arrays = [edge_array("float64", (n,), seed=seed + k) for k in range(3)]
    body = _body(rng, 2, distinct=False)
    body[1] = (body[0][0], *body[1][1:])  # (the second writes the first one's array too)
    if body[1][1] == body[0][0]:
        body[1] = (body[0][0], body[0][1], *body[1][2:])
    module, exe = _compile(body, n, arrays)
    assert [s.fusion for s in _sweeps(exe.module)] == [None]
    assert ".fused" not in exe.llvm_ir
    _check_trips(module, exe, arrays, f"body {body}")


def test_two_dimensional_updates_are_not_fused(monkeypatch) -> None:
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)
    monkeypatch.setattr(sweep_fusion, "MIN_TIMES", 1)

    a, b = (edge_array("float32", (19, 3), seed=k) for k in range(2))
    f = lambda a, b: lax.fori_loop(0, 3, _jacobi_step, (a, b))  # noqa: E731
    module = ember.jit(f).lower(a, b)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    assert [s.fusion for s in _sweeps(exe.module)] == [None]
    assert_same(tuple(exe(a, b)), tuple(evaluate(module, a, b)))


def _jacobi_step(i, c):
    a, b = c
    b = b.at[1:-1].set(0.5 * (a[:-2] + a[2:]))
    return a.at[1:-1].set(0.5 * (b[:-2] + b[2:])), b


@pytest.mark.parametrize("extra", [-1, 0])
def test_fewer_than_min_times_stay_blocks(extra, x64, monkeypatch) -> None:
    """Jacobi's loop runs times 2 .. n - 2: n - 4 of them, fused from MIN_TIMES on (fewer:
    the loop's setup would cost more than it saves)."""
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)
    n = sweep_fusion.MIN_TIMES + 4 + extra
    a, b = edge_array("float64", (n,), seed=3), edge_array("float64", (n,), seed=4)
    f = lambda a, b: lax.fori_loop(0, 3, _jacobi_step, (a, b))  # noqa: E731
    module = ember.jit(f).lower(a, b)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    (sweep,) = _sweeps(exe.module)
    assert (sweep.fusion is not None) == (extra == 0)
    assert_same(tuple(exe(a, b)), tuple(evaluate(module, a, b)))


def test_jacobi_fuses_with_a_two_deep_chain(x64) -> None:
    """b's row r is a's rows r and r + 2; a's row r (element r + 1) is b's elements r and
    r + 2, which b's update computed two times before and at this time: a chain of two
    registers, and one of a's rows, loaded once; the loop runs times 2 .. n - 2 and is
    vectorized."""
    n = 301
    a, b = edge_array("float64", (n,), seed=1), edge_array("float64", (n,), seed=2)
    f = lambda a, b, k: lax.fori_loop(0, k, _jacobi_step, (a, b))  # noqa: E731
    module = ember.jit(f).lower(a, b, 3)._lowered.module
    exe = cpu.compile(module)
    (sweep,) = _sweeps(exe.module)
    fusion = sweep.fusion
    # sources: b's write (a chain of two), a's write (read by none), a's rows loaded
    # once, for a[r + 2] and, two times later, a[r]
    assert (fusion.begin, fusion.end, fusion.depth) == (2, n - 2, [2, 0, 2])
    load = fusion.sources[2]
    assert isinstance(load, sweep_fusion.Load) and load.offset == 2
    assert sorted((r.source, r.distance) for r in fusion.reads) == [(0, 0), (0, 2), (2, 0),
                                                                     (2, 2)]
    fused = re.search(r"define void @\S*\.fused\(.*?\n}", exe.llvm_ir, re.S).group(0)
    # the chains vectorized: one vector load (a) for two vector stores (b, a)
    loads, stores = (len(re.findall(rf"{op} <\d+ x double>", fused)) for op in ("load", "store"))
    assert 0 < loads < stores, (loads, stores)
    for k in range(5):
        args = (a, b, np.int64(k))
        assert_same(tuple(exe(*args)), tuple(evaluate(module, *args)), what=f"trips {k}")


def _five_point_step(i, c):
    a, b = c
    b = b.at[2:-2].set(a[:-4] + 2.0 * a[1:-3] - a[4:])
    return a.at[1:-1].set(b[1:-1] * 0.5 - a[1:-1]), b


@pytest.mark.parametrize("max_depth", [8, 3])
def test_rows_read_at_several_offsets_load_once(max_depth, x64, monkeypatch) -> None:
    """a's rows are read at offsets 0, 1 and 4 by b's update and, a time later (a lags
    one row: it overwrites a row b reads), in its window by a's own: one load of row
    t + 4 at time t serves them all, four registers deep. With chains at most three
    deep the reads stay loads of their own, and the writes still fuse."""
    monkeypatch.setattr(sweep_fusion, "MIN_TIMES", 1)
    monkeypatch.setattr(sweep_fusion, "MAX_DEPTH", max_depth)
    n = 41
    a, b = edge_array("float64", (n,), seed=5), edge_array("float64", (n,), seed=6)
    f = lambda a, b, k: lax.fori_loop(0, k, _five_point_step, (a, b))  # noqa: E731
    module = ember.jit(f).lower(a, b, 3)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    (sweep,) = _sweeps(exe.module)
    assert sweep.lags == [0, 1]
    loads = [(s.offset, sweep.fusion.depth[x]) for x, s in enumerate(sweep.fusion.sources)
             if isinstance(s, sweep_fusion.Load)]
    assert loads == ([(4, 4)] if max_depth >= 4 else [])
    for k in range(5):
        args = (a, b, np.int64(k))
        assert_same(tuple(exe(*args)), tuple(evaluate(module, *args)), what=f"trips {k}")


def test_a_multi_output_member_fuses(x64, monkeypatch) -> None:
    """b's and c's updates both read a: one multi-output kernel writing both in place; a's
    update then reads b's and c's new rows from two chains, one per output, and its own
    window from a's shared loads."""
    monkeypatch.setattr(sweep_fusion, "MIN_TIMES", 1)

    def step(i, s):
        a, b, c = s
        b = b.at[1:-1].set(a[:-2] * 0.5 - a[2:])
        c = c.at[2:].set(a[:-2] + a[1:-1] * 0.25)
        return a.at[1:-2].set(b[2:-1] - c[1:-2] * a[1:-2]), b, c

    n = 37
    arrays = [edge_array("float64", (n,), seed=7 + k) for k in range(3)]
    f = lambda a, b, c, k: lax.fori_loop(0, k, step, (a, b, c))  # noqa: E731
    module = ember.jit(f).lower(*arrays, 3)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    (sweep,) = _sweeps(exe.module)
    assert len(sweep.members) == 2 and sweep.fusion is not None
    writes = [s for s in sweep.fusion.sources if isinstance(s, sweep_fusion.Write)]
    assert [(w.member, w.output) for w in writes] == [(0, 0), (0, 1), (1, 0)]
    # (source 3: a's rows, loaded once for b's and c's reads and a's own)
    assert sorted(r.source for r in sweep.fusion.reads if r.member == 1) == [0, 1, 3]
    assert isinstance(sweep.fusion.sources[3], sweep_fusion.Load)
    _check_trips(module, exe, arrays, "multi-output member")
