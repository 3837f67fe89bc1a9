"""A small helper for writing floating-point IR: constants, arithmetic, intrinsics.

Input: an IRBuilder positioned in a block and an element type (f32 or f64). Output: values
built with strict IEEE semantics (no fast-math flags). `poly(x, coeffs)` evaluates
c0 + c1 x + ... with fused multiply-adds (Horner's rule, Estrin's scheme inside long ones).
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.ir as ir

from ember.codegen.irtypes import intrinsic, type_suffix


def scalef_ldexp() -> bool:
    """Whether `Fp.ldexp` emits `llvm.ldexp`: on hosts with AVX-512 F and VL, whose
    vscalefps/pd (any vector width, and scalars) it lowers to; elsewhere LLVM would call
    the C library's ldexp per element."""
    from ember.backends.cpu.jit.llvm_target import host_has

    return host_has("+avx512f", "+avx512vl")


class Fp:
    """Float ops of one type on one builder."""

    def __init__(self, b: ir.IRBuilder, ty: ir.Type) -> None:
        self.b = b
        self.ty = ty
        self.module = b.module
        self.bits = 32 if str(ty) == "float" else 64
        self.ity = ir.IntType(self.bits)
        self.mbits = 23 if self.bits == 32 else 52
        self.bias = 127 if self.bits == 32 else 1023

    # constants and bits
    def c(self, v: float) -> ir.Constant:
        return ir.Constant(self.ty, float(v))

    def ci(self, v: int) -> ir.Constant:
        return ir.Constant(self.ity, int(v))

    def to_bits(self, x: ir.Value) -> ir.Value:
        return self.b.bitcast(x, self.ity)

    def from_bits(self, i: ir.Value) -> ir.Value:
        return self.b.bitcast(i, self.ty)

    # arithmetic
    def add(self, x, y):
        return self.b.fadd(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y)

    def mul(self, x, y):
        return self.b.fmul(x, y)

    def div(self, x, y):
        return self.b.fdiv(x, y)

    def neg(self, x):
        return self.b.fneg(x)

    def _intr(self, name: str, *args: ir.Value) -> ir.Value:
        fn = intrinsic(self.module, f"llvm.{name}.{type_suffix(self.ty)}", self.ty,
                       [self.ty] * len(args))
        return self.b.call(fn, list(args))

    def fma(self, x, y, z):
        return self._intr("fma", x, y, z)

    def fabs(self, x):
        return self._intr("fabs", x)

    def rint(self, x):
        return self._intr("rint", x)

    def copysign(self, mag, sign):
        return self._intr("copysign", mag, sign)

    def sqrt(self, x):
        return self._intr("sqrt", x)

    def poly(self, x: ir.Value, coeffs: Sequence[float], horner: bool = False) -> ir.Value:
        """c0 + c1 x + c2 x^2 + ...: Horner's rule for up to 5 coefficients (or `horner`);
        beyond, c0 + x (c1 + x E(x)) with E the rest by Estrin's scheme (pairs
        c_2i + c_2i+1 x, then pairs of those with x^2, x^4, ...).

        Why Estrin: a vectorized math loop is bound by latency more than by throughput, and
        Horner's rule is one chain of n - 1 dependent fmas (4 cycles each) where Estrin's
        has about log2(n) + 1. The two lowest terms stay Horner steps, so the result
        rounds once at the end as with Horner (Estrin's first pair c0 + c1 x would round
        the big terms twice), and the rest only perturbs a term scaled by x^2."""
        if horner or len(coeffs) <= 5:
            acc: ir.Value = self.c(coeffs[-1])
            for c in reversed(coeffs[:-1]):
                acc = self.fma(acc, x, self.c(c))
            return acc
        rest = coeffs[2:]
        terms: list[ir.Value] = [
            self.fma(self.c(rest[i + 1]), x, self.c(rest[i])) if i + 1 < len(rest)
            else self.c(rest[i]) for i in range(0, len(rest), 2)]
        power = x
        while len(terms) > 1:
            power = self.mul(power, power)
            terms = [self.fma(terms[i + 1], power, terms[i]) if i + 1 < len(terms)
                     else terms[i] for i in range(0, len(terms), 2)]
        acc = self.fma(terms[0], x, self.c(coeffs[1]))
        return self.fma(acc, x, self.c(coeffs[0]))

    # comparisons and selection (ordered: false when either side is NaN)
    def lt(self, x, y):
        return self.b.fcmp_ordered("<", x, y)

    def gt(self, x, y):
        return self.b.fcmp_ordered(">", x, y)

    def ge(self, x, y):
        return self.b.fcmp_ordered(">=", x, y)

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", x, y)

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def sel(self, c, x, y):
        return self.b.select(c, x, y)

    def pow2i(self, k: ir.Value) -> ir.Value:
        """2^k for an integer k (of type ity) in the normal exponent range."""
        e = self.b.add(k, self.ci(self.bias))
        return self.from_bits(self.b.shl(e, self.ci(self.mbits)))

    def to_int(self, x: ir.Value) -> ir.Value:
        """fptosi of a value the caller has made finite and in range."""
        return self.b.fptosi(x, self.ity)

    def le(self, x, y):
        return self.b.fcmp_ordered("<=", x, y)

    def signbit(self, x: ir.Value) -> ir.Value:
        """i1: the sign bit of x is set (true for -0.0 and negative NaNs)."""
        return self.b.icmp_signed("<", self.to_bits(x), self.ci(0))

    def isinf(self, x: ir.Value) -> ir.Value:
        return self.eq(self.fabs(x), self.c(float("inf")))

    def poly_c(self, x: ir.Value, coeffs: Sequence[float]) -> ir.Value:
        """Horner without the constant term: x * (c1 + x * (c2 + ...))."""
        return self.mul(x, self.poly(x, coeffs[1:]))

    # error-free transformations (exact with round-to-nearest and no fast-math)
    def two_sum(self, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
        """s + e == a + b exactly, s = fl(a + b) (Knuth, 6 flops, any magnitudes)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    def fast_two_sum(self, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
        """As two_sum when |a| >= |b| (or a == 0) (Dekker, 3 flops)."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def two_prod(self, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
        """p + e == a * b exactly (barring over/underflow), p = fl(a * b)."""
        p = self.mul(a, b)
        return p, self.fma(a, b, self.neg(p))

    def ldexp(self, v: ir.Value, k: ir.Value) -> ir.Value:
        """v * 2^k for an integer k (ity) with |k| <= 2 * bias, rounded once (into the
        subnormal range or to inf). With AVX-512 (`scalef_ldexp`) LLVM's `llvm.ldexp`,
        which X86 lowers to one vscalefps/pd (plus the exponent's conversion), widened by
        the vectorizer like any intrinsic; else two exact power-of-two factors, so only
        the second multiply rounds. Same value either way: v 2^k correctly rounded."""
        if scalef_ldexp():
            return self._ldexp_intrinsic(v, k)
        k1 = self.b.ashr(k, self.ci(1))
        k2 = self.b.sub(k, k1)
        return self.mul(self.mul(v, self.pow2i(k1)), self.pow2i(k2))

    def _ldexp_intrinsic(self, v: ir.Value, k: ir.Value) -> ir.Value:
        i32 = ir.IntType(32)
        if isinstance(self.ty, ir.VectorType):
            lanes = self.ty.count
            kty = ir.VectorType(i32, lanes)
            name = f"llvm.ldexp.v{lanes}{type_suffix(self.ty.element)}.v{lanes}i32"
        else:
            kty, name = i32, f"llvm.ldexp.{type_suffix(self.ty)}.i32"
        if self.bits != 32:  # (|k| <= 2 * 1023: exact in i32)
            k = self.b.trunc(k, kty)
        return self.b.call(intrinsic(self.module, name, self.ty, [self.ty, kty]), [v, k])
