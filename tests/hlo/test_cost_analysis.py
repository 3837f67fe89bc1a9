"""Cost analysis against hand counts on small modules."""

import numpy as np
import pytest

from ember.hlo import Builder, Shape, cost_analysis, cost_breakdown, parse_module
from ember.hlo.cost_analysis import instruction_cost, shape_bytes

F4, F8 = Shape("f32", (4,)), Shape("f32", (8,))


def test_elementwise_chain():
    b = Builder("chain")
    x, y = b.parameter(F8), b.parameter(F8)
    s = b.sine(x)  # 8 transcendentals, 32 + 32 bytes
    m = b.multiply(s, y)  # 8 flops, 96 bytes
    c = b.broadcast(b.scalar(2.0, "f32"), (8,))  # 4 + 32 bytes, constant 0
    r = b.add(m, c)  # 8 flops, 96 bytes
    cost = cost_analysis(b.build(r))
    assert cost["flops"] == 16 and cost["transcendentals"] == 8
    assert cost["bytes accessed"] == 64 + 96 + 36 + 96
    assert cost["bytes accessed0{}"] == 32 + 32 + 4 + 32
    assert cost["bytes accessed1{}"] == 32 + 32
    assert cost["bytes accessedout{}"] == 4 * 32
    assert "optimal_seconds" not in cost


def test_elementwise_conventions():
    b = Builder("conv")
    x = b.parameter(F8)
    outs = [b.convert(x, "s32"),  # XLA: 1 flop per element
            b.bitcast_convert(x, "s32"),  # 0
            b.copy(x),  # 0
            b.power(x, x),  # transcendental only
            b.select(b.compare(x, x, "LT"), x, x),  # 8 + 8 flops
            b.clamp(x, x, x)]  # 8 flops
    cost = cost_analysis(b.build(b.tuple(outs)))
    assert cost["flops"] == 8 + 8 + 8 + 8
    assert cost["transcendentals"] == 8


def test_reduce_counts_reducer_applications():
    b = Builder("red")
    x = b.parameter(Shape("f32", (4, 5)))
    r = b.reduce(x, b.scalar(0, "f32"), [1], Builder.scalar_computation("add", "f32"))
    cost = cost_analysis(b.build(r))
    assert cost["flops"] == 20 - 4
    assert cost["bytes accessed"] == 80 + 4 + 16
    # a reducer with three flops (compare + 2 selects): argmax over 20 -> 4
    ab = Builder("argmax")
    s, si = Shape("f32", ()), Shape("s32", ())
    av, ai, bv, bi = ab.parameter(s), ab.parameter(si), ab.parameter(s), ab.parameter(si)
    ge = ab.compare(av, bv, "GE")
    argmax = ab.build_computation(ab.tuple([ab.select(ge, av, bv), ab.select(ge, ai, bi)]))
    b = Builder("am")
    x = b.parameter(Shape("f32", (4, 5)))
    i = b.iota(Shape("s32", (4, 5)), 1)
    r = b.reduce([x, i], [b.scalar(0, "f32"), b.scalar(0, "s32")], [1], argmax)
    assert cost_analysis(b.build(r))["flops"] == 3 * 16


def test_dot_batch_included():
    b = Builder("dot")
    lhs, rhs = b.parameter(Shape("f32", (2, 3, 4))), b.parameter(Shape("f32", (2, 4, 5)))
    d = b.dot(lhs, rhs, (2,), (1,), (0,), (0,))  # out f32[2,3,5], K = 4
    cost = cost_analysis(b.build(d))
    assert cost["flops"] == 2 * 2 * 3 * 5 * 4
    assert cost["bytes accessed"] == 4 * (24 + 40 + 30)


def _fused(b: Builder, x, y):
    fb = Builder("fused_computation")
    p0, p1 = fb.parameter(F4), fb.parameter(F4)
    fused = fb.build_computation(fb.add(fb.multiply(fb.sine(p0), p1), p1))
    return b.fusion(fused, [x, y])


def test_fusion_bytes_are_operands_and_output_only():
    b = Builder("f")
    x, y = b.parameter(F4), b.parameter(F4)
    cost = cost_analysis(b.build(_fused(b, x, y)))
    assert cost["flops"] == 8 and cost["transcendentals"] == 4
    assert cost["bytes accessed"] == 16 * 3
    assert cost["bytes accessed0{}"] == 16 and cost["bytes accessed1{}"] == 16
    b = Builder("unfused")
    x, y = b.parameter(F4), b.parameter(F4)
    unfused = cost_analysis(b.build(b.add(b.multiply(b.sine(x), y), y)))
    assert unfused["flops"] == 8 and unfused["bytes accessed"] == 32 + 48 + 48


def test_control_flow():
    st = Shape.tuple_of([Shape("s32", ()), F4])
    cb = Builder("cond")
    p = cb.parameter(st)
    cond = cb.build_computation(cb.compare(cb.get_tuple_element(p, 0), cb.scalar(5, "s32"),
                                           "LT"))  # 1 flop
    bb = Builder("body")
    p = bb.parameter(st)
    i, v = bb.get_tuple_element(p, 0), bb.get_tuple_element(p, 1)
    body = bb.build_computation(bb.tuple([bb.add(i, bb.scalar(1, "s32")), bb.exponential(v)]))
    branches = []
    for k, op in enumerate(("exponential", "negate")):
        br = Builder(f"branch{k}")
        branches.append(br.build_computation(br.unary(op, br.parameter(F4))))
    b = Builder("cf")
    x = b.parameter(F4)
    w = b.while_loop(cond, body, b.tuple([b.scalar(0, "s32"), x]))
    c = b.conditional(b.compare(b.scalar(1, "s32"), b.scalar(0, "s32"), "GT"), branches,
                      [x, x])
    m = b.build(b.tuple([w, c]))
    cost = cost_analysis(m)
    # while: one body (1 + 4 trans) + one condition (1); conditional: max(4 trans, 4 flops);
    # the compare selecting the branch: 1
    assert cost["flops"] == 1 + 1 + 4 + 1
    assert cost["transcendentals"] == 4 + 4
    rows = cost_breakdown(m)
    assert [r.opcode for r in rows][-1] == "tuple"
    assert sum(r.flops for r in rows) == cost["flops"]
    assert sum(r.bytes_accessed for r in rows) == cost["bytes accessed"]
    nested = cost_breakdown(m, nested=True)
    assert {r.computation for r in nested if r.depth == 1} == {"cond", "body", "branch0",
                                                              "branch1"}
    assert len(nested) > len(rows)
    assert all(r.depth == 0 for r in nested if r.computation == "cf")


def test_bytes_special_cases():
    m = parse_module("""\
HloModule t

ENTRY %t (x: f32[10,10], i: s32[]) -> (f32[100], f32[2,10], f32[3,3], f32[10,10]) {
  %x = f32[10,10] parameter(0)
  %i = s32[] parameter(1)
  %r = f32[100] reshape(%x)
  %s = f32[2,10] slice(%x), slice={[0:2:1], [0:10:1]}
  %d = f32[3,3] dynamic-slice(%x, %i, %i), dynamic_slice_sizes={3,3}
  %u = f32[10,10] dynamic-update-slice(%x, %d, %i, %i)
  ROOT %tup = (f32[100], f32[2,10], f32[3,3], f32[10,10]) tuple(%r, %s, %d, %u)
}
""")
    by = {inst.name: instruction_cost(inst) for inst in m.entry.instructions}
    assert by["r"]["bytes accessed"] == 0  # a bitcast reshape
    assert by["s"]["bytes accessed"] == 2 * 80
    assert by["d"]["bytes accessed"] == 2 * 36 + 4 + 4
    assert by["u"]["bytes accessed"] == 2 * 36 + 4 + 4
    assert by["u"]["bytes accessed0{}"] == 0 and by["u"]["bytes accessedout{}"] == 36
    assert by["tup"]["bytes accessed"] == 0 and by["x"]["bytes accessed"] == 0


def test_sort_and_shape_bytes():
    b = Builder("s")
    x = b.parameter(Shape("f32", (8,)))
    m = b.build(b.sort(x, 0, Builder.comparator("f32")))
    assert cost_analysis(m)["flops"] == 8 * 3
    assert shape_bytes(Shape.tuple_of([Shape("pred", (3,)), Shape("f64", (2,))])) == 19


@pytest.mark.parametrize("dtype,nbytes", [(np.float16, 2), (np.int64, 8), (np.bool_, 1)])
def test_element_sizes(dtype, nbytes):
    b = Builder("n")
    x = b.parameter(Shape.from_numpy(np.zeros(5, dtype)))
    assert cost_analysis(b.build(b.copy(x)))["bytes accessed"] == 10 * nbytes
