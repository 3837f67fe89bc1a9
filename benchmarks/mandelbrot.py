"""The Mandelbrot set in complex128 compiled by Ember vs JAX (XLA CPU) and NumPy: issue 25's
goal (one fused kernel per iteration, faster than JAX).

A 1000x1000 grid c over [-2, 1] x [-1.5, 1.5], 50 iterations of z = z*z + c in
`lax.fori_loop`, counting per point the iterations with |z| <= 2. Prints the median time
of each (interleaved blocks, benchmarks/timing.py), Ember's time relative to JAX's and to
NumPy's, the kernels of one loop iteration, and whether the counts agree.

Run:
    python benchmarks/mandelbrot.py [--size 1000] [--iters 50] [--repeat 9]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional
(without it only Ember's and NumPy's numbers print).
"""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])


def mandelbrot(jnp: Any, lax: Any, iters: int) -> Any:
    def run(c: Any) -> Any:
        def body(_: Any, state: Any) -> Any:
            z, n = state
            z = z * z + c
            return z, n + (jnp.abs(z) <= 2).astype(jnp.int32)

        init = (jnp.zeros_like(c), jnp.zeros(c.shape, jnp.int32))
        return lax.fori_loop(0, iters, body, init)[1]

    return run


def mandelbrot_numpy(c: np.ndarray, iters: int) -> np.ndarray:
    z = np.zeros_like(c)
    n = np.zeros(c.shape, np.int32)
    with np.errstate(all="ignore"):
        for _ in range(iters):
            z = z * z + c
            n += np.abs(z) <= 2
    return n


def grid(size: int) -> np.ndarray:
    x = np.linspace(-2.0, 1.0, size)
    y = np.linspace(-1.5, 1.5, size)
    return (x[None, :] + 1j * y[:, None]).astype(np.complex128)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()

    import ember
    import ember.numpy as enp
    from ember import lax as elax

    ember.config.update("jax_enable_x64", True)
    c = grid(args.size)
    ember_fn = ember.jit(mandelbrot(enp, elax, args.iters))
    compiled = ember_fn.lower(c).compile()
    fns = {"ember": lambda: np.asarray(compiled(c)),
           "numpy": lambda: mandelbrot_numpy(c, args.iters)}
    results = {"ember": np.asarray(compiled(c)), "numpy": mandelbrot_numpy(c, args.iters)}
    if importlib.util.find_spec("jax") is not None:
        import jax
        import jax.numpy as jjnp

        jax.config.update("jax_enable_x64", True)
        jax_fn = jax.jit(mandelbrot(jjnp, jax.lax, args.iters))
        results["jax"] = np.asarray(jax_fn(c))
        fns["jax"] = lambda: np.asarray(jax_fn(c))

    text = compiled.as_text()
    body = text[text.index("%scan_body"):].split("\n}")[0] if "%scan_body" in text else ""
    kernels = [line.split("=")[0].strip() for line in body.splitlines() if " fusion(" in line]
    print(f"Mandelbrot {args.size}x{args.size} complex128, {args.iters} iterations")
    print(f"backend: {compiled._compiled.backend}; kernels per iteration: {len(kernels)} "
          f"({', '.join(kernels)})")
    for name, counts in results.items():
        if name != "numpy":
            agree = np.mean(counts == results["numpy"])
            print(f"{name} counts equal to NumPy's at {agree:.6%} of the points")

    ms = interleaved_ms(fns, args.repeat)
    for name, t in ms.items():
        print(f"{name:6s} {t:9.2f} ms")
    for other in ("jax", "numpy"):
        if other in ms:
            print(f"ember / {other}: {ms['ember'] / ms[other]:.3f}x")


if __name__ == "__main__":
    main()
