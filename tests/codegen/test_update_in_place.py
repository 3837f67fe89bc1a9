"""Scatter and dynamic-update-slice written into their operand's buffer (in_place.py,
scatter.py, update_slice.py): a loop's carried array is updated where it lies, with no
copy of the whole array per iteration, and the results still equal NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax


@pytest.fixture(autouse=True)
def cpu_backend(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")


def _jacobi(steps):
    def run(g):
        def body(i, g):
            interior = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
            return g.at[1:-1, 1:-1].set(interior)
        return lax.fori_loop(0, steps, body, g)
    return run


def _jacobi_numpy(g, steps):
    want = g.astype(np.float64)
    for _ in range(steps):
        new = want.copy()  # Jacobi: every interior point from the previous grid
        new[1:-1, 1:-1] = 0.25 * (want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2]
                                  + want[1:-1, 2:])
        want = new
    return want


@pytest.mark.parametrize("shape", [(5, 4), (33, 17), (128, 96)])
def test_jacobi_updates_the_grid_in_place(shape):
    g = np.zeros(shape, np.float32)
    g[0] = 1
    g[:, -1] = np.linspace(0, 2, shape[0])
    f = _jacobi(30)
    np.testing.assert_allclose(np.asarray(ember.jit(f)(g)), _jacobi_numpy(g, 30),
                               rtol=1e-5, atol=1e-6)
    stats = ember.jit(f).lower(g).compile().memory_analysis()
    rows, cols = shape
    grid, interior = rows * cols * 4, (rows - 2) * (cols - 2) * 4
    # the loop state is the output buffer itself; scratch: one interior-sized temporary
    # (the new interior) and a few scalars, never a second grid
    assert "written by while" in stats.buffer_assignment
    assert stats.temp_size_in_bytes <= interior + 4 * 64, stats.buffer_assignment
    assert rows < 16 or stats.temp_size_in_bytes < grid  # (tiny grids: scalars dominate)


def test_scan_writes_one_row_of_its_stacked_outputs_per_step():
    def f(x):
        def step(c, _):
            c = c * 0.5 + 1.0
            return c, c * 2
        return lax.scan(step, x, None, length=50)

    x = np.linspace(-1, 1, 37).astype(np.float32)
    compiled = ember.jit(f).lower(x).compile()
    stats = compiled.memory_analysis()
    c, ys = compiled(x)
    want = []
    cc = x.astype(np.float64)
    for _ in range(50):
        cc = cc * 0.5 + 1.0
        want.append(cc * 2)
    np.testing.assert_allclose(np.asarray(ys), np.array(want), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(c), cc, rtol=1e-6)
    # the stacked f32[50,37] lives in the output; no copy of it is made in the loop
    assert stats.temp_size_in_bytes < 50 * 37 * 4, stats.buffer_assignment
    # the update kernel (which computes the row c * 2 itself: a fusion rooted at the
    # update) takes the stack once, first (written, never read: no copy), then the new c
    # and the step number (and the old c, which a dead copy of the step in the fused
    # computation names: the kernel never reads it)
    dus = [k.name for k in compiled.kernels() if k.name.startswith("dynamic-update-slice")
           or (k.instruction.opcode == "fusion"
               and k.instruction.fused_computation.root.opcode == "dynamic-update-slice")]
    assert len(dus) == 1, [k.name for k in compiled.kernels()]
    head = compiled.llvm_ir(dus[0]).split("{")[0]
    args = head.split("(", 1)[1].split(", ptr")
    assert "writeonly" in args[0] and head.count("writeonly") == 1, head
    assert head.count("ptr ") <= 4, head


@pytest.mark.parametrize("start", [-3, 0, 2, 5, 40])
def test_dynamic_update_slice_in_a_loop_clamps_like_jax(start):
    # the update window is clamped into the array (never written out of bounds)
    # (jax.jit gives the same values; negative starts count from the end)
    def f(x, u):
        def body(i, x):
            return lax.dynamic_update_slice(x, u + i.astype(jnp.float32), (start + i,))
        return lax.fori_loop(0, 3, body, x)

    x = np.zeros(9, np.float32)
    u = np.arange(1, 5, dtype=np.float32)
    want = x.copy()
    for i in range(3):
        s = start + i + (9 if start + i < 0 else 0)  # negative: from the end, as JAX
        s = min(max(s, 0), 9 - 4)
        want[s:s + 4] = u + i
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x, u)), want)


def test_update_whose_old_value_is_read_later_is_not_in_place():
    # the old carry is read after the update: the update must go to a new buffer
    def f(x):
        def body(i, x):
            y = x.at[2:5].set(x[:3] * 10)
            return y + x.sum()
        return lax.fori_loop(0, 3, body, x)

    x = np.arange(8, dtype=np.float32)
    want = x.astype(np.float64)
    for _ in range(3):
        y = want.copy()
        y[2:5] = want[:3] * 10
        want = y + want.sum()
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x)), want, rtol=1e-6)


def test_scatter_add_with_duplicates_in_place_in_a_loop():
    idx = np.array([0, 3, 3, 7, 1], np.int32)

    def f(x, v):
        def body(i, x):
            return x.at[idx].add(v * (i + 1).astype(jnp.float32))
        return lax.fori_loop(0, 4, body, x)

    x = np.zeros(8, np.float32)
    v = np.array([1, 2, 3, 4, 5], np.float32)
    want = x.astype(np.float64)
    for i in range(4):
        np.add.at(want, idx, v * (i + 1))
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x, v)), want)


def _swaps(f, *args):
    from ember.backends.cpu.plan.loops_native import WhilePlan
    from ember.backends.cpu.plan.schedule import build_schedule

    sched = build_schedule(ember.jit(f).lower(*args).compile()._compiled.optimized)
    return [p.swaps for p in sched.control.values() if isinstance(p, WhilePlan)]


@pytest.mark.parametrize("steps", [0, 1, 2, 7])
def test_carry_buffers_swap_instead_of_copying(steps):
    # sin may rerun its loop precisely, so the body cannot write the carry in place: the
    # carry and the body's result trade places each iteration (odd counts end in the
    # temporary, and one copy puts the result back)
    def f(x):
        return lax.fori_loop(0, steps, lambda i, x: x * 0.99 + 0.01 * jnp.sin(x), x)

    x = np.linspace(-3, 3, 3001).astype(np.float32)
    want = x.copy()
    for _ in range(steps):
        want = want * np.float32(0.99) + np.float32(0.01) * np.sin(want)
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x)), want, rtol=2e-6, atol=1e-6)
    if steps:
        assert [len(s) for s in _swaps(f, x)] == [1]


def test_swaps_with_a_permuted_carry_and_a_data_dependent_trip_count():
    def f(a, b, n):
        def cond(s):
            return s[2] < n

        def body(s):
            a, b, k = s
            return jnp.tanh(b) * 2, a + jnp.sin(b), k + 1  # b's old value read twice

        return lax.while_loop(cond, body, (a, b, 0))

    a = np.linspace(-1, 1, 2048).astype(np.float32)
    b = np.linspace(2, -2, 2048).astype(np.float32)
    for n in (0, 3, 4):
        wa, wb = a.astype(np.float64), b.astype(np.float64)
        for _ in range(n):
            wa, wb = np.tanh(wb) * 2, wa + np.sin(wb)
        ra, rb, k = ember.jit(f)(a, b, n)
        np.testing.assert_allclose(np.asarray(ra), wa, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(rb), wb, rtol=1e-5, atol=1e-6)
        assert int(k) == n
    assert [len(s) for s in _swaps(f, a, b, 3)] == [2]


def test_nested_loops_swap_their_own_carries():
    def f(x):
        def outer(i, x):
            y = lax.fori_loop(0, 3, lambda j, y: jnp.sin(y) + x * 0.1, x)
            return jnp.cos(y) * 0.5 + x
        return lax.fori_loop(0, 5, outer, x)

    x = np.linspace(-1, 1, 1500).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(5):
        y = want
        for _ in range(3):
            y = np.sin(y) + want * 0.1
        want = np.cos(y) * 0.5 + want
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x)), want, rtol=1e-5, atol=1e-6)
    assert sorted(len(s) for s in _swaps(f, x)) == [1, 1]
