"""NumPy implementations of the elementwise HLO opcodes, with XLA/JAX semantics.

Input: NumPy arrays of one dtype, already broadcast to one shape (select's predicate and
clamp's bounds excepted: see their docstrings). Output: a NumPy array (never a NumPy scalar)
of the input dtype, except compare and is-finite, which give bool.

Where NumPy and XLA disagree, XLA wins:
- integer x / 0 = -1 (all bits set for unsigned), x % 0 = x, INT_MIN / -1 = INT_MIN,
  INT_MIN % -1 = 0; division truncates toward zero, remainder has the dividend's sign.
- shift counts outside [0, bits): shift-left and shift-right-logical give 0,
  shift-right-arithmetic gives the sign fill (0 or -1).
- integer power with a negative exponent: 0, except base 1 -> 1 and base -1 -> +-1.
- float maximum/minimum are IEEE 754-2019's: NaN propagates (x's payload if x is NaN,
  else y's) and -0.0 < +0.0 in either operand order (np.maximum picks by operand order).
- sign(NaN) = NaN, sign(-0.0) = -0.0; round-nearest-afz rounds half away from zero.
- float -> int conversion saturates, NaN -> 0; float -> bool is x != 0.

Float math (the transcendental opcodes of `MATH_OPCODES`, the opcode table's `math`
column: exp, log, sin, pow, atan2, erf, ...) is not correctly rounded, so implementations
differ in the last bit. A backend may serve it through one named hook,
`use_math_kernels(provider)`: while a provider is set, `ELEMENTWISE[op]` of a math opcode
asks it first (`provider.covers(op, dtype)`, then `provider.apply(op, *arrays)`), and keeps
the NumPy/SciPy rule for what it does not cover.
`import ember` sets the CPU backend's vector kernels (cpu/runtime/eager_math.py) as the provider, so
eager mode, constant folding, the interpreter backend and jitted CPU code give the same bits.
The NumPy/SciPy rules (`NUMPY_ELEMENTWISE`) are the reference those kernels are tested
against (tests/codegen/test_math_*.py) and what complex inputs run.
Other float ops (sqrt, divide, ...) are correctly rounded in both.
NumPy warnings are silenced: overflow, division by zero and invalid operations are the
expected IEEE results.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ember.hlo.opcodes import MATH_OPCODES

Fn = Callable[..., np.ndarray]


def _quiet(fn: Fn) -> Fn:
    """Run `fn` with NumPy floating-point warnings silenced and return an ndarray."""

    @functools.wraps(fn)
    def wrapper(*args: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*(np.asarray(a) for a in args)))

    return wrapper


def _is_int(x: np.ndarray) -> bool:
    return x.dtype.kind in "iu"


def _is_signed(x: np.ndarray) -> bool:
    return x.dtype.kind == "i"


def _cast(r: np.ndarray | np.generic, dtype: np.dtype) -> np.ndarray:
    return np.asarray(r).astype(dtype, copy=False)


def _unsigned_view(x: np.ndarray) -> np.ndarray:
    """Reinterpret an integer array as the unsigned type of the same width."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _signed_view(x: np.ndarray) -> np.ndarray:
    return x.view(np.dtype(f"i{x.dtype.itemsize}"))


# ---------------------------------------------------------------------------------------
# Binary arithmetic
# ---------------------------------------------------------------------------------------


@_quiet
def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        return x | y
    return _cast(x + y, x.dtype)  # integer add wraps (two's complement)


@_quiet
def subtract(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _cast(np.subtract(x, y), x.dtype)


@_quiet
def multiply(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        return x & y
    return _cast(x * y, x.dtype)


def _int_div_parts(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Truncating quotient and remainder with the divisor made safe.

    The divisor is replaced by 1 where it is 0 or -1 (the two special cases), so NumPy never
    sees a trap. Returns (q, r, y_safe); callers patch the special lanes.
    """
    bad = y == 0
    if _is_signed(x):
        bad = bad | (y == -1)
    y_safe = np.where(bad, np.ones_like(y), y)
    r = np.fmod(x, y_safe)  # C remainder: sign of the dividend
    # x - r is an exact multiple of y_safe, so floor division equals truncating division.
    q = np.floor_divide(x - r, y_safe)
    return _cast(q, x.dtype), _cast(r, x.dtype), y_safe


@_quiet
def divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not _is_int(x):
        return _cast(np.true_divide(x, y), x.dtype)
    q, _, _ = _int_div_parts(x, y)
    if _is_signed(x):
        q = np.where(y == -1, np.negative(x), q)  # INT_MIN / -1 wraps to INT_MIN
        all_ones = np.array(-1, x.dtype)
    else:
        all_ones = np.array(np.iinfo(x.dtype).max, x.dtype)
    return _cast(np.where(y == 0, all_ones, q), x.dtype)


@_quiet
def remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not _is_int(x):
        return _cast(np.fmod(x, y), x.dtype)
    _, r, _ = _int_div_parts(x, y)
    # y == -1 gives fmod(x, 1) == 0 already; y == 0 gives x.
    return _cast(np.where(y == 0, x, r), x.dtype)


@_quiet
def power(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if not _is_int(x):
        # NumPy rewrites x ** 0.5 (and 2, -1, ...) into sqrt etc. when the exponent is a
        # scalar, 0-d or broadcast (stride 0), which changes results (sqrt(-0.0) = -0.0
        # where pow gives +0.0, and the last bit): run every call through the same 1-d pow
        # loop on materialized operands.
        shape = np.broadcast_shapes(x.shape, y.shape)
        flat_x = np.array(np.broadcast_to(x, shape), copy=True).reshape(-1)
        flat_y = np.array(np.broadcast_to(y, shape), copy=True).reshape(-1)
        out = np.power(flat_x, flat_y)
        # Ember defines power(x, 2) as x * x exactly (as XLA rewrites it), so the algebraic
        # simplifier's `power(x, 2) => x * x` never changes a result.
        square = flat_y == 2
        if square.any():
            out[square] = flat_x[square] * flat_x[square]
        return _cast(out.reshape(shape), x.dtype)
    if not _is_signed(x):
        return _cast(np.power(x, y), x.dtype)  # repeated multiply, wraps
    neg = y < 0
    pos = _cast(np.power(x, np.where(neg, np.zeros_like(y), y)), x.dtype)
    # x ** -n is 1 / x**n truncated: 0 unless |x| == 1.
    odd = (y & 1) == 1
    one, minus_one, zero = (np.array(v, x.dtype) for v in (1, -1, 0))
    negres = np.where(x == 1, one, np.where(x == -1, np.where(odd, minus_one, one), zero))
    return _cast(np.where(neg, negres, pos), x.dtype)


def _ieee_extremum(x: np.ndarray, y: np.ndarray, pick_max: bool) -> np.ndarray:
    """IEEE 754-2019 maximum/minimum, as XLA computes them: a NaN operand is the result
    (x's if both are NaN), and -0.0 < +0.0 in both operand orders. np.maximum alone picks
    between equal zeros by operand order, differently per dtype."""
    r = np.maximum(x, y) if pick_max else np.minimum(x, y)
    # Equal operands have equal bits except for +-0.0: and-ing the bits gives +0.0 unless
    # both are -0.0 (maximum), or-ing gives -0.0 unless both are +0.0 (minimum).
    ux, uy = _unsigned_view(x), _unsigned_view(y)
    zeros = ((ux & uy) if pick_max else (ux | uy)).view(x.dtype)
    r = np.where(x == y, zeros, r)
    return np.where(np.isnan(x), x, np.where(np.isnan(y), y, r))


def is_real_float(dtype: np.dtype) -> bool:
    """A real float dtype, bfloat16 included (NumPy gives ml_dtypes' bfloat16 kind 'V')."""
    return dtype.kind == "f" or dtype.name == "bfloat16"


@_quiet
def maximum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if is_real_float(x.dtype):
        return _cast(_ieee_extremum(x, y, True), x.dtype)
    return _cast(np.maximum(x, y), x.dtype)


@_quiet
def minimum(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if is_real_float(x.dtype):
        return _cast(_ieee_extremum(x, y, False), x.dtype)
    return _cast(np.minimum(x, y), x.dtype)


@_quiet
def atan2(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _cast(np.arctan2(x, y), x.dtype)


# ---------------------------------------------------------------------------------------
# Bitwise / logical
# ---------------------------------------------------------------------------------------


@_quiet
def and_(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _cast(np.bitwise_and(x, y), x.dtype)


@_quiet
def or_(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _cast(np.bitwise_or(x, y), x.dtype)


@_quiet
def xor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _cast(np.bitwise_xor(x, y), x.dtype)


@_quiet
def not_(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        return np.logical_not(x)
    return _cast(np.invert(x), x.dtype)


def _shift_bounds(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(out_of_range mask, shift count with out-of-range lanes set to 0)."""
    bits = 8 * x.dtype.itemsize
    oob = (y >= bits) if not _is_signed(y) else ((y < 0) | (y >= bits))
    return oob, np.where(oob, np.zeros_like(y), y)


@_quiet
def shift_left(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    oob, yc = _shift_bounds(x, y)
    r = _cast(np.left_shift(x, yc), x.dtype)
    return np.where(oob, np.zeros_like(x), r)


@_quiet
def shift_right_logical(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    oob, yc = _shift_bounds(x, y)
    ux = _unsigned_view(x)
    r = np.right_shift(ux, yc.astype(ux.dtype)).astype(ux.dtype).view(x.dtype)
    return np.where(oob, np.zeros_like(x), r)


@_quiet
def shift_right_arithmetic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    oob, yc = _shift_bounds(x, y)
    sx = _signed_view(x)  # unsigned inputs shift as their signed reinterpretation
    r = np.right_shift(sx, yc.astype(sx.dtype)).astype(sx.dtype)
    fill = np.where(sx < 0, np.array(-1, sx.dtype), np.array(0, sx.dtype))
    return np.where(oob, fill, r).astype(sx.dtype).view(x.dtype)


@_quiet
def popcnt(x: np.ndarray) -> np.ndarray:
    # bitwise_count counts bits of |x| for signed types: count the unsigned view instead.
    return _cast(np.bitwise_count(_unsigned_view(x)), x.dtype)


@_quiet
def clz(x: np.ndarray) -> np.ndarray:
    ux = _unsigned_view(x).copy()
    bits = 8 * x.dtype.itemsize
    n = np.zeros(ux.shape, np.int64)
    # Binary search for the highest set bit: if the top `s` bits are all zero, count them
    # and shift them out of the way.
    s = bits // 2
    while s >= 1:
        top_zero = (ux >> np.array(bits - s, ux.dtype)) == 0
        n += np.where(top_zero, s, 0)
        ux = np.where(top_zero, ux << np.array(s, ux.dtype), ux).astype(ux.dtype)
        s //= 2
    n += (ux == 0).astype(np.int64)  # x == 0: one more after the search saw only zeros
    return _cast(n, x.dtype)


# ---------------------------------------------------------------------------------------
# Unary arithmetic
# ---------------------------------------------------------------------------------------


@_quiet
def negate(x: np.ndarray) -> np.ndarray:
    return _cast(np.negative(x), x.dtype)


@_quiet
def abs_(x: np.ndarray) -> np.ndarray:
    # complex: the modulus, a real of the component type (NumPy's is hypot(re, im): no
    # overflow when re^2 + im^2 would)
    return _cast(np.abs(x), x.real.dtype)


def real(x: np.ndarray) -> np.ndarray:
    """The real part of a complex array (a fresh real array of the component type)."""
    return np.array(x.real, copy=True)


def imag(x: np.ndarray) -> np.ndarray:
    """The imaginary part of a complex array."""
    return np.array(x.imag, copy=True)


def complex_(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x + i y built part by part (x + 1j * y would turn an infinite y into NaNs)."""
    out = np.empty(np.broadcast(x, y).shape, np.result_type(x.dtype, np.complex64))
    out.real = x
    out.imag = y
    return out


@_quiet
def sign(x: np.ndarray) -> np.ndarray:
    if _is_int(x):
        return _cast(np.sign(x), x.dtype)
    # Keep NaN and signed zeros as they are.
    return _cast(np.where(np.isnan(x) | (x == 0), x, np.sign(x)), x.dtype)


@_quiet
def floor(x: np.ndarray) -> np.ndarray:
    return _cast(np.floor(x), x.dtype) if not _is_int(x) else x.copy()


@_quiet
def ceil(x: np.ndarray) -> np.ndarray:
    return _cast(np.ceil(x), x.dtype) if not _is_int(x) else x.copy()


@_quiet
def round_nearest_afz(x: np.ndarray) -> np.ndarray:
    if _is_int(x):
        return x.copy()
    t = np.trunc(x)
    # x - t is exact (same binade or smaller), so the half-way test is exact; inf - inf is
    # NaN and fails the test, leaving inf; -0.3 -> trunc -0.0 keeps the sign.
    away = np.abs(x - t) >= np.array(0.5, x.dtype)
    return _cast(np.where(away, t + np.copysign(np.ones_like(x), x), t), x.dtype)


@_quiet
def round_nearest_even(x: np.ndarray) -> np.ndarray:
    return _cast(np.rint(x), x.dtype) if not _is_int(x) else x.copy()


def _unary_float(np_fn: Callable[[np.ndarray], np.ndarray]) -> Fn:
    @_quiet
    def fn(x: np.ndarray) -> np.ndarray:
        return _cast(np_fn(x), x.dtype)

    fn.__name__ = getattr(np_fn, "__name__", "unary")
    return fn


exponential = _unary_float(np.exp)
exponential_minus_one = _unary_float(np.expm1)
log = _unary_float(np.log)
log_plus_one = _unary_float(np.log1p)
sine = _unary_float(np.sin)
cosine = _unary_float(np.cos)
tan = _unary_float(np.tan)
tanh = _unary_float(np.tanh)
sqrt = _unary_float(np.sqrt)
cbrt = _unary_float(np.cbrt)
asin = _unary_float(np.arcsin)
acos = _unary_float(np.arccos)
atan = _unary_float(np.arctan)
sinh = _unary_float(np.sinh)
cosh = _unary_float(np.cosh)
asinh = _unary_float(np.arcsinh)
acosh = _unary_float(np.arccosh)
atanh = _unary_float(np.arctanh)
exp2 = _unary_float(np.exp2)
log2 = _unary_float(np.log2)
log10 = _unary_float(np.log10)


@_quiet
def rsqrt(x: np.ndarray) -> np.ndarray:
    one = np.ones_like(x)
    return _cast(one / np.sqrt(x), x.dtype)


@_quiet
def logistic(x: np.ndarray) -> np.ndarray:
    # 1 / (1 + e^-x) for x >= 0; e^x / (1 + e^x) for x < 0, so neither branch overflows
    # into inf / inf.
    one = np.ones_like(x)
    e = np.exp(-np.abs(x))
    pos = one / (one + e)
    neg = e / (one + e)
    return _cast(np.where(x >= 0, pos, neg), x.dtype)


def _scipy_unary(name: str) -> Fn:
    @_quiet
    def fn(x: np.ndarray) -> np.ndarray:
        import scipy.special  # lazy: importing SciPy costs ~100 ms

        return _cast(getattr(scipy.special, name)(x), x.dtype)

    fn.__name__ = name
    return fn


erf = _scipy_unary("erf")
erfc = _scipy_unary("erfc")
erf_inv = _scipy_unary("erfinv")


@_quiet
def is_finite(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x)


# ---------------------------------------------------------------------------------------
# Compare, select, clamp
# ---------------------------------------------------------------------------------------

COMPARE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def compare(x: np.ndarray, y: np.ndarray, direction: str) -> np.ndarray:
    """Elementwise comparison; NaN compares unequal to everything (IEEE), NE is true."""
    with np.errstate(all="ignore"):
        return np.asarray(COMPARE[direction](np.asarray(x), np.asarray(y)))


def select(pred: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> np.ndarray:
    """pred ? on_true : on_false; pred is bool, scalar pred selects whole arrays."""
    return np.asarray(np.where(pred, on_true, on_false)).astype(np.asarray(on_true).dtype)


@_quiet
def clamp(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(max(x, lo), hi), XLA's operand order (min, operand, max), with the IEEE
    maximum/minimum above: NaN propagates, -0.0 < +0.0."""
    if is_real_float(x.dtype):
        lo, hi = lo.astype(x.dtype, copy=False), hi.astype(x.dtype, copy=False)
        return _cast(_ieee_extremum(_ieee_extremum(x, lo, True), hi, False), x.dtype)
    return _cast(np.minimum(np.maximum(x, lo), hi), x.dtype)


@_quiet
def copy(x: np.ndarray) -> np.ndarray:
    return x.copy()


# ---------------------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------------------


def convert_array(x: np.ndarray, dtype: np.dtype | type | str) -> np.ndarray:
    """XLA convert: float -> int saturates (NaN -> 0), anything -> bool is x != 0 (of the
    real part for complex x, which every real type takes),
    int -> int wraps, everything else rounds to nearest."""
    x = np.asarray(x)
    dt = np.dtype(dtype)
    if x.dtype.kind == "c" and dt.kind != "c":
        x = x.real  # XLA: complex to a real type converts the real part
    if x.dtype.name == "bfloat16" and dt.kind in "iub":
        x = x.astype(np.float32)  # (exact; NumPy's kind 'V' for bf16 hides it from the float rules)
    elif dt.name == "bfloat16" and x.dtype.itemsize == 8:
        x = x.astype(np.float32)  # XLA rounds an f64 or a 64-bit int to f32 first, then to bf16
    with np.errstate(all="ignore"):
        if dt == np.bool_:
            return np.asarray(x != 0)
        if dt.kind in "iu" and x.dtype.kind == "f":
            info = np.iinfo(dt)
            bits = 8 * dt.itemsize
            # 2^(bits-1) (signed) or 2^bits (unsigned) is exact in every float format we
            # convert from (f16 overflows to inf, which is still >= the bound).
            hi_bound = np.array(2.0 ** (bits - 1 if dt.kind == "i" else bits)).astype(x.dtype)
            lo_bound = np.array(float(info.min)).astype(x.dtype)
            too_hi = x >= hi_bound
            too_lo = x < lo_bound
            nan = np.isnan(x)
            safe = np.where(too_hi | too_lo | nan, np.zeros_like(x), x)
            r = np.trunc(safe).astype(dt)
            r = np.where(too_hi, np.array(info.max, dt), r)
            r = np.where(too_lo, np.array(info.min, dt), r)
            return np.asarray(r).astype(dt, copy=False)
        return np.asarray(x.astype(dt))


def bitcast_convert_array(x: np.ndarray, dtype: np.dtype | type | str) -> np.ndarray:
    """Reinterpret the bits of each element as `dtype` (same element width)."""
    x = np.asarray(x, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    dt = np.dtype(dtype)
    if dt.itemsize != x.dtype.itemsize:
        raise ValueError(f"bitcast-convert needs equal widths: {x.dtype} -> {dt}")
    if dt == np.bool_ and x.dtype != np.bool_:
        return np.asarray(x != 0)  # a bool holds 0 or 1: any nonzero byte reads as true
    return x.view(dt).copy()


def bitcast_convert_any_width(x: np.ndarray, dtype: np.dtype | type | str) -> np.ndarray:
    """XLA's bitcast-convert between any widths, in the host's (little-endian) byte order.

    To a type k times narrower, each element becomes k elements along a new minor dimension
    (lowest-addressed bytes first); to a type k times wider, the minor dimension (of size k)
    is packed into one element. Equal widths behave as `bitcast_convert_array`.
    """
    x = np.asarray(x, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
    dt = np.dtype(dtype)
    a, b = x.dtype.itemsize, dt.itemsize
    if a == b:
        return bitcast_convert_array(x, dt)
    if a > b:
        return x.reshape(x.shape + (1,)).view(dt).copy()
    if x.ndim == 0 or x.shape[-1] * a != b:
        raise ValueError(f"bitcast-convert {x.dtype}{list(x.shape)} -> {dt} needs a minor "
                         f"dimension of size {b // a}")
    return x.view(dt).reshape(x.shape[:-1]).copy()


# ---------------------------------------------------------------------------------------
# The table, keyed by HLO opcode name (compare is looked up through COMPARE by direction).
# ---------------------------------------------------------------------------------------

_NUMPY_RULES: dict[str, Fn] = {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "divide": divide,
    "remainder": remainder,
    "power": power,
    "maximum": maximum,
    "minimum": minimum,
    "atan2": atan2,
    "and": and_,
    "or": or_,
    "xor": xor,
    "shift-left": shift_left,
    "shift-right-logical": shift_right_logical,
    "shift-right-arithmetic": shift_right_arithmetic,
    "negate": negate,
    "abs": abs_,
    "real": real,
    "imag": imag,
    "complex": complex_,
    "sign": sign,
    "floor": floor,
    "ceil": ceil,
    "round-nearest-afz": round_nearest_afz,
    "round-nearest-even": round_nearest_even,
    "exponential": exponential,
    "exponential-minus-one": exponential_minus_one,
    "log": log,
    "log-plus-one": log_plus_one,
    "sine": sine,
    "cosine": cosine,
    "tan": tan,
    "tanh": tanh,
    "logistic": logistic,
    "sqrt": sqrt,
    "rsqrt": rsqrt,
    "cbrt": cbrt,
    "erf": erf,
    "erfc": erfc,
    "erf-inv": erf_inv,
    "asin": asin,
    "acos": acos,
    "atan": atan,
    "sinh": sinh,
    "cosh": cosh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
    "exp2": exp2,
    "log2": log2,
    "log10": log10,
    "is-finite": is_finite,
    "not": not_,
    "popcnt": popcnt,
    "clz": clz,
    "select": select,
    "clamp": clamp,
    "copy": copy,
}


class MathKernels(Protocol):
    """What a backend hands `use_math_kernels`: native code for some math opcodes."""

    def covers(self, opcode: str, dtype: np.dtype) -> bool:
        """Whether `apply(opcode, ...)` takes arrays of `dtype`."""
        ...

    def apply(self, opcode: str, *arrays: np.ndarray) -> np.ndarray:
        """opcode(*arrays): one dtype, broadcastable shapes; a fresh array."""
        ...


# The transcendental opcodes: results not correctly rounded, so a backend's own kernels may
# differ from NumPy's in the last bit (sqrt, divide, ... are exact everywhere). The opcode
# table's `math` column says which (`MATH_OPCODES`, imported above).

_math_kernels: MathKernels | None = None


def use_math_kernels(provider: MathKernels | None) -> MathKernels | None:
    """Serve the math opcodes through `provider` where it covers them (None: NumPy's rules
    everywhere); returns the provider it replaces."""
    global _math_kernels
    previous, _math_kernels = _math_kernels, provider
    return previous


def _through_math_kernels(opcode: str, numpy_fn: Fn) -> Fn:
    """`opcode` through the hook's kernels where they cover the operands, else `numpy_fn`.

    Float power keeps the NumPy rule's contract (operands broadcast here, one 1-d loop, so
    a scalar exponent is never special-cased); integer power never reaches the kernels.
    """
    @functools.wraps(numpy_fn)
    def fn(*args: np.ndarray) -> np.ndarray:
        kernels = _math_kernels
        if kernels is None:
            return numpy_fn(*args)
        arrays = [np.asarray(a) for a in args]
        dt = arrays[0].dtype
        if kernels.covers(opcode, dt) and all(a.dtype == dt for a in arrays[1:]):
            return kernels.apply(opcode, *arrays)
        return numpy_fn(*arrays)

    return fn


# The NumPy/SciPy rules of every opcode, math included: the reference native math kernels
# are tested against (tests/codegen/test_math_special.py), and what complex inputs run.
NUMPY_ELEMENTWISE: dict[str, Fn] = dict(_NUMPY_RULES)


def _bf16_in_f32(fn: Fn) -> Fn:
    """`fn`, with bfloat16 operands computed in float32 and a float32 result rounded once
    to bfloat16: what the CPU backend compiles (passes/bf16_expansion.py), so eager, the
    interpreter and compiled code agree bit for bit (math through the f32 kernels too)."""
    @functools.wraps(fn)
    def wrapped(*args: np.ndarray) -> np.ndarray:
        for a in args:  # (a plain loop, kind 'V' first: this runs for every eager op)
            dt = getattr(a, "dtype", None)
            if dt is not None and dt.kind == "V" and dt.name == "bfloat16":
                break
        else:
            return fn(*args)
        out = fn(*(a.astype(_F32) if getattr(a, "dtype", None) == dt else a for a in args))
        return out.astype(dt) if out.dtype == _F32 else out

    return wrapped


_F32 = np.dtype(np.float32)
_MOVES = frozenset({"select", "copy"})  # (they move bf16 bits: no arithmetic)

# What the evaluator and eager mode call: the NumPy rules, math through the hook, bf16 in f32.
ELEMENTWISE: dict[str, Fn] = {
    op: fn if op in _MOVES else _bf16_in_f32(
        _through_math_kernels(op, fn) if op in MATH_OPCODES else fn)
    for op, fn in _NUMPY_RULES.items()}


def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """Round a float array to a format with fewer exponent/mantissa bits, in place of type.

    Mantissa: round to nearest even at bit `mantissa_bits` by adding a bias of
    (half ulp - 1 + lowest kept bit) and truncating. Exponent: values above the reduced
    format's largest exponent become +-inf, values at or below its smallest normal exponent
    flush to +-0 (the reduced format has no subnormals). NaN stays NaN.
    """
    x = np.asarray(x)
    if x.dtype.name == "bfloat16":  # (in f32: its result fits bf16, being no wider)
        return reduce_precision(x.astype(_F32), exponent_bits, mantissa_bits).astype(x.dtype)
    nbits = 8 * x.dtype.itemsize
    mbits = {2: 10, 4: 23, 8: 52}[x.dtype.itemsize]
    ebits = nbits - 1 - mbits
    ut = np.dtype(f"u{x.dtype.itemsize}")
    bits = x.view(ut).copy()
    one = ut.type(1)
    if mantissa_bits < mbits:
        shift = ut.type(mbits - mantissa_bits)
        last = (bits >> shift) & one
        bias = ((one << (shift - one)) - one) + last
        mask = ~((one << shift) - one)
        bits = ((bits + bias) & mask).astype(ut)
    if exponent_bits < ebits:
        sign = bits & (one << ut.type(nbits - 1))
        exp_field = (bits >> ut.type(mbits)) & ut.type((1 << ebits) - 1)
        bias_full = (1 << (ebits - 1)) - 1
        max_e = (1 << (exponent_bits - 1)) - 1
        unbiased = exp_field.astype(np.int64) - bias_full
        inf_bits = ut.type(((1 << ebits) - 1) << mbits)
        bits = np.where(unbiased > max_e, sign | inf_bits, bits)
        bits = np.where(unbiased <= -max_e, sign, bits).astype(ut)
    out = bits.view(x.dtype)
    return np.asarray(np.where(np.isnan(x), x, out)).astype(x.dtype)
