"""Elementwise primitives: arithmetic, math functions, comparisons, bitwise ops.

Each primitive maps to one HLO opcode (`prim.hlo_opcode`) and takes its NumPy rule from
the evaluator's table (hlo/evaluator/elementwise.py) and its lowering from the opcode, so
eager mode, jit and the HLO evaluator share one definition of every edge case (integer
x/0 = -1, shifts past the width, NaN in max/min).
Shape rule: JAX's (equal ranks with size-1 dims broadcasting, rank-0 operands broadcast);
dtype rule: each operand's dtype must be in the primitive's accepted set (JAX's sets, see
_rules.py: add takes integer, floating, complexfloating but not bool; max takes bool too),
then all operands share one dtype. The result is weakly typed only when every operand is;
that holds for comparisons and is_finite too (their bool result is weak when all operands
are weak, as JAX's naryop weak-type rule says).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.core.trace import Tracer, get_aval
from ember.hlo.evaluator import elementwise as ew
from ember.prims import _ad, _batching
from ember.prims import _lower as L
from ember.prims import _rules as R


def _broadcast_all(*xs: np.ndarray) -> list[np.ndarray]:
    """The operands as read-only views of their common shape (np.broadcast_arrays' result,
    at a fifth of its cost for the common scalar operand: ~1 us instead of ~5)."""
    if all(x.shape == xs[0].shape for x in xs):
        return list(xs)
    shape = np.broadcast(*xs).shape
    return [x if x.shape == shape else _stretch(x, shape) for x in xs]


def _stretch(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if x.ndim:
        return np.broadcast_to(x, shape)
    # a 0-d array: every element of the view is its one element (all strides 0)
    view = np.ndarray(shape, x.dtype, buffer=x, strides=(0,) * len(shape))
    view.flags.writeable = False
    return view


def _define(name: str, opcode: str, nargs: int, kinds: str, *, out_bool: bool = False,
            out_real: bool = False,
            rule: Callable[..., np.ndarray] | None = None,
            lowering: Callable[..., Any] | None = None) -> Primitive:
    prim = Primitive(name)
    prim.hlo_opcode = opcode  # type: ignore[attr-defined]
    # An opcode without a NumPy rule leaves the primitive without one (binding it raises),
    # rather than failing `import ember`: the coverage test then names every missing rule at
    # once (tests/unit/test_coverage.py).
    fn = rule or ew.ELEMENTWISE.get(opcode)
    # (what the eager cache's direct steps compare with the evaluator's, numpy/_eager_steps)
    prim.numpy_rule = fn  # type: ignore[attr-defined]
    prim.def_lowering(lowering or L.elementwise(opcode))

    @prim.def_abstract_eval
    def _abstract(*avals: ShapedArray) -> ShapedArray:
        if len(avals) != nargs:
            raise TypeError(f"{name} takes {nargs} operands, got {len(avals)}")
        dtype = R.check_nary(name, avals, kinds)
        shape = R.broadcasting_shape(name, *avals)
        if out_real and dtypes.kind(dtype) == "c":  # abs: |c64| is f32
            dtype = np.empty((), dtype).real.dtype
        return ShapedArray(shape, dtypes.bool_ if out_bool else dtype, R.all_weak(*avals))

    if fn is not None:
        impl = fn

        @prim.def_impl
        def _impl(*xs: np.ndarray) -> np.ndarray:
            return impl(*_broadcast_all(*xs))

    return prim


def _unary(name: str, opcode: str, kinds: str = R.FLOAT_OR_COMPLEX) -> Primitive:
    return _define(name, opcode, 1, kinds)


def _binary(name: str, opcode: str, kinds: str = R.NUMBER) -> Primitive:
    return _define(name, opcode, 2, kinds)


# -- arithmetic ---------------------------------------------------------------------------------
add_p = _binary("add", "add")
sub_p = _binary("sub", "subtract")
mul_p = _binary("mul", "multiply")
div_p = _binary("div", "divide")
rem_p = _binary("rem", "remainder", R.INT_OR_FLOAT)
max_p = _binary("max", "maximum", R.ANY)
min_p = _binary("min", "minimum", R.ANY)
atan2_p = _binary("atan2", "atan2", R.FLOAT)  # JAX: real floats only

neg_p = _unary("neg", "negate", R.NUMBER)
# JAX rejects unsigned (jnp.abs skips it); a complex operand gives its real modulus
abs_p = _define("abs", "abs", 1, R.SIGNED_NUMBER, out_real=True)
sign_p = _unary("sign", "sign", R.NUMBER)
floor_p = _unary("floor", "floor", R.FLOAT)
ceil_p = _unary("ceil", "ceil", R.FLOAT)
is_finite_p = _define("is_finite", "is-finite", 1, R.FLOAT, out_bool=True)

# -- transcendental and algebraic functions ------------------------------------------------------
exp_p = _unary("exp", "exponential")
exp2_p = _unary("exp2", "exp2")
log_p = _unary("log", "log")
log1p_p = _unary("log1p", "log-plus-one")
expm1_p = _unary("expm1", "exponential-minus-one")
sqrt_p = _unary("sqrt", "sqrt")
rsqrt_p = _unary("rsqrt", "rsqrt")
cbrt_p = _unary("cbrt", "cbrt", R.FLOAT)
sin_p = _unary("sin", "sine")
cos_p = _unary("cos", "cosine")
tan_p = _unary("tan", "tan")
asin_p = _unary("asin", "asin")
acos_p = _unary("acos", "acos")
atan_p = _unary("atan", "atan")
sinh_p = _unary("sinh", "sinh")
cosh_p = _unary("cosh", "cosh")
tanh_p = _unary("tanh", "tanh")
asinh_p = _unary("asinh", "asinh")
acosh_p = _unary("acosh", "acosh")
atanh_p = _unary("atanh", "atanh")
logistic_p = _unary("logistic", "logistic")
erf_p = _unary("erf", "erf", R.FLOAT)
erfc_p = _unary("erfc", "erfc", R.FLOAT)
erf_inv_p = _unary("erf_inv", "erf-inv", R.FLOAT)


def _square(x: np.ndarray) -> np.ndarray:
    return ew.multiply(x, x)


def _square_lowering(ctx: Any, x: Any) -> Any:
    return ctx.b.multiply(x, x)


square_p = _define("square", "multiply", 1, R.NUMBER, rule=_square, lowering=_square_lowering)

# -- comparisons -------------------------------------------------------------------------------
COMPARISONS: dict[str, str] = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT",
                               "ge": "GE"}


def _comparison(name: str, direction: str) -> Primitive:
    # eq and ne take any dtype; the orderings take JAX's _ordered set (no complex).
    kinds = R.ANY if direction in ("EQ", "NE") else R.ORDERED

    def rule(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return ew.compare(x, y, direction)

    prim = _define(name, "compare", 2, kinds, out_bool=True, rule=rule,
                   lowering=L.compare(direction))
    prim.hlo_direction = direction  # type: ignore[attr-defined]
    # (the ufunc `rule` applies: what the eager cache's direct steps call, _eager_steps.py)
    prim.compare_ufunc = ew.COMPARE[direction]  # type: ignore[attr-defined]
    return prim


eq_p = _comparison("eq", "EQ")
ne_p = _comparison("ne", "NE")
lt_p = _comparison("lt", "LT")
le_p = _comparison("le", "LE")
gt_p = _comparison("gt", "GT")
ge_p = _comparison("ge", "GE")

# -- total-order comparisons (JAX's eq_to, le_to, lt_to: the sort comparator's) ---------------
# XLA's TOTALORDER comparison: floats are ordered -NaN < -inf < ... < -0 < +0 < ... < +inf <
# +NaN by their sign-magnitude bits; other dtypes compare as usual. Ember's HLO has no
# comparison type, so the rule and the lowering compare integer keys with that order: the
# float's bits read as a signed integer, with the magnitude bits of negatives flipped.
_TOTAL_ORDER_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def _total_order_key(x: np.ndarray) -> np.ndarray:
    if dtypes.kind(x.dtype) != "f":
        return x
    ity = _TOTAL_ORDER_INT[x.dtype.itemsize]
    x = np.asarray(x)
    bits = (x if x.flags.c_contiguous else x.copy()).view(ity)  # (0-d stays 0-d)
    return np.where(bits < 0, bits ^ np.iinfo(ity).max, bits)


def _total_order_key_hlo(ctx: Any, x: Any, dtype: np.dtype) -> Any:
    if dtypes.kind(dtype) != "f":
        return x
    ity = np.dtype(_TOTAL_ORDER_INT[dtype.itemsize])
    bits = ctx.b.bitcast_convert(x, L.et(ity))
    dims = tuple(x.shape.dimensions)
    zero = ctx.b.broadcast(ctx.b.constant(np.zeros((), ity)), dims, ())
    flip = ctx.b.broadcast(ctx.b.constant(np.array(np.iinfo(ity).max, ity)), dims, ())
    return ctx.b.select(ctx.b.compare(bits, zero, "LT"), ctx.b.binary("xor", bits, flip), bits)


def _total_order_comparison(name: str, direction: str) -> Primitive:
    def rule(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return ew.compare(_total_order_key(x), _total_order_key(y), direction)

    def lowering(ctx: Any, x: Any, y: Any) -> Any:
        x, y = ctx.elementwise_operands(x, y)
        dtype = np.dtype(ctx.avals_in[0].dtype)
        return ctx.b.compare(_total_order_key_hlo(ctx, x, dtype),
                             _total_order_key_hlo(ctx, y, dtype), direction)

    prim = _define(name, "compare", 2, R.ANY if direction == "EQ" else R.ORDERED,
                   out_bool=True, rule=rule, lowering=lowering)
    del prim.hlo_opcode  # (not XLA's plain compare: no ember.lax function binds it)
    return prim


eq_to_p = _total_order_comparison("eq_to", "EQ")
le_to_p = _total_order_comparison("le_to", "LE")
lt_to_p = _total_order_comparison("lt_to", "LT")

# -- bitwise and logical ----------------------------------------------------------------------
and_p = _binary("and", "and", R.INT_OR_BOOL)
or_p = _binary("or", "or", R.INT_OR_BOOL)
xor_p = _binary("xor", "xor", R.INT_OR_BOOL)
not_p = _unary("not", "not", R.INT_OR_BOOL)
shift_left_p = _binary("shift_left", "shift-left", R.INT)
shift_right_logical_p = _binary("shift_right_logical", "shift-right-logical", R.INT)
shift_right_arithmetic_p = _binary("shift_right_arithmetic", "shift-right-arithmetic", R.INT)
population_count_p = _unary("population_count", "popcnt", R.INT)
clz_p = _unary("clz", "clz", R.INT)


# -- powers and rounding (params or mixed dtypes) ----------------------------------------------
pow_p = Primitive("pow")
pow_p.hlo_opcode = "power"  # type: ignore[attr-defined]


@pow_p.def_abstract_eval
def _pow_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    # JAX: x is inexact; y is inexact or integer; two inexact dtypes must match. An integer
    # y is converted to x's dtype by the lowering (and by the NumPy rule below).
    R.check_dtype_kinds("pow", x, R.FLOAT_OR_COMPLEX, 0)
    R.check_dtype_kinds("pow", y, R.NUMBER, 1)
    if dtypes.kind(y.dtype) not in "iu" and y.dtype != x.dtype:
        raise TypeError("the first argument to pow must have an inexact dtype (float or "
                        "complex), and the second argument must have an inexact or integer "
                        "dtype, and two inexact dtypes must match, but got "
                        f"{x.dtype.name} and {y.dtype.name} respectively.")
    return ShapedArray(R.broadcasting_shape("pow", x, y), x.dtype, R.all_weak(x, y))


@pow_p.def_impl
def _pow_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = _broadcast_all(x, y)
    if y.dtype != x.dtype:
        y = ew.convert_array(y, x.dtype)
    return ew.ELEMENTWISE["power"](x, y)  # the table's entry: float power on the CPU kernel


@pow_p.def_lowering
def _pow_lowering(ctx: Any, x: Any, y: Any) -> Any:
    if ctx.avals_in[1].dtype != ctx.avals_in[0].dtype:
        y = ctx.b.convert(y, L.et(ctx.avals_in[0].dtype))
    x, y = ctx.elementwise_operands(x, y)
    return ctx.b.power(x, y)


integer_pow_p = Primitive("integer_pow")


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    R.check_dtype_kinds("integer_pow", x, R.NUMBER)
    if dtypes.kind(x.dtype) in "iu" and y < 0:
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.str_short()}, {y})")
    return x


@integer_pow_p.def_impl
def _integer_pow_impl(x: np.ndarray, *, y: int) -> np.ndarray:
    """x**y by repeated squaring in x's dtype (wrapping for integers), as XLA lowers it:
    x**13 = x * x**4 * x**8 (the set bits of 13), and x**-n = 1 / x**n."""
    if y == 0:
        return np.ones_like(x)
    base = x
    n = abs(y)
    acc = None
    while n:
        if n & 1:
            acc = base if acc is None else ew.multiply(acc, base)
        n >>= 1
        if n:
            base = ew.multiply(base, base)
    if y < 0:
        acc = ew.divide(np.ones_like(x), acc)
    return np.array(acc, copy=True) if acc is x else acc


@integer_pow_p.def_lowering
def _integer_pow_lowering(ctx: Any, x: Any, *, y: int) -> Any:
    """The same square-and-multiply chain as the NumPy rule, so results agree bit for bit."""
    aval = ctx.avals_in[0]
    if y == 0:
        return L.full_like(ctx, 1, aval)
    base, n, acc = x, abs(y), None
    while n:
        if n & 1:
            acc = base if acc is None else ctx.b.multiply(acc, base)
        n >>= 1
        if n:
            base = ctx.b.multiply(base, base)
    if y < 0:
        acc = ctx.b.divide(L.full_like(ctx, 1, aval), acc)
    return acc


class RoundingMethod(enum.IntEnum):
    """lax.round's modes; prints as its integer value in a jaxpr (`rounding_method=0`)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


round_p = Primitive("round")


@round_p.def_abstract_eval
def _round_abstract(x: ShapedArray, *, rounding_method: int) -> ShapedArray:
    R.check_dtype_kinds("round", x, R.FLOAT)
    return x


@round_p.def_impl
def _round_impl(x: np.ndarray, *, rounding_method: int) -> np.ndarray:
    if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return ew.round_nearest_even(x)
    return ew.round_nearest_afz(x)


@round_p.def_lowering
def _round_lowering(ctx: Any, x: Any, *, rounding_method: int) -> Any:
    if int(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return ctx.b.round_nearest_even(x)
    return ctx.b.round_nearest_afz(x)


# -- autodiff rules ------------------------------------------------------------------------------
# Each JVP term is an operand's tangent t times the partial derivative of the result with
# respect to that operand, evaluated at the primals (x, y) or the result (ans). Terms are
# stretched to the result's shape (an operand may be rank 0 or have size-1 dimensions), and
# the transposes of the linear ones sum the cotangent back (`_ad.unbroadcast`).

def _jvp(prim: Primitive, *terms: Any) -> None:
    ad.defjvp(prim, *terms, broadcast=_ad.broadcast_to)


def _c(value: float, like: Any) -> np.ndarray:
    return _ad.const(value, like)


def _add_transpose(ct: Any, x: Any, y: Any) -> list:
    return [_ad.unbroadcast(ct, v.aval) if ad.is_undefined_primal(v) else None for v in (x, y)]


def _sub_transpose(ct: Any, x: Any, y: Any) -> list:
    # y's cotangent is negated after summing it to y's shape (JAX negates first): a
    # broadcast y (log_softmax's row term) negates one value per row, not the whole
    # cotangent. Without broadcasting both print `neg ct`.
    return [_ad.unbroadcast(ct, x.aval) if ad.is_undefined_primal(x) else None,
            _ad.neg(_ad.unbroadcast(ct, y.aval)) if ad.is_undefined_primal(y) else None]


def _mul_transpose(ct: Any, x: Any, y: Any) -> list:
    # mul is linear in one operand at a time: d(x*y) = t*y with y a known residual.
    if ad.is_undefined_primal(x):
        if ad.is_undefined_primal(y):
            raise ValueError("mul is not linear in both operands at once")
        return [_ad.unbroadcast(_ad.mul(ct, y), x.aval), None]
    return [None, _ad.unbroadcast(_ad.mul(x, ct), y.aval)]


def _div_transpose(ct: Any, x: Any, y: Any) -> list:
    # x / y is linear in x only.
    if ad.is_undefined_primal(y):
        raise ValueError("div is linear in its numerator only")
    return [_ad.unbroadcast(_ad.div(ct, y), x.aval), None]


def _add_sub_jvp(prim: Primitive, neg_y: bool) -> None:
    """JAX's rule for add and sub: the tangent is the primitive itself on two tangents (not
    add_any of the terms, so it prints `add`/`sub` as JAX's does), the one tangent stretched
    to the output (negated for sub's y) when the other is zero."""
    def rule(primals: Any, tangents: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals)
        tx, ty = tangents
        out_aval = get_aval(ans)
        if isinstance(tx, ad.Zero) and isinstance(ty, ad.Zero):
            return ans, ad.Zero(out_aval)
        if isinstance(tx, ad.Zero):
            return ans, _ad.broadcast_to(_ad.neg(ty) if neg_y else ty, out_aval)
        if isinstance(ty, ad.Zero):
            return ans, _ad.broadcast_to(tx, out_aval)
        return ans, prim.bind(tx, ty)

    prim.def_jvp(rule)


_add_sub_jvp(add_p, neg_y=False)
_add_sub_jvp(sub_p, neg_y=True)
_jvp(mul_p, lambda t, ans, x, y: _ad.mul(t, y), lambda t, ans, x, y: _ad.mul(x, t))
# d(x/y) = tx / y - ty * (x/y) / y
_jvp(div_p, lambda t, ans, x, y: _ad.div(t, y),
     lambda t, ans, x, y: _ad.mul(_ad.neg(t), _ad.div(ans, y)))
add_p.def_transpose(_add_transpose)
sub_p.def_transpose(_sub_transpose)
mul_p.def_transpose(_mul_transpose)
div_p.def_transpose(_div_transpose)
ad.deflinear(neg_p)
neg_p.def_transpose(lambda ct, x: [_ad.neg(ct)])


def _full(value: float, like: Any) -> Any:
    """`value` in `like`'s shape and dtype as JAX's full_like stages it: a literal at rank
    0, else a broadcast_in_dim of the scalar (one per call, as JAX's rules print them)."""
    aval = get_aval(like)
    if aval.shape == ():
        return np.array(value, aval.dtype)
    return _ad.broadcast_in_dim(np.array(value, aval.dtype), aval.shape, ())


def _balanced_eq(x: Any, ans: Any, other: Any) -> Any:
    """JAX's tie rule for max/min: d ans / dx = 1 where x alone is the result, 1/2 where x
    and the other operand tie, 0 elsewhere, written as JAX's rule writes it:
    select(x == ans, 1, 0) / select(other == ans, 2, 1) (so texts match JAX's; the
    quotients 1, 1/2 and 0 are exact). Eagerly (no operand is a tracer, so no text is
    printed) the same factor is computed with fewer full-size temporaries, as
    (x == ans) * (1 - (other == ans) / 2): the same values, bit for bit."""
    if not any(isinstance(v, Tracer) for v in (x, ans, other)):
        dtype = get_aval(ans).dtype
        picked = _ad.convert(_ad.compare("eq", x, ans), dtype)
        tied = _ad.convert(_ad.compare("eq", other, ans), dtype)
        return _ad.mul(picked, _ad.sub(_c(1, ans), _ad.mul(_c(0.5, ans), tied)))
    picked = _ad.select(_ad.compare("eq", x, ans), _full(1, ans), _full(0, ans))
    tied = _ad.select(_ad.compare("eq", other, ans), _full(2, ans), _full(1, ans))
    return _ad.div(picked, tied)


for _p in (max_p, min_p):
    _jvp(_p, lambda t, ans, x, y: _ad.mul(t, _balanced_eq(x, ans, y)),
         lambda t, ans, x, y: _ad.mul(t, _balanced_eq(y, ans, x)))

# rem(x, y) = x - y * trunc(x / y): d = tx - ty * trunc(x / y)
_jvp(rem_p, lambda t, ans, x, y: t,
     lambda t, ans, x, y: _ad.mul(_ad.neg(t), _ad.mul(
         _ad.unary("sign", _ad.div(x, y)), _ad.unary("floor", _ad.unary("abs", _ad.div(x, y))))))


def _square(x: Any) -> Any:
    return _ad.unary("square", x)


def _atan2_denominator(x: Any, y: Any) -> Any:
    return _ad.add(_square(x), _square(y))


# atan2(x, y) = angle of (y, x): d = (tx * y - ty * x) / (x^2 + y^2)
_jvp(atan2_p, lambda t, ans, x, y: _ad.mul(t, _ad.div(y, _atan2_denominator(x, y))),
     lambda t, ans, x, y: _ad.mul(t, _ad.div(_ad.neg(x), _atan2_denominator(x, y))))

_SQRT_PI = float(np.sqrt(np.pi))


def _one_minus_sq(x: Any) -> Any:
    """1 - x^2 as (1 - x)(1 + x): 1 - x is exact near |x| = 1, where 1 - square(x) (JAX's
    asin/acos form) keeps only the bits square(x) rounded to (2.5e-5 relative error at
    x = 0.9999 in float32, against 2e-8)."""
    return _ad.mul(_ad.sub(_c(1, x), x), _ad.add(_c(1, x), x))


def _abs_jvp(t: Any, ans: Any, x: Any) -> Any:
    """d|x| = sign(x) t (0 at x = 0, NaN at NaN; JAX's select(x >= 0, t, -t) gives 1 at 0,
    which makes composites such as i0 = i0e(x) exp(|x|) differentiate to 1 there instead
    of i1(0) = 0, and -1 at NaN); for complex z, d|z| = Re(t conj(z) / |z|), |z| read as
    1 at z = 0 (a zero tangent there), as JAX's."""
    if dtypes.kind(get_aval(x).dtype) != "c":
        return _ad.mul(t, _ad.unary("sign", x))
    from ember.prims import complex_parts as C
    conj_x = C.conj(x)
    mag = _ad.convert(ans, get_aval(x).dtype)
    safe = _ad.select(_ad.compare("eq", mag, _c(0, mag)), _full(1, mag), mag)
    return C.real(_ad.mul(t, _ad.div(conj_x, safe)))


_jvp(abs_p, _abs_jvp)

# The tangent of each unary primitive, written in JAX 0.10.2's operation order (which
# operand the tangent multiplies, where a neg or a div sits), so that grad and jvp print
# as JAX's do; after transposition `mul t D` prints `mul ct D` and `div t D` `div ct D`.
_UNARY_TANGENTS: dict[Primitive, Callable[[Any, Any, Any], Any]] = {
    exp_p: lambda t, ans, x: _ad.mul(t, ans),                                   # e^x
    # 2^x ln 2, ln 2 staged as `log 2.0` (folded to a constant when compiled)
    exp2_p: lambda t, ans, x: _ad.mul(_ad.unary("log", _c(2, x)), _ad.mul(t, ans)),
    log_p: lambda t, ans, x: _ad.div(t, x),                                     # 1/x
    log1p_p: lambda t, ans, x: _ad.div(t, _ad.add(x, _c(1, x))),                # 1/(1+x)
    expm1_p: lambda t, ans, x: _ad.mul(t, _ad.add(ans, _c(1, ans))),            # expm1+1
    sqrt_p: lambda t, ans, x: _ad.mul(t, _ad.div(_c(0.5, ans), ans)),           # 1/(2 sqrt x)
    rsqrt_p: lambda t, ans, x: _ad.mul(t, _ad.mul(_c(-0.5, x), _ad.div(ans, x))),
    # x^(-2/3)/3 = cbrt(x)^-2 / 3
    cbrt_p: lambda t, ans, x: _ad.mul(t, _ad.mul(_c(1 / 3, x),
                                                 integer_pow_p.bind(ans, y=-2))),
    sin_p: lambda t, ans, x: _ad.mul(t, _ad.unary("cos", x)),
    cos_p: lambda t, ans, x: _ad.neg(_ad.mul(t, _ad.unary("sin", x))),
    tan_p: lambda t, ans, x: _ad.mul(t, _ad.add(_c(1, x), _square(ans))),      # 1 + tan^2
    # 1/sqrt(1-x^2) with 1-x^2 factored (_one_minus_sq: Ember's, not JAX's, for accuracy)
    asin_p: lambda t, ans, x: _ad.mul(t, _ad.unary("rsqrt", _one_minus_sq(x))),
    acos_p: lambda t, ans, x: _ad.mul(t, _ad.neg(_ad.unary("rsqrt", _one_minus_sq(x)))),
    atan_p: lambda t, ans, x: _ad.div(t, _ad.add(_c(1, x), _square(x))),       # 1/(1+x^2)
    sinh_p: lambda t, ans, x: _ad.mul(t, _ad.unary("cosh", x)),
    cosh_p: lambda t, ans, x: _ad.mul(t, _ad.unary("sinh", x)),
    # 1 - tanh^2 = (1 + tanh)(1 - tanh), the tangent folded in first: (t + t ans)(1 - ans)
    tanh_p: lambda t, ans, x: _ad.mul(_ad.add(t, _ad.mul(t, ans)), _ad.sub(_c(1, x), ans)),
    asinh_p: lambda t, ans, x: _ad.mul(t, _ad.unary("rsqrt", _ad.add(_square(x), _c(1, x)))),
    # 1/sqrt(x^2 - 1) as 1/sqrt((x-1)(x+1)): exact x - 1 near x = 1, where JAX's
    # square(x) - 1 loses bits as asin's 1 - square(x) does
    acosh_p: lambda t, ans, x: _ad.mul(t, _ad.unary("rsqrt", _ad.mul(
        _ad.sub(x, _c(1, x)), _ad.add(x, _c(1, x))))),
    # 1/(1-x^2) = 1/(1+x) * 1/(1-x): factored, so exact near |x| = 1
    atanh_p: lambda t, ans, x: _ad.mul(integer_pow_p.bind(_ad.add(_c(1, x), x), y=-1),
                                       _ad.div(t, _ad.sub(_c(1, x), x))),
    logistic_p: lambda t, ans, x: _ad.mul(t, _ad.mul(ans, _ad.sub(_c(1, ans), ans))),
    # erf'(x) = 2/sqrt(pi) e^(-x^2); erfc' = -erf'; erf_inv'(x) = sqrt(pi)/2 e^(erf_inv^2)
    erf_p: lambda t, ans, x: _ad.mul(_c(2 / _SQRT_PI, x),
                                     _ad.mul(t, _ad.unary("exp", _ad.neg(_square(x))))),
    erfc_p: lambda t, ans, x: _ad.mul(_c(-2 / _SQRT_PI, x),
                                      _ad.mul(t, _ad.unary("exp", _ad.neg(_square(x))))),
    erf_inv_p: lambda t, ans, x: _ad.mul(_c(_SQRT_PI / 2, x),
                                         _ad.mul(t, _ad.unary("exp", _square(ans)))),
    square_p: lambda t, ans, x: _ad.mul(t, _ad.mul(_c(2, x), x)),
}
for _p, _rule in _UNARY_TANGENTS.items():
    _jvp(_p, _rule)

# Piecewise constant or integer-valued: their tangents are zero.
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p,
           eq_to_p, le_to_p, lt_to_p, and_p, or_p, xor_p, not_p, shift_left_p,
           shift_right_logical_p, shift_right_arithmetic_p, population_count_p, clz_p):
    ad.defjvp_zero(_p)


def _pow_jvp_x_int(t: Any, ans: Any, x: Any, y: Any) -> Any:
    """JAX's rule for an integer exponent, in its op order: y (a constant folded) in x's
    dtype, both stretched to the result's shape where they differ, then
    select(y == 0, 0, replace_zero(y) * x^(y - 1))."""
    out = get_aval(ans)
    known = _ad.literal_value(y)
    # (a constant converts as a literal, as JAX's does: no conversion staged)
    y = _ad.convert(y, out.dtype) if known is None else known.astype(out.dtype)
    if get_aval(x).shape != get_aval(y).shape:
        x, y = _ad.broadcast_to(x, out), _ad.broadcast_to(y, out)
    is_zero = _ad.compare("eq", y, _c(0, y))
    zeros = _full(0, y)
    safe_y = _ad.select(_ad.compare("eq", y, _c(0, y)), _full(1, y), y)
    power = pow_p.bind(x, _ad.sub(y, _full(1, y)))
    return _ad.mul(t, _ad.select(is_zero, zeros, _ad.mul(safe_y, power)))


def _pow_jvp_x(t: Any, ans: Any, x: Any, y: Any) -> Any:
    """d x^y / dx = y x^(y-1), and 0 where y = 0 (x^0 = 1 even at x = 0, where
    y x^(y-1) would be 0 * inf: JAX's float rule gives NaN there, so Ember keeps the
    select that JAX stages for integer exponents only)."""
    if dtypes.kind(get_aval(y).dtype) in "iub":
        return _pow_jvp_x_int(t, ans, x, y)
    out = get_aval(ans)
    yf = _ad.broadcast_to(_ad.convert(y, out.dtype), out)
    xb = _ad.broadcast_to(x, out)
    power = pow_p.bind(xb, _ad.sub(yf, _c(1, yf)))
    jac = _ad.select(_ad.compare("eq", yf, _c(0, yf)), _ad.zeros(out), _ad.mul(yf, power))
    return _ad.mul(t, jac)


def _pow_jvp_y(t: Any, ans: Any, x: Any, y: Any) -> Any:
    """d x^y / dy = log(x) x^y, with log(x) read as 0 at x = 0 (JAX's choice: 0^y is flat
    in y for y > 0)."""
    safe_x = _ad.select(_ad.compare("eq", x, _c(0, x)), _full(1, x), x)
    return _ad.mul(t, _ad.mul(_ad.unary("log", safe_x), ans))


_jvp(pow_p, _pow_jvp_x, _pow_jvp_y)


def _integer_pow_jvp(t: Any, ans: Any, x: Any, *, y: int) -> Any:
    # d x^n = n x^(n-1) t  (x^0 = 1: zero tangent)
    if y == 0:
        return _ad.mul(t, _c(0, t))
    if y == 1:
        return t
    lower = x if y == 2 else integer_pow_p.bind(x, y=y - 1)
    return _ad.mul(t, _ad.mul(_c(y, x), lower))


_jvp(integer_pow_p, _integer_pow_jvp)


# -- batching rules ------------------------------------------------------------------------------
# Every primitive of this module is elementwise: one rule lines the batch axes up.
for _p in (add_p, sub_p, mul_p, div_p, rem_p, max_p, min_p, atan2_p, neg_p, abs_p, sign_p,
           floor_p, ceil_p, is_finite_p, *_UNARY_TANGENTS, eq_p, ne_p, lt_p, le_p, gt_p,
           ge_p, eq_to_p, le_to_p, lt_to_p, and_p, or_p, xor_p, not_p, shift_left_p,
           shift_right_logical_p, shift_right_arithmetic_p, population_count_p, clz_p, pow_p,
           integer_pow_p, round_p):
    _batching.elementwise_rule(_p)
