"""jnp.histogram of 1e7 float32 values into 100 bins: Ember vs NumPy (and JAX's XLA CPU) in
one process, issue 25's goal (at least as fast as NumPy: a ratio at most 1.0).

Run:
    python benchmarks/histogram.py [--repeat 9]

Prints each side's median time, the ratios, and how many bins differ from NumPy's counts (a
value within an f32 rounding of an edge may fall on either side: JAX differs as well).
Informative only: shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np
from timing import interleaved_median_ms  # benchmarks/timing.py (this folder is sys.path[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--n", type=int, default=10_000_000)
    args = ap.parse_args()
    import ember
    import ember.numpy as jnp

    x = np.random.default_rng(0).standard_normal(args.n).astype(np.float32)
    f = ember.jit(lambda v: jnp.histogram(v, bins=100))
    want, _ = np.histogram(x, bins=100)
    fns = {"ember": lambda: f(x)[0].block_until_ready(),
           "numpy": lambda: np.histogram(x, bins=100)}
    differ = {"ember": int(np.sum(np.asarray(f(x)[0]) != want))}
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jjnp

        g = jax.jit(lambda v: jjnp.histogram(v, bins=100))
        xj = jax.device_put(x)
        fns["jax"] = lambda: g(xj)[0].block_until_ready()
        differ["jax"] = int(np.sum(np.asarray(g(xj)[0]) != want))
    t = interleaved_median_ms(fns, args.repeat)
    print(f"histogram of {args.n:.0e} f32 into 100 bins (median of {args.repeat}):")
    for name, ms in t.items():
        extra = f", {differ[name]} bins differ from NumPy's" if name in differ else ""
        print(f"  {name:6s} {ms:8.2f} ms  {name}/numpy {ms / t['numpy']:5.2f}x{extra}")
    ok = t["ember"] <= t["numpy"]
    print(f"goal (ember at most numpy's time): {'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
