"""The `fft` kernel kind: XLA's fft opcode in native code, through one host call into
NumPy's pocketfft (the FFT library NumPy and SciPy ship, which exposes no C entry point).

Input: a scheduled `fft` instruction (fft_type, fft_length) and the slots of its operand and
result. Output: a kernel `void <name>(ptr out, ptr in)` that calls
    void ember_fft(ptr desc, ptr in, ptr out)
a Python function behind a ctypes callback (jit/host_symbol.py's trampoline), bound for the
JIT linker before object code is linked (`register_symbols`, listed in jit/llvm_target.py's
SYMBOL_PROVIDERS). `desc` is a
constant i64 array in the module describing the transform completely:
    [fft_type (0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT), operand element type (0 f32, 1 f64,
     2 c64, 3 c128), rank, the operand's dimensions..., k, the k fft lengths...]
so object code holds no process-specific id and the disk cache stays valid across
processes. The trampoline wraps both buffers as NumPy arrays (no copy) and runs the
evaluator's rule (hlo/evaluator/fft.py) with `out=` the result buffer: pocketfft writes the
result in place, no extra copy.
Invariants: the kernel is never split among threads (the transform is one call); an
exception in the call fills the result with NaN (never a silently wrong number) and is
recorded with ember/callbacks.py's `record_error`, which the executable re-raises after
the native call returns (callbacks.uses_callbacks counts fft instructions). The CPU
backend refuses complex element types today (support.py), and every fft has a complex
operand or result, so these kernels run once complex values compile natively; until then
the interpreter evaluates the opcode with the same rule.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

import llvmlite.ir as ir
import numpy as np

from ember import callbacks
from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.jit.host_symbol import HostSymbol
from ember.codegen.irtypes import I64, PTR, VOID
from ember.hlo.evaluator import fft as npfft
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

SYMBOL = "ember_fft"
ELEMENT_TYPES = ("f32", "f64", "c64", "c128")
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
           np.dtype(np.complex128))


def descriptor(inst: Instruction) -> list[int]:
    """The i64 words the kernel passes as `desc` (see the module docstring)."""
    x = inst.operands[0].shape
    lengths = [int(n) for n in inst.attrs["fft_length"]]
    kind = npfft.FFT_TYPES.index(inst.attrs["fft_type"])
    dims = [int(d) for d in x.dimensions]
    return [kind, ELEMENT_TYPES.index(x.element_type), len(dims), *dims, len(lengths),
            *lengths]


def parse_descriptor(words: list[int]) -> tuple[str, np.dtype, tuple[int, ...],
                                                tuple[int, ...]]:
    """(fft_type, operand dtype, operand shape, fft lengths) from `descriptor`'s words."""
    rank = words[2]
    shape = tuple(words[3:3 + rank])
    k = words[3 + rank]
    lengths = tuple(words[4 + rank:4 + rank + k])
    return npfft.FFT_TYPES[words[0]], _DTYPES[words[1]], shape, lengths


def _words(address: int) -> list[int]:
    """The descriptor at `address`: its fixed head says how long it is."""
    head = (ctypes.c_int64 * 3).from_address(address)
    rank = head[2]
    k = (ctypes.c_int64 * 1).from_address(address + 8 * (3 + rank))[0]
    return list((ctypes.c_int64 * (4 + rank + k)).from_address(address))


def _view(address: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A writable NumPy array over `address` (no copy)."""
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.empty(shape, dtype)
    buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def run(desc: int, src: int, dst: int) -> None:
    """The trampoline's body: the transform described at `desc`, from `src` into `dst`."""
    fft_type, dtype, shape, lengths = parse_descriptor(_words(desc))
    out_shape = npfft.result_shape(shape, fft_type, lengths)
    out = _view(dst, out_shape, npfft.result_dtype(dtype, fft_type))
    try:
        npfft.fft(_view(src, shape, dtype), fft_type, lengths, out=out)
    except BaseException as e:  # noqa: B036 - nothing may unwind through native frames
        out[...] = np.nan
        callbacks.record_error(e)


TRAMPOLINE = HostSymbol.trampoline(SYMBOL, run, [ctypes.c_void_p] * 3,
                                   ir.FunctionType(VOID, [PTR, PTR, PTR]))
register_symbols = TRAMPOLINE.register  # binds `ember_fft` for the JIT linker (once)


def emit_fft_kernel(module: ir.Module, name: str, inst: Instruction) -> ir.Function:
    """`void name(ptr out, ptr in)`: one call of the trampoline with the constant
    descriptor of `inst`."""
    if inst.operands[0].shape.element_type not in ELEMENT_TYPES:
        raise CpuCompileError(f"fft {inst.name} on {inst.operands[0].shape.element_type}")
    words = descriptor(inst)
    table = ir.GlobalVariable(module, ir.ArrayType(I64, len(words)), name=f"{name}.desc")
    table.global_constant = True
    table.linkage = "internal"
    table.initializer = ir.Constant(ir.ArrayType(I64, len(words)), words)
    fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR]), name=name)
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    out, src = fn.args
    b.call(TRAMPOLINE.declare(module), [b.bitcast(table, PTR), src, out])
    b.ret_void()
    return fn


class _FftKind:
    """fft: a function of its own (`emit_fft_kernel`), never split (see the module doc)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        inst = ctx.inst
        src = ctx.sched.buffers[inst.operands[0]]
        if isinstance(src, tuple) or len(ctx.outs) != 1:
            raise CpuCompileError(f"tuple-valued operand or result of fft {inst.name}")
        em = ctx.emitter
        fn = emit_fft_kernel(em.ir, f"{em.prefix}{ctx.name}", inst)
        ctx.add_call(fn, ctx.outs + [src])


KIND = _FftKind()
