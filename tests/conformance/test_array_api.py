"""The Array API standard's test suite (data-apis/array-api-tests) against `ember.numpy`.

Input: the suite's copy at `<repo>/../shared/conformance/array-api-tests` (read-only, so it
is copied to a temporary folder first). The suite runs in a child pytest with the command
its README gives (`--max-examples 5 --derandomize --disable-deadline -n 2`) and a JSON
report; this test fails when fewer of its tests pass than `PASSED_FLOOR`, and prints the
suite's summary line at the end of the run (tests/conftest.py's terminal summary).
Where the copy is absent (a user's clone) the test skips, saying why, unless `CI` is set:
CI always runs it. It takes about 4 minutes on 2 idle cores, so locally it runs only where
`../shared` exists.
Skips: only the suite's own (tests of a later standard version than the one it checks,
tests its authors mark flaky) and `SKIPS`, Ember's list of tests of what the standard marks
optional and Ember does not offer, each with its reason (handed to the suite's
`--skips-file`). Any other skip (a function or extension "not found in array module", a
signature the suite could not check) fails the test, naming the tests and reasons.
"""

from __future__ import annotations

import ast
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

# Ember's skip list: node id (or prefix) of a test of something the standard marks optional
# that Ember does not offer -> why. Empty: Ember offers both optional extensions the suite
# tests (`linalg`, `fft`), so no test is skipped on Ember's behalf (measured 6 December 2026:
# the suite's 14 skips are all its own: 9 for its 2025.12 version, 5 marked flaky).
SKIPS: dict[str, str] = {}
# the reasons of the suite's own skips, which say nothing about Ember
SUITE_SKIP_REASONS = ("requires ARRAY_API_TESTS_VERSION >=", "flaky")
SKIPS_FILE_REASON = "--skips-file"


def skip_reasons(report: dict) -> dict[str, str]:
    """node id -> reason of every skipped test in a pytest-json-report report."""
    out = {}
    for test in report.get("tests", []):
        if test.get("outcome") != "skipped":
            continue
        longrepr = next((test[stage].get("longrepr", "") for stage in ("setup", "call")
                         if isinstance(test.get(stage), dict)
                         and test[stage].get("outcome") == "skipped"), "")
        # "('file', line, 'Skipped: reason')", after a line naming the worker under xdist
        last = str(longrepr).strip().splitlines()[-1] if longrepr else ""
        try:
            reason = str(ast.literal_eval(last)[2])
        except (ValueError, SyntaxError, IndexError, TypeError):
            reason = str(longrepr)
        out[test["nodeid"]] = reason.removeprefix("Skipped: ")
    return out


def unexpected_skips(reasons: dict[str, str]) -> dict[str, str]:
    """The skips neither the suite's own nor Ember's list (SKIPS, through --skips-file)."""
    return {node: why for node, why in reasons.items()
            if not why.startswith(SUITE_SKIP_REASONS + (SKIPS_FILE_REASON,))}


def test_only_the_suites_own_and_listed_skips_are_accepted():
    """The skip check of the suite's run, on a report shaped as the suite writes it."""
    def skipped(node: str, why: str) -> dict:
        return {"nodeid": node, "outcome": "skipped",
                "setup": {"outcome": "skipped",
                          "longrepr": repr(("/w/array_api_tests/t.py", 3, f"Skipped: {why}"))}}

    worker = skipped("g::test_worker", "flaky")  # as pytest-xdist's workers report it
    worker["setup"]["longrepr"] = "[gw0] linux -- Python 3.11\n" + worker["setup"]["longrepr"]
    report = {"tests": [
        worker,
        skipped("a::test_isin", "requires ARRAY_API_TESTS_VERSION >= 2025.12"),
        skipped("b::test_flaky", "flaky"),
        skipped("c::test_listed", "--skips-file (/tmp/x/skips.txt)"),
        skipped("d::test_det", "linalg not found in array module"),
        skipped("e::test_sig", "no argument x"),
        {"nodeid": "f::test_ok", "outcome": "passed"}]}
    reasons = skip_reasons(report)
    assert reasons["a::test_isin"] == "requires ARRAY_API_TESTS_VERSION >= 2025.12"
    assert reasons["g::test_worker"] == "flaky"
    assert set(reasons) == {"a::test_isin", "b::test_flaky", "c::test_listed",
                            "d::test_det", "e::test_sig", "g::test_worker"}
    assert unexpected_skips(reasons) == {"d::test_det": "linalg not found in array module",
                                         "e::test_sig": "no argument x"}
    assert all(why.strip() for why in SKIPS.values())  # every entry says why


def test_array_api_suite_passes_at_least_the_floor(tmp_path, record_property):
    if not SUITE.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Array API suite, but {SUITE} is absent")
        pytest.skip(f"the Array API suite's copy ({SUITE}) is absent: a clone outside the "
                    "project's workspace; CI (CI=true) runs it")
    work = tmp_path / "array-api-tests"
    shutil.copytree(SUITE, work, symlinks=True)
    report = tmp_path / "report.json"
    skips = tmp_path / "skips.txt"  # (the suite's format: one node id a line, # comments)
    skips.write_text("".join(f"# {why}\n{node}\n" for node, why in SKIPS.items()))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ARRAY_API"))}
    env.update(ARRAY_API_TESTS_MODULE="ember.numpy", EMBER_ENABLE_CHECKS="0",
               PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-n", "2",
           "--max-examples", "5", "--derandomize", "--disable-deadline",
           "-p", "no:cacheprovider", "--json-report", f"--json-report-file={report}",
           f"--skips-file={skips}",
           "--json-report-omit", "collectors", "log", "traceback", "streams", "keywords"]
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert report.exists(), f"the suite wrote no report:\n{out.stdout[-3000:]}\n" \
                            f"{out.stderr[-3000:]}"
    full = json.loads(report.read_text())
    summary = full["summary"]
    counts = ", ".join(f"{summary.get(k, 0)} {k}" for k in
                       ("passed", "failed", "skipped", "error") if k in summary)
    line = f"Array API suite against ember.numpy: {counts} (floor: {PASSED_FLOOR} passed)"
    record_property("summary", line)
    print(line)
    assert summary.get("passed", 0) >= PASSED_FLOOR, line + "\n" + out.stdout[-3000:]
    odd = unexpected_skips(skip_reasons(full))
    assert not odd, ("skipped neither by the suite itself nor by SKIPS:\n"
                     + "\n".join(f"{node}: {why}" for node, why in sorted(odd.items())))
