"""Stencils whose result is padded or concatenated back to the grid's shape (issue 26, item 1),
Ember (CPU backend) vs JAX (when importable) and NumPy, in one process:
1. a 5-point stencil followed by `jnp.pad(inner, 1)` (one fused kernel) at 256x256 and
   1024x1024, beside the same stencil without the pad (what the pad should add to: its border);
2. the same border written with `jnp.concatenate` of the stencil's rows and fixed edge rows;
3. the heat equation: a `fori_loop` of 100 padded-stencil steps on 256x256;
4. a 1-D Jacobi of 3200 f64 for 800 steps, two `.at[1:-1].set` per step (x64 on in both);
5. the per-iteration overhead of a `fori_loop` whose body is next to nothing (`x + 1.0` on
   1, 8 and 1000 f32), in nanoseconds per iteration.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/stencil.py [--repeat 21]

Prints each workload's median milliseconds per implementation (they take turns in blocks of
calls, three rounds) and Ember/JAX, Ember/NumPy (below 1: Ember is faster). Goals of the
issue: at most 0.5x JAX on the padded stencils and the heat equation. Informative only:
shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
from collections.abc import Callable

import numpy as np
from timing import interleaved_ms

HEAT_STEPS = 100
EMPTY_STEPS = 100_000
ALPHA = 0.1


def _stencil(jnp, u):
    c = u[1:-1, 1:-1]
    return c + ALPHA * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * c)


def padded(jnp):
    return lambda u: jnp.pad(_stencil(jnp, u), 1)


def unpadded(jnp):
    return lambda u: _stencil(jnp, u)


def concatenated(jnp):
    """The stencil's rows between the grid's own first and last rows, the columns padded
    by edge values: a concatenate in both dimensions."""
    def f(u):
        inner = _stencil(jnp, u)
        inner = jnp.concatenate([u[1:-1, :1], inner, u[1:-1, -1:]], axis=1)
        return jnp.concatenate([u[:1], inner, u[-1:]], axis=0)
    return f


def heat(jnp, lax):
    def step(i, u):
        return jnp.pad(_stencil(jnp, u), 1)
    return lambda u: lax.fori_loop(0, HEAT_STEPS, step, u)


JACOBI_STEPS, JACOBI_N = 800, 3200


def jacobi_1d(lax):
    def step(i, c):
        a, b = c
        b = b.at[1:-1].set(0.5 * (a[:-2] + a[2:]))
        a = a.at[1:-1].set(0.5 * (b[:-2] + b[2:]))
        return a, b
    return lambda a, b: lax.fori_loop(0, JACOBI_STEPS, step, (a, b))


def _numpy_jacobi_1d(a, b):
    a, b = a.copy(), b.copy()
    for _ in range(JACOBI_STEPS):
        b[1:-1] = 0.5 * (a[:-2] + a[2:])
        a[1:-1] = 0.5 * (b[:-2] + b[2:])
    return a, b


def empty_loop(lax):
    return lambda x: lax.fori_loop(0, EMPTY_STEPS, lambda i, x: x + 1.0, x)


def _numpy_padded(u):
    return np.pad(_stencil(np, u), 1)


def _numpy_concatenated(u):
    return concatenated(np)(u)


def _numpy_heat(u):
    for _ in range(HEAT_STEPS):
        u = np.pad(_stencil(np, u), 1)
    return u


def _row(title: str, fns: dict[str, Callable[[], object]], repeat: int,
         check: Callable[[], float] | None = None) -> dict[str, float]:
    ms = interleaved_ms(fns, repeat)
    jax_ms, np_ms = ms.get("jax"), ms.get("numpy")
    err = f"  max|ember-numpy| {check():.1e}" if check is not None else ""
    cells = "".join(f"{k} {v:9.4f}  " for k, v in ms.items())
    vs_jax = f"{ms['ember'] / jax_ms:6.3f}" if jax_ms else "     -"
    vs_np = f"{ms['ember'] / np_ms:6.3f}" if np_ms else "     -"
    print(f"{title:<28}{cells}ember/jax {vs_jax}  ember/numpy {vs_np}{err}")
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    os.environ.setdefault("EMBER_BACKEND", "cpu")
    import ember
    import ember.numpy as ejnp
    from ember import lax as elax

    have_jax = importlib.util.find_spec("jax") is not None
    if have_jax:
        import jax
        import jax.numpy as jjnp
    rng = np.random.default_rng(0)
    print("median ms per call; ember/jax and ember/numpy: time ratios (below 1: ember faster)")
    cases = [(f"padded stencil {n}", padded, _numpy_padded, n) for n in (256, 1024)]
    cases += [(f"stencil, no pad {n}", unpadded, lambda u: _stencil(np, u), n)
              for n in (256, 1024)]
    cases += [(f"concatenated stencil {n}", concatenated, _numpy_concatenated, n)
              for n in (256, 1024)]
    for title, make, ref, n in cases:
        u = rng.standard_normal((n, n)).astype(np.float32)
        f = ember.jit(make(ejnp))
        fns: dict[str, Callable[[], object]] = {"ember": lambda f=f, u=u: f(u),
                                                "numpy": lambda ref=ref, u=u: ref(u)}
        if have_jax:
            jf, uj = jax.jit(make(jjnp)), jjnp.asarray(u)
            fns["jax"] = lambda jf=jf, uj=uj: jf(uj).block_until_ready()
        _row(title, fns, args.repeat,
             lambda f=f, u=u, ref=ref: float(np.max(np.abs(np.asarray(f(u)) - ref(u)))))

    u = rng.standard_normal((256, 256)).astype(np.float32)
    f = ember.jit(heat(ejnp, elax))
    fns = {"ember": lambda: f(u), "numpy": lambda: _numpy_heat(u)}
    if have_jax:
        jf, uj = jax.jit(heat(jjnp, jax.lax)), jjnp.asarray(u)
        fns["jax"] = lambda: jf(uj).block_until_ready()
    _row(f"heat equation {HEAT_STEPS} steps", fns, max(5, args.repeat // 3),
         lambda: float(np.max(np.abs(np.asarray(f(u)) - _numpy_heat(u)))))

    # 1-D Jacobi in f64: both libraries with x64 on from here (the float32 rows are done)
    ember.config.update("jax_enable_x64", True)
    if have_jax:
        jax.config.update("jax_enable_x64", True)
    a = rng.standard_normal(JACOBI_N)
    b = a.copy()
    f = ember.jit(jacobi_1d(elax))
    fns = {"ember": lambda: f(a, b), "numpy": lambda: _numpy_jacobi_1d(a, b)}
    if have_jax:
        jf = jax.jit(jacobi_1d(jax.lax))
        fns["jax"] = lambda: jax.block_until_ready(jf(a, b))
    _row(f"jacobi 1-D f64 {JACOBI_STEPS} steps", fns, max(5, args.repeat // 3),
         lambda: float(np.max(np.abs(np.asarray(f(a, b)[0]) - _numpy_jacobi_1d(a, b)[0]))))
    ember.config.update("jax_enable_x64", False)
    if have_jax:
        jax.config.update("jax_enable_x64", False)

    print(f"\nfori_loop of {EMPTY_STEPS} steps of x + 1.0: ns per iteration")
    for n in (1, 8, 1000):
        x = np.zeros(n, np.float32)
        f = ember.jit(empty_loop(elax))
        fns = {"ember": lambda f=f, x=x: f(x)}
        if have_jax:
            jf, xj = jax.jit(empty_loop(jax.lax)), jjnp.asarray(x)
            fns["jax"] = lambda jf=jf, xj=xj: jf(xj).block_until_ready()
        ms = interleaved_ms(fns, args.repeat)
        ns = {k: v * 1e6 / EMPTY_STEPS for k, v in ms.items()}
        print(f"f32[{n}]: " + "  ".join(f"{k} {v:7.2f} ns" for k, v in ns.items())
              + (f"  ember/jax {ns['ember'] / ns['jax']:.3f}" if "jax" in ns else ""))


if __name__ == "__main__":
    main()
