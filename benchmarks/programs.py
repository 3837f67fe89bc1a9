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

from program_catalog import catalog, compare, namespace
from timing import interleaved_ms


def libraries() -> dict[str, types.SimpleNamespace]:
    """Ember and NumPy, and JAX when importable, with x64 on in both JITs (the float64
    programs need it; the float32 ones pass float32 arrays)."""
    import ember

    ember.config.update("jax_enable_x64", True)
    names = ["ember", "numpy"]
    if importlib.util.find_spec("jax"):
        import jax

        jax.config.update("jax_enable_x64", True)
        names.append("jax")
    return {n: namespace(n) for n in names}


def _ready(out: object) -> object:
    for o in out if isinstance(out, tuple) else (out,):
        if hasattr(o, "block_until_ready"):
            o.block_until_ready()
    return out


def _kernels(fn: Callable, args: tuple) -> int:
    return len(fn.lower(*args).compile().kernels())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", default="", help="comma-separated program names (prefixes)")
    args = ap.parse_args()
    libs = libraries()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    rows = []
    for p in catalog():
        name, prog, pargs, rtol = p.name, p.fn, p.args, p.rtol
        if only and not any(name.startswith(o) for o in only):
            continue
        fns: dict[str, Callable[[], object]] = {}
        jitted = {}
        for lib, L in libs.items():
            f = L.jit(lambda *a, L=L, prog=prog: prog(L, *a))
            jitted[lib] = f
            fns[lib] = lambda f=f, a=pargs: _ready(f(*a))
        compare(name, fns["ember"](), fns["numpy"](), rtol)
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
