"""A shard_map called again on arrays of the same signature reuses its traced body: the
first call traces and evaluates the stages with NumPy, the second compiles the body once
as a per-device module with its collectives (or, where it cannot be one, each stage
between collectives), later calls trace and compile nothing (counted with the compile
events every compilation reports); the results are the same on every call."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import compile_events, lax
from ember.sharding import NamedSharding, P


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((4,), ("i",))


@pytest.fixture
def compiles():
    names: list[str] = []

    def factory(closed, name):
        names.append(name)
        return None

    compile_events.add_compile_watcher(factory)
    yield names
    compile_events.remove_compile_watcher(factory)


@pytest.mark.parametrize("one_module", [True, False])
def test_repeat_calls_neither_trace_nor_compile_again(mesh, compiles, one_module,
                                                      monkeypatch):
    if not one_module:  # (a body that cannot be one module: its stages compile)
        from ember.spmd import _per_device

        def refuse(*args):
            raise NotImplementedError("not one module")
        monkeypatch.setattr(_per_device, "PerDeviceBody", refuse)
    traces = []

    def body(a, b):
        traces.append(a.shape)
        s = lax.psum(jnp.tanh(a) * b, "i")  # (three stages: axis_index is a collective)
        return jnp.exp(s * 0.5) + lax.axis_index("i")

    f = ember.shard_map(body, mesh=mesh, in_specs=(P("i"), P("i")), out_specs=P("i"))
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
    y = np.linspace(2, 0, 32, dtype=np.float32).reshape(8, 4)
    blocks = [np.tanh(x[2 * k:2 * k + 2]) * y[2 * k:2 * k + 2] for k in range(4)]
    total = sum(blocks)
    want = np.concatenate([np.exp(total * np.float32(0.5)) + k for k in range(4)])
    outs = []
    counts = []
    for _ in range(5):
        outs.append(np.asarray(f(x, y)))
        counts.append(len(compiles))
    assert len(traces) == 1  # (traced on the first call only)
    # the first call compiles nothing; the second compiles the body (else each stage) once;
    # then none
    assert counts[0] == 0 and counts[1] == (1 if one_module else 3), counts
    assert counts[4] == counts[1], counts
    assert all(n.startswith("shard_map_body" if one_module else "shard_map_stage")
               for n in compiles), compiles
    for got in outs:
        np.testing.assert_allclose(got, want, rtol=2e-6)
    # compiled stages give what the NumPy ones gave (the first call's)
    for got in outs[1:]:
        np.testing.assert_allclose(got, outs[0], rtol=1e-6, atol=1e-7)
    # another signature traces (and later compiles) its own
    f(x[:4], y[:4])
    assert len(traces) == 2
    # sharded arguments laid out as the specs lend their blocks; same cached body
    xs = ember.device_put(x, NamedSharding(mesh, P("i")))
    ys = ember.device_put(y, NamedSharding(mesh, P("i")))
    before = len(compiles)
    np.testing.assert_allclose(np.asarray(f(xs, ys)), want, rtol=2e-6)
    assert len(traces) == 2 and len(compiles) == before


def test_a_body_reading_a_global_traces_once_per_signature(mesh):
    """As jit: the traced body is kept, so a Python value it read is baked in."""
    scale = [2.0]
    f = ember.shard_map(lambda a: lax.psum(a * scale[0], "i"), mesh=mesh, in_specs=P("i"),
                        out_specs=P())
    x = np.ones((4, 2), np.float32)
    first = np.asarray(f(x))
    scale[0] = 3.0
    np.testing.assert_array_equal(np.asarray(f(x)), first)
    np.testing.assert_array_equal(first, np.full((1, 2), 8.0, np.float32))
