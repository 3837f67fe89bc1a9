"""convert, bitcast-convert and reduce-precision as scalar IR.

convert (XLA semantics, as elementwise.convert_array): float -> int saturates and maps NaN
to 0 with compares and selects around a plain fptosi/fptoui of a value already in range
(`llvm.fpto*i.sat` would scalarize on AVX-512); anything -> pred is x != 0 (NaN -> true);
int -> int wraps or extends by the source's signedness; the rest round to nearest.
bitcast-convert reinterprets bits through an integer of the element's width (to_bits /
from_bits; pred is its byte, nonzero reads as true; width changes are the element
generator's). bf16 values are their 16 bits (an i16 in registers and memory): to any type
through f32 (the bits in the top half of an i32, read as a float: exact), from any type
through f32 (as XLA's CPU backend converts: an f64 rounds to f32 first) and then to nearest
even on the bits, a NaN kept a quiet NaN of the same sign (ml_dtypes' and XLA's rounding).
reduce-precision rounds the mantissa to nearest even with integer
arithmetic on the bits and flushes/overflows the exponent like the interpreter.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ember.codegen.irtypes import I1, fconst, int_type_like, is_float, is_signed_int, reg_type
from ember.hlo.shape import bit_width


def convert(b: ir.IRBuilder, src: str, dst: str, x: ir.Value) -> ir.Value:
    if src == dst:
        return x
    if src == "bf16":
        return convert(b, "f32", dst, bf16_to_f32(b, x))
    if dst == "bf16":
        return f32_to_bf16(b, convert(b, src, "f32", x))
    dty = reg_type(dst)
    if dst == "pred":
        if is_float(src):
            return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
        return b.icmp_unsigned("!=", x, ir.Constant(x.type, 0))
    if src == "pred":
        return b.uitofp(x, dty) if is_float(dst) else b.zext(x, dty)
    if is_float(src) and is_float(dst):
        sb, db = bit_width(src), bit_width(dst)
        if src == "f64" and dst == "f16":
            return _f64_to_f16(b, x)
        return b.fpext(x, dty) if db > sb else b.fptrunc(x, dty)
    if is_float(dst):
        return b.sitofp(x, dty) if is_signed_int(src) else b.uitofp(x, dty)
    if not is_float(src):
        sw, dw = bit_width(src), bit_width(dst)
        if dw < sw:
            return b.trunc(x, dty)
        if dw == sw:
            return x
        return b.sext(x, dty) if is_signed_int(src) else b.zext(x, dty)
    return _float_to_int(b, src, dst, x)


def bf16_to_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """The float32 of bf16 bits `x` (i16): the bits are float32's top half (exact)."""
    i32 = ir.IntType(32)
    return b.bitcast(b.shl(b.zext(x, i32), ir.Constant(i32, 16)), ir.FloatType())


def f32_to_bf16(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """float32 `x` rounded to the nearest bf16, ties to even (i16 bits):
    bits + 0x7fff + (bit 16 of bits), then the top half (a carry out of the mantissa steps
    the exponent: the largest finite values round up to inf as they should). A NaN becomes
    the quiet NaN of its sign (0x7fc0 or 0xffc0, as XLA and ml_dtypes)."""
    i32, i16 = ir.IntType(32), ir.IntType(16)
    bits = b.bitcast(x, i32)
    odd = b.and_(b.lshr(bits, ir.Constant(i32, 16)), ir.Constant(i32, 1))
    rounded = b.lshr(b.add(b.add(bits, ir.Constant(i32, 0x7FFF)), odd), ir.Constant(i32, 16))
    sign = b.and_(b.lshr(bits, ir.Constant(i32, 16)), ir.Constant(i32, 0x8000))
    quiet = b.or_(sign, ir.Constant(i32, 0x7FC0))
    nan = b.fcmp_unordered("uno", x, x)
    return b.trunc(b.select(nan, quiet, rounded), i16)


def _f64_to_f16(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """f64 -> f16 rounded once: LLVM lowers it to a libcall (__truncdfhf2) the process
    does not export. Round to f32 *to odd* (truncate toward zero, OR the sticky bit into
    the last place), then f32 -> f16 to nearest (hardware): with 13 spare bits in f32 the
    second rounding is correct."""
    f32, i32 = ir.FloatType(), ir.IntType(32)
    t = b.fptrunc(x, f32)
    back = b.fpext(t, x.type)
    inexact = b.fcmp_ordered("!=", back, x)  # false for NaN: keep it
    ax = b.call(_fabs(b, x.type), [x])
    aback = b.call(_fabs(b, x.type), [back])
    bits = b.bitcast(t, i32)
    away = b.and_(inexact, b.fcmp_ordered(">", aback, ax))  # rounded away from zero
    bits = b.select(away, b.sub(bits, ir.Constant(i32, 1)), bits)
    bits = b.select(inexact, b.or_(bits, ir.Constant(i32, 1)), bits)
    return b.fptrunc(b.bitcast(bits, f32), ir.HalfType())


def _fabs(b: ir.IRBuilder, ty: ir.Type) -> ir.Function:
    name = "llvm.fabs.f64" if str(ty) == "double" else "llvm.fabs.f32"
    fn = b.module.globals.get(name)
    return fn or ir.Function(b.module, ir.FunctionType(ty, [ty]), name=name)


def _float_to_int(b: ir.IRBuilder, src: str, dst: str, x: ir.Value) -> ir.Value:
    bits = bit_width(dst)
    signed = is_signed_int(dst)
    dty = reg_type(dst)
    ft = x.type
    # bounds are powers of two, exact in every float format (f16 overflows to inf, still a
    # correct bound)
    hi = float(2.0 ** (bits - 1 if signed else bits))
    lo = float(-(2.0 ** (bits - 1))) if signed else 0.0
    too_hi = b.fcmp_ordered(">=", x, fconst(ft, hi))
    too_lo = b.fcmp_ordered("<", x, fconst(ft, lo))
    nan = b.fcmp_unordered("uno", x, x)
    out = b.or_(b.or_(too_hi, too_lo), nan)
    safe = b.select(out, ir.Constant(ft, 0.0), x)
    r = b.fptosi(safe, dty) if signed else b.fptoui(safe, dty)
    max_v = (1 << (bits - 1)) - 1 if signed else -1  # -1: all ones
    min_v = -(1 << (bits - 1)) if signed else 0
    r = b.select(too_hi, ir.Constant(dty, max_v), r)
    return b.select(too_lo, ir.Constant(dty, min_v), r)


def to_bits(b: ir.IRBuilder, et: str, x: ir.Value) -> ir.Value:
    """The bits of a register value as an integer of the element's width (pred: i8 0/1,
    its byte in memory)."""
    if et == "pred":
        return b.zext(x, ir.IntType(8))
    return b.bitcast(x, int_type_like(et)) if is_float(et) and et != "bf16" else x


def from_bits(b: ir.IRBuilder, et: str, bits: ir.Value) -> ir.Value:
    """An integer of the element's width read as element type `et`; a nonzero byte is
    pred true, stored back as 1 (the interpreter's bitcast to bool is `x != 0` too)."""
    if et == "pred":
        return b.icmp_unsigned("!=", bits, ir.Constant(bits.type, 0))
    return b.bitcast(bits, reg_type(et)) if is_float(et) and et != "bf16" else bits


def bitcast(b: ir.IRBuilder, src: str, dst: str, x: ir.Value) -> ir.Value:
    """Equal-width bitcast-convert (the element generator handles width changes)."""
    if src == dst:
        return x
    return from_bits(b, dst, to_bits(b, src, x))


def reduce_precision(b: ir.IRBuilder, et: str, x: ir.Value, exponent_bits: int,
                     mantissa_bits: int) -> ir.Value:
    ity = int_type_like(et)
    nbits = ity.width
    mbits = {16: 10, 32: 23, 64: 52}[nbits]
    ebits = nbits - 1 - mbits

    def c(v: int) -> ir.Constant:
        v &= (1 << nbits) - 1
        return ir.Constant(ity, v - (1 << nbits) if v >> (nbits - 1) else v)

    bits = b.bitcast(x, ity)
    if mantissa_bits < mbits:
        shift = mbits - mantissa_bits
        last = b.and_(b.lshr(bits, c(shift)), c(1))
        bias = b.add(c((1 << (shift - 1)) - 1), last)
        mask = c(~((1 << shift) - 1))
        bits = b.and_(b.add(bits, bias), mask)
    if exponent_bits < ebits:
        sign = b.and_(bits, c(1 << (nbits - 1)))
        exp_field = b.and_(b.lshr(bits, c(mbits)), c((1 << ebits) - 1))
        bias_full = (1 << (ebits - 1)) - 1
        max_e = (1 << (exponent_bits - 1)) - 1
        unbiased = b.sub(exp_field, c(bias_full))
        inf_bits = b.or_(sign, c(((1 << ebits) - 1) << mbits))
        bits = b.select(b.icmp_signed(">", unbiased, c(max_e)), inf_bits, bits)
        bits = b.select(b.icmp_signed("<=", unbiased, c(-max_e)), sign, bits)
    out = b.bitcast(bits, x.type)
    return b.select(b.fcmp_unordered("uno", x, x), x, out)


__all__ = ["I1", "bf16_to_f32", "bitcast", "convert", "f32_to_bf16", "from_bits",
           "reduce_precision", "to_bits"]
