"""Precise copies of kernels compiled on first use, not with the kernel.

Why: a kernel with fast sin/cos/tan reruns itself through `<kernel>.precise` (kernels.py,
`with_precise_rerun`) only when a lane was beyond the fast reduction's range, which most
programs never see; yet compiling that cold copy with the kernel cost ~2 ms of LLVM code
generation (of ~13 ms of LLVM work) in a fresh process's first call of the fusion example
(f32[1000]): LLVM's unoptimized code path (fast instruction selection) runs for the first
time there. (The rerun flag's reduction in the vector loop and this guarded call still
cost ~2 ms: what a kernel without fast trig does not pay.) So an executable's main module
holds no precise copy; each kernel reaches its copy through a pointer:

    @"<kernel>.precise.slot" = global ptr null         ; filled on first use
    ...  if the rerun flag is set:
    p = load atomic ptr @slot acquire
    if p == null: call @ember_precise_resolve(ptr @slot)   ; a ctypes callback (GIL taken)
    p = load atomic ptr @slot acquire
    if p != null: call p(<the kernel's arguments>)

The callback compiles the executable's *full* module (`mode="full"`: the same kernels and
stubs, plus every precise copy as an external function, exactly as emitted before and
with the same attributes), loads it into an engine of its own, and stores each copy's
address in its slot, once per executable. That full module is also what `llvm_ir`,
`unoptimized_ir` and `assembly()` of such an executable show, so inspection still finds
the kernel and its copy together.

Input: emission: `attach(module, mode)` on the LLVM module being emitted, then kernels.py
calls `PreciseSlots.call` for each unoptimized (`optnone`) copy; `optimized` copies (row
kernels, whose sums must add as the kernel's loops do) stay in the module. Runtime:
`LazyPrecise(engine, names, build)` after the main object is loaded (llvm_target.py).
Output: results identical to an in-module copy: the copy's IR is the same, `optnone`, and
IEEE operations are exact functions of their operands.
Invariants: a slot is written once, an aligned pointer store, after the copy's code is
linked and executable; readers load it with acquire ordering. The registry maps a slot's
address to its executable's `LazyPrecise` through a weak reference, dropped when that
dies (the executable owns it, with the engines). If building the full module fails (it
never should: the same IR compiled once already), the slots stay null, the kernel finishes
with its fast results, and the Python side of the call raises CpuCompileError instead of
returning them (`LazyPrecise.raise_if_failed`, after every call of such an executable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The runtime half (LazyPrecise, the slot registry, the ctypes resolver) lives in
# llvm_target.py, which a disk-cache hit imports anyway: linking an object that names
# SYMBOL then imports nothing more. Re-exported here.
from ember.backends.cpu.jit.llvm_target import PRECISE_SLOT_SUFFIX as SLOT_SUFFIX
from ember.backends.cpu.jit.llvm_target import PRECISE_STATS as STATS
from ember.backends.cpu.jit.llvm_target import PRECISE_SYMBOL as SYMBOL
from ember.backends.cpu.jit.llvm_target import LazyPrecise, register_precise_symbol

if TYPE_CHECKING:
    import llvmlite.ir as ir

__all__ = ["SLOT_SUFFIX", "STATS", "SYMBOL", "LazyPrecise", "PreciseSlots", "attach",
           "register_precise_symbol"]

_ATTR = "ember_precise_slots"  # the PreciseSlots of an ir.Module being emitted (kernels.py
# reads this attribute by name, so that modules without it never import this one)


class PreciseSlots:
    """Emission state: `mode` "lazy" (the main module: copies removed, stubs only) or
    "full" (copies kept, external, and the same stubs); `names` of the copies, in order."""

    def __init__(self, mode: str) -> None:
        assert mode in ("lazy", "full"), mode
        self.mode = mode
        self.names: list[str] = []

    def call(self, b: ir.IRBuilder, cold: ir.Function, args: list[ir.Value]) -> None:
        """The guarded call of `cold` through its slot, at `b`; in "lazy" mode `cold`
        leaves the module (the math helpers it used stay, unused: LLVM drops them)."""
        import llvmlite.ir as ir

        from ember.codegen.irtypes import PTR, VOID

        mod = b.module
        if self.mode == "lazy":
            del mod.globals[cold.name]
        else:
            cold.linkage = ""  # external: the resolver looks its address up
        slot = ir.GlobalVariable(mod, PTR, name=cold.name + SLOT_SUFFIX)
        slot.initializer = ir.Constant(PTR, None)
        self.names.append(cold.name)
        fnptr = cold.function_type.as_pointer()  # (prints as a pointer type LLVM accepts)
        null = ir.Constant(PTR, None)
        p = b.load_atomic(slot, "acquire", 8, typ=PTR)
        with b.if_then(b.icmp_unsigned("==", p, null), likely=False):
            resolve = mod.globals.get(SYMBOL)
            if resolve is None:
                resolve = ir.Function(mod, ir.FunctionType(VOID, [PTR]), name=SYMBOL)
            b.call(resolve, [slot])
        p = b.load_atomic(slot, "acquire", 8, typ=fnptr)
        with b.if_then(b.icmp_unsigned("!=", p, ir.Constant(fnptr, None)), likely=True):
            b.call(p, args)


def attach(module: ir.Module, mode: str) -> PreciseSlots:
    state = PreciseSlots(mode)
    setattr(module, _ATTR, state)
    return state

