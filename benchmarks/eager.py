"""Eager-mode dispatch: `ember.numpy` ops outside `jit` against NumPy and JAX (issue 26).

Per-call time (median of repeated calls, interleaved rounds) of small and large eager ops,
with Ember's ratio to JAX's eager op and to NumPy's. Small arrays measure the dispatch
overhead (what runs between the Python call and the native kernel); large ones the kernel.
Goals (issue 26): on 1000 f32, `x + x`, `jnp.sin(x)`, `jnp.sum(x)`,
`jnp.where(x > 0, x, 0.0)` at most 1.0x JAX's per-call time.

A second table times what costs milliseconds, in blocks with idle gaps between libraries
(BLAS and XLA threads spin on the cores for a while after a call): an eager 500x500 f32
`jnp.dot` beside the same product under `jit` (goal: eager within 1.1x of jit and at most
JAX's eager time; `bits` says whether eager and jit results are identical), and an MLP
predict written eagerly around small jitted layers (128 x 784 -> 512 -> 512 -> 10, eager
bias adds, final product and log-softmax), against the same code in JAX.

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/eager.py [--repeat 201]

Informative only: shared hosts are noisy; compare ratios from one run. JAX is optional
(without it only Ember's and NumPy's numbers print).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import (  # benchmarks/timing.py (this folder is sys.path[0])
    interleaved_median_ms,
    interleaved_ms,
)

# (name, n, op(jnp-like module, x)): each op's result is made ready before the clock stops
CASES: tuple[tuple[str, int, Callable[[Any, Any], Any]], ...] = (
    ("x + 1", 10, lambda m, x: x + 1),
    ("x + x", 1000, lambda m, x: x + x),
    ("sin(x)", 1000, lambda m, x: m.sin(x)),
    ("sum(x)", 1000, lambda m, x: m.sum(x)),
    ("where(x > 0, x, 0)", 1000, lambda m, x: m.where(x > 0, x, 0.0)),
    ("x * 2.0 + 1.0", 1000, lambda m, x: x * 2.0 + 1.0),
    ("exp(x)", 1000, lambda m, x: m.exp(x)),
    ("max(x)", 1000, lambda m, x: m.max(x)),
    ("dot(x, x)", 1000, lambda m, x: m.dot(x, x)),
    ("sin(x)", 1_000_000, lambda m, x: m.sin(x)),
    ("x + x", 1_000_000, lambda m, x: x + x),
)


def _ready(value: Any) -> Any:
    """Wait for an asynchronous result (JAX dispatches asynchronously)."""
    block = getattr(value, "block_until_ready", None)
    return block() if block is not None else value


def _mlp(m: Any, jit: Callable, params: list, x: Any) -> Callable[[], Any]:
    """An MLP predict as a notebook user writes it: jitted layers, eager glue."""
    @jit
    def layer(w: Any, x: Any) -> Any:
        return m.tanh(x @ w)

    def predict() -> Any:
        h = x
        for w, b in params[:-1]:
            h = layer(w, h) + b  # (eager bias add)
        w, b = params[-1]
        logits = m.dot(h, w) + b  # eager product
        shifted = logits - m.max(logits, axis=1, keepdims=True)
        return _ready(shifted - m.log(m.sum(m.exp(shifted), axis=1, keepdims=True)))

    return predict


def _programs(libs: dict[str, Any], repeat: int) -> None:
    """The second table: eager products and an eager MLP (see the module doc)."""
    import ember

    ejnp = libs["ember"][0]
    rng = np.random.default_rng(1)
    a = rng.standard_normal((500, 500)).astype(np.float32)
    b = rng.standard_normal((500, 500)).astype(np.float32)
    ea, eb = ejnp.asarray(a), ejnp.asarray(b)
    jit_dot = ember.jit(ejnp.dot)
    fns: dict[str, Callable[[], Any]] = {
        "ember eager": lambda: ejnp.dot(ea, eb), "ember jit": lambda: jit_dot(ea, eb),
        "numpy": lambda: np.dot(a, b)}
    sizes = [(784, 512), (512, 512), (512, 10)]
    params = [(rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0]),
               rng.standard_normal(s[1]).astype(np.float32) * 0.1) for s in sizes]
    x = rng.standard_normal((128, 784)).astype(np.float32)
    mlp = {"ember": _mlp(ejnp, ember.jit, [(ejnp.asarray(w), ejnp.asarray(c))
                                           for w, c in params], ejnp.asarray(x))}
    if "jax" in libs:
        import jax

        jjnp = libs["jax"][0]
        ja, jb = jjnp.asarray(a), jjnp.asarray(b)
        jax_jit_dot = jax.jit(jjnp.dot)
        fns["jax eager"] = lambda: _ready(jjnp.dot(ja, jb))
        fns["jax jit"] = lambda: _ready(jax_jit_dot(ja, jb))
        mlp["jax"] = _mlp(jjnp, jax.jit, [(jjnp.asarray(w), jjnp.asarray(c))
                                          for w, c in params], jjnp.asarray(x))
    bits = np.array_equal(np.asarray(fns["ember eager"]()), np.asarray(fns["ember jit"]()))
    np.testing.assert_allclose(np.asarray(fns["ember eager"]()), a @ b, rtol=1e-4, atol=1e-3)
    ms = interleaved_ms(fns, max(3, repeat // 10))
    print()
    print(f"{'dot 500x500 f32':<22}" + "".join(f"{k + ' ms':>15}" for k in fns)
          + f"{'eager/jit':>11}{'eager/jax':>11}{'bits':>6}")
    rj = ms["ember eager"] / ms["jax eager"] if "jax eager" in ms else float("nan")
    print(f"{'':<22}" + "".join(f"{v:>15.3f}" for v in ms.values())
          + f"{ms['ember eager'] / ms['ember jit']:>10.2f}x{rj:>10.2f}x"
          + f"{'same' if bits else 'DIFF':>6}")
    got = np.asarray(mlp["ember"]())
    if "jax" in mlp:
        np.testing.assert_allclose(got, np.asarray(mlp["jax"]()), rtol=1e-3, atol=1e-3)
    ms = interleaved_ms(mlp, max(3, repeat // 10))
    rj = ms["ember"] / ms["jax"] if "jax" in ms else float("nan")
    print(f"{'eager MLP predict':<22}" + "".join(f"{k + ' ms':>15}" for k in ms)
          + f"{'ember/jax':>11}")
    print(f"{'':<22}" + "".join(f"{v:>15.3f}" for v in ms.values()) + f"{rj:>10.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=201)
    args = parser.parse_args()
    import ember.numpy as ejnp
    libs: dict[str, tuple[Any, Callable[[np.ndarray], Any]]] = {
        "ember": (ejnp, ejnp.asarray), "numpy": (np, np.asarray)}
    if importlib.util.find_spec("jax") is not None:
        import jax.numpy as jjnp
        libs["jax"] = (jjnp, jjnp.asarray)
    rng = np.random.default_rng(0)
    print(f"{'op':<22}{'n':>9}" + "".join(f"{k + ' us':>12}" for k in libs)
          + f"{'ember/jax':>11}{'ember/numpy':>13}")
    over_jax = []
    for name, n, op in CASES:
        x = rng.standard_normal(n).astype(np.float32)
        fns = {}
        for lib, (mod, put) in libs.items():
            xv = put(x)
            fns[lib] = (lambda mod=mod, xv=xv, op=op: _ready(op(mod, xv)))
        got = np.asarray(fns["ember"]())
        want = np.asarray(fns["numpy"]())
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, math.sqrt(n)))
        ms = interleaved_median_ms(fns, args.repeat)
        us = {k: v * 1e3 for k, v in ms.items()}
        rj = us["ember"] / us["jax"] if "jax" in us else float("nan")
        rn = us["ember"] / us["numpy"]
        if "jax" in us:
            over_jax.append(rj)
        print(f"{name:<22}{n:>9}" + "".join(f"{us[k]:>12.2f}" for k in libs)
              + f"{rj:>10.2f}x{rn:>12.2f}x")
    if over_jax:
        geo = math.exp(sum(math.log(r) for r in over_jax) / len(over_jax))
        print(f"geo-mean ember/jax {geo:.2f} over {len(over_jax)} ops; "
              f"worst {max(over_jax):.2f}")
    _programs(libs, args.repeat)


if __name__ == "__main__":
    main()
