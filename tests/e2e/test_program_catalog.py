"""The whole programs of benchmarks/programs.py (benchmarks/program_catalog.py) at small
sizes: each compiled by `ember.jit` and run against the same program on NumPy (Python
loops). A program that fails to trace, compile or agree here would stop the benchmark."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))

import program_catalog  # noqa: E402

PROGRAMS = {p.name: p for p in program_catalog.catalog(small=True)}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_agrees_with_numpy(name: str, x64) -> None:
    p = PROGRAMS[name]
    ember_ns, numpy_ns = program_catalog.namespace("ember"), program_catalog.namespace("numpy")
    got = ember_ns.jit(lambda *a: p.fn(ember_ns, *a))(*p.args)
    want = p.fn(numpy_ns, *p.args)
    program_catalog.compare(name, got, want, p.rtol)


def test_the_catalog_has_the_issues_programs() -> None:
    """Issue 26, item 7: at least 20 programs, names unique at both sizes."""
    big = [p.name for p in program_catalog.catalog()]
    assert len(big) >= 20 and len(set(big)) == len(big) and list(PROGRAMS) == big
