"""The fuzzer's command line: `python -m ember.testing.fuzz --minutes N --seed S`.

Input: a time budget, a seed, and optionally `--loops-only`/`--no-loops` and a batch size.
Output: every failing program's source and what went wrong, as they are found, and a last
line `fuzz: P programs run, M mismatches, E errors, C crashes (seed S, T s)`; the exit
status is 1 when anything failed. Invariants: a run is reproducible from its seed (batch b
of seed S draws from `default_rng([S, b])`); a quarter of the general programs run with
x64 on and a quarter of all programs are loop programs (loops.py).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .loops import generate_loop
from .programs import generate
from .runner import report, run_programs


def batch(seed: int, b: int, size: int, loops: str = "mix") -> list[dict]:
    """Batch `b` of the run seeded `seed`: `size` programs as dicts for the runner."""
    rng = np.random.default_rng([seed, b])
    out = []
    for i in range(size):
        pseed = int(rng.integers(2**31))
        if loops == "only" or (loops == "mix" and i % 4 == 3):
            out.append(generate_loop(rng, seed=pseed).to_json())
        else:
            out.append(generate(rng, x64=(i % 4 == 1), seed=pseed).to_json())
    return out


def main(argv: list[str] | None = None) -> int:
    """Run batches until the time is up; print failures and the counts."""
    ap = argparse.ArgumentParser(prog="python -m ember.testing.fuzz", description=__doc__)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=60, help="programs per child process")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--loops-only", action="store_true")
    group.add_argument("--no-loops", action="store_true")
    args = ap.parse_args(argv)
    loops = "only" if args.loops_only else ("none" if args.no_loops else "mix")
    start = time.monotonic()
    counts = {"ok": 0, "mismatch": 0, "error": 0, "crash": 0, "skipped": 0}
    b = 0
    while time.monotonic() - start < args.minutes * 60:
        programs = batch(args.seed, b, args.batch, loops)
        results = run_programs(programs)
        for r in results:
            counts[r.status] += 1
        text = report(programs, results)
        if text:
            print(f"batch {b}:\n{text}\n", flush=True)
        b += 1
    run = sum(counts.values())
    print(f"fuzz: {run} programs run, {counts['mismatch']} mismatches, {counts['error']} "
          f"errors, {counts['crash']} crashes ({counts['skipped']} skipped as invalid; seed "
          f"{args.seed}, {time.monotonic() - start:.0f} s)", flush=True)
    return 1 if counts["mismatch"] or counts["error"] or counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
