"""The peers' workloads of shared/DESIGN.md on Ember (through `ember.jit`) vs NumPy, and JAX,
numexpr and Numba when importable, in one process.

Run (OpenBLAS tuning variables unset for this command only, as the peers' table was taken):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/run.py [--repeat 15]

Workloads: the peers' table, then a row variance and a row logsumexp (one value per row
out of dependent reductions). Prints per workload the median milliseconds of each
implementation (they take turns in blocks of calls, three rounds, so other users' load
spreads over all), its ratio to NumPy (>1: faster than NumPy) and, for Ember, the achieved
GB/s (bytes read + written) and its fraction of the triad bandwidth measured first in the
same run (Ember's own compiled `a = b + s*c` over 128 MB arrays on all threads). Then
one-time costs and first calls (each the median of 7 fresh processes): disk cache off,
Ember warmed up as JAX is (a jit of another function) and with LLVM initialized only, then
a warm disk cache.
`--first-call-only` prints just those lines. Results of every call are dropped, as a loop
that discards results would. Informative only: shared hosts are noisy; compare ratios from
one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
from timing import interleaved_ms, median_ms


def _ready(x: object) -> object:
    return x.block_until_ready() if hasattr(x, "block_until_ready") else x


jnp: object = None  # each workload's `jnp`: bound per implementation by `_with_module`


def workloads():
    """name -> (function written as users write it, argument factory, bytes moved). The
    functions read the module global `jnp`, which `_with_module` rebinds (a closure
    variable would not be: every column would then run the same library)."""
    rng = np.random.default_rng(0)
    n = 10_000_000
    v = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    m = rng.standard_normal((4096, 1024)).astype(np.float32)
    g, b = rng.standard_normal(1024).astype(np.float32), rng.standard_normal(1024).astype(
        np.float32)

    def fusion(x, a, c):
        return a * jnp.sin(x) + c

    def chain(x):
        return jnp.tanh(x * .5 + 1) * jnp.exp(-x * x) + jnp.log1p(jnp.abs(x))

    def total(x):
        return jnp.sum(x)

    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    def layernorm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.var(x, axis=-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * g + b

    # beyond the peers' table: dependent reductions with one value per row (row_fusion.py)
    def row_variance(x):
        return jnp.var(x, axis=-1)

    def logsumexp(x):
        mx = jnp.max(x, axis=-1, keepdims=True)
        return jnp.log(jnp.sum(jnp.exp(x - mx), axis=-1)) + mx[:, 0]

    mb = m.nbytes
    return [("a*sin(x)+b, 1e7 f32", fusion, (v[0], v[1], v[2]), 4 * 4 * n),
            ("tanh/exp/log1p chain, 1e7", chain, (v[0],), 2 * 4 * n),
            ("sum, 1e7 f32", total, (v[0],), 4 * n),
            ("row softmax, 4096x1024", softmax, (m,), 2 * mb),
            ("layernorm, 4096x1024", layernorm, (m, g, b), 2 * mb),
            ("row variance, 4096x1024", row_variance, (m,), mb),
            ("logsumexp rows, 4096x1024", logsumexp, (m,), mb)]


def triad_gbs(repeat: int) -> float:
    """Ember's compiled triad over 128 MB arrays, all threads: the bandwidth reference."""
    import ember

    n = 1 << 25
    b, c = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
    f = ember.jit(lambda b, c: b + np.float32(3.0) * c)
    t = median_ms(lambda: _ready(f(b, c)), repeat)
    return 3 * 4 * n / (t * 1e-3) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--first-call-only", action="store_true",
                    help="print only the first-call lines (fresh processes), to iterate fast")
    args = ap.parse_args()
    if args.first_call_only:
        first_call_report(has_jax=importlib.util.find_spec("jax") is not None)
        return
    rep = args.repeat
    t0 = time.perf_counter()
    import ember
    import ember.numpy as jnp
    from ember.backends import cpu

    import_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    from ember.backends.cpu.jit import llvm_target

    llvm_target.target()
    llvm_ms = (time.perf_counter() - t0) * 1e3
    bw = triad_gbs(rep)
    peers: dict[str, object] = {}
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jjnp

        peers["jax"] = (jax, jjnp)
    has_ne = importlib.util.find_spec("numexpr") is not None
    rows = []
    for name, fn, fargs, nbytes in workloads():
        ej = ember.jit(_with_module(fn, jnp))
        eargs = [ember.asarray(a) if hasattr(ember, "asarray") else a for a in fargs]
        kernels = ej.lower(*fargs).compile().as_text().split("ENTRY")[1].count("fusion(")
        nf = _with_module(fn, np)  # NumPy: the same source with jnp bound to numpy
        fns: dict[str, Callable[[], object]] = {
            "ember": lambda f=ej, a=eargs: _ready(f(*a)), "numpy": lambda f=nf, a=fargs: f(*a)}
        if "jax" in peers:
            jax, jjnp = peers["jax"]
            jf = jax.jit(_with_module(fn, jjnp))
            jargs = [jjnp.asarray(a) for a in fargs]
            fns["jax"] = lambda f=jf, a=jargs: f(*a).block_until_ready()
        if has_ne and name.startswith("a*sin"):
            import numexpr as ne

            x, a, c = fargs
            names = {"x": x, "a": a, "c": c}
            fns["numexpr"] = lambda d=names: ne.evaluate("a*sin(x)+c", local_dict=d)
        row = interleaved_ms(fns, rep)
        row.update(name=name, gbs=nbytes / (row["ember"] * 1e-3) / 1e9, kernels=kernels)
        rows.append(row)
    print(f"threads: {cpu.get_num_threads()}   triad bandwidth (Ember, same run): {bw:.1f} GB/s")
    print(f"{'workload':28} {'impl':8} {'ms':>8} {'vs numpy':>9} {'GB/s':>6} {'of triad':>8}")
    for r in rows:
        for impl in ("ember", "numpy", "jax", "numexpr"):
            if impl not in r:
                continue
            t = r[impl]
            extra = ""
            if impl == "ember":
                extra = f" {r['gbs']:6.1f} {r['gbs'] / bw:7.0%}   kernels: {r['kernels']}"
            print(f"{r['name']:28} {impl:8} {t:8.2f} {r['numpy'] / t:8.2f}x{extra}")
    tiny = {"ember": tiny_call_us(ember.jit)}
    if "jax" in peers:
        tiny["jax"] = tiny_call_us(peers["jax"][0].jit)
    for kind in ("array", "numpy"):
        what = "ember.Array" if kind == "array" else "NumPy"
        line = f"cached tiny call ({what + ' arg):':17} ember {tiny['ember'][kind]:6.2f} us"
        if "jax" in tiny:
            line += (f"   jax {tiny['jax'][kind]:6.2f} us   jax/ember "
                     f"{tiny['jax'][kind] / tiny['ember'][kind]:5.2f}x")
        print(line)
    print(f"import ember: {import_ms:.0f} ms; LLVM initialization: {llvm_ms:.0f} ms")
    first_call_report("jax" in peers)
    print("libm per element still:", ", ".join(_scalar_libm()))


def first_call_report(has_jax: bool, runs: int = 7) -> None:
    """The first-call lines, each the median over `runs` fresh processes: cold (disk cache
    off) vs JAX, with Ember warmed up as JAX is (a jit of another function: compiler
    initialized and its modules imported) and, apart, with LLVM initialized only (that
    line adds the one-time import of Ember's code generator, which JAX does at `import
    jax`); then a warm disk cache. The kinds take turns (one process of each per round),
    so a change in the machine's load moves all of them alike."""
    kinds = {"jit": dict(warmup="jit"), "llvm": dict(warmup="llvm")}
    if has_jax:
        kinds["jax"] = dict(jax=True)
    ms = _interleaved_first_calls(kinds, runs)
    first = ms["jit"]
    line = f"first call of a*sin(x)+b (disk cache off, after a warm-up jit): ember {first:.1f} ms"
    if has_jax:
        line += f"   jax {ms['jax']:.1f} ms   ember/jax {first / ms['jax']:.2f}x"
    print(line)
    line = f"  same, LLVM initialized only (+ code generator import): ember {ms['llvm']:.1f} ms"
    if has_jax:
        line += f"   ember/jax {ms['llvm'] / ms['jax']:.2f}x"
    print(line)
    print(f"  (one-time costs of a process's first compile, the difference: "
          f"{ms['llvm'] - first:.1f} ms: importing the code generator and LLVM's first use)")
    import tempfile

    with tempfile.TemporaryDirectory() as warm:
        _first_call_ms(warm, runs=1)  # fills the cache
        print(f"first call in a fresh process, warm disk cache: "
              f"{_first_call_ms(warm, runs=runs):.1f} ms (LLVM optimize/codegen runs: "
              f"{_first_call_ms(warm, stat=True, runs=1):.0f})")


def _interleaved_first_calls(kinds: dict[str, dict], runs: int) -> dict[str, float]:
    """Median first-call ms of each kind (keyword arguments of `_first_call_ms`, disk
    cache off), over `runs` rounds of one fresh process per kind."""
    values: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(runs):
        for k, kw in kinds.items():
            values[k].append(_first_call_ms("off", **kw))
    return {k: float(np.median(v)) for k, v in values.items()}


def tiny_call_us(jit: Callable, calls: int = 100_000, chunk: int = 1000) -> dict[str, float]:
    """Microseconds per cached call of `jit(lambda x: x + 1)` on f32[3], waiting for each
    result: `array`, an argument that is the previous call's result (ember.Array /
    jax.Array), and `numpy`, the same NumPy array every call. Each is the median over
    `calls // chunk` chunks of `chunk` back-to-back calls (a per-call clock read would cost
    a tenth of what it measures), after a warm-up that also installs any fast path."""
    f = jit(lambda x: x + 1)
    xn = np.ones(3, np.float32)
    state = [f(xn)]
    for _ in range(chunk):
        state[0] = f(state[0]).block_until_ready()
        f(xn).block_until_ready()

    def chained() -> None:
        y = state[0]
        for _ in range(chunk):
            y = f(y)
            y.block_until_ready()
        state[0] = y

    def same_numpy() -> None:
        for _ in range(chunk):
            f(xn).block_until_ready()

    out = {}
    for kind, loop in (("array", chained), ("numpy", same_numpy)):
        times = []
        for _ in range(max(1, calls // chunk)):
            t0 = time.perf_counter()
            loop()
            times.append((time.perf_counter() - t0) / chunk * 1e6)
        out[kind] = float(np.median(times))
    return out


def _with_module(fn: Callable, module: object) -> Callable:
    """`fn` with its `jnp` global bound to `module` (NumPy, jax.numpy)."""
    import types

    g = dict(fn.__globals__)
    g["jnp"] = module
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def _first_call_ms(cache: str, jax: bool = False, stat: bool = False, warmup: str = "llvm",
                   runs: int = 1) -> float:
    """Trace + compile + run of a new function in a fresh process where the compiler is
    already initialized, the median over `runs` processes. JAX: its CPU client, by a
    warm-up jit of another function; Ember: `warmup="llvm"` initializes LLVM only,
    `warmup="jit"` runs the same warm-up jit as JAX. `stat`: instead, how many LLVM
    optimize + codegen runs that call made."""
    if jax:
        code = ("import time, numpy as np, jax, jax.numpy as jnp\n"
                "jax.jit(lambda v: v * 2)(np.ones(3, np.float32)).block_until_ready()\n"
                "x = np.ones(1000, np.float32)\n"
                "t = time.perf_counter()\n"
                "jax.jit(lambda x, a, b: a * jnp.sin(x) + b)(x, x, x).block_until_ready()\n"
                "print((time.perf_counter() - t) * 1e3)\n")
    else:
        init = ("ember.jit(lambda v: v * 2)(np.ones(3, np.float32))\n" if warmup == "jit" else
                "from ember.backends.cpu.jit import llvm_target; llvm_target.target()\n")
        code = ("import time, numpy as np, ember, ember.numpy as jnp\n"
                "from ember.backends import cpu\n"
                + init +
                # LLVM's counters only: cpu.cache_stats() would import the CPU compiler's
                # modules before the timer, which a real first call pays for
                "from ember.backends.cpu.jit import llvm_target as lt\n"
                "s0 = dict(lt.STATS)\n"
                "x = np.ones(1000, np.float32)\n"
                "t = time.perf_counter()\n"
                "ember.jit(lambda x, a, b: a * jnp.sin(x) + b)(x, x, x)\n"
                "ms = (time.perf_counter() - t) * 1e3\n"
                "s = lt.STATS\n"
                "runs = sum(s[k] - s0[k] for k in ('optimize_runs', 'codegen_runs'))\n"
                f"print(runs if {stat} else ms)\n")
    env = dict(os.environ, EMBER_CACHE_DIR=cache)
    # Bytecode caching on, as for an installed JAX (pip compiles its .pyc files): with
    # PYTHONDONTWRITEBYTECODE set, as on some CI machines, each process would recompile
    # Ember's sources (~130 ms for the backend alone). One untimed run writes them.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not _first_call_ms.__dict__.get("bytecode_warm"):
        subprocess.run([sys.executable, "-c", code], env=dict(env, EMBER_CACHE_DIR="off"),
                       capture_output=True, check=False)
        _first_call_ms.__dict__["bytecode_warm"] = True
    values = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True)
        try:
            values.append(float(out.stdout.strip().splitlines()[-1]))
        except (IndexError, ValueError):
            return float("nan")
    return float(np.median(values))


def _scalar_libm() -> list[str]:
    try:
        from ember.backends.cpu.mathlib import SCALAR_LIBM
    except ImportError:
        return ["(unknown)"]
    return list(SCALAR_LIBM)


if __name__ == "__main__":
    main()
