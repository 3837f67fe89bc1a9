"""Scalar IR for the elementwise HLO opcodes on complex values (c64, c128).

Input: an IRBuilder, the opcode, operand element types, the result type, register values
(a complex value is the struct `{re, im}` of irtypes.reg_type) and the backend's float math.
Output: (value, "needs precise rerun" flag or None), as scalar_ops.emit_elementwise.
Semantics are the evaluator's (hlo/evaluator/elementwise.py runs NumPy's complex loops), so
compiled code gives what eager mode gives:
- multiply is the textbook (ac - bd) + i(ad + bc), as NumPy's and XLA's loops compute it
  (no C99 Annex G recovery of infinities: (inf + 0i) * (inf + 0i) = inf + nan i);
- divide is Smith's algorithm exactly as NumPy writes it (the larger divisor part divides
  the smaller, so |c|, |d| near the overflow threshold do not overflow c^2 + d^2); a zero
  divisor divides each part by |c| (inf or nan parts, as NumPy);
- abs is the hypot of the parts: c64 in double (never over/underflows, rounded once),
  c128 scaled by an exact power of two when the larger part is huge or tiny; an infinite
  part gives inf even with a NaN in the other (C99's hypot);
- sign keeps NaNs and zeros, else z / |z|; compare EQ/NE compare both parts (NE is true
  when either part is unordered); convert to a real type takes the real part (to pred:
  re != 0), as the evaluator does;
- the math (exp, log, sqrt, ...) is in complex_math.py on the backend's real math.
Invariants: no opcode here traps; each part is computed with the real ops of its
component type, so every loop over complex values is plain float code LLVM can vectorize.
"""

from __future__ import annotations

from typing import Any

import llvmlite.ir as ir

from ember.codegen import convert as conv
from ember.codegen.irtypes import fconst, is_complex, reg_type
from ember.hlo.shape import complex_component

Result = tuple[ir.Value, ir.Value | None]


def parts(b: ir.IRBuilder, z: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(re, im) of a complex register value."""
    return b.extract_value(z, 0), b.extract_value(z, 1)


def make(b: ir.IRBuilder, re: ir.Value, im: ir.Value) -> ir.Value:
    """The complex register value re + i im (parts of one float type)."""
    ty = ir.LiteralStructType([re.type, re.type])
    z = b.insert_value(ir.Constant(ty, ir.Undefined), re, 0)
    return b.insert_value(z, im, 1)


def fabs(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _fintr(b, "fabs", x)


def _fintr(b: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    ty = args[0].type
    suffix = {"float": "f32", "double": "f64"}[str(ty)]
    fn = b.module.globals.get(f"llvm.{name}.{suffix}")
    if fn is None:
        fn = ir.Function(b.module, ir.FunctionType(ty, [ty] * len(args)),
                         name=f"llvm.{name}.{suffix}")
    return b.call(fn, list(args))


def isnan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_unordered("uno", x, x)


def isinf(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fcmp_ordered("==", fabs(b, x), ir.Constant(x.type, float("inf")))


def select(b: ir.IRBuilder, p: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
    """p ? x : y on complex values, part by part (plain float selects vectorize)."""
    (xr, xi), (yr, yi) = parts(b, x), parts(b, y)
    return make(b, b.select(p, xr, yr), b.select(p, xi, yi))


# -- arithmetic -------------------------------------------------------------------------------


def add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    (a, c), (d, e) = parts(b, x), parts(b, y)
    return make(b, b.fadd(a, d), b.fadd(c, e))


def subtract(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    (a, c), (d, e) = parts(b, x), parts(b, y)
    return make(b, b.fsub(a, d), b.fsub(c, e))


def multiply(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    # (a + ib)(c + id) = (ac - bd) + i(ad + bc), contracted as NumPy's compiled loop is:
    # re = fma(a, c, -(b d)), im = fma(a, d, b c) (bit for bit the evaluator's values,
    # including (1e300 + inf i)(1e300 + i) = -inf + inf i where the plain form gives NaN)
    (a, bi), (c, d) = parts(b, x), parts(b, y)
    re = _fintr(b, "fma", a, c, b.fneg(b.fmul(bi, d)))
    im = _fintr(b, "fma", a, d, b.fmul(bi, c))
    return make(b, re, im)


def multiply_plain(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """(ac - bd) + i(ad + bc) with every product rounded (no FMA): NumPy's scalar complex
    product, which its complex power loop uses (the multiply ufunc's loop contracts)."""
    (a, bi), (c, d) = parts(b, x), parts(b, y)
    return make(b, b.fsub(b.fmul(a, c), b.fmul(bi, d)), b.fadd(b.fmul(a, d), b.fmul(bi, c)))


def divide(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """Smith's algorithm, NumPy's branches as selects:
    |c| >= |d|, both zero: (a / |c|, b / |c|);
    |c| >= |d|:  r = d / c, s = 1 / (c + d r): ((a + b r) s, (b - a r) s);
    otherwise:   r = c / d, s = 1 / (d + c r): ((a r + b) s, (b r - a) s)
    (a NaN part fails |c| >= |d| and takes the last branch, as in NumPy)."""
    (a, bi), (c, d) = parts(b, x), parts(b, y)
    ty = a.type
    one, zero = ir.Constant(ty, 1.0), ir.Constant(ty, 0.0)
    ac, ad = fabs(b, c), fabs(b, d)
    c_big = b.fcmp_ordered(">=", ac, ad)
    both_zero = b.and_(b.fcmp_ordered("==", ac, zero), b.fcmp_ordered("==", ad, zero))
    # branch 1 (|c| >= |d|)
    r1 = b.fdiv(d, c)
    s1 = b.fdiv(one, b.fadd(c, b.fmul(d, r1)))
    re1 = b.fmul(b.fadd(a, b.fmul(bi, r1)), s1)
    im1 = b.fmul(b.fsub(bi, b.fmul(a, r1)), s1)
    # branch 2 (|c| < |d| or a NaN)
    r2 = b.fdiv(c, d)
    s2 = b.fdiv(one, b.fadd(d, b.fmul(c, r2)))
    re2 = b.fmul(b.fadd(b.fmul(a, r2), bi), s2)
    im2 = b.fmul(b.fsub(b.fmul(bi, r2), a), s2)
    # the zero divisor
    re0, im0 = b.fdiv(a, ac), b.fdiv(bi, ac)
    re = b.select(c_big, b.select(both_zero, re0, re1), re2)
    im = b.select(c_big, b.select(both_zero, im0, im1), im2)
    return make(b, re, im)


def negate(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    re, im = parts(b, x)
    return make(b, b.fneg(re), b.fneg(im))


def hypot(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """sqrt(x^2 + y^2) without spurious overflow or underflow; inf if either is infinite
    (even with a NaN in the other), else NaN if either is NaN.

    f32 parts: computed in double and rounded once. f64: with m = max(|x|, |y|) above
    2^500 the parts are scaled by 2^-600 first, below 2^-500 by 2^600 (exact: powers of
    two), so the squares neither overflow nor lose bits to underflow; the sum of squares
    is carried exactly (FMAs) into a corrected square root."""
    ty = x.type
    inf = ir.Constant(ty, float("inf"))
    either_inf = b.or_(isinf(b, x), isinf(b, y))
    if str(ty) == "float":
        dx, dy = b.fpext(x, ir.DoubleType()), b.fpext(y, ir.DoubleType())
        h = _fintr(b, "sqrt", b.fadd(b.fmul(dx, dx), b.fmul(dy, dy)))
        return b.select(either_inf, inf, b.fptrunc(h, ty))
    ax, ay = fabs(b, x), fabs(b, y)
    m = b.select(b.fcmp_ordered(">", ax, ay), ax, ay)
    big = b.fcmp_ordered(">", m, ir.Constant(ty, 2.0 ** 500))
    small = b.fcmp_ordered("<", m, ir.Constant(ty, 2.0 ** -500))
    scale = b.select(big, ir.Constant(ty, 2.0 ** -600),
                     b.select(small, ir.Constant(ty, 2.0 ** 600), ir.Constant(ty, 1.0)))
    unscale = b.select(big, ir.Constant(ty, 2.0 ** 600),
                       b.select(small, ir.Constant(ty, 2.0 ** -600), ir.Constant(ty, 1.0)))
    # hi >= lo (NaN lands in lo: every step below stays NaN)
    big_first = b.fcmp_ordered(">=", ax, ay)
    hi = b.fmul(b.select(big_first, ax, ay), scale)
    lo = b.fmul(b.select(big_first, ay, ax), scale)
    # hi^2 + lo^2 as s + e: each square split exactly by an FMA, their sum by Fast2Sum
    # (hi^2 >= lo^2); then one Newton step from r0 = sqrt(s) on the exact residual
    # s + e - r0^2, so the root is within about half an ulp (glibc's hypot, NumPy's, is
    # correctly rounded: log |z| near |z| = 1 needs that last bit)
    p, q = b.fmul(hi, hi), b.fmul(lo, lo)
    ep = _fintr(b, "fma", hi, hi, b.fneg(p))
    eq = _fintr(b, "fma", lo, lo, b.fneg(q))
    s_ = b.fadd(p, q)
    es = b.fsub(q, b.fsub(s_, p))
    e = b.fadd(es, b.fadd(ep, eq))
    r0 = _fintr(b, "sqrt", s_)
    resid = b.fadd(b.fneg(_fintr(b, "fma", r0, r0, b.fneg(s_))), e)
    r = b.fadd(r0, b.fdiv(resid, b.fmul(r0, ir.Constant(ty, 2.0))))
    r = b.select(b.fcmp_ordered("==", r0, ir.Constant(ty, 0.0)), r0, r)  # (0/0)
    h = b.fmul(r, unscale)
    return b.select(either_inf, inf, h)


def abs_(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    re, im = parts(b, x)
    return hypot(b, re, im)


def sign(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """The evaluator's sign: NaN (in either part) and zero stay as they are; else NumPy 2's
    z / |z|, where one infinite part gives (copysign(1 or 0, re), copysign(1 or 0, im))
    (the unit vector along the infinite axis) and two give NaN + NaN i. (JAX computes
    z / |z| everywhere, NaN for any infinity; we follow the evaluator, which eager mode
    runs, so eager and compiled code agree.)"""
    re, im = parts(b, x)
    ty = re.type
    zero, one = ir.Constant(ty, 0.0), ir.Constant(ty, 1.0)
    keep = b.or_(b.or_(isnan(b, re), isnan(b, im)),
                 b.and_(b.fcmp_ordered("==", re, zero), b.fcmp_ordered("==", im, zero)))
    h = hypot(b, re, im)
    out = make(b, b.fdiv(re, h), b.fdiv(im, h))
    re_inf, im_inf = isinf(b, re), isinf(b, im)
    nan = ir.Constant(ty, float("nan"))
    axis = make(b, _fintr(b, "copysign", b.select(re_inf, one, zero), re),
                _fintr(b, "copysign", b.select(im_inf, one, zero), im))
    out = select(b, b.or_(re_inf, im_inf), axis, out)
    out = select(b, b.and_(re_inf, im_inf), make(b, nan, nan), out)
    return select(b, keep, x, out)


def compare(b: ir.IRBuilder, direction: str, x: ir.Value, y: ir.Value) -> ir.Value:
    (a, c), (d, e) = parts(b, x), parts(b, y)
    if direction == "EQ":
        return b.and_(b.fcmp_ordered("==", a, d), b.fcmp_ordered("==", c, e))
    if direction == "NE":
        return b.or_(b.fcmp_unordered("!=", a, d), b.fcmp_unordered("!=", c, e))
    raise NotImplementedError(f"compare {direction} on complex values")


def convert(b: ir.IRBuilder, src: str, dst: str, x: ir.Value) -> ir.Value:
    """complex -> complex part by part; real -> complex with a +0 imaginary part;
    complex -> real type: the real part converted (the evaluator's convert_array)."""
    if src == dst:
        return x
    if is_complex(src) and is_complex(dst):
        re, im = parts(b, x)
        c_src, c_dst = complex_component(src), complex_component(dst)
        return make(b, conv.convert(b, c_src, c_dst, re), conv.convert(b, c_src, c_dst, im))
    if is_complex(dst):
        part = complex_component(dst)
        re = conv.convert(b, src, part, x)
        return make(b, re, fconst(reg_type(part), 0.0))
    re, _ = parts(b, x)
    return conv.convert(b, complex_component(src), dst, re)


# -- dispatch ---------------------------------------------------------------------------------


_BINARY = {"add": add, "subtract": subtract, "multiply": multiply, "divide": divide}
_UNARY = {"negate": negate, "abs": abs_, "sign": sign}
# the opcodes this module computes (complex_math.COMPLEX_MATH adds the math)
OPCODES: frozenset[str] = frozenset(
    {*_BINARY, *_UNARY, "real", "imag", "complex", "compare", "select", "convert", "copy"})


def emit(b: ir.IRBuilder, opcode: str, in_types: list[str], out_type: str,
         args: list[ir.Value], attrs: dict[str, Any], precise: bool, math: Any) -> Result:
    """An elementwise opcode with a complex operand or result (see the module docstring)."""
    if opcode in _BINARY:
        return _BINARY[opcode](b, args[0], args[1]), None
    if opcode in _UNARY:
        return _UNARY[opcode](b, args[0]), None
    if opcode == "real":
        return b.extract_value(args[0], 0), None
    if opcode == "imag":
        return b.extract_value(args[0], 1), None
    if opcode == "complex":
        return make(b, args[0], args[1]), None
    if opcode == "compare":
        return compare(b, attrs["direction"], args[0], args[1]), None
    if opcode == "select":
        return select(b, args[0], args[1], args[2]), None
    if opcode == "convert":
        return convert(b, in_types[0], out_type, args[0]), None
    if opcode == "copy":
        return args[0], None
    from ember.codegen import complex_math

    return complex_math.emit(b, opcode, in_types, args, precise, math)


__all__ = ["OPCODES", "abs_", "add", "compare", "convert", "divide", "emit", "hypot", "make",
           "multiply", "multiply_plain", "negate", "parts", "select", "sign", "subtract"]
