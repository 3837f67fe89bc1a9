"""Compute cost of the f32 transcendentals: one thread, 32k floats in cache, Ember vs NumPy.

Run: python benchmarks/math_in_cache.py [--only log,exponential,erf] [--rounds 9]
Prints per function the nanoseconds per element of Ember's compiled `f(x)` and of NumPy's
(SciPy's for erf, erf-inv), both also less a negation's cost (the call and the memory
traffic, so what is left is the function's arithmetic), and NumPy / Ember (> 1: Ember is
faster). `benchmarks/math_functions.py` measures 1e7 elements on every thread, where memory
bandwidth hides most of the arithmetic.

Each function runs on copies of its input at four offsets and the best offset's median is
kept: an input whose address is 4 KiB-aliased with the output (the allocator's choice)
makes stores and loads falsely dependent and cost up to 3x. Informative only: shared hosts
are noisy; compare ratios from one run.
"""

from __future__ import annotations

import os

os.environ.setdefault("EMBER_NUM_THREADS", "1")  # read when the CPU backend loads

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from ember.backends import cpu  # noqa: E402
from ember.hlo import Builder, Shape  # noqa: E402

N = 1 << 15
OFFSETS = (0, 272, 1040, 2064)  # elements: 4 KiB apart or not, whatever the output's address


def _functions() -> dict[str, tuple[Callable[[np.ndarray], np.ndarray], tuple[float, float]]]:
    import scipy.special as sp

    return {"negate": (np.negative, (-1, 1)), "log": (np.log, (0.01, 100)),
            "log2": (np.log2, (0.01, 100)), "log10": (np.log10, (0.01, 100)),
            "log-plus-one": (np.log1p, (-0.5, 100)), "exponential": (np.exp, (-20, 20)),
            "exponential-minus-one": (np.expm1, (-5, 5)), "tanh": (np.tanh, (-5, 5)),
            "logistic": (sp.expit, (-10, 10)), "erf": (sp.erf, (-4, 4)),
            "erf-inv": (sp.erfinv, (-0.99, 0.99))}


def _best_ns(fn: Callable[[np.ndarray], object], xs: list[np.ndarray], rounds: int) -> float:
    best = float("inf")
    for x in xs:
        fn(x)
        ts = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            for _ in range(50):
                fn(x)
            ts.append((time.perf_counter() - t0) / 50 / N * 1e9)
        best = min(best, float(np.median(ts)))
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated HLO opcode names")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    fns = _functions()
    names = ["negate"] + [n for n in fns if n != "negate"
                          and (not args.only or n in args.only.split(","))]
    rng = np.random.default_rng(0)
    rows = {}
    for name in names:
        ref, (lo, hi) = fns[name]
        x = rng.uniform(lo, hi, N).astype(np.float32)
        xs = []
        for off in OFFSETS:
            v = np.empty(N + off, np.float32)[off:off + N]
            v[:] = x
            xs.append(v)
        b = Builder(name)
        p = b.parameter(Shape("f32", (N,)))
        exe = cpu.compile(b.build(b.unary(name, p)))
        rows[name] = (_best_ns(exe, xs, args.rounds), _best_ns(ref, xs, args.rounds))
    e0, n0 = rows["negate"]
    print(f"one thread, {N} f32 in cache, ns per element (less a negation's cost)")
    print(f"{'function':24s} {'ember':>14s} {'numpy':>14s}  numpy/ember")
    for name, (e, n) in rows.items():
        if name != "negate":
            print(f"{name:24s} {e:6.3f} ({e - e0:5.3f}) {n:6.3f} ({n - n0:5.3f})  {n / e:6.2f}")
    print(f"{'negate':24s} {e0:6.3f}         {n0:6.3f}")


if __name__ == "__main__":
    main()
