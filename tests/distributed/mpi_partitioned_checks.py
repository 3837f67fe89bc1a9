"""Run under `mpiexec -n 2` by test_mpi_partitioned.py: jit partitioned over a 2x2 (data x
model) mesh whose `data` axis spans the two processes (two CPU devices each), against the
same program on one device.

Checks: the (x @ w1) @ w2 chain (its all-reduce over `model` stays in a process), a
reshard from rows to columns split over `data` (an all-to-all across the processes), an
argmax over rows split across them, and an MLP's value_and_grad + SGD step for 20 steps,
its parameters donated (its gradient all-reduces over `data` cross the processes, through
MPI), whose parameters must equal the single-device run's to 1e-5
relative; each device's shard is compared with its block. Each process prints one line
`partitioned checks passed <process> <largest relative error>`, or raises.
"""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember import lax

ember.config.update("jax_num_cpu_devices", 2)
ember.distributed.initialize()

from ember.sharding import NamedSharding, P  # noqa: E402

assert ember.process_count() == 2 and ember.device_count() == 4
mesh = ember.make_mesh((2, 2), ("data", "model"))


def placed(a: np.ndarray, spec: P) -> ember.Array:
    return ember.make_array_from_callback(a.shape, NamedSharding(mesh, spec), lambda i: a[i])


def relative_error(got: ember.Array, want: np.ndarray) -> float:
    """The largest relative difference of this process's shards from their blocks."""
    worst = 0.0
    for shard in got.addressable_shards:
        block = want[shard.index]
        diff = np.linalg.norm(np.asarray(shard.data) - block)
        worst = max(worst, float(diff / max(np.linalg.norm(block), 1e-30)))
    return worst


rng = np.random.default_rng(0)
x = rng.standard_normal((8, 6)).astype(np.float32)
w1 = rng.standard_normal((6, 4)).astype(np.float32)
w2 = rng.standard_normal((4, 3)).astype(np.float32)
specs = (P("data", None), P(None, "model"), P("model", None))
chain = ember.jit(lambda a, b, c: (a @ b) @ c,
                  in_shardings=tuple(NamedSharding(mesh, s) for s in specs))
out = chain(*(placed(a, s) for a, s in zip((x, w1, w2), specs)))
errors = [relative_error(out, (x @ w1) @ w2)]

# rows split over `data` (across the processes) to columns: an all-to-all through MPI
to_cols = ember.jit(lambda a: jnp.sin(a) * 2, in_shardings=NamedSharding(mesh, P("data")),
                    out_shardings=NamedSharding(mesh, P(None, "data")))
assert "all-to-all(" in to_cols.lower(x).compile().as_text()
got = to_cols(placed(x, P("data")))
whole = np.asarray(ember.jit(lambda a: jnp.sin(a) * 2)(x))  # (Ember's sin, not NumPy's)
for shard in got.addressable_shards:
    assert np.array_equal(np.asarray(shard.data), whole[shard.index]), "all-to-all"
# argmax over rows split across the processes: partial results gathered, reduced again
first = ember.jit(lambda a: jnp.argmax(a, axis=0),
                  in_shardings=NamedSharding(mesh, P("data", "model")))
got = first(placed(x, P("data", "model")))
for shard in got.addressable_shards:
    assert np.array_equal(np.asarray(shard.data), np.argmax(x, axis=0)[shard.index]), "argmax"

# ppermute under jit(shard_map): a collective-permute along `data` (across the processes:
# MPI point to point) and one along `model` (in memory), equal to the eager shard_map's
moved = ember.shard_map(lambda v: lax.ppermute(v, "data", [(0, 1), (1, 0)]) * 10
                        + lax.ppermute(v, "model", [(1, 0)]), mesh=mesh,
                        in_specs=P("data", "model"), out_specs=P("data", "model"))
text = ember.jit(moved).lower(x).compile().as_text()
assert text.count("collective-permute(") == 2 and "gather(" not in text, text
xp = placed(x, P("data", "model"))
got, want = ember.jit(moved)(xp), moved(xp)
eager = {s.device: np.asarray(s.data) for s in want.addressable_shards}
for shard in got.addressable_shards:
    assert np.asarray(shard.data).tobytes() == eager[shard.device].tobytes(), "ppermute"

start = {"w1": (rng.standard_normal((12, 16)) * 0.3).astype(np.float32),
         "b1": (rng.standard_normal(16) * 0.1).astype(np.float32),
         "w2": (rng.standard_normal((16, 4)) * 0.3).astype(np.float32),
         "b2": np.zeros(4, np.float32)}
X = rng.standard_normal((32, 12)).astype(np.float32)
Y = rng.standard_normal((32, 4)).astype(np.float32)


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


def step(p, x, y):
    value, g = ember.value_and_grad(loss)(p, x, y)
    return {k: p[k] - 0.1 * g[k] for k in p}, value


pspecs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None), "b2": P()}
ps = {k: NamedSharding(mesh, s) for k, s in pspecs.items()}
ds = NamedSharding(mesh, P("data", None))
# (the parameters donated: each step writes them into the last step's blocks)
sharded = ember.jit(step, in_shardings=(ps, ds, ds), out_shardings=(ps, NamedSharding(mesh, P())),
                    donate_argnums=0)
single = ember.jit(step)
p = {k: placed(v, pspecs[k]) for k, v in start.items()}
xs, ys = placed(X, P("data", None)), placed(Y, P("data", None))
q = start
for _ in range(20):
    p, _ = sharded(p, xs, ys)
    q, _ = single(q, X, Y)
errors += [relative_error(p[k], np.asarray(q[k])) for k in q]
err = max(errors)
assert err < 1e-5, errors
print(f"partitioned checks passed {ember.process_index()} {err:.2e}", flush=True)
ember.distributed.shutdown()
