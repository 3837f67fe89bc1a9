"""Compile time of long programs, Ember beside JAX (issue 26, item 6).

First-call time (trace, lower, optimize, compile, run) of:
- the Python-unrolled loop `x = sin(x) + cos(x[::-1]); s += sum(x)` over 1000 f32 at 50,
  200 and 600 steps (goal: at most 1.0x JAX's at 200 and 600 steps);
- Jacobi sweeps through four `jnp.roll`s, unrolled, over 256x256 f32 at 5, 10 and 20 steps
  (goal: under 1 s at 10 steps, growing linearly);
- the issue's small MLP predict (128x256 -> 512 -> 10, tanh, softmax): its first call
  (goal: at most 1.0x JAX's) and its steady-state call (goal: at most 0.8x JAX's);
- `jit(grad(loss))` of benchmarks/autodiff.py's MLP, and its forward (issue 19's goal: the
  gradient's first call at most 2x the forward's).
Each row also gives Ember's kernel count and how many distinct kernel bodies it compiled
(kernels with one body share one LLVM function: emit/kernel_key.py). Ember's disk cache is
off, and before every first call both libraries' in-memory caches are cleared
(`ember.backends.cpu.clear_cache`, `jax.clear_caches`), so every first call compiles. Each
first-call time is the median of `--repeat` such calls, Ember's and JAX's taking turns.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/compile_time.py \
        [--quick] [--repeat 3]

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


def mlp_predict(m: Any) -> Callable:
    """The issue's small MLP: 256 -> 512 (tanh) -> 10, softmax over the classes."""
    def f(w1: Any, b1: Any, w2: Any, b2: Any, x: Any) -> Any:
        h = m.tanh(x @ w1 + b1)
        z = h @ w2 + b2
        e = m.exp(z - m.max(z, axis=-1, keepdims=True))
        return e / m.sum(e, axis=-1, keepdims=True)
    return f


def _first_call_s(call: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def _clear_ember() -> None:
    from ember.backends import cpu
    cpu.clear_cache()


def _clear_jax() -> None:
    import jax
    jax.clear_caches()


def _ember_once(fn: Callable, *args: Any) -> float:
    import ember
    _clear_ember()
    jitted = ember.jit(fn)
    return _first_call_s(lambda: ember.block_until_ready(jitted(*args)))


def _jax_once(fn: Callable, *args: Any) -> float:
    import jax
    _clear_jax()
    jitted = jax.jit(fn)
    return _first_call_s(lambda: jax.block_until_ready(jitted(*args)))


def _kernels(fn: Callable, *args: Any) -> tuple[int, int]:
    """(kernels, distinct kernel bodies) of Ember's executable for `fn`."""
    import ember
    exe = ember.jit(fn).lower(*args).compile()._compiled.executable
    n = len(exe.kernel_names)
    return n, n - len(exe.shared_kernels)


def _medians(ember_fn: Callable, jax_fn: Callable | None, args: tuple, repeat: int
             ) -> tuple[float, float | None]:
    """Median first-call seconds of Ember and JAX, taking turns `repeat` times."""
    es, js = [], []
    for _ in range(repeat):
        es.append(_ember_once(ember_fn, *args))
        if jax_fn is not None:
            js.append(_jax_once(jax_fn, *args))
    return float(np.median(es)), (float(np.median(js)) if js else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 600-step program")
    parser.add_argument("--repeat", type=int, default=3, help="first calls per row")
    args = parser.parse_args()
    import ember
    import ember.numpy as ejnp
    has_jax = importlib.util.find_spec("jax") is not None
    if has_jax:
        import jax
        import jax.numpy as jjnp
    rng = np.random.default_rng(0)
    x = rng.random(1000).astype(np.float32)
    grid = rng.random((256, 256)).astype(np.float32)
    cases: list[tuple[str, Callable[[Any], Callable], tuple]] = []
    for steps in (50, 200) if args.quick else (50, 200, 600):
        cases.append((f"unrolled sin/cos, {steps} steps",
                      lambda m, s=steps: unrolled(m, s), (x,)))
    for steps in (5, 10, 20):
        cases.append((f"roll Jacobi 256x256, {steps} steps",
                      lambda m, s=steps: jacobi(m, s), (grid,)))
    mlp_args = (rng.standard_normal((256, 512)).astype(np.float32) * 0.05,
                rng.standard_normal(512).astype(np.float32) * 0.1,
                rng.standard_normal((512, 10)).astype(np.float32) * 0.05,
                rng.standard_normal(10).astype(np.float32) * 0.1,
                rng.standard_normal((128, 256)).astype(np.float32))
    cases.append(("MLP predict 128x256-512-10", mlp_predict, mlp_args))
    # one tiny compile each first: a process's first compile pays one-time costs (imports,
    # LLVM's and XLA's initialization) that no row should carry
    ember.block_until_ready(ember.jit(lambda v: v * 2.0)(x))
    if has_jax:
        _jax_once(lambda v: v * 2.0, x)
    print(f"{'program (first call, median)':<34}{'ember s':>9}{'kernels':>9}{'bodies':>8}"
          f"{'jax s':>9}{'ember/jax':>11}")
    seconds: dict[str, tuple[float, float | None]] = {}
    for name, make, arg in cases:
        s, j = _medians(make(ejnp), make(jjnp) if has_jax else None, arg, args.repeat)
        seconds[name] = (s, j)
        n, bodies = _kernels(make(ejnp), *arg)
        line = f"{name:<34}{s:>9.3f}{n:>9}{bodies:>8}"
        if j is not None:
            line += f"{j:>9.3f}{s / j:>10.2f}x"
        print(line, flush=True)
    # growth with the program (linear: the time ratio equals the steps ratio)
    for family, lo, hi in (("unrolled sin/cos", 200, 50 if args.quick else 600),
                           ("roll Jacobi 256x256", 5, 20)):
        lo, hi = min(lo, hi), max(lo, hi)
        (e0, j0), (e1, j1) = (seconds[f"{family}, {k} steps"] for k in (lo, hi))
        line = (f"{family}: {hi} steps take {e1 / e0:.2f}x the time of {lo} "
                f"({hi / lo:.0f}x the steps)")
        if j0 and j1:
            line += f"; jax {j1 / j0:.2f}x"
        print(line)

    from timing import interleaved_ms  # benchmarks/timing.py (sys.path[0])
    e_mlp = ember.jit(mlp_predict(ejnp))
    steady = {"ember": lambda: ember.block_until_ready(e_mlp(*mlp_args))}
    if has_jax:
        j_mlp = jax.jit(mlp_predict(jjnp))
        steady["jax"] = lambda: jax.block_until_ready(j_mlp(*mlp_args))
    ms = interleaved_ms(steady, 60)
    line = f"MLP predict steady state: ember {ms['ember'] * 1e3:.1f} us"
    if "jax" in ms:
        line += (f", jax {ms['jax'] * 1e3:.1f} us, ember/jax {ms['ember'] / ms['jax']:.2f}x "
                 "(goal <= 0.8x)")
    print(line, flush=True)

    from autodiff import mlp_data, mlp_loss  # benchmarks/autodiff.py (sys.path[0])
    params, xb, yb = mlp_data(rng)
    firsts = {}
    for what, e_fn, j_fn in (
            ("forward", mlp_loss(ejnp), mlp_loss(jjnp) if has_jax else None),
            ("jit(grad)", ember.grad(mlp_loss(ejnp)),
             jax.grad(mlp_loss(jjnp)) if has_jax else None)):
        firsts[what] = _medians(e_fn, j_fn, (params, xb, yb), args.repeat)
    (fwd, jf), (grad, jg) = firsts["forward"], firsts["jit(grad)"]
    line = (f"MLP loss first call: forward {fwd:.3f} s, jit(grad) {grad:.3f} s "
            f"({grad / fwd:.2f}x the forward's; goal <= 2x)")
    if jf is not None and jg is not None:
        line += f"; jax forward {jf:.3f} s, jit(grad) {jg:.3f} s (ember/jax {grad / jg:.2f}x)"
    print(line)

if __name__ == "__main__":
    main()
