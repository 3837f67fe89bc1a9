"""What partitioning a jitted function over a mesh costs in communication: each collective
of its per-device module with the bytes each device sends and receives, and the places the
partitioner could not keep a value split (its refusals), with their reasons.

Input: a `jit(f, in_shardings=..., out_shardings=...)` over a mesh of several devices (or a
jit whose arguments or constraints lay values out over one), or an `ember.shard_map`
function (its body's per-device module: explain/shard_map_collectives.py), and example
arguments (arrays, or ShapeDtypeStructs filled with random values). Output:
`collectives(f, *args)` -> `CollectivesReport` (`str()` prints the table; `module` is the
per-device HLO text), or ValueError when the call is not partitioned. A collective in a
loop's body is listed once and marked "each iteration of %body" (the totals count it
once). Arguments given no sharding are listed with the layout the partitioner chose for
them (`chosen`). Bytes are per device, as a ring moves them (ember/passes/spmd_reshard.py
says how each collective counts); in one process the runtime copies them in memory,
between processes MPI moves them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ember.explain.refusals import format_bytes


@dataclass
class CollectivesReport:
    name: str
    num_partitions: int
    module: str
    collectives: list[Any]  # spmd_reshard.Collective
    refusals: list[Any]  # spmd_reshard.Refusal
    # arguments given no sharding, as backward propagation laid them out: (name, spec)
    chosen: list[tuple[str, Any]] = field(default_factory=list)

    @property
    def bytes_sent(self) -> int:
        """Bytes each device sends over one call."""
        return sum(c.bytes_sent for c in self.collectives)

    @property
    def bytes_received(self) -> int:
        """Bytes each device receives over one call."""
        return sum(c.bytes_received for c in self.collectives)

    def __str__(self) -> str:
        lines = [f"jit({self.name}) over {self.num_partitions} devices: "
                 f"{len(self.collectives)} collectives, per device "
                 f"{format_bytes(self.bytes_sent)} sent, "
                 f"{format_bytes(self.bytes_received)} received per call"
                 + (" (a loop's counted once)" if any(c.where for c in self.collectives)
                    else "")]
        if self.collectives:
            lines.append(f"    {'collective':<28} {'shape':<16} {'group':>5} "
                         f"{'sent':>10} {'received':>10}  why")
        for c in self.collectives:
            lines.append(f"    {'%' + c.name:<28} {c.shape:<16} {c.group_size:>5} "
                         f"{format_bytes(c.bytes_sent):>10} "
                         f"{format_bytes(c.bytes_received):>10}  {c.reason}"
                         + (f", {c.where}" if c.where else ""))
        if self.chosen:
            lines.append("  arguments given no sharding, cut as their readers want: "
                         + ", ".join(f"{n} {s}" for n, s in self.chosen))
        lines.append(f"  refusals ({len(self.refusals)}): values the partitioner could not "
                     "keep split")
        for r in self.refusals:
            lines.append(f"    %{r.name} ({r.opcode}): {r.reason}")
        return "\n".join(lines)


def collectives(f: Callable, *args: Any, **kwargs: Any) -> CollectivesReport:
    """The collectives and refusals of `f`'s partitioned program (module docstring)."""
    from ember.api import JitFunction
    from ember.explain.roofline import concrete_arguments

    args, kwargs = concrete_arguments(args, kwargs)
    if hasattr(f, "_traced") and not kwargs:  # (a shard_map: its per-device module's)
        from ember.explain.shard_map_collectives import shard_map_collectives

        return shard_map_collectives(f, *args)
    lowered = f.lower(*args, **kwargs) if isinstance(f, JitFunction) else None
    compiled = lowered.compile() if lowered is not None else None
    report = getattr(compiled, "partition_report", None)
    if report is None:
        raise ValueError("collectives(f, ...): f is not partitioned for these arguments; "
                         "give jit in_shardings/out_shardings over a mesh of several "
                         "devices")
    program = compiled.program
    names = compiled._result.arg_names
    chosen = [(names[k], program._in_named[k].spec) for k in program.free
              if not program.in_shardings[k].is_replicated]
    return CollectivesReport(getattr(f, "_name", "f"), report.num_partitions,
                             compiled.as_text(), list(report.collectives),
                             list(report.refusals), chosen)
