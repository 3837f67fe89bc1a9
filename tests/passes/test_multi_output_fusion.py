"""Multi-output loop fusion (ember/passes/fusion_merge.py): which loop groups merge, what the
merged kernel writes, each refusal with its reason, and values equal to the unfused
module's under the HLO evaluator. HLO text in, the fusion pass, checks on what comes out."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo.evaluator import evaluate
from ember.hlo.parser import parse_module
from ember.passes import fusion_merge
from ember.passes.fusion import Fusion, FusionPolicy

ON = FusionPolicy(multi_output_fusion=True)

# call and put of Black-Scholes share d1 (an expensive divide with three users) and d2
BLACK_SCHOLES = """HloModule bs
ENTRY %main (s: f32[33], k: f32[33], t: f32[33], r: f32[], v: f32[]) -> (f32[33], f32[33]) {
  %s = f32[33] parameter(0)
  %k = f32[33] parameter(1)
  %t = f32[33] parameter(2)
  %r = f32[] parameter(3)
  %v = f32[] parameter(4)
  %vb = f32[33] broadcast(%v), dimensions={}
  %rb = f32[33] broadcast(%r), dimensions={}
  %half = f32[] constant(0.5)
  %halfb = f32[33] broadcast(%half), dimensions={}
  %one = f32[] constant(1)
  %oneb = f32[33] broadcast(%one), dimensions={}
  %sq2 = f32[] constant(1.41421354)
  %sq2b = f32[33] broadcast(%sq2), dimensions={}
  %sk = f32[33] divide(%s, %k)
  %lg = f32[33] log(%sk)
  %vv = f32[33] multiply(%vb, %vb)
  %hvv = f32[33] multiply(%halfb, %vv)
  %drift = f32[33] add(%rb, %hvv)
  %dt = f32[33] multiply(%drift, %t)
  %num = f32[33] add(%lg, %dt)
  %st = f32[33] sqrt(%t)
  %vst = f32[33] multiply(%vb, %st)
  %d1 = f32[33] divide(%num, %vst)
  %d2 = f32[33] subtract(%d1, %vst)
  %nrt = f32[33] negate(%rb)
  %nrtt = f32[33] multiply(%nrt, %t)
  %e = f32[33] exponential(%nrtt)
  %disc = f32[33] multiply(%k, %e)
  %a1 = f32[33] divide(%d1, %sq2b)
  %f1 = f32[33] erf(%a1)
  %g1 = f32[33] add(%oneb, %f1)
  %n1 = f32[33] multiply(%halfb, %g1)
  %a2 = f32[33] divide(%d2, %sq2b)
  %f2 = f32[33] erf(%a2)
  %g2 = f32[33] add(%oneb, %f2)
  %n2 = f32[33] multiply(%halfb, %g2)
  %c1 = f32[33] multiply(%s, %n1)
  %c2 = f32[33] multiply(%disc, %n2)
  %call = f32[33] subtract(%c1, %c2)
  %m1 = f32[33] subtract(%oneb, %n1)
  %m2 = f32[33] subtract(%oneb, %n2)
  %p1 = f32[33] multiply(%disc, %m2)
  %p2 = f32[33] multiply(%s, %m1)
  %put = f32[33] subtract(%p1, %p2)
  ROOT %out = (f32[33], f32[33]) tuple(%call, %put)
}
"""

SIBLINGS = """HloModule siblings
ENTRY %main (x: f32[5,7], y: f32[5,7]) -> (f32[5,7], pred[5,7]) {
  %x = f32[5,7] parameter(0)
  %y = f32[5,7] parameter(1)
  %a = f32[5,7] add(%x, %y)
  %b = f32[5,7] multiply(%a, %x)
  %c = f32[5,7] subtract(%x, %y)
  %z = f32[] constant(0)
  %zb = f32[5,7] broadcast(%z), dimensions={}
  %d = pred[5,7] compare(%c, %zb), direction=GT
  ROOT %out = (f32[5,7], pred[5,7]) tuple(%b, %d)
}
"""

# exp(x) read by its neighbour in a reversed order and by a negate: the reversing consumer
# would recompute the exp at other indices, so it stays in memory for that one
READ_ELSEWHERE = """HloModule elsewhere
ENTRY %main (x: f32[9], y: f32[9]) -> (f32[9], f32[9]) {
  %x = f32[9] parameter(0)
  %y = f32[9] parameter(1)
  %e = f32[9] exponential(%x)
  %n = f32[9] negate(%e)
  %r = f32[9] reverse(%e), dimensions={0}
  %s = f32[9] add(%r, %y)
  ROOT %out = (f32[9], f32[9]) tuple(%n, %s)
}
"""

# exp(x) feeds a product (not fused) whose result its other reader also needs: putting
# the exp's kernel and that reader together would read the product before computing it
CYCLE = """HloModule cycle
ENTRY %main (x: f32[4,4], w: f32[4,4]) -> f32[4,4] {
  %x = f32[4,4] parameter(0)
  %w = f32[4,4] parameter(1)
  %e = f32[4,4] exponential(%x)
  %d = f32[4,4] dot(%e, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %s = f32[4,4] add(%e, %d)
}
"""

# exp(x) read by a broadcast into a larger shape and by a negate of its own shape
SHAPES = """HloModule shapes
ENTRY %main (x: f32[8], y: f32[3,8]) -> (f32[8], f32[3,8]) {
  %x = f32[8] parameter(0)
  %y = f32[3,8] parameter(1)
  %e = f32[8] exponential(%x)
  %n = f32[8] negate(%e)
  %b = f32[3,8] broadcast(%e), dimensions={1}
  %s = f32[3,8] multiply(%b, %y)
  ROOT %out = (f32[8], f32[3,8]) tuple(%n, %s)
}
"""


def _many_siblings(n: int) -> str:
    lines = [f"  %y{k} = f32[6] multiply(%x, %c{k})" for k in range(n)]
    consts = [f"  %k{k} = f32[] constant({k + 2})\n  %c{k} = f32[6] broadcast(%k{k}), "
              f"dimensions={{}}" for k in range(n)]
    outs = ", ".join(f"%y{k}" for k in range(n))
    types = ", ".join(["f32[6]"] * n)
    return (f"HloModule many\nENTRY %main (x: f32[6]) -> ({types}) {{\n"
            "  %x = f32[6] parameter(0)\n" + "\n".join(consts) + "\n" + "\n".join(lines)
            + f"\n  ROOT %out = ({types}) tuple({outs})\n}}\n")


def _fused(text: str, policy: FusionPolicy = ON):
    module = parse_module(text)
    Fusion(policy).run(module)
    fusions = [i for i in module.entry.instructions if i.opcode == "fusion"]
    return module, fusions


def _same_values(text: str, module, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    args = [rng.uniform(0.5, 2.0, p.shape.dimensions).astype(p.shape.dtype)
            for p in module.entry.parameters]
    want, got = evaluate(parse_module(text), *args), evaluate(module, *args)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)  # the same operations, in the same order


def _opcodes(fusion) -> list[str]:
    return [i.opcode for i in fusion.fused_computation.instructions]


def test_black_scholes_is_one_kernel_with_two_outputs():
    module, fusions = _fused(BLACK_SCHOLES)
    assert len(fusions) == 1
    (f,) = fusions
    assert f.attrs["kind"] == "kLoop" and f.shape.is_tuple and len(f.shape.tuple_shapes) == 2
    ops = _opcodes(f)
    # every value computed once: d1, the exp, the two erfs
    assert ops.count("exponential") == 1 and ops.count("erf") == 2
    assert ops.count("sqrt") == 1 and ops.count("log") == 1
    merges = module.fusion_merges
    assert merges and {m.kind for m in merges} <= {"producer-consumer", "sibling"}
    assert merges[-1].outputs in (("call", "put"), ("put", "call"))
    assert all(str(m).startswith(m.kind + ": %") for m in merges)
    _same_values(BLACK_SCHOLES, module)


def test_without_the_policy_nothing_merges():
    module, fusions = _fused(BLACK_SCHOLES, FusionPolicy())
    assert len(fusions) >= 2 and not any(f.shape.is_tuple for f in fusions)
    assert module.fusion_merges == []
    # the cheap products around each erf and the exp are copied into the kernels that
    # read them, but not the transcendentals under them: those are kernels of their own
    assert sum(_opcodes(f).count("erf") for f in fusions) == 2
    assert sum(_opcodes(f).count("exponential") for f in fusions) == 1
    reasons = [str(d) for d in module.fusion_decisions]
    assert "%e -> %disc: expensive exponential under %disc, which is copied into other " \
           "kernels too; not duplicated" in reasons
    _same_values(BLACK_SCHOLES, module)


def test_siblings_of_different_dtypes_share_their_inputs():
    module, fusions = _fused(SIBLINGS)
    assert len(fusions) == 1 and [str(s.dtype) for s in fusions[0].shape.tuple_shapes] \
        == ["float32", "bool"]
    assert [m.kind for m in module.fusion_merges] == ["sibling"]
    assert "both read %x" in module.fusion_merges[0].reason or \
        "both read %y" in module.fusion_merges[0].reason
    _same_values(SIBLINGS, module)


def test_a_root_read_at_other_indices_is_refused():
    module, fusions = _fused(READ_ELSEWHERE)
    reasons = [d.reason for d in module.fusion_decisions if "multi-output" in d.reason]
    assert any("reads %e at other indices" in r for r in reasons), reasons
    # the negate still joins the exp's kernel, which writes e for the reversing reader
    merged = [f for f in fusions if f.shape.is_tuple]
    assert len(merged) == 1 and _opcodes(merged[0]).count("exponential") == 1
    assert sum(_opcodes(f).count("exponential") for f in fusions) == 1
    _same_values(READ_ELSEWHERE, module)


def test_a_merge_that_would_form_a_cycle_is_refused():
    # (a product without its epilogue: the add is a loop group of its own)
    module, fusions = _fused(CYCLE, FusionPolicy(multi_output_fusion=True, output_fusion=False))
    reasons = [d.reason for d in module.fusion_decisions]
    assert any("form a cycle" in r for r in reasons), reasons
    assert not module.fusion_merges
    _same_values(CYCLE, module)


def test_different_iteration_spaces_are_refused():
    module, fusions = _fused(SHAPES)
    reasons = [d.reason for d in module.fusion_decisions]
    assert any("different iteration spaces" in r for r in reasons), reasons
    assert all(len(set(map(str, f.shape.tuple_shapes))) == 1 for f in fusions
               if f.shape.is_tuple)
    _same_values(SHAPES, module)


@pytest.mark.parametrize("n", [3, fusion_merge.MAX_OUTPUTS, fusion_merge.MAX_OUTPUTS + 3])
def test_outputs_per_kernel_are_bounded(n):
    text = _many_siblings(n)
    module, fusions = _fused(text)
    widths = [len(f.shape.tuple_shapes) if f.shape.is_tuple else 1 for f in fusions]
    assert sum(widths) == n and max(widths) <= fusion_merge.MAX_OUTPUTS
    assert len(fusions) == (1 if n <= fusion_merge.MAX_OUTPUTS else 2)
    if n > fusion_merge.MAX_OUTPUTS:
        assert any(f"more than {fusion_merge.MAX_OUTPUTS} outputs" in d.reason
                   for d in module.fusion_decisions)
    _same_values(text, module)


def test_a_value_still_read_from_memory_stays_an_output():
    # e is needed by the reduction (another kernel) after the negate takes it in
    text = """HloModule kept
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[4,6]) -> (f32[4,6], f32[4]) {
  %x = f32[4,6] parameter(0)
  %e = f32[4,6] exponential(%x)
  %n = f32[4,6] negate(%e)
  %z = f32[] constant(0)
  %sq = f32[4,6] multiply(%e, %e)
  %r = f32[4] reduce(%sq, %z), dimensions={1}, to_apply=%sum
  %rr = f32[4] reduce(%e, %z), dimensions={1}, to_apply=%sum
  %rs = f32[4] add(%r, %rr)
  ROOT %out = (f32[4,6], f32[4]) tuple(%n, %rs)
}
"""
    module, fusions = _fused(text, FusionPolicy(multi_output_fusion=True, row_fusion=False))
    (m,) = module.fusion_merges
    assert m.kind == "producer-consumer" and set(m.outputs) == {"e", "n"}
    _same_values(text, module)


def _chain(steps: int):
    import ember
    import ember.numpy as jnp
    from ember.lowering import lower_jaxpr

    def f(x):
        outs = []
        for _ in range(steps):
            x = jnp.exp(x) * 0.5  # read twice: by the next step and by the output below
            outs.append(x + 1)
        return outs

    return lower_jaxpr(ember.make_jaxpr(f)(np.ones(16, np.float32))).module


@pytest.mark.parametrize("policy", [FusionPolicy(), ON])
def test_expensive_ops_under_copied_producers_are_computed_once(policy):
    # each step's `exp(x) * .5` is copied into the two kernels reading it; copying the exp
    # with it copied every earlier step too (quadratic work and compile time)
    steps = 40
    module = _chain(steps)
    Fusion(policy).run(module)
    fusions = [i for i in module.entry.instructions if i.opcode == "fusion"]
    lone = [i for i in module.entry.instructions if i.opcode == "exponential"]
    assert sum(_opcodes(f).count("exponential") for f in fusions) + len(lone) == steps
    if policy.multi_output_fusion:  # the steps' kernels merge, a few per kernel
        assert len(fusions) <= steps // 2
        assert all(len(f.shape.tuple_shapes) <= fusion_merge.MAX_OUTPUTS for f in fusions
                   if f.shape.is_tuple)
    x = np.linspace(-1, 0.5, 16, dtype=np.float32)
    for g, w in zip(evaluate(module, x), evaluate(_chain(steps), x)):
        np.testing.assert_array_equal(g, w)


def test_reaches_reduction_agrees_with_the_walk():
    from ember.passes.fusion_rules import _feeds_reduction, reaches_reduction

    text = """HloModule r
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[4,6], w: f32[6,6]) -> (f32[4], f32[4,6], f32[4,6]) {
  %x = f32[4,6] parameter(0)
  %w = f32[6,6] parameter(1)
  %e = f32[4,6] exponential(%x)
  %n = f32[4,6] negate(%e)
  %z = f32[] constant(0)
  %d = f32[4,6] dot(%n, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %m = f32[4,6] multiply(%d, %e)
  %r = f32[4] reduce(%m, %z), dimensions={1}, to_apply=%sum
  ROOT %out = (f32[4], f32[4,6], f32[4,6]) tuple(%r, %n, %d)
}
"""
    comp = parse_module(text).entry
    order = comp.post_order()
    got = reaches_reduction(order)
    assert got == {i: _feeds_reduction(i) for i in order}
    names = {i.name: v for i, v in got.items()}
    assert names["e"] and names["d"] and not names["n"]  # (n reaches it through the dot)


# a cycle only through an earlier merge: {exp, s2} is one kernel (s2 reads the exp at its
# index), so a reader of the exp waits for the product s2 also reads; the product reads
# r4; merging r4's kernel with g3's (both read x) would make the exp's reader feed it
CYCLE_THROUGH_A_MERGE = """HloModule cycle2
ENTRY %main (x: f32[8], w: f32[8,8]) -> (f32[8], f32[8]) {
  %x = f32[8] parameter(0)
  %w = f32[8,8] parameter(1)
  %l1 = f32[8] exponential(%x)
  %two = f32[] constant(2)
  %twob = f32[8] broadcast(%two), dimensions={}
  %r4 = f32[8] multiply(%x, %twob)
  %d = f32[8] dot(%w, %r4), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %s2 = f32[8] add(%l1, %d)
  %rev = f32[8] reverse(%l1), dimensions={0}
  %g3 = f32[8] add(%rev, %x)
  ROOT %out = (f32[8], f32[8]) tuple(%s2, %g3)
}
"""


def test_a_cycle_through_an_earlier_merge_is_refused():
    from ember.hlo.verifier import verify

    module, fusions = _fused(CYCLE_THROUGH_A_MERGE,
                             FusionPolicy(multi_output_fusion=True, output_fusion=False))
    verify(module)  # (raises on a cycle)
    merged = {m.first + "+" + m.second for m in module.fusion_merges}
    assert "l1+s2" in merged and not any("r4" in m for m in merged), merged
    assert any("form a cycle" in d.reason for d in module.fusion_decisions)
    _same_values(CYCLE_THROUGH_A_MERGE, module)
