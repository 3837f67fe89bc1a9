"""Sweeps (plan/sweeps.py): consecutive in-place window updates of a loop body run together,
block by block, each member lagging the ones before it by the rows its reads need.

Random bodies of window updates (`X.at[s:n-e].set(c * X[s:n-e] + d * Y[s+o : n-e+o])`
over three carried arrays, 1-D and 2-D) compiled with tiny blocks (so lags cross block
borders) are checked against NumPy's sequential updates, over three iterations (the driver
runs forward, backward, forward); the plans of Jacobi and FDTD
bodies are checked for their members and lags; a read the planner cannot place by rows (a
reversed slice) keeps the updates apart.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends import cpu
from ember.backends.cpu.plan import sweeps
from ember.backends.cpu.plan.loops_native import WhilePlan
from ember.backends.cpu.plan.schedule import build_schedule


def _sweeps(f, *args) -> list[sweeps.Sweep]:
    sched = build_schedule(ember.jit(f).lower(*args).compile()._compiled.optimized)
    return [s for p in sched.control.values() if isinstance(p, WhilePlan) for s in p.sweeps]


def _random_body(rng: np.random.Generator, n: int, steps: int) -> list[tuple]:
    """(target, source, s, e, o, c, d) per update: X = target, Y = source (0..2)."""
    body = []
    for _ in range(steps):
        x, y = rng.choice(3, 2, replace=False)
        s, e = (int(v) for v in rng.integers(0, 3, 2))
        o = int(rng.integers(-s, e + 1))  # Y's rows [s + o, n - e + o) stay in [0, n)
        body.append((int(x), int(y), s, e, o, float(rng.uniform(0.2, 0.9)),
                     float(rng.uniform(-1, 1))))
    return body


def _ember_step(body, n):
    def step(i, c):
        c = list(c)
        for x, y, s, e, o, cx, dy in body:
            c[x] = c[x].at[s:n - e].set(cx * c[x][s:n - e] + dy * c[y][s + o:n - e + o])
        return tuple(c)
    return step


def _numpy_loop(body, n, arrays, trips):
    c = [a.copy() for a in arrays]
    for _ in range(trips):
        for x, y, s, e, o, cx, dy in body:
            c[x][s:n - e] = cx * c[x][s:n - e] + dy * c[y][s + o:n - e + o]
    return c


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("cols", [None, 3])
def test_random_window_updates_equal_numpy(seed, cols, monkeypatch) -> None:
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)  # blocks of 4 rows (2 when 2-D)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(9, 30))
    shape = (n,) if cols is None else (n, cols)
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    body = _random_body(rng, n, int(rng.integers(2, 6)))
    f = lambda a, b, c: lax.fori_loop(0, 3, _ember_step(body, n), (a, b, c))  # noqa: E731
    module = ember.jit(f).lower(*arrays)._lowered.module
    exe = cpu.compile(module, use_cache=False)  # (the block size is not in cache keys)
    got = exe(*arrays)
    for g, w in zip(got, _numpy_loop(body, n, arrays, 3), strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5,
                                   err_msg=f"body {body}")


def test_jacobi_pair_is_one_sweep_lagging_one_row() -> None:
    def step(i, c):
        a, b = c
        b = b.at[1:-1].set(0.5 * (a[:-2] + a[2:]))
        return a.at[1:-1].set(0.5 * (b[:-2] + b[2:])), b

    a = np.linspace(0, 1, 3000).astype(np.float32)
    f = lambda a, b: lax.fori_loop(0, 4, step, (a, b))  # noqa: E731
    (sweep,) = _sweeps(f, a, a[::-1].copy())
    # a's row r (element r + 1) needs b's rows r and r + 2: b one row ahead
    assert sweep.lags == [0, 1] and sweep.rows == [2998, 2998]
    assert sweep.extent == 2999 and sweep.block == sweeps.BLOCK_ELEMENTS
    wa, wb = a.copy(), a[::-1].copy()
    for _ in range(4):
        wb[1:-1] = np.float32(0.5) * (wa[:-2] + wa[2:])
        wa[1:-1] = np.float32(0.5) * (wb[:-2] + wb[2:])
    ga, gb = ember.jit(f)(a, a[::-1].copy())
    np.testing.assert_allclose(np.asarray(ga), wa, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-6)


def test_yee_step_is_one_sweep(x64) -> None:
    def step(t, c):
        ex, ey, hz = c
        ey = ey.at[0].set(jnp.ones_like(ey[0]) * t)
        ey = ey.at[1:].set(ey[1:] - 0.5 * (hz[1:] - hz[:-1]))
        ex = ex.at[:, 1:].set(ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (
            ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
        return ex, ey, hz

    fields = [np.random.default_rng(k).standard_normal((60, 66)) for k in range(3)]
    f = lambda *c: lax.fori_loop(0, 3, step, c)  # noqa: E731
    (sweep,) = _sweeps(f, *fields)
    # the row set, ex and ey's updates, hz's update: hz's row r reads ey's row r + 1,
    # which the ex/ey kernel writes at the same time, before it
    assert len(sweep.members) == 3 and sweep.lags == [0, 0, 0] and sweep.rows == [1, 60, 59]


def test_a_reversed_read_keeps_updates_apart() -> None:
    def step(i, c):
        a, b = c
        b = b.at[1:-1].set(0.5 * a[1:-1])
        return a.at[1:-1].set(b[::-1][1:-1] * 0.5 + a[1:-1]), b

    a = np.linspace(-1, 1, 4000).astype(np.float32)
    f = lambda a, b: lax.fori_loop(0, 3, step, (a, b))  # noqa: E731
    assert _sweeps(f, a, a * 2) == []
    wa, wb = a.copy(), a * 2
    for _ in range(3):
        wb[1:-1] = np.float32(0.5) * wa[1:-1]
        wa[1:-1] = wb[::-1][1:-1] * np.float32(0.5) + wa[1:-1]
    ga, gb = ember.jit(f)(a, a * 2)
    np.testing.assert_allclose(np.asarray(ga), wa, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-6)


def test_an_earlier_read_behind_a_later_write_sets_the_lag(monkeypatch) -> None:
    """b's update reads a's rows [0, n-1) (old values) while a's update writes rows from 2
    on: going forward a must lag two rows, or a block of a's writes would overwrite rows b
    reads in its next block; going backward (every other call of the sweep) a's writes are
    behind b's reads already. Trip counts 0 to 4 (a runtime argument) end after forward
    and backward runs alike."""
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)

    def step(i, c):
        a, b = c
        b = b.at[1:].set(a[:-1] * 0.5 + b[1:])
        return a.at[2:].set(b[2:] + a[2:] * 0.3), b

    rng = np.random.default_rng(11)
    a, b = (rng.standard_normal(29).astype(np.float32) for _ in range(2))
    f = lambda a, b, n: lax.fori_loop(0, n, step, (a, b))  # noqa: E731
    module = ember.jit(f).lower(a, b, 3)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    sched = build_schedule(exe.module)
    (sweep,) = [s for p in sched.control.values() if isinstance(p, WhilePlan)
                for s in p.sweeps]
    assert sweep.lags == [0, 2] and sweep.back_lags == [0, 0]
    assert "back.loop" in exe.llvm_ir  # (the driver's backward run)
    for n in range(5):
        wa, wb = a.copy(), b.copy()
        for _ in range(n):
            wb[1:] = wa[:-1] * np.float32(0.5) + wb[1:]
            wa[2:] = wb[2:] + wa[2:] * np.float32(0.3)
        ga, gb = exe(a, b, np.int32(n))
        np.testing.assert_allclose(np.asarray(ga), wa, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-5, atol=1e-6)


def test_a_backward_run_lags_where_a_forward_one_need_not(monkeypatch) -> None:
    """The mirror image: b's update reads a's rows from 2 on, a's update writes rows
    [0, n-2): forward they may run in step, backward a must lag two rows."""
    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 4)

    def step(i, c):
        a, b = c
        b = b.at[:-2].set(a[2:] * 0.5 + b[:-2])
        return a.at[:-2].set(b[:-2] - a[:-2] * 0.3), b

    rng = np.random.default_rng(12)
    a, b = (rng.standard_normal(31).astype(np.float32) for _ in range(2))
    f = lambda a, b: lax.fori_loop(0, 4, step, (a, b))  # noqa: E731
    module = ember.jit(f).lower(a, b)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    (sweep,) = [s for p in build_schedule(exe.module).control.values()
                if isinstance(p, WhilePlan) for s in p.sweeps]
    assert sweep.lags == [0, 0] and sweep.back_lags == [0, 2]
    wa, wb = a.copy(), b.copy()
    for _ in range(4):
        wb[:-2] = wa[2:] * np.float32(0.5) + wb[:-2]
        wa[:-2] = wb[:-2] - wa[:-2] * np.float32(0.3)
    ga, gb = exe(a, b)
    np.testing.assert_allclose(np.asarray(ga), wa, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-5, atol=1e-6)
