"""vmap of control flow (prims/_control_flow_batching.py, core's batching.batch_jaxpr) and
lax.map(batch_size=).

Every case checks `vmap(f)(xs)` against stacking `f(x)` over the examples, eagerly and
under `ember.jit`: cond and switch with a per-example or a shared predicate, while_loop
with a per-example predicate (lanes finishing at different iterations) or a shared one,
scan over mixes of mapped consts, carries and xs (forward and reverse), fori_loop with
static and traced bounds, nested vmap, and vmap composed with grad and jvp. The jaxprs of
vmapped programs are checked for JAX's forms: a select (no cond) for a per-example
predicate, one loop and no extra loops. Bodies use elementwise operations only, so these
tests depend on no batching rule but the control-flow ones (and the elementwise ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.core import batching
from ember.core.aval import ShapedArray
from ember.core.staging import trace_to_jaxpr
from ember.tree_util import tree_flatten, tree_map


def _example(args: Sequence[Any], in_axes: Sequence[int | None], i: int) -> list[Any]:
    return [a if d is None else np.take(np.asarray(a), i, axis=d)
            for a, d in zip(args, in_axes)]


def _stacked(f: Callable, args: Sequence[Any], in_axes: Sequence[int | None]) -> Any:
    size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
    outs = [f(*_example(args, in_axes, i)) for i in range(size)]
    return tree_map(lambda *ys: np.stack([np.asarray(y) for y in ys]), *outs)


def _assert_tree_close(got: Any, want: Any, rtol: float = 1e-6) -> None:
    g, gt = tree_flatten(got)
    w, wt = tree_flatten(want)
    assert gt == wt
    for a, b in zip(g, w):
        assert np.shape(a) == np.shape(b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


def check(f: Callable, *args: Any, in_axes: Sequence[int | None] | int = 0,
          jit: bool = True) -> Any:
    """vmap(f) eagerly (and under jit) equals f stacked over the examples."""
    axes = [in_axes] * len(args) if isinstance(in_axes, int) else list(in_axes)
    want = _stacked(f, args, axes)
    vf = ember.vmap(f, in_axes=tuple(axes))
    _assert_tree_close(vf(*args), want)
    if jit:
        _assert_tree_close(ember.jit(vf)(*args), want)
    return want


def _rand(*shape: int, seed: int = 0, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _prims(jaxpr: Any) -> list[str]:
    """Every primitive of a jaxpr, nested sub-jaxprs included, in order."""
    names = []
    for eqn in jaxpr.eqns:
        names.append(eqn.primitive.name)
        for v in eqn.params.values():
            for sub in v if isinstance(v, tuple) else (v,):
                if hasattr(sub, "eqns"):
                    names += _prims(sub)
    return names


# -- batch_jaxpr ------------------------------------------------------------------------------

def test_batch_jaxpr_maps_what_mapped_inputs_reach_and_what_is_instantiated() -> None:
    f32 = ShapedArray((3,), np.dtype(np.float32))
    closed, _ = trace_to_jaxpr(lambda a, b: [jnp.sin(a) * 2.0, b + 1.0, b * b], [f32, f32])
    axis = batching.AxisData(5)
    batched, out = batching.batch_jaxpr(closed, axis, [True, False], [False, True, False])
    assert out == [True, True, False]
    assert [a.shape for a in batched.in_avals] == [(5, 3), (3,)]
    assert [a.shape for a in batched.out_avals] == [(5, 3), (5, 3), (3,)]
    a, b = _rand(5, 3), _rand(3, seed=1)
    got = ember.core.eval.eval_jaxpr(batched.jaxpr, batched.consts, a, b)
    np.testing.assert_allclose(got[0], np.sin(a) * 2, rtol=1e-6)
    np.testing.assert_allclose(got[1], np.broadcast_to(b + 1, (5, 3)), rtol=1e-6)
    np.testing.assert_allclose(got[2], b * b, rtol=1e-6)
    _, out = batching.batch_jaxpr(closed, axis, [False, False], True)
    assert out == [True, True, True]


# -- cond and switch --------------------------------------------------------------------------

def test_cond_with_a_per_example_predicate_selects_per_example() -> None:
    def f(x: Any, t: Any) -> Any:
        return lax.cond(x > t, lambda a, b: (jnp.sin(a) * b, a + 1.0),
                        lambda a, b: (a * a - b, a * 3.0), x, t)

    xs = _rand(7)
    check(f, xs, np.float32(0.1), in_axes=(0, None))
    check(f, xs, _rand(7, seed=2), in_axes=(0, 0))
    check(f, xs[:1], np.float32(0.0), in_axes=(0, None), jit=False)


def test_cond_per_example_predicate_on_rank_one_operands() -> None:
    def f(x: Any, k: Any) -> Any:
        return lax.cond(k > 0.0, lambda a: jnp.cos(a) + k, lambda a: a * k, x)

    xs, ks = _rand(6, 4), _rand(6, seed=3)
    check(f, xs, ks)
    # The predicate mapped, the operand shared.
    check(f, xs[0], ks, in_axes=(None, 0))


def test_cond_with_a_shared_predicate_stays_a_cond() -> None:
    def f(x: Any, p: Any) -> Any:
        return lax.cond(p, lambda a: (jnp.sin(a), 2.0 * jnp.ones((3,), np.float32)),
                        lambda a: (a + 1.0, a * 0.0 + 3.0), x)

    xs = _rand(5, 3)
    for p in (True, False):
        want = check(f, xs, p, in_axes=(0, None))
        # Branch 1 returns a shared value, branch 0 a mapped one: both come out mapped.
        assert want[1].shape == (5, 3)
    jaxpr = ember.make_jaxpr(ember.vmap(f, in_axes=(0, None)))(xs, True)
    assert _prims(jaxpr.jaxpr).count("cond") == 1
    assert "select_n" not in _prims(jaxpr.jaxpr)


def test_cond_per_example_predicate_is_a_select_of_both_branches() -> None:
    def f(x: Any) -> Any:
        return lax.cond(x > 0.0, jnp.sin, lambda a: a * 2.0, x)

    jaxpr = ember.make_jaxpr(ember.vmap(f))(_rand(4))
    prims = _prims(jaxpr.jaxpr)
    assert "cond" not in prims and prims.count("select_n") == 3   # 2 guarded operands + 1
    assert {"sin", "mul"} <= set(prims)


@pytest.mark.parametrize("mapped_index", [True, False])
def test_switch_over_three_branches(mapped_index: bool) -> None:
    def f(i: Any, x: Any, y: Any) -> Any:
        return lax.switch(i, [lambda a, b: a + b, lambda a, b: a * b,
                              lambda a, b: jnp.sin(a) - b], x, y)

    xs, ys = _rand(8, 2), _rand(8, 2, seed=1)
    if mapped_index:
        # Out of range indices clamp, as switch does.
        idx = np.array([0, 1, 2, 5, -1, 2, 1, 0], np.int32)
        check(f, idx, xs, ys)
        check(f, idx, xs, ys[0], in_axes=(0, 0, None))
    else:
        for i in (0, 1, 2):
            check(f, np.int32(i), xs, ys, in_axes=(None, 0, 0))
            check(f, np.int32(i), xs, ys[0], in_axes=(None, 0, None))


def test_cond_and_while_on_int_and_bool_values() -> None:
    def f(i: Any, b: Any) -> Any:
        return lax.cond(b, lambda j, c: (j * 3 + 1, c), lambda j, c: (j - 2, c == False), i, b)  # noqa: E712

    def g(i: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 20, lambda c: (c[0] * 2 + 5, ~c[1]), (i, False))

    ints = np.array([3, -4, 0, 7, 25], np.int32)
    check(f, ints, np.array([True, False, False, True, True]))
    check(f, ints, np.bool_(True), in_axes=(0, None))
    check(g, ints)


def test_cond_closing_over_a_mapped_value() -> None:
    def f(x: Any, y: Any) -> Any:
        return lax.cond(y > 0.0, lambda: x * y, lambda: x - y)

    check(f, _rand(5), _rand(5, seed=4))
    check(f, _rand(5), np.float32(2.0), in_axes=(0, None))


# -- while_loop -------------------------------------------------------------------------------

def _collatz_like(x: Any) -> Any:
    # Lanes finish after different numbers of iterations (the count says how many).
    return lax.while_loop(lambda c: c[0] < 10.0,
                          lambda c: (c[0] * 1.5 + 1.0, c[1] + 1, c[2] + jnp.sin(c[0])),
                          (x, 0, x * 0.0))


def test_while_with_a_per_example_predicate_freezes_finished_lanes() -> None:
    xs = np.array([-1.0, 2.0, 0.5, 9.5, 20.0, 3.0], np.float32)
    want = check(_collatz_like, xs)
    assert len(set(want[1].tolist())) > 3   # really different trip counts
    assert want[1][4] == 0                  # a lane that never runs
    jaxpr = ember.make_jaxpr(ember.vmap(_collatz_like))(xs)
    prims = _prims(jaxpr.jaxpr)
    assert prims.count("while") == 1 and "reduce_or" in prims
    assert "scan" not in prims and "cond" not in prims


def test_while_with_a_shared_predicate_runs_the_batched_body() -> None:
    def f(x: Any, n: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.1 + x),
                              (0, x))[1]

    xs = _rand(5, 3)
    check(f, xs, np.int32(4), in_axes=(0, None))
    jaxpr = ember.make_jaxpr(ember.vmap(f, in_axes=(0, None)))(xs, np.int32(4))
    prims = _prims(jaxpr.jaxpr)
    assert prims.count("while") == 1
    assert "reduce_or" not in prims and "select_n" not in prims


def test_while_carry_becomes_mapped_through_a_mapped_const() -> None:
    # Only a body const is mapped: the carry b becomes mapped in the first iteration (the
    # fixed point), a is never mapped.
    def f(k: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * k + 1.0),
                              (0, 1.0))

    want = check(f, _rand(4))
    assert want[0].shape == (4,)
    got = ember.vmap(f)(_rand(4))
    assert got[1].shape == (4,)


def test_while_predicate_mapped_through_a_cond_const() -> None:
    def f(limit: Any, x: Any) -> Any:
        return lax.while_loop(lambda v: v < limit, lambda v: v * 2.0 + 0.5, x)

    check(f, np.array([1.0, 5.0, 40.0, -3.0], np.float32), np.float32(0.25),
          in_axes=(0, None))


def test_weak_types_survive_batching() -> None:
    # A Python-int counter stays weakly typed through the batched loop and branches, as
    # in JAX (the batched bodies keep their weak literals weak).
    def sel(x: Any) -> Any:
        return lax.cond(x > 0.0, lambda: 1, lambda: 2)

    def count(x: Any) -> Any:
        return lax.scan(lambda c, _: (c + 1, c * 2), 0, None, length=3)[1] + 0 * sel(x)

    xs = np.array([0.5, -1.0, 11.0], np.float32)
    for f in (sel, count, lambda x: _collatz_like(x)[1]):
        assert f(xs[0]).weak_type
        assert ember.vmap(f)(xs).weak_type
        assert ember.jit(ember.vmap(f))(xs).weak_type


# -- scan -------------------------------------------------------------------------------------

def _scan_fn(reverse: bool) -> Callable:
    def f(k: Any, c0: Any, xs: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            a, n = c
            return (a * 0.9 + jnp.sin(x) * k, n + 1.0), (a + x, x * 2.0)
        return lax.scan(body, (c0, 0.0), xs, reverse=reverse)
    return f


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_over_mixes_of_mapped_consts_carries_and_xs(reverse: bool) -> None:
    f = _scan_fn(reverse)
    k, c0, xs = _rand(5), _rand(5, 2, seed=1), _rand(5, 4, 2, seed=2)
    check(f, k, c0, xs)
    check(f, k, c0[0], xs[0], in_axes=(0, None, None))     # only the const
    check(f, k[0], c0, xs[0], in_axes=(None, 0, None))     # only the carry
    check(f, k[0], c0[0], xs, in_axes=(None, None, 0))     # only the xs
    # xs mapped along their scanned-over axis's neighbour and along the last one.
    check(f, k[0], c0, np.moveaxis(xs, 0, 1), in_axes=(None, 0, 1), jit=False)
    check(f, k, c0[0], np.moveaxis(xs, 0, 2), in_axes=(0, None, 2), jit=False)


def test_scan_ys_that_no_mapped_value_reaches_stay_unmapped() -> None:
    def f(c0: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: (c + x, x * 3.0), c0, xs)

    xs = _rand(4, 3)
    got = check(f, _rand(6, 3, seed=1), xs, in_axes=(0, None))
    np.testing.assert_allclose(got[1], np.broadcast_to(xs * 3, (6, 4, 3)), rtol=1e-6)
    jaxpr = ember.make_jaxpr(ember.vmap(f, in_axes=(0, None)))(_rand(6, 3), xs)
    scan_eqn = next(e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan")
    assert [v.aval.shape for v in scan_eqn.outvars] == [(6, 3), (4, 3)]
    prims = _prims(jaxpr.jaxpr)
    assert prims.count("scan") == 1 and "while" not in prims


def test_scan_with_an_empty_batch_and_a_zero_length() -> None:
    f = _scan_fn(False)
    out = ember.vmap(f)(_rand(0), _rand(0, 2), _rand(0, 4, 2))
    assert out[1][0].shape == (0, 4, 2)
    check(f, _rand(3), _rand(3, 2), _rand(3, 0, 2), jit=False)


# -- fori_loop --------------------------------------------------------------------------------

def _fori(lo: Any, hi: Any) -> Callable:
    def f(x: Any) -> Any:
        return lax.fori_loop(lo, hi, lambda i, c: c * 1.25 + jnp.sin(c) + i, x)
    return f


def test_fori_loop_with_static_bounds_is_a_batched_scan() -> None:
    xs = _rand(6, 2)
    check(_fori(1, 5), xs)
    prims = _prims(ember.make_jaxpr(ember.vmap(_fori(1, 5)))(xs).jaxpr)
    assert prims.count("scan") == 1 and "while" not in prims


def test_fori_loop_with_traced_bounds_per_example() -> None:
    def f(x: Any, n: Any) -> Any:
        return _fori(0, n)(x)

    xs, ns = _rand(6, 2), np.array([0, 3, 1, 5, 2, 2], np.int32)
    check(f, xs, ns)
    check(f, xs, np.int32(3), in_axes=(0, None))
    check(f, xs[0], ns, in_axes=(None, 0))


# -- nesting and composition ------------------------------------------------------------------

def test_nested_vmap_of_control_flow() -> None:
    # The inner vmap (over x) sees a shared bound and predicate: a while and a cond of
    # batched bodies; the outer one (over n) then batches their predicates.
    def f(x: Any, n: Any) -> Any:
        y = lax.fori_loop(0, n, lambda i, c: c * 1.5 + jnp.sin(c), x)
        return lax.cond(n > 1, lambda a: a - 1.0, lambda a: a * a, y)

    xs, ns = _rand(4), np.array([0, 2, 4], np.int32)
    inner = ember.vmap(f, in_axes=(0, None))
    got = ember.vmap(inner, in_axes=(None, 0))(xs, ns)
    want = np.array([[f(x, n) for x in xs] for n in ns])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    jitted = ember.jit(ember.vmap(inner, in_axes=(None, 0)))(xs, ns)
    np.testing.assert_allclose(jitted, want, rtol=1e-6)


def _piecewise(x: Any) -> Any:
    return lax.cond(x > 0.0, lambda a: jnp.sqrt(a) * jnp.sin(a), lambda a: a * a * 3.0, x)


def test_vmap_of_grad_through_cond_is_the_per_example_gradient() -> None:
    xs = np.array([-1.5, 2.0, 0.5, -3.0, 1e-3], np.float32)
    check(ember.grad(_piecewise), xs)


def test_grad_of_vmap_through_cond_ignores_the_branch_not_taken() -> None:
    # sqrt's derivative is NaN at the negative lanes, where that branch is not taken: the
    # guarded operands keep it out of the sum (as in JAX).
    xs = np.array([-1.5, 2.0, 0.5, -3.0], np.float32)

    def loss(v: Any) -> Any:
        return ember.vmap(_piecewise)(v).sum()

    want = np.stack([np.asarray(ember.grad(_piecewise)(x)) for x in xs])
    assert np.all(np.isfinite(want))
    np.testing.assert_allclose(ember.grad(loss)(xs), want, rtol=1e-6)
    np.testing.assert_allclose(ember.jit(ember.grad(loss))(xs), want, rtol=1e-6)


def test_vmap_of_jvp_through_scan_and_while() -> None:
    def s(c: Any) -> Any:
        return lax.scan(lambda c, x: (jnp.sin(c) * x + c, c * x), c,
                        np.array([0.5, -1.0, 2.0], np.float32))

    def w(c: Any) -> Any:
        return lax.while_loop(lambda v: v[0] < 4.0, lambda v: (v[0] * 1.5 + 0.5, v[1] * v[0]),
                              (c, c))

    for g in (s, w):
        def tangent(x: Any, g: Callable = g) -> Any:
            return ember.jvp(g, (x,), (np.float32(1.0),))[1]
        check(tangent, np.array([0.25, 1.0, 3.0, -0.5], np.float32))


def test_jvp_of_vmap_through_scan_and_a_per_example_while() -> None:
    def s(c: Any) -> Any:
        return lax.scan(lambda c, k: (c * k + jnp.sin(c), c), c,
                        np.array([1.0, 2.0, 0.5], np.float32))

    def w(x: Any, n: Any) -> Any:
        return lax.fori_loop(0, n, lambda i, c: c * 1.5 + jnp.sin(c), x)

    xs, ns = np.array([0.3, 1.0, -2.0, 0.5], np.float32), np.array([0, 3, 1, 5], np.int32)
    ones = np.ones(4, np.float32)
    got = ember.jvp(ember.vmap(s), (xs,), (ones,))[1]
    want = _stacked(lambda x: ember.jvp(s, (x,), (np.float32(1.0),))[1], [xs], [0])
    _assert_tree_close(got, want)
    got = ember.jvp(lambda x: ember.vmap(w)(x, ns), (xs,), (ones,))[1]
    want = _stacked(lambda x, n: ember.jvp(lambda y: w(y, n), (x,), (np.float32(1.0),))[1],
                    [xs, ns], [0, 0])
    _assert_tree_close(got, want)


def test_vmap_of_grad_through_scan() -> None:
    def f(c: Any) -> Any:
        carry, _ = lax.scan(lambda c, x: (jnp.sin(c) * x + c, c * x), c,
                             np.array([0.5, -1.0, 2.0], np.float32))
        return carry

    check(ember.grad(f), np.array([0.25, 1.0, 3.0, -0.5], np.float32))


# -- lax.map(batch_size=) ---------------------------------------------------------------------

def _mapped(x: Any) -> Any:
    return {"a": jnp.sin(x["p"]) * 2.0 + x["q"], "b": x["p"] * x["q"]}


@pytest.mark.parametrize("batch_size", [None, 0, 1, 3, 5, 10, 12])
def test_lax_map_with_a_batch_size(batch_size: int | None) -> None:
    xs = {"p": _rand(10, 3), "q": _rand(10, seed=1)[:, None] * np.ones((1, 3), np.float32)}
    want = {"a": np.sin(xs["p"]) * 2 + xs["q"], "b": xs["p"] * xs["q"]}
    _assert_tree_close(lax.map(_mapped, xs, batch_size=batch_size), want)
    jitted = ember.jit(lambda v: lax.map(_mapped, v, batch_size=batch_size))(xs)
    _assert_tree_close(jitted, want)


def test_lax_map_batch_size_jaxpr_is_a_scan_of_the_vmapped_body_and_a_remainder() -> None:
    seen = []

    def f(x: Any) -> Any:
        seen.append(x.shape)
        return jnp.sin(x) + 1.0

    jaxpr = ember.make_jaxpr(lambda v: lax.map(f, v, batch_size=3))(_rand(10, 2))
    assert seen == [(2,), (2,)]            # the chunks' body, then the remainder
    prims = _prims(jaxpr.jaxpr)
    assert prims.count("scan") == 1 and prims.count("sin") == 2
    scan_eqn = next(e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan")
    assert scan_eqn.params["length"] == 3
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns][-1] == "concatenate"
    seen.clear()
    prims = _prims(ember.make_jaxpr(lambda v: lax.map(f, v, batch_size=5))(_rand(10, 2)).jaxpr)
    assert seen == [(2,)] and "concatenate" not in prims


def test_lax_map_batch_size_errors() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        lax.map(jnp.sin, _rand(4), batch_size=-1)
    with pytest.raises(ValueError, match="no leading axis"):
        lax.map(jnp.sin, np.float32(1.0), batch_size=2)
