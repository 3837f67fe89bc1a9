"""Every transcendental, f32 and f64: Ember-compiled `f(x)` and `f(x) * a + b` vs NumPy
(SciPy for erf, erfc, erf-inv, logistic) in the same process.

Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/math_functions.py [--n 10000000]
     [--repeat 5] [--only exp,log]
Prints median milliseconds (the four timings of a row take turns, one call each per
round, so a burst of other users' load hits them alike), the ratio NumPy time / Ember time
(> 1: Ember is faster) for both forms, and whether Ember runs our vector code or calls the
C library per element; then the rows below the goals (>= 1 alone, >= 2 on f*a+b) and the
functions that still call scalar libm (per element, or only on a slow path).
a and b are arrays, so NumPy makes two extra passes and Ember fuses them into one kernel.
Informative only: timings are noisy on shared hosts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial

import numpy as np
from timing import interleaved_median_ms

from ember.backends import cpu
from ember.backends.cpu.mathlib import SCALAR_LIBM, VECTORIZED
from ember.backends.cpu.mathlib.libm import SLOW_PATH
from ember.hlo import Builder, Shape


def _numpy_fns() -> dict[str, Callable[..., np.ndarray]]:
    import scipy.special as sp

    return {
        "exponential": np.exp, "exp2": np.exp2, "exponential-minus-one": np.expm1,
        "log": np.log, "log2": np.log2, "log10": np.log10, "log-plus-one": np.log1p,
        "sine": np.sin, "cosine": np.cos, "tan": np.tan, "tanh": np.tanh,
        "logistic": sp.expit, "erf": sp.erf, "erfc": sp.erfc, "erf-inv": sp.erfinv,
        "atan": np.arctan, "atan2": np.arctan2, "asin": np.arcsin, "acos": np.arccos,
        "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
        "atanh": np.arctanh, "cbrt": np.cbrt, "power": np.power,
    }


def _inputs(op: str, n: int, dt: np.dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if op in ("asin", "acos", "atanh", "erf-inv"):
        x = rng.uniform(-0.99, 0.99, n)
    elif op == "acosh":
        x = rng.uniform(1, 50, n)
    elif op in ("log", "log2", "log10", "log-plus-one"):
        x = rng.uniform(0.01, 100, n)
    elif op in ("sinh", "cosh", "exponential", "exp2", "exponential-minus-one"):
        x = rng.uniform(-20, 20, n)
    elif op == "power":
        return [rng.uniform(0.1, 10, n).astype(dt), rng.uniform(-5, 5, n).astype(dt)]
    elif op == "atan2":
        return [rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)]
    else:
        x = rng.uniform(-10, 10, n)
    return [x.astype(dt)]


def _module(op: str, et: str, n: int, arity: int, affine: bool):
    b = Builder(f"bench_{op}")
    s = Shape(et, (n,))
    args = [b.parameter(s) for _ in range(arity)]
    r = b.unary(op, args[0]) if arity == 1 else b.binary(op, args[0], args[1])
    if affine:
        a, c = b.parameter(s), b.parameter(s)
        r = b.add(b.multiply(r, a), c)
    return b.build(r)


def _numpy_affine(f: Callable[..., np.ndarray], xs: list[np.ndarray], a: np.ndarray,
                  c: np.ndarray) -> np.ndarray:
    return f(*xs) * a + c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    fns = _numpy_fns()
    ops = [o for o in fns if not args.only or o in args.only.split(",")]
    print(f"n = {args.n}, median of {args.repeat}; ratio = NumPy ms / Ember ms "
          f"(goal: >= 1 alone, >= 2 on f*a+b); Ember threads: {cpu.get_num_threads()}")
    print(f"{'function':22s} {'dt':3s} {'code':6s} {'ember':>8s} {'numpy':>8s} {'ratio':>6s}"
          f" {'ember f*a+b':>11s} {'numpy f*a+b':>11s} {'ratio':>6s}")
    slow: list[str] = []
    slow_affine: list[str] = []
    for op in ops:
        arity = 2 if op in ("atan2", "power") else 1
        kind = "vector" if op in VECTORIZED and op not in SCALAR_LIBM else "libm"
        for et, dt in (("f32", np.float32), ("f64", np.float64)):
            xs = _inputs(op, args.n, np.dtype(dt))
            a = np.full(args.n, 1.5, dt)
            c = np.full(args.n, 0.25, dt)
            plain = cpu.compile(_module(op, et, args.n, arity, False))
            affine = cpu.compile(_module(op, et, args.n, arity, True))
            f = fns[op]
            with np.errstate(all="ignore"):
                ms = interleaved_median_ms({"e1": partial(plain, *xs), "n1": partial(f, *xs),
                                            "e2": partial(affine, *xs, a, c),
                                            "n2": partial(_numpy_affine, f, xs, a, c)},
                                           args.repeat)
            e1, n1, e2, n2 = ms["e1"], ms["n1"], ms["e2"], ms["n2"]
            print(f"{op:22s} {et:3s} {kind:6s} {e1:8.1f} {n1:8.1f} {n1 / e1:6.2f}"
                  f" {e2:11.1f} {n2:11.1f} {n2 / e2:6.2f}", flush=True)
            if n1 / e1 < 1:
                slow.append(f"{op} {et} ({n1 / e1:.2f})")
            if n2 / e2 < 2:
                slow_affine.append(f"{op} {et} ({n2 / e2:.2f})")
    print("below NumPy alone:", ", ".join(slow) or "none")
    print("below 2x NumPy on f(x)*a+b:", ", ".join(slow_affine) or "none")
    print("calling scalar libm per element:", ", ".join(SCALAR_LIBM) or "none",
          "| libm on slow paths only (precise rerun for huge arguments):",
          ", ".join(sorted(SLOW_PATH)))


if __name__ == "__main__":
    main()
