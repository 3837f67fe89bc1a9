"""Structural keys of kernels: kernels with equal keys compile to one LLVM function.

Input: a `KernelContext` whose kind is known and whose split extent is chosen. Output: a
hashable key, or None for kernels that are never shared. Two kernels with equal keys have
the same body: the same graph (the fused computation, or a lone instruction with the
scalar broadcasts inlined into it) printed canonically (instructions named by position,
shapes with their layouts, attributes, constants in full, called computations such as a
reduction's `to_apply` by their own canonical text), the same kernel kind, split extent
and inlinability, and the same argument pattern: each argument's shape, which arguments
are the same slot, and which argument every output, input and work buffer is. What may
differ is only which buffers the arguments point at, so the module emitter
(emitter.py) emits the first such kernel and has the entry call its function again, with
the other kernel's pointers, for the others. Invariant: the key holds everything the
shared kinds (`SHARED_KINDS`) read from their `KernelContext` (root, inputs, outputs, work
buffers, span); names and metadata are left out, as they do not change the code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.hlo.ir import Computation, Instruction
from ember.hlo.printer import format_computation, format_instruction, print_order

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

# Kinds whose code is a function of the key alone: each reads only the context's graph and
# buffers, and emits the one function the emitter calls (no extra calls: a dot's packing
# kernels, LAPACK workspaces and host callbacks stay one function per kernel).
SHARED_KINDS = frozenset({"loop", "reduce", "row", "scatter", "sort", "update_slice"})


def kernel_key(ctx: KernelContext, kind: str) -> tuple | None:
    """`ctx`'s structural key (see the module doc); None when its kind is not shared."""
    if kind not in SHARED_KINDS:
        return None
    inst = ctx.inst
    slots = ctx.arg_slots
    arg_of: dict = {}
    for k, s in enumerate(slots):
        arg_of.setdefault(s, k)  # (equal slots: the first argument)
    bound = ctx.bound
    cname: dict[Computation, str] = {}
    called: list[str] = []
    name: dict[Instruction, str] = {}
    lines: list[str] = []
    for i in _graph_order(ctx):
        name[i] = f"v{len(name)}"
        if i in bound:  # read from an argument: only its shape and argument matter
            lines.append(f"{name[i]} = {i.shape} arg{arg_of[bound[i]]}")
            continue
        for c in i.called_computations:
            _name_called(c, cname, called)
        lines.append(format_instruction(i, name, cname, mode="canonical"))
    if inst.opcode == "fusion":
        lines.append(f"fusion kind={inst.attrs.get('kind')}")
    lines.append(f"root={name[ctx.root]}")
    return (kind, ctx.extent, ctx.inlinable, ctx.in_loop, "\n".join(lines), tuple(called),
            tuple(str(s.shape) for s in slots), tuple(arg_of[s] for s in slots),
            tuple(arg_of[s] for s in ctx.outs), tuple(arg_of[s] for s in ctx.work))


def _graph_order(ctx: KernelContext) -> list[Instruction]:
    """The instructions the kernel's code is generated from, operands first: the fused
    computation's in print order, or a lone instruction's operands (an inlined scalar
    broadcast after its own operand), then the instruction."""
    inst = ctx.inst
    if inst.opcode == "fusion":
        return print_order(inst.fused_computation)
    order: list[Instruction] = []
    inlined = ctx.sched.inlined
    for o in inst.operands:
        for i in ([o.operands[0], o] if o in inlined and o not in ctx.bound else [o]):
            if i not in order:
                order.append(i)
    return [*order, inst]


def _name_called(comp: Computation, cname: dict[Computation, str], texts: list[str]) -> None:
    """Name `comp` (and, first, the computations it calls) by position in `texts`, which
    gets each one's canonical text."""
    if comp in cname:
        return
    for i in comp.instructions:
        for c in i.called_computations:
            _name_called(c, cname, texts)
    cname[comp] = f"c{len(texts)}"
    texts.append(format_computation(comp, cname, entry=False, mode="canonical"))


__all__ = ["SHARED_KINDS", "kernel_key"]
