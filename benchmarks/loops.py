"""Loops compiled natively, Ember (CPU backend) vs NumPy's Python loop and JAX's fori_loop
(when importable), in one process:
1. 1000 steps of `x = x*0.99 + 0.01*sin(x)` on 1e4 f32 with `fori_loop`;
2. a 2-D Jacobi stencil, `g.at[1:-1, 1:-1].set(mean of the 4 neighbours)`, 100 steps of a
   512x512 f32 grid (issue 7: no full-grid copy per step, faster than JAX), with Ember's
   buffer assignment for it (the grid is the loop state; one interior-sized temporary).

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/loops.py [--repeat 21]

Prints each implementation's median milliseconds and its time relative to JAX and to NumPy
(goals of issue 7: Ember at most 0.3x JAX's time and below NumPy's on 1; faster than JAX on
2). Informative only:
shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

import numpy as np
from timing import median_ms  # benchmarks/timing.py (this folder is sys.path[0])

STEPS, N = 1000, 10_000
JACOBI_STEPS, GRID = 100, 512


def _numpy(x: np.ndarray) -> np.ndarray:
    a, b = np.float32(0.99), np.float32(0.01)
    for _ in range(STEPS):
        x = x * a + b * np.sin(x)
    return x


def _jitted(jit, lax, jnp):
    def step(i, x):
        return x * 0.99 + 0.01 * jnp.sin(x)

    return jit(lambda x: lax.fori_loop(0, STEPS, step, x))


def _jacobi_numpy(g: np.ndarray) -> np.ndarray:
    g = g.copy()
    for _ in range(JACOBI_STEPS):  # the right side is evaluated first: Jacobi, not G-S
        g[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    return g


def _jacobi_jitted(jit, lax):
    def step(i, g):
        return g.at[1:-1, 1:-1].set(0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2]
                                            + g[1:-1, 2:]))

    return jit(lambda g: lax.fori_loop(0, JACOBI_STEPS, step, g))


def _table(title: str, rows: dict[str, float], jax_name: str, np_name: str) -> None:
    jax_ms = rows.get(jax_name)
    np_ms = rows[np_name]
    print(title)
    print(f"{'implementation':<24}{'ms':>9}{'x JAX time':>12}{'x NumPy time':>14}")
    for name, ms in rows.items():
        vs_jax = f"{ms / jax_ms:.3f}" if jax_ms else "-"
        print(f"{name:<24}{ms:>9.3f}{vs_jax:>12}{ms / np_ms:>14.3f}")


def jacobi(repeat: int) -> None:
    import ember
    from ember import lax as elax

    g = np.zeros((GRID, GRID), np.float32)
    g[0] = 1.0
    g[:, -1] = np.linspace(0, 2, GRID, dtype=np.float32)
    f = _jacobi_jitted(ember.jit, elax)
    err = float(np.max(np.abs(np.asarray(f(g)) - _jacobi_numpy(g))))
    rows = {"numpy (Python loop)": median_ms(lambda: _jacobi_numpy(g), repeat),
            "ember": median_ms(lambda: np.asarray(f(g)), repeat)}
    if importlib.util.find_spec("jax") is not None:
        import jax

        jf = _jacobi_jitted(jax.jit, jax.lax)
        gj = jax.numpy.asarray(g)
        rows["jax fori_loop"] = median_ms(lambda: jf(gj).block_until_ready(), repeat)
    _table(f"\nJacobi, {JACOBI_STEPS} steps of a {GRID}x{GRID} f32 grid; "
           f"max |ember - numpy| = {err:.2e}", rows, "jax fori_loop", "numpy (Python loop)")
    stats = f.lower(g).compile().memory_analysis()
    interior = (GRID - 2) ** 2 * 4
    print(f"ember scratch: {stats.temp_size_in_bytes} bytes (interior {interior}, grid "
          f"{GRID * GRID * 4}); output written by the loop itself: "
          f"{'written by while' in stats.buffer_assignment}")


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
    _table(f"{STEPS} steps of x*0.99 + 0.01*sin(x), {N} f32; max |ember - numpy| = {err:.2e}",
           rows, "jax fori_loop", "numpy (Python loop)")
    jacobi(args.repeat)


if __name__ == "__main__":
    main()
