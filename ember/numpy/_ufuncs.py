"""Elementwise functions of ember.numpy under their NumPy names.

Each promotes its arguments NumPy-style (JAX's lattice; math functions promote integers to
the default float) and binds the corresponding lax function. Where JAX's jnp differs from
NumPy we follow JAX (`jnp.round` rounds half to even; integer `//` floors; `%` has the
divisor's sign).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.core.trace import get_aval
from ember.numpy._promote import promote_args, promote_args_inexact, promote_args_numeric


def _math(lax_fn: Callable[[Any], Any], name: str) -> Callable[[Any], Any]:
    def fn(x: Any, /) -> Any:
        return lax_fn(*promote_args_inexact(name, x))
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (floats; integers promote to the default float)."
    return fn


def _binary(lax_fn: Callable[[Any, Any], Any], name: str,
            promote: Callable[..., list] = promote_args) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any, /) -> Any:
        return lax_fn(*promote(name, x, y))
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting and JAX type promotion."
    return fn


sin = _math(lax.sin, "sin")
cos = _math(lax.cos, "cos")
tan = _math(lax.tan, "tan")
arcsin = _math(lax.asin, "arcsin")
arccos = _math(lax.acos, "arccos")
arctan = _math(lax.atan, "arctan")
sinh = _math(lax.sinh, "sinh")
cosh = _math(lax.cosh, "cosh")
tanh = _math(lax.tanh, "tanh")
arcsinh = _math(lax.asinh, "arcsinh")
arccosh = _math(lax.acosh, "arccosh")
arctanh = _math(lax.atanh, "arctanh")
exp = _math(lax.exp, "exp")
exp2 = _math(lax.exp2, "exp2")
expm1 = _math(lax.expm1, "expm1")
log = _math(lax.log, "log")
log1p = _math(lax.log1p, "log1p")
sqrt = _math(lax.sqrt, "sqrt")
cbrt = _math(lax.cbrt, "cbrt")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def log2(x: Any, /) -> Any:
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(lax.full_like(x, 2)))


def log10(x: Any, /) -> Any:
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), lax.log(lax.full_like(x, 10)))


add = _binary(lax.add, "add")
subtract = _binary(lax.sub, "subtract")
multiply = _binary(lax.mul, "multiply")
true_divide = _binary(lax.div, "true_divide", promote_args_inexact)
divide = true_divide
maximum = _binary(lax.max, "maximum")
minimum = _binary(lax.min, "minimum")
arctan2 = _binary(lax.atan2, "arctan2", promote_args_inexact)
atan2 = arctan2
equal = _binary(lax.eq, "equal")
not_equal = _binary(lax.ne, "not_equal")
less = _binary(lax.lt, "less")
less_equal = _binary(lax.le, "less_equal")
greater = _binary(lax.gt, "greater")
greater_equal = _binary(lax.ge, "greater_equal")


def negative(x: Any, /) -> Any:
    (x,) = promote_args_numeric("negative", x)
    return lax.neg(x)


def positive(x: Any, /) -> Any:
    (x,) = promote_args_numeric("positive", x)
    return x


def absolute(x: Any, /) -> Any:
    (x,) = promote_args("absolute", x)
    if get_aval(x).dtype.kind in "ub":
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001


def sign(x: Any, /) -> Any:
    (x,) = promote_args("sign", x)
    return lax.sign(x)


def floor(x: Any, /) -> Any:
    (x,) = promote_args("floor", x)
    return lax.floor(x) if get_aval(x).dtype.kind == "f" else x


def ceil(x: Any, /) -> Any:
    (x,) = promote_args("ceil", x)
    return lax.ceil(x) if get_aval(x).dtype.kind == "f" else x


def square(x: Any, /) -> Any:
    (x,) = promote_args_numeric("square", x)
    return lax.integer_pow(x, 2)


def reciprocal(x: Any, /) -> Any:
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def _bitwise(lax_fn: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any, /) -> Any:
        x, y = promote_args(name, x, y)
        if get_aval(x).dtype.kind not in "iub":
            raise TypeError(f"{name} is only defined for integer and boolean arrays, got "
                            f"{get_aval(x).dtype.name}")
        return lax_fn(x, y)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor")


def bitwise_not(x: Any, /) -> Any:
    (x,) = promote_args("bitwise_not", x)
    return lax.bitwise_not(x)


invert = bitwise_not
bitwise_invert = bitwise_not


def logical_and(x: Any, y: Any, /) -> Any:
    return lax.bitwise_and(*promote_args("logical_and", _to_bool(x), _to_bool(y)))


def logical_or(x: Any, y: Any, /) -> Any:
    return lax.bitwise_or(*promote_args("logical_or", _to_bool(x), _to_bool(y)))


def logical_xor(x: Any, y: Any, /) -> Any:
    return lax.bitwise_xor(*promote_args("logical_xor", _to_bool(x), _to_bool(y)))


def logical_not(x: Any, /) -> Any:
    return lax.bitwise_not(_to_bool(x))


def _to_bool(x: Any) -> Any:
    aval = get_aval(x)
    if aval.dtype.kind == "b":
        return x
    return lax.ne(x, lax.full_like(x, 0))


def left_shift(x: Any, y: Any, /) -> Any:
    return lax.shift_left(*promote_args("left_shift", x, y))


def right_shift(x: Any, y: Any, /) -> Any:
    x, y = promote_args("right_shift", x, y)
    if get_aval(x).dtype.kind == "u":
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def power(x: Any, y: Any, /) -> Any:
    """x ** y. A static integer exponent becomes integer_pow, as in JAX."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
        (x,) = promote_args_numeric("power", x)
        return lax.integer_pow(x, int(y))
    x, y = promote_args_numeric("power", x, y)
    if get_aval(x).dtype.kind in "iub":
        return _integer_power(x, y)
    return lax.pow(x, y)


pow = power  # noqa: A001


def _integer_power(x: Any, y: Any) -> Any:
    """x ** y for integer arrays by binary exponentiation over the bits of y."""
    bits = get_aval(y).dtype.itemsize * 8
    acc = lax.full_like(x, 1)
    base = x
    for _ in range(bits):
        bit = lax.ne(lax.bitwise_and(y, lax.full_like(y, 1)), lax.full_like(y, 0))
        acc = lax.select(bit, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        y = lax.shift_right_logical(y, lax.full_like(y, 1))
    return acc


def float_power(x: Any, y: Any, /) -> Any:
    return lax.pow(*promote_args_inexact("float_power", x, y))


def floor_divide(x: Any, y: Any, /) -> Any:
    x, y = promote_args_numeric("floor_divide", x, y)
    dtype = get_aval(x).dtype
    if dtype.kind in "iu":
        q = lax.div(x, y)
        if dtype.kind == "u":
            return q
        # C division truncates; step down when the remainder's sign differs from y's.
        r = lax.rem(x, y)
        zero = lax.full_like(r, 0)
        fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
        return lax.select(fix, lax.sub(q, lax.full_like(q, 1)), q)
    return lax.floor(lax.div(x, y))


def remainder(x: Any, y: Any, /) -> Any:
    """x mod y with the sign of y (Python and NumPy semantics)."""
    x, y = promote_args_numeric("remainder", x, y)
    r = lax.rem(x, y)
    if get_aval(r).dtype.kind == "u":
        return r
    zero = lax.full_like(r, 0)
    fix = lax.bitwise_and(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(y, zero)))
    return lax.select(fix, lax.add(r, y), r)


mod = remainder


def fmod(x: Any, y: Any, /) -> Any:
    return lax.rem(*promote_args_numeric("fmod", x, y))


def divmod(x: Any, y: Any, /) -> tuple[Any, Any]:  # noqa: A001
    return floor_divide(x, y), remainder(x, y)
