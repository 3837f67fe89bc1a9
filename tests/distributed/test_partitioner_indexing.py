"""Partitioning of what used to be computed whole on every device: variadic reduces
(argmax, argmin: each device reduces its block, the small partial results are gathered and
reduced again), gathers and scatters (split along the dims they take whole, or along the
indices' batch dims): results equal the unpartitioned program's bit for bit, with no
refusal, and the communication is the partial results only; what still cannot be split
is refused with its reason."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.sharding import NamedSharding, P

RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _x():
    x = RNG.standard_normal((8, 6)).astype(np.float32)
    x[5, 4] = x[1, 4] = 9.0  # (a tie across the row blocks: the first index wins)
    x[6, 1] = np.nan  # (NaN wins argmax and argmin, as in JAX)
    x[:, 3] = -np.inf
    return x


def _run(fn, specs, *args, out=None):
    f = ember.jit(fn, in_shardings=tuple(NamedSharding(mesh_of(specs), s) if s is not None
                                         else None for s in specs[1]),
                  out_shardings=out)
    return f, ember.explain.collectives(f, *args)


def mesh_of(specs):
    return specs[0]


@pytest.mark.parametrize("spec", [P("data"), P(None, "model"), P("data", "model"),
                                  P(("data", "model"))])
def test_argmax_argmin_reduce_their_blocks_then_the_partials(mesh, spec):
    x = _x()

    def fn(v):
        return jnp.argmax(v, axis=0), jnp.argmin(v, axis=1)

    f, report = _run(fn, (mesh, [spec]), x)
    assert not report.refusals, report
    assert {c.opcode for c in report.collectives} <= {"all-gather"}
    # (only partial results move: at most 3 of the 4 devices' rows of the kept dims)
    assert all(c.bytes_received <= 3 * 8 * 4 for c in report.collectives), report
    got = f(x)
    want = ember.jit(fn)(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert int(np.asarray(got[0])[4]) == 1
