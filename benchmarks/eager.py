"""Eager-mode dispatch: `ember.numpy` ops outside `jit` against NumPy and JAX (issue 26).

Per-call time (median of repeated calls, interleaved rounds) of small and large eager ops,
with Ember's ratio to JAX's eager op and to NumPy's. Small arrays measure the dispatch
overhead (what runs between the Python call and the native kernel); large ones the kernel.
Goals (issue 26): on 1000 f32, `x + x`, `jnp.sin(x)`, `jnp.sum(x)`,
`jnp.where(x > 0, x, 0.0)` at most 1.0x JAX's per-call time.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/eager.py [--repeat 201]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional
(without it only Ember's and NumPy's numbers print).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved_median_ms  # benchmarks/timing.py (this folder is sys.path[0])

# (name, n, op(jnp-like module, x)): each op's result is made ready before the clock stops
CASES: tuple[tuple[str, int, Callable[[Any, Any], Any]], ...] = (
    ("x + 1", 10, lambda m, x: x + 1),
    ("x + x", 1000, lambda m, x: x + x),
    ("sin(x)", 1000, lambda m, x: m.sin(x)),
    ("sum(x)", 1000, lambda m, x: m.sum(x)),
    ("where(x > 0, x, 0)", 1000, lambda m, x: m.where(x > 0, x, 0.0)),
    ("x * 2.0 + 1.0", 1000, lambda m, x: x * 2.0 + 1.0),
    ("exp(x)", 1000, lambda m, x: m.exp(x)),
    ("max(x)", 1000, lambda m, x: m.max(x)),
    ("sin(x)", 1_000_000, lambda m, x: m.sin(x)),
    ("x + x", 1_000_000, lambda m, x: x + x),
)


def _ready(value: Any) -> Any:
    """Wait for an asynchronous result (JAX dispatches asynchronously)."""
    block = getattr(value, "block_until_ready", None)
    return block() if block is not None else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=201)
    args = parser.parse_args()
    import ember.numpy as ejnp
    libs: dict[str, tuple[Any, Callable[[np.ndarray], Any]]] = {
        "ember": (ejnp, ejnp.asarray), "numpy": (np, np.asarray)}
    if importlib.util.find_spec("jax") is not None:
        import jax.numpy as jjnp
        libs["jax"] = (jjnp, jjnp.asarray)
    rng = np.random.default_rng(0)
    print(f"{'op':<22}{'n':>9}" + "".join(f"{k + ' us':>12}" for k in libs)
          + f"{'ember/jax':>11}{'ember/numpy':>13}")
    over_jax = []
    for name, n, op in CASES:
        x = rng.standard_normal(n).astype(np.float32)
        fns = {}
        for lib, (mod, put) in libs.items():
            xv = put(x)
            fns[lib] = (lambda mod=mod, xv=xv, op=op: _ready(op(mod, xv)))
        got = np.asarray(fns["ember"]())
        want = np.asarray(fns["numpy"]())
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, math.sqrt(n)))
        ms = interleaved_median_ms(fns, args.repeat)
        us = {k: v * 1e3 for k, v in ms.items()}
        rj = us["ember"] / us["jax"] if "jax" in us else float("nan")
        rn = us["ember"] / us["numpy"]
        if "jax" in us:
            over_jax.append(rj)
        print(f"{name:<22}{n:>9}" + "".join(f"{us[k]:>12.2f}" for k in libs)
              + f"{rj:>10.2f}x{rn:>12.2f}x")
    if over_jax:
        geo = math.exp(sum(math.log(r) for r in over_jax) / len(over_jax))
        print(f"geo-mean ember/jax {geo:.2f} over {len(over_jax)} ops; "
              f"worst {max(over_jax):.2f}")


if __name__ == "__main__":
    main()
