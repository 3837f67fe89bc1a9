"""FFTs compiled by Ember vs NumPy (and JAX's XLA CPU) in one process: issue 25's FFT goal.

1. `jnp.fft.fft` of 2^20 complex128 values: time relative to `numpy.fft.fft` (goal: at
   most 1.2x).
2. `jnp.fft.rfft2` of a 2048x2048 float32 array: relative to `numpy.fft.rfft2` (goal:
   1.2x; NumPy >= 2 transforms float32 in single precision, as Ember and XLA do).

Both run under `ember.jit` (the `fft` opcode; compiled programs with complex values run on
the interpreter until complex code is native, and the CPU kernel is one host call into the
same pocketfft), plus the eager call. Run:
    python benchmarks/fft.py [--repeat 9]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional
(without it its column is left out).
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved_ms  # benchmarks/timing.py (this folder is sys.path[0])

GOAL = 1.2


def cases(rng: np.random.Generator) -> list[tuple[str, str, np.ndarray]]:
    """(label, jnp.fft / numpy.fft function name, operand)."""
    n = 1 << 20
    z = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
    x = rng.standard_normal((2048, 2048)).astype(np.float32)
    return [("fft 2^20 c128", "fft", z), ("rfft2 2048^2 f32", "rfft2", x)]


def block(x: Any) -> Any:
    getattr(x, "block_until_ready", lambda: None)()
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
    print(f"{'case':<18}{'numpy ms':>10}{'jit ms':>9}{'ratio':>7}{'eager ms':>10}"
          f"{'ratio':>7}{'goal':>6}" + (f"{'jax ms':>9}{'vs jax':>8}" if have_jax else ""))
    for label, name, operand in cases(rng):
        fns: dict[str, Callable[[], object]] = {}
        nf = getattr(np.fft, name)
        fns["numpy"] = lambda f=nf, o=operand: f(o)
        ef = getattr(ejnp.fft, name)
        jitted = ember.jit(ef)
        eo = ember.device_put(operand)
        fns["jit"] = lambda f=jitted, o=eo: block(f(o))
        fns["eager"] = lambda f=ef, o=eo: block(f(o))
        if have_jax:
            jf = jax.jit(getattr(jjnp.fft, name))
            jo = jax.device_put(operand)
            fns["jax"] = lambda f=jf, o=jo: block(f(o))
        ms = interleaved_ms(fns, args.repeat)
        line = (f"{label:<18}{ms['numpy']:>10.2f}{ms['jit']:>9.2f}"
                f"{ms['jit'] / ms['numpy']:>7.2f}{ms['eager']:>10.2f}"
                f"{ms['eager'] / ms['numpy']:>7.2f}{GOAL:>6.1f}")
        if have_jax:
            line += f"{ms['jax']:>9.2f}{ms['jit'] / ms['jax']:>8.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
