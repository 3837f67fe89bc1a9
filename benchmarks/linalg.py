"""Dense linear algebra compiled by Ember vs NumPy (and JAX's XLA CPU) in one process:
issue 25's goals.

1. `jnp.linalg.solve` (1024x1024 by 1024x1 f64) and `jnp.linalg.cholesky` (1024x1024 f64):
   time relative to NumPy (goal: at most 1.1x).
2. `jnp.linalg.eigh` and `jnp.linalg.svd` (512x512 f64): relative to NumPy (goal: 1.2x).
3. Informative rows without a goal: complex128 solve, eigh and svd (LAPACK's z routines)
   and the general eigendecomposition `eig` (geev) of a real 256x256 matrix.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/linalg.py [--repeat 9]

Ember's kernels call SciPy's LAPACK (its bundled OpenBLAS) and NumPy calls its own; both
use their library's threads. Informative only: shared hosts are noisy; compare ratios from
one run. JAX is optional (without it its column is left out).
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])


def cases(rng: np.random.Generator) -> list[tuple[str, str, tuple, float | None]]:
    """(label, jnp.linalg function name, arguments, goal ratio vs NumPy or None)."""
    a = rng.standard_normal((1024, 1024))
    b = rng.standard_normal((1024, 1))
    spd = a @ a.T + 1024 * np.eye(1024)
    s = rng.standard_normal((512, 512))
    sym = s + s.T
    return [("solve 1024 f64", "solve", (a, b), 1.1),
            ("cholesky 1024 f64", "cholesky", (spd,), 1.1),
            ("eigh 512 f64", "eigh", (sym,), 1.2),
            ("svd 512 f64", "svd", (s,), 1.2)] + _complex_cases(rng)


def _complex_cases(rng: np.random.Generator) -> list[tuple[str, str, tuple, float | None]]:
    z = rng.standard_normal((512, 512)) + 1j * rng.standard_normal((512, 512))
    zb = rng.standard_normal((512, 1)) + 1j * rng.standard_normal((512, 1))
    h = z[:256, :256] + z[:256, :256].conj().T
    return [("solve 512 c128", "solve", (z, zb), None),
            ("eigh 256 c128", "eigh", (h,), None),
            ("svd 256 c128", "svd", (z[:256, :256],), None),
            ("eig 256 f64", "eig", (rng.standard_normal((256, 256)),), None)]


def block(x: Any) -> Any:
    for leaf in x if isinstance(x, tuple) else (x,):
        getattr(leaf, "block_until_ready", lambda: None)()
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    ember.config.update("jax_enable_x64", True)
    have_jax = importlib.util.find_spec("jax") is not None
    if have_jax:
        import jax
        import jax.numpy as jjnp
        jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    print(f"{'case':<20}{'numpy ms':>10}{'ember ms':>10}{'ratio':>8}{'goal':>6}"
          + (f"{'jax ms':>10}{'vs jax':>8}" if have_jax else ""))
    for label, name, operands, goal in cases(rng):
        fns: dict[str, Callable[[], object]] = {}
        nf = getattr(np.linalg, name)
        fns["numpy"] = lambda f=nf, o=operands: f(*o)
        ef = ember.jit(getattr(ejnp.linalg, name))
        eo = [ember.device_put(o) for o in operands]
        fns["ember"] = lambda f=ef, o=eo: block(f(*o))
        if have_jax:
            jf = jax.jit(getattr(jjnp.linalg, name))
            jo = [jax.device_put(o) for o in operands]
            fns["jax"] = lambda f=jf, o=jo: block(f(*o))
        ms = interleaved_ms(fns, args.repeat)
        ratio = ms["ember"] / ms["numpy"]
        line = (f"{label:<20}{ms['numpy']:>10.2f}{ms['ember']:>10.2f}{ratio:>8.2f}"
                + (f"{goal:>6.1f}" if goal is not None else f"{'-':>6}"))
        if have_jax:
            line += f"{ms['jax']:>10.2f}{ms['ember'] / ms['jax']:>8.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
