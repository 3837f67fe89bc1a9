"""The collective-permute HLO op: its text (source_target_pairs as XLA prints them), shape
rule, and a per-device module holding it run on the 4 CPU devices of this process by the
partitioned runtime, on the CPU backend (a host callback) and on the interpreter (the
evaluator), bit for bit against NumPy: a shift, a permutation, partial pairs (a device no
pair targets gets zeros), over float32, int32, bool and bfloat16."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ember
from ember import backends
from ember.compiler import _compile_on
from ember.core.aval import ShapedArray
from ember.hlo.evaluator import EvaluationError, evaluate
from ember.hlo.parser import parse_module
from ember.hlo.shape import Shape
from ember.hlo.shape_inference import ShapeError, infer_shape
from ember.lowering import LoweredModule
from ember.spmd._partitioned import run_on_devices

TEXT = """HloModule permute

ENTRY %main (p: {t}[3,2], partition-id: s32[]) -> {t}[3,2] {{
  %p = {t}[3,2] parameter(0)
  %partition-id = s32[] parameter(1)
  ROOT %cp = {t}[3,2] collective-permute(%p), source_target_pairs={pairs}
}}
"""
PAIRS = {
    "shift": ((0, 1), (1, 2), (2, 3)),
    "ring": ((0, 1), (1, 2), (2, 3), (3, 0)),
    "permutation": ((0, 2), (2, 1), (1, 3), (3, 0)),
    "partial": ((3, 0), (1, 1)),
}
DTYPES = {"f32": np.float32, "s32": np.int32, "pred": np.bool_, "bf16": ml_dtypes.bfloat16}


def _text(pairs, t="f32") -> str:
    return TEXT.format(t=t, pairs="{" + ",".join(f"{{{s},{d}}}" for s, d in pairs) + "}")


def test_text_round_trips_as_xla_prints_it():
    m = parse_module(_text(PAIRS["permutation"]))
    text = m.as_hlo_text()
    assert "collective-permute(%p), source_target_pairs={{0,2},{2,1},{1,3},{3,0}}" in text
    assert parse_module(text).as_hlo_text() == text
    (cp,) = [i for i in m.entry.instructions if i.opcode == "collective-permute"]
    assert cp.attrs["source_target_pairs"] == ((0, 2), (2, 1), (1, 3), (3, 0))


@pytest.mark.parametrize("pairs,match", [
    (((0, 1), (0, 2)), "repeat one of their sources"),
    (((0, 1), (2, 1)), "repeat one of their targets"),
    (((0, 1, 2),), "pairs of partition ids"),
    (((-1, 0),), "pairs of partition ids"),
])
def test_shape_rule_refuses_bad_pairs(pairs, match):
    with pytest.raises(ShapeError, match=match):
        infer_shape("collective-permute", [Shape("f32", (4,))],
                    {"source_target_pairs": pairs}, [], None)
    assert infer_shape("collective-permute", [Shape("s32", (2, 3))],
                       {"source_target_pairs": ((0, 1),)}, [], None) == Shape("s32", (2, 3))


def test_outside_a_device_run_it_refuses():
    with pytest.raises(EvaluationError, match="runs only on the devices"):
        evaluate(parse_module(_text(PAIRS["ring"])), np.ones((3, 2), np.float32),
                 np.int32(0))


def _expected(blocks, pairs):
    src = {d: s for s, d in pairs}
    return [blocks[src[d]] if d in src else np.zeros_like(blocks[d])
            for d in range(len(blocks))]


@pytest.mark.parametrize("backend,t", [("cpu", t) for t in DTYPES] + [("interpreter", "f32")])
@pytest.mark.parametrize("kind", list(PAIRS))
def test_runs_on_four_devices(devices4, backend, t, kind):
    pairs = PAIRS[kind]
    dtype = np.dtype(DTYPES[t])
    module = parse_module(_text(pairs, t))
    lowered = LoweredModule(module, [], [ShapedArray((3, 2), dtype)], False)
    compiled = _compile_on(backends.get(backend), lowered, False, True, ())
    assert compiled is not None
    compiled = ember.callbacks.guard(compiled)
    mesh = ember.make_mesh((4,), ("i",))
    devices = list(mesh.devices.flat)
    rng = np.random.default_rng(3)
    blocks = [np.asarray(rng.standard_normal((3, 2)) * 9).astype(dtype) for _ in range(4)]
    if t == "f32":  # (IEEE values travel untouched)
        blocks[1][0] = [np.nan, -0.0]
    out = run_on_devices(compiled, mesh, devices, [[b] for b in blocks], None, 0, None)
    for k, (got, want) in enumerate(zip(out, _expected(blocks, pairs))):
        got = np.asarray(got[0])
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8),
                                      err_msg=f"device {k}")


def test_shard_map_ppermute_is_a_collective_permute_of_partition_ids(devices4):
    """Along one axis of a 2x2 mesh (partition ids row-major: (x, y) -> 2x + y), each
    group's pairs become pairs of partition ids; explain.collectives lists it with the
    bytes the busiest device moves."""
    from ember import lax
    from ember.sharding import P

    mesh = ember.make_mesh((2, 2), ("x", "y"))
    f = ember.shard_map(lambda a: lax.ppermute(a, "y", [(1, 0)])
                        + lax.ppermute(a, "x", [(0, 1), (1, 0)]),
                        mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    report = ember.explain.collectives(f, x)
    assert "source_target_pairs={{1,0},{3,2}}" in report.module, report.module
    assert "source_target_pairs={{0,2},{2,0},{1,3},{3,1}}" in report.module, report.module
    assert [c.opcode for c in report.collectives] == ["collective-permute"] * 2
    assert all(c.bytes_sent == c.bytes_received == 2 * 4 * 4 for c in report.collectives)
    assert "ppermute" in report.collectives[0].reason
    text = str(report)
    assert "2 collectives" in text and "64 B sent" in text, text
    b = [[x[:2, :4], x[:2, 4:]], [x[2:, :4], x[2:, 4:]]]
    z = np.zeros_like(b[0][0])
    want = np.block([[b[0][1] + b[1][0], z + b[1][1]], [b[1][1] + b[0][0], z + b[0][1]]])
    for _ in range(2):  # (NumPy stages, then the per-device module)
        np.testing.assert_array_equal(np.asarray(f(x)), want)
