"""The table-driven f32 erf (mathlib/f32/special.py `_erf_table_body`, tables/erf_tables.py)
and the straight-line body hosts without AVX-512 keep.

- The AVX-512 path is vector code: the kernel's loop looks the 16-entry tables up with
  vpermps (permvar.sf.512), gathers nowhere.
- A lane computed in the vector loop equals the scalar helper's value (the loop's tail):
  the same code on a splat, so where an element lands never changes its bits.
- Both bodies, compiled explicitly in a small loop of our own, against mpmath at every
  interval edge of the tables (k/4, k = 1..15) and at the 3.92 clamp: the table body within
  1 ulp of the correctly rounded value (measured: 1.0 over every float in [0.25, 4.1]),
  the straight-line body within the 3-ulp budget; both monotone across the edges, odd bit
  for bit, and exactly +-1 from 3.92 on.
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np
import pytest
from codegen_util import ulp_distance
from test_math_reference import _erf, _reference
from test_pow_tables import _loop_kernel, needs_avx512

from ember.backends.cpu.mathlib.f32 import special as f32_special


def _unary(mod: ir.Module, permute: bool) -> ir.Function:
    """`erf2(x, y) = erf(x)` (the loop kernel's helpers take two arguments)."""
    f32 = ir.FloatType()
    erf = f32_special.erf_fn(mod, permute)
    fn = ir.Function(mod, ir.FunctionType(f32, [f32, f32]), name="erf2")
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(erf, [fn.args[0]]))
    return fn


_KERNELS: dict[bool, tuple] = {}


def _kernel(permute: bool):
    if permute not in _KERNELS:
        _KERNELS[permute] = _loop_kernel(f"erf_{permute}", "f32", 0,
                                         lambda mod: _unary(mod, permute))
    call, text = _KERNELS[permute]
    return (lambda x: call(x, x)), text


def _neighbours(v: float, k: int) -> np.ndarray:
    x = np.float32(v)
    down = [x := np.nextafter(x, np.float32(-1)) for _ in range(k)]
    x = np.float32(v)
    up = [x := np.nextafter(x, np.float32(9)) for _ in range(k)]
    return np.array(down[::-1] + [np.float32(v)] + up, np.float32)


def _edge_inputs() -> np.ndarray:
    pos = np.concatenate([_neighbours(k / 4, 48) for k in range(1, 16)]
                         + [_neighbours(3.92, 48), np.float32([5.0, 1e10, np.inf])])
    return np.unique(np.concatenate([pos, -pos]))


@needs_avx512
def test_table_path_is_vector_code():
    _, text = _kernel(True)
    loop = text[text.index('define void @"k"') if 'define void @"k"' in text
                else text.index("define void @k"):]
    loop = loop[:loop.index("\n}\n")]
    assert "permvar.sf.512" in loop and "@ember.erf.v16f32(" not in loop
    assert "masked.gather" not in text


@needs_avx512
def test_vector_lanes_equal_scalar_tail():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-4.2, 4.2, 1500), _edge_inputs()[::7],
                        np.float32([0.0, -0.0, np.nan, 1e-45, -3e-39])]).astype(np.float32)
    k, _ = _kernel(True)
    full = k(x)
    alone = np.array([k(x[i:i + 1])[0] for i in range(len(x))], np.float32)
    same = (full.view(np.uint32) == alone.view(np.uint32)) | (np.isnan(full) & np.isnan(alone))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, [(x[i], full[i], alone[i]) for i in bad[:5]]


@pytest.mark.parametrize("permute", [
    pytest.param(True, marks=needs_avx512, id="tables"), pytest.param(False, id="straight")])
def test_edges_against_mpmath(permute):
    x = _edge_inputs()
    got = _kernel(permute)[0](x)
    fin = np.isfinite(x)
    want = np.sign(x).astype(np.float32)
    want[fin] = _reference(_erf, np.float32, x[fin])
    d = ulp_distance(got, want)
    w = int(np.argmax(d))
    assert d.max() <= (1 if permute else 3), (x[w], got[w], want[w])
    assert np.all(np.diff(got) >= 0)
    neg = _kernel(permute)[0](-x)
    assert np.array_equal(neg.view(np.uint32), (-got).view(np.uint32))
    big = np.abs(x) >= np.float32(3.92)
    assert np.all(got[big] == np.sign(x[big]))
    tiny = np.float32([0.0, -0.0, 1e-45, -1e-45, 1e-38, -3e-39, 2e-38, np.nan])
    t = _kernel(permute)[0](tiny)
    assert np.array_equal(np.signbit(t[:7]), np.signbit(tiny[:7])) and np.isnan(t[7])
    assert ulp_distance(t[2:7], _reference(_erf, np.float32, tiny[2:7])).max() <= 1
