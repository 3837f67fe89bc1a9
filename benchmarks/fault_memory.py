"""Memory under long runs: many compiled shapes, many calls (issue 24, item 6).

    .venv/bin/python benchmarks/fault_memory.py                 # 2000 shapes, 10^6 calls
    .venv/bin/python benchmarks/fault_memory.py --shapes 500 --calls 100000
    .venv/bin/python benchmarks/fault_memory.py --jax           # JAX's growth as a peer

Each measurement runs in a child process of its own (disk cache off, so every shape is
compiled), so one does not inherit another's memory. Printed: resident-set growth, malloc's
in-use bytes (glibc's mallinfo2) and Python's allocated blocks, in total and per shape or
per call (ember/testing/memory.py says what each catches).

- shapes: one small jitted function (`x * 2 + 1`) called once on each of N distinct
  shapes. Ember keeps at most EMBER_JIT_CACHE_SIZE (default 512) signatures compiled
  across all jitted functions (ember/live_signatures.py), so the resident set grows by
  ~85 KB a shape up to the bound, then stays flat; the "after the bound" column is the
  growth per shape past it.
- calls: one small jitted function called N times on the fast path (Ember arrays in),
  then N/10 times with NumPy arguments and N/100 times with a Python scalar (the general
  path); the growth per call should be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

SHAPES = """
import json, sys, time
import numpy as np
N, JAX = int(sys.argv[1]), sys.argv[2] == "jax"
if JAX:
    import jax as ember
else:
    import ember
from ember.testing.memory import growth, snapshot
f = ember.jit(lambda x: x * 2.0 + 1.0)
f(np.ones(1, np.float32))
base = snapshot()
marks = []
t0 = time.perf_counter()
for n in range(2, N + 2):
    assert float(f(np.full(n, 3.0, np.float32))[n - 1]) == 7.0
    if (n - 1) % max(1, N // 8) == 0 or n == N + 1:
        marks.append([n - 1, growth(base, snapshot())])
live = limit = None
if not JAX:
    from ember import live_signatures
    live, limit = live_signatures.live(), live_signatures.limit()
print(json.dumps({"marks": marks, "seconds": time.perf_counter() - t0, "live": live,
                  "limit": limit}))
"""

CALLS = """
import json, sys, time
import numpy as np
N, JAX = int(sys.argv[1]), sys.argv[2] == "jax"
if JAX:
    import jax as ember
    import jax.numpy as jnp
else:
    import ember
    import ember.numpy as jnp
from ember.testing.memory import growth, snapshot
f = ember.jit(lambda x, y: x * y + 1.0)
x = jnp.arange(16, dtype=jnp.float32)
xn = np.arange(16, dtype=np.float32)
out = {}
for name, n, call in [("arrays", N, lambda: f(x, x)), ("numpy", N // 10, lambda: f(xn, xn)),
                      ("scalar", N // 100, lambda: f(x, 2.0))]:
    for _ in range(min(n, 2000)):
        call()
    before = snapshot()
    t0 = time.perf_counter()
    for _ in range(n):
        y = call()
    seconds = time.perf_counter() - t0
    out[name] = {"n": n, "us": seconds / n * 1e6, **growth(before, snapshot())}
    assert float(np.asarray(y)[3]) in (10.0, 7.0)
print(json.dumps(out))
"""


def child(program: str, n: int, who: str) -> dict:
    env = dict(os.environ, EMBER_CACHE_DIR="off", EMBER_ENABLE_CHECKS="0",
               JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", program, str(n), who], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{who} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def kb(x: float) -> str:
    return f"{x / 1024:9.1f}"


def report_shapes(who: str, got: dict, n: int) -> None:
    marks = got["marks"]
    print(f"\n{who}: {n} distinct shapes of one jitted function "
          f"({got['seconds']:.1f} s; live signatures at the end: {got['live']})")
    print(f"{'shapes':>8} {'RSS MB':>9} {'malloc MB':>10} {'blocks':>9}")
    for k, g in marks:
        print(f"{k:8d} {g['rss'] / 2**20:9.1f} {g['malloc'] / 2**20:10.1f} {g['blocks']:9d}")
    last_k, last = marks[-1]
    print(f"per shape, overall: {kb(last['rss'] / last_k)} KB resident, "
          f"{kb(last['malloc'] / last_k)} KB malloc")
    bound = got.get("limit")
    past = [m for m in marks if bound is not None and m[0] >= bound + 50]
    if len(past) >= 2:
        (k0, g0), (k1, g1) = past[0], past[-1]
        print(f"per shape past the bound of {bound} live signatures (shapes {k0}-{k1}): "
              f"{kb((g1['rss'] - g0['rss']) / (k1 - k0))} KB resident, "
              f"{kb((g1['malloc'] - g0['malloc']) / (k1 - k0))} KB malloc")


def report_calls(who: str, got: dict) -> None:
    print(f"\n{who}: repeated calls of one small jitted function")
    print(f"{'path':>8} {'calls':>9} {'us/call':>8} {'RSS B/call':>11} {'malloc B/call':>14} "
          f"{'blocks/call':>12}")
    for name, g in got.items():
        n = g["n"]
        print(f"{name:>8} {n:9d} {g['us']:8.2f} {g['rss'] / n:11.3f} {g['malloc'] / n:14.3f} "
              f"{g['blocks'] / n:12.5f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--jax", action="store_true", help="also measure jax.jit (a peer)")
    args = ap.parse_args()
    peers = ["ember"] + (["jax"] if args.jax else [])
    for who in peers:
        report_shapes(who, child(SHAPES, args.shapes, who), args.shapes)
    for who in peers:
        report_calls(who, child(CALLS, args.calls, who))


if __name__ == "__main__":
    main()
