"""A dot whose result layout assignment transposes in memory (a `copy` into another layout
before its elementwise users) keeps the copy out of its kOutput epilogue: the epilogue
stores each element where the product's row-major block has it, so a fused layout change
wrote the result untransposed (a wrong answer, found through a CNN kernel gradient split
by the SPMD partitioner). The CPU backend refuses such a hand-made fusion with an error."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends import cpu
from ember.backends.cpu.errors import CpuCompileError
from ember.hlo.parser import parse_module


def _program(a, b, dt):
    t = jnp.tanh(lax.dot_general(a, b, (((0,), (1,)), ((), ()))))
    return (dt * t).transpose(3, 0, 1, 2), t[:, :1]


@pytest.mark.parametrize("k", [27, 40])
def test_a_transposed_product_is_right(k):
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (k, 1, 4, 4)).astype(np.float32)
    b = (rng.standard_normal((4, k)) * 0.1).astype(np.float32)
    dt = rng.standard_normal((1, 4, 4, 4)).astype(np.float32)
    got = ember.jit(_program)(a, b, dt)
    t = np.tanh(np.einsum("kabc,dk->abcd", a.astype(np.float64), b.astype(np.float64)))
    np.testing.assert_allclose(np.asarray(got[0]), (dt * t).transpose(3, 0, 1, 2), atol=2e-6)
    np.testing.assert_allclose(np.asarray(got[1]), t[:, :1], atol=2e-6)


def test_a_kOutput_fusion_with_a_layout_change_is_refused():
    module = parse_module("""HloModule m

%fc (p0: f32[5,1,4,4], p1: f32[4,5]) -> f32[1,4,4,4] {
  %p0 = f32[5,1,4,4]{3,2,1,0} parameter(0)
  %p1 = f32[4,5]{1,0} parameter(1)
  %d = f32[1,4,4,4]{3,2,1,0} dot(%p0, %p1), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  %c = f32[1,4,4,4]{2,1,0,3} copy(%d)
  ROOT %t = f32[1,4,4,4]{2,1,0,3} tanh(%c)
}

ENTRY %e (A: f32[5,1,4,4], B: f32[4,5]) -> f32[1,4,4,4] {
  %A = f32[5,1,4,4]{3,2,1,0} parameter(0)
  %B = f32[4,5]{1,0} parameter(1)
  %f = f32[1,4,4,4]{2,1,0,3} fusion(%A, %B), kind=kOutput, calls=%fc
  ROOT %r = f32[1,4,4,4]{3,2,1,0} copy(%f)
}
""")
    with pytest.raises(CpuCompileError, match="layout"):
        cpu.compile(module, run_passes=False, use_cache=False)
