"""Train a small MLP with `ember.value_and_grad` and SGD inside `ember.jit`, and check the
loss curve against the same model trained in NumPy with hand-written gradients.

Input: nothing (synthetic data from a fixed seed); `--steps N` and `--x64` on the command
line. Output: both loss curves (every 20th step printed) and their largest relative
difference; exit status 1 if it exceeds the tolerance (1e-5, issue 19's check).
The model: tanh layers of widths `SIZES`, softmax cross-entropy on one-hot labels, plain
SGD with learning rate `LR`. One jitted `train_step(params, x, y) -> (params, loss)` is
the whole update; the NumPy twin differentiates the same formulas by hand:
  logits z = h W + b, p = softmax(z), loss = -mean(sum(y * log p)),
  dL/dz = (p - y) / batch, dL/dW = h^T dL/dz, dL/db = sum_rows dL/dz,
  dL/dh = dL/dz W^T, through tanh: dL/da = dL/dh * (1 - tanh(a)^2).
Run: `.venv/bin/python examples/mlp_training.py` (tests/e2e/test_mlp_training.py runs it).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

import ember
import ember.numpy as jnp
from ember.testing.mlp import log_softmax, mlp_forward, mlp_loss, mlp_params

SIZES = (16, 32, 32, 4)
BATCH = 64
LR = 0.5
TOLERANCE = 1e-5

Params = list[tuple[Any, Any]]


def init(dtype: np.dtype, seed: int = 0) -> tuple[Params, np.ndarray, np.ndarray]:
    """Scaled Gaussian weights, zero biases, and a synthetic classification problem."""
    rng = np.random.default_rng(seed)
    params = mlp_params(rng, SIZES, dtype)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(dtype)
    teacher = rng.standard_normal((SIZES[0], SIZES[-1]))
    labels = np.argmax(x @ teacher, axis=1)
    y = np.eye(SIZES[-1], dtype=dtype)[labels]
    return params, x, y


# -- Ember: the loss, differentiated by ember.value_and_grad ----------------------------------

# h = tanh(h W + b) per hidden layer, logits z = h W + b, loss = -mean(sum(y * log_softmax(z)))
# (ember/testing/mlp.py: the same loss the gradient tests and benchmarks differentiate)
loss = mlp_loss(jnp)


@ember.jit
def train_step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
    value, grads = ember.value_and_grad(loss)(params, x, y)
    new = [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return new, value


def train_ember(params: Params, x: np.ndarray, y: np.ndarray, steps: int) -> list[float]:
    curve = []
    for _ in range(steps):
        params, value = train_step(params, x, y)
        curve.append(float(value))
    return curve


# -- NumPy: the same model with hand-written gradients ----------------------------------------

def numpy_step(params: Params, x: np.ndarray, y: np.ndarray) -> tuple[Params, float]:
    hs = mlp_forward(np, params, x)  # x, each tanh layer's output, the logits
    log_p = log_softmax(np, hs[-1])
    value = -np.mean(np.sum(y * log_p, axis=1))
    dz = (np.exp(log_p) - y) / x.shape[0]  # d loss / d logits
    new = []
    for i in range(len(params) - 1, -1, -1):
        w, b = params[i]
        gw, gb = hs[i].T @ dz, dz.sum(axis=0)
        if i > 0:
            dz = (dz @ w.T) * (1 - hs[i] * hs[i])  # through the tanh that made hs[i]
        new.append((w - LR * gw, b - LR * gb))
    return new[::-1], float(value)


def train_numpy(params: Params, x: np.ndarray, y: np.ndarray, steps: int) -> list[float]:
    curve = []
    for _ in range(steps):
        params, value = numpy_step(params, x, y)
        curve.append(value)
    return curve


def compare(steps: int = 200, x64: bool = False) -> tuple[list[float], list[float], float]:
    """Both loss curves from the same start, and their largest relative difference."""
    dtype = np.dtype(np.float64 if x64 else np.float32)
    params, x, y = init(dtype)
    ours = train_ember(params, x, y, steps)
    ref = train_numpy(params, x, y, steps)
    rel = max(abs(a - b) / abs(b) for a, b in zip(ours, ref))
    return ours, ref, rel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--x64", action="store_true", help="train in float64")
    args = parser.parse_args(argv)
    if args.x64:
        ember.config.update("jax_enable_x64", True)
    ours, ref, rel = compare(args.steps, args.x64)
    for i in range(0, args.steps, 20):
        print(f"step {i:4d}  ember {ours[i]:.7f}  numpy {ref[i]:.7f}")
    print(f"final loss {ours[-1]:.7f} (numpy {ref[-1]:.7f}); largest relative difference "
          f"{rel:.2e} (tolerance {TOLERANCE:.0e})")
    return 0 if rel <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
