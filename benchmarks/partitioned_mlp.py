"""An MLP's training step (value_and_grad + SGD under jit) partitioned over a 2x2 (data x
model) mesh of 4 CPU devices in one process, against the same step on one device, in the
same run: issue 27's goal (the same parameters after 20 steps, to 1e-5 relative) and what
the partitioning costs per step here (4 devices sharing this machine's cores: the ratio
shows the runtime's overhead, not a speed-up).

Prints the relative difference of each parameter after 20 steps, the collectives of the
per-device module (ember.explain.collectives), and the median step time of both.

Run:  python benchmarks/partitioned_mlp.py [--batch 256] [--hidden 512] [--repeat 21]
Informative only: shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import interleaved_median_ms  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--din", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--dout", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()

    import ember
    import ember.numpy as jnp
    from ember.config import config
    from ember.sharding import NamedSharding, P

    config.update("jax_num_cpu_devices", 4)
    mesh = ember.make_mesh((2, 2), ("data", "model"))
    rng = np.random.default_rng(0)
    params = {"w1": (rng.standard_normal((args.din, args.hidden)) * 0.05).astype(np.float32),
              "b1": np.zeros(args.hidden, np.float32),
              "w2": (rng.standard_normal((args.hidden, args.dout)) * 0.05).astype(np.float32),
              "b2": np.zeros(args.dout, np.float32)}
    x = rng.standard_normal((args.batch, args.din)).astype(np.float32)
    y = rng.standard_normal((args.batch, args.dout)).astype(np.float32)

    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    def step(p, x, y):
        value, g = ember.value_and_grad(loss)(p, x, y)
        return {k: p[k] - 0.1 * g[k] for k in p}, value

    ps = {"w1": NamedSharding(mesh, P(None, "model")), "b1": NamedSharding(mesh, P("model")),
          "w2": NamedSharding(mesh, P("model", None)), "b2": NamedSharding(mesh, P())}
    data = NamedSharding(mesh, P("data", None))
    sharded = ember.jit(step, in_shardings=(ps, data, data),
                        out_shardings=(ps, NamedSharding(mesh, P())))
    single = ember.jit(step)

    p1, p2 = dict(params), dict(params)
    for _ in range(20):
        p1, _ = sharded(p1, x, y)
        p2, _ = single(p2, x, y)
    print(f"MLP {args.din}-{args.hidden}-{args.dout}, batch {args.batch}: parameters after "
          "20 steps, 2x2 mesh vs one device (goal: <= 1e-5 relative)")
    worst = 0.0
    for k in params:
        a, b = np.asarray(p1[k]), np.asarray(p2[k])
        rel = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
        worst = max(worst, rel)
        print(f"    {k:<4} {str(p1[k].sharding.spec):<20} relative difference {rel:.2e}")
    print(f"    worst {worst:.2e}: {'met' if worst <= 1e-5 else 'NOT met'}")
    print()
    print(ember.explain.collectives(sharded, params, x, y))
    print()
    xs, ys = ember.device_put(x, data), ember.device_put(y, data)
    ps_on = {k: ember.device_put(v, ps[k]) for k, v in params.items()}
    times = interleaved_median_ms({
        "one device": lambda: single(params, x, y),
        "2x2 mesh, 4 devices": lambda: sharded(ps_on, xs, ys)}, args.repeat)
    base = times["one device"]
    print(f"{'step':<22} {'median ms':>10} {'vs one device':>14}")
    for name, ms in times.items():
        print(f"{name:<22} {ms:>10.3f} {ms / base:>13.2f}x")


if __name__ == "__main__":
    main()
