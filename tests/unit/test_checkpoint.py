"""`ember.checkpoint` / `ember.remat` and `ember.checkpoint_policies` (prims/checkpoint.py).

Same values and gradients with and without checkpoint (check_grads, orders 1 and 2, eager
and jit), fewer saved residuals with it: counted as the stacked outputs of the forward
scan of a gradient (what reverse mode keeps per iteration) and measured by
`memory_analysis`; the policies; static_argnums; vmap; the error texts.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import checkpoint_policies as cp
from ember import lax
from tests.ops.ad_checks import check_grads


def _body(v, w):
    """Many intermediates, one product."""
    h = jnp.tanh(jnp.dot(w, v))
    a = jnp.sin(h) * v
    b = jnp.cos(a) * h
    return jnp.exp(-b * b) * 0.5 + v * 0.5


def _loop(x, w, wrap, steps=6):
    body = wrap(_body)
    return jnp.sum(lax.fori_loop(0, steps, lambda i, v: body(v, w), x))


def _stacked(fun, *args):
    """Shapes of the stacked residuals of the forward scan in fun's jaxpr (a fori_loop's:
    its ys are all residuals)."""
    jaxpr = ember.make_jaxpr(fun)(*args).jaxpr
    fwd = next(e for e in jaxpr.eqns if e.primitive.name == "scan")
    return [v.aval.shape for v in fwd.outvars[fwd.params["num_carry"]:]]


_X = np.linspace(-1.0, 1.0, 5)
_W = np.random.default_rng(0).standard_normal((5, 5)) * 0.3


@pytest.mark.parametrize("policy", [None, cp.nothing_saveable, cp.everything_saveable,
                                    cp.dots_saveable, cp.dots_with_no_batch_dims_saveable])
def test_same_values_and_gradients(policy, x64):
    wrap = (lambda f: ember.checkpoint(f, policy=policy))  # noqa: E731
    plain = ember.grad(_loop, argnums=(0, 1))(_X, _W, lambda f: f)
    for g in (ember.grad(_loop, argnums=(0, 1)),
              ember.jit(ember.grad(_loop, argnums=(0, 1)), static_argnums=2)):
        got = g(_X, _W, wrap)
        for a, b in zip(got, plain):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_loop(_X, _W, wrap), _loop(_X, _W, lambda f: f), rtol=1e-14)


@pytest.mark.parametrize("use_jit", [False, True])
def test_check_grads(use_jit, x64):
    f = ember.checkpoint(lambda x, w: _body(x, w) * jnp.sum(x))
    check_grads(f, [_X, _W], order=2, use_jit=use_jit)


def test_checkpoint_in_a_scan_body_saves_only_the_carry(x64):
    def grad_of(wrap):
        return lambda x: ember.grad(_loop)(x, _W, wrap)

    assert len(_stacked(grad_of(lambda f: f), _X)) > 4
    assert _stacked(grad_of(ember.checkpoint), _X) == [(6, 5)]
    assert _stacked(grad_of(ember.remat), _X) == [(6, 5)]
    # everything_saveable keeps what plain reverse mode keeps.
    everything = _stacked(grad_of(lambda f: ember.checkpoint(f, policy=cp.everything_saveable)),
                          _X)
    assert len(everything) == len(_stacked(grad_of(lambda f: f), _X))
    # dots_saveable: the carry and the product's result, the elementwise rest recomputed.
    dots = _stacked(grad_of(lambda f: ember.checkpoint(f, policy=cp.dots_saveable)), _X)
    assert sorted(dots) == [(6, 5), (6, 5)]


def test_fewer_residual_bytes_in_memory_analysis():
    x = np.linspace(-1.0, 1.0, 1000, dtype=np.float32)
    w = np.eye(1000, dtype=np.float32) * 0.5

    def temp(wrap):
        g = ember.jit(lambda x, w: ember.grad(_loop)(x, w, wrap, 50))
        return g.lower(x, w).compile().memory_analysis().temp_size_in_bytes

    with_ck, without = temp(ember.checkpoint), temp(lambda f: f)
    carry_stack = 50 * 1000 * 4
    assert with_ck < without - 3 * carry_stack


def test_policies():
    from ember.prims.dot import dot_general_p
    from ember.prims.elementwise import sin_p
    a = ember.ShapeDtypeStruct((2, 3, 4), np.float32)
    batched = {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}
    plain = {"dimension_numbers": (((1,), (0,)), ((), ()))}
    assert cp.dots_saveable(dot_general_p, a, a, **batched)
    assert cp.checkpoint_dots is cp.dots_saveable
    assert not cp.dots_saveable(sin_p, a)
    assert not cp.dots_with_no_batch_dims_saveable(dot_general_p, a, a, **batched)
    assert cp.dots_with_no_batch_dims_saveable(dot_general_p, a, a, **plain)
    assert cp.checkpoint_dots_with_no_batch_dims is cp.dots_with_no_batch_dims_saveable
    assert cp.everything_saveable(sin_p, a) and not cp.nothing_saveable(dot_general_p, a, a)


def test_pytrees_kwargs_and_static_argnums():
    @ember.checkpoint
    def f(d, scale=1.0):
        return {"s": jnp.sin(d["a"]) * scale, "t": (d["b"] * 2.0,)}

    d = {"a": np.arange(3.0, dtype=np.float32), "b": np.float32(1.5)}
    out = f(d, scale=2.0)
    np.testing.assert_allclose(out["s"], np.sin(d["a"]) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(out["t"][0], 3.0)

    def g(x, n):
        for _ in range(n):  # n must be a Python int: static
            x = jnp.sin(x)
        return x

    h = ember.checkpoint(g, static_argnums=(1,))
    np.testing.assert_allclose(ember.grad(lambda x: h(x, 2))(0.3),
                               np.cos(np.sin(0.3)) * np.cos(0.3), rtol=1e-6)
    h_neg = ember.checkpoint(g, static_argnums=-1)
    np.testing.assert_allclose(h_neg(np.float32(0.3), 1), np.sin(np.float32(0.3)))
    with pytest.raises(ValueError, match=r"can only take integer values greater than or "
                       r"equal to `-len\(args\)` and less than `len\(args\)`, but got "
                       r"\(3,\), while `len\(args\)` = 2"):
        ember.checkpoint(g, static_argnums=3)(0.3, 1)
    with pytest.raises(TypeError, match="must be an int, tuple of ints or, bool"):
        ember.checkpoint(g, static_argnums=[1])(0.3, 1)
    with pytest.raises(TypeError, match="prevent_cse must be a bool or tuple of bools"):
        ember.checkpoint(g, prevent_cse=None)
    with pytest.raises(TypeError, match="Expected a callable value"):
        ember.checkpoint(3)


def test_staged_as_one_equation_and_vmap():
    f = ember.checkpoint(lambda x, w: jnp.sin(x) * w, prevent_cse=False)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    w = np.arange(3.0, dtype=np.float32)
    text = str(ember.make_jaxpr(f)(x[0], w))
    assert "remat2[" in text and "prevent_cse=False" in text
    np.testing.assert_allclose(ember.vmap(f, in_axes=(0, None))(x, w), np.sin(x) * w,
                               rtol=1e-6)
    np.testing.assert_allclose(ember.jit(ember.vmap(f, in_axes=(1, None)))(x.T, w),
                               np.sin(x) * w, rtol=1e-6)
    np.testing.assert_allclose(
        ember.grad(lambda x: jnp.sum(ember.vmap(f, in_axes=(0, None))(x, w)))(x),
        np.cos(x) * w, rtol=1e-6)


def _named_body(v, w):
    """Two named intermediates ("h" from the product, "a" after it) and unnamed rest."""
    from ember.ad_checkpoint import checkpoint_name
    h = checkpoint_name(jnp.tanh(jnp.dot(w, v)), "h")
    a = checkpoint_name(jnp.sin(h) * v, "a")
    b = jnp.cos(a) * h
    return jnp.exp(-b * b) * 0.5 + v * 0.5


def test_checkpoint_name_policies(x64):
    def loop(x, policy):
        body = ember.checkpoint(_named_body, policy=policy)
        return jnp.sum(lax.fori_loop(0, 6, lambda i, v: body(v, _W), x))

    def stacked(policy):
        return sorted(_stacked(lambda x: ember.grad(loop)(x, policy), _X))

    carry = [(6, 5)]
    assert stacked(cp.nothing_saveable) == carry
    assert stacked(cp.save_only_these_names("h")) == [(6, 5), (6, 5)]
    assert stacked(cp.save_only_these_names("h", "a")) == [(6, 5)] * 3
    assert stacked(cp.save_any_names_but_these("a")) == [(6, 5), (6, 5)]
    assert stacked(cp.save_any_names_but_these()) == [(6, 5)] * 3
    assert stacked(cp.save_only_these_names("nope")) == carry
    both = cp.save_from_both_policies(cp.save_only_these_names("h"),
                                      cp.save_only_these_names("a"))
    assert stacked(both) == [(6, 5)] * 3
    # The values and gradients do not depend on the policy, nor on the names.
    plain = ember.grad(lambda x: jnp.sum(lax.fori_loop(0, 6, lambda i, v: _body(v, _W), x)))(_X)
    for policy in (cp.save_only_these_names("h"), both, None):
        np.testing.assert_allclose(ember.grad(loop)(_X, policy), plain, rtol=1e-12)
        np.testing.assert_allclose(ember.jit(ember.grad(loop), static_argnums=1)(_X, policy),
                                   plain, rtol=1e-12)


def test_checkpoint_name_is_the_identity_everywhere():
    from ember.ad_checkpoint import checkpoint_name
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    tree = checkpoint_name({"a": x, "b": (x + 1,)}, "t")
    np.testing.assert_array_equal(tree["b"][0], x + 1)
    text = str(ember.make_jaxpr(lambda v: checkpoint_name(v * 2, "twice"))(x))
    assert "name[name=twice]" in text
    f = lambda v: jnp.sum(checkpoint_name(jnp.sin(v), "s") ** 2)  # noqa: E731
    np.testing.assert_allclose(ember.jit(f)(x), np.sum(np.sin(x) ** 2), rtol=1e-6)
    np.testing.assert_allclose(ember.grad(f)(x), 2 * np.sin(x) * np.cos(x), rtol=1e-5)
    np.testing.assert_allclose(ember.vmap(ember.grad(f))(x), 2 * np.sin(x) * np.cos(x),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="should be a boolean"):
        cp.save_from_both_policies(lambda *a, **k: 1, cp.nothing_saveable)(None)
