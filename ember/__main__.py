"""`python -m ember`: the command line (`demo`, `--help`).

Input: command-line arguments. Output: `demo` prints the fusion example's source, its
jaxpr (on three f32[3] arrays, the text JAX 0.10.2 prints), runs it jitted on random f32
arrays of `--size` elements, checks the result against NumPy and prints the max abs error
and the median time of a jitted call vs NumPy (informative only: timings on shared
machines are noisy, nothing is asserted on them).
Invariant: the exit status is 0 only if the jitted result matches NumPy within tolerance
(1 if it disagrees, 2 on a usage error, as argparse does).
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import textwrap
import time
from collections.abc import Callable, Sequence

import numpy as np

import ember.numpy as jnp


def f(x, a, b):
    y = jnp.sin(x)
    z = a * y
    return z + b


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def demo(size: int, repeats: int, seed: int) -> int:
    import ember

    print("The fusion example:\n")
    print(textwrap.indent(inspect.getsource(f), "    "))
    small = [np.zeros(3, np.float32)] * 3
    print("Its jaxpr (ember.make_jaxpr on three f32[3] arrays):\n")
    print(textwrap.indent(str(ember.make_jaxpr(f)(*small)), "    "))

    rng = np.random.default_rng(seed)
    x, a, b = (rng.standard_normal(size).astype(np.float32) for _ in range(3))
    jitted = ember.jit(f)
    got = np.asarray(jitted(x, a, b).block_until_ready())
    want = np.sin(x) * a + b
    # f32 sin is accurate to a few ulp; |a*sin(x)+b| is O(1) for normal inputs.
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if size else 0.0
    ok = got.shape == want.shape and got.dtype == want.dtype and err <= 1e-5
    print(f"\nRan jit(f) on three random f32[{size}] arrays.")
    print(f"max |jit - numpy| = {err:.3g}  ({'OK' if ok else 'MISMATCH'})")

    t_jit = _median_ms(lambda: jitted(x, a, b).block_until_ready(), repeats)
    t_np = _median_ms(lambda: np.sin(x) * a + b, repeats)
    print(f"median of {repeats} runs: jit {t_jit:.2f} ms, NumPy {t_np:.2f} ms "
          f"(ratio {t_jit / t_np if t_np else float('nan'):.2f}; informative only)")
    if not ok:
        print("error: the jitted result disagrees with NumPy", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ember",
        description="Ember: a JAX-style tracing JIT compiler for NumPy programs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="trace, print and run the fusion example "
                                    "sin(x)*a+b, checked against NumPy")
    d.add_argument("--size", type=int, default=1_000_000,
                   help="elements per input array (default 1e6)")
    d.add_argument("--repeats", type=int, default=7, help="timed runs (default 7)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.size < 0 or args.repeats < 1:
            parser.error("--size must be >= 0 and --repeats >= 1")
        return demo(args.size, args.repeats, args.seed)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
