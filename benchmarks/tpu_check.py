"""Ember on a TPU against `jax.jit` on the same chip, in one command (issue 20, item 5).

Run on the TPU machine (one process may hold the chip; it should finish within 5 minutes):
    python benchmarks/tpu_check.py
and, to check the script itself without a chip (Ember's `xla-cpu` backend against
`jax.jit` on the CPU; `--quick` shrinks the sizes):
    python benchmarks/tpu_check.py --platform cpu --quick

Prints, in order:
1. The op table: elementwise lax ops (f32, int32, bool) through Ember's backend for the
   platform (`tpu`, or `xla-cpu` with `--platform cpu`) against Ember's CPU backend (its
   xla-cpu backend where llvmlite is not installed), each a
   line `ok`/`FAIL` with its largest error and the tolerance (f32: `F32_RTOL` relative,
   `F32_ATOL` absolute, as the TPU's transcendentals are a few ulps from the host's;
   integers and bools bit for bit). Each op is followed by a multiply, so it is a fusion:
   with `--op-kernels ember` (default) every fusion Ember has a kernel for runs as Ember's
   own Mosaic kernel.
2. The workloads: `a*sin(x)+b` over 2^24 f32, row softmax, layernorm and logsumexp over
   8192x4096 f32, a 4096^3 bf16 product (given to Ember as HLO text: Ember's tracer has no
   bfloat16), a 2-D heat stencil in `fori_loop`, the README demo's function, the
   workloads of benchmarks/run.py; per workload the device milliseconds of Ember and of
   `jax.jit`, their ratio (Ember / JAX: below 1 is faster), whether the results agree
   (the tolerance per workload: f32 elementwise and rows `F32_RTOL`; products at default
   precision are one bf16 pass on a TPU, as in JAX: `PRODUCT_RTOL` of the largest
   entry), and the Ember Mosaic kernels in the module (`EMBER_TPU_KERNELS` chooses; on the
   CPU, the kernels the TPU backend would generate, counted without a chip).
3. The cached tiny call: microseconds per synchronous `f(x)` of `x + 1` on f32[3].

Device time: `--calls` (20 or more) calls are queued before waiting for the last one (a
single synchronous call costs about 0.55 ms of round trip on the TPU host), the median of
`--repeat` such bursts divided by the calls. Ember's side runs its compiled executable
directly on device buffers (`XlaExecutable.run_buffers`), as JAX's side runs on
`jax.Array`s: both measure the device, not the host copies.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

F32_RTOL, F32_ATOL = 2e-5, 2e-6
PRODUCT_RTOL = 2e-2
BACKEND = {"tpu": "tpu", "cpu": "xla-cpu"}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platform", choices=sorted(BACKEND), default="tpu",
                    help="tpu: Ember's tpu backend vs jax.jit on the chip; cpu: Ember's "
                         "xla-cpu backend vs jax.jit on the CPU (checks this script)")
    ap.add_argument("--calls", type=int, default=20,
                    help="calls queued before waiting, per timed burst (at least 20)")
    ap.add_argument("--repeat", type=int, default=5, help="timed bursts per workload")
    ap.add_argument("--quick", action="store_true", help="small sizes (a CPU check)")
    ap.add_argument("--only", default="",
                    help="comma-separated substrings: run the workloads whose names hold one "
                         "(and the op table only if 'ops' is one of them)")
    ap.add_argument("--op-kernels", choices=("auto", "ember", "xla"), default="ember",
                    help="EMBER_TPU_KERNELS for the op table")
    ap.add_argument("--kernels", choices=("auto", "ember", "xla"), default="auto",
                    help="EMBER_TPU_KERNELS for the workloads")
    ap.add_argument("--cache-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--verbose", action="store_true",
                    help="print each failure's whole traceback (not its first line)")
    args = ap.parse_args(argv)
    if args.calls < 20 and not args.quick:
        ap.error("--calls must be at least 20 (device time is measured over queued calls)")
    return args


@contextlib.contextmanager
def kernels_flag(value: str) -> Iterator[None]:
    """EMBER_TPU_KERNELS=value for a block (a live flag: read at each compilation)."""
    old = os.environ.get("EMBER_TPU_KERNELS")
    os.environ["EMBER_TPU_KERNELS"] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ["EMBER_TPU_KERNELS"]
        else:
            os.environ["EMBER_TPU_KERNELS"] = old


# -- the op table ------------------------------------------------------------------------

def op_records(lax: Any) -> list[tuple[str, Callable[..., Any], str, tuple[float, float]]]:
    """(name, f(x, y), dtype, input range) of the elementwise op table."""
    f32 = [("sin", lax.sin), ("cos", lax.cos), ("tan", lax.tan), ("exp", lax.exp),
           ("exp2", lax.exp2), ("log", lax.log), ("log1p", lax.log1p), ("expm1", lax.expm1),
           ("tanh", lax.tanh), ("sqrt", lax.sqrt), ("rsqrt", lax.rsqrt), ("abs", lax.abs),
           ("neg", lax.neg), ("floor", lax.floor), ("ceil", lax.ceil), ("erf", lax.erf),
           ("logistic", lax.logistic), ("sign", lax.sign), ("round", lax.round)]
    out = [(name, (lambda x, y, op=op: op(x) * y), "float32", (0.1, 3.0))
           for name, op in f32]
    f32_binary = [("add", lax.add), ("sub", lax.sub), ("mul", lax.mul), ("div", lax.div),
                  ("max", lax.max), ("min", lax.min), ("pow", lax.pow),
                  ("atan2", lax.atan2)]
    out += [(name, (lambda x, y, op=op: op(x, y) * x), "float32", (0.1, 3.0))
            for name, op in f32_binary]
    i32 = [("add", lax.add), ("sub", lax.sub), ("mul", lax.mul), ("max", lax.max),
           ("min", lax.min), ("and", lax.bitwise_and), ("or", lax.bitwise_or),
           ("xor", lax.bitwise_xor), ("shift_left", lax.shift_left),
           ("shift_right_logical", lax.shift_right_logical),
           ("shift_right_arithmetic", lax.shift_right_arithmetic)]
    out += [(name, (lambda x, y, op=op: op(x, y) + y), "int32", (0, 40)) for name, op in i32]
    out += [(name, (lambda x, y, op=op: op(x) * y), "float32", (-0.9, 0.9))
            for name, op in (("asin", lax.asin), ("acos", lax.acos), ("atan", lax.atan),
                             ("atanh", lax.atanh), ("sinh", lax.sinh), ("cosh", lax.cosh))]
    out += [(name, (lambda x, y, op=op: op(x) + y), "int32", (-40, 40))
            for name, op in (("clz", lax.clz), ("population_count", lax.population_count),
                             ("sign", lax.sign))]
    out.append(("select(x < y)", lambda x, y: lax.select(x < y, x, y) * 2, "float32",
                (-2.0, 2.0)))
    out.append(("ne to float", lambda x, y: lax.convert_element_type(x != y, np.float32) + 1,
                "int32", (0, 3)))
    return out


def op_inputs(dtype: str, lo: float, hi: float, shape: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if dtype == "int32":
        return [rng.integers(int(lo), int(hi), shape).astype(np.int32) for _ in range(2)]
    return [rng.uniform(lo, hi, shape).astype(np.float32) for _ in range(2)]


def reference_backend() -> str:
    """Ember's cpu backend where llvmlite is installed, else its xla-cpu backend (the TPU
    machine may lack llvmlite; jaxlib's CPU client is there)."""
    import importlib.util

    return "cpu" if importlib.util.find_spec("llvmlite") else "xla-cpu"


VERBOSE = False


def _report(e: Exception, width: int) -> str:
    """A failure's text: its first `width` characters, or (--verbose) the traceback."""
    if VERBOSE:
        import traceback

        return "\n" + traceback.format_exc()
    return f"{type(e).__name__}: {str(e)[:width]}"


def run_op_table(backend: str, kernels: str, quick: bool,
                 names: Sequence[str] | None = None) -> tuple[int, int]:
    """Print the op table (the records named in `names`, default all); (passed, failed).

    Each op runs three ways on the same inputs: Ember's CPU reference, Ember's `backend`,
    and `jax.jit` on the platform's default device. A float op passes when Ember's largest
    error is within the tolerance (F32_RTOL relative + F32_ATOL absolute) or within twice
    the error `jax.jit` itself makes on that device (the TPU's transcendentals are a few
    ulps from the host's: the precision the chip gives); integers and bools bit for bit."""
    import jax

    import ember
    from ember import lax

    shape = (64, 256) if quick else (512, 1024)
    passed = failed = 0
    ref = reference_backend()
    print(f"op table: Ember's {backend} backend against Ember's {ref} backend, {shape} "
          f"(EMBER_TPU_KERNELS={kernels}); 'jax' is jax.jit's error on "
          f"{jax.devices()[0].platform}, in the same units")
    jlax = jax.lax
    jax_records = {(n, d): f for n, f, d, _ in op_records(jlax)}
    for name, f, dtype, (lo, hi) in op_records(lax):
        if names is not None and name not in names:
            continue
        x, y = op_inputs(dtype, lo, hi, shape)
        want = np.asarray(ember.jit(f, backend=ref)(x, y))
        try:
            with kernels_flag(kernels):
                got = np.asarray(ember.jit(f, backend=backend)(x, y))
        except Exception as e:  # (report and go on: one op must not hide the others)
            print(f"  FAIL {name:24} {dtype:8} {_report(e, 120)}")
            failed += 1
            continue
        if want.dtype.kind == "f":
            theirs = np.asarray(jax.jit(jax_records[name, dtype])(x, y))
            err, jax_err = (float(np.max(np.abs(v.astype(np.float64) - want)
                                         / (np.abs(want) * F32_RTOL + F32_ATOL)))
                            for v in (got, theirs))
            ok = err <= max(1.0, 2.0 * jax_err)
            detail = (f"max err {err:.2f} of tolerance, jax {jax_err:.2f} (rtol {F32_RTOL}, "
                      f"atol {F32_ATOL}, or 2x jax's)")
        else:
            ok = bool(np.array_equal(got, want))
            detail = "bit for bit" if ok else f"{int(np.sum(got != want))} elements differ"
        print(f"  {'ok  ' if ok else 'FAIL'} {name:24} {dtype:8} {detail}")
        passed += ok
        failed += not ok
    print(f"op table: {passed} ok, {failed} failed")
    return passed, failed


# -- the workloads -----------------------------------------------------------------------

@dataclass
class Workload:
    name: str
    make: Callable[[Any, Any], Callable[..., Any]] | None  # (numpy module, lax) -> f
    args: tuple[np.ndarray, ...]
    rtol: float = F32_RTOL
    atol: float = F32_ATOL
    hlo: str | None = None          # Ember's side as HLO text (bf16: no tracer support)
    jax_fn: Callable[..., Any] | None = None  # JAX's side where `make` is None
    kernels: str | None = None      # EMBER_TPU_KERNELS for this one (None: --kernels)
    nbytes: int = 0                 # bytes read and written per call (prints GB/s)


def _softmax(jnp: Any, lax: Any) -> Callable[..., Any]:
    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)
    return softmax


def _layernorm(jnp: Any, lax: Any) -> Callable[..., Any]:
    def layernorm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * lax.rsqrt(var + 1e-5) * g + b
    return layernorm


def _logsumexp(jnp: Any, lax: Any) -> Callable[..., Any]:
    def logsumexp(x):
        m = jnp.max(x, axis=-1, keepdims=True)
        return jnp.log(jnp.sum(jnp.exp(x - m), axis=-1)) + m[:, 0]
    return logsumexp


def _axpb(jnp: Any, lax: Any) -> Callable[..., Any]:
    def f(x, a, b):
        return a * jnp.sin(x) + b
    return f


def _triad(jnp: Any, lax: Any) -> Callable[..., Any]:
    def triad(x, y, a):
        return a * x + y
    return triad


def _stencil(steps: int) -> Callable[[Any, Any], Callable[..., Any]]:
    def make(jnp: Any, lax: Any) -> Callable[..., Any]:
        def heat(u):
            def step(_, u):
                lap = (jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1)
                       + jnp.roll(u, -1, 1) - 4.0 * u)
                return u + 0.1 * lap
            return lax.fori_loop(0, steps, step, u)
        return heat
    return make


def _bf16_product(n: int) -> Workload:
    import ml_dtypes  # (a dependency of jaxlib)

    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16) for _ in range(2))
    hlo = (f"HloModule bf16_product\nENTRY %main (a: bf16[{n},{n}], b: bf16[{n},{n}]) -> "
           f"bf16[{n},{n}] {{\n  %a = bf16[{n},{n}] parameter(0)\n  %b = bf16[{n},{n}] "
           f"parameter(1)\n  ROOT %d = bf16[{n},{n}] dot(%a, %b), lhs_contracting_dims={{1}}, "
           f"rhs_contracting_dims={{0}}\n}}\n")

    def jax_fn(x, y):
        import jax.numpy as jjnp

        return jjnp.dot(x, y)
    scale = float(np.sqrt(n))  # (entries ~ sqrt(n): tolerance relative to that)
    return Workload(f"{n}^3 bf16 product", None, (a, b), PRODUCT_RTOL, PRODUCT_RTOL * scale,
                    hlo=hlo, jax_fn=jax_fn)


# sizes: elementwise log2 n, row shape, product n, stencil grid and steps, demo length
SIZES = {False: {"log2n": 24, "rows": (8192, 4096), "product": 4096, "grid": 1024,
                 "steps": 100, "demo": 1_000_000},
         True: {"log2n": 14, "rows": (64, 512), "product": 256, "grid": 64, "steps": 10,
                "demo": 4096}}


def workloads(quick: bool) -> list[Workload]:
    """The issue's list (SIZES[quick]), then benchmarks/run.py's workloads."""
    size = SIZES[quick]
    rng = np.random.default_rng(0)
    n = 1 << size["log2n"]
    rows, cols = size["rows"]
    m = rng.standard_normal((rows, cols)).astype(np.float32)
    g, b = (rng.standard_normal(cols).astype(np.float32) for _ in range(2))
    x = rng.standard_normal(n).astype(np.float32)
    grid = size["grid"]
    u0 = rng.random((grid, grid)).astype(np.float32)
    demo = np.linspace(0, 1, size["demo"], dtype=np.float32)
    out = [Workload(f"a*sin(x)+b, 2^{int(np.log2(n))} f32", _axpb,
                    (x, np.float32(2.0), np.float32(1.0))),
           Workload(f"a*sin(x)+b, 2^{int(np.log2(n))} f32, Ember kernel", _axpb,
                    (x, np.float32(2.0), np.float32(1.0)), kernels="ember", nbytes=8 * n),
           Workload(f"triad a*x+y, 2^{int(np.log2(n))} f32, Ember kernel", _triad,
                    (x, x[::-1].copy(), np.float32(3.0)), kernels="ember", nbytes=12 * n),
           Workload(f"triad a*x+y, 2^{int(np.log2(n))} f32, XLA", _triad,
                    (x, x[::-1].copy(), np.float32(3.0)), kernels="xla", nbytes=12 * n),
           Workload(f"row softmax, {rows}x{cols} f32", _softmax, (m,)),
           Workload(f"layernorm, {rows}x{cols} f32", _layernorm, (m, g, b)),
           Workload(f"logsumexp rows, {rows}x{cols} f32", _logsumexp, (m,)),
           _bf16_product(size["product"]),
           Workload(f"heat stencil {grid}^2, fori_loop", _stencil(size["steps"]),
                    (u0,), 1e-4, 1e-5),
           Workload("README demo a*sin(x)+b", _axpb, (demo, np.float32(2.0), np.float32(1.0)))]
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import run  # benchmarks/run.py

    for name, fn, fargs, _ in run.workloads():
        out.append(Workload(f"run.py: {name}", lambda jnp, lax, fn=fn: run._with_module(fn, jnp),
                            tuple(fargs), 1e-4, 1e-4))
    return out


class Harness:
    """Runs a workload on Ember's backend and on `jax.jit`, on one platform's device."""

    def __init__(self, platform: str, calls: int, repeat: int) -> None:
        import jax

        self.platform = platform
        self.backend = BACKEND[platform]
        self.calls, self.repeat = calls, repeat
        self.jax = jax
        self.device = jax.devices(platform)[0]

    def ember(self, w: Workload) -> tuple[Callable[[], list[Any]], int]:
        """A runner that enqueues Ember's compiled module on device buffers, and the count
        of Ember Mosaic kernels in it."""
        import ember
        from ember import backends, lax
        from ember.hlo.parser import parse_module

        be = backends.get(self.backend)
        if w.hlo is not None:
            module, flat = parse_module(w.hlo), list(w.args)
        else:
            lowered = ember.jit(w.make(ember.numpy, lax)).lower(*w.args)
            module = lowered._lowered.module
            flat = [*lowered._result.hoisted, *w.args, *lowered._lowered.hidden_consts]
        exe = be.compile(module)
        kernels = getattr(exe, "mosaic_kernels", None)
        if kernels is None:  # (not on a TPU: what the tpu backend would generate)
            from ember.backends import tpu

            kernels = tpu.tpu_module(tpu.optimize(module)).kernels
        bufs = [be.to_device(a) for a in flat]
        return (lambda: exe.run_buffers(*bufs)), len(kernels)

    def jax_runner(self, w: Workload) -> Callable[[], Any]:
        import jax.numpy as jjnp
        from jax import lax as jlax

        fn = w.jax_fn if w.jax_fn is not None else w.make(jjnp, jlax)
        f = self.jax.jit(fn)
        args = [self.jax.device_put(a, self.device) for a in w.args]
        return lambda: f(*args)

    def device_ms(self, run: Callable[[], Any]) -> float:
        """Median over bursts of `calls` queued calls, per call."""
        _block(run())
        times = []
        for _ in range(self.repeat):
            t0 = time.perf_counter()
            for _ in range(self.calls - 1):
                run()
            _block(run())
            times.append((time.perf_counter() - t0) / self.calls)
        return float(np.median(times) * 1e3)


def _block(out: Any) -> Any:
    for o in out if isinstance(out, (list, tuple)) else [out]:
        o.block_until_ready()
    return out


def _agree(a: Any, b: Any, w: Workload) -> tuple[bool, float]:
    """(within tolerance, largest error as a fraction of it)."""
    a = np.asarray(a[0] if isinstance(a, (list, tuple)) else a, np.float64)
    b = np.asarray(b[0] if isinstance(b, (list, tuple)) else b, np.float64)
    if a.shape != b.shape:
        return False, float("inf")
    err = float(np.max(np.abs(a - b) / (np.abs(b) * w.rtol + w.atol))) if a.size else 0.0
    return err <= 1.0, err


def run_workloads(h: Harness, ws: list[Workload], kernels: str) -> list[dict[str, Any]]:
    if not ws:  # (--only named none of them)
        return []
    print(f"\nworkloads on {h.device} (Ember {h.backend}, EMBER_TPU_KERNELS={kernels}; "
          f"{h.calls} queued calls x {h.repeat})")
    print(f"{'workload':40} {'ember ms':>9} {'jax ms':>9} {'ember/jax':>9} {'agree':>6} "
          f"{'kernels':>7}")
    rows = []
    for w in ws:
        try:
            with kernels_flag(w.kernels or kernels):
                er, nk = h.ember(w)
            jr = h.jax_runner(w)
            ok, err = _agree(er(), jr(), w)
            te, tj = h.device_ms(er), h.device_ms(jr)
        except Exception as e:  # (report and go on)
            print(f"{w.name:40} FAILED: {_report(e, 200)}")
            rows.append({"name": w.name, "error": str(e)})
            continue
        print(f"{w.name:40} {te:9.3f} {tj:9.3f} {te / tj:8.2f}x {'yes' if ok else 'NO':>6} "
              f"{nk:7d}" + ("" if ok else f"   (error {err:.1f}x the tolerance)")
              + (f"   GB/s: ember {w.nbytes / te / 1e6:.0f}, jax {w.nbytes / tj / 1e6:.0f}"
                 if w.nbytes else ""))
        rows.append({"name": w.name, "ember_ms": te, "jax_ms": tj, "agree": ok,
                     "kernels": nk})
    return rows


def tiny_call_us(h: Harness, calls: int) -> list[tuple[float, float]]:
    """Microseconds per cached call of `x + 1` on f32[3], Ember's and JAX's: synchronous
    (the result copied to the host each time), then dispatched (`calls` calls through
    `jit` queued, waiting for the last one)."""
    import ember

    x = np.ones(3, np.float32)
    fe = ember.jit(lambda v: v + 1, backend=h.backend)
    fj = h.jax.jit(lambda v: v + 1)
    xj = h.jax.device_put(x, h.device)
    # (each side's argument already on its device, as a program's would be)
    xe = ember.device_put(x, ember.devices("tpu")[0]) if h.platform == "tpu" else x
    sync, queued = [], []
    for f, arg in ((fe, xe), (fj, xj)):
        np.asarray(f(arg))
        t0 = time.perf_counter()
        for _ in range(calls):
            np.asarray(f(arg))
        sync.append((time.perf_counter() - t0) / calls * 1e6)
        t0 = time.perf_counter()
        for _ in range(calls - 1):
            f(arg)
        f(arg).block_until_ready()
        queued.append((time.perf_counter() - t0) / calls * 1e6)
    return [(sync[0], sync[1]), (queued[0], queued[1])]


def roofline(platform: str) -> bool:
    """ember.explain.profile of row softmax and layernorm with Ember's kernels, against the
    device's own measured ceilings; False if it failed."""
    import ember

    if platform != "tpu":  # (tests/backends/test_device_runtime.py covers it off the chip)
        print("\nroofline: on the TPU only")
        return True
    rows, cols = SIZES[False]["rows"]
    m = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    g = np.ones(cols, np.float32)
    print()
    try:
        with kernels_flag("ember"):
            for make, args in ((_softmax, (m,)), (_layernorm, (m, g, g))):
                ember.explain.profile(make(ember.numpy, ember.lax), *args, backend="tpu")
    except Exception as e:  # (report and go on)
        print(f"roofline FAILED: {_report(e, 300)}")
        return False
    return True


# -- a fresh process reads what an earlier one compiled --------------------------------------

def cache_child(platform: str, quick: bool) -> None:
    """(In a child process.) Call row softmax and a*sin(x)+b with Ember's kernels; print one
    JSON line: XLA (and Mosaic) compiles made, disk-cache hits, seconds to the first result."""
    import json

    import ember
    from ember.backends.xla import Platform, disk_cache

    compiles = []
    real = Platform._compile
    Platform._compile = lambda self, text: compiles.append(1) or real(self, text)
    rows, cols = SIZES[quick]["rows"]
    m = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    t0 = time.perf_counter()
    for make, args in ((_softmax, (m,)), (_axpb, (m, np.float32(2), np.float32(1)))):
        np.asarray(ember.jit(make(ember.numpy, ember.lax), backend=BACKEND[platform])(*args))
    print(json.dumps({"compiles": len(compiles), "hits": disk_cache.STATS["hits"],
                      "seconds": time.perf_counter() - t0}))


def fresh_process_check(platform: str, quick: bool) -> bool:
    """Two processes in turn, one disk cache: the second must compile nothing."""
    import json
    import subprocess
    import tempfile

    print("fresh process (EMBER_TPU_KERNELS=ember: softmax's Mosaic kernel and a*sin(x)+b's):")
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, EMBER_CACHE_DIR=folder, EMBER_TPU_KERNELS="ember")
        cmd = [sys.executable, os.path.abspath(__file__), "--cache-child", "--platform",
               platform] + (["--quick"] if quick else [])
        seen = []
        for which in ("first", "second"):
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
            line = (r.stdout.strip().splitlines() or [""])[-1]
            try:
                seen.append(json.loads(line))
            except ValueError:
                print(f"  {which} process failed: {(r.stderr or r.stdout)[-600:]}")
                return False
            print(f"  {which} process: {seen[-1]['compiles']} XLA/Mosaic compiles, "
                  f"{seen[-1]['hits']} disk-cache hits, first results after "
                  f"{seen[-1]['seconds']:.2f} s")
    ok = seen[1]["compiles"] == 0 and seen[0]["compiles"] > 0
    print(f"  {'ok' if ok else 'FAIL'}: the second process compiled "
          f"{'nothing' if ok else 'again'}")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    global VERBOSE
    args = parse_args(argv)
    VERBOSE = args.verbose
    if args.cache_child:
        cache_child(args.platform, args.quick)
        return 0
    t0 = time.perf_counter()
    only = [s for s in args.only.split(",") if s]
    failed = 0
    if not only or "cache" in only:  # (first: this process must not hold the chip yet)
        failed += not fresh_process_check(args.platform, args.quick)
    if not only or "ops" in only:
        failed += run_op_table(BACKEND[args.platform], args.op_kernels, args.quick)[1]
    h = Harness(args.platform, args.calls, args.repeat)
    ws = [w for w in workloads(args.quick) if not only or any(s in w.name for s in only)]
    rows = run_workloads(h, ws, args.kernels)
    failed += sum(1 for r in rows if "error" in r or not r["agree"])
    if not only or "tiny" in only:
        (e, j), (eq, jq) = tiny_call_us(h, 200 if args.quick else 2000)
        print(f"\ncached tiny call (f32[3], synchronous): ember {e:.1f} us, jax {j:.1f} us")
        print(f"cached tiny call (f32[3], queued through jit): ember {eq:.1f} us, "
              f"jax {jq:.1f} us")
    if not only or "roofline" in only:
        failed += not roofline(args.platform)
    print(f"\n{failed} failures; {time.perf_counter() - t0:.0f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
