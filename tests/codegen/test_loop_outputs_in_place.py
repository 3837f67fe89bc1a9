"""Loop bodies whose carried arrays are written in place although their new values have
other readers: a multi-output fusion of two window updates (FDTD's ex and ey, siblings
through the hz they both read) writes each into its own carry (in_place.py
`in_place_outputs`, emitted output by output: emit/update_slice.py), and a later kernel
(hz's update) reads those new values from the carries (loops_native._update_in_place).
Each program is checked against NumPy, and its loop plan has no full-size temporary and no
copy or swap of an array leaf; programs where an output reads another's carry, or a
later kernel reads the old carry, keep their temporaries and their values. A leapfrog's
(prev, u) <- (u, new) copies u into prev without staging it first (loops_native.py: only
an old value that another copy overwrites is staged).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends.cpu.plan.in_place import in_place_outputs
from ember.backends.cpu.plan.loops_native import WhilePlan
from ember.backends.cpu.plan.schedule import build_schedule


def _plan(f, *args) -> tuple[WhilePlan, object]:
    compiled = ember.jit(f).lower(*args).compile()
    sched = build_schedule(compiled._compiled.optimized)
    (plan,) = [p for p in sched.control.values() if isinstance(p, WhilePlan)]
    return plan, compiled


def _array_copies(plan: WhilePlan) -> list:
    """The update copies and swaps of the loop's array leaves (scalars aside)."""
    return [pair for pair in plan.update + plan.swaps if pair[1].shape.rank > 0]


def _yee(i, c, cross=False):
    ex, ey, hz = c
    ey = ey.at[0].set(i.astype(ey.dtype))
    ey = ey.at[1:].set(ey[1:] - 0.5 * (hz[1:] - hz[:-1]))
    upd = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
    if cross:  # ex's update also reads ey's old carry: ey cannot be written first
        upd = upd + 0.25 * ey[:, 1:]
    ex = ex.at[:, 1:].set(upd)
    hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1]
                                                   + ey[1:, :-1] - ey[:-1, :-1]))
    return ex, ey, hz


def _numpy_yee(ex, ey, hz, steps, cross=False):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for i in range(steps):
        ey[0] = i
        ey[1:] = ey[1:] - 0.5 * (hz[1:] - hz[:-1])
        upd = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        if cross:
            upd = upd + 0.25 * ey[:, 1:]
        ex[:, 1:] = upd
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1]
                                             + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


@pytest.mark.parametrize("shape", [(3, 40), (17, 9), (40, 66)])
def test_yee_update_writes_every_field_in_place(shape, x64) -> None:
    rng = np.random.default_rng(shape[0])
    fields = tuple(rng.standard_normal(shape) for _ in range(3))
    f = lambda ex, ey, hz: lax.fori_loop(0, 6, _yee, (ex, ey, hz))  # noqa: E731
    got = ember.jit(f)(*fields)
    for g, w in zip(got, _numpy_yee(*fields, 6), strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)
    plan, compiled = _plan(f, *fields)
    assert _array_copies(plan) == [] and plan.stage == []
    nbytes = fields[0].nbytes
    # (the temporaries left are the two counters and the loop's predicate)
    assert compiled.memory_analysis().temp_size_in_bytes < nbytes
    outs = [k for k in plan.body if k.shape.is_tuple]
    if shape[0] > 3:  # the ex and ey updates are one kernel, both outputs in place
        assert [sorted(in_place_outputs(k)) for k in outs] == [[0, 1]]


def test_an_output_reading_another_carry_keeps_its_order(x64) -> None:
    """ex's update reads ey's old carry: ey's update must not be written over it first,
    whatever the kernels' order; the values say it was not."""
    rng = np.random.default_rng(3)
    fields = tuple(rng.standard_normal((24, 31)) for _ in range(3))
    f = lambda ex, ey, hz: lax.fori_loop(  # noqa: E731
        0, 5, lambda i, c: _yee(i, c, cross=True), (ex, ey, hz))
    got = ember.jit(f)(*fields)
    for g, w in zip(got, _numpy_yee(*fields, 5, cross=True), strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


def test_jacobi_pair_writes_both_carries_in_place() -> None:
    """b's new value is read by a's update in the same step: b is written into its carry
    and read from there, no temporary and no swap (it used to be a temporary swapped with
    b, the whole array copied into it each step)."""
    def step(i, c):
        a, b = c
        b = b.at[1:-1].set(0.5 * (a[:-2] + a[2:]))
        return a.at[1:-1].set(0.5 * (b[:-2] + b[2:])), b

    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(700).astype(np.float32), rng.standard_normal(700).astype(
        np.float32)
    f = lambda a, b: lax.fori_loop(0, 9, step, (a, b))  # noqa: E731
    wa, wb = a.copy(), b.copy()
    for _ in range(9):
        wb[1:-1] = np.float32(0.5) * (wa[:-2] + wa[2:])
        wa[1:-1] = np.float32(0.5) * (wb[:-2] + wb[2:])
    ga, gb = ember.jit(f)(a, b)
    np.testing.assert_allclose(np.asarray(ga), wa, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-6, atol=1e-6)
    plan, compiled = _plan(f, a, b)
    assert _array_copies(plan) == [] and plan.stage == []
    assert compiled.memory_analysis().temp_size_in_bytes < a.nbytes


def test_old_carry_read_after_the_update_keeps_a_temporary() -> None:
    """b's update has another reader (a's update), but a later kernel also reads b's OLD
    value: b's new value must not overwrite the carry before that read."""
    def step(i, c):
        a, b = c
        nb = b.at[1:-1].set(0.5 * (a[:-2] + a[2:]))
        na = a.at[1:-1].set(nb[1:-1] - 0.25 * b[:-2])  # (b[:-2]: the old carry, shifted)
        return na, nb

    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(600).astype(np.float32) for _ in range(2))
    f = lambda a, b: lax.fori_loop(0, 7, step, (a, b))  # noqa: E731
    wa, wb = a.copy(), b.copy()
    for _ in range(7):
        nb = wb.copy()
        nb[1:-1] = np.float32(0.5) * (wa[:-2] + wa[2:])
        wa[1:-1] = nb[1:-1] - np.float32(0.25) * wb[:-2]
        wb = nb
    ga, gb = ember.jit(f)(a, b)
    np.testing.assert_allclose(np.asarray(ga), wa, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), wb, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.bool_])
@pytest.mark.parametrize("shape, window", [((100,), (slice(3, -2),)),
                                           ((7, 45), (slice(1, None), slice(5, 44)))])
def test_swept_window_rows_start_with_a_peel_to_an_aligned_store(dtype, shape, window, x64,
                                                                  monkeypatch) -> None:
    """In a sweep, an in-place window row of 32 elements or more runs a scalar loop up to
    the first 64-byte aligned store (emit/update_slice.py), then the vector loop: every
    element is written once, whatever the buffer's alignment and the element size."""
    from ember.backends import cpu
    from ember.backends.cpu.plan import sweeps

    monkeypatch.setattr(sweeps, "BLOCK_ELEMENTS", 8)  # (so that these sizes make a sweep)
    rng = np.random.default_rng(len(shape))
    u = (rng.standard_normal(shape) * 4).astype(dtype)
    v = (rng.standard_normal(shape) * 4).astype(dtype)
    bits = dtype in (np.int8, np.bool_)

    def op(x, y):
        return x ^ y if bits else x - y * dtype(0.5)

    def step(i, c):
        u, v = c
        u = u.at[window].set(op(v[window], u[window]))
        return u, v.at[window].set(op(u[window], v[window]))

    f = lambda u, v: lax.fori_loop(0, 3, step, (u, v))  # noqa: E731
    wu, wv = u.copy(), v.copy()
    for _ in range(3):
        wu[window] = op(wv[window], wu[window])
        wv[window] = op(wu[window], wv[window])
    exe = cpu.compile(ember.jit(f).lower(u, v)._lowered.module, use_cache=False)
    gu, gv = exe(u, v)
    np.testing.assert_allclose(np.asarray(gu), wu, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gv), wv, rtol=1e-6)
    # (both members' kernels; LLVM keeps the peel loop's name)
    assert exe.llvm_ir.count("peel.loop:") == 2


@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_leapfrog_copies_the_old_value_without_a_stage(steps) -> None:
    """(prev, u) <- (u, new): u's buffer trades places with new's (a swap, no write), so u's
    old value is copied into prev directly; it used to be staged through a temporary
    first (two copies of the array per step)."""
    def step(i, c):
        prev, u = c
        new = 2 * u - prev + 0.25 * (jnp.roll(u, 1) - 2 * u + jnp.roll(u, -1))
        return u, new.at[0].set(0.0).at[-1].set(0.0)

    rng = np.random.default_rng(7)
    p0, u0 = (rng.standard_normal(1500).astype(np.float32) for _ in range(2))
    f = lambda p, u: lax.fori_loop(0, steps, step, (p, u))  # noqa: E731
    wp, wu = p0.copy(), u0.copy()
    for _ in range(steps):
        new = 2 * wu - wp + np.float32(0.25) * (np.roll(wu, 1) - 2 * wu + np.roll(wu, -1))
        new[0] = new[-1] = 0
        wp, wu = wu, new
    gp, gu = ember.jit(f)(p0, u0)
    np.testing.assert_allclose(np.asarray(gp), wp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(gu), wu, rtol=1e-5, atol=1e-5)
    if steps:
        plan, _ = _plan(f, p0, u0)
        assert plan.stage == [] and len(_array_copies(plan)) == 2  # one copy, one swap
        assert [len(plan.swaps)] == [1]
