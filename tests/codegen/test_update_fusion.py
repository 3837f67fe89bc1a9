"""dynamic-update-slice in fusions: `x.at[window].set(v)` becomes one (algsimp), fuses into
the kernel that reads it (which then reads x or v region by region, regions.py), and as a
fusion root with its update computed by fused producers writes just its window into x's
buffer where x dies there (in_place.py, update_slice.py), unless the update reads x."""

from __future__ import annotations

import numpy as np
import pytest
from test_region_loops import check

import ember
from ember.backends import cpu
from ember.backends.cpu.plan.in_place import in_place_operands
from ember.lowering import lower_jaxpr


def _kernels(f, *args):
    m = lower_jaxpr(ember.make_jaxpr(f)(*args)).module
    exe = check(m, *args)
    return exe, m


def test_at_set_fuses_into_its_reader():
    """x.at[1:-1, 1:-1].set(v) read by one elementwise op: a dynamic-update-slice (algsimp)
    fused into the reader's kernel, which reads x or v region by region."""
    def f(x):
        return x.at[1:-1, 1:-1].set(x[1:-1, 1:-1] * 3.0) * 2.0

    x = np.random.default_rng(1).standard_normal((17, 33)).astype(np.float32)
    exe, _ = _kernels(f, x)
    assert exe.kernel_names == ["fusion"]
    assert " select " not in exe.unoptimized_ir
    want = x.copy()
    want[1:-1, 1:-1] *= 3
    np.testing.assert_array_equal(exe(x), want * 2)


def test_update_with_other_users_is_not_duplicated():
    """An update that is also a result is computed once, not copied into its reader: the
    reader's kernel takes it as an extra output (multi-output fusion, passes/fusion_merge.py),
    so one kernel writes both results."""
    def f(x, u):
        y = ember.lax.dynamic_update_slice(x, u, (2, 3))
        return y, y * 2.0

    x = np.random.default_rng(2).standard_normal((9, 8)).astype(np.float32)
    u = np.ones((3, 4), np.float32)
    m = lower_jaxpr(ember.make_jaxpr(f)(x, u)).module
    exe = cpu.compile(m)
    got = exe(x, u)
    want = x.copy()
    want[2:5, 3:7] = 1
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want * 2)
    assert len(exe.kernel_names) == 1
    assert exe.as_text().count(" dynamic-update-slice(") == 1
    optimized = cpu.optimize(m)
    reasons = [str(d) for d in optimized.fusion_decisions]
    assert any("updated in place once, not duplicated" in r for r in reasons), reasons
    (merge,) = optimized.fusion_merges
    assert merge.kind == "producer-consumer" and merge.first.startswith("dynamic-update-slice")


@pytest.mark.parametrize("start", [-3, 0, 2, 5, 40])
def test_fused_update_at_dynamic_starts(start):
    """Starts only known at run time (a negative one counts from the end, as in JAX; then
    clamped so the window fits)."""
    def f(x, u, i):
        return ember.lax.dynamic_update_slice(x, u * 2.0, (i, 1)) + 1.0

    x = np.random.default_rng(3).standard_normal((11, 7)).astype(np.float32)
    u = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    exe, m = _kernels(f, x, u, np.int32(start))
    assert exe.kernel_names == ["fusion"]
    s = min(max(start + 11 if start < 0 else start, 0), 11 - 4)
    want = x.copy()
    want[s:s + 4, 1:6] = u * 2
    np.testing.assert_array_equal(exe(x, u, np.int32(start)), want + 1)


def _fused_updates(f, *args):
    """The fusions rooted at a dynamic-update-slice in f's optimized module (loop bodies
    included)."""
    m = cpu.optimize(lower_jaxpr(ember.make_jaxpr(f)(*args)).module)
    return [i for c in m.computations for i in c.instructions
            if i.opcode == "fusion" and i.fused_computation.root.opcode
            == "dynamic-update-slice"]


def _loop_update(reads_target: bool):
    def f(x, u):
        def body(i, x):
            v = u * i.astype(np.float32)
            if reads_target:
                v = v + x[0:1, 0:1]
            return ember.lax.dynamic_update_slice(x, v, (2, 3))
        return ember.lax.fori_loop(0, 5, body, x)
    return f


def _loop_update_numpy(x, u, reads_target: bool):
    x = x.copy()
    for i in range(5):
        v = u * np.float32(i)
        if reads_target:
            v = v + x[0:1, 0:1]
        x[2:5, 3:7] = v
    return x


@pytest.mark.parametrize("reads_target", [False, True])
def test_fused_update_in_a_loop(reads_target, monkeypatch):
    """The update's producers fuse under it, and the kernel writes just the window into
    the array updated; an update that reads that array is computed in a kernel of its
    own first (so the window's writes cannot change what it reads), and the update is
    still written in place."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 33)).astype(np.float32)
    u = rng.standard_normal((3, 4)).astype(np.float32)
    f = _loop_update(reads_target)
    (fused,) = _fused_updates(f, x, u)
    root = fused.fused_computation.root
    target = root.operands[0]
    assert target.opcode == "parameter"  # the updated array is never fused
    assert (root.operands[1].opcode == "parameter") == reads_target
    assert in_place_operands(fused) == [target.parameter_number]
    # and the in-place kernel (the window's loops only) is the one emitted
    from ember.backends.cpu.emit import update_slice

    emitted = []
    real = update_slice.emit_update_slice_in_place
    monkeypatch.setattr(update_slice, "emit_update_slice_in_place",
                        lambda b, dus, *a: emitted.append(dus.parent.name) or real(b, dus, *a))
    exe = cpu.compile(lower_jaxpr(ember.make_jaxpr(f)(x, u)).module, use_cache=False)
    assert len(emitted) == 1 and emitted[0].startswith("fused_computation"), emitted
    want = _loop_update_numpy(x, u, reads_target)
    np.testing.assert_array_equal(exe(x, u), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x, u)), want)


def test_update_reading_its_target_stays_whole_outside_loops():
    """x.at[...].set(g(x)) on the caller's x (never written): one kernel writes the new
    array region by region, g fused in."""
    def f(x):
        return x.at[2:5, 1:4].set(x[0:3, 0:3] * 2.0)

    x = np.random.default_rng(7).standard_normal((9, 6)).astype(np.float32)
    exe, _ = _kernels(f, x)
    assert exe.kernel_names == ["fusion"]
    want = x.copy()
    want[2:5, 1:4] = x[0:3, 0:3] * 2
    np.testing.assert_array_equal(exe(x), want)


def test_jacobi_with_at_set_matches_numpy():
    """Two .at[1:-1].set per step, each from the other array (1-D), and a 2-D update that
    reads the grid it updates."""
    def jacobi(a, b):
        def step(i, c):
            a, b = c
            b = b.at[1:-1].set(0.5 * (a[:-2] + a[2:]))
            a = a.at[1:-1].set(0.5 * (b[:-2] + b[2:]))
            return a, b
        return ember.lax.fori_loop(0, 9, step, (a, b))

    def grid(g):
        def step(i, g):
            return g.at[1:-1, 1:-1].set(0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2]
                                                + g[1:-1, 2:]))
        return ember.lax.fori_loop(0, 6, step, g)

    rng = np.random.default_rng(6)
    a = rng.standard_normal(101).astype(np.float32)
    b = a.copy()
    got = ember.jit(jacobi)(a, b)
    wa, wb = a.copy(), b.copy()
    for _ in range(9):
        wb[1:-1] = np.float32(0.5) * (wa[:-2] + wa[2:])
        wa[1:-1] = np.float32(0.5) * (wb[:-2] + wb[2:])
    np.testing.assert_array_equal(np.asarray(got[0]), wa)
    np.testing.assert_array_equal(np.asarray(got[1]), wb)
    g = rng.standard_normal((19, 23)).astype(np.float32)
    want = g.copy()
    for _ in range(6):
        want[1:-1, 1:-1] = np.float32(0.25) * (want[:-2, 1:-1] + want[2:, 1:-1]
                                               + want[1:-1, :-2] + want[1:-1, 2:])
    np.testing.assert_array_equal(np.asarray(ember.jit(grid)(g)), want)
