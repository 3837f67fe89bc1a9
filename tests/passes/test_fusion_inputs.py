"""Fusion bounds the arrays one kernel reads (FusionPolicy.input_limit): a long chain of
scalar sums (an unrolled loop's `s = s + sum(x)`) becomes kernels of at most the limit's
arguments instead of one kernel of thousands, each refusal reported with its reason, for
groups grown from a root and for multi-output merges alike; a root that itself reads many
arrays still fuses their producers. Values equal the unfused module's."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module
from ember.passes.fusion import Fusion, FusionPolicy


def _chain(n: int) -> str:
    """s_k = s_(k-1) + p_k * 2 over n scalar parameters."""
    params = ", ".join(f"p{k}: f32[]" for k in range(n))
    lines = [f"  %p{k} = f32[] parameter({k})" for k in range(n)]
    lines.append("  %two = f32[] constant(2)")
    lines.append("  %s0 = f32[] multiply(%p0, %two)")
    for k in range(1, n):
        lines.append(f"  %m{k} = f32[] multiply(%p{k}, %two)")
        lines.append(f"  %s{k} = f32[] add(%s{k - 1}, %m{k})")
    lines[-1] = "  ROOT" + lines[-1][1:]
    return f"HloModule chain\nENTRY %main ({params}) -> f32[] {{\n" + "\n".join(lines) + "\n}\n"


def _fusions(module):
    return [i for i in module.entry.instructions if i.opcode == "fusion"]


@pytest.mark.parametrize("policy", [FusionPolicy(input_limit=8),
                                    FusionPolicy(input_limit=8, multi_output_fusion=True)])
def test_a_long_chain_becomes_kernels_of_bounded_inputs(policy):
    n = 40
    m = parse_module(_chain(n))
    args = [np.float32(k + 0.5) for k in range(n)]
    want = evaluate(m, *args)
    Fusion(policy).run(m)
    fusions = _fusions(m)
    assert all(len(f.operands) <= 8 for f in fusions), [len(f.operands) for f in fusions]
    assert len(fusions) >= n // 8
    np.testing.assert_array_equal(evaluate(m, *args), want)
    reasons = [d.reason for d in m.fusion_decisions]
    assert any("would read more than 8 arrays" in r for r in reasons), reasons
    if policy.multi_output_fusion:  # (the pieces are not merged back together)
        assert any("merged kernel would read" in r for r in reasons), reasons


def test_the_default_limit_leaves_a_short_chain_whole():
    m = parse_module(_chain(40))
    Fusion(FusionPolicy()).run(m)
    assert len(_fusions(m)) == 1
    assert not any("arrays" in d.reason for d in m.fusion_decisions)


def test_a_root_of_many_operands_still_fuses_their_producers():
    n = 20
    params = ", ".join(f"p{k}: f32[4]" for k in range(n))
    lines = [f"  %p{k} = f32[4] parameter({k})" for k in range(n)]
    lines += [f"  %e{k} = f32[4] exponential(%p{k})" for k in range(n)]
    ops = ", ".join(f"%e{k}" for k in range(n))
    lines.append(f"  ROOT %c = f32[{4 * n}] concatenate({ops}), dimensions={{0}}")
    m = parse_module(f"HloModule cat\nENTRY %main ({params}) -> f32[{4 * n}] {{\n"
                     + "\n".join(lines) + "\n}\n")
    args = [np.arange(4, dtype=np.float32) + k for k in range(n)]
    want = evaluate(m, *args)
    Fusion(FusionPolicy(input_limit=8)).run(m)
    assert len(_fusions(m)) == 1  # every exp in the concatenate's kernel
    np.testing.assert_array_equal(evaluate(m, *args), want)


def test_input_limit_must_be_positive():
    with pytest.raises(ValueError, match="input_limit must be at least 1"):
        FusionPolicy(input_limit=0)
