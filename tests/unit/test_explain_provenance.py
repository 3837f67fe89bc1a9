"""Source lines after a compile-cache hit from another function (ember/explain/provenance.py,
ember/compiler.py): two functions with the same name and the same body at different lines
share one executable, yet each one's optimized HLO, kernels and EMBER_DEBUG log name its own
lines."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends.cpu import optimize
from ember.explain.provenance import carries_metadata_of, locations


def first_twin():
    def twin(x):
        return jnp.sin(x) * 2.0 + x

    return twin


def second_twin():
    def twin(x):
        return jnp.sin(x) * 2.0 + x

    return twin


def _line(factory) -> int:
    src, start = inspect.getsourcelines(factory)
    return start + next(k for k, s in enumerate(src) if "jnp.sin" in s)


@pytest.fixture(params=["cpu", "interpreter"])
def backend(request, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", request.param)
    monkeypatch.delenv("EMBER_DUMP_TO", raising=False)  # dumping bypasses the cache
    return request.param


@pytest.mark.parametrize("n", [1, 7, 33])
def test_as_text_debug_info_names_its_own_line(backend, n):
    x = np.linspace(-1, 1, n, dtype=np.float32)
    a = ember.jit(first_twin()).lower(x).compile()
    b = ember.jit(second_twin()).lower(x).compile()
    la, lb = _line(first_twin), _line(second_twin)
    ta, tb = a.as_text(debug_info=True), b.as_text(debug_info=True)
    assert f"source_line={la}" in ta and f"source_line={lb}" not in ta
    assert f"source_line={lb}" in tb and f"source_line={la}" not in tb, tb
    # the same program all the same: identical text once the metadata is left out
    assert a.as_text() == b.as_text()
    want = np.sin(x) * np.float32(2) + x
    for c in (a, b):
        np.testing.assert_allclose(np.asarray(c(x)), want, rtol=1e-6)


def test_twins_share_one_executable_on_cpu(monkeypatch):
    from ember.backends.cpu.compiler import STATS

    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    monkeypatch.delenv("EMBER_DUMP_TO", raising=False)
    x = np.arange(5, dtype=np.float32)
    a = ember.jit(first_twin()).lower(x).compile()
    compiles = STATS["compiles"]
    b = ember.jit(second_twin()).lower(x).compile()
    assert STATS["compiles"] == compiles  # a cache hit: no new code
    assert a._compiled.optimized is not b._compiled.optimized


def test_kernels_name_their_own_source_lines(backend):
    x = np.ones(9, np.float32)
    ember.jit(first_twin()).lower(x).compile().kernels()
    kernels = ember.jit(second_twin()).lower(x).compile().kernels()
    lines = {(s.file, s.line) for k in kernels for s in k.source_lines}
    assert lines == {(__file__, _line(second_twin))}


def test_debug_log_names_its_own_lines(monkeypatch, capfd):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    monkeypatch.delenv("EMBER_DUMP_TO", raising=False)
    x = np.ones(6, np.float32)
    ember.jit(first_twin())(x)
    capfd.readouterr()
    monkeypatch.setenv("EMBER_DEBUG", "3")
    ember.jit(second_twin())(x)
    err = capfd.readouterr().err
    assert "cache: in-memory hit" in err
    assert f"test_explain_provenance.py:{_line(second_twin)}" in err
    assert f"test_explain_provenance.py:{_line(first_twin)}" not in err


def test_carries_metadata_of():
    x = np.ones(4, np.float32)
    la = ember.jit(first_twin()).lower(x)._lowered.module
    lb = ember.jit(second_twin()).lower(x)._lowered.module
    oa = optimize(la)
    assert carries_metadata_of(oa, la)
    assert not carries_metadata_of(oa, lb)
    assert {loc[2] for loc in locations(oa)} == {_line(first_twin)}
    # another name: not this function's module either
    other = ember.jit(lambda x: jnp.sin(x) * 2.0 + x).lower(x)._lowered.module
    assert not carries_metadata_of(optimize(other), la)


def test_tags_other_than_locations_do_not_count():
    x = np.ones(4, np.float32)
    la = ember.jit(first_twin()).lower(x)._lowered.module
    oa = optimize(la)
    for comp in oa.computations:
        for inst in comp.instructions:
            inst.metadata["ember_origin"] = "tagged"
    assert carries_metadata_of(oa, la)
