"""Gradients compiled by Ember vs JAX's (XLA CPU) in one process: issue 19's goals.

1. `jit(grad(loss))` of a 3-layer MLP (batch 256, widths 784-512-512-10, f32, tanh,
   softmax cross-entropy): time relative to JAX (goal: at most 0.9x), and kernel counts
   (goal: the gradient program has at most the forward's kernels, again, plus one per dot).
2. The gradient of softmax cross-entropy over 4096x1024 f32 logits: time relative to JAX
   (goal: at most 0.8x) and its kernels (goal: one row kernel forward, one backward).
3. The first call of `jit(grad(loss))` (trace, lower, optimize, compile, run) against the
   first call of `jit(loss)` (goal: at most 2x) and against JAX's first call of its own
   gradient. Ember's disk cache is off for this (EMBER_CACHE_DIR=off).

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/autodiff.py [--repeat 31]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional
(without it only Ember's numbers print).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])

os.environ["EMBER_CACHE_DIR"] = "off"  # first-call times include the compile

# after the line above: importing ember reads the cache setting
from ember.testing.mlp import mlp_loss, mlp_params, one_hot  # noqa: E402
from ember.testing.mlp import softmax_cross_entropy as softmax_xent  # noqa: E402

SIZES = (784, 512, 512, 10)
BATCH = 256
ROWS, COLS = 4096, 1024


def mlp_data(rng: np.random.Generator) -> tuple[list, np.ndarray, np.ndarray]:
    params = mlp_params(rng, SIZES)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    return params, x, one_hot(rng, BATCH, SIZES[-1])


def first_call_s(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _kernels(jitted: Any, *args: Any) -> list:
    return list(jitted.lower(*args).compile().kernels())


def _ratio_rows(title: str, times: dict[str, float]) -> None:
    print(f"\n{title}")
    jax_ms = times.get("jax")
    for name, ms in times.items():
        rel = f"{ms / jax_ms:.3f}x jax" if jax_ms else ""
        print(f"  {name:<8}{ms:>9.3f} ms  {rel}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=31)
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    has_jax = importlib.util.find_spec("jax") is not None
    rng = np.random.default_rng(0)
    params, x, y = mlp_data(rng)

    # 3 first: the first calls must come before anything else compiles these functions.
    e_loss = mlp_loss(ejnp)
    e_fwd, e_grad = ember.jit(e_loss), ember.jit(ember.grad(e_loss))
    fwd_s = first_call_s(lambda: ember.block_until_ready(e_fwd(params, x, y)))
    grad_s = first_call_s(lambda: ember.block_until_ready(e_grad(params, x, y)))
    print("first call (trace + compile + run)")
    print(f"  ember jit(loss)        {fwd_s * 1e3:8.1f} ms")
    print(f"  ember jit(grad(loss))  {grad_s * 1e3:8.1f} ms  ({grad_s / fwd_s:.2f}x the "
          "forward's; goal <= 2x)")
    if has_jax:
        import jax
        import jax.numpy as jjnp
        j_loss = mlp_loss(jjnp)
        j_grad = jax.jit(jax.grad(j_loss))
        jg_s = first_call_s(lambda: jax.block_until_ready(j_grad(params, x, y)))
        print(f"  jax jit(grad(loss))    {jg_s * 1e3:8.1f} ms  (ember {grad_s / jg_s:.2f}x)")

    # 1: the MLP's gradient
    fwd_k, grad_k = _kernels(e_fwd, params, x, y), _kernels(e_grad, params, x, y)
    dots = sum(1 for k in fwd_k if k.kind in ("dot", "kOutput"))
    print(f"\nMLP kernels: forward {len(fwd_k)} ({dots} with a product), gradient "
          f"{len(grad_k)}: backward {len(grad_k) - len(fwd_k)} (goal <= {len(fwd_k) + dots})")
    fns: dict[str, Callable[[], Any]] = {
        "ember": lambda: ember.block_until_ready(e_grad(params, x, y))}
    if has_jax:
        jp = jax.device_put(params)
        jx, jy = jax.numpy.asarray(x), jax.numpy.asarray(y)
        fns["jax"] = lambda: jax.block_until_ready(j_grad(jp, jx, jy))
    _ratio_rows(f"jit(grad) of the MLP loss (batch {BATCH}, widths {SIZES}; goal <= 0.9x)",
                interleaved_ms(fns, args.repeat))

    # 2: softmax cross-entropy's gradient
    z = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    t = np.eye(COLS, dtype=np.float32)[rng.integers(0, COLS, ROWS)]
    e_sx = ember.jit(ember.grad(softmax_xent(ejnp)))
    sx_k = _kernels(e_sx, z, t)
    print(f"\nsoftmax cross-entropy gradient kernels: {len(sx_k)} "
          f"({', '.join(k.kind for k in sx_k)})")
    fns = {"ember": lambda: ember.block_until_ready(e_sx(z, t))}
    if has_jax:
        j_sx = jax.jit(jax.grad(softmax_xent(jjnp)))
        jz, jt = jax.numpy.asarray(z), jax.numpy.asarray(t)
        fns["jax"] = lambda: jax.block_until_ready(j_sx(jz, jt))
        err = np.abs(np.asarray(e_sx(z, t)) - np.asarray(j_sx(jz, jt))).max()
        print(f"  max |ember - jax| = {err:.2e}")
    _ratio_rows(f"jit(grad) of softmax cross-entropy over {ROWS}x{COLS} (goal <= 0.8x)",
                interleaved_ms(fns, args.repeat))


if __name__ == "__main__":
    main()
