"""`Fp.ldexp` has two emissions: `llvm.ldexp` (vscalefps/pd, hosts with AVX-512) and two
exact power-of-two multiplies (elsewhere). Both must give v 2^k correctly rounded, so every
function built on it gives the same bits either way: compared here on random bit patterns
and on the edges where the scaling rounds (subnormal results, overflow to inf)."""

from __future__ import annotations

import numpy as np
import pytest

from ember.backends import cpu
from ember.backends.cpu.mathlib import fp as fpmod
from ember.hlo import Builder, Shape

N = 1 << 14


def _compile(op: str, et: str, scalef: bool, monkeypatch) -> object:
    monkeypatch.setattr(fpmod, "scalef_ldexp", lambda: scalef)
    b = Builder("f")
    args = [b.parameter(Shape(et, (N,))) for _ in range(2 if op == "power" else 1)]
    return cpu.compile(b.build(getattr(b, op)(*args)), use_cache=False)


def _inputs(dt, rng) -> np.ndarray:
    ut = np.uint32 if dt == np.float32 else np.uint64
    x = rng.integers(0, np.iinfo(ut).max, N, dtype=ut, endpoint=True).view(dt)
    # edges: e^x near the overflow and underflow thresholds, subnormal results
    hi, lo = (88.72, -103.9) if dt == np.float32 else (709.78, -745.1)
    edges = np.concatenate([np.linspace(hi - 2, hi + 1, 2000), np.linspace(lo - 1, lo + 20, 2000),
                            [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(dt)
    x[:len(edges)] = edges
    return x


@pytest.mark.parametrize("et,dt", [("f32", np.float32), ("f64", np.float64)])
@pytest.mark.parametrize("op", ["exponential", "exponential_minus_one", "exp2", "logistic",
                                "cosh", "erfc", "power"])
def test_both_ldexp_emissions_give_the_same_bits(op, et, dt, monkeypatch):
    rng = np.random.default_rng(7)
    args = [_inputs(dt, rng)] + ([(rng.standard_normal(N) * 8).astype(dt)]
                                 if op == "power" else [])
    with np.errstate(all="ignore"):
        got = [np.asarray(_compile(op, et, s, monkeypatch)(*args)) for s in (True, False)]
    ut = np.uint32 if dt == np.float32 else np.uint64
    assert np.array_equal(got[0].view(ut), got[1].view(ut))


def test_scalef_emission_is_one_instruction_on_avx512(monkeypatch):
    if not fpmod.scalef_ldexp():
        pytest.skip("no AVX-512 F/VL on this host")
    exe = _compile("exponential", "f32", True, monkeypatch)
    asm = exe.assembly()
    assert "vscalefps" in asm
