"""Per-example gradients, `jit(vmap(grad(loss)))` of a small MLP over 256 examples, Ember vs
JAX (XLA CPU) in one process: issue 21's goal (at most 0.9x JAX's time, and the same
number of kernels as the same gradients written batched by hand).

The model: 32 -> 64 -> 64 -> 8, tanh, softmax cross-entropy per example. The hand-batched
twin computes every example's weight gradient at once with the formulas the
per-example program implies (an outer product per example: einsum "bi,bj->bij").

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/vmap.py [--repeat 31]

Informative only: shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])

from ember.testing.mlp import mlp_loss, mlp_params, one_hot, per_example_grads

SIZES = (32, 64, 64, 8)
EXAMPLES = 256


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=31)
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    rng = np.random.default_rng(0)
    params = mlp_params(rng, SIZES, bias_scale=0.1)
    x = rng.standard_normal((EXAMPLES, SIZES[0])).astype(np.float32)
    y = one_hot(rng, EXAMPLES, SIZES[-1])

    per_example = ember.jit(ember.vmap(ember.grad(mlp_loss(ejnp)), (None, 0, 0)))
    by_hand = ember.jit(per_example_grads(ejnp))
    got, want = per_example(params, x, y), by_hand(params, x, y)
    err = max(float(np.abs(np.asarray(g) - np.asarray(w)).max())
              for (gw, gb), (ww, wb) in zip(got, want) for g, w in ((gw, ww), (gb, wb)))
    k_vmap = len(per_example.lower(params, x, y).compile().kernels())
    k_hand = len(by_hand.lower(params, x, y).compile().kernels())
    print(f"per-example gradients, {EXAMPLES} examples, MLP {SIZES}: max |vmap - by hand| "
          f"= {err:.2e}")
    print(f"kernels: vmap(grad) {k_vmap}, hand-batched {k_hand} (goal: equal)")

    fns: dict[str, Callable[[], Any]] = {
        "ember vmap(grad)": lambda: ember.block_until_ready(per_example(params, x, y)),
        "ember by hand": lambda: ember.block_until_ready(by_hand(params, x, y))}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp
        j_fn = jax.jit(jax.vmap(jax.grad(mlp_loss(jjnp)), (None, 0, 0)))
        jp = jax.device_put(params)
        jx, jy = jax.numpy.asarray(x), jax.numpy.asarray(y)
        fns["jax vmap(grad)"] = lambda: jax.block_until_ready(j_fn(jp, jx, jy))
    times = interleaved_ms(fns, args.repeat)
    jax_ms = times.get("jax vmap(grad)")
    for name, ms in times.items():
        rel = f"{ms / jax_ms:.3f}x jax" if jax_ms else ""
        print(f"  {name:<18}{ms:>9.3f} ms  {rel}")
    print("(goal: ember vmap(grad) at most 0.9x jax)")


if __name__ == "__main__":
    main()
