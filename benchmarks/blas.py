"""Matrix products: Ember (its own GEMM or BLAS from generated code, kOutput epilogues) vs
NumPy and JAX, in one process.

Run (OpenBLAS tuning variables unset for this command only, as the peers' table was taken):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/blas.py [--repeat 21]

Workloads (issue 5's goals): gelu(x@W+b) with x 512x1024, W 1024x1024 (tanh form, as
jax.nn.gelu's default); a 1024^3 f32 matmul; x.T @ y at 1024^3. The implementations take
turns in blocks of calls (rounds), so that load from other users of a shared machine hits
all of them alike while no call runs right after another library's; medians are printed
with each one's ratio to NumPy and GFLOP/s. "ember" is the default route (config
ember_matmul_backend "auto": Ember's packed GEMM for large plain products, else BLAS; the
note says which ran); "ember-blas" is the same function with the BLAS route, for
comparison. Then the thread-pool check: an Ember
elementwise kernel (on Ember's threads) timed right after itself, right after an Ember
matmul (BLAS is single-threaded inside Ember, so no BLAS thread may spin) and right after
a NumPy matmul (OpenBLAS's own threads spin-wait for a while after each call). Informative
only: compare ratios from one run. Last, the ceiling: the FMA peak with every thread
running the peak kernel (backends/cpu/peak.py) at once, and what fraction of it each
gelu row reached (two cores at full vector load can run slower than one alone, so this
is measured, not one thread's peak times two).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable

import numpy as np
from timing import interleaved_ms


def gelu_dense(jnp):
    def f(x, w, b):
        h = x @ w + b
        return 0.5 * h * (1.0 + jnp.tanh(0.7978845608 * (h + 0.044715 * (h * h * h))))

    return f


# OpenBLAS's and XLA's worker threads spin-wait on their cores for a while after each call
# (OpenBLAS: up to 2^28 cycles, ~0.1 s); a block timed sooner shares its cores with them
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    rep = ap.parse_args().repeat
    import ember
    import ember.numpy as ejnp
    from ember.backends import cpu

    jax = jjnp = None
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jjnp

        jax.config.update("jax_platforms", "cpu")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    w = (rng.standard_normal((1024, 1024)) / 32).astype(np.float32)
    bias = rng.standard_normal(1024).astype(np.float32)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    c = rng.standard_normal((1024, 1024)).astype(np.float32)
    cases = [("gelu(x@W+b) 512x1024x1024", gelu_dense, (x, w, bias), 2 * 512 * 1024 * 1024),
             ("matmul 1024^3 f32", lambda m: (lambda p, q: p @ q), (a, c), 2 * 1024 ** 3),
             ("x.T @ y 1024^3 f32", lambda m: (lambda p, q: p.T @ q), (a, c), 2 * 1024 ** 3)]
    ember.jit(lambda p, q: p @ q)(a, c)  # links BLAS
    print(f"threads: Ember {cpu.get_num_threads()}; {_blas_source()}")
    print(f"{'workload':28} {'impl':10} {'ms':>8} {'vs numpy':>9} {'GFLOP/s':>8}")
    for name, make, args, flops in cases:
        fns: dict[str, Callable[[], object]] = {}
        ef = ember.jit(make(ejnp))
        nf = make(np)
        fns["ember"] = lambda f=ef, a=args: f(*a)
        route = _route(ef, args)
        if route == "own GEMM":
            backend = ember.config.ember_matmul_backend
            ember.config.update("ember_matmul_backend", "blas")
            # compiled now, with the BLAS route: a Compiled keeps its code whatever the
            # config says later (a jitted function would compile again under "auto")
            bf = ember.jit(make(ejnp)).lower(*args).compile()
            ember.config.update("ember_matmul_backend", backend)
            fns["ember-blas"] = lambda f=bf, a=args: f(*a)
        fns["numpy"] = lambda f=nf, a=args: f(*a)
        if jax is not None:
            jf = jax.jit(make(jjnp))
            jargs = [jjnp.asarray(v) for v in args]
            fns["jax"] = lambda f=jf, a=jargs: f(*a).block_until_ready()
        want = np.asarray(fns["numpy"]())
        got = np.asarray(fns["ember"]())
        err = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) or 1))
        ms = interleaved_ms(fns, rep)
        kind = ef.lower(*args).compile().as_text().split("ENTRY")[1]
        if name.startswith("gelu"):
            gelu_gflops = {impl: flops / t / 1e6 for impl, t in ms.items()}
        for impl, t in ms.items():
            note = ""
            if impl == "ember":
                note = (f"   rel. err {err:.1e}   {route}"
                        + ("   kOutput" if "kOutput" in kind else ""))
            if impl == "jax":
                note = f"   ember/jax time {ms['ember'] / t:.2f}"
            print(f"{name:28} {impl:10} {t:8.2f} {ms['numpy'] / t:8.2f}x {flops / t / 1e6:8.1f}"
                  f"{note}")
    _elementwise_after_blas(ember, ejnp, a, c, rep)
    _peak_report(cpu.get_num_threads(), gelu_gflops)


def _peak_report(threads: int, gelu_gflops: dict[str, float]) -> None:
    """The FMA peak with all `threads` at once (best of 5 rounds of ~50 ms) and each gelu
    row's share of it; with JAX, the share Ember would need for 0.9x JAX's time."""
    import threading

    from ember.backends.cpu.profiling.peak import fma_kernel

    kernel = fma_kernel()
    iters = 1 << 16
    t0 = time.perf_counter()
    kernel.fn(iters)
    iters = max(1, int(iters * 0.05 / max(time.perf_counter() - t0, 1e-9)))

    def round_gflops(n: int) -> float:
        ts = [threading.Thread(target=kernel.fn, args=(iters,)) for _ in range(n)]
        t0 = time.perf_counter()
        for t in ts:  # (ctypes drops the GIL: the threads run at once)
            t.start()
        for t in ts:
            t.join()
        return n * iters * kernel.flops_per_iter / (time.perf_counter() - t0) / 1e9

    one = max(round_gflops(1) for _ in range(5))
    every = max(round_gflops(threads) for _ in range(5))
    line = (f"\nFMA peak: {one:.0f} GFLOP/s on one thread, {every:.0f} with all {threads} "
            f"threads at once; gelu reached " + ", ".join(
                f"{impl} {g / every:.0%}" for impl, g in gelu_gflops.items()))
    if "jax" in gelu_gflops:
        line += f"; 0.9x JAX's time needs {gelu_gflops['jax'] / 0.9 / every:.0%}"
    print(line)


def _route(f, args) -> str:
    """Which library ran the product of jitted `f`: Ember's own GEMM or BLAS."""
    ir_text = f.lower(*args).compile().llvm_ir()
    return "own GEMM" if "ember_gemm_" in ir_text else "BLAS"


def _blas_source() -> str:
    from ember.backends.cpu.dot import blas

    found = blas.info()
    if found is None:
        return "BLAS: (linked on the first product)"
    return f"BLAS: {found.source} ({found.abi}, {found.int_bits}-bit ints)"


def _elementwise_after_blas(ember, ejnp, a: np.ndarray, c: np.ndarray, rep: int) -> None:
    """An Ember elementwise kernel on all of Ember's threads, timed right after each kind
    of product (its own call only)."""
    v = np.random.default_rng(1).standard_normal(4_000_000).astype(np.float32)
    elem = ember.jit(lambda x: x * 0.5 + ejnp.sin(x))
    mm = ember.jit(lambda p, q: p @ q)
    elem(v)
    mm(a, c)
    before: dict[str, Callable[[], object]] = {
        "itself": lambda: elem(v),
        "an Ember matmul": lambda: mm(a, c),
        "a NumPy matmul": lambda: a @ c,
    }
    times: dict[str, list[float]] = {k: [] for k in before}
    for _ in range(rep):
        for k, pre in before.items():
            pre()
            t0 = time.perf_counter()
            elem(v)
            times[k].append(time.perf_counter() - t0)
    base = float(np.median(times["itself"]))
    print("\nEmber elementwise kernel (x*.5 + sin(x), 4e6 f32) right after:")
    for k, ts in times.items():
        t = float(np.median(ts))
        print(f"  {k:16} {t * 1e3:7.2f} ms   {t / base:5.2f}x")


if __name__ == "__main__":
    main()
