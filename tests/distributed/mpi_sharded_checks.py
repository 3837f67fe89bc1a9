"""Run under `mpiexec -n 2` by test_mpi_sharded.py: shard_map across two processes of two
CPU devices each (a mesh of 4), against the same program on one process.

Checks: psum over all four devices, psum over the process axis of a 2x2 mesh with the
model axis kept, a table of ppermute (a shift, a permutation, partial pairs, two in a
row), all_gather, psum_scatter, all_to_all and axis_index over the four devices and of
ppermutes along each axis of the 2x2 mesh (each body called twice: its stages evaluated
with NumPy, then compiled as one per-device module; bit for bit against NumPy), and a
data-parallel training step (an MLP's value_and_grad under jit, the
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

# the table of collectives across the processes, each body called twice (its stages
# evaluated with NumPy, then the body compiled as one per-device module with HLO
# collectives), bit for bit against NumPy on the whole array (small integers in float32:
# every order of summation gives the same bits)
z = (np.arange(96) % 7 - 3).astype(np.float32).reshape(8, 12)
blocks = np.split(z, 4)  # (device k's block of P("i"))
TABLE = [
    ("ppermute shift", lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3)]),
     np.concatenate([np.zeros_like(blocks[0])] + blocks[:3])),
    ("ppermute permutation", lambda v: lax.ppermute(v, "i", [(0, 2), (2, 1), (1, 3), (3, 0)]),
     np.concatenate([blocks[3], blocks[2], blocks[0], blocks[1]])),
    ("ppermute partial", lambda v: lax.ppermute(v, "i", [(3, 0), (1, 2)]),
     np.concatenate([blocks[3], 0 * blocks[0], blocks[1], 0 * blocks[0]])),
    ("ppermute twice", lambda v: lax.ppermute(lax.ppermute(v, "i", [(0, 1), (1, 0), (2, 3),
                                                                    (3, 2)]), "i",
                                              [(0, 3), (3, 0)]) + v,
     np.concatenate([blocks[2] + blocks[0], blocks[1], blocks[2], blocks[1] + blocks[3]])),
    ("all_gather", lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
     np.concatenate([np.concatenate(blocks, axis=1)] * 4)),
    ("psum_scatter", lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
     np.concatenate(np.split(sum(blocks), 4, axis=1))),
    ("all_to_all", lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
     np.concatenate([np.concatenate([b[:, 3 * k:3 * k + 3] for b in blocks])
                     for k in range(4)])),
    ("axis_index", lambda v: v * lax.axis_index("i"),
     np.concatenate([b * k for k, b in enumerate(blocks)])),
]
for what, body, want in TABLE:
    f = ember.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    for call in ("stages", "per-device module"):
        got = f(placed(z, mesh, P("i")))
        for shard in got.addressable_shards:
            np.testing.assert_array_equal(np.asarray(shard.data), want[shard.index],
                                          err_msg=f"{what} ({call})")
    (entry,) = f._traced.values()
    assert entry.body.per_device is not None, what
# on the 2x2 mesh: pairs along the process axis and along the local one, and a ppermute
# over both axes at once
g = ember.shard_map(lambda v: lax.ppermute(v, "p", [(0, 1), (1, 0)]) * 10
                    + lax.ppermute(v, "d", [(1, 0)])
                    + lax.ppermute(v, ("p", "d"), [(0, 3), (3, 2), (2, 1)]) * 100,
                    mesh=mesh2, in_specs=P("p", "d"), out_specs=P("p", "d"))
y4 = [[y[:2, :2], y[:2, 2:]], [y[2:, :2], y[2:, 2:]]]  # [p][d] blocks
want2 = np.block([[y4[1][0] * 10 + y4[0][1], y4[1][1] * 10 + y4[1][0] * 100],
                  [y4[0][0] * 10 + y4[1][1] + y4[1][1] * 100, y4[0][1] * 10 + y4[0][0] * 100]])
for call in ("stages", "per-device module"):
    got = g(placed(y, mesh2, P("p", "d")))
    for shard in got.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), want2[shard.index],
                                      err_msg=f"2x2 ppermutes ({call})")

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
