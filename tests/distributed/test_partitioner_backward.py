"""Backward sharding propagation (passes/spmd_backward.py): the shardings readers, outputs
and loops want flow back to the values they read. An argument given no sharding takes the
one its readers want (each device then receives only its block), an elementwise op whose
operands disagree takes the one its reader wants, and a loop's whole carry enters split:
each case is compared with the forward pass alone on the same module (collectives counted
as ember.explain.collectives counts them)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.passes.spmd_partitioner import _Partitioner, partition
from ember.sharding import NamedSharding, P
from ember.spmd._partitioned import mesh_axes, to_hlo

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _forward_and_both(fn, args, given, free, outs=None):
    """The collectives of the forward pass alone and of forward + backward, over the same
    module."""
    mesh = next(s for s in list(given.values()) + list(outs or []) if s is not None).mesh
    module = ember.jit(fn).lower(*args)._lowered.module
    axes = mesh_axes(mesh)
    params = {k: to_hlo(s, np.ndim(args[k])) for k, s in given.items()}
    want = None if outs is None else [None if s is None else to_hlo(s, 2) for s in outs]
    alone = _Partitioner(module, axes, params, want, frozenset(free)).run()
    both = partition(module, axes, params, want, free)
    return alone, both


def test_unannotated_argument_takes_its_readers_sharding(mesh):
    x, y = _arr(8, 6), _arr(8, 6)
    rows = NamedSharding(mesh, P("data"))
    f = ember.jit(lambda a, b: jnp.tanh(a) * b + 1, in_shardings=(rows, None))
    c = f.lower(x, y).compile()
    assert c.program.in_shardings[1] == to_hlo(rows, 2)  # (was whole: every device all of y)
    assert "Arg_1: f32[4,6]" in c.as_text() and "dynamic-slice" not in c.as_text()
    out = c(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ember.jit(f.fun)(x, y)))
    report = ember.explain.collectives(f, x, y)
    assert report.chosen == [("b", P("data"))]
    assert "arguments given no sharding, cut as their readers want: b P('data',)" in str(report)
    # a contraction: the unannotated side is cut as the split side's contracted dim
    w = _arr(6, 4)
    g = ember.jit(lambda a, b: a @ b, in_shardings=(NamedSharding(mesh, P(None, "model")),
                                                    None))
    c = g.lower(x, w).compile()
    assert c.program.in_shardings[1] == to_hlo(NamedSharding(mesh, P("model")), 2)
    assert [k.opcode for k in c.partition_report.collectives] == ["all-reduce"]
    np.testing.assert_allclose(np.asarray(c(x, w)), x @ w, rtol=1e-5, atol=1e-5)


def test_argument_read_two_ways_stays_whole(mesh):
    """Readers that disagree (or one that reads it whole) keep an unannotated argument
    whole: a split one would then be gathered, a whole one is sliced for free."""
    x, y = _arr(8, 8), _arr(8, 8)
    rows = NamedSharding(mesh, P("data"))
    f = ember.jit(lambda a, b: (a + b, a.T + b), in_shardings=(rows, None))
    c = f.lower(x, y).compile()
    assert c.program.in_shardings[1].is_replicated
    assert not c.partition_report.collectives
    g = ember.jit(lambda a, b: (a + b, jnp.cumsum(b, axis=0)), in_shardings=(rows, None))
    c = g.lower(x, y).compile()
    assert c.program.in_shardings[1].is_replicated
    got = c(x, y)
    np.testing.assert_allclose(np.asarray(got[1]), np.cumsum(y, axis=0), rtol=1e-5, atol=1e-6)


def test_unannotated_loop_carry_enters_split_and_the_loop_stops_gathering(mesh):
    x0, y = _arr(8, 6), _arr(8, 6)
    rows = NamedSharding(mesh, P("data"))

    def loop(a, b):
        return lax.fori_loop(0, 3, lambda i, v: v * 2 + b, a)

    alone, both = _forward_and_both(loop, (x0, y), {1: rows}, free=[0])
    # forward only: the carry (whole, as x0) is gathered at the end of every iteration
    assert [(c.opcode, bool(c.where)) for c in alone.report.collectives] == [
        ("all-gather", True)]
    assert not both.report.collectives
    assert both.in_shardings[0] == to_hlo(rows, 2)
    f = ember.jit(loop, in_shardings=(None, rows))
    report = ember.explain.collectives(f, x0, y)
    assert report.collectives == [] and report.bytes_sent == 0
    out = f(x0, y)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ember.jit(loop)(x0, y)))
    assert out.sharding.spec == P("data")


def test_operands_that_disagree_follow_the_wanted_output(mesh):
    x, y = _arr(8, 6), _arr(8, 6)
    rows, cols = NamedSharding(mesh, P("data")), NamedSharding(mesh, P(None, "data"))

    def fn(a, b):
        return jnp.sin(a) + b

    alone, both = _forward_and_both(fn, (x, y), {0: rows, 1: cols}, free=[], outs=[cols])
    # (rows to columns: an all-to-all for b, then one for the sum to the wanted output)
    assert [c.opcode for c in alone.report.collectives] == ["all-to-all", "all-to-all"]
    assert len(both.report.collectives) == 1
    f = ember.jit(fn, in_shardings=(rows, cols), out_shardings=cols)
    report = ember.explain.collectives(f, x, y)
    assert len(report.collectives) == 1
    assert report.bytes_sent == alone.report.collectives[0].bytes_sent
    out = f(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ember.jit(fn)(x, y)))
    assert out.sharding == cols


def test_nothing_wanted_means_one_pass(mesh, monkeypatch):
    """Annotated arguments and no disagreement: the backward pass changes nothing, so the
    module is partitioned once (no second forward pass)."""
    import ember.passes.spmd_partitioner as sp

    runs = []
    real = sp._Partitioner.run
    monkeypatch.setattr(sp._Partitioner, "run", lambda self: runs.append(1) or real(self))
    rows = NamedSharding(mesh, P("data"))
    x = _arr(8, 6)
    ember.jit(lambda a, b: a * b, in_shardings=(rows, rows)).lower(x, x).compile()
    assert len(runs) == 1


THROUGH = [
    ("reshape", lambda a, b: a + b.reshape(8, 6), (4, 2, 6), P("data")),
    ("slice_reverse", lambda a, b: a + b[:, 1:7][:, ::-1], (8, 8), P("data")),
    ("concatenate", lambda a, b: jnp.concatenate([a, b[:, :2]], axis=1), (8, 8), P("data")),
    ("pad", lambda a, b: a + jnp.pad(b, ((0, 0), (1, 1))), (8, 4), P("data")),
    ("transpose_broadcast", lambda a, b: a + b.T[:, :1], (6, 8), P(None, "data")),
]


@pytest.mark.parametrize("name,fn,shape,taken", THROUGH, ids=[t[0] for t in THROUGH])
def test_wants_flow_through_reshapes_slices_and_pads(mesh, name, fn, shape, taken):
    x, y = _arr(8, 6), _arr(*shape)
    f = ember.jit(fn, in_shardings=(NamedSharding(mesh, P("data")), None))
    c = f.lower(x, y).compile()
    assert c.program.in_shardings[1] == to_hlo(NamedSharding(mesh, taken), len(shape))
    assert not c.partition_report.collectives
    np.testing.assert_array_equal(np.asarray(c(x, y)), np.asarray(ember.jit(fn)(x, y)))
