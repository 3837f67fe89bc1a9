"""Rewrite Ember-only opcodes into HLO that XLA's compilers accept.

Input: an optimized HLO Module (a clone the caller owns; rewritten in place). Output: the
same module where every instruction is one XLA's HLO text parser knows and its CPU (and
TPU) compiler implements, or `Unsupported` naming the first opcode with no rewrite.

Ember's opcode table (ember/hlo/opcodes.py) has transcendental opcodes XLA's HLO does not:
JAX lowers them to CHLO, which XLA decomposes before HLO. Measured with jaxlib 0.10.2:
`atan`, `exp2`, `log2`, `log10`, `erfc`, `erf-inv` fail to parse; `sinh`, `cosh`, `asin`,
`acos`, `asinh`, `acosh`, `atanh` parse but do not compile ("UNIMPLEMENTED"); `abs` and
`sign` of unsigned integers fail StableHLO's verifier. Each gets an
expansion over opcodes XLA has, chosen to keep the error within a few ulps (no
cancellation where the result is small, no overflow before the result overflows):

    atan(x)  => atan2(x, 1)                     exp2(x)  => power(2, x)
    log2(x)  => log(x) / log(2)                 log10(x) => log(x) / log(10)
    asin(x)  => atan2(x, sqrt((1-x)(1+x)))      acos(x)  => atan2(sqrt((1-x)(1+x)), x)
    atanh(x) => log1p(2x / (1-x)) / 2
    sinh(x)  => |x| < 1: (e + e/(e+1)) / 2 with e = expm1(x);
                else sign(x) (h*h/2 - 1/(2 h*h)) with h = exp(|x|/2)
    cosh(x)  => (h*h)/2 + 1/(2 h*h) with h = exp(|x|/2)
    abs(x)   => x (unsigned)                    sign(x)  => select(x != 0, 1, 0) (unsigned)
    logistic(x) => 1 / (1 + exp(-x))            (as jax.jit lowers it: XLA's logistic op
                                                 on a TPU is 0 below ~1e-20)
    asinh(x) => sign(x) * (|x| < 2^(p/2): log1p(|x| + x^2/(1 + sqrt(1+x^2)));
                else log(|x|) + log(2))
    acosh(x) => x < 1: NaN; x < 2^(p/2): log1p(t + sqrt(t(x+1))) with t = x-1; else log(x) + log(2)

    erf-inv(x) (f32; f16 and bf16 through f32) => the CPU's float body (mathlib
                f32/special.py) written in HLO: w = -log((1-a)(1+a)) (log1p(-a*a) for
                a < 1/2, where 1 - a*a loses nothing and the chip's log near 1 would),
                a = |x|; y = a (A0 + w A1(w)) for w <= 6.25, a (B0 + v B1(v)) beyond,
                v = sqrt(w) - 13/4; sign, +-1 -> +-inf, |x| > 1 and NaN -> NaN, +-0 kept

(`h = exp(|x|/2)` keeps `exp` finite up to the overflow of the result itself; p is the
significand width, so x^2 stays finite.) erf-inv without fma rounds a few times more than
the CPU's body (measured within 20 ulps of it: tests/backends/test_xla_cpu.py). `erfc`, and
erf-inv of f64 (whose polynomials reach 2^-27 only: the CPU refines them with a Halley
step whose residual needs erfc near |x| = 1), have no short accurate expansion and raise
`Unsupported` (the driver runs such a module on the interpreter). random.normal draws
through erf-inv, so without the expansion every f32 program that draws normals would.
`clz` is XLA's `count-leading-zeros`: only a spelling, fixed in the text (`xla_text`).
Custom calls (host callbacks, Ember's own targets) are Ember runtime features: Unsupported.
A `fusion` (none from the xla backends' pipeline, but a module may arrive fused) becomes a
`call` of its computation, as the issue found the TPU compiler needs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from ember.backends import Unsupported
from ember.hlo.builder import Builder
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.printer import print_module
from ember.hlo.shape import numpy_dtype

# opcodes XLA lacks with no expansion here (the reason goes into the Unsupported message)
_UNSUPPORTED = {
    "erfc": "XLA's HLO has no erfc (JAX decomposes CHLO's erfc before HLO)",
    "custom-call": "custom calls are Ember runtime targets XLA does not know",
}


class _At:
    """A Builder that adds to an existing computation, for one replacement. Elementwise
    helpers take and give instructions of the replaced instruction's shape."""

    def __init__(self, comp: Computation, inst: Instruction) -> None:
        self.b = Builder(comp.name)
        self.b.computation = comp  # (add to `comp` itself: Builder.op checks operands' parent)
        self.b.set_metadata(**inst.metadata)
        self.shape = inst.shape
        self.dtype = numpy_dtype(inst.shape.element_type)

    def const(self, value: float) -> Instruction:
        c = self.b.constant(np.array(value, dtype=self.dtype))
        return self.b.broadcast(c, self.shape.dimensions)

    def __call__(self, opcode: str, *xs: Instruction) -> Instruction:
        return self.b.op(opcode, xs)

    def lt(self, x: Instruction, y: Instruction) -> Instruction:
        return self.b.compare(x, y, "LT")

    def select(self, p: Instruction, a: Instruction, b: Instruction) -> Instruction:
        return self.b.select(p, a, b)

    def big(self) -> Instruction:
        """2^(p/2): above it x*x may overflow (p: the significand width)."""
        p = np.finfo(self.dtype).nmant + 1
        return self.const(2.0 ** (p // 2))

    def in_f32(self) -> _At:
        """The same place, with float32 constants (for a computation widened to f32)."""
        wide = _At.__new__(_At)
        wide.b, wide.shape, wide.dtype = self.b, self.shape, np.dtype(np.float32)
        return wide


def _atan(a: _At, x: Instruction) -> Instruction:
    return a("atan2", x, a.const(1.0))


def _exp2(a: _At, x: Instruction) -> Instruction:
    return a("power", a.const(2.0), x)


def _log_base(base: float) -> Callable[[_At, Instruction], Instruction]:
    def rule(a: _At, x: Instruction) -> Instruction:
        return a("divide", a("log", x), a.const(math.log(base)))
    return rule


def _one_minus_x_sq_root(a: _At, x: Instruction) -> Instruction:
    """sqrt((1-x)(1+x)): no cancellation near |x| = 1 (1 - x*x would lose it)."""
    one = a.const(1.0)
    return a("sqrt", a("multiply", a("subtract", one, x), a("add", one, x)))


def _asin(a: _At, x: Instruction) -> Instruction:
    return a("atan2", x, _one_minus_x_sq_root(a, x))


def _acos(a: _At, x: Instruction) -> Instruction:
    return a("atan2", _one_minus_x_sq_root(a, x), x)


def _atanh(a: _At, x: Instruction) -> Instruction:
    two_x = a("add", x, x)
    return a("multiply", a.const(0.5), a("log-plus-one", a("divide", two_x,
                                                           a("subtract", a.const(1.0), x))))


def _half_exp(a: _At, x: Instruction) -> Instruction:
    """exp(|x|/2): its square is e^|x|, reached without overflowing first."""
    return a("exponential", a("multiply", a("abs", x), a.const(0.5)))


def _cosh(a: _At, x: Instruction) -> Instruction:
    h = _half_exp(a, x)
    half = a.const(0.5)
    big = a("multiply", a("multiply", half, h), h)
    return a("add", big, a("divide", half, a("multiply", h, h)))


def _sinh(a: _At, x: Instruction) -> Instruction:
    # small |x|: e^x - e^-x = (e+1) - 1/(e+1) = e + e/(e+1), e = expm1(x): no cancellation
    half = a.const(0.5)
    e = a("exponential-minus-one", x)
    small = a("multiply", half, a("add", e, a("divide", e, a("add", e, a.const(1.0)))))
    h = _half_exp(a, x)
    big = a("subtract", a("multiply", a("multiply", half, h), h),
            a("divide", half, a("multiply", h, h)))
    big = a("multiply", a("sign", x), big)
    return a.select(a.lt(a("abs", x), a.const(1.0)), small, big)


def _asinh(a: _At, x: Instruction) -> Instruction:
    ax = a("abs", x)
    one = a.const(1.0)
    sq = a("multiply", ax, ax)
    small = a("log-plus-one", a("add", ax, a("divide", sq, a("add", one,
                                                               a("sqrt", a("add", one, sq))))))
    big = a("add", a("log", ax), a.const(math.log(2.0)))
    # (sign(x) * ...: NaN stays NaN, -0 stays -0)
    return a("multiply", a("sign", x), a.select(a.lt(ax, a.big()), small, big))


def _acosh(a: _At, x: Instruction) -> Instruction:
    one = a.const(1.0)
    t = a("subtract", x, one)
    small = a("log-plus-one", a("add", t, a("sqrt", a("multiply", t, a("add", x, one)))))
    big = a("add", a("log", x), a.const(math.log(2.0)))
    # (x < 1 is NaN: for a huge negative x the small form would give +inf)
    return a.select(a.lt(x, one), a.const(math.nan), a.select(a.lt(x, a.big()), small, big))


def _logistic(a: _At, x: Instruction) -> Instruction:
    # 1 / (1 + exp(-x)), as jax.jit lowers it: XLA's own `logistic` on a TPU gives 0 below
    # about 1e-20 and loses relative accuracy below 1e-3 (measured on the v5e)
    one = a.const(1.0)
    return a("divide", one, a("add", one, a("exponential", a("negate", x))))


def _abs(a: _At, x: Instruction) -> Instruction | None:
    # (StableHLO's abs and sign take signed integers and floats only)
    return x if a.dtype.kind == "u" else None


def _sign(a: _At, x: Instruction) -> Instruction | None:
    if a.dtype.kind != "u":
        return None
    nonzero = a.b.compare(x, a.const(0), "NE")
    return a.select(nonzero, a.const(1), a.const(0))


def _horner(a: _At, v: Instruction, coeffs: list[float]) -> Instruction:
    """c0 + v (c1 + v (c2 + ...)), coefficients c0 first."""
    acc = a.const(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = a("add", a("multiply", acc, v), a.const(c))
    return acc


def _scaled(a: _At, ax: Instruction, v: Instruction, c0: tuple[float, float],
            coeffs: list[float]) -> Instruction:
    """ax (c0 + v C(v)) with c0 = hi + lo, the large hi multiplied on its own."""
    inner = a("add", a("multiply", v, _horner(a, v, coeffs)), a.const(c0[1]))
    return a("add", a("multiply", ax, a.const(c0[0])), a("multiply", ax, inner))


def _erf_inv(a: _At, x: Instruction) -> Instruction:
    from ember.backends.cpu.mathlib.f32.special import ERFINV_SHIFT, ERFINV_SPLIT
    from ember.backends.cpu.mathlib.tables import coeffs32

    if a.dtype == np.float64:
        raise Unsupported("erf-inv of f64: XLA's HLO has no erf-inv, and no expansion here "
                          "reaches f64's precision (it needs erfc, which XLA lacks too)")
    narrow = a.dtype != np.float32
    w32 = a.in_f32() if narrow else a
    x32 = a.b.convert(x, "f32") if narrow else x
    one = w32.const(1.0)
    ax = w32("abs", x32)
    sq = w32("multiply", ax, ax)
    near_one = w32("multiply", w32("subtract", one, ax), w32("add", one, ax))
    w = w32("negate", w32.select(w32.lt(ax, w32.const(0.5)),
                                 w32("log-plus-one", w32("negate", sq)),
                                 w32("log", near_one)))
    ya = _scaled(w32, ax, w, coeffs32.ERFINV_A0, coeffs32.ERFINV_A1)
    v = w32("subtract", w32("sqrt", w), w32.const(ERFINV_SHIFT))
    yb = _scaled(w32, ax, v, coeffs32.ERFINV_B0, coeffs32.ERFINV_B1)
    y = w32.select(w32.b.compare(w, w32.const(ERFINV_SPLIT), "LE"), ya, yb)
    y = w32.select(w32.b.compare(ax, one, "EQ"), w32.const(math.inf), y)
    # (sign(x) * y would make 0 * inf a NaN: the sign goes on by a select)
    y = w32.select(w32.lt(x32, w32.const(0.0)), w32("negate", y), y)
    y = w32.select(w32.b.compare(x32, w32.const(0.0), "EQ"), x32, y)  # +-0 stays
    bad = w32.b.op("or", (w32.b.compare(ax, one, "GT"), w32.b.compare(x32, x32, "NE")))
    y = w32.select(bad, w32.const(math.nan), y)
    return a.b.convert(y, a.shape.element_type) if narrow else y

_EXPANSIONS: dict[str, Callable[[_At, Instruction], Instruction | None]] = {
    "abs": _abs, "sign": _sign,
    "atan": _atan, "exp2": _exp2, "log2": _log_base(2.0), "log10": _log_base(10.0),
    "asin": _asin, "acos": _acos, "atanh": _atanh, "sinh": _sinh, "cosh": _cosh,
    "asinh": _asinh, "acosh": _acosh, "logistic": _logistic, "erf-inv": _erf_inv,
}

# expansions that hold for complex operands too (the others compare, take abs or atan2)
_COMPLEX_SAFE_EXPANSIONS = frozenset({"abs", "sign", "exp2", "log2", "log10", "logistic"})


def _fusion_to_call(comp: Computation, inst: Instruction) -> None:
    """A fusion becomes a call of its fused computation: XLA's importer rejects `fusion`
    ("failed to legalize operation 'mhlo.fusion'") and fuses again by itself."""
    (fused,) = inst.called_computations
    fused.is_fusion_computation = False
    call = Instruction("call", inst.shape, inst.operands, called_computations=[fused],
                       metadata=inst.metadata)
    comp.replace_instruction(inst, call)


def legalize(module: Module, custom_call_targets: frozenset[str] = frozenset()) -> bool:
    """Replace every Ember-only opcode of `module` (in place) by its expansion; raises
    `Unsupported` for one without. Custom calls whose target is in `custom_call_targets`
    (the TPU backend's `tpu_custom_call` kernels) are XLA's own: kept. True if anything
    changed."""
    changed = False
    for comp in module.computations:
        for inst in list(comp.post_order()):
            if (inst.opcode == "custom-call"
                    and inst.attrs.get("custom_call_target") in custom_call_targets):
                continue
            if inst.opcode in _UNSUPPORTED:
                raise Unsupported(f"{inst.opcode}: {_UNSUPPORTED[inst.opcode]}")
            if inst.opcode == "fusion":
                _fusion_to_call(comp, inst)
                changed = True
                continue
            rule = _EXPANSIONS.get(inst.opcode)
            if rule is None:
                continue
            if (inst.shape.element_type in ("c64", "c128")
                    and inst.opcode not in _COMPLEX_SAFE_EXPANSIONS):
                raise Unsupported(f"{inst.opcode} of complex values: its expansion here is "
                                  "for real operands only")
            new = rule(_At(comp, inst), inst.operands[0])
            if new is None:  # (the rule keeps this one: e.g. abs of a signed type)
                continue
            comp.replace_instruction(inst, new)
            changed = True
    return changed


# Ember's spelling -> XLA's, where they differ only in the name. Instruction names print
# with a `%` and operands inside parentheses, so " name(" is the opcode and nothing else.
_SPELLINGS = {"clz": "count-leading-zeros"}
_SPELLING_RE = re.compile(r" (" + "|".join(map(re.escape, _SPELLINGS)) + r")\(")


def xla_text(module: Module) -> str:
    """The (legalized) module as HLO text XLA's parser reads: Ember's printer in its
    parsable mode, no metadata (XLA would keep it, but it is not needed to run), with XLA's
    spelling of the opcodes whose names differ."""
    text = print_module(module, mode="parsable")
    return _SPELLING_RE.sub(lambda m: f" {_SPELLINGS[m.group(1)]}(", text)
