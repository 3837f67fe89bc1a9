"""The f32 exp of AVX-512 hosts (exp_log `_exp32_vec_body`: a vector variant scaling by
vscalefps with k as a float, NaN carried through without selects) against the
straight-line body every other host runs: the same bits on every input, overflow,
underflow into the subnormal range, infinities and NaN included; and a lane computed in
the vector loop equals the scalar helper's value (the loop's tail)."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np
from test_pow_tables import _loop_kernel, needs_avx512

from ember.backends.cpu.mathlib import exp_log

_KERNELS: dict[bool, tuple] = {}


def _kernel(permute: bool):
    def callee(mod: ir.Module) -> ir.Function:
        f32 = ir.FloatType()
        exp = exp_log.exp_fn(mod, f32, permute)
        fn = ir.Function(mod, ir.FunctionType(f32, [f32, f32]), name="exp2args")
        fn.linkage = "internal"
        fn.attributes.add("alwaysinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(b.call(exp, [fn.args[0]]))
        return fn

    if permute not in _KERNELS:
        _KERNELS[permute] = _loop_kernel(f"exp_{permute}", "f32", 0, callee)
    call, text = _KERNELS[permute]
    return (lambda x: call(x, x)), text


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(11)
    special = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283, 88.72284, 89.0, 89.5,
                          -87.33655, -87.4, -103.2, -103.97, -104.0, -104.5, -200.0, 1e-45,
                          -1e-45, 1e30, -1e30, 0.34657359, -0.34657359])
    return np.concatenate([rng.uniform(-110, 110, 3000), rng.uniform(-1, 1, 1000),
                           rng.uniform(-104, -87, 1000), special]).astype(np.float32)


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


@needs_avx512
def test_variant_equals_straight_line_body():
    x = _inputs()
    fast, text = _kernel(True)
    slow, _ = _kernel(False)
    got, want = fast(x), slow(x)
    bad = np.flatnonzero(~_same(got, want))
    assert bad.size == 0, [(x[i], got[i], want[i]) for i in bad[:5]]
    assert "scalef.ps.512" in text and "fptosi" not in text[text.index("ember.exp.v16f32"):]
    assert np.isnan(got[np.isnan(x)]).all() and (got[x == np.inf] == np.inf).all()
    assert (got[x == -np.inf] == 0).all()


@needs_avx512
def test_vector_lanes_equal_scalar_tail():
    x = _inputs()
    k, _ = _kernel(True)
    full = k(x)
    alone = np.array([k(x[i:i + 1])[0] for i in range(len(x))], np.float32)
    bad = np.flatnonzero(~_same(full, alone))
    assert bad.size == 0, [(x[i], full[i], alone[i]) for i in bad[:5]]
