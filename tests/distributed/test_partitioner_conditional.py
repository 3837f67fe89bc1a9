"""jit of lax.cond / lax.switch over a 2x2 mesh of 4 CPU devices: each branch is
partitioned with its operands split as they enter (passes/spmd_loops.py), the selector
made whole, and every branch's result resharded to one sharding; the results equal the
unsharded program's bit for bit (sums within a tolerance), the collectives sit inside the
branch computations that need them, and nothing is gathered to run the conditional whole."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.sharding import NamedSharding, P

RNG = np.random.default_rng(27)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _arr(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    x.flat[0], x.flat[-1] = -0.0, np.inf  # (signed zeros and infinities kept)
    return x


def _jit(fn, mesh, specs, out=None):
    return ember.jit(fn, in_shardings=tuple(None if s is None else NamedSharding(mesh, s)
                                            for s in specs),
                     out_shardings=out)


def _same(f, fn, *args, exact=True):
    got = f(*args)
    want = ember.jit(fn)(*args)
    for g, w in zip(_leaves(got), _leaves(want)):
        w = np.asarray(w)
        if exact:
            assert np.asarray(g).tobytes() == w.tobytes()
        else:
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5)
        for sh in g.addressable_shards:
            np.testing.assert_allclose(np.asarray(sh.data), w[sh.index], rtol=2e-5,
                                       atol=2e-5)
    return got


def _leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


def _cond(p, x, y):
    return lax.cond(p > 0, lambda a, b: jnp.tanh(a) * 2 + b, lambda a, b: a - jnp.exp(b),
                    x, y)


@pytest.mark.parametrize("specs", [(P("data"), P("data")), (P("data", "model"), P("data")),
                                   (P(None, "model"), P(("data", "model")))])
def test_cond_of_split_operands_runs_each_branch_on_blocks(mesh, specs):
    x, y = _arr((8, 6)), _arr((8, 6))
    f = _jit(_cond, mesh, (None, *specs))
    for p in (np.float32(1), np.float32(-1)):
        _same(f, _cond, p, x, y)
    report = ember.explain.collectives(f, np.float32(1), x, y)
    assert not report.refusals, report
    text = f.lower(np.float32(1), x, y).compile().as_text()
    # (each branch takes blocks: no operand of the conditional is whole)
    assert "f32[8,6]" not in text.split("ENTRY")[1], text
    if specs[0] == specs[1]:  # (the same layout on both sides: nothing moves)
        assert not report.collectives, report


def test_switch_with_a_sum_in_one_branch(mesh):
    """The sum's partial results are added inside its branch (an all-reduce there, run
    only when that branch is taken); the other branches move nothing."""
    def fn(i, x):
        return lax.switch(i, [lambda a: a + 1, jnp.sin,
                              lambda a: a.sum(0, keepdims=True) * a], x)

    x = _arr((8, 6))
    x[-1, -1] = 0.5
    f = _jit(fn, mesh, (None, P("data", "model")))
    for i in (0, 1, 2, 7, -1):  # (clamped as lax.switch clamps)
        _same(f, fn, np.int32(i), x, exact=i in (0, 1, -1))
    report = ember.explain.collectives(f, np.int32(0), x)
    assert not report.refusals, report
    (c,) = report.collectives
    assert (c.opcode, c.shape, c.group_size) == ("all-reduce", "f32[3]", 2)
    assert c.where == "when %branch_2 runs"
    text = f.lower(np.int32(0), x).compile().as_text()
    branch = text[text.index("%branch_2"):text.index("ENTRY")]
    assert "all-reduce(" in branch and "all-gather" not in text, text
    assert f(np.int32(2), x).sharding.spec == P("data", "model")


def test_branches_split_differently_agree_on_the_result(mesh):
    """One branch returns its split operand, one a whole value, one a transposed split
    value: each is resharded to the most split of them (slicing is free; only the
    transposed one moves, an all-to-all or gathers inside its branch), and the tuple
    result keeps per-element shardings."""
    def fn(i, x, y):
        return lax.switch(i, [lambda a, b: (a, b + 1),
                              lambda a, b: (jnp.ones_like(a), b * 2),
                              lambda a, b: (b.reshape(6, 8).T * 1.0, a.T.reshape(8, 6))],
                          x, y)

    x, y = _arr((8, 6)), _arr((8, 6))
    f = _jit(fn, mesh, (None, P("data", "model"), P("model")))
    for i in range(3):
        got = _same(f, fn, np.int32(i), x, y)
    assert got[0].sharding.spec == P("data", "model") and got[1].sharding.spec == P("model")
    report = ember.explain.collectives(f, np.int32(0), x, y)
    assert all(c.where == "when %branch_2 runs" for c in report.collectives), report


def test_cond_in_a_loop_and_under_grad(mesh):
    """A cond inside a fori_loop's body (a branch inside a partitioned body) and the
    gradient of a function with a cond (the JVP's cond carries residuals)."""
    def loop(x, y):
        def body(k, v):
            return lax.cond(k % 2 == 0, lambda a: a * 0.5 + y, lambda a: a - y, v)
        return lax.fori_loop(0, 4, body, x)

    x, y = _arr((8, 6)), _arr((8, 6))
    x[0, 0] = y[-1, -1] = 1.0  # (no inf - inf)
    f = _jit(loop, mesh, (P("data"), P("data")))
    _same(f, loop, x, y)
    report = ember.explain.collectives(f, x, y)
    assert not report.refusals and not report.collectives, report

    def loss(w, x):
        h = x @ w
        return jnp.sum(lax.cond(jnp.sum(w) > 0, jnp.tanh, lambda a: a * a, h))

    w = RNG.standard_normal((6, 4)).astype(np.float32)
    g = _jit(ember.grad(loss), mesh, (None, P("data")))
    for sign in (1, -1):
        _same(g, ember.grad(loss), sign * np.abs(w), x, exact=False)
    assert not ember.explain.collectives(g, w, x).refusals
