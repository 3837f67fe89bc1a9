"""Loops compiled natively: 1000 steps of `x = x*0.99 + 0.01*sin(x)` on 1e4 f32 with
`fori_loop`, Ember (CPU backend) vs NumPy's Python loop and JAX's fori_loop (when
importable), in one process.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/loops.py [--repeat 21]

Prints each implementation's median milliseconds and its time relative to JAX and to NumPy
(goal of issue 7: Ember at most 0.3x JAX's time and below NumPy's). Informative only:
shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

import numpy as np
from timing import median_ms  # benchmarks/timing.py (this folder is sys.path[0])

STEPS, N = 1000, 10_000


def _numpy(x: np.ndarray) -> np.ndarray:
    a, b = np.float32(0.99), np.float32(0.01)
    for _ in range(STEPS):
        x = x * a + b * np.sin(x)
    return x


def _jitted(jit, lax, jnp):
    def step(i, x):
        return x * 0.99 + 0.01 * jnp.sin(x)

    return jit(lambda x: lax.fori_loop(0, STEPS, step, x))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    os.environ.setdefault("EMBER_BACKEND", "cpu")
    import ember
    import ember.numpy as ejnp
    from ember import lax as elax

    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    f = _jitted(ember.jit, elax, ejnp)
    backend = f.lower(x).compile()._compiled.backend
    want = _numpy(x)
    got = np.asarray(f(x))
    err = float(np.max(np.abs(got - want)))
    rows = {"numpy (Python loop)": median_ms(lambda: _numpy(x), args.repeat),
            f"ember ({backend})": median_ms(lambda: np.asarray(f(x)), args.repeat)}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp

        jf = _jitted(jax.jit, jax.lax, jjnp)
        xj = jax.numpy.asarray(x)
        rows["jax fori_loop"] = median_ms(lambda: jf(xj).block_until_ready(), args.repeat)
    jax_ms = rows.get("jax fori_loop")
    np_ms = rows["numpy (Python loop)"]
    print(f"{STEPS} steps of x*0.99 + 0.01*sin(x), {N} f32; max |ember - numpy| = {err:.2e}")
    print(f"{'implementation':<24}{'ms':>9}{'x JAX time':>12}{'x NumPy time':>14}")
    for name, ms in rows.items():
        vs_jax = f"{ms / jax_ms:.3f}" if jax_ms else "-"
        print(f"{name:<24}{ms:>9.3f}{vs_jax:>12}{ms / np_ms:>14.3f}")


if __name__ == "__main__":
    main()
