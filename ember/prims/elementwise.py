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

from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.hlo.evaluator import elementwise as ew
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
            rule: Callable[..., np.ndarray] | None = None,
            lowering: Callable[..., Any] | None = None) -> Primitive:
    prim = Primitive(name)
    prim.hlo_opcode = opcode  # type: ignore[attr-defined]
    # An opcode without a NumPy rule leaves the primitive without one (binding it raises),
    # rather than failing `import ember`: the coverage test then names every missing rule at
    # once (tests/unit/test_coverage.py).
    fn = rule or ew.ELEMENTWISE.get(opcode)
    prim.def_lowering(lowering or L.elementwise(opcode))

    @prim.def_abstract_eval
    def _abstract(*avals: ShapedArray) -> ShapedArray:
        if len(avals) != nargs:
            raise TypeError(f"{name} takes {nargs} operands, got {len(avals)}")
        dtype = R.check_nary(name, avals, kinds)
        shape = R.broadcasting_shape(name, *avals)
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
abs_p = _unary("abs", "abs", R.SIGNED_NUMBER)  # JAX rejects unsigned: jnp.abs skips it
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
    return prim


eq_p = _comparison("eq", "EQ")
ne_p = _comparison("ne", "NE")
lt_p = _comparison("lt", "LT")
le_p = _comparison("le", "LE")
gt_p = _comparison("gt", "GT")
ge_p = _comparison("ge", "GE")

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
    if y.dtype.kind not in "iu" and y.dtype != x.dtype:
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
    if x.dtype.kind in "iu" and y < 0:
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
