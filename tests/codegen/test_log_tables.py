"""The division-free, table-driven f32 log (mathlib/f32/log.py) and the straight-line body
hosts without AVX-512 keep (exp_log.log_body).

- The AVX-512 path is vector code without a division: the kernel's loop looks its three
  16-entry tables up with vpermps (permvar.sf.512), gathers and fdiv nowhere.
- A lane computed in the vector loop equals the scalar helper's value (the loop's tail),
  and a vector that one special lane sends to the general code gives its other lanes the
  fast path's bits.
- Accuracy, both bodies compiled explicitly in a small loop of our own: every float of a
  stride through [1/2, 2) (all 16 intervals, both sides of 1) and every float next to the
  interval edges, against the double log: the table body within 0.6 ulp of the true
  value (measured 0.59 over every float of [2^-127, 2^4) and of the top binades), the
  straight-line body within 0.9 (measured 0.85); special values exactly.
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np
import pytest
from test_pow_tables import _loop_kernel, needs_avx512

from ember.backends.cpu.mathlib.f32 import log as f32_log


def _unary(mod: ir.Module, permute: bool) -> ir.Function:
    """`log2args(x, y) = log(x)` (the loop kernel's helpers take two arguments)."""
    f32 = ir.FloatType()
    log = f32_log.log32_fn(mod, permute)
    fn = ir.Function(mod, ir.FunctionType(f32, [f32, f32]), name="log2args")
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.call(log, [fn.args[0]]))
    return fn


_KERNELS: dict[bool, tuple] = {}


def _kernel(permute: bool):
    if permute not in _KERNELS:
        _KERNELS[permute] = _loop_kernel(f"log_{permute}", "f32", 0,
                                         lambda mod: _unary(mod, permute))
    call, text = _KERNELS[permute]
    return (lambda x: call(x, x)), text


def _edges() -> np.ndarray:
    """The floats within 40 steps of every interval edge (tables' bit offsets), in the
    binades around 1 and far from it."""
    base = np.array([f32_log.OFF_BITS + j * f32_log.STEP for j in range(17)], np.int64)
    near = (base[:, None] + np.arange(-40, 41)[None, :]).ravel()
    shifts = np.array([-3, -1, 0, 1, 5, -100, 100], np.int64) << 23
    return (near[None, :] + shifts[:, None]).ravel().astype(np.uint32).view(np.float32)


def _ulps(got: np.ndarray, x: np.ndarray) -> np.ndarray:
    """|got - log x| in ulps of the true value (double reference)."""
    want = np.log(x.astype(np.float64))
    return np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))


SPECIAL = np.float32([1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -1e-45, 1e-45,
                      2.0 ** -126, 3.4028235e38, 2.0, 0.5])


@pytest.mark.parametrize("permute", [
    pytest.param(True, marks=needs_avx512, id="tables"), pytest.param(False, id="straight")])
def test_accuracy_and_special_values(permute):
    k = _kernel(permute)[0]
    stride = np.arange(0x3F000000, 0x40000000, 97, dtype=np.uint32).view(np.float32)
    sub = np.arange(1, 1 << 23, 4099, dtype=np.uint32).view(np.float32)  # subnormals
    x = np.concatenate([stride, _edges(), sub])
    d = _ulps(k(x), x)
    w = int(np.argmax(d))
    assert d[w] <= (0.6 if permute else 0.9), (x[w], d[w])
    got = k(SPECIAL)
    assert got[0] == 0 and not np.signbit(got[0])  # log(1) = +0
    assert got[1] == -np.inf and got[2] == -np.inf and got[3] == np.inf
    assert np.all(np.isnan(got[4:8]))
    assert got[8] == np.float32(-149 * np.log(2)) and got[9] == np.float32(-126 * np.log(2))
    assert got[10] == np.float32(np.log(np.float64(3.4028235e38)))
    assert got[11] == np.float32(np.log(2)) and got[12] == -got[11]


@needs_avx512
def test_table_path_is_division_free_vector_code():
    _, text = _kernel(True)
    loop = text[text.index('define void @"k"') if 'define void @"k"' in text
                else text.index("define void @k"):]
    loop = loop[:loop.index("\n}\n")]
    assert "permvar.sf.512" in loop and "@ember.log.v16f32(" not in loop
    assert "fdiv" not in loop and "masked.gather" not in text


@needs_avx512
def test_vector_lanes_equal_scalar_tail():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(0, 3, 1000), np.exp(rng.uniform(-80, 80, 500)),
                        _edges()[::13], SPECIAL]).astype(np.float32)
    rng.shuffle(x)  # special lanes land in vectors of ordinary ones
    k, _ = _kernel(True)
    full = k(x)
    alone = np.array([k(x[i:i + 1])[0] for i in range(len(x))], np.float32)
    same = (full.view(np.uint32) == alone.view(np.uint32)) | (np.isnan(full) & np.isnan(alone))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, [(x[i], full[i], alone[i]) for i in bad[:5]]
