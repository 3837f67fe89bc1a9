"""LLVM IR of an eager math kernel: one vector-math opcode on one float type, one module.

Input: an opcode of `mathlib.VECTORIZED` (named `nm = VECTORIZED[op]` in symbols), an
element type (f16, f32, f64) and whether the thread pool runs here. Output: LLVM IR text of
  void @ember_eager_<nm>_<et>(ptr x, [ptr y,] ptr out, i64 n, i32 nthreads)
(and `<that>.table(ptr table)`, the same with its arguments in a table, for the fast-call
trampoline) which stores op(x[i][, y[i]]) into out[i] for i in [0, n); buffers are contiguous and do
not overlap (`noalias`). The element math is emitted by the very code a jit loop kernel
uses (`scalar_ops.emit_elementwise` -> `mathlib.emit_math`), and the loop body goes
through the jit kernels' precise-rerun wrapper (`kernels.with_precise_rerun`): the fast
sin/cos/tan variants raise a flag for huge arguments and, if any lane raised it, the span
runs again with the precise variants. The precise variants compute non-huge lanes with the
fast code, so an element's bits depend on that element alone, whatever else is in the
array or the kernel: eager and jit agree bit for bit.
Threads: with the pool (pool.py), `n >= threads.PARALLEL_MIN_ELEMENTS` and `nthreads > 1`,
the entry calls `ember_parallel_for(<entry>.span.chunk, data, n, nthreads)`: the calling
thread and awake workers run chunks [begin, end) of [0, n); otherwise the entry runs [0, n)
itself. Elementwise results cannot depend on the split.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.emit.kernels import with_precise_rerun
from ember.backends.cpu.mathlib import VECTORIZED
from ember.backends.cpu.runtime.pool import SYMBOL as POOL_SYMBOL
from ember.backends.cpu.runtime.threads import PARALLEL_MIN_ELEMENTS
from ember.codegen.elemental import Buf, load, store
from ember.codegen.irtypes import I32, I64, PTR, VOID, i64
from ember.codegen.loops import for_span
from ember.codegen.scalar_ops import emit_elementwise
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape

ELEMENT_TYPES = ("f16", "f32", "f64")


def kernel_opcodes() -> list[str]:
    """The opcodes that have eager kernels, sorted."""
    return sorted(VECTORIZED)


def arity(opcode: str) -> int:
    return int(OPCODES[opcode].arity)


def entry_name(opcode: str, et: str) -> str:
    return f"ember_eager_{VECTORIZED[opcode]}_{et}"


def emit_module(opcode: str, et: str, pooled: bool) -> str:
    """IR text of the module holding the eager kernel of `opcode` on element type `et`.
    (One module per kernel: measured here, O3 on one module of all 26 kernels of a type
    took about twice the sum of the 26 separate compiles, ~0.1-0.2 s each, and the first
    eager sin would pay for all of them.)"""
    if et not in ELEMENT_TYPES or opcode not in VECTORIZED:
        raise ValueError(f"no eager math kernel for {opcode} on {et}")
    mod = ir.Module(name=entry_name(opcode, et))
    span = _emit_span(mod, opcode, et)
    worker = _emit_chunk(mod, span, arity(opcode)) if pooled else None
    entry = _emit_entry(mod, opcode, et, span, worker)
    _emit_table_entry(mod, opcode, et, entry)
    return str(mod)


def _emit_span(mod: ir.Module, opcode: str, et: str) -> ir.Function:
    """`void <entry>.span(ptr x, [ptr y,] ptr out, i64 begin, i64 end)`: the loop itself."""
    nargs = arity(opcode)
    fnty = ir.FunctionType(VOID, [PTR] * (nargs + 1) + [I64, I64])
    fn = ir.Function(mod, fnty, name=f"{entry_name(opcode, et)}.span")
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    for a in fn.args[:nargs + 1]:
        a.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    flat = Shape(et, (0,))  # only the element type matters to load/store
    ins = [Buf(a, flat) for a in fn.args[:nargs]]
    out = Buf(fn.args[nargs], flat)
    begin, end = fn.args[nargs + 1], fn.args[nargs + 2]

    def body(gen: LoopElements) -> None:
        def element(i: ir.Value) -> None:
            vals = [load(b, buf, i) for buf in ins]
            v, flag = emit_elementwise(b, opcode, [et] * nargs, et, vals, {}, gen.precise,
                                       gen.math)
            if flag is not None:
                gen.flags.append(flag)
            store(b, out, i, v)
            gen.flush()

        for_span(b, begin, end, element)

    with_precise_rerun(b, body, lambda precise: LoopElements(b, {}, precise))
    b.ret_void()
    return fn


def _parallel_for(mod: ir.Module) -> ir.Function:
    """The pool's `ember_parallel_for(chunk, data, extent, nthreads)` (pool.py)."""
    chunk_ty = ir.FunctionType(VOID, [PTR, I64, I64]).as_pointer()
    return ir.Function(mod, ir.FunctionType(VOID, [chunk_ty, PTR, I64, I32]), name=POOL_SYMBOL)


def _emit_chunk(mod: ir.Module, span: ir.Function, nargs: int) -> ir.Function:
    """`void <span>.chunk(ptr data, i64 begin, i64 end)`, data = [x, (y,) out]: the span
    [begin, end), what the pool calls per chunk."""
    w = ir.Function(mod, ir.FunctionType(VOID, [PTR, I64, I64]), name=f"{span.name}.chunk")
    w.attributes.add("nounwind")
    b = ir.IRBuilder(w.append_basic_block("entry"))
    ptrs = [b.load(b.gep(w.args[0], [i64(k)], inbounds=True, source_etype=PTR), typ=PTR)
            for k in range(nargs + 1)]
    b.call(span, [*ptrs, w.args[1], w.args[2]])
    b.ret_void()
    return w


def table_name(opcode: str, et: str) -> str:
    """The kernel's entry for the fast-call trampoline (runtime/fastcall.py)."""
    return f"{entry_name(opcode, et)}.table"


def _emit_table_entry(mod: ir.Module, opcode: str, et: str, entry: ir.Function) -> None:
    """`void <entry>.table(ptr table)`, table = [x, (y,) out, n, &nthreads]: the entry
    with its arguments read from a table, the calling convention of the fast-call
    trampoline (which fills the table from the call's arrays and a descriptor holding n
    and the thread count's address), so an eager call is one builtin call."""
    nargs = arity(opcode)
    fn = ir.Function(mod, ir.FunctionType(VOID, [PTR]), name=table_name(opcode, et))
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def slot(k: int, typ: ir.Type) -> ir.Value:
        return b.load(b.gep(fn.args[0], [i64(k)], inbounds=True, source_etype=PTR), typ=typ)

    ptrs = [slot(k, PTR) for k in range(nargs + 1)]
    n = slot(nargs + 1, I64)
    nthreads = b.load(slot(nargs + 2, PTR), typ=I32)
    b.call(entry, [*ptrs, n, nthreads])
    b.ret_void()


def _emit_entry(mod: ir.Module, opcode: str, et: str, span: ir.Function,
                worker: ir.Function | None) -> ir.Function:
    nargs = arity(opcode)
    fnty = ir.FunctionType(VOID, [PTR] * (nargs + 1) + [I64, I32])
    fn = ir.Function(mod, fnty, name=entry_name(opcode, et))
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ptrs = list(fn.args[:nargs + 1])
    n, nthreads = fn.args[nargs + 1], fn.args[nargs + 2]
    if worker is None:
        b.call(span, [*ptrs, i64(0), n])
        b.ret_void()
        return fn
    big = b.icmp_signed(">=", n, i64(PARALLEL_MIN_ELEMENTS))
    many = b.icmp_signed(">", nthreads, ir.Constant(I32, 1))
    with b.if_else(b.and_(big, many)) as (par, seq):
        with par:
            data = b.alloca(PTR, size=i64(nargs + 1))
            for k, v in enumerate(ptrs):
                b.store(v, b.gep(data, [i64(k)], inbounds=True, source_etype=PTR))
            b.call(_parallel_for(mod), [worker, data, n, nthreads])
        with seq:
            b.call(span, [*ptrs, i64(0), n])
    b.ret_void()
    return fn
