"""while and conditional compiled natively by the CPU backend (loops_native.py).

Each program is compiled with the CPU backend (checked: not the interpreter fallback) and
compared with the NumPy evaluator of the same program and with a NumPy reference: loops
over several dtypes, nested loops, cond inside while, scan with stacked outputs, fori_loop
with static and traced bounds, zero-trip loops, a permuting carry, a conditional whose
index is out of range (HLO text: the frontend clamps), and debug.print inside a loop.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends import cpu
from ember.hlo.evaluator.core import evaluate
from ember.hlo.parser import parse_module
from ember.tree_util import tree_leaves


@pytest.fixture(autouse=True)
def _cpu(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")


def _check(f, *args, rtol=1e-6, want=None):
    """Run `f` jitted on the CPU backend; compare with the evaluator (same HLO) and with
    `want` (a NumPy reference) when given. Returns the CPU result's leaves."""
    compiled = ember.jit(f).lower(*args).compile()._compiled
    assert compiled.backend == "cpu"
    exe = compiled.executable
    assert isinstance(exe, cpu.Executable)
    assert "while" in exe.as_text() or "conditional" in exe.as_text()
    got = [np.asarray(v) for v in tree_leaves(ember.jit(f)(*args))]
    module = compiled.lowered.module
    ref = evaluate(module, *[np.asarray(a) for a in tree_leaves(args)])
    ref = list(ref) if isinstance(ref, tuple) else [ref]
    assert len(ref) == len(got)
    for g, r in zip(got, ref):
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=rtol)
    if want is not None:
        for g, w in zip(got, tree_leaves(want)):
            np.testing.assert_allclose(g, np.asarray(w), rtol=rtol)
    return got


@pytest.mark.parametrize("n", [1, 7, 33, 1000])
def test_while_mixed_dtypes(n):
    x = np.linspace(-2, 2, n).astype(np.float32)

    def f(x):
        def cond(c):
            return (c[1] < 5) & ~c[4]

        def body(c):
            v, i, s, u, done = c
            v = v * 0.5 + jnp.cos(v)
            s = s + jnp.sum(v)
            u = u + (v[0] > 0).astype(jnp.uint8)
            return v, i + 1, s, u, s > 1e9

        init = (x, jnp.int32(0), jnp.float32(0.0), jnp.uint8(250), False)
        return lax.while_loop(cond, body, init)

    v, i, s, u = x.copy(), 0, np.float32(0), 250
    while i < 5:
        v = (v * np.float32(0.5) + np.cos(v)).astype(np.float32)
        s += v.sum(dtype=np.float32)
        u = (u + int(v[0] > 0)) % 256
        i += 1
    got = _check(f, x, rtol=1e-5, want=(v, np.int32(5), s, np.uint8(u), False))
    assert [g.dtype for g in got[1:]] == [np.int32, np.float32, np.uint8, np.bool_]


@pytest.mark.parametrize("shape", [(), (5,), (3, 17)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int16])
def test_fori_loop_static_bounds(shape, dtype):
    x = (np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) % 7).astype(dtype)
    f = lambda x: lax.fori_loop(0, 9, lambda i, c: c * 2 - i.astype(c.dtype) + 1, x)  # noqa: E731
    want = x.copy()
    for i in range(9):
        want = (want * 2 - dtype(i) + 1).astype(dtype)
    _check(f, x, want=want)


@pytest.mark.parametrize("lo,hi", [(0, 10), (3, 4), (5, 5), (7, 2)])
def test_fori_loop_traced_bounds_and_zero_trips(lo, hi):
    x = np.linspace(0, 1, 33).astype(np.float32)

    def f(lo, hi, x):
        return lax.fori_loop(lo, hi, lambda i, c: c * 0.99 + 0.01 * jnp.sin(c), x)

    want = x.copy()
    for _ in range(max(hi - lo, 0)):
        want = want * np.float32(0.99) + np.float32(0.01) * np.sin(want)
    _check(f, np.int32(lo), np.int32(hi), x, want=want)


def test_while_zero_trips_returns_init():
    x = np.arange(6, dtype=np.float32)
    f = lambda x: lax.while_loop(lambda c: c[0] > 100, lambda c: (c[0] + 1, c[1] * 3),  # noqa: E731
                                 (jnp.int32(0), x))
    _check(f, x, want=(np.int32(0), x))


def test_nested_loops():
    x = np.arange(7, dtype=np.float32)

    def f(x):
        def outer(i, c):
            return lax.fori_loop(0, i, lambda j, d: d + (i * j).astype(d.dtype), c) * 0.5

        return lax.fori_loop(0, 6, outer, x)

    want = x.copy()
    for i in range(6):
        for j in range(i):
            want = want + np.float32(i * j)
        want = want * np.float32(0.5)
    _check(f, x, want=want)


def test_cond_inside_while():
    x = np.linspace(-1, 1, 9).astype(np.float32)

    def f(x):
        def body(i, c):
            return lax.cond(i % 3 == 0, lambda v: v * 2.0, lambda v: jnp.sin(v) - 1.0, c)

        return lax.fori_loop(0, 8, body, x)

    want = x.copy()
    for i in range(8):
        want = want * np.float32(2) if i % 3 == 0 else np.sin(want) - np.float32(1)
    _check(f, x, rtol=1e-5, want=want)


@pytest.mark.parametrize("pred", [True, False])
def test_cond_at_top_level(pred):
    x = np.arange(5, dtype=np.int32)
    f = lambda p, x: lax.cond(p, lambda v: (v * 3, v.sum()), lambda v: (v - 1, v.max()), x)  # noqa: E731
    want = (x * 3, x.sum()) if pred else (x - 1, x.max())
    _check(f, np.bool_(pred), x, want=want)


@pytest.mark.parametrize("k", [-3, 0, 1, 2, 9])
def test_switch_clamps_index(k):
    x = np.arange(4, dtype=np.float32)
    branches = [lambda v: v + 1, lambda v: v * 10, lambda v: -v]
    f = lambda k, x: lax.switch(k, branches, x)  # noqa: E731
    _check(f, np.int32(k), x, want=branches[min(max(k, 0), 2)](x))


_CONDITIONAL_HLO = """HloModule cond_oob

%b0 (p0: f32[3]) -> f32[3] {
  %p0 = f32[3] parameter(0)
  ROOT %n0 = f32[3] negate(%p0)
}

%b1 (p1: f32[3]) -> f32[3] {
  %p1 = f32[3] parameter(0)
  ROOT %e1 = f32[3] exponential(%p1)
}

%b2 (p2: f32[3]) -> f32[3] {
  %p2 = f32[3] parameter(0)
  ROOT %a2 = f32[3] add(%p2, %p2)
}

ENTRY %main (k: s32[], x: f32[3]) -> f32[3] {
  %k = s32[] parameter(0)
  %x = f32[3] parameter(1)
  ROOT %c = f32[3] conditional(%k, %x, %x, %x), branch_computations={%b0, %b1, %b2}
}
"""


@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 1 << 30])
def test_conditional_index_out_of_range_runs_last_branch(k):
    module = parse_module(_CONDITIONAL_HLO)
    exe = cpu.compile(module, use_cache=False)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    got = exe(np.int32(k), x)
    ref = evaluate(module, np.int32(k), x)
    want = [-x, np.exp(x), x + x][k if 0 <= k < 3 else 2]
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_stacked_outputs(reverse):
    xs = np.linspace(-1, 1, 5 * 3).astype(np.float32).reshape(5, 3)

    def f(xs):
        def step(c, x):
            c = jnp.tanh(c + x)
            return c, (c * 2.0, jnp.sum(c))

        return lax.scan(step, jnp.zeros(3, jnp.float32), xs, reverse=reverse)

    c = np.zeros(3, np.float32)
    ys, ss = np.zeros_like(xs), np.zeros(5, np.float32)
    for t in (range(4, -1, -1) if reverse else range(5)):
        c = np.tanh(c + xs[t])
        ys[t], ss[t] = c * 2, c.sum()
    _check(f, xs, rtol=1e-5, want=(c, ys, ss))


def test_permuting_carry_reads_old_values():
    a, b = np.float32([1, 2]), np.float32([10, 20])
    f = lambda a, b: lax.fori_loop(0, 3, lambda i, c: (c[1], c[0] + 1), (a, b))  # noqa: E731
    want = (a, b)
    for _ in range(3):
        want = (want[1], want[0] + 1)
    _check(f, a, b, want=want)


def test_body_kernels_are_fused_and_run_natively():
    x = np.linspace(0, 3, 100).astype(np.float32)
    f = lambda x: lax.fori_loop(0, 1000, lambda i, c: c * 0.99 + 0.01 * jnp.sin(c), x)  # noqa: E731
    compiled = ember.jit(f).lower(x).compile()._compiled
    assert compiled.backend == "cpu"
    exe = compiled.executable
    body = next(c for c in exe.module.computations if c.name.startswith("scan_body")
                or c.name.startswith("body"))
    fusions = [i for i in body.instructions if i.opcode == "fusion"]
    array_fusions = [i for i in fusions if i.shape.dimensions == (100,)]
    assert len(array_fusions) == 1  # sin, two multiplies and the add: one kernel
    assert "br label" in exe.unoptimized_ir  # the loop is in the entry function
    _check(f, x, rtol=1e-5)


def test_debug_print_inside_native_loop_in_order(capsys):
    def f(x):
        def body(i, c):
            ember.debug.print("step {i} sum {s}", i=i, s=c.sum())
            return c + 1

        return lax.fori_loop(0, 4, body, x)

    x = np.zeros(3, np.int32)
    compiled = ember.jit(f).lower(x).compile()._compiled
    assert compiled.backend == "cpu"
    out = ember.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(out), x + 4)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines == [f"step {i} sum {3 * i}" for i in range(4)]


@pytest.mark.parametrize("shape", [(3, 3), (9, 7), (40, 33)])
def test_jacobi_stencil_with_scatter_in_body(shape):
    g = np.random.default_rng(1).standard_normal(shape).astype(np.float32)

    def step(i, g):
        return g.at[1:-1, 1:-1].set(0.25 * (g[:-2, 1:-1] + g[2:, 1:-1]
                                           + g[1:-1, :-2] + g[1:-1, 2:]))

    want = g.copy()
    for _ in range(20):  # Jacobi: every update reads the previous grid
        new = want.copy()
        new[1:-1, 1:-1] = np.float32(0.25) * (want[:-2, 1:-1] + want[2:, 1:-1]
                                              + want[1:-1, :-2] + want[1:-1, 2:])
        want = new
    _check(lambda g: lax.fori_loop(0, 20, step, g), g, rtol=1e-5, want=want)


def _while_plans(exe):
    from ember.backends.cpu.plan.loops_native import WhilePlan
    from ember.backends.cpu.plan.schedule import build_schedule

    sched = build_schedule(exe.module)
    return [p for p in sched.control.values() if isinstance(p, WhilePlan)]


@pytest.mark.parametrize("n", [1, 8, 1001])
def test_elementwise_carry_is_updated_in_place(n):
    x = np.linspace(-0.5, 0.5, n).astype(np.float32)
    f = lambda x: lax.fori_loop(0, 30, lambda i, c: c * 0.5 + c * c, x)  # noqa: E731
    want = x.copy()
    for _ in range(30):
        want = want * np.float32(0.5) + want * want
    _check(f, x, want=want)
    exe = ember.jit(f).lower(x).compile()._compiled.executable
    (plan,) = _while_plans(exe)
    # the counter and the array are both written straight into the state: no copies
    assert plan.update == [] and plan.stage == []


def test_in_place_refused_while_the_old_value_is_still_read():
    a, b = np.arange(5, dtype=np.float32), np.ones(5, np.float32)
    # a*2 must not overwrite a before a+b has read it (whichever runs first)
    f = lambda a, b: lax.fori_loop(0, 6, lambda i, c: (c[0] * 2, c[0] + c[1]), (a, b))  # noqa: E731
    want = (a, b)
    for _ in range(6):
        want = (want[0] * 2, want[0] + want[1])
    _check(f, a, b, want=want)
    exe = ember.jit(f).lower(a, b).compile()._compiled.executable
    (plan,) = _while_plans(exe)
    assert len(plan.update) >= 1  # at least one leaf still goes through a copy


def test_parallel_kernels_inside_a_loop_match_serial():
    from ember.backends.cpu.runtime import threads

    x = np.linspace(-3, 3, (1 << 17) + 77).astype(np.float32)
    f = lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.tanh(c) * 0.9 + 0.1, x)  # noqa: E731
    compiled = ember.jit(f).lower(x).compile()._compiled
    assert compiled.backend == "cpu"
    exe = compiled.executable
    before = threads.NUM_THREADS.value
    try:
        threads.set_num_threads(2)
        par = exe(x)
        threads.set_num_threads(1)
        ser = exe(x)
    finally:
        threads.set_num_threads(before)
    np.testing.assert_array_equal(par, ser)
    want = x.copy()
    for _ in range(4):
        want = np.tanh(want) * np.float32(0.9) + np.float32(0.1)
    np.testing.assert_allclose(ser, want, rtol=1e-5, atol=1e-6)


_SHARED_BODY_HLO = """HloModule shared

%cond (c: (s32[], f32[4])) -> pred[] {
  %c = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (b: (s32[], f32[4])) -> (s32[], f32[4]) {
  %b = (s32[], f32[4]) parameter(0)
  %j = s32[] get-tuple-element(%b), index=0
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  %v = f32[4] get-tuple-element(%b), index=1
  %v2 = f32[4] add(%v, %v)
  ROOT %t = (s32[], f32[4]) tuple(%j1, %v2)
}

ENTRY %main (x: f32[4], y: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %z = s32[] constant(0)
  %t0 = (s32[], f32[4]) tuple(%z, %x)
  %w0 = (s32[], f32[4]) while(%t0), condition=%cond, body=%body
  %t1 = (s32[], f32[4]) tuple(%z, %y)
  %w1 = (s32[], f32[4]) while(%t1), condition=%cond, body=%body
  %r0 = f32[4] get-tuple-element(%w0), index=1
  %r1 = f32[4] get-tuple-element(%w1), index=1
  ROOT %r = (f32[4], f32[4]) tuple(%r0, %r1)
}
"""


def test_computations_shared_by_two_loops():
    module = parse_module(_SHARED_BODY_HLO)
    x, y = np.arange(4, dtype=np.float32), np.full(4, -1.5, np.float32)
    for run_passes in (True, False):
        got = cpu.compile(module, use_cache=False, run_passes=run_passes)(x, y)
        np.testing.assert_array_equal(got[0], x * 8)
        np.testing.assert_array_equal(got[1], y * 8)
