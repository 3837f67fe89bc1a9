"""Scalar IR for every elementwise HLO opcode, with the interpreter's (XLA's) semantics.

Input: an IRBuilder, the opcode, operand element types and register values (pred is i1).
Output: the result value in registers, and a "needs precise rerun" i1 flag or None (only
a backend's fast sin/cos produce one, e.g. the CPU's mathlib.trig).
The transcendental opcodes (exp, log, sin, pow, erf, ...) are the backend's choice: it passes
a `MathEmitter` (the CPU its vector math library, ember/backends/cpu/mathlib); without one
they raise NotImplementedError.
Complex operands or results go to complex_ops.py.
Semantics (elementwise.py is the specification): integer x / 0 = -1 (all ones), x % 0 = x,
INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0, guarded with selects so no lane traps; shift
counts outside [0, bits) give 0 (sign fill for arithmetic right shifts); float
maximum/minimum are IEEE 754-2019's (NaN propagates: x's if x is NaN, else y's;
-0.0 < +0.0), as XLA computes them; sign keeps NaN and +-0.
"""

from __future__ import annotations

from typing import Any, Protocol

import llvmlite.ir as ir

from ember.codegen import convert as conv
from ember.codegen.irtypes import (
    I1,
    const,
    int_type_like,
    intrinsic,
    is_complex,
    is_float,
    is_signed_int,
    reg_type,
    type_suffix,
)

Result = tuple[ir.Value, ir.Value | None]


class MathEmitter(Protocol):
    """A backend's float math: `opcodes` it emits, `emit` gives (value, rerun flag)."""

    opcodes: frozenset[str]

    def emit(self, b: ir.IRBuilder, opcode: str, args: list[ir.Value], precise: bool
             ) -> Result:
        ...

_FCMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def emit_elementwise(b: ir.IRBuilder, opcode: str, in_types: list[str], out_type: str,
                     args: list[ir.Value], attrs: dict[str, Any], precise: bool,
                     math: MathEmitter | None = None) -> Result:
    et = in_types[0]
    if is_complex(out_type) or any(is_complex(t) for t in in_types):
        from ember.codegen import complex_ops  # (complex programs only pay for importing it)

        return complex_ops.emit(b, opcode, in_types, out_type, args, attrs, precise, math)
    if opcode == "compare":
        return compare(b, et, attrs["direction"], args[0], args[1]), None
    if opcode == "select":
        return b.select(args[0], args[1], args[2]), None
    if opcode == "clamp":
        et = in_types[1]
        return minimum(b, et, maximum(b, et, args[1], args[0]), args[2]), None
    if opcode == "convert":
        return conv.convert(b, et, out_type, args[0]), None
    if opcode == "bitcast-convert":
        return conv.bitcast(b, et, out_type, args[0]), None
    if opcode == "reduce-precision":
        return conv.reduce_precision(b, et, args[0], attrs["exponent_bits"],
                                     attrs["mantissa_bits"]), None
    if opcode == "copy":
        return args[0], None
    if math is not None and opcode in math.opcodes and is_float(et):
        return math.emit(b, opcode, args, precise)
    if opcode == "power":
        return int_power(b, et, args[0], args[1]), None
    fn = _TABLE.get(opcode)
    if fn is None:
        raise NotImplementedError(f"no emitter for elementwise {opcode} on {et}")
    return fn(b, et, *args), None


# -- comparisons and min/max -----------------------------------------------------------


def compare(b: ir.IRBuilder, et: str, direction: str, x: ir.Value, y: ir.Value) -> ir.Value:
    op = _FCMP[direction]
    if is_float(et):
        # IEEE: NaN is unordered; only NE is true with a NaN operand
        return b.fcmp_unordered(op, x, y) if direction == "NE" else b.fcmp_ordered(op, x, y)
    if is_signed_int(et):
        return b.icmp_signed(op, x, y)
    return b.icmp_unsigned(op, x, y)


def _isnan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_unordered("uno", x, x)


def _float_extremum(b: ir.IRBuilder, et: str, x: ir.Value, y: ir.Value,
                    pick_max: bool) -> ir.Value:
    """IEEE 754-2019 maximum/minimum with the interpreter's NaN choice: x if x is NaN,
    else y if y is NaN; -0.0 < +0.0 in either operand order.

    x > y (or x < y) picks x, which also covers NaN in y (the compare is false, y wins);
    on x == y the operands have equal bits except for +-0.0, so and-ing the bits gives
    max(-0.0, +0.0) = +0.0 and or-ing gives min = -0.0 (selects and bit ops only: it
    vectorizes, and unlike llvm.maximum it names which NaN comes out)."""
    take_x = b.or_(b.fcmp_ordered(">" if pick_max else "<", x, y), _isnan(b, x))
    r = b.select(take_x, x, y)
    ity = int_type_like(et)
    xb, yb = b.bitcast(x, ity), b.bitcast(y, ity)
    zeros = b.bitcast(b.and_(xb, yb) if pick_max else b.or_(xb, yb), x.type)
    return b.select(b.fcmp_ordered("==", x, y), zeros, r)


def maximum(b: ir.IRBuilder, et: str, x: ir.Value, y: ir.Value) -> ir.Value:
    if is_float(et):
        return _float_extremum(b, et, x, y, True)
    return b.select(compare(b, et, "GE", x, y), x, y)


def minimum(b: ir.IRBuilder, et: str, x: ir.Value, y: ir.Value) -> ir.Value:
    if is_float(et):
        return _float_extremum(b, et, x, y, False)
    return b.select(compare(b, et, "LE", x, y), x, y)


# -- arithmetic ----------------------------------------------------------------------------


def _add(b, et, x, y):
    if et == "pred":
        return b.or_(x, y)
    return b.fadd(x, y) if is_float(et) else b.add(x, y)


def _sub(b, et, x, y):
    return b.fsub(x, y) if is_float(et) else b.sub(x, y)


def _mul(b, et, x, y):
    if et == "pred":
        return b.and_(x, y)
    return b.fmul(x, y) if is_float(et) else b.mul(x, y)


def _div(b, et, x, y):
    if is_float(et):
        return b.fdiv(x, y)
    ty = reg_type(et)
    zero, one, ones = ir.Constant(ty, 0), ir.Constant(ty, 1), ir.Constant(ty, -1)
    y0 = b.icmp_unsigned("==", y, zero)
    if is_signed_int(et):
        ym1 = b.icmp_unsigned("==", y, ones)
        ys = b.select(b.or_(y0, ym1), one, y)
        q = b.sdiv(x, ys)
        q = b.select(ym1, b.sub(zero, x), q)  # INT_MIN / -1 wraps to INT_MIN
    else:
        q = b.udiv(x, b.select(y0, one, y))
    return b.select(y0, ones, q)


def _rem(b, et, x, y):
    if is_float(et):
        return b.frem(x, y)  # C fmod: exact, sign of the dividend
    ty = reg_type(et)
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    y0 = b.icmp_unsigned("==", y, zero)
    if is_signed_int(et):
        bad = b.or_(y0, b.icmp_unsigned("==", y, ir.Constant(ty, -1)))
        r = b.srem(x, b.select(bad, one, y))  # y == -1 -> x % 1 == 0
    else:
        r = b.urem(x, b.select(y0, one, y))
    return b.select(y0, x, r)


def _max(b, et, x, y):
    return b.or_(x, y) if et == "pred" else maximum(b, et, x, y)


def _min(b, et, x, y):
    return b.and_(x, y) if et == "pred" else minimum(b, et, x, y)


def int_power(b: ir.IRBuilder, et: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """x^y by squaring over every bit of y (wrapping); negative y: 0 unless |x| == 1."""
    ty = reg_type(et)
    width = ty.width
    one, zero = ir.Constant(ty, 1), ir.Constant(ty, 0)
    acc: ir.Value = one
    base: ir.Value = x
    for bit in range(width):
        set_ = b.icmp_unsigned("!=", b.and_(y, ir.Constant(ty, 1 << bit)), zero)
        acc = b.select(set_, b.mul(acc, base), acc)
        base = b.mul(base, base)
    if not is_signed_int(et):
        return acc
    neg = b.icmp_signed("<", y, zero)
    odd = b.icmp_unsigned("!=", b.and_(y, one), zero)
    minus_one = ir.Constant(ty, -1)
    negres = b.select(b.icmp_unsigned("==", x, one), one,
                      b.select(b.icmp_unsigned("==", x, minus_one),
                               b.select(odd, minus_one, one), zero))
    return b.select(neg, negres, acc)


# -- bitwise ---------------------------------------------------------------------------------


def _and(b, et, x, y):
    return b.and_(x, y)


def _or(b, et, x, y):
    return b.or_(x, y)


def _xor(b, et, x, y):
    return b.xor(x, y)


def _not(b, et, x):
    return b.not_(x)


def _shift(kind: str):
    def fn(b, et, x, y):
        ty = reg_type(et)
        width = ty.width
        # unsigned compare: negative counts are huge, hence out of range too
        oob = b.icmp_unsigned(">=", y, ir.Constant(ty, width))
        yc = b.select(oob, ir.Constant(ty, 0), y)
        if kind == "shl":
            return b.select(oob, ir.Constant(ty, 0), b.shl(x, yc))
        if kind == "lshr":
            return b.select(oob, ir.Constant(ty, 0), b.lshr(x, yc))
        fill = b.ashr(x, ir.Constant(ty, width - 1))
        return b.select(oob, fill, b.ashr(x, yc))

    return fn


def _popcnt(b, et, x):
    ty = x.type
    return b.call(intrinsic(b.module, f"llvm.ctpop.{type_suffix(ty)}", ty, [ty]), [x])


def _clz(b, et, x):
    ty = x.type
    fn = intrinsic(b.module, f"llvm.ctlz.{type_suffix(ty)}", ty, [ty, I1])
    return b.call(fn, [x, ir.Constant(I1, 0)])


# -- unary arithmetic ------------------------------------------------------------------------


def _neg(b, et, x):
    return b.fneg(x) if is_float(et) else b.sub(ir.Constant(x.type, 0), x)


def _abs(b, et, x):
    if is_float(et):
        return _fintr(b, "fabs", x)
    if not is_signed_int(et):
        return x
    zero = ir.Constant(x.type, 0)
    return b.select(b.icmp_signed("<", x, zero), b.sub(zero, x), x)


def _fintr(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    ty = args[0].type
    fn = intrinsic(b.module, f"llvm.{name}.{type_suffix(ty)}", ty, [ty] * len(args))
    return b.call(fn, list(args))


def _sign(b, et, x):
    ty = x.type
    if is_float(et):
        keep = b.or_(_isnan(b, x), b.fcmp_ordered("==", x, ir.Constant(ty, 0.0)))
        return b.select(keep, x, _fintr(b, "copysign", ir.Constant(ty, 1.0), x))
    zero = ir.Constant(ty, 0)
    if not is_signed_int(et):
        return b.zext(b.icmp_unsigned("!=", x, zero), ty)
    pos = b.zext(b.icmp_signed(">", x, zero), ty)
    neg = b.zext(b.icmp_signed("<", x, zero), ty)
    return b.sub(pos, neg)


def _round(name: str):
    def fn(b, et, x):
        return _fintr(b, name, x) if is_float(et) else x

    return fn


def _sqrt(b, et, x):
    return _fintr(b, "sqrt", x)


def _rsqrt(b, et, x):
    return b.fdiv(ir.Constant(x.type, 1.0), _fintr(b, "sqrt", x))


def _is_finite(b, et, x):
    ax = _fintr(b, "fabs", x)
    return b.fcmp_ordered("<", ax, ir.Constant(x.type, float("inf")))


_TABLE = {
    "add": _add, "subtract": _sub, "multiply": _mul, "divide": _div, "remainder": _rem,
    "maximum": _max, "minimum": _min, "and": _and, "or": _or, "xor": _xor, "not": _not,
    "shift-left": _shift("shl"), "shift-right-logical": _shift("lshr"),
    "shift-right-arithmetic": _shift("ashr"), "popcnt": _popcnt, "clz": _clz,
    "negate": _neg, "abs": _abs, "sign": _sign, "floor": _round("floor"),
    "ceil": _round("ceil"), "round-nearest-afz": _round("round"),
    "round-nearest-even": _round("roundeven"), "sqrt": _sqrt, "rsqrt": _rsqrt,
    "is-finite": _is_finite,
}

__all__ = ["compare", "const", "emit_elementwise", "int_power", "maximum", "minimum"]
