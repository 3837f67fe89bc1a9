"""ember/testing/mlp.py, the MLP loss shared by the gradient tests, the autodiff and vmap
benchmarks and examples/mlp_training.py: the same function under ember.numpy, NumPy and
jax.numpy; one example's loss is its row of the batch; the hand-written per-example
gradients are JAX's vmap(grad)."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np

import ember
import ember.numpy as jnp
from ember.testing import mlp

SIZES = (7, 9, 3)


def _data(rows: int = 5):
    rng = np.random.default_rng(0)
    params = mlp.mlp_params(rng, SIZES, bias_scale=0.1)
    x = rng.standard_normal((rows, SIZES[0])).astype(np.float32)
    return params, x, mlp.one_hot(rng, rows, SIZES[-1])


def test_loss_is_the_same_function_for_every_numpy_module() -> None:
    params, x, y = _data()
    want = mlp.mlp_loss(np)([(w.astype(np.float64), b.astype(np.float64)) for w, b in params],
                            x.astype(np.float64), y)
    for module, f in ((jnp, ember.jit), (jjnp, jax.jit)):
        np.testing.assert_allclose(float(f(mlp.mlp_loss(module))(params, x, y)), want,
                                   rtol=1e-6)
    per_row = [mlp.mlp_loss(np)(params, x[i], y[i]) for i in range(len(x))]
    np.testing.assert_allclose(np.mean(per_row), want, rtol=1e-6)
    z = x @ params[0][0]  # softmax_cross_entropy on logits: the loss's last step
    logp = z - z.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(float(mlp.softmax_cross_entropy(jnp)(z, y[:, :1].repeat(9, 1))),
                               -np.sum(y[:, :1].repeat(9, 1) * logp) / len(z), rtol=1e-5)


def test_per_example_grads_are_vmap_of_grad() -> None:
    params, x, y = _data(6)
    want = jax.vmap(jax.grad(mlp.mlp_loss(jjnp)), (None, 0, 0))(params, x, y)
    got = mlp.per_example_grads(jnp)(params, x, y)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)
    zero = mlp.mlp_params(np.random.default_rng(1), SIZES)
    assert all(not b.any() for _, b in zero) and zero[0][0].dtype == np.float32
