"""The differential fuzzer's seeded runs (ember/testing): random user-level programs and
random loop programs, each run eagerly, under jit, on the interpreter backend and in NumPy,
in child processes; zero mismatches, errors and crashes. A failure message prints every
failing program's source. The last test checks that the harness itself catches a wrong
answer and a crashing child (so the seeded runs cannot pass vacuously).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from ember.testing.fuzz import batch
from ember.testing.programs import Program
from ember.testing.runner import report, run_programs


def _check(programs: list[dict]) -> None:
    results = run_programs(programs)
    statuses = [r.status for r in results]
    assert statuses.count("skipped") <= len(programs) // 20, report(programs, results)
    bad = [r for r in results if r.status not in ("ok", "skipped")]
    assert not bad, f"{len(bad)} of {len(programs)} programs failed:\n" + report(programs,
                                                                                  results)


def test_seeded_random_programs():
    # 240 programs (a quarter with x64 on): elementwise math, broadcasting, reductions,
    # reshapes, slicing, .at[] with traced indices, control flow, ...
    _check(batch(2026, 0, 240, loops="none"))


def test_seeded_random_loop_programs():
    # Nested fori_loop/while_loop/scan with .at[] updates of rows, columns, elements and
    # slices of several same-shaped carries (the family that found the loop emitter's
    # `Slot` KeyError).
    _check(batch(2026, 0, 90, loops="only"))


def test_the_harness_reports_wrong_answers_and_crashes():
    src = "def f(a0, k):\n    return (jnp.sin(a0) * 2,)"
    good = Program(src, src.replace("jnp.", "np."), [([3, 2], "float32")], 1, False, True)
    wrong = Program(src, src.replace("jnp.sin", "np.cos"), good.inputs, 1, False, True)
    crash = Program("def f(a0, k):\n    import os\n    os.abort()",
                    "def f(a0, k):\n    return (a0,)", good.inputs, 1, False, True)
    programs = [p.to_json() for p in (good, wrong, crash, good)]
    results = run_programs(programs)
    assert [r.status for r in results] == ["ok", "mismatch", "crash", "ok"]
    text = report(programs, results)
    assert "os.abort()" in text and "jnp.sin(a0) * 2" in text
    assert np.all([r.index == i for i, r in enumerate(results)])


def test_the_command_line_prints_its_counts_last():
    out = subprocess.run([sys.executable, "-m", "ember.testing.fuzz", "--minutes", "0.001",
                          "--seed", "3", "--batch", "4"], capture_output=True, text=True,
                         timeout=600)
    last = out.stdout.strip().splitlines()[-1]
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert last.startswith("fuzz: 4 programs run, 0 mismatches, 0 errors, 0 crashes"), last
