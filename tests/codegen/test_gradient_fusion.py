"""Issue 19's kernel goals for compiled gradients, on small shapes (benchmarks/autodiff.py
runs the full-size ones):

- `jit(grad(loss))` of a 3-layer tanh MLP with softmax cross-entropy: the backward pass has
  at most the forward's kernels plus one per dot; no transposed copies of the weight
  gradients (transpose(dot(dz, h)) is the dot with its operands swapped), each bias
  gradient is one reduction (the unbroadcast's sum over a unit dimension is no kernel), no
  kernel fills a constant, and the softmax part is one row kernel.
- the gradient of softmax cross-entropy (with JAX's tie rule for the max) is one row kernel.
Values: against the NumPy evaluator on the unoptimized module and against hand-written
NumPy gradients (logits with ties included).
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.hlo import parse_module
from ember.hlo.evaluator.core import evaluate
from ember.testing import mlp
from ember.tree_util import tree_leaves

SIZES = (20, 17, 16, 5)
BATCH = 33


mlp_loss = mlp.mlp_loss(jnp)
softmax_xent = mlp.softmax_cross_entropy(jnp)
hand_batched_grads = mlp.per_example_grads(jnp)  # vmap(grad(mlp_loss))'s twin


def _mlp_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = mlp.mlp_params(rng, SIZES, bias_scale=0.1)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    return params, x, mlp.one_hot(rng, BATCH, SIZES[-1])


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _mlp_grad_numpy(params, x, y):
    """The MLP loss's gradient by hand, in float64."""
    p64 = [(w.astype(np.float64), b.astype(np.float64)) for w, b in params]
    hs = [x.astype(np.float64)]
    for i, (w, b) in enumerate(p64):
        z = hs[-1] @ w + b
        hs.append(np.tanh(z) if i < len(p64) - 1 else z)
    dz = (_softmax(hs[-1]) - y) / x.shape[0]
    grads = []
    for i in reversed(range(len(p64))):
        grads.append((hs[i].T @ dz, dz.sum(axis=0)))
        if i:
            dz = (dz @ p64[i][0].T) * (1 - hs[i] ** 2)
    return grads[::-1]


def _kernels(fn, *args):
    return list(fn.lower(*args).compile().kernels())


def _evaluator_values(fn, *args):
    """The NumPy evaluator's values of the unoptimized module of `fn`."""
    module = parse_module(fn.lower(*args).as_text())
    out = evaluate(module, *[np.asarray(a) for a in tree_leaves(args)])
    return list(out) if isinstance(out, tuple) else [out]


def test_mlp_gradient_kernels():
    params, x, y = _mlp_data()
    fwd = _kernels(ember.jit(mlp_loss), params, x, y)
    grad = ember.jit(ember.grad(mlp_loss))
    ks = _kernels(grad, params, x, y)
    dots = sum(1 for k in fwd if k.kind in ("dot", "kOutput"))
    assert dots == 3, [k.kind for k in fwd]
    assert len(ks) - len(fwd) <= len(fwd) + dots, [(k.name, k.kind) for k in ks]
    kinds = [k.kind for k in ks]
    assert "transpose" not in kinds, kinds
    assert kinds.count("row") == 1, kinds
    assert kinds.count("kInput") == 3, kinds  # one column sum per bias gradient
    text = grad.lower(params, x, y).compile().as_text()
    entry = text[text.index("ENTRY"):]
    assert "fusion()" not in entry  # no kernel without operands (a constant fill)
    assert " transpose(" not in entry


def test_mlp_gradient_products_read_their_operands_in_place():
    # every backward product (dW = h^T dz, dx = dz W^T) reads its transposed operand as a
    # BLAS view with a transpose flag: no operand is copied into a packed buffer
    from ember.backends.cpu.dot import plan as dot_plan

    rng = np.random.default_rng(4)
    batch, sizes = 80, (96, 64, 48, 10)  # (every product large enough for BLAS)
    params = [(rng.standard_normal((a, b)).astype(np.float32) / np.float32(np.sqrt(a)),
               np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
    grad = ember.jit(ember.grad(mlp_loss))
    entry = grad.lower(params, x, y).compile()._compiled.optimized.entry
    products = [i for i in entry.instructions if i.opcode == "dot" or (
        i.opcode == "fusion" and i.attrs.get("kind") == "kOutput")]
    assert len(products) == 8, [i.name for i in products]  # 3 forward, 5 backward
    plans = [dot_plan.plan(i) for i in products]
    assert all(p.route == "blas" for p in plans), plans
    assert not any(p.lhs.packed or p.rhs.packed for p in plans), plans
    # the weight gradients contract over the batch: A is read transposed (trans = 1)
    wgrads = [p for p in plans if p.k == batch]
    assert len(wgrads) == 3 and all(p.lhs.blas(p.m, p.k)[0] == 1 for p in wgrads), wgrads


def test_mlp_gradient_values():
    params, x, y = _mlp_data(1)
    grad = ember.jit(ember.grad(mlp_loss))
    got = tree_leaves(grad(params, x, y))
    want = tree_leaves(_mlp_grad_numpy(params, x, y))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-6)
    for g, e in zip(got, _evaluator_values(grad, params, x, y)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("rows, cols", [(64, 32), (7, 13), (1, 2)])
def test_softmax_xent_gradient_is_one_row_kernel(rows, cols):
    rng = np.random.default_rng(rows)
    # halves: many rows hold their maximum twice (JAX's tie rule splits the max's cotangent)
    z = (np.round(2 * rng.standard_normal((rows, cols))) / 2).astype(np.float32)
    y = np.eye(cols, dtype=np.float32)[rng.integers(0, cols, rows)]
    grad = ember.jit(ember.grad(softmax_xent))
    ks = _kernels(grad, z, y)
    assert [k.kind for k in ks] == ["row"], [(k.name, k.kind) for k in ks]
    got = np.asarray(grad(z, y))
    want = (_softmax(z.astype(np.float64)) - y) / rows
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    (e,) = _evaluator_values(grad, z, y)
    np.testing.assert_allclose(got, e, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(got, np.asarray(ember.grad(softmax_xent)(z, y)), rtol=1e-5,
                               atol=1e-8)


@pytest.mark.parametrize("k, m, n", [(256, 40, 300), (7, 3, 5), (33, 17, 20)])
def test_swapped_weight_gradient_product_is_deterministic(k, m, n):
    """transpose(dot(a, b)) runs as dot(b, a): the same bits run after run, and the same
    values as the product transposed (bit for bit on the generated loops; BLAS may order
    the sums of its other orientation differently, within rounding)."""
    from ember.backends import cpu
    from ember.backends.cpu.dot.plan import BLAS_MIN_MACS

    text = f"""HloModule t
ENTRY %t (a: f32[{k},{m}], b: f32[{k},{n}]) -> f32[{n},{m}] {{
  %a = f32[{k},{m}] parameter(0)
  %b = f32[{k},{n}] parameter(1)
  %d = f32[{m},{n}] dot(%a, %b), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}
  ROOT %r = f32[{n},{m}] transpose(%d), dimensions={{1,0}}
}}"""
    module = parse_module(text)
    rng = np.random.default_rng(k)
    a = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    swapped = cpu.compile(module)
    assert swapped.kernel_names == ["dot.0"], swapped.kernel_names  # no transpose kernel
    plain = cpu.compile(module, run_passes=False)  # the dot, then the transpose
    got = swapped(a, b)
    np.testing.assert_array_equal(got, swapped(a, b))
    if k * m * n < BLAS_MIN_MACS:  # (the generated loops: the same order of the same products)
        np.testing.assert_array_equal(got, plain(a, b))
    np.testing.assert_allclose(got, plain(a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, evaluate(module, a, b), rtol=1e-5, atol=1e-5)


def layernorm_loss(x, g):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return jnp.sum(((x - m) / jnp.sqrt(v + 1e-5) * g) ** 2)


def test_layernorm_gradient_row_kernels():
    """The gradient in x is one row kernel; with g's too, the constants the row kernels share
    with the other kernels (1/n, the 2 of the square) are copied into each, never a kernel
    of their own."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((24, 19)).astype(np.float32)
    g = rng.standard_normal(19).astype(np.float32)
    dx = ember.jit(ember.grad(layernorm_loss))
    assert [k.kind for k in _kernels(dx, x, g)] == ["row"]
    both = ember.jit(ember.grad(layernorm_loss, argnums=(0, 1)))
    kinds = [k.kind for k in _kernels(both, x, g)]
    assert kinds.count("row") == 2, kinds
    text = both.lower(x, g).compile().as_text()
    assert "fusion()" not in text[text.index("ENTRY"):]
    got = [np.asarray(v) for v in both(x, g)]
    for a, e in zip(got, _evaluator_values(both, x, g)):
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(got[0], np.asarray(dx(x, g)), rtol=1e-5, atol=1e-6)


def test_per_example_gradients_compile_to_the_hand_batched_kernels():
    # vmap writes each example's max and sums broadcast back as broadcast-then-transpose;
    # folded into one broadcast (algsimp), the softmax rows join one row kernel as the
    # hand-batched program's do (issue 21: 20 kernels against 9 before)
    params, x, y = _mlp_data(2)
    per_example = ember.jit(ember.vmap(ember.grad(mlp_loss), (None, 0, 0)))
    by_hand = ember.jit(hand_batched_grads)
    ks, kh = _kernels(per_example, params, x, y), _kernels(by_hand, params, x, y)
    assert len(ks) == len(kh) == 9, ([(k.name, k.kind) for k in ks], [k.kind for k in kh])
    assert sorted(k.kind for k in ks) == sorted(k.kind for k in kh)
    assert [k.kind for k in ks].count("row") == 1
    got = tree_leaves(per_example(params, x, y))
    for g, h in zip(got, tree_leaves(by_hand(params, x, y))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(h), rtol=1e-5, atol=1e-6)
    for i in (0, BATCH - 1):  # (mlp_loss of one example is its loss)
        want = tree_leaves(_mlp_grad_numpy(params, x[i:i + 1], y[i:i + 1]))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g)[i], w, rtol=2e-4, atol=2e-6)
