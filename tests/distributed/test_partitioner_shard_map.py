"""jit(shard_map(...)) over a 2x2 mesh of 4 CPU devices: the one-program form of the body
carries sharding constraints (ember/spmd/_emulate.py), so the jit is partitioned
(passes/spmd_partitioner.py) into one per-device module, compiled once, that runs the body
on each device's block; the collectives come out as the HLO collectives the body names
(psum: all-reduce, psum_scatter: reduce-scatter, all_gather: all-gather, all_to_all:
all-to-all, ppermute: collective-permute, axis_index: none),
checked in the compiled text and the explain report, and the results equal the eager
shard_map's (the runtime's) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.sharding import NamedSharding, P

X = np.arange(48, dtype=np.float32).reshape(8, 6) * 0.25 - 5.0


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


# (name, body, in spec, out spec, collectives (opcode, per-device shape), per-device input)
CASES = [
    ("psum", lambda b: lax.psum(b * 2, "model"), P("data", "model"), P("data"),
     [("all-reduce", "f32[4,3]")], "f32[4,3]"),
    ("psum_both", lambda b: lax.psum(jnp.sin(b), ("data", "model")), P("data", "model"), P(),
     [("all-reduce", "f32[4,3]")], "f32[4,3]"),
    ("pmax", lambda b: lax.pmax(b, "data"), P("data", "model"), P(None, "model"),
     [("all-reduce", "f32[1,4,3]")], "f32[4,3]"),
    ("all_gather_tiled", lambda b: lax.all_gather(b, "model", axis=1, tiled=True),
     P("data", "model"), P("data"), [("all-gather", "f32[4,6]")], "f32[4,3]"),
    ("all_gather_stacked", lambda b: lax.all_gather(b, "data"), P("data"), P(),
     [("all-gather", "f32[2,4,6]")], "f32[4,6]"),
    ("all_to_all", lambda b: lax.all_to_all(b, "model", 0, 1, tiled=True), P(None, "model"),
     P("model"), [("all-to-all", "f32[2,4,3]")], "f32[8,3]"),
    ("axis_index", lambda b: b * lax.axis_index("model") + lax.axis_index("data"),
     P("data", "model"), P("data", "model"), [], "f32[4,3]"),
    ("matmul_psum", lambda b: lax.psum(b @ b.T, "model"), P("data", "model"), P("data"),
     [("all-reduce", "f32[4,4]")], "f32[4,3]"),
    ("psum_scatter", lambda b: lax.psum_scatter(b, "model", scatter_dimension=0, tiled=True),
     P(None, "model"), P("model"), [("reduce-scatter", "f32[4,3]")], "f32[8,3]"),
]


@pytest.mark.parametrize("name,body,i,o,colls,block", CASES, ids=[c[0] for c in CASES])
def test_jit_of_shard_map_runs_the_body_per_device(mesh, name, body, i, o, colls, block):
    sm = ember.shard_map(body, mesh=mesh, in_specs=i, out_specs=o, check_vma=False)
    want = sm(X)  # (eager: the runtime runs the body on each device)
    jf = ember.jit(sm)
    got = jf(X)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    assert got.sharding.is_equivalent_to(NamedSharding(mesh, o), X.ndim)
    report = ember.explain.collectives(jf, X)
    assert not report.refusals, report
    assert [(c.opcode, c.shape) for c in report.collectives] == colls, report
    text = jf.lower(X).compile().as_text()
    assert f"Arg_0: {block}" in text, text  # (each device's block, cut by the host)
    for op, _ in colls:
        assert f"{op}(" in text
    assert len(jf._partitioned) == 1  # (one per-device module for the four devices)


def test_data_parallel_step_under_jit(mesh):
    """A jitted data-parallel SGD step written with shard_map: the gradients pmean'd over
    the batch axis are all-reduces of the gradients' sizes, and 5 steps equal the eager
    shard_map's."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 6)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    p0 = {"w": rng.standard_normal((6, 2)).astype(np.float32) * 0.3,
          "b": np.zeros(2, np.float32)}

    def step(p, x, y):
        g = ember.grad(lambda p: jnp.mean((jnp.tanh(x @ p["w"] + p["b"]) - y) ** 2))(p)
        g = lax.pmean(g, ("data", "model"))
        return ember.tree.map(lambda a, b: a - 0.1 * b, p, g)

    sm = ember.shard_map(step, mesh=mesh, in_specs=(P(), P(("data", "model")),
                                                    P(("data", "model"))), out_specs=P())
    jf = ember.jit(sm)
    report = ember.explain.collectives(jf, p0, x, y)
    assert not report.refusals, report
    assert sorted((c.opcode, c.shape) for c in report.collectives) == [
        ("all-reduce", "f32[2]"), ("all-reduce", "f32[6,2]")], report
    p, q = p0, p0
    for _ in range(5):
        p, q = jf(p, x, y), sm(q, x, y)
    for k in p0:
        np.testing.assert_allclose(np.asarray(p[k]), np.asarray(q[k]), rtol=1e-6, atol=1e-7)


@pytest.fixture(scope="module")
def line(devices4):
    return ember.make_mesh((4,), ("x",))


def _ring(b):
    """A ring sum: each step passes the running block on to the next device."""
    def step(i, c):
        acc, cur = c
        cur = lax.ppermute(cur, "x", [(j, (j + 1) % 4) for j in range(4)])
        return acc + cur, cur
    return lax.fori_loop(0, 3, step, (b, b))[0]


def _shift_grad(b):
    return ember.grad(lambda v: jnp.sum(lax.ppermute(v, "x", [(0, 1), (1, 2), (2, 3)]) * v))(b)


# (name, mesh fixture, body, in spec, out spec, collective-permute pairs (partition ids),
#  how many, the block's shape and bytes per device)
PERMUTES = [
    ("shift", "line", lambda b: lax.ppermute(b, "x", [(j, (j + 1) % 4) for j in range(4)]),
     P("x"), P("x"), ((0, 1), (1, 2), (2, 3), (3, 0)), 1, "f32[1,2,6]", 48),
    ("permutation", "line",
     lambda b: lax.ppermute(b * 2, "x", [(0, 2), (1, 0), (2, 3), (3, 1)]), P("x"), P("x"),
     ((0, 2), (1, 0), (2, 3), (3, 1)), 1, "f32[1,2,6]", 48),
    ("partial_pairs", "line", lambda b: lax.ppermute(b - 1, "x", [(3, 0), (1, 2)]),
     P("x"), P("x"), ((3, 0), (1, 2)), 1, "f32[1,2,6]", 48),
    ("model_axis_of_2x2", "mesh", lambda b: lax.ppermute(jnp.sin(b), "model", [(0, 1), (1, 0)]),
     P("data", "model"), P("data", "model"), ((0, 1), (1, 0), (2, 3), (3, 2)), 1,
     "f32[1,1,4,3]", 48),
    ("data_axis_of_2x2_partial", "mesh", lambda b: lax.ppermute(b, "data", [(1, 0)]),
     P("data", "model"), P("data", "model"), ((2, 0), (3, 1)), 1, "f32[1,1,4,3]", 48),
    ("bool", "line", lambda b: lax.ppermute(b > 0, "x", [(0, 3), (3, 0)]), P("x"), P("x"),
     ((0, 3), (3, 0)), 1, "pred[1,2,6]", 12),
    ("ring_in_a_loop", "line", _ring, P("x"), P("x"),
     ((0, 1), (1, 2), (2, 3), (3, 0)), 1, "f32[1,2,6]", 48),
    # (the transpose: the inverse pairs)
    ("grad", "line", _shift_grad, P("x"), P("x"), ((0, 1), (1, 2), (2, 3)), 2,
     "f32[1,2,6]", 48),
]


@pytest.mark.parametrize("name,which,body,i,o,pairs,count,shape,nbytes", PERMUTES,
                         ids=[c[0] for c in PERMUTES])
def test_ppermute_under_jit_is_a_collective_permute(request, name, which, body, i, o, pairs,
                                                    count, shape, nbytes):
    """ppermute's one-program form (prims/collectives_permute.py) is partitioned into one
    collective-permute of each device's block, the pairs of members made pairs of
    partition ids (row-major over the mesh) per group; devices no pair targets get zeros,
    as the eager shard_map's: equal bit for bit, with no gather, select or refusal."""
    mesh = request.getfixturevalue(which)
    sm = ember.shard_map(body, mesh=mesh, in_specs=i, out_specs=o, check_vma=False)
    want = sm(X)
    jf = ember.jit(sm)
    got = jf(X)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    report = ember.explain.collectives(jf, X)
    assert not report.refusals, report
    assert [(c.opcode, c.shape, c.bytes_sent, c.bytes_received)
            for c in report.collectives] == [("collective-permute", shape, nbytes, nbytes)
                                             ] * count, report
    text = jf.lower(X).compile().as_text()
    # (no gather, and no select: the collective-permute leaves zeros where no pair targets)
    assert "gather(" not in text and "select(" not in text, text
    assert text.count("collective-permute(") == count, text
    stp = "{" + ",".join(f"{{{s},{t}}}" for s, t in pairs) + "}"
    assert f"source_target_pairs={stp}" in text, text
    if name == "ring_in_a_loop":  # (once per iteration: in the loop's body)
        assert report.collectives[0].where, report


def test_ppermute_of_a_block_not_split_is_computed_on_each_device(mesh):
    """An argument whole along the permuted mesh axis: every device of a group holds the
    same block, so each computes its result locally (no collective, no refusal)."""
    sm = ember.shard_map(lambda b: lax.ppermute(b, "data", [(0, 1)]), mesh=mesh,
                         in_specs=P(None, "model"), out_specs=P("data", "model"))
    jf = ember.jit(sm)
    assert np.asarray(jf(X)).tobytes() == np.asarray(sm(X)).tobytes()
    report = ember.explain.collectives(jf, X)
    assert not report.refusals and not report.collectives, report


def test_ppermute_over_two_mesh_axes_under_jit_says_so(mesh):
    """ppermute over (data, model) at once: eager shard_map runs it; under jit the one-program
    form (one vmap per mesh axis) cannot yet, and says so rather than pointing at vmap."""
    sm = ember.shard_map(lambda b: lax.ppermute(b, ("data", "model"), [(0, 3), (3, 2)]),
                         mesh=mesh, in_specs=P(("data", "model")),
                         out_specs=P(("data", "model")))
    sm(X)
    with pytest.raises(NotImplementedError, match=r"inside jit\(shard_map"):
        ember.jit(sm)(X)
