"""Runs generated programs in child processes and compares every way of running them.

Input: `Program`s (programs.py, loops.py). Output: one `Result` per program: "ok",
"mismatch" (which run disagreed, on which output, how), "error" (a Python exception from
Ember where NumPy gave an answer, with its traceback) or "crash" (the child died: an LLVM
abort or a segfault; the program's source is in the result, and the next child goes on
with the programs after it).

Each program runs eagerly, under `jit` (the default backend) and under
`jit(f, backend="interpreter")`; its NumPy twin gives the reference. Comparison rules:
- Every run's outputs have the twin's shapes and dtypes (JAX's dtype rules).
- Booleans and integers are equal exactly, in every run.
- Floats: eager, jit and interpreter agree bit for bit (all NaNs one) unless the program
  sums, multiplies, averages, dots or accumulates floats (order may differ: then within a
  tolerance); against NumPy within `RTOL[dtype]` of the output's largest finite magnitude
  (at least 1), NaN where NumPy has NaN, infinities equal.
The child is `python -m ember.testing.runner cases.json`; one child runs many programs
(compiles dominate, not process starts), x64 and non-x64 programs in separate children.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import traceback
from typing import Any

import numpy as np

from ember.config import child_environment
from ember.core import dtypes

RTOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-9}


@dataclasses.dataclass
class Result:
    """What happened to one program."""

    index: int
    status: str  # ok | mismatch | error | crash
    detail: str = ""


def make_inputs(inputs: list, seed: int) -> list[np.ndarray]:
    """The program's input values (edge values mixed in) and the scalar index `k`."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in inputs:
        shape = tuple(shape)
        if dtype == "bool":
            a = rng.random(shape) < 0.5
        elif dtype.startswith("float"):
            a = rng.standard_normal(shape) * float(rng.choice([1.0, 4.0]))
            specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5]
        else:
            info = np.iinfo(dtype)
            lo = 0 if info.min == 0 else -50
            a = rng.integers(lo, 50, shape)
            specials = [info.min, info.max, 0, 1, info.max // 2 + 1]
            if info.min < 0:
                specials.append(-1)
        if dtype != "bool" and a.size and rng.random() < 0.4:
            flat = a.reshape(-1).astype(np.float64 if dtype.startswith("float") else object)
            for j in rng.choice(a.size, min(a.size, 3), replace=False):
                flat[j] = specials[int(rng.integers(len(specials)))]
            a = flat.reshape(shape)
        out.append(np.asarray(a).astype(dtype))
    out.append(np.int32(rng.integers(0, 1000)))
    return out


def _close(g: np.ndarray, w: np.ndarray, dtype: str, exact: bool) -> str:
    """'' when `g` matches `w` under the rules above, else why not."""
    if dtypes.kind(np.dtype(dtype)) != "f":
        return "" if np.array_equal(g, w) else "values differ"
    g64, w64 = g.astype(np.float64), w.astype(np.float64)
    gn, wn = np.isnan(g64), np.isnan(w64)
    if exact:
        same = (gn & wn) | (g.view(f"u{g.itemsize}") == w.view(f"u{w.itemsize}"))
        return "" if same.all() else "bits differ"
    fin = np.isfinite(w64)
    scale = max(1.0, float(np.abs(w64[fin]).max()) if fin.any() else 1.0)
    with np.errstate(all="ignore"):
        ok = (gn & wn) | (g64 == w64) | (np.abs(g64 - w64) <= RTOL[dtype] * scale)
    return "" if ok.all() else "values differ beyond tolerance"


def compare(name: str, got: Any, want: list[np.ndarray], exact: bool) -> str:
    """'' when run `name`'s outputs match the reference, else a description."""
    got = list(got)
    if len(got) != len(want):
        return f"{name}: {len(got)} outputs, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return (f"{name}: output {i} is {g.dtype}{list(g.shape)}, expected "
                    f"{w.dtype}{list(w.shape)}")
        why = _close(g, w, str(w.dtype), exact)
        if why:
            return f"{name}: output {i}: {why}\n  got      {g!r}\n  expected {w!r}"
    return ""


def run_one(case: dict) -> tuple[str, str]:
    """Run one program every way and compare: (status, detail)."""
    import ember
    import ember.lax as lax
    import ember.numpy as jnp

    from . import twin

    args = make_inputs(case["inputs"], case["seed"])
    ns: dict[str, Any] = {"np": np, "_h": twin}
    exec(compile(case["twin"], "<twin>", "exec"), ns)
    try:
        with np.errstate(all="ignore"):
            want = [np.asarray(w) for w in ns["f"](*[np.copy(a) for a in args])]
    except Exception:  # the generator wrote a program NumPy rejects: not Ember's defect
        return "skipped", traceback.format_exc(limit=3)
    es: dict[str, Any] = {"jnp": jnp, "lax": lax, "ember": ember}
    exec(compile(case["source"], "<program>", "exec"), es)
    f = es["f"]
    eargs = [jnp.asarray(a) for a in args]
    runs: dict[str, Any] = {}
    try:
        runs["eager"] = [np.asarray(v) for v in f(*eargs)]
        runs["jit"] = [np.asarray(v) for v in ember.jit(f)(*eargs)]
        runs["interpreter"] = [np.asarray(v) for v in
                               ember.jit(f, backend="interpreter")(*eargs)]
    except Exception:
        done = ", ".join(runs) or "none"
        return "error", f"(runs that finished: {done})\n" + traceback.format_exc(limit=8)
    for name, got in runs.items():
        why = compare(name, got, want, exact=False)
        if why:
            return "mismatch", f"against NumPy: {why}"
    ref = runs["interpreter"]
    for name in ("eager", "jit"):
        why = compare(name, runs[name], ref, exact=case["exact"])
        if why:
            return "mismatch", f"against the interpreter: {why}"
    return "ok", ""


def _child(path: str) -> None:
    """The child's loop: START/DONE lines around every program."""
    cases = json.load(open(path))
    for i, case in enumerate(cases):
        print("START", i, flush=True)
        try:
            status, detail = run_one(case)
        except Exception:
            status, detail = "error", traceback.format_exc(limit=8)
        print("DONE", i, json.dumps([status, detail]), flush=True)


def run_programs(programs: list, timeout: float = 600.0) -> list[Result]:
    """Run `programs` (dicts from `Program.to_json`) in child processes; one Result each."""
    results: dict[int, Result] = {}
    for x64 in (False, True):
        idx = [i for i, p in enumerate(programs) if bool(p["x64"]) == x64]
        while idx:
            done = _run_batch(programs, idx, x64, timeout)
            for r in done:
                results[r.index] = r
            idx = [i for i in idx if i not in results]
    return [results[i] for i in range(len(programs))]


def _run_batch(programs: list, idx: list[int], x64: bool, timeout: float) -> list[Result]:
    """One child over programs `idx`; on a crash, the results up to and with the crash."""
    with tempfile.TemporaryDirectory(prefix="ember-fuzz-") as tmp:
        path = os.path.join(tmp, "cases.json")
        with open(path, "w") as fh:
            json.dump([programs[i] for i in idx], fh)
        env = child_environment(EMBER_ENABLE_CHECKS="0", EMBER_CACHE_DIR="off",
                                JAX_ENABLE_X64="1" if x64 else "0")
        try:
            out = subprocess.run([sys.executable, "-m", "ember.testing.runner", path],
                                 env=env, capture_output=True, text=True, timeout=timeout)
            stdout, stderr, rc = out.stdout, out.stderr, out.returncode
        except subprocess.TimeoutExpired as e:
            stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            rc = "timeout"
    results, started = [], []
    for line in stdout.splitlines():
        if line.startswith("START "):
            started.append(int(line.split()[1]))
        elif line.startswith("DONE "):
            _, j, rest = line.split(" ", 2)
            status, detail = json.loads(rest)
            results.append(Result(idx[int(j)], status, detail))
    finished = {r.index for r in results}
    lost = [j for j in started if idx[j] not in finished]
    if lost:
        results.append(Result(idx[lost[0]], "crash",
                              f"the child exited with {rc}:\n{stderr[-3000:]}"))
    elif len(results) < len(idx):  # died before starting the next program
        results.append(Result(idx[len(results)], "crash",
                              f"the child exited with {rc} between programs:\n{stderr[-3000:]}"))
    return results


def report(programs: list, results: list[Result]) -> str:
    """The failures, each with its program's source."""
    parts = []
    for r in results:
        if r.status in ("ok", "skipped"):
            continue
        p = programs[r.index]
        parts.append(f"--- program {r.index} ({r.status}; x64={p['x64']}, inputs "
                     f"{p['inputs']}, seed {p['seed']}):\n{p['source']}\n{r.detail}")
    return "\n\n".join(parts)


if __name__ == "__main__":
    _child(sys.argv[1])
