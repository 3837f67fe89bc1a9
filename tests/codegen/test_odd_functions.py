"""erf(-x) => -erf(x) (algsimp/odd.py) is exact only while every erf Ember runs is odd bit
for bit: the CPU's (f32 and f64) and the HLO evaluator's (SciPy's, NaN signs included).
Checked here over random values, the branch boundaries and the edge values; and the
rewrite's purpose: erf(x) and erf(-x) in one program become one erf."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.lax as lax
from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module


def _values(dtype) -> np.ndarray:
    rng = np.random.default_rng(7)
    info = np.finfo(dtype)
    edges = [0.0, info.tiny, info.tiny / 4, info.eps, 0.5, 0.84, 1.0, 1.0 + info.eps, 2.0,
             3.9, 3.92, 4.0, 6.0, 6.4, 10.0, 27.0, info.max, np.inf, np.nan]
    return np.concatenate([
        np.asarray(edges, dtype),
        np.nextafter(np.asarray(edges[1:-2], dtype), dtype(0)),  # just below each boundary
        (rng.standard_normal(20_000) * 3).astype(dtype),
        np.linspace(0, 7, 7_001).astype(dtype),
        np.exp(rng.uniform(-80, 5, 2_000)).astype(dtype),
    ])


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_erf_is_odd_bit_for_bit(dtype, request):
    if dtype == np.float64:
        request.getfixturevalue("x64")
    x = _values(dtype)
    f = ember.jit(lax.erf)
    pos, neg = np.asarray(f(x)), np.asarray(f(-x))
    np.testing.assert_array_equal(_bits(neg), _bits(-pos))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_evaluator_erf_is_odd_bit_for_bit(dtype):
    et = "f32" if dtype == np.float32 else "f64"
    x = _values(dtype)
    module = parse_module(f"""HloModule odd
ENTRY %main (p: {et}[{x.size}]) -> {et}[{x.size}] {{
  %p = {et}[{x.size}] parameter(0)
  ROOT %e = {et}[{x.size}] erf(%p)
}}
""")
    pos, neg = evaluate(module, x), evaluate(module, -x)
    np.testing.assert_array_equal(_bits(neg), _bits(-pos))


def test_erf_of_x_and_minus_x_is_one_erf():
    def cdfs(d):
        c = np.float32(1 / np.sqrt(2.0))
        return 0.5 * (1 + lax.erf(d * c)), 0.5 * (1 + lax.erf(-d * c))

    d = np.linspace(-4, 4, 33, dtype=np.float32)
    compiled = ember.jit(cdfs).lower(d).compile()
    assert compiled.as_text().count(" erf(") == 1
    got = compiled(d)
    module = ember.jit(cdfs).lower(d)._lowered.module  # the program as written: two erfs
    for g, w in zip(got, evaluate(module, d)):
        np.testing.assert_allclose(g, w, rtol=2e-7, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(got[0]) + np.asarray(got[1]), np.ones(33))
