"""What a shard_map body's collectives move: each HLO collective of the body's per-device
module (the body compiled as one module, ember/spmd/_per_device.py) with the bytes a
device sends and receives.

Input: a function made by `ember.shard_map` and example arguments (it is called once, on
them, which traces the body). Output: a `CollectivesReport` (explain/partitioning.py; no
refusals: shard_map's collectives are the user's). Bytes are counted as the partitioner
counts its own (passes/spmd_reshard.py, a ring's: all-reduce 2(n-1)/n of its buffer,
all-gather (n-1)/n of its result, reduce-scatter and all-to-all (n-1)/n of their operand);
a collective-permute moves its whole operand from each source to its target, and the
report gives the busiest device's bytes (a pair from a device to itself moves nothing).
A collective in a loop's body is listed once, marked with the loop body's computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.explain.partitioning import CollectivesReport
from ember.hlo.evaluator.collectives import COLLECTIVES
from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape
from ember.passes.spmd_reshard import Collective


def _nbytes(shape: Shape) -> int:
    return math.prod(shape.dimensions) * np.dtype(shape.dtype).itemsize


def _moved(inst: Instruction) -> tuple[int, int, int]:
    """(group size, bytes sent, bytes received) per device."""
    if inst.opcode == "collective-permute":
        pairs = [(s, t) for s, t in inst.attrs["source_target_pairs"] if s != t]
        size = _nbytes(inst.operand.shape)
        sent = size if pairs else 0
        return len({d for p in pairs for d in p}), sent, sent
    n = len(inst.attrs["replica_groups"][0])
    if inst.opcode == "all-reduce":
        moved = 2 * (n - 1) * _nbytes(inst.shape) // n
    elif inst.opcode == "all-gather":
        moved = (n - 1) * _nbytes(inst.shape) // n
    else:  # (reduce-scatter, all-to-all)
        moved = (n - 1) * _nbytes(inst.operand.shape) // n
    return n, moved, moved


def shard_map_collectives(f: Callable, *args: Any) -> CollectivesReport:
    """The collectives of `f`'s per-device module for `args` (see the module docstring)."""
    from ember.spmd._per_device import lower_per_device

    f(*args)
    traced = getattr(f, "_traced", None)
    if not traced:
        raise ValueError("collectives(f, ...): this shard_map body holds a collective in a "
                         "loop or a branch, so it runs as one program over all the blocks "
                         "(no per-device module to report)")
    key, entry = list(traced.items())[-1]  # (the signature the call just used)
    mesh = key[0]
    lowered = lower_per_device(entry.closed, mesh)
    module = lowered.module
    found = []
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode not in COLLECTIVES:
                continue
            n, sent, received = _moved(inst)
            found.append(Collective(
                inst.opcode, inst.name or "", str(inst.shape.without_layout()), n, sent,
                received, str(inst.metadata.get("op_name", "")),
                "" if comp is module.entry else f"in %{comp.name}"))
    return CollectivesReport(getattr(f, "__name__", "f"), mesh.devices.size,
                             module.as_hlo_text(), found, [])
