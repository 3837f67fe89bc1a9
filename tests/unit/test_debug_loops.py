"""`ember.debug.print` inside while loops' conditions and bodies, in program order.

Each program below is written once against a (lax, debug) pair, so the same code runs under
Ember (interpreter and CPU backends, jitted and eager) and, when it is installed, under JAX
0.10.2 as the reference. JAX 0.10.2 under jit keeps this order only for `ordered=True`
prints: with the default `ordered=False` its XLA CPU build drops prints in a loop's
condition that read the loop state and lets independent loops' prints run in any order
(checked by hand: `jax.jit` of `basic` prints no `cond` lines). Ember runs every side
effect in program order whatever `ordered` says, which is JAX's `ordered=True` output and
its eager output: a condition's prints come before the body's in every iteration and once
more before the loop exits; two loops that print run in source order even after a pass
rebuilds the first one (dead or pass-through state elements: ember/passes/loop_state.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import lax


def programs(lax, debug, ordered):
    """The test programs, written against `lax` and `debug` (Ember's or JAX's)."""
    P = lambda fmt, **kw: debug.print(fmt, ordered=ordered, **kw)  # noqa: E731

    def basic(x):
        P("before")

        def cond(c):
            P("cond {i}", i=c[0])
            return c[0] < 3

        def body(c):
            P("body {i} {v}", i=c[0], v=c[1])
            return c[0] + 1, c[1] * 2

        r = lax.while_loop(cond, body, (0, x))
        P("after {v}", v=r[1])
        return r[1]

    def zero_trip(x):
        def cond(i):
            P("cond {i}", i=i)
            return i < 0

        def body(i):
            P("body {i}", i=i)
            return i + 1

        return lax.while_loop(cond, body, 0) + x

    def pred_printed(x):
        def cond(c):
            p = c[0] < 2
            P("pred {p}", p=p)
            return p

        def body(c):
            P("body {i}", i=c[0])
            return c[0] + 1, c[1] + 1

        return lax.while_loop(cond, body, (0, x))[1]

    def nested(x):
        def cond(c):
            P("outer cond {i}", i=c[0])
            return c[0] < 2

        def body(c):
            def icond(j):
                P("inner cond {j}", j=j)
                return j < 2

            def ibody(j):
                P("inner body {j}", j=j)
                return j + 1

            P("outer body {i}", i=c[0])
            k = lax.while_loop(icond, ibody, 0)
            return c[0] + 1, c[1] + k

        return lax.while_loop(cond, body, (0, x))[1]

    def loop_in_cond(x):
        def cond(c):
            def icond(j):
                P("inner cond {j}", j=j)
                return j < 1

            def ibody(j):
                P("inner body {j}", j=j)
                return j + 1

            k = lax.while_loop(icond, ibody, 0)
            P("outer cond {i} {k}", i=c[0], k=k)
            return c[0] < 2

        def body(c):
            P("outer body {i}", i=c[0])
            return c[0] + 1, c[1]

        return lax.while_loop(cond, body, (0, x))[1]

    def branch_in_cond(x):
        def cond(c):
            lax.cond(c[0] > 0, lambda: P("pos {i}", i=c[0]), lambda: P("nonpos {i}", i=c[0]))
            return c[0] < 2

        def body(c):
            P("body {i}", i=c[0])
            return c[0] + 1, c[1] * 2

        return lax.while_loop(cond, body, (0, x))[1]

    def two_loops(x):
        def c1(c):
            P("L1 cond {i}", i=c[0])
            return c[0] < 2

        def b1(c):
            P("L1 body {i}", i=c[0])
            return c[0] + 1, c[1] * 2, c[2] + 1.0  # element 2 is dead: the loop is rebuilt

        r = lax.while_loop(c1, b1, (0, x, x))

        def c2(c):
            P("L2 cond {i}", i=c[0])
            return c[0] < 2

        def b2(c):
            P("L2 body {i}", i=c[0])
            return c[0] + 1, c[1] * 3

        s = lax.while_loop(c2, b2, (0, x))
        return r[1] + s[1]

    def loop_then_fori(x):
        def c1(c):
            P("A cond {i}", i=c[0])
            return c[0] < 2

        def b1(c):
            P("A body {i}", i=c[0])
            return c[0] + 1, c[1]  # element 1 passes through

        r = lax.while_loop(c1, b1, (0, x))

        def b2(i, v):
            P("B body {i}", i=i)
            return v + 1.0

        return lax.fori_loop(0, 2, b2, r[1])

    return [basic, zero_trip, pred_printed, nested, loop_in_cond, branch_in_cond, two_loops,
            loop_then_fori]


EXPECTED = {
    "basic": ["before", "cond 0", "body 0 1.0", "cond 1", "body 1 2.0", "cond 2",
              "body 2 4.0", "cond 3", "after 8.0"],
    "zero_trip": ["cond 0"],
    "pred_printed": ["pred True", "body 0", "pred True", "body 1", "pred False"],
    "nested": ["outer cond 0", "outer body 0", "inner cond 0", "inner body 0",
               "inner cond 1", "inner body 1", "inner cond 2", "outer cond 1",
               "outer body 1", "inner cond 0", "inner body 0", "inner cond 1",
               "inner body 1", "inner cond 2", "outer cond 2"],
    "loop_in_cond": ["inner cond 0", "inner body 0", "inner cond 1", "outer cond 0 1",
                     "outer body 0", "inner cond 0", "inner body 0", "inner cond 1",
                     "outer cond 1 1", "outer body 1", "inner cond 0", "inner body 0",
                     "inner cond 1", "outer cond 2 1"],
    "branch_in_cond": ["nonpos 0", "body 0", "pos 1", "body 1", "pos 2"],
    "two_loops": ["L1 cond 0", "L1 body 0", "L1 cond 1", "L1 body 1", "L1 cond 2",
                  "L2 cond 0", "L2 body 0", "L2 cond 1", "L2 body 1", "L2 cond 2"],
    "loop_then_fori": ["A cond 0", "A body 0", "A cond 1", "A body 1", "A cond 2",
                       "B body 0", "B body 1"],
}
NAMES = list(EXPECTED)
RESULTS = {"basic": 8.0, "zero_trip": 1.0, "pred_printed": 3.0, "nested": 5.0,
           "loop_in_cond": 1.0, "branch_in_cond": 4.0, "two_loops": 13.0,
           "loop_then_fori": 3.0}


@pytest.fixture(params=["interpreter", "cpu"])
def backend(request, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", request.param)
    return request.param


def _program(name: str, ordered: bool):
    return next(f for f in programs(lax, ember.debug, ordered) if f.__name__ == name)


@pytest.mark.parametrize("ordered", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_jit_prints_in_program_order(backend, name, ordered, capfd):
    out = ember.jit(_program(name, ordered))(np.float32(1))
    assert float(np.asarray(out)) == RESULTS[name]
    assert capfd.readouterr().out.splitlines() == EXPECTED[name]


@pytest.mark.parametrize("name", ["basic", "nested", "two_loops"])
def test_eager_prints_in_program_order(name, capfd):
    out = _program(name, False)(np.float32(1))
    assert float(np.asarray(out)) == RESULTS[name]
    assert capfd.readouterr().out.splitlines() == EXPECTED[name]


def test_loop_rebuilt_by_a_pass_keeps_its_place(backend):
    # the order above is not luck: the optimized entry really holds a rebuilt first loop
    # after the second one, and the schedule still runs the first one first
    compiled = ember.jit(_program("two_loops", False)).lower(np.float32(1)).compile()
    entry = compiled._compiled.optimized.entry
    loops = [i for i in entry.instructions if i.opcode == "while"]
    walked = [i for i in entry.post_order() if i.opcode == "while"]
    assert len(loops) == 2
    first = min(loops, key=lambda w: w.metadata["source_line"])
    assert loops[-1] is first  # rebuilt: appended after the second loop
    assert walked[0] is first


def test_jax_prints_the_same_order_with_ordered_effects(capfd):
    jax = pytest.importorskip("jax")
    for f in programs(jax.lax, jax.debug, True):
        jax.jit(f)(1.0)
        jax.effects_barrier()
        assert capfd.readouterr().out.splitlines() == EXPECTED[f.__name__], f.__name__
