"""Random programs (ember.testing's generators: elementwise math, broadcasting, reductions,
reshapes, slicing, `.at[]`, control flow, float16/int/bool; and loop programs) partitioned
over a 2x2 mesh of 4 CPU devices, each input split at random over the dims the mesh
divides: the results equal the unpartitioned jit's (integers and booleans exactly, floats
within the fuzzer's tolerance: sums may add in another order) and every device's shard of
an exact result is its block."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.lax as lax
import ember.numpy as jnp
from ember.sharding import NamedSharding, P
from ember.testing.loops import generate_loop
from ember.testing.programs import generate
from ember.testing.runner import compare, make_inputs

N_PROGRAMS = 60


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _random_spec(rng: np.random.Generator, shape: tuple[int, ...]) -> P:
    """Each mesh axis on at most one dim it divides (or on none)."""
    dims: list = [None] * len(shape)
    for axis in ("data", "model"):
        free = [d for d, n in enumerate(shape) if n % 2 == 0 and dims[d] is None]
        if free and rng.random() < 0.7:
            dims[int(rng.choice(free))] = axis
    return P(*dims)


def _split_programs(first_seed: int, count: int, loops: bool = False) -> list:
    """The first `count` programs from `first_seed` on that get an input split (those
    whose every dim the mesh does not divide say nothing about partitioning)."""
    out = []
    seed = first_seed
    while len(out) < count:
        rng = np.random.default_rng(seed)
        program = (generate_loop(rng, seed=seed) if loops
                   else generate(rng, x64=False, seed=seed))
        args = make_inputs(program.inputs, seed)
        specs = [_random_spec(rng, tuple(a.shape)) for a in args[:-1]]
        if any(any(p is not None for p in s) for s in specs):
            out.append((seed, program, args, specs))
        seed += 1
    return out


# (chunks of 20 programs; the last of 10 loop programs, whose loops are computed whole)
@pytest.mark.parametrize("chunk", range(N_PROGRAMS // 20 + 1))
def test_random_programs_partitioned(mesh, chunk):
    failures = []
    loops = chunk == N_PROGRAMS // 20  # (10 of them: a loop program compiles slowly)
    for seed, program, args, specs in _split_programs(10_000 * chunk, 10 if loops else 20,
                                                      loops):
        ns = {"jnp": jnp, "lax": lax, "ember": ember}
        exec(compile(program.source, "<program>", "exec"), ns)
        f = ns["f"]
        try:
            want = [np.asarray(v) for v in ember.jit(f)(*args)]
        except Exception:  # (a program the generator wrote that jit refuses: not ours)
            continue
        shardings = tuple(NamedSharding(mesh, s) for s in specs) + (None,)
        got = ember.jit(f, in_shardings=shardings)(*args)
        why = compare("partitioned", [np.asarray(v) for v in got], want, exact=False)
        for v, w in zip(got, want):
            for shard in getattr(v, "addressable_shards", []):
                block = np.asarray(shard.data)
                if not why and block.dtype.kind != "f" and not np.array_equal(
                        block, w[shard.index]):
                    why = f"device {shard.device.id}'s shard is not its block"
        if why:
            failures.append(f"seed {seed}, specs {specs}:\n{program.source}\n{why}")
    assert not failures, "\n\n".join(failures)
