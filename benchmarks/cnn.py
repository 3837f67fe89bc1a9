"""A LeNet-5-style CNN training step, Ember vs JAX (XLA CPU) in one process: issue 23's goal.

The step is `jit(value_and_grad(loss))` of conv(6 5x5, SAME) - relu - 2x2 max pool -
conv(16 5x5, VALID) - relu - 2x2 max pool - dense 400-120-84-10 (relu) - softmax
cross-entropy, on a batch of 64 28x28x1 f32 images (NHWC, HWIO). Prints the median times
and Ember's ratio to JAX (goal: at most 1.0x), and the largest difference of the values.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/cnn.py [--repeat 21]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional
(without it only Ember's numbers print).
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])

BATCH = 64
DN = ("NHWC", "HWIO", "NHWC")


def lenet_loss(lax: Any, jnp: Any) -> Callable:
    def pool(h: Any) -> Any:
        return lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(params: dict, x: Any, y: Any) -> Any:
        h = lax.conv_general_dilated(x, params["c1"], (1, 1), "SAME", dimension_numbers=DN)
        h = pool(jnp.maximum(h + params["b1"], 0.0))  # 14x14x6
        h = lax.conv_general_dilated(h, params["c2"], (1, 1), "VALID", dimension_numbers=DN)
        h = pool(jnp.maximum(h + params["b2"], 0.0))  # 5x5x16
        h = h.reshape(h.shape[0], -1)
        for i in range(3):
            h = h @ params[f"w{i}"] + params[f"d{i}"]
            if i < 2:
                h = jnp.maximum(h, 0.0)
        shifted = h - jnp.max(h, axis=1, keepdims=True)
        log_p = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(y * log_p, axis=1))
    return loss


def lenet_data(rng: np.random.Generator) -> tuple[dict, np.ndarray, np.ndarray]:
    def init(*shape: int) -> np.ndarray:
        fan_in = int(np.prod(shape[:-1]))
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    params = {"c1": init(5, 5, 1, 6), "b1": np.zeros(6, np.float32),
              "c2": init(5, 5, 6, 16), "b2": np.zeros(16, np.float32)}
    for i, (a, b) in enumerate(((400, 120), (120, 84), (84, 10))):
        params[f"w{i}"], params[f"d{i}"] = init(a, b), np.zeros(b, np.float32)
    x = rng.standard_normal((BATCH, 28, 28, 1)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, BATCH)]
    return params, x, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    from ember import lax as elax
    params, x, y = lenet_data(np.random.default_rng(0))
    e_step = ember.jit(ember.value_and_grad(lenet_loss(elax, ejnp)))
    e_val, e_grads = e_step(params, x, y)
    fns: dict[str, Callable[[], Any]] = {
        "ember": lambda: ember.block_until_ready(e_step(params, x, y))}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        j_step = jax.jit(jax.value_and_grad(lenet_loss(jax.lax, jjnp)))
        jp = jax.device_put(params)
        jx, jy = jjnp.asarray(x), jjnp.asarray(y)
        j_val, j_grads = j_step(jp, jx, jy)
        err = max(float(np.abs(np.asarray(e_grads[k]) - np.asarray(j_grads[k])).max())
                  for k in params)
        print(f"loss ember {float(e_val):.6f} jax {float(j_val):.6f}; "
              f"max |grad difference| {err:.2e}")
        fns["jax"] = lambda: jax.block_until_ready(j_step(jp, jx, jy))
    times = interleaved_ms(fns, args.repeat)
    print(f"\nLeNet-5 training step, jit(value_and_grad), batch {BATCH}, 28x28 f32 "
          "(goal <= 1.0x)")
    for name, ms in times.items():
        rel = f"{ms / times['jax']:.3f}x jax" if "jax" in times else ""
        print(f"  {name:<8}{ms:>9.3f} ms  {rel}")


if __name__ == "__main__":
    main()
