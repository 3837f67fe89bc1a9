"""The Array API standard's test suite (data-apis/array-api-tests) against `ember.numpy`.

Input: the suite's copy at `<repo>/../shared/conformance/array-api-tests` (read-only, so it
is copied to a temporary folder first). The suite runs in a child pytest with the command
its README gives (`--max-examples 5 --derandomize --disable-deadline -n 2`) and a JSON
report; this test fails when fewer of its tests pass than `PASSED_FLOOR`, and prints the
suite's summary line at the end of the run (tests/conftest.py's terminal summary).
Where the copy is absent (a user's clone) the test skips, saying why, unless `CI` is set:
CI always runs it. It takes about 4 minutes on 2 idle cores, so locally it runs only where
`../shared` exists.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUITE = ROOT.parent / "shared" / "conformance" / "array-api-tests"

# Measured with the command below (6 December 2026, fourth session, after complex linear
# algebra, cross/sort_complex/einsum_path and the docstring session's fixes: 1185 passed in
# CI's run; 1180-1181 on 5 December, 1149-1159 before native complex code); the floor is JAX
# 0.10.2's own count under the same command (1170, issue 25), a margin of 15 below the
# measurement for tests whose few derandomized examples change with unrelated code.
PASSED_FLOOR = 1170


def test_array_api_suite_passes_at_least_the_floor(tmp_path, record_property):
    if not SUITE.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Array API suite, but {SUITE} is absent")
        pytest.skip(f"the Array API suite's copy ({SUITE}) is absent: a clone outside the "
                    "project's workspace; CI (CI=true) runs it")
    work = tmp_path / "array-api-tests"
    shutil.copytree(SUITE, work, symlinks=True)
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ARRAY_API"))}
    env.update(ARRAY_API_TESTS_MODULE="ember.numpy", EMBER_ENABLE_CHECKS="0",
               PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-n", "2",
           "--max-examples", "5", "--derandomize", "--disable-deadline",
           "-p", "no:cacheprovider", "--json-report", f"--json-report-file={report}",
           "--json-report-omit", "collectors", "log", "traceback", "streams", "keywords"]
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert report.exists(), f"the suite wrote no report:\n{out.stdout[-3000:]}\n" \
                            f"{out.stderr[-3000:]}"
    summary = json.loads(report.read_text())["summary"]
    counts = ", ".join(f"{summary.get(k, 0)} {k}" for k in
                       ("passed", "failed", "skipped", "error") if k in summary)
    line = f"Array API suite against ember.numpy: {counts} (floor: {PASSED_FLOOR} passed)"
    record_property("summary", line)
    print(line)
    assert summary.get("passed", 0) >= PASSED_FLOOR, line + "\n" + out.stdout[-3000:]
