"""Why two operations were not fused: one reason per array that goes through memory.

Input: an `Analysis` (the fused module, whose fused copies carry `ember_origin`, and the
fusion pass's refusals). Output: `crossing_edges(analysis)` -> [CrossingEdge], one per
producer -> consumer edge between two kernels of the entry computation (the producer's
value is written to memory by one kernel and read back by another), each with the
fusion pass's reasons.
Where reasons come from, in order:
1. refusals recorded for exactly this (producer, consumer) pair;
2. else refusals recorded for this producer with another consumer (the producer had to be
   materialized for that one, and is then read from memory by every consumer);
3. else generic reasons read off the rules of `ember.passes.fusion` (the consumer is an op
   that fuses no producers, the producer is not loop-fusible, sibling multi-output fusion);
4. else "no recorded reason" (a gap in the fusion pass's bookkeeping; tests check the
   example programs never get it).
Invariants: program inputs (parameters) and constants are not kernel outputs, so edges
from them are not listed; reasons of the row fusion ("row fusion: ...") come first for a
consumer in a row fusion and last otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from ember.explain.analysis import Analysis, origin
from ember.hlo.cost_analysis import shape_bytes
from ember.hlo.ir import Instruction
from ember.passes.fusion import LOOP_FUSIBLE, ROOT_FUSIBLE

NO_KERNEL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "opt-barrier"})
UNKNOWN = "no recorded reason (the fusion pass did not log a refusal for this edge)"


@dataclass(frozen=True)
class CrossingEdge:
    producer: str          # the operation that computed the value (name before fusion)
    producer_op: str       # its opcode
    producer_kernel: str   # the kernel that writes it to memory
    consumer: str          # the operation that reads it (name before fusion)
    consumer_op: str
    consumer_kernel: str
    bytes: int             # size of the array going through memory
    reasons: tuple[str, ...]

    @property
    def reason(self) -> str:
        return self.reasons[0]

    def __str__(self) -> str:
        return (f"%{self.producer} ({self.producer_kernel}) -> %{self.consumer} "
                f"({self.consumer_kernel}), {format_bytes(self.bytes)}: {self.reason}")


def format_bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def _resolve(value: Instruction) -> tuple[Instruction, Instruction] | None:
    """(kernel, operation) computing an entry value; None for inputs and constants."""
    index = None
    if value.opcode == "get-tuple-element":
        index = value.attrs["index"]
        value = value.operand
    if value.opcode in NO_KERNEL:
        return None
    if value.opcode == "fusion":
        root = value.fused_computation.root
        if index is not None and root.opcode == "tuple":
            root = root.operands[index]
        return value, root
    return value, value


def _readers(kernel: Instruction, operand_index: int) -> list[Instruction]:
    """The operations inside `kernel` that read its operand `operand_index`."""
    if kernel.opcode != "fusion":
        return [kernel]
    comp = kernel.fused_computation
    param = next(p for p in comp.parameters if p.parameter_number == operand_index)
    return list(param.users) or [comp.root]


def _is_row(kernel: Instruction) -> bool:
    from ember.explain.kernels import kernel_kind

    return kernel_kind(kernel) == "row"


def _generic_reasons(producer: Instruction, producer_kernel: Instruction,
                     consumer: Instruction, consumer_kernel: Instruction) -> list[str]:
    out = []
    if consumer_kernel.opcode != "fusion" and consumer.opcode not in ROOT_FUSIBLE:
        out.append(f"{consumer.opcode} runs as its own kernel: only elementwise, shape and "
                   f"reduce operations take producers into their kernel")
    if producer.opcode not in LOOP_FUSIBLE and producer.opcode != "reduce":
        out.append(f"{producer.opcode} is not loop-fusible")
    if producer_kernel.opcode == "fusion" and producer_kernel.shape.is_tuple:
        out.append("result of a multi-output (sibling) fusion: siblings share one pass over "
                   "their input and write each result to memory")
    if producer.opcode == "reduce":
        out.append("reduce is not loop-fusible (a reduction's result is complete only after "
                   "its whole input is read)")
    return out


def crossing_edges(analysis: Analysis) -> list[CrossingEdge]:
    """Every array one kernel writes and another reads, with why it was not fused."""
    by_pair: dict[tuple[str, str], list[str]] = {}
    by_producer: dict[str, list[str]] = {}
    for d in analysis.decisions:
        for key, table in (((d.producer, d.consumer), by_pair), (d.producer, by_producer)):
            reasons = table.setdefault(key, [])  # type: ignore[arg-type]
            if d.reason not in reasons:
                reasons.append(d.reason)
    edges: list[CrossingEdge] = []
    for kernel in analysis.fused.entry.post_order():
        if kernel.opcode in NO_KERNEL:
            continue
        for i, operand in enumerate(kernel.operands):
            found = _resolve(operand)
            if found is None:
                continue
            p_kernel, producer = found
            for consumer in _readers(kernel, i):
                pname, cname = origin(producer), origin(consumer)
                reasons = (by_pair.get((pname, cname)) or by_producer.get(pname)
                           or _generic_reasons(producer, p_kernel, consumer, kernel))
                reasons = list(reasons)
                row_first = _is_row(kernel)
                reasons.sort(key=lambda r: r.startswith("row fusion") != row_first)
                edges.append(CrossingEdge(pname, producer.opcode, p_kernel.name or "",
                                          cname, consumer.opcode, kernel.name or "",
                                          shape_bytes(operand.shape),
                                          tuple(reasons) or (UNKNOWN,)))
    return edges


def format_report(analysis: Analysis) -> str:
    """The why-not-fused section: one line per crossing edge, then the other refusals, then
    the multi-output fusions formed (which groups merged, why, what the kernel writes)."""
    edges = crossing_edges(analysis)
    lines = []
    if not edges:
        lines.append("Every intermediate value stays inside a kernel: nothing crosses a kernel "
                     "boundary through memory.")
    for e in edges:
        lines.append(f"  {e}")
        for extra in e.reasons[1:]:
            lines.append(f"      also: {extra}")
    shown = {(e.producer, e.consumer) for e in edges}
    others = [d for d in analysis.decisions if (d.producer, d.consumer) not in shown]
    if others:
        lines.append("Other refusals (fusions not formed, producers fused another way):")
        for d in others:
            where = f"%{d.producer}" if d.producer == d.consumer else str(d).split(":")[0]
            lines.append(f"  {where}: {d.reason}")
    if analysis.merges:
        lines.append("Multi-output fusions formed (kernels merged so a shared value is "
                     "computed once and an input read once):")
        lines += [f"  {m}" for m in analysis.merges]
    return "\n".join(lines)
