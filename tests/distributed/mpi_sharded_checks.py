"""Run under `mpiexec -n 2` by test_mpi_sharded.py: shard_map across two processes of two
CPU devices each (a mesh of 4), against the same program on one process.

Checks: psum over all four devices, psum over the process axis of a 2x2 mesh with the
model axis kept, and a data-parallel training step (an MLP's value_and_grad under jit, the
gradients pmean'd over the batch axis, SGD) for 20 steps, whose parameters must equal the
single-process full-batch run's to 1e-5 relative. Each process prints one line
`sharded checks passed <process> <largest relative error>`, or raises.
"""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember import lax

ember.config.update("jax_num_cpu_devices", 2)
ember.distributed.initialize()

from ember.sharding import NamedSharding, P  # noqa: E402


def placed(a: np.ndarray, mesh: ember.sharding.Mesh, spec: P) -> ember.Array:
    return ember.make_array_from_callback(a.shape, NamedSharding(mesh, spec), lambda i: a[i])


def local(a: ember.Array) -> np.ndarray:
    return np.asarray(a.addressable_shards[0].data)


assert ember.process_count() == 2 and ember.device_count() == 4
assert [d.id for d in ember.local_devices()] == [2 * ember.process_index(),
                                                 2 * ember.process_index() + 1]

# psum over the four devices of both processes
mesh = ember.make_mesh((4,), ("i",))
x = np.arange(16.0, dtype=np.float32)
total = ember.shard_map(lambda v: lax.psum(v * 2, "i"), mesh=mesh, in_specs=P("i"),
                        out_specs=P())(placed(x, mesh, P("i")))
np.testing.assert_array_equal(local(total), (x.reshape(4, 4) * 2).sum(0))

# a 2x2 mesh: the sum over the process axis, the model axis kept
mesh2 = ember.make_mesh((2, 2), ("p", "d"))
y = np.arange(16.0, dtype=np.float32).reshape(4, 4)
out = ember.shard_map(lambda v: lax.psum(v, "p"), mesh=mesh2, in_specs=P("p", "d"),
                      out_specs=P(None, "d"))(placed(y, mesh2, P("p", "d")))
want = y[:2] + y[2:]
for shard in out.addressable_shards:
    np.testing.assert_array_equal(np.asarray(shard.data), want[shard.index])

# data-parallel training: the batch over the 4 devices, the parameters replicated
rng = np.random.default_rng(0)
X = rng.standard_normal((64, 16)).astype(np.float32)
Y = (X @ rng.standard_normal((16, 4)) > 0).astype(np.float32)
start = {"w1": rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
         "b1": np.zeros(32, np.float32),
         "w2": rng.standard_normal((32, 4)).astype(np.float32) * 0.3}


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)


grads = ember.jit(ember.value_and_grad(loss))


def step(p, x, y):
    value, g = grads(p, x, y)
    g = lax.pmean(g, "i")
    return lax.pmean(value, "i"), ember.tree.map(lambda a, b: a - 0.1 * b, p, g)


data_parallel = ember.shard_map(step, mesh=mesh, in_specs=(P(), P("i"), P("i")),
                                out_specs=(P(), P()))
xs, ys = placed(X, mesh, P("i")), placed(Y, mesh, P("i"))
p, q = start, start
for _ in range(20):
    _, p = data_parallel(p, xs, ys)
    _, g = grads(q, X, Y)
    q = ember.tree.map(lambda a, b: a - 0.1 * b, q, g)
err = max(float(np.max(np.abs(local(p[k]) - np.asarray(q[k])) / (np.abs(np.asarray(q[k]))
                                                                  + 1e-6))) for k in q)
assert err < 1e-5, err
print(f"sharded checks passed {ember.process_index()} {err:.2e}", flush=True)
ember.distributed.shutdown()
