"""Mosaic MLIR text: the SSA writer and the table of HLO elementwise opcodes as MLIR ops.

Input: values described by `Vec` (an SSA name, a compute element type, a 2-D block shape)
and HLO opcodes with their attributes. Output: lines of MLIR in the `arith`, `math` and
`vector` dialects, the kernel body that ember/backends/tpu/kernels.py wraps in its
`func.func` (with `window_params`, `iteration_bounds`, `dimension_semantics`).

Element types: the kernel computes f32, i32 (signed or unsigned: MLIR integers are
signless, the op chooses) and i1. bf16 values are widened to f32 on load and rounded on
store, as XLA's TPU compiler keeps a fusion's bf16 intermediates in f32 (XLA's "excess
precision"). `lower(opcode, ...)` returns None for what has no kernel lowering here (the
fusion then goes to the TPU compiler as HLO): math ops outside `MATH_OPS` (the set Mosaic's
lowering handles), integer division and remainder (arith's are undefined where HLO's are
not), float-to-int converts (HLO saturates), 64-bit and sub-32-bit integer types.

Semantics kept from HLO where arith differs:
  shift-left(x, s)            => s u< w ? x << s : 0           (w: the bit width)
  shift-right-logical(x, s)   => s u< w ? x >>u s : 0
  shift-right-arithmetic(x,s) => x >>s min_u(s, w-1)
  sign(x) (integer)           => x > 0 ? 1 : (x < 0 ? -1 : 0)
  is-finite(x)                => |x| < inf (ordered: false on NaN)
and, for ops Mosaic has no math op for, the expansions of ember/backends/xla/legalize.py
over the ones it has (atan, asin, acos, atanh, sinh, cosh), with
  expm1(x)                    => |x| < 1/2 ? Taylor to x^9/9! : e^x - 1  (no log: the chip's
                                 is accurate only absolutely near 1)
  sign(x) (float)             => x > 0 ? 1 : (x < 0 ? -1 : x)  (NaN and -0 kept)
  logistic(x)                 => e = exp(-|x|); x >= 0 ? 1 / (1 + e) : e / (1 + e)  (no
                                 division by a huge 1 + exp(-x))
  compare NE (float)          => une (true on NaN), the others ordered (false on NaN)
Floats print as hexadecimal bit patterns (exact for every value, NaN and inf included).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

# math-dialect ops Mosaic's TPU lowering handles (what Pallas itself lowers to)
MATH_OPS = frozenset({"absf", "absi", "atan2", "ceil", "cos", "ctlz", "ctpop", "erf", "exp",
                      "exp2", "floor", "log", "log1p", "powf", "round", "roundeven", "rsqrt",
                      "sin", "sqrt", "tan", "tanh"})

# HLO element type -> (element type in memory, compute type, signed)
ELEMENT_TYPES: dict[str, tuple[str, str, bool]] = {
    "f32": ("f32", "f32", True), "bf16": ("bf16", "f32", True),
    "s32": ("i32", "i32", True), "u32": ("i32", "i32", False),
    "pred": ("i1", "i1", False),
}


@dataclass(frozen=True)
class Vec:
    """An SSA value of the kernel: a vector `shape` of compute type `t` (f32, i32, i1);
    `signed` says how integer ops read it."""

    name: str
    t: str
    shape: tuple[int, ...]
    signed: bool = True

    @property
    def type(self) -> str:
        return vector_type(self.shape, self.t)


def vector_type(shape: tuple[int, ...], t: str) -> str:
    return f"vector<{'x'.join(map(str, shape))}x{t}>"


def float_bits(value: float) -> str:
    """An f32 literal as MLIR's hexadecimal bit pattern (exact, NaN and inf included)."""
    bits = struct.unpack("<I", struct.pack("<f", np.float32(value)))[0]
    return f"0x{bits:08X}"


def scalar_literal(value: Any, t: str) -> str:
    if t == "f32":
        return float_bits(float(value))
    if t == "i1":
        return "true" if bool(value) else "false"
    # (signless i32: an unsigned value above 2^31 is written as its two's complement)
    return str(int(np.array(value).astype(np.uint32).astype(np.int32)))


class Writer:
    """Appends MLIR lines to a body, naming each result `%vN`."""

    def __init__(self, indent: str = "    ") -> None:
        self.lines: list[str] = []
        self.indent = indent
        self._n = 0

    def fresh(self) -> str:
        self._n += 1
        return f"%v{self._n}"

    def line(self, text: str) -> None:
        self.lines.append(self.indent + text)

    def op(self, text: str) -> str:
        """`%vN = text`; returns %vN."""
        name = self.fresh()
        self.line(f"{name} = {text}")
        return name

    def index(self, k: int) -> str:
        return self.op(f"arith.constant {k} : index")

    def splat(self, value: Any, t: str, shape: tuple[int, ...], signed: bool = True) -> Vec:
        lit = scalar_literal(value, t)
        return Vec(self.op(f"arith.constant dense<{lit}> : {vector_type(shape, t)}"), t,
                   shape, signed)

    def broadcast(self, v: Vec, shape: tuple[int, ...]) -> Vec:
        if v.shape == shape:
            return v
        return Vec(self.op(f"vector.broadcast {v.name} : {v.type} to "
                           f"{vector_type(shape, v.t)}"), v.t, shape, v.signed)

    def scalar_to_vector(self, name: str, t: str, shape: tuple[int, ...],
                         signed: bool) -> Vec:
        return Vec(self.op(f"vector.broadcast {name} : {t} to {vector_type(shape, t)}"), t,
                   shape, signed)

    # -- generic forms -----------------------------------------------------------------

    def binary(self, op: str, a: Vec, b: Vec, t: str | None = None) -> Vec:
        return Vec(self.op(f"{op} {a.name}, {b.name} : {a.type}"), t or a.t, a.shape,
                   a.signed)

    def unary(self, op: str, a: Vec) -> Vec:
        return Vec(self.op(f"{op} {a.name} : {a.type}"), a.t, a.shape, a.signed)

    def cmp(self, kind: str, pred: str, a: Vec, b: Vec) -> Vec:
        return Vec(self.op(f"arith.{kind} {pred}, {a.name}, {b.name} : {a.type}"), "i1",
                   a.shape, False)

    def select(self, p: Vec, a: Vec, b: Vec) -> Vec:
        return Vec(self.op(f"arith.select {p.name}, {a.name}, {b.name} : "
                           f"{p.type}, {a.type}"), a.t, a.shape, a.signed)

    def cast(self, op: str, a: Vec, t: str, signed: bool) -> Vec:
        out = vector_type(a.shape, t)
        return Vec(self.op(f"{op} {a.name} : {a.type} to {out}"), t, a.shape, signed)


# -- the elementwise table ---------------------------------------------------------------

_FLOAT_BINARY = {"add": "arith.addf", "subtract": "arith.subf", "multiply": "arith.mulf",
                 "divide": "arith.divf", "maximum": "arith.maximumf",
                 "minimum": "arith.minimumf", "power": "math.powf", "atan2": "math.atan2"}
_FLOAT_UNARY = {"negate": "arith.negf", "abs": "math.absf", "exponential": "math.exp",
                "exp2": "math.exp2", "log": "math.log", "log-plus-one": "math.log1p",
                "sqrt": "math.sqrt", "rsqrt": "math.rsqrt", "tanh": "math.tanh",
                "sine": "math.sin", "cosine": "math.cos", "tan": "math.tan",
                "floor": "math.floor", "ceil": "math.ceil", "erf": "math.erf",
                "round-nearest-even": "math.roundeven", "round-nearest-afz": "math.round",
                "copy": None}
_INT_BINARY = {"add": "arith.addi", "subtract": "arith.subi", "multiply": "arith.muli",
               "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}
_INT_MINMAX = {("maximum", True): "arith.maxsi", ("maximum", False): "arith.maxui",
               ("minimum", True): "arith.minsi", ("minimum", False): "arith.minui"}
_FLOAT_PRED = {"EQ": "oeq", "NE": "une", "LT": "olt", "LE": "ole", "GT": "ogt", "GE": "oge"}
_INT_PRED = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}


def _math_ok(op: str | None) -> bool:
    return op is None or not op.startswith("math.") or op[5:] in MATH_OPS


def lower(w: Writer, opcode: str, args: list[Vec], attrs: dict[str, Any],
          out_type: str, in_type: str = "") -> Vec | None:
    """`opcode(args)` as MLIR ops appended to `w` (every arg has the result's block shape;
    `out_type` is the HLO result's element type, `in_type` its first operand's), or None
    where there is no lowering."""
    if out_type not in ELEMENT_TYPES:
        return None
    t = ELEMENT_TYPES[out_type][1]
    a = args[0] if args else None
    if opcode == "select":
        return w.select(args[0], args[1], args[2])
    if opcode == "compare":
        return _compare(w, args[0], args[1], attrs)
    if opcode == "convert":
        return _convert(w, a, out_type, in_type)
    if a is None:
        return None
    if a.t == "f32":
        return _float(w, opcode, args)
    if a.t == "i1" and opcode in ("and", "or", "xor"):
        return w.binary(_INT_BINARY[opcode], args[0], args[1])
    if a.t == "i1" and opcode == "not":
        return w.binary("arith.xori", a, w.splat(True, "i1", a.shape, False))
    if a.t == "i32" and t == "i32":
        return _int(w, opcode, args)
    return None


def _float(w: Writer, opcode: str, args: list[Vec]) -> Vec | None:
    a = args[0]
    if opcode in _FLOAT_BINARY and _math_ok(_FLOAT_BINARY[opcode]):
        return w.binary(_FLOAT_BINARY[opcode], a, args[1])
    if opcode in _FLOAT_UNARY and _math_ok(_FLOAT_UNARY[opcode]):
        op = _FLOAT_UNARY[opcode]
        return a if op is None else w.unary(op, a)
    if opcode == "logistic":  # e = exp(-|x|): x >= 0 ? 1 / (1 + e) : e / (1 + e)
        one = w.splat(1.0, "f32", a.shape)
        e = w.unary("math.exp", w.unary("arith.negf", w.unary("math.absf", a)))
        num = w.select(w.cmp("cmpf", "oge", a, w.splat(0.0, "f32", a.shape)), one, e)
        return w.binary("arith.divf", num, w.binary("arith.addf", one, e))
    if opcode == "sign":  # x > 0 ? 1 : (x < 0 ? -1 : x): NaN and -0 pass through
        zero = w.splat(0.0, "f32", a.shape)
        neg = w.select(w.cmp("cmpf", "olt", a, zero), w.splat(-1.0, "f32", a.shape), a)
        return w.select(w.cmp("cmpf", "ogt", a, zero), w.splat(1.0, "f32", a.shape), neg)
    if opcode == "clamp":  # clamp(lo, x, hi) = min(max(x, lo), hi)
        lo, x, hi = args
        return w.binary("arith.minimumf", w.binary("arith.maximumf", x, lo), hi)
    if opcode in _FLOAT_EXPANSIONS:
        return _FLOAT_EXPANSIONS[opcode](_F(w, a.shape), a)
    if opcode == "is-finite":  # |x| < inf, ordered: false for NaN and +-inf
        inf = w.splat(float("inf"), "f32", a.shape)
        return w.cmp("cmpf", "olt", w.unary("math.absf", a), inf)
    return None


class _F:
    """f32 helpers on one block shape, for the expansions below."""

    def __init__(self, w: Writer, shape: tuple[int, ...]) -> None:
        self.w, self.shape = w, shape

    def c(self, value: float) -> Vec:
        return self.w.splat(value, "f32", self.shape)

    def __call__(self, op: str, *xs: Vec) -> Vec:
        return self.w.binary(op, *xs) if len(xs) == 2 else self.w.unary(op, xs[0])

    def lt(self, a: Vec, b: Vec) -> Vec:
        return self.w.cmp("cmpf", "olt", a, b)


def _one_minus_x_sq_root(f: _F, x: Vec) -> Vec:
    """sqrt((1-x)(1+x)): no cancellation near |x| = 1."""
    one = f.c(1.0)
    return f("math.sqrt", f("arith.mulf", f("arith.subf", one, x), f("arith.addf", one, x)))


# 1/k! for k = 2..9: expm1(x) = x + x^2/2! + ... + x^9/9! within 6e-10 relative on |x| <= 1/2
_EXPM1_TAYLOR = [1.0 / math.factorial(k) for k in range(2, 10)]


def _expm1(f: _F, x: Vec) -> Vec:
    # |x| <= 1/2: the Taylor polynomial, x (1 + x (1/2! + x (1/3! + ...))) (no cancellation,
    # and no log: the chip's log is accurate only absolutely near 1, which Kahan's
    # (u - 1) x / log(u) would carry into the result); else e^x - 1, which loses at most
    # 1.6 bits there (-1 at -inf, inf at inf, NaN kept)
    p = f.c(_EXPM1_TAYLOR[-1])
    for coef in reversed(_EXPM1_TAYLOR[:-1]):
        p = f("arith.addf", f("arith.mulf", p, x), f.c(coef))
    small = f("arith.mulf", x, f("arith.addf", f.c(1.0), f("arith.mulf", x, p)))
    big = f("arith.subf", f("math.exp", x), f.c(1.0))
    return f.w.select(f.lt(f("math.absf", x), f.c(0.5)), small, big)


def _half_exp(f: _F, x: Vec) -> Vec:
    """exp(|x|/2): its square is e^|x| without overflowing first."""
    return f("math.exp", f("arith.mulf", f("math.absf", x), f.c(0.5)))


def _cosh(f: _F, x: Vec) -> Vec:
    h, half = _half_exp(f, x), f.c(0.5)
    big = f("arith.mulf", f("arith.mulf", half, h), h)
    return f("arith.addf", big, f("arith.divf", half, f("arith.mulf", h, h)))


def _sinh(f: _F, x: Vec) -> Vec:
    half, e = f.c(0.5), _expm1(f, x)
    small = f("arith.mulf", half, f("arith.addf", e, f("arith.divf", e, f("arith.addf", e,
                                                                         f.c(1.0)))))
    h = _half_exp(f, x)
    big = f("arith.subf", f("arith.mulf", f("arith.mulf", half, h), h),
            f("arith.divf", half, f("arith.mulf", h, h)))
    big = f.w.select(f.lt(x, f.c(0.0)), f("arith.negf", big), big)
    return f.w.select(f.lt(f("math.absf", x), f.c(1.0)), small, big)


_FLOAT_EXPANSIONS = {
    "atan": lambda f, x: f("math.atan2", x, f.c(1.0)),
    "asin": lambda f, x: f("math.atan2", x, _one_minus_x_sq_root(f, x)),
    "acos": lambda f, x: f("math.atan2", _one_minus_x_sq_root(f, x), x),
    # atanh(x) = log1p(2x / (1 - x)) / 2
    "atanh": lambda f, x: f("arith.mulf", f.c(0.5), f("math.log1p", f(
        "arith.divf", f("arith.addf", x, x), f("arith.subf", f.c(1.0), x)))),
    "exponential-minus-one": _expm1, "cosh": _cosh, "sinh": _sinh,
}


def _int(w: Writer, opcode: str, args: list[Vec]) -> Vec | None:
    a = args[0]
    if opcode in _INT_BINARY:
        return w.binary(_INT_BINARY[opcode], a, args[1])
    if opcode in ("maximum", "minimum"):
        return w.binary(_INT_MINMAX[(opcode, a.signed)], a, args[1])
    if opcode == "negate":
        return w.binary("arith.subi", w.splat(0, "i32", a.shape, a.signed), a)
    if opcode == "not":
        return w.binary("arith.xori", a, w.splat(-1, "i32", a.shape, a.signed))
    if opcode == "abs" and a.signed:
        return w.unary("math.absi", a)
    if opcode == "clz":
        return w.unary("math.ctlz", a)
    if opcode == "popcnt":
        return w.unary("math.ctpop", a)
    if opcode == "sign":  # x > 0 ? 1 : (x < 0 ? -1 : 0); unsigned: x != 0
        zero = w.splat(0, "i32", a.shape, a.signed)
        one = w.splat(1, "i32", a.shape, a.signed)
        pos = w.select(w.cmp("cmpi", "ne", a, zero), one, zero)
        if not a.signed:
            return pos
        return w.select(w.cmp("cmpi", "slt", a, zero), w.splat(-1, "i32", a.shape), pos)
    if opcode == "copy":
        return a
    if opcode in ("shift-left", "shift-right-logical"):
        s = args[1]
        width = w.splat(32, "i32", a.shape, False)
        op = "arith.shli" if opcode == "shift-left" else "arith.shrui"
        shifted = w.binary(op, a, s)
        return w.select(w.cmp("cmpi", "ult", s, width), shifted,
                        w.splat(0, "i32", a.shape, a.signed))
    if opcode == "shift-right-arithmetic":
        s = w.binary("arith.minui", args[1], w.splat(31, "i32", a.shape, False))
        return w.binary("arith.shrsi", a, s)
    if opcode == "clamp":
        lo, x, hi = args
        mx, mn = _INT_MINMAX[("maximum", x.signed)], _INT_MINMAX[("minimum", x.signed)]
        return w.binary(mn, w.binary(mx, x, lo), hi)
    return None


def _compare(w: Writer, a: Vec, b: Vec, attrs: dict[str, Any]) -> Vec | None:
    direction = attrs.get("direction")
    if attrs.get("type", attrs.get("comparison_type")) == "TOTALORDER":
        return None
    if a.t == "f32":
        return w.cmp("cmpf", _FLOAT_PRED[direction], a, b)
    if direction in ("EQ", "NE"):
        return w.cmp("cmpi", _INT_PRED[direction], a, b)
    sign = "s" if a.signed and a.t == "i32" else "u"
    return w.cmp("cmpi", sign + _INT_PRED[direction], a, b)


def _convert(w: Writer, a: Vec | None, out_type: str, in_type: str) -> Vec | None:
    if a is None:
        return None
    _, t, signed = ELEMENT_TYPES[out_type]
    if out_type == "bf16" and in_type != "bf16":  # round to bf16 here, compute on in f32
        wide = _convert(w, a, "f32", in_type)
        if wide is None:
            return None
        return w.cast("arith.extf", w.cast("arith.truncf", wide, "bf16", True), "f32", True)
    if a.t == t:  # (bf16 -> f32: exact; s32 <-> u32: the same bits)
        return Vec(a.name, t, a.shape, signed)
    if a.t == "i32" and t == "f32":
        return w.cast("arith.sitofp" if a.signed else "arith.uitofp", a, t, signed)
    if a.t == "i1" and t == "f32":
        return w.cast("arith.uitofp", a, t, signed)
    if a.t == "i1" and t == "i32":
        return w.cast("arith.extui", a, t, signed)
    if t == "i1":  # x != 0
        zero = w.splat(0.0 if a.t == "f32" else 0, a.t, a.shape, a.signed)
        return w.cmp("cmpf" if a.t == "f32" else "cmpi", "une" if a.t == "f32" else "ne",
                     a, zero)
    return None  # (float -> int: HLO saturates and maps NaN to 0; left to XLA)
