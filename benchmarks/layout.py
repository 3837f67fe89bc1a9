"""Layout goals (issue 6): reductions over non-minor dims and transposed products.

Run (OpenBLAS tuning variables unset for this command only, as the peers' table was taken):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/layout.py [--repeat 31]

Pairs, each timed round robin (so load from other users of a shared machine hits both
alike) and reported as the median ratio second / first with its goal:
- column sum vs row sum of a 4096x4096 f32 array (goal: within 1.2x), also written as the
  row sum of x.T (the transpose is a layout: the reduction walks x's memory in order);
- mean(axis=0) vs mean(axis=1), and the middle axis of a 256x256x256 array vs its last;
- x.T @ y vs x @ y at 1024^3 f32 (goal: within 1.05x);
- jnp.exp(x).T @ y vs jnp.exp(x) @ y at 1024^3 (goal: within 1.1x);
then buffer assignment: an elementwise chain of 20 and of 200 ops over 1e7 f32 compiled with
fusion disabled (EMBER_DISABLE_PASSES=fusion): memory_analysis's temporary bytes, in
arrays of 1e7 f32 (goal: at most 2, the same for both lengths), and its time.
Informative only: compare ratios from one run, never absolute times across runs.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("EMBER_BACKEND", "cpu")  # the layouts under test are the CPU backend's

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

import ember  # noqa: E402
import ember.numpy as jnp  # noqa: E402


def paired_ms(first: Callable[[], object], second: Callable[[], object],
              repeat: int) -> tuple[float, float, float]:
    """Medians (ms) of `first` and `second` timed alternately, and the median of the
    per-round ratios second/first (less sensitive to slow phases of a shared machine)."""
    for f in (first, second):
        f()
        f()
    t1, t2, ratios = [], [], []
    for _ in range(repeat):
        a = time.perf_counter()
        first()
        m = time.perf_counter()
        second()
        e = time.perf_counter()
        t1.append(m - a)
        t2.append(e - m)
        ratios.append((e - m) / (m - a))
    return float(np.median(t1) * 1e3), float(np.median(t2) * 1e3), float(np.median(ratios))


def _block(f: Callable[..., object], *args: object) -> Callable[[], object]:
    def call() -> object:
        out = f(*args)
        return np.asarray(out)
    return call


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=31)
    repeat = ap.parse_args().repeat
    rng = np.random.default_rng(0)
    sq = rng.standard_normal((4096, 4096), dtype=np.float32)
    cube = rng.standard_normal((256, 256, 256), dtype=np.float32)
    x = rng.standard_normal((1024, 1024), dtype=np.float32)
    y = rng.standard_normal((1024, 1024), dtype=np.float32)

    cases = [
        ("sum 4096^2: axis=0 / axis=1", 1.2,
         _block(ember.jit(lambda a: jnp.sum(a, axis=1)), sq),
         _block(ember.jit(lambda a: jnp.sum(a, axis=0)), sq)),
        ("mean 4096^2: axis=0 / axis=1", 1.2,
         _block(ember.jit(lambda a: jnp.mean(a, axis=1)), sq),
         _block(ember.jit(lambda a: jnp.mean(a, axis=0)), sq)),
        ("sum(x.T, axis=1) / sum(x, axis=1)", 1.2,
         _block(ember.jit(lambda a: jnp.sum(a, axis=1)), sq),
         _block(ember.jit(lambda a: jnp.sum(a.T, axis=1)), sq)),
        ("sum 256^3: axis=1 / axis=2", 1.2,
         _block(ember.jit(lambda a: jnp.sum(a, axis=2)), cube),
         _block(ember.jit(lambda a: jnp.sum(a, axis=1)), cube)),
        ("matmul 1024^3: x.T@y / x@y", 1.05,
         _block(ember.jit(lambda a, b: a @ b), x, y),
         _block(ember.jit(lambda a, b: a.T @ b), x, y)),
        ("exp(x).T@y / exp(x)@y", 1.1,
         _block(ember.jit(lambda a, b: jnp.exp(a) @ b), x, y),
         _block(ember.jit(lambda a, b: jnp.exp(a).T @ b), x, y)),
    ]
    print(f"{'pair':34s} {'first ms':>9s} {'second ms':>10s} {'ratio':>6s} {'goal':>5s}")
    for name, goal, first, second in cases:
        m1, m2, r = paired_ms(first, second, repeat)
        ok = "ok" if r <= goal else "MISS"
        print(f"{name:34s} {m1:9.3f} {m2:10.3f} {r:6.3f} {goal:5.2f} {ok}")
    unfused_chains()


def _chain(length: int) -> Callable[[object], object]:
    def f(x):
        y = x
        for k in range(length):  # unary math and scalar affine steps, distinct constants
            y = (jnp.tanh(y), y * (1 + k / 1000) + 0.01 * k, jnp.exp(-y * y),
                 jnp.sin(y) - y)[k % 4]
        return y
    return f


def unfused_chains() -> None:
    x = np.random.default_rng(1).standard_normal(10_000_000, dtype=np.float32)
    array = x.nbytes
    os.environ["EMBER_DISABLE_PASSES"] = "fusion"  # (part of the compile cache key)
    try:
        print(f"\n{'fusion disabled, 1e7 f32':34s} {'ops':>9s} {'temp arrays':>12s} "
              f"{'ms':>8s}")
        for length in (20, 200):
            f = ember.jit(_chain(length))
            stats = f.lower(x).compile().memory_analysis()
            f(x)
            t = time.perf_counter()
            np.asarray(f(x))
            ms = (time.perf_counter() - t) * 1e3
            temps = stats.temp_size_in_bytes / array
            ok = "ok" if temps <= 2 else "MISS"
            print(f"{f'{length}-op chain':34s} {length:9d} {temps:12.2f} {ms:8.1f} {ok}")
    finally:
        del os.environ["EMBER_DISABLE_PASSES"]


if __name__ == "__main__":
    main()
