"""The fuzzer: random HLO programs compiled by the CPU backend in a child process and
compared with the interpreter. A crash of the child (an LLVM abort or a segfault, which no
Python exception can report) fails the test and shows the program it was compiling, as
HLO text, so it can be replayed with `parse_module`.

Programs: a random chain over f32/f64 matrices of random shape built from elementwise ops,
selects, reductions over either axis (row and column) broadcast back and recombined
(softmax-like and variance-like shapes, which row fusion takes), reductions with one value
per row, reverses and slice + concatenate pairs; the last three full-shape values and the
last row value are the outputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from ember.hlo import Builder, Shape, print_module

CHILD = r"""
import json, sys
import numpy as np
from ember.backends import cpu
from ember.hlo.evaluator import evaluate
from ember.hlo import parse_module

for i, case in enumerate(json.load(open(sys.argv[1]))):
    print("START", i, flush=True)
    m = parse_module(case["hlo"])
    rng = np.random.default_rng(case["seed"])
    dt = np.float32 if case["et"] == "f32" else np.float64
    args = [rng.standard_normal(case["dims"]).astype(dt) for _ in range(2)]
    with np.errstate(all="ignore"):
        got = cpu.compile(m)(*args)
        want = evaluate(m, *args)
    bad = []
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        tol = (2e-4 if dt == np.float32 else 1e-9) * (1 + np.abs(w))
        same = (np.isnan(g) == np.isnan(w)) & ((np.abs(g - w) <= tol) | (g == w)
                                               | np.isnan(w))
        if g.shape != w.shape or not same.all():
            bad.append(k)
    print("DONE", i, json.dumps(bad), flush=True)
"""

UNARY = ["negate", "abs", "tanh", "sine", "exponential", "floor"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


def _program(rng: np.random.Generator, et: str) -> tuple[object, tuple[int, int]]:
    rows, cols = int(rng.integers(1, 24)), int(rng.integers(2, 70))
    b = Builder("fuzz")
    shape = Shape(et, (rows, cols))
    vals = [b.parameter(shape), b.parameter(shape)]
    row_outs = []  # values with one value per row: outputs only

    def pick():
        return vals[int(rng.integers(len(vals)))]

    def reduce(x, axis: int, how: str):
        init = {"add": 0.0, "maximum": -np.inf, "minimum": np.inf}[how]
        return b.reduce(x, b.scalar(init, et), (axis,), Builder.scalar_computation(how, et))

    for _ in range(int(rng.integers(2, 9))):
        kind = rng.choice(["u", "b", "row", "col", "per_row", "sel", "rev", "cat"])
        x, y = pick(), pick()
        if kind == "u":
            v = b.unary(str(rng.choice(UNARY)), x)
        elif kind == "b":
            v = b.binary(str(rng.choice(BINARY)), x, y)
        elif kind in ("row", "col"):  # reduce, broadcast back, recombine
            axis = 1 if kind == "row" else 0
            r = reduce(x, axis, str(rng.choice(["add", "maximum", "minimum"])))
            back = b.broadcast(r, (rows, cols), (1 - axis,))
            v = b.binary(str(rng.choice(["subtract", "multiply", "add"])), y, back)
        elif kind == "per_row":  # a dependent reduction with one value per row
            m = b.broadcast(reduce(x, 1, "add"), (rows, cols), (0,))
            d = b.subtract(x, m)
            s = reduce(b.multiply(d, d), 1, "add")
            v = b.broadcast(s, (rows, cols), (0,)) if rng.integers(2) else None
            if v is None:
                row_outs.append(s)  # a row value as an output (no full-shape successor)
                continue
        elif kind == "sel":
            v = b.select(b.compare(x, y, "LT"), x, y)
        elif kind == "rev":
            v = b.reverse(x, (int(rng.integers(2)),))
        else:
            k = int(rng.integers(1, cols))
            v = b.concatenate([b.slice(x, (0, k), (rows, cols)),
                               b.slice(x, (0, 0), (rows, k))], 1)
        vals.append(v)
    return b.build(b.tuple(vals[-3:] + row_outs[-1:])), (rows, cols)


def test_random_programs_compile_in_a_child_and_match_the_interpreter(tmp_path):
    rng = np.random.default_rng(2026)
    cases = []
    for i in range(36):
        et = "f32" if i % 3 else "f64"
        m, dims = _program(rng, et)
        cases.append({"hlo": print_module(m), "et": et, "dims": list(dims), "seed": i})
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    env = dict(os.environ, EMBER_ENABLE_CHECKS="0", EMBER_CACHE_DIR="off")
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env,
                         capture_output=True, text=True, timeout=600)
    started = [int(line.split()[1]) for line in out.stdout.splitlines()
               if line.startswith("START")]
    done = {int(line.split()[1]): json.loads(line.split(None, 2)[2])
            for line in out.stdout.splitlines() if line.startswith("DONE")}
    if out.returncode != 0:
        crashed = next((i for i in started if i not in done), None)
        program = cases[crashed]["hlo"] if crashed is not None else "(none started)"
        raise AssertionError(f"the child exited with {out.returncode} while compiling or "
                             f"running program {crashed}:\n{program}\n{out.stderr[-3000:]}")
    mismatched = {i: bad for i, bad in done.items() if bad}
    assert len(done) == len(cases)
    assert not mismatched, "\n\n".join(
        f"program {i}, outputs {bad}:\n{cases[i]['hlo']}" for i, bad in mismatched.items())
