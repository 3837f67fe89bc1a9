"""The SPMD partitioner pass on HLO text (no devices: the pass is HLO in, HLO out): which
collectives and local slices it inserts, the local shapes, the refusals, and "no change"
for a mesh of one device. Execution over devices: tests/distributed/test_partitioner.py."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ember.hlo.evaluator import EvaluationError, evaluate
from ember.hlo.parser import parse_module
from ember.hlo.sharding import HloSharding, block_index, replica_groups
from ember.hlo.verifier import verify
from ember.passes.spmd_partitioner import SpmdPartitioner

MESH = (("data", 2), ("model", 2))


def S(*dims):
    return HloSharding(MESH, tuple(tuple(d) if isinstance(d, tuple) else
                                   ((d,) if d else ()) for d in dims))


CHAIN = """HloModule chain

ENTRY %chain (x: f32[8,6], w1: f32[6,4], w2: f32[4,3]) -> f32[8,3] {
  %x = f32[8,6] parameter(0)
  %w1 = f32[6,4] parameter(1)
  %w2 = f32[4,3] parameter(2)
  %h = f32[8,4] dot(%x, %w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[8,4] tanh(%h)
  ROOT %y = f32[8,3] dot(%t, %w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def _run(text, params, outs=None):
    m = parse_module(text)
    p = SpmdPartitioner(MESH, params, outs)
    assert p.run(m)
    verify(m)
    return m, p


def test_matmul_chain_one_all_reduce_over_model():
    m, p = _run(CHAIN, {0: S("data", None), 1: S(None, "model"), 2: S("model", None)})
    text = str(m)
    assert "%x = f32[4,6]" in text and "%w1 = f32[6,2]" in text and "%w2 = f32[2,3]" in text
    assert "partition-id = s32[] parameter(3)" in text
    assert text.count("all-reduce(") == 1 and "all-gather" not in text
    assert re.search(r"all-reduce\(%y[.\d]*\), replica_groups=\{\{0,1\},\{2,3\}\}", text)
    assert p.out_shardings == [S("data", None)]
    assert not p.report.refusals


def test_replicated_operand_is_sliced_locally():
    text = """HloModule m

ENTRY %m (x: f32[8,6], b: f32[8,6]) -> f32[8,6] {
  %x = f32[8,6] parameter(0)
  %b = f32[8,6] parameter(1)
  ROOT %s = f32[8,6] add(%x, %b)
}
"""
    m, p = _run(text, {0: S("data", "model")})
    out = str(m)
    assert "dynamic-slice(%b" in out and "all-" not in out
    assert "constant({0, 0, 4, 4})" in out and "constant({0, 3, 0, 3})" in out
    # the device numbered 3 (data 1, model 1) gets rows 4.. and columns 3..
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    got = evaluate(m, x[4:, 3:], x, np.int32(3))
    np.testing.assert_array_equal(got, 2 * x[4:, 3:])


def test_reduce_scatter_for_partial_sums_wanted_split():
    text = """HloModule m

ENTRY %m (x: f32[8,6], w: f32[6,4]) -> f32[8,4] {
  %x = f32[8,6] parameter(0)
  %w = f32[6,4] parameter(1)
  ROOT %d = f32[8,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    m, _ = _run(text, {0: S(None, "model"), 1: S("model", None)}, [S("model", None)])
    out = str(m)
    assert "reduce-scatter(" in out and "dimensions={0}, replica_groups={{0,1},{2,3}}" in out
    assert "all-reduce" not in out and "-> f32[4,4]" in out


def test_refusals_and_gathers():
    text = """HloModule m

ENTRY %m (x: f32[8,6]) -> f32[6,8] {
  %x = f32[8,6] parameter(0)
  ROOT %r = f32[6,8] reshape(%x)
}
"""
    m, p = _run(text, {0: S(None, "model")})
    assert "all-gather(" in str(m) and "dimensions={1}" in str(m)
    assert [r.opcode for r in p.report.refusals] == ["reshape"]
    assert p.report.collectives[0].bytes_sent == 8 * 6 * 4 // 2  # (n-1)/n of the result


def test_collectives_need_the_devices():
    m, _ = _run(CHAIN, {0: S("data", None), 1: S(None, "model"), 2: S("model", None)})
    args = [np.ones((4, 6), np.float32), np.ones((6, 2), np.float32),
            np.ones((2, 3), np.float32), np.int32(0)]
    with pytest.raises(EvaluationError, match="runs only on the devices"):
        evaluate(m, *args)


def test_one_device_is_no_change():
    m = parse_module(CHAIN)
    before = str(m)
    assert not SpmdPartitioner((("i", 1),), {0: HloSharding((("i", 1),), (("i",), ()))}).run(m)
    assert str(m) == before


def test_groups_and_blocks():
    assert replica_groups(MESH, ("data",)) == ((0, 2), (1, 3))
    assert replica_groups(MESH, ("model", "data")) == ((0, 2, 1, 3),)
    assert [block_index(MESH, ("data", "model"), p) for p in range(4)] == [0, 1, 2, 3]
    assert [block_index(MESH, ("model", "data"), p) for p in range(4)] == [0, 2, 1, 3]
    assert S("data", ("model",)).local_shape((8, 6)) == (4, 3)


def test_whole_cheap_values_are_made_for_the_block():
    text = """HloModule m

ENTRY %m (x: f32[8,6]) -> f32[8,6] {
  %x = f32[8,6] parameter(0)
  %i = f32[8,6] iota(), iota_dimension=0
  %c = f32[] constant(2)
  %b = f32[8,6] broadcast(%c), dimensions={}
  %m = f32[8,6] multiply(%i, %b)
  %t = f32[6,8] transpose(%m), dimensions={1,0}
  %u = f32[8,6] transpose(%t), dimensions={1,0}
  ROOT %s = f32[8,6] add(%x, %u)
}
"""
    m, p = _run(text, {0: S("data", "model")})
    out = str(m)
    # every piece at the block's shape, the iota offset by the block's first row
    assert "f32[8,6]" not in out.split("partition-id")[1] and "f32[6,8]" not in out
    assert "iota(), iota_dimension=0" in out and "f32[4,3] iota()" in out
    assert not p.report.collectives
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    want = x + 2 * np.arange(8, dtype=np.float32)[:, None]
    for pid, (r, c) in enumerate([(0, 0), (0, 3), (4, 0), (4, 3)]):
        got = evaluate(m, x[r:r + 4, c:c + 3], np.int32(pid))
        np.testing.assert_array_equal(got, want[r:r + 4, c:c + 3])


LOOP = """HloModule loop

%cond (c: (s32[], f32[8,6])) -> pred[] {
  %c = (s32[], f32[8,6]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (c: (s32[], f32[8,6])) -> (s32[], f32[8,6]) {
  %c = (s32[], f32[8,6]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %x = f32[8,6] get-tuple-element(%c), index=1
  %k = f32[] constant(2)
  %kb = f32[8,6] broadcast(%k), dimensions={}
  %y = f32[8,6] multiply(%x, %kb)
  ROOT %t = (s32[], f32[8,6]) tuple(%j, %y)
}

ENTRY %main (x: f32[8,6]) -> f32[8,6] {
  %x = f32[8,6] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8,6]) tuple(%zero, %x)
  %w = (s32[], f32[8,6]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[8,6] get-tuple-element(%w), index=1
}
"""


def test_a_loop_runs_on_the_blocks_with_the_partition_id_carried():
    m, p = _run(LOOP, {0: S("data", "model")})
    out = str(m)
    # the carry keeps its split, and the partition id rides along as one more element
    assert "(s32[], f32[4,3], s32[]) while(" in out
    assert "f32[8,6]" not in out and not p.report.collectives and not p.report.refusals
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    np.testing.assert_array_equal(evaluate(m, x[4:, :3], np.int32(2)), 8 * x[4:, :3])
