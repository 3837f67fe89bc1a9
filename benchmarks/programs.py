"""Small whole programs, written once as a user would, run on Ember (`ember.jit`), JAX (`jax.jit`)
and NumPy in one process (issue 26, item 7: the measurement the other items are judged by).

Run (OpenBLAS tuning variables unset for this command only, as the peers' table was taken):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/programs.py [--repeat 15]
        [--only NAME[,NAME...]]

Each program is a function of a library namespace `L` (L.np: numpy, jax.numpy or
ember.numpy; L.special: its scipy.special; L.fori_loop: a loop, Python's for NumPy) and
its arguments. Every program's Ember result is first checked against NumPy's (a wrong
answer stops the script), then the three run in turns (`timing.interleaved_ms`: blocks of
calls after an idle gap, three rounds, medians). Prints per program the milliseconds of
each, Ember/JAX and Ember/NumPy (below 1: Ember is faster), and Ember's kernel count; the
last line reads
    geo-mean ember/jax G over N programs; worst NAME R; slower than numpy: K
so a script can read it. Informative only: shared hosts are noisy; compare ratios from one
run, taken when `uptime` shows a load below 1.5.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import types
from collections.abc import Callable

import numpy as np
from timing import interleaved_ms


def black_scholes(L, s, k, t, r, v):
    """European call and put prices: d1, d2 and the discount shared by both (one kernel
    writing two outputs in Ember: multi-output fusion)."""
    sqrt_t = L.np.sqrt(t)
    d1 = (L.np.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t

    def cdf(x):
        return 0.5 * (1.0 + L.special.erf(x * np.float32(1 / np.sqrt(2.0))))

    disc = k * L.np.exp(-r * t)
    return s * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - s * cdf(-d1)


def polar(L, rad, theta):
    """Polar to Cartesian coordinates: two outputs reading the same inputs (siblings)."""
    return rad * L.np.cos(theta), rad * L.np.sin(theta)


def lorenz_rk4(L, x, y, z):
    """Lorenz systems (one per element) integrated by 200 RK4 steps: three carries updated
    from shared stage values each step."""
    sigma, rho, beta, h = np.float32(10), np.float32(28), np.float32(8 / 3), np.float32(0.005)

    def f(x, y, z):
        return sigma * (y - x), x * (rho - z) - y, x * y - beta * z

    def step(_, c):
        x, y, z = c
        k1 = f(x, y, z)
        k2 = f(x + 0.5 * h * k1[0], y + 0.5 * h * k1[1], z + 0.5 * h * k1[2])
        k3 = f(x + 0.5 * h * k2[0], y + 0.5 * h * k2[1], z + 0.5 * h * k2[2])
        k4 = f(x + h * k3[0], y + h * k3[1], z + h * k3[2])
        return tuple(c[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) for i in range(3))

    return L.fori_loop(0, 200, step, (x, y, z))


def _options(n: int):
    rng = np.random.default_rng(0)
    return (rng.uniform(5, 150, n).astype(np.float32), rng.uniform(5, 150, n).astype(np.float32),
            rng.uniform(0.05, 3, n).astype(np.float32), np.float32(0.03), np.float32(0.25))


def programs() -> list[tuple[str, Callable, tuple, float]]:
    """(name, program, arguments, relative tolerance against NumPy)."""
    rng = np.random.default_rng(1)
    m = 1_000_000
    lor = [rng.uniform(-10, 10, 4096).astype(np.float32) + 0.1 * k for k in range(3)]
    return [
        ("black-scholes-500k-f32", black_scholes, _options(500_000), 1e-3),
        ("polar-to-cartesian-1e6-f32", polar,
         (rng.uniform(0, 2, m).astype(np.float32), rng.uniform(-3, 3, m).astype(np.float32)),
         1e-5),
        # (chaotic: a few steps of f32 rounding apart after 200 steps; checked loosely)
        ("lorenz-rk4-200-steps-4096-f32", lorenz_rk4, tuple(lor), 1e-2),
    ]


def _numpy_fori_loop(lo, hi, body, carry):
    for i in range(lo, hi):
        carry = body(i, carry)
    return carry


def libraries() -> dict[str, types.SimpleNamespace]:
    import scipy.special

    import ember
    import ember.lax
    import ember.numpy
    import ember.scipy.special

    libs = {"ember": types.SimpleNamespace(np=ember.numpy, special=ember.scipy.special,
                                           fori_loop=ember.lax.fori_loop, jit=ember.jit),
            "numpy": types.SimpleNamespace(np=np, special=scipy.special,
                                           fori_loop=_numpy_fori_loop, jit=lambda f: f)}
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jjnp
        import jax.scipy.special

        libs["jax"] = types.SimpleNamespace(np=jjnp, special=jax.scipy.special,
                                            fori_loop=jax.lax.fori_loop, jit=jax.jit)
    return libs


def _ready(out: object) -> object:
    for o in out if isinstance(out, tuple) else (out,):
        if hasattr(o, "block_until_ready"):
            o.block_until_ready()
    return out


def _kernels(fn: Callable, args: tuple) -> int:
    return len(fn.lower(*args).compile().kernels())


def _check(name: str, got: object, want: object, rtol: float) -> None:
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        w = np.asarray(w)
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"{name}: Ember differs from NumPy")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", default="", help="comma-separated program names (prefixes)")
    args = ap.parse_args()
    libs = libraries()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    rows = []
    for name, prog, pargs, rtol in programs():
        if only and not any(name.startswith(o) for o in only):
            continue
        fns: dict[str, Callable[[], object]] = {}
        jitted = {}
        for lib, L in libs.items():
            f = L.jit(lambda *a, L=L, prog=prog: prog(L, *a))
            jitted[lib] = f
            fns[lib] = lambda f=f, a=pargs: _ready(f(*a))
        _check(name, fns["ember"](), fns["numpy"](), rtol)
        times = interleaved_ms(fns, args.repeat)
        times.update(name=name, kernels=_kernels(jitted["ember"], pargs))
        rows.append(times)
    print(f"{'program':32} {'ember ms':>9} {'jax ms':>8} {'numpy ms':>9} {'ember/jax':>9} "
          f"{'ember/numpy':>11} {'kernels':>7}")
    for r in rows:
        jax_ms = r.get("jax", math.nan)
        print(f"{r['name']:32} {r['ember']:9.3f} {jax_ms:8.3f} {r['numpy']:9.3f} "
              f"{r['ember'] / jax_ms:9.2f} {r['ember'] / r['numpy']:11.2f} {r['kernels']:7d}")
    if not rows:
        sys.exit("no program selected")
    ratios = {r["name"]: r["ember"] / r.get("jax", math.nan) for r in rows}
    geo = math.exp(sum(math.log(v) for v in ratios.values()) / len(ratios))
    worst = max(ratios, key=ratios.__getitem__)
    slower = sum(r["ember"] > r["numpy"] for r in rows)
    print(f"geo-mean ember/jax {geo:.2f} over {len(rows)} programs; worst {worst} "
          f"{ratios[worst]:.2f}; slower than numpy: {slower}")


if __name__ == "__main__":
    main()
