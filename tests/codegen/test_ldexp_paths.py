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



def _tiny_fn(et: str):
    """ctypes function (v, k) -> Fp.ldexp_tiny(v, k), JIT-compiled as scalar code."""
    import ctypes

    import llvmlite.binding as llvm
    import llvmlite.ir as ir

    from ember.backends.cpu.jit.llvm_target import target

    ty = ir.FloatType() if et == "f32" else ir.DoubleType()
    ity = ir.IntType(32 if et == "f32" else 64)
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ty, [ty, ity]), name="g")
    b = ir.IRBuilder(fn.append_basic_block())
    b.ret(fpmod.Fp(b, ty).ldexp_tiny(*fn.args))
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), target().new_machine())
    engine.finalize_object()
    cty, cint = ((ctypes.c_float, ctypes.c_int32) if et == "f32"
                 else (ctypes.c_double, ctypes.c_int64))
    return engine, ctypes.CFUNCTYPE(cty, cty, cint)(engine.get_function_address("g"))


@pytest.mark.parametrize("et,dt", [("f32", np.float32), ("f64", np.float64)])
def test_ldexp_tiny_rounds_subnormal_results_like_ldexp(et, dt, monkeypatch):
    """Fp.ldexp_tiny builds results below the normal range from v 2^(k + 149) and a
    magic-number add (no underflowing float operation, which costs x86 a microcode
    assist): the same bits as a correctly rounded ldexp for 0 <= v < 2 over results from
    the normal range down to 0, halfway cases (ties to even) and the carry into the
    smallest normal included, either ldexp emission."""
    info = np.finfo(dt)
    mbits, ut = (23, np.uint32) if dt == np.float32 else (52, np.uint64)
    rng = np.random.default_rng(11)
    n = 3000
    v = np.ldexp(rng.uniform(1, 2, n), rng.integers(-3, 1, n)).astype(dt)  # [1/8, 2)
    k = rng.integers(info.minexp - mbits - 2, info.minexp + 5, n)
    # exact halfway cases: the bits shifted out are 100...0
    s = rng.integers(1, mbits + 1, n)
    sig = (rng.integers(0, 1 << 20, n).astype(np.uint64) << s.astype(np.uint64)) | (
        np.uint64(1) << (s - 1).astype(np.uint64))
    sig = (sig & np.uint64((1 << mbits) - 1)) | np.uint64(1 << mbits)
    half = np.ldexp(sig.astype(np.float64), -mbits).astype(dt)  # in [1, 2), exact
    kh = info.minexp - s  # moves the significand's lowest s bits below the subnormal grid
    # just below the smallest normal: rounds up into it (all ones shifted by one)
    top = np.full(4, 2 - 2.0 ** -mbits, dt)
    kt = np.full(4, info.minexp - 1)
    vs = np.concatenate([v, half, top, [0.0, 1.0, 1.5]]).astype(dt)
    ks = np.concatenate([k, kh, kt, [info.minexp - mbits - 2, info.minexp - mbits - 2,
                                     info.minexp - mbits - 1]])
    want = np.ldexp(vs, ks).astype(dt)
    assert (np.abs(want) < info.tiny).sum() > n  # most results subnormal or zero
    for scalef in (True, False):
        monkeypatch.setattr(fpmod, "scalef_ldexp", lambda s=scalef: s)
        engine, g = _tiny_fn(et)
        got = np.array([g(float(a), int(e)) for a, e in zip(vs, ks)], dtype=dt)
        bad = np.nonzero(got.view(ut) != want.view(ut))[0]
        assert not len(bad), (scalef, vs[bad[:3]], ks[bad[:3]], got[bad[:3]], want[bad[:3]])
        assert got[-4] == info.tiny and got[-1] == info.smallest_subnormal
