"""The small tanh MLP with softmax cross-entropy that the gradient tests, the autodiff and vmap
benchmarks and examples/mlp_training.py all train or differentiate, written once.

Input: a NumPy-like module `jnp` (ember.numpy or jax.numpy: the benchmarks build the same
function for both), parameters as a list of (w, b) pairs, inputs x and one-hot labels y.
Output: the functions below, built for that module.
  mlp_loss(jnp)(params, x, y): tanh hidden layers, linear last layer, log-softmax over the
    last axis; for a batch (x 2-D) the mean over rows of -sum(y log p), for one example
    (x 1-D, e.g. under vmap) that example's -sum(y log p).
  softmax_cross_entropy(jnp)(z, y): -sum(y log softmax(z)) / rows, on logits directly.
  per_example_grads(jnp)(params, x, y): every example's gradient of mlp_loss at once,
    differentiated by hand (outer products per example), the twin that vmap(grad) is
    measured against.
  mlp_forward(jnp, params, x) (the activations, for hand-written gradients),
  log_softmax(jnp, z), mlp_params(rng, sizes, dtype, bias_scale) and
  one_hot(rng, rows, classes, dtype).
Invariants: log-softmax subtracts the row max (no overflow in exp); nothing here imports
ember, so JAX's module works the same.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Params = list[tuple[Any, Any]]


def mlp_forward(jnp: Any, params: Params, x: Any) -> list[Any]:
    """The activations: x, each hidden layer's tanh output, the logits."""
    hs, h = [x], x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jnp.tanh(h)
        hs.append(h)
    return hs


def log_softmax(jnp: Any, z: Any) -> Any:
    """z - logsumexp(z) over the last axis, the row max subtracted first."""
    shifted = z - jnp.max(z, axis=-1, keepdims=True)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))


def mlp_loss(jnp: Any) -> Callable[[Params, Any, Any], Any]:
    """loss(params, x, y): mean softmax cross-entropy of a batch, or one example's."""
    def loss(params: Params, x: Any, y: Any) -> Any:
        z = mlp_forward(jnp, params, x)[-1]
        nll = -jnp.sum(y * log_softmax(jnp, z), axis=-1)
        return nll if nll.ndim == 0 else jnp.mean(nll)
    return loss


def softmax_cross_entropy(jnp: Any) -> Callable[[Any, Any], Any]:
    """loss(z, y) = -sum(y log softmax(z)) / rows for logits z of shape (rows, classes)."""
    def loss(z: Any, y: Any) -> Any:
        return -jnp.sum(y * log_softmax(jnp, z)) / z.shape[0]
    return loss


def per_example_grads(jnp: Any) -> Callable[[Params, Any, Any], Params]:
    """grads(params, x, y): the gradient of one example's mlp_loss for every row of x at
    once: dL/dz = p sum(y) - y, dW = outer(h, dz), db = dz, back through tanh."""
    def grads(params: Params, x: Any, y: Any) -> Params:
        hs = mlp_forward(jnp, params, x)
        p = jnp.exp(hs[-1] - jnp.max(hs[-1], axis=1, keepdims=True))
        p = p / jnp.sum(p, axis=1, keepdims=True)
        dz = p * jnp.sum(y, axis=1, keepdims=True) - y
        out = []
        for i in range(len(params) - 1, -1, -1):
            w, _ = params[i]
            out.append((jnp.einsum("bi,bj->bij", hs[i], dz), dz))
            if i > 0:
                dz = (dz @ w.T) * (1 - hs[i] * hs[i])
        return out[::-1]
    return grads


def mlp_params(rng: np.random.Generator, sizes: Sequence[int], dtype: Any = np.float32,
               bias_scale: float = 0.0) -> Params:
    """(w, b) per layer: w Gaussian scaled by 1/sqrt(fan-in), b Gaussian times
    `bias_scale` (zeros when 0)."""
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        w = (rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype)
        bias = (rng.standard_normal(b) * bias_scale if bias_scale else np.zeros(b)).astype(dtype)
        params.append((w, bias))
    return params


def one_hot(rng: np.random.Generator, rows: int, classes: int,
            dtype: Any = np.float32) -> np.ndarray:
    """Random one-hot labels of shape (rows, classes)."""
    return np.eye(classes, dtype=dtype)[rng.integers(0, classes, rows)]
