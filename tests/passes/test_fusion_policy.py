"""The fusion pass within a backend's FusionPolicy: each switch turned off removes exactly
its kind of fusion (and says why), and the program computes the same values."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module
from ember.passes.fusion import Fusion, FusionPolicy

DOT_EPILOGUE = """HloModule dense
ENTRY %main (x: f32[4,8], w: f32[8,5], b: f32[5]) -> f32[4,5] {
  %x = f32[4,8] parameter(0)
  %w = f32[8,5] parameter(1)
  %b = f32[5] parameter(2)
  %dot = f32[4,5] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[4,5] broadcast(%b), dimensions={1}
  %add = f32[4,5] add(%dot, %bb)
  ROOT %tanh = f32[4,5] tanh(%add)
}
"""

SOFTMAX = """HloModule softmax
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
%sum (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %s = f32[] add(%c, %d)
}
ENTRY %main (x: f32[6,16]) -> f32[6,16] {
  %x = f32[6,16] parameter(0)
  %ninf = f32[] constant(-inf)
  %mx = f32[6] reduce(%x, %ninf), dimensions={1}, to_apply=%max
  %mb = f32[6,16] broadcast(%mx), dimensions={0}
  %sh = f32[6,16] subtract(%x, %mb)
  %e = f32[6,16] exponential(%sh)
  %zero = f32[] constant(0)
  %s = f32[6] reduce(%e, %zero), dimensions={1}, to_apply=%sum
  %sb = f32[6,16] broadcast(%s), dimensions={0}
  ROOT %out = f32[6,16] divide(%e, %sb)
}
"""

SIBLINGS = """HloModule moments
%sum (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %s = f32[] add(%c, %d)
}
ENTRY %main (x: f32[32,8]) -> (f32[8], f32[8]) {
  %x = f32[32,8] parameter(0)
  %zero = f32[] constant(0)
  %s1 = f32[8] reduce(%x, %zero), dimensions={0}, to_apply=%sum
  %sq = f32[32,8] multiply(%x, %x)
  %s2 = f32[8] reduce(%sq, %zero), dimensions={0}, to_apply=%sum
  ROOT %t = (f32[8], f32[8]) tuple(%s1, %s2)
}
"""


def _fused(text: str, policy: FusionPolicy):
    module = parse_module(text)
    Fusion(policy).run(module)
    fusions = [i for i in module.entry.instructions if i.opcode == "fusion"]
    reasons = [d.reason for d in module.fusion_decisions]
    return module, fusions, reasons


def _args(module):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(p.shape.dimensions).astype(p.shape.dtype)
            for p in module.entry.parameters]


def _same_values(text: str, module) -> None:
    args = _args(module)
    want, got = evaluate(parse_module(text), *args), evaluate(module, *args)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_output_fusion_follows_the_policy():
    on, fusions, _ = _fused(DOT_EPILOGUE, FusionPolicy())
    assert [f.attrs["kind"] for f in fusions] == ["kOutput"]
    off, fusions, reasons = _fused(DOT_EPILOGUE, FusionPolicy(output_fusion=False))
    assert [f.attrs["kind"] for f in fusions] == ["kLoop"]  # the epilogue alone
    assert any(i.opcode == "dot" for i in off.entry.instructions)
    assert "the backend runs a dot without its epilogue" in reasons
    _same_values(DOT_EPILOGUE, off)


def test_row_fusion_follows_the_policy():
    _, fusions, _ = _fused(SOFTMAX, FusionPolicy())
    assert len(fusions) == 1  # the whole softmax: one row kernel
    off, fusions, _ = _fused(SOFTMAX, FusionPolicy(row_fusion=False))
    assert len(fusions) > 1
    _same_values(SOFTMAX, off)


@pytest.mark.parametrize("sibling", [True, False])
def test_sibling_fusion_follows_the_policy(sibling):
    module, fusions, _ = _fused(SIBLINGS, FusionPolicy(sibling_fusion=sibling))
    assert len(fusions) == (1 if sibling else 2)
    _same_values(SIBLINGS, module)
