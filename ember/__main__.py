"""`python -m ember`: the command line (`demo`, `explain`, `--help`).

Input: command-line arguments. Output:
- `demo` prints the fusion example's source, its jaxpr (on three f32[3] arrays, the text
  JAX 0.10.2 prints), runs it jitted on random f32 arrays of `--size` elements, checks the
  result against NumPy and prints the max abs error and the median time of a jitted call vs
  NumPy, then tells the example's whole story (`explain` below) and writes its fusion
  diagrams to `--out` (default: a fresh temporary directory, printed).
- `explain path/to/file.py:function --args "f32[1000000], f32[1000000]"` prints the story
  of that function on random arguments of those types (`ember/explain/report.py`: jaxpr,
  HLO before, the passes that changed it with diffs, HLO after, fusion decisions, kernels
  with their cost and time, jit vs eager timing) and writes its drawings to `--out`
  (default `./ember_explain`).
Timings are informative only (shared machines are noisy; nothing is asserted on them).
Invariant: the exit status is 0 only if the jitted result matches NumPy within tolerance
(demo) or the story was told (explain); 1 otherwise, 2 on a usage error, as argparse does.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import textwrap
import time
from collections.abc import Callable, Sequence

import numpy as np

import ember.numpy as jnp


def f(x, a, b):
    y = jnp.sin(x)
    z = a * y
    return z + b


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def demo(size: int, repeats: int, seed: int, out: str | None = None,
         story: bool = True) -> int:
    import ember

    print("The fusion example:\n")
    print(textwrap.indent(inspect.getsource(f), "    "))
    small = [np.zeros(3, np.float32)] * 3
    print("Its jaxpr (ember.make_jaxpr on three f32[3] arrays):\n")
    print(textwrap.indent(str(ember.make_jaxpr(f)(*small)), "    "))

    rng = np.random.default_rng(seed)
    x, a, b = (rng.standard_normal(size).astype(np.float32) for _ in range(3))
    jitted = ember.jit(f)
    got = np.asarray(jitted(x, a, b).block_until_ready())
    want = np.sin(x) * a + b
    # f32 sin is accurate to a few ulp; |a*sin(x)+b| is O(1) for normal inputs.
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if size else 0.0
    ok = got.shape == want.shape and got.dtype == want.dtype and err <= 1e-5
    print(f"\nRan jit(f) on three random f32[{size}] arrays.")
    print(f"max |jit - numpy| = {err:.3g}  ({'OK' if ok else 'MISMATCH'})")

    t_jit = _median_ms(lambda: jitted(x, a, b).block_until_ready(), repeats)
    t_np = _median_ms(lambda: np.sin(x) * a + b, repeats)
    print(f"median of {repeats} runs: jit {t_jit:.2f} ms, NumPy {t_np:.2f} ms "
          f"(ratio {t_jit / t_np if t_np else float('nan'):.2f}; informative only)")
    if not ok:
        print("error: the jitted result disagrees with NumPy", file=sys.stderr)
        return 1
    if story:
        import tempfile

        from ember.explain.report import tell

        out = out or tempfile.mkdtemp(prefix="ember_explain_")
        print(f"\nWhat the compiler did with it, step by step (diagrams go to {out}):")
        tell(f, x, a, b, out_dir=out)
    return 0


def explain(target: str, arg_specs: str, out: str, seed: int) -> int:
    from ember.explain.loading import example_arrays, load_function, parse_arg_specs
    from ember.explain.report import tell

    try:
        fn = load_function(target)
        specs = parse_arg_specs(arg_specs)
    except (ValueError, OSError, ImportError, AttributeError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    tell(fn, *example_arrays(specs, seed), out_dir=out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ember",
        description="Ember: a JAX-style tracing JIT compiler for NumPy programs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    d = sub.add_parser("demo", help="trace, print and run the fusion example "
                                    "sin(x)*a+b, checked against NumPy")
    d.add_argument("--size", type=int, default=1_000_000,
                   help="elements per input array (default 1e6)")
    d.add_argument("--repeats", type=int, default=7, help="timed runs (default 7)")
    d.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    d.add_argument("--out", default=None,
                   help="directory for the fusion diagrams (default: a new temporary one)")
    d.add_argument("--no-story", action="store_true",
                   help="skip the compiler's story (jaxpr to kernels, timings, diagrams)")
    e = sub.add_parser("explain", help="print what the compiler does with a function: "
                                       "jaxpr, HLO, passes, fusion decisions, kernels, "
                                       "timings, diagrams")
    e.add_argument("target", help="path/to/file.py:function")
    e.add_argument("--args", required=True, dest="arg_specs",
                   help='argument types, e.g. "f32[1000000], f32[1000000], i32[]"')
    e.add_argument("--out", default="ember_explain",
                   help="directory for the drawings (default ./ember_explain)")
    e.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.size < 0 or args.repeats < 1:
            parser.error("--size must be >= 0 and --repeats >= 1")
        return demo(args.size, args.repeats, args.seed, args.out, not args.no_story)
    if args.command == "explain":
        return explain(args.target, args.arg_specs, args.out, args.seed)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
