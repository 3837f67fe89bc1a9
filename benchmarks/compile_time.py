"""Compile time of long programs, Ember beside JAX (issue 26, item 6).

First-call time (trace, lower, optimize, compile, run) of:
- the Python-unrolled loop `x = sin(x) + cos(x[::-1]); s += sum(x)` over 1000 f32 at 50,
  200 and 600 steps (goal: at most 1.0x JAX's at 200 and 600 steps);
- Jacobi sweeps through four `jnp.roll`s, unrolled, over 256x256 f32 at 5, 10 and 20 steps
  (goal: under 1 s at 10 steps, growing linearly);
- `jit(grad(loss))` of benchmarks/autodiff.py's MLP, and its forward (issue 19's goal: the
  gradient's first call at most 2x the forward's).
Each row also gives Ember's kernel count and how many distinct kernel bodies it compiled
(kernels with one body share one LLVM function: emit/kernel_key.py). Ember's disk cache is
off, so every first call compiles.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/compile_time.py [--quick]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ["EMBER_CACHE_DIR"] = "off"  # first calls compile


def unrolled(m: Any, steps: int) -> Callable:
    def f(x: Any) -> Any:
        s = 0.0
        for _ in range(steps):
            x = m.sin(x) + m.cos(x[::-1])
            s = s + m.sum(x)
        return x, s
    return f


def jacobi(m: Any, steps: int) -> Callable:
    def f(p: Any) -> Any:
        for _ in range(steps):
            p = 0.25 * (m.roll(p, 1, 0) + m.roll(p, -1, 0) + m.roll(p, 1, 1)
                        + m.roll(p, -1, 1))
        return p
    return f


def _first_call_s(call: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def _ember_row(fn: Callable, *args: Any) -> tuple[float, int, int]:
    import ember
    jitted = ember.jit(fn)
    s = _first_call_s(lambda: ember.block_until_ready(jitted(*args)))
    exe = jitted.lower(*args).compile()._compiled.executable
    n = len(exe.kernel_names)
    return s, n, n - len(exe.shared_kernels)


def _jax_s(fn: Callable, *args: Any) -> float:
    import jax
    jitted = jax.jit(fn)
    return _first_call_s(lambda: jax.block_until_ready(jitted(*args)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 600-step program")
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    has_jax = importlib.util.find_spec("jax") is not None
    if has_jax:
        import jax.numpy as jjnp
    rng = np.random.default_rng(0)
    x = rng.random(1000).astype(np.float32)
    grid = rng.random((256, 256)).astype(np.float32)
    cases: list[tuple[str, Callable[[Any], Callable], Any]] = []
    for steps in (50, 200) if args.quick else (50, 200, 600):
        cases.append((f"unrolled sin/cos, {steps} steps",
                      lambda m, s=steps: unrolled(m, s), x))
    for steps in (5, 10, 20):
        cases.append((f"roll Jacobi 256x256, {steps} steps",
                      lambda m, s=steps: jacobi(m, s), grid))
    # one tiny compile each first: a process's first compile pays one-time costs (imports,
    # LLVM's and XLA's initialization) that no row should carry
    ember.block_until_ready(ember.jit(lambda v: v * 2.0)(x))
    if has_jax:
        _jax_s(lambda v: v * 2.0, x)
    print(f"{'program':<34}{'ember s':>9}{'kernels':>9}{'bodies':>8}{'jax s':>9}"
          f"{'ember/jax':>11}")
    for name, make, arg in cases:
        s, n, bodies = _ember_row(make(ejnp), arg)
        line = f"{name:<34}{s:>9.3f}{n:>9}{bodies:>8}"
        if has_jax:
            j = _jax_s(make(jjnp), arg)
            line += f"{j:>9.3f}{s / j:>10.2f}x"
        print(line, flush=True)

    from autodiff import mlp_data, mlp_loss  # benchmarks/autodiff.py (sys.path[0])
    params, xb, yb = mlp_data(rng)
    loss = mlp_loss(ejnp)
    fwd = _first_call_s(lambda: ember.block_until_ready(ember.jit(loss)(params, xb, yb)))
    grad = _first_call_s(
        lambda: ember.block_until_ready(ember.jit(ember.grad(loss))(params, xb, yb)))
    line = (f"MLP first call: forward {fwd:.3f} s, jit(grad) {grad:.3f} s "
            f"({grad / fwd:.2f}x the forward's; goal <= 2x)")
    if has_jax:
        import jax
        jl = mlp_loss(jjnp)
        jf = _jax_s(jl, params, xb, yb)
        jg = _first_call_s(lambda: jax.block_until_ready(jax.jit(jax.grad(jl))(params, xb, yb)))
        line += f"; jax forward {jf:.3f} s, jit(grad) {jg:.3f} s (ember/jax {grad / jg:.2f}x)"
    print(line)


if __name__ == "__main__":
    main()
