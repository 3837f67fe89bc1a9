"""`donate_argnums` on a jit partitioned over a mesh: each device writes its output block
into the donated argument's block where nothing else references that block, the donated
array is deleted by the call (using it again raises, as in JAX), data someone else still
sees is never written, and a donation no output can use warns as JAX does."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember
from ember.sharding import NamedSharding, P


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _step(v):
    return v * 2 + 1


def test_donated_blocks_take_the_outputs_and_the_array_is_deleted(mesh):
    s = NamedSharding(mesh, P("data", "model"))
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    f = ember.jit(_step, in_shardings=s, out_shardings=s, donate_argnums=0)
    xs = ember.device_put(x, s)
    where = sorted(b.ctypes.data for b in xs._shards.values())
    out = f(xs)
    assert xs.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        f(xs)
    assert sorted(b.ctypes.data for b in out._shards.values()) == where  # (written in place)
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)
    out2 = f(out)  # (a training loop's parameters: the same memory step after step)
    assert sorted(b.ctypes.data for b in out2._shards.values()) == where
    np.testing.assert_array_equal(np.asarray(out2), (x * 2 + 1) * 2 + 1)
    assert np.array_equal(x, np.arange(48, dtype=np.float32).reshape(8, 6))
    # without donation: fresh blocks, the argument stays
    g = ember.jit(_step, in_shardings=s, out_shardings=s)
    ys = ember.device_put(x, s)
    got = g(ys)
    assert not ys.is_deleted()
    assert not set(b.ctypes.data for b in got._shards.values()) & set(
        b.ctypes.data for b in ys._shards.values())


def test_a_block_someone_else_sees_is_not_written(mesh):
    s = NamedSharding(mesh, P("data", "model"))
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    f = ember.jit(_step, in_shardings=s, out_shardings=s, donate_argnums=0)
    xs = ember.device_put(x, s)
    held = np.asarray(xs.addressable_shards[0].data)  # (a user's view of one block)
    before = held.copy()
    out = f(xs)
    assert xs.is_deleted()
    np.testing.assert_array_equal(held, before)
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)
    # a replicated array's devices may share one buffer: never written either
    r = NamedSharding(mesh, P())
    xr = ember.device_put(x, r)
    out = ember.jit(_step, in_shardings=r, out_shardings=r, donate_argnums=0)(xr)
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)
    # a NumPy argument is cut into fresh blocks: donating it never touches the caller's
    out = f(x)
    np.testing.assert_array_equal(x, np.arange(48, dtype=np.float32).reshape(8, 6))
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)


def test_unusable_donation_warns(mesh):
    s = NamedSharding(mesh, P("data"))
    x = np.ones((8, 6), np.float32)
    f = ember.jit(lambda v: v.sum(), in_shardings=s, donate_argnums=0)
    xs = ember.device_put(x, s)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert float(f(xs)) == 48.0
    assert any("Some donated buffers were not usable: f32[8,6]" in str(w.message)
               for w in caught)
    assert xs.is_deleted()
