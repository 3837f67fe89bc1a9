"""jnp.linalg.solve of a 256x256 float64 system, eager and under jit, against NumPy (and
JAX's jit when installed) in one process: the guard for issue 22's restaging of solve
(custom_linear_solve around jit[_lu_solve], matrix right-hand sides vmapped over their
columns), which must not make it slower.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/linalg_solve.py

Rows: a vector right-hand side (256,) and a matrix one (256, 4). Informative only: shared
hosts are noisy (a multi-threaded BLAS call is slow while other processes hold the
cores); compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--no-jax", action="store_true",
                        help="leave JAX out (its threads spin on the cores too)")
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    ember.config.update("jax_enable_x64", True)
    have_jax = importlib.util.find_spec("jax") is not None and not args.no_jax
    if have_jax:
        import jax
        import jax.numpy as jjnp
        jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)) + 16 * np.eye(256)
    print(f"{'rhs':<10}{'numpy ms':>10}{'eager ms':>10}{'ratio':>7}{'jit ms':>9}{'ratio':>7}"
          + (f"{'jax ms':>9}{'jit/jax':>9}" if have_jax else ""))
    for label, b in (("(256,)", rng.standard_normal(256)),
                     ("(256, 4)", rng.standard_normal((256, 4)))):
        fns: dict[str, Callable[[], object]] = {"numpy": lambda b=b: np.linalg.solve(a, b)}
        fns["eager"] = lambda b=b: np.asarray(ejnp.linalg.solve(a, b))
        jitted = ember.jit(ejnp.linalg.solve)
        ea, eb = ember.device_put(a), ember.device_put(b)
        fns["jit"] = lambda f=jitted, ea=ea, eb=eb: f(ea, eb).block_until_ready()
        if have_jax:
            jf = jax.jit(jjnp.linalg.solve)
            ja, jb = jax.device_put(a), jax.device_put(b)
            fns["jax"] = lambda f=jf, ja=ja, jb=jb: f(ja, jb).block_until_ready()
        ms = interleaved_ms(fns, args.repeat)
        line = (f"{label:<10}{ms['numpy']:>10.3f}{ms['eager']:>10.3f}"
                f"{ms['eager'] / ms['numpy']:>7.2f}{ms['jit']:>9.3f}"
                f"{ms['jit'] / ms['numpy']:>7.2f}")
        if have_jax:
            line += f"{ms['jax']:>9.3f}{ms['jit'] / ms['jax']:>9.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
