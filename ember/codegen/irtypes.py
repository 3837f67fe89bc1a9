"""LLVM types and constants for HLO element types.

Input: XLA element type names. Output: llvmlite.ir types for values in registers (`pred` is
i1) and in memory (`pred` is one byte, 0 or 1, as NumPy stores bool), plus helpers to build
constants. Invariants: signedness lives in the HLO element type, never in the LLVM type
(s32 and u32 are both i32); f16 is LLVM `half` (arithmetic rounds after every op, like
NumPy's float16 loops); bf16 is its 16 bits, an i16 (the CPU backend computes on bf16 only
in f32, passes/bf16_expansion.py; codegen/convert.py converts the bits); c64/c128 are the
literal struct `{float, float}`/`{double, double}` (real part, imaginary part) in registers
and in memory, NumPy's and XLA's interleaved layout (codegen/complex_ops.py computes with
them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import llvmlite.ir as ir

from ember.hlo.shape import bit_width, is_complex, is_float, is_signed_int, is_unsigned_int

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()

_FLOATS: dict[str, ir.Type] = {"f16": ir.HalfType(), "f32": ir.FloatType(),
                               "f64": ir.DoubleType()}
_COMPLEX: dict[str, ir.Type] = {
    "c64": ir.LiteralStructType([ir.FloatType(), ir.FloatType()]),
    "c128": ir.LiteralStructType([ir.DoubleType(), ir.DoubleType()])}


def reg_type(et: str) -> ir.Type:
    """Type of a value of element type `et` in registers."""
    if et == "pred":
        return I1
    if et in _FLOATS:
        return _FLOATS[et]
    if et in _COMPLEX:
        return _COMPLEX[et]
    return ir.IntType(bit_width(et))


def mem_type(et: str) -> ir.Type:
    """Type of an element in memory."""
    return I8 if et == "pred" else reg_type(et)


def int_type_like(et: str) -> ir.IntType:
    """Integer type of the same width (for bit manipulation of floats)."""
    return ir.IntType(bit_width(et))


def const(et: str, value: Any) -> ir.Constant:
    """An immediate of element type `et` (floats keep NaN payloads and signed zeros)."""
    ty = reg_type(et)
    if et == "pred":
        return ir.Constant(I1, int(bool(value)))
    if is_complex(et):
        import numpy as np

        z = complex(np.asarray(value).astype(np.complex128))
        part = ty.elements[0]
        return ir.Constant(ty, [fconst(part, z.real), fconst(part, z.imag)])
    if et == "bf16":  # (its bits, rounded to nearest even by ml_dtypes)
        from ember.hlo.shape import numpy_dtype

        return ir.Constant(ty, int(_bf16_bits(value, numpy_dtype(et))))
    if is_float(et):
        import numpy as np

        return ir.Constant(ty, float(np.asarray(value, dtype=np.float64)))
    v = int(value)
    if is_unsigned_int(et) and v >= 2 ** (bit_width(et) - 1):
        v -= 2 ** bit_width(et)  # llvmlite wants the signed value of the bit pattern
    return ir.Constant(ty, v)


def _bf16_bits(value: Any, bf16: Any) -> int:
    """The bits of `value` as bf16, as the signed int llvmlite wants for an i16."""
    import numpy as np

    bits = int(np.asarray(value).astype(bf16).reshape(()).view(np.int16))
    return bits


def fconst(ty: ir.Type, value: float) -> ir.Constant:
    """A float immediate of LLVM type `ty`, rounded (overflowing to inf) like NumPy."""
    import numpy as np

    np_type = {"half": np.float16, "float": np.float32, "double": np.float64}[str(ty)]
    with np.errstate(over="ignore"):
        return ir.Constant(ty, float(np_type(value)))


def i64(v: int) -> ir.Constant:
    return ir.Constant(I64, int(v))


_SUFFIX = {"half": "f16", "float": "f32", "double": "f64"}


def intrinsic(module: ir.Module, name: str, ret: ir.Type, args: Sequence[ir.Type]
              ) -> ir.Function:
    """Declare (once) an LLVM intrinsic or external function."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, list(args)), name=name)
    return fn


def type_suffix(ty: ir.Type) -> str:
    """An overloaded intrinsic's type suffix: i32, f32, ..."""
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return _SUFFIX[str(ty)]


__all__ = ["I1", "I8", "I32", "I64", "PTR", "VOID", "const", "fconst", "i64", "int_type_like",
           "intrinsic", "is_complex", "is_float", "is_signed_int", "is_unsigned_int", "mem_type",
           "reg_type", "type_suffix"]
