"""Resharding a value from one split dimension to another is an all-to-all (each device
keeps 1/n of its block and swaps the rest), not an all-gather of the whole dimension and
a slice of the other: the results are the unpartitioned program's bit for bit, every
shard is its block, and the bytes each device moves are (n-1)/n of its block, n times
fewer than the gather."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.sharding import NamedSharding, P

RNG = np.random.default_rng(3)
X = RNG.standard_normal((8, 12, 4)).astype(np.float32)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _f(v):
    return jnp.sin(v) * 2


# (from, to, the size n of the all-to-all's groups)
CASES = [
    (P("data"), P(None, "data"), 2),
    (P(None, None, "model"), P("model"), 2),
    (P(("data", "model")), P(None, ("data", "model")), 4),
    (P("data", "model"), P(None, "model", "data"), 2),
    (P("data"), P(None, ("data", "model")), 2),  # (then a local slice over `model`)
]


@pytest.mark.parametrize("src,dst,n", CASES, ids=[f"{a}->{b}" for a, b, _ in CASES])
def test_reshard_between_dims_is_one_all_to_all(mesh, src, dst, n):
    f = ember.jit(_f, in_shardings=NamedSharding(mesh, src),
                  out_shardings=NamedSharding(mesh, dst))
    report = ember.explain.collectives(f, X)
    (c,) = report.collectives
    block = int(np.prod(NamedSharding(mesh, src).shard_shape(X.shape))) * 4
    assert (c.opcode, c.group_size) == ("all-to-all", n)
    assert c.bytes_sent == c.bytes_received == (n - 1) * block // n
    # (the all-gather it replaces received (n-1) blocks: n times more)
    assert "all-gather" not in report.module and "all-to-all(" in report.module
    want = np.asarray(ember.jit(_f)(X))
    out = f(X)
    np.testing.assert_array_equal(np.asarray(out), want)
    assert out.sharding == NamedSharding(mesh, dst)
    for sh in out.addressable_shards:
        np.testing.assert_array_equal(np.asarray(sh.data), want[sh.index])


def test_all_to_all_on_the_interpreter_too(mesh, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")  # (the evaluator runs the module)
    f = ember.jit(_f, in_shardings=NamedSharding(mesh, P("data")),
                  out_shardings=NamedSharding(mesh, P(None, "data")))
    out = f(X)
    assert [p.compiled.backend for _, p in f._partitioned.values()] == ["interpreter"]
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ember.jit(_f)(X)))


def test_all_to_all_text_and_shape_rule():
    from ember.hlo.parser import parse_module

    text = """HloModule m

ENTRY %main (p: f32[4,6]) -> f32[4,6] {
  %p = f32[4,6] parameter(0)
  ROOT %t = f32[4,6] all-to-all(%p), dimensions={1}, replica_groups={{0,1},{2,3}}
}
"""
    m = parse_module(text)
    assert parse_module(str(m)).as_hlo_text() == m.as_hlo_text()
    assert "all-to-all(%p), dimensions={1}, replica_groups={{0,1},{2,3}}" in str(m)
    from ember.hlo.verifier import verify

    verify(m)
    bad = parse_module(text.replace("{{0,1},{2,3}}", "{{0,1,2,3}}"))
    with pytest.raises(ValueError, match="does not split into 4 equal blocks"):
        verify(bad)
