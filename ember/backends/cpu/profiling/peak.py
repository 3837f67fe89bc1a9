"""A kernel that runs the host's floating-point units flat out, to measure peak GFLOP/s.

Input: nothing (the host target from `llvm_target`). Output: `fma_kernel()` -> `FmaKernel`,
a native `void ember_peak(i64 iters)` and the f32 flops one iteration does.
The loop carries `ACCUMULATORS` independent vector accumulators, each updated with one fused
multiply-add per iteration:

    acc_j <- fma(acc_j, m, c)      m = 0.999999, c = 1e-7: the values stay bounded

An FMA has a latency of about 4 cycles and modern cores issue two per cycle, so at least
8 chains must be in flight to keep both units busy; 12 (16 with AVX-512's 32 registers)
leaves margin without spilling. One iteration is ACCUMULATORS * lanes * 2 flops; lanes
are 16 with AVX-512, 8 with AVX, else 4 (f32). The sum of the accumulators is stored to a
global so no chain is dead code.
Invariants: the kernel reads and writes no memory in its loop (compute only); the
measured peak is of this core type at its current clock (turbo included), which is what a
kernel running now gets.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir

from ember.backends.cpu.jit import llvm_target
from ember.codegen.irtypes import I64, VOID, i64

ENTRY = "ember_peak"
SINK = "ember_peak_sink"


@dataclass
class FmaKernel:
    engine: Any        # owns the code
    fn: Any            # ctypes function (iters: int64) -> None
    flops_per_iter: int
    lanes: int


def fma_ir(lanes: int, accumulators: int) -> str:
    """LLVM IR text of the peak kernel (see the module docstring)."""
    f32 = ir.FloatType()
    vec = ir.VectorType(f32, lanes)
    mod = ir.Module(name="ember_peak")
    sink = ir.GlobalVariable(mod, vec, name=SINK)
    sink.initializer = ir.Constant(vec, None)
    fma = ir.Function(mod, ir.FunctionType(vec, [vec] * 3), name=f"llvm.fma.v{lanes}f32")
    fn = ir.Function(mod, ir.FunctionType(VOID, [I64]), name=ENTRY)
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    m = ir.Constant(vec, [ir.Constant(f32, 0.999999)] * lanes)
    c = ir.Constant(vec, [ir.Constant(f32, 1e-7)] * lanes)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64, name="i")
    accs = [b.phi(vec, name=f"acc{j}") for j in range(accumulators)]
    new = [b.call(fma, [a, m, c]) for a in accs]
    nxt = b.add(i, i64(1))
    i.add_incoming(i64(0), entry)
    i.add_incoming(nxt, loop)
    for j, (a, n) in enumerate(zip(accs, new)):
        a.add_incoming(ir.Constant(vec, [ir.Constant(f32, 1.0 + j)] * lanes), entry)
        a.add_incoming(n, loop)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[0]), loop, done)
    b.position_at_end(done)
    total = new[0]
    for n in new[1:]:
        total = b.fadd(total, n)
    b.store(total, b.bitcast(sink, vec.as_pointer()))  # llvmlite types global pointers
    b.ret_void()
    return str(mod)


def fma_kernel() -> FmaKernel:
    """Compile the peak kernel for the host (a few tens of milliseconds)."""
    t = llvm_target.target()
    lanes = llvm_target.vector_bytes(t.features) // 4  # f32 lanes
    accumulators = 16 if lanes == 16 else 12
    llmod = llvm_target.parse_and_verify(fma_ir(lanes, accumulators))
    llvm_target.optimize(llmod)
    engine, address = llvm_target.load_object(llvm_target.emit_object(llmod), ENTRY)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_int64)(address)
    return FmaKernel(engine, fn, accumulators * lanes * 2, lanes)
