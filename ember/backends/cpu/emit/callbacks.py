"""Host callbacks in native code: the `ember.python_callback` custom-call kernel.

Input: a scheduled custom-call with target `ember.python_callback` (backend_config = the
callback id of ember/callbacks.py's registry) and the slots of its operands and results.
Output: a kernel `void <name>(ptr outs..., ptr ins...)` that stores the pointers in two
stack arrays and calls
    void ember_python_callback(i64 id, ptr ins, i64 nin, ptr outs, i64 nout)
a Python function behind a ctypes callback (jit/host_symbol.py's trampoline). The symbol
is bound to its address before any object code is linked (`register_symbols`, called by
llvm_target.load_object), so object code names only the symbol and the disk cache stays
valid across processes.
Invariants:
- The executable is entered through a ctypes foreign call, which releases the GIL; the
  trampoline is a ctypes callback, which takes it again (PyGILState_Ensure), so the callback
  may run on any thread, the caller's or a worker's. Callback kernels are never split into
  parallel slices (the emitter gives them no `(begin, end)` span), so a callback runs
  once per execution of its instruction, in schedule order, on the calling thread.
- Inputs are copied into fresh NumPy arrays before the callback sees them (they may live in
  the scratch block), except for a callback that `borrows` them (the collectives: read-only
  views, read during the call only); results are checked against the declared avals and
  copied into the output buffers. A side-effecting call's pred[] token output is written
  by the kernel.
- An exception in the callback is recorded (ember/callbacks.py `record_error`) and raised
  after the native call returns; later callbacks of that call are skipped.
"""

from __future__ import annotations

import ctypes
import math
from typing import TYPE_CHECKING, Any

import llvmlite.ir as ir
import numpy as np

from ember import callbacks
from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.jit.host_symbol import HostSymbol
from ember.codegen.irtypes import I8, I64, PTR, VOID, i64
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

SYMBOL = "ember_python_callback"


def _view(address: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A NumPy array over `address` (no copy)."""
    nbytes = math.prod(shape) * dtype.itemsize  # (np.prod: microseconds)
    if nbytes == 0:
        return np.empty(shape, dtype)
    buf = (ctypes.c_char * nbytes).from_address(address)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def _trampoline(cb_id: int, ins: Any, nin: int, outs: Any, nout: int) -> None:
    if callbacks.has_pending_error():
        return  # an earlier callback of this call failed: its error is raised afterwards
    try:
        cb = callbacks.lookup(cb_id)
        args = [_view(ins[k], a.shape, a.dtype) for k, a in enumerate(cb.in_avals)]
        # (only the outputs the kernel passed: a side effect's token is not one)
        views = [_view(outs[k], a.shape, a.dtype) for k, a in enumerate(cb.out_avals[:nout])]
        if cb.borrows:  # (read in place, during this call only; may write `views`)
            for a in args:
                a.setflags(write=False)
            results = callbacks.run_callback(cb_id, args, views)
        else:
            results = callbacks.run_callback(cb_id, [a.copy() for a in args])
        for r, v in zip(results, views):
            if r is not v:
                np.copyto(v, r)
    except BaseException as e:  # noqa: B036 - nothing may unwind through native frames
        callbacks.record_error(e)


TRAMPOLINE = HostSymbol.trampoline(
    SYMBOL, _trampoline, [ctypes.c_int64, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64],
    ir.FunctionType(VOID, [I64, PTR, I64, PTR, I64]))
register_symbols = TRAMPOLINE.register  # binds `ember_python_callback` (once per process)


def is_python_callback(inst: Instruction) -> bool:
    return (inst.opcode == "custom-call"
            and inst.attrs.get("custom_call_target") == callbacks.TARGET)


def callback_arg_count(inst: Instruction) -> int:
    """How many leading operands the callback reads: all but a side effect's ordering
    token (which may be a whole loop's tuple; only its place in the graph matters)."""
    cb = callbacks.lookup(int(inst.attrs.get("backend_config") or 0))
    return min(len(cb.in_avals), len(inst.operands))


def emit_callback_kernel(module: ir.Module, name: str, inst: Instruction, nout: int,
                         nin: int) -> ir.Function:
    """`void name(ptr out_0.., ptr in_0..)`: one call of the trampoline.

    `nout` output pointers come first, then `nin` input pointers (one per callback
    argument, in operand order; a side effect's token operand is not passed). A side
    effect's only output is its pred[] token, which the kernel itself sets to 0; the
    callback gets no output pointers.
    """
    side_effect = bool(inst.attrs.get("custom_call_has_side_effect"))
    cb_id = int(inst.attrs.get("backend_config") or 0)
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * (nout + nin)), name=name)
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    outs, ins = fn.args[:nout], fn.args[nout:]
    in_arr = b.alloca(PTR, size=i64(max(nin, 1)))
    for k, p in enumerate(ins):
        b.store(p, b.gep(in_arr, [i64(k)], inbounds=True, source_etype=PTR))
    out_arr = b.alloca(PTR, size=i64(max(nout, 1)))
    n_results = 0 if side_effect else nout
    for k, p in enumerate(outs[:n_results]):
        b.store(p, b.gep(out_arr, [i64(k)], inbounds=True, source_etype=PTR))
    b.call(TRAMPOLINE.declare(module), [i64(cb_id), in_arr, i64(nin), out_arr, i64(n_results)])
    if side_effect:
        b.store(ir.Constant(I8, 0), outs[0])
    b.ret_void()
    return fn


class _CallbackKind:
    """Host callbacks: a function of their own (`emit_callback_kernel`), the callback's
    operands by pointer, never split (see the module doc)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        inst, sched = ctx.inst, ctx.sched
        ins = [sched.buffers[o] for o in inst.operands[:callback_arg_count(inst)]]
        if any(isinstance(s, tuple) for s in ins):
            raise CpuCompileError(f"tuple-valued operand of host callback {inst.name}")
        em = ctx.emitter
        fn = emit_callback_kernel(em.ir, f"{em.prefix}{ctx.name}", inst, len(ctx.outs),
                                  len(ins))
        ctx.add_call(fn, ctx.outs + ins)


KIND = _CallbackKind()
