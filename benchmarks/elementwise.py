"""Elementwise and reduction workloads: Ember (built with the HLO builder, compiled by the
CPU backend) vs NumPy, and JAX / numexpr / Numba when importable, in the same process.

Run: python benchmarks/elementwise.py [--n 10000000] [--repeat 15]
Prints median milliseconds and the ratio to NumPy per workload, then which transcendentals
still call the C library per element. Informative only: timings are noisy on shared hosts.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np
from timing import median_ms

from ember.backends import cpu
from ember.backends.cpu.mathlib import SCALAR_LIBM, VECTORIZED
from ember.hlo import Builder, Shape


def fusion_example(n: int):
    b = Builder("fusion_example")
    s = Shape("f32", (n,))
    x, a, c = b.parameter(s), b.parameter(s), b.parameter(s)
    return b.build(b.add(b.multiply(a, b.sine(x)), c))


def chain(n: int):
    """tanh(x*.5+1) * exp(-x*x) + log1p(|x|)"""
    b = Builder("chain")
    s = Shape("f32", (n,))
    x = b.parameter(s)

    def c(v: float):
        return b.broadcast(b.scalar(v, "f32"), (n,), ())

    t = b.tanh(b.add(b.multiply(x, c(0.5)), c(1.0)))
    e = b.exponential(b.negate(b.multiply(x, x)))
    return b.build(b.add(b.multiply(t, e), b.log_plus_one(b.abs_(x))))


def total(n: int):
    b = Builder("sum")
    x = b.parameter(Shape("f32", (n,)))
    return b.build(b.reduce(x, b.scalar(0.0, "f32"), (0,),
                            Builder.scalar_computation("add", "f32")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    n, rep = args.n, args.repeat
    rng = np.random.default_rng(0)
    x, a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    t0 = time.perf_counter()
    exe_f = cpu.compile(fusion_example(n))
    first = (time.perf_counter() - t0) * 1e3
    exe_c = cpu.compile(chain(n))
    exe_s = cpu.compile(total(n))
    rows: list[tuple[str, str, float]] = []
    rows.append(("a*sin(x)+b", "ember", median_ms(lambda: exe_f(x, a, b), rep)))
    rows.append(("a*sin(x)+b", "numpy", median_ms(lambda: a * np.sin(x) + b, rep)))
    rows.append(("tanh/exp/log1p chain", "ember", median_ms(lambda: exe_c(x), rep)))
    rows.append(("tanh/exp/log1p chain", "numpy", median_ms(
        lambda: np.tanh(x * .5 + 1) * np.exp(-x * x) + np.log1p(np.abs(x)), rep)))
    rows.append(("sum", "ember", median_ms(lambda: exe_s(x), rep)))
    rows.append(("sum", "numpy", median_ms(lambda: np.sum(x), rep)))
    if importlib.util.find_spec("numexpr"):
        import numexpr as ne

        rows.append(("a*sin(x)+b", "numexpr", median_ms(
            lambda: ne.evaluate("a*sin(x)+b"), rep)))
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jnp

        jf = jax.jit(lambda x, a, b: a * jnp.sin(x) + b)
        jx, ja, jb = (jnp.asarray(v) for v in (x, a, b))
        rows.append(("a*sin(x)+b", "jax", median_ms(
            lambda: jf(jx, ja, jb).block_until_ready(), rep)))
    if importlib.util.find_spec("numba"):
        import numba

        nf = numba.vectorize(["float32(float32, float32, float32)"])(
            lambda x, a, b: a * np.sin(x) + b)
        rows.append(("a*sin(x)+b", "numba", median_ms(lambda: nf(x, a, b), rep)))
    numpy_ms = {w: t for w, who, t in rows if who == "numpy"}
    print(f"n = {n:,}, median of {rep}, single thread, fresh outputs each call")
    print(f"{'workload':24} {'impl':8} {'ms':>9} {'vs numpy':>9}")
    for w, who, t in rows:
        print(f"{w:24} {who:8} {t:9.2f} {numpy_ms[w] / t:8.2f}x")
    print(f"first compile of a*sin(x)+b (LLVM initialized inside): {first:.0f} ms")
    print(f"kernels: fusion example {exe_f.kernel_names}, chain {exe_c.kernel_names}")
    print("vectorized (own polynomials):", ", ".join(sorted(VECTORIZED)))
    print("still scalar C library calls:", ", ".join(SCALAR_LIBM))


if __name__ == "__main__":
    main()
