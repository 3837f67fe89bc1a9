"""ember.random vs jax.random under jit, in the same process: `normal` and `uniform` of
10M float32 values from one key (the issue's goal: at most 0.5x JAX's time).

Run: python benchmarks/random_bench.py [--n 10000000] [--repeat 15]
Prints median milliseconds of each (the calls take turns, so load bursts hit both alike),
the ratio Ember / JAX, and the number of kernels Ember compiled each program into (1: the
Threefry rounds run inside the kernel that writes the values). Checks first that both give
the same uniform bits. Informative only: timings are noisy on shared hosts.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import interleaved_median_ms

import ember
import ember.random as er


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    import jax
    import jax.random as jr

    n = args.n
    programs = {
        "uniform": (lambda k: er.uniform(k, (n,)), lambda k: jr.uniform(k, (n,))),
        "normal": (lambda k: er.normal(k, (n,)), lambda k: jr.normal(k, (n,))),
    }
    ek, jk = er.PRNGKey(0), jr.PRNGKey(0)
    print(f"n = {n:,} float32, median of {args.repeat} (ms)")
    for name, (ef, jf) in programs.items():
        e_fn, j_fn = ember.jit(ef), jax.jit(jf)
        e_val, j_val = np.asarray(e_fn(ek)), np.asarray(j_fn(jk))
        if name == "uniform":
            assert np.array_equal(e_val, j_val), "uniform bits differ from JAX's"
        kernels = len(e_fn.lower(ek).compile().kernels())
        t = interleaved_median_ms({
            "ember": lambda e_fn=e_fn: e_fn(ek).block_until_ready(),
            "jax": lambda j_fn=j_fn: j_fn(jk).block_until_ready()}, args.repeat)
        print(f"{name:8s} ember {t['ember']:8.2f}  jax {t['jax']:8.2f}  "
              f"ratio {t['ember'] / t['jax']:5.2f}x  kernels {kernels}")


if __name__ == "__main__":
    main()
