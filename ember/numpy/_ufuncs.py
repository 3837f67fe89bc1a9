"""Elementwise functions of ember.numpy under their NumPy names, and the `ufunc` class.

Input: arrays, NumPy values or Python scalars. Output: the elementwise result with NumPy
broadcasting and JAX's type promotion (weak types included; math functions promote
integers to the default float). Where JAX's jnp differs from NumPy we follow JAX:
`jnp.round` rounds half to even; integer `//` floors and `%` takes the divisor's sign, with
an integer divisor of 0 giving `x % 0 == 0`; `isclose` on integers is exact equality; bool
`add`/`multiply` are logical or/and. The binary ufuncs (add, multiply, maximum, ...) are
`ufunc` objects with `outer`, `reduce` and `accumulate`, as in JAX.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes, traceback_util
from ember.core.trace import Tracer, get_aval
from ember.numpy._eager_cache import eager_cached
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import (
    check_arraylike,
    ensure_array,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes_inexact,
)

__all__ = [
    "ufunc", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp",
    "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "add", "subtract",
    "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod", "fmod", "divmod",
    "power", "pow", "float_power", "maximum", "minimum", "fmax", "fmin", "arctan2", "atan2",
    "hypot", "logaddexp", "logaddexp2", "copysign", "nextafter", "heaviside", "ldexp",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "invert", "bitwise_invert", "left_shift", "right_shift",
    "bitwise_left_shift", "bitwise_right_shift", "negative", "positive", "absolute", "abs",
    "fabs", "sign", "floor", "ceil", "trunc", "fix", "rint", "round", "around", "square",
    "reciprocal", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit",
    "nan_to_num", "sinc", "deg2rad", "rad2deg", "degrees", "radians", "real", "imag", "conj",
    "conjugate", "angle", "iscomplexobj", "isrealobj", "modf", "clip", "isclose", "allclose",
    "array_equal", "array_equiv",
]


def _scalar(x: Any, value: Any) -> Any:
    """`value` as a 0-d strongly typed constant of x's dtype (a jaxpr literal)."""
    return lax.convert_element_type(value, get_aval(x).dtype)


def _kind(x: Any) -> str:
    return dtypes.kind(get_aval(x).dtype)


def _bcast(v: Any, shape: tuple[int, ...]) -> Any:
    """v (rank 0, or of shape's rank with size-1 dims, as promote_shapes leaves operands)
    broadcast to shape."""
    nd = get_aval(v).ndim
    return lax.broadcast_in_dim(v, shape, tuple(range(nd)) if nd else ())


def _common_shape(*xs: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*[get_aval(x).shape for x in xs]))


# ---------------------------------------------------------------------------------------------
# The ufunc class
# ---------------------------------------------------------------------------------------------

class ufunc:
    """A NumPy-style universal function: callable, with `outer`, `reduce` and `accumulate`.

    `reduce` uses the matching reduction (sum for add, prod for multiply, max, min, all, any)
    where one exists, and otherwise folds along the axis: r = f(...f(f(a0, a1), a2)..., an).
    """

    def __init__(self, func: Callable[..., Any], name: str, nin: int, nout: int = 1,
                 identity: Any = None, reducer: Callable[..., Any] | None = None,
                 accumulator: str | None = None):
        self._func = func
        self._eager = eager_cached(func)  # (the call's eager dispatch cache)
        self.__name__ = name
        self.__qualname__ = name
        self.__doc__ = func.__doc__
        self.nin = nin
        self.nout = nout
        self.nargs = nin + nout
        self.identity = identity
        self._reducer = reducer
        self._accumulator = accumulator

    def __repr__(self) -> str:
        return f"<ember.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"{self.__name__}: the 'out' argument is not supported")
        if where is not None:
            raise NotImplementedError(f"{self.__name__}: the 'where' argument is not supported")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments but "
                            f"{len(args)} were given")
        return self._eager(*args)

    def outer(self, A: Any, B: Any, /) -> Any:
        """f(A[..., None, ...], B): every pair of elements, result shape A.shape + B.shape."""
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        A, B = ensure_array(A), ensure_array(B)
        a, b = get_aval(A), get_aval(B)
        A = lax.broadcast_in_dim(A, a.shape + (1,) * b.ndim, tuple(range(a.ndim)))
        return self._func(A, B)

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """Reduce ``a`` along ``axis`` by applying this binary ufunc repeatedly.

        Args:
            a: the array.
            axis: an int, a tuple of ints, or None for all axes.
            dtype: the result's dtype.
            out: unsupported; must be None.
            keepdims: whether to keep the reduced axes with size 1.
            initial: the starting value of the reduction.
            where: a bool mask of the elements to include (for the ufuncs with a matching
                reduction: add, multiply, maximum, minimum, logical_and, logical_or).

        Returns:
            The reduction: ``jnp.add.reduce`` is ``jnp.sum``, ``jnp.multiply.reduce`` is
            ``jnp.prod``, and so on; other ufuncs fold their operation over the axis.
        """
        if self.nin != 2:
            raise ValueError("reduce only supported for binary ufuncs")
        if out is not None:
            raise NotImplementedError("reduce: the 'out' argument is not supported")
        if self._reducer is not None:
            return self._reducer(a, axis=axis, dtype=dtype, keepdims=keepdims,
                                 initial=initial, where=where)
        if where is not None:
            raise NotImplementedError(f"{self.__name__}.reduce: where is not supported")
        from ember.numpy._manipulation import ravel, reshape
        from ember.numpy._reductions import normalize_axes
        a = ensure_array(a)
        if dtype is not None:
            a = lax.convert_element_type(a, dtypes.canonicalize(dtype))
        aval = get_aval(a)
        axes = normalize_axes(axis, aval.ndim)
        if len(axes) > 1:
            # A fold is order-dependent, so (as NumPy) it runs along one axis only.
            raise ValueError(f"reduction operation '{self.__name__}' is not reorderable, so "
                             "at most one axis may be specified")
        if not axes:
            a, axes = ravel(a), (0,)
        ax = axes[0]
        n = get_aval(a).shape[ax]
        from ember.numpy._manipulation import unstack
        items = list(unstack(a, axis=ax)) if n else []
        if initial is not None:
            items.insert(0, lax.convert_element_type(initial, get_aval(a).dtype))
        if not items:
            if self.identity is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            shp = tuple(s for i, s in enumerate(get_aval(a).shape) if i != ax)
            return lax.full(shp, self.identity, get_aval(a).dtype)
        acc = items[0]
        for item in items[1:]:
            acc = self._func(acc, item)
        if keepdims:
            from ember.numpy._manipulation import expand_dims
            if axis is None:
                return reshape(acc, (1,) * aval.ndim)
            acc = expand_dims(acc, normalize_axes(axis, aval.ndim))
        return acc

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """Running results along axis: r_i = f(r_{i-1}, a_i), r_0 = a_0."""
        if self.nin != 2:
            raise ValueError("accumulate only supported for binary ufuncs")
        from ember import numpy as jnp
        if self._accumulator is not None and hasattr(jnp, self._accumulator):
            return getattr(jnp, self._accumulator)(a, axis=axis, dtype=dtype)
        from ember.numpy._manipulation import concatenate, expand_dims, unstack
        a = ensure_array(a)
        if dtype is not None:
            a = lax.convert_element_type(a, dtypes.canonicalize(dtype))
        aval = get_aval(a)
        ax = int(axis) % aval.ndim
        items = unstack(a, axis=ax)
        if not items:
            return a
        outs = [items[0]]
        for item in items[1:]:
            outs.append(self._func(outs[-1], item))
        return concatenate([expand_dims(o, ax) for o in outs], ax)


# jnp.add(x, y), jnp.add.reduce(x) are the user's calls: errors show the user's frames
traceback_util.wrap_methods(ufunc, ["__call__"])


def _math(lax_fn: Callable[[Any], Any], name: str, summary: str, result: str,
          example: str = "") -> Callable[[Any], Any]:
    """jnp.<name>: lax_fn on x promoted to an inexact dtype, with a JAX-layout docstring
    built from `summary` (one line), `result` (what the Returns section says) and an
    optional `example` (a ``>>>`` line and its output)."""
    def fn(x: Any, /) -> Any:
        return lax_fn(*promote_args_inexact(name, x))
    fn.__name__ = name
    fn.__qualname__ = name
    doc = (f"{summary}, element-wise.\n\n"
           "    Args:\n"
           "        x: an array or scalar; integers and bools promote to the default float\n"
           "            type (float32 unless x64 is enabled, where NumPy gives float64).\n\n"
           "    Returns:\n"
           f"        {result}\n")
    if example:
        doc += "\n    Example:\n" + "".join(f"        {line}\n" for line in example.splitlines())
    fn.__doc__ = doc
    return eager_cached(fn)


def _binary(lax_fn: Callable[[Any, Any], Any], name: str,
            promote: Callable[..., list] = promote_args) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any, /) -> Any:
        return lax_fn(*promote(name, x, y))
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting and JAX type promotion."
    return fn


def _ordering(lax_fn: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    """An order comparison with NumPy's lexicographic order on complex values: the real
    parts decide, the imaginary parts where the real parts are equal (lax's comparison
    refuses complex operands, as JAX's)."""
    def fn(x: Any, y: Any, /) -> Any:
        x, y = promote_args(name, x, y)
        if _kind(x) != "c":
            return lax_fn(x, y)
        xr, yr = lax.real(x), lax.real(y)
        return lax.select(lax.eq(xr, yr), lax_fn(lax.imag(x), lax.imag(y)), lax_fn(xr, yr))
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with NumPy broadcasting and JAX type promotion."
    return fn


# ---------------------------------------------------------------------------------------------
# Transcendental functions
# ---------------------------------------------------------------------------------------------

sin = _math(lax.sin, "sin",
            "Compute the sine of angles in radians",
            "``sin(x)``, in x's inexact dtype.",
            ">>> jnp.sin(jnp.array([0.0, jnp.pi / 2]))\nArray([0., 1.], dtype=float32)")
cos = _math(lax.cos, "cos",
            "Compute the cosine of angles in radians",
            "``cos(x)``, in x's inexact dtype.",
            ">>> jnp.cos(jnp.array([0.0, jnp.pi]))\nArray([ 1., -1.], dtype=float32)")
tan = _math(lax.tan, "tan",
            "Compute the tangent of angles in radians",
            "``tan(x)``, in x's inexact dtype.",
            ">>> jnp.tan(jnp.array([0.0, -0.0]))\nArray([ 0., -0.], dtype=float32)")
arcsin = _math(lax.asin, "arcsin",
               "Compute the inverse sine",
               "Angles in ``[-pi/2, pi/2]``; NaN outside ``[-1, 1]`` for real x.",
               ">>> jnp.arcsin(jnp.array([0.0, 1.0, 2.0]))\n"
               "Array([0.       , 1.5707964,       nan], dtype=float32)")
arccos = _math(lax.acos, "arccos",
               "Compute the inverse cosine",
               "Angles in ``[0, pi]``; NaN outside ``[-1, 1]`` for real x.",
               ">>> jnp.arccos(jnp.array([1.0, 0.0, -1.0]))\n"
               "Array([0.       , 1.5707964, 3.1415927], dtype=float32)")
arctan = _math(lax.atan, "arctan",
               "Compute the inverse tangent",
               "Angles in ``(-pi/2, pi/2)``; see ``arctan2`` for the quadrant.",
               ">>> jnp.arctan(jnp.array([0.0, jnp.inf]))\n"
               "Array([0.       , 1.5707964], dtype=float32)")
sinh = _math(lax.sinh, "sinh",
             "Compute the hyperbolic sine",
             "``(exp(x) - exp(-x)) / 2``, in x's inexact dtype.",
             ">>> jnp.sinh(jnp.array([0.0, -jnp.inf]))\nArray([  0., -inf], dtype=float32)")
cosh = _math(lax.cosh, "cosh",
             "Compute the hyperbolic cosine",
             "``(exp(x) + exp(-x)) / 2``, in x's inexact dtype.",
             ">>> jnp.cosh(jnp.array([0.0, -jnp.inf]))\nArray([ 1., inf], dtype=float32)")
tanh = _math(lax.tanh, "tanh",
             "Compute the hyperbolic tangent",
             "``sinh(x) / cosh(x)``, in ``[-1, 1]`` for real x.",
             ">>> jnp.tanh(jnp.array([0.0, 20.0, -jnp.inf]))\n"
             "Array([ 0.,  1., -1.], dtype=float32)")
arcsinh = _math(lax.asinh, "arcsinh",
                "Compute the inverse hyperbolic sine",
                "``y`` with ``sinh(y) == x``.",
                ">>> jnp.arcsinh(jnp.array([0.0, jnp.inf]))\nArray([ 0., inf], dtype=float32)")
arccosh = _math(lax.acosh, "arccosh",
                "Compute the inverse hyperbolic cosine",
                "``y >= 0`` with ``cosh(y) == x``; NaN for real x < 1.",
                ">>> jnp.arccosh(jnp.array([1.0, 0.5]))\nArray([ 0., nan], dtype=float32)")
arctanh = _math(lax.atanh, "arctanh",
                "Compute the inverse hyperbolic tangent",
                "``y`` with ``tanh(y) == x``; NaN for real ``abs(x) > 1``, infinite at 1.",
                ">>> jnp.arctanh(jnp.array([0.0, 1.0, 2.0]))\n"
                "Array([ 0., inf, nan], dtype=float32)")
exp = _math(lax.exp, "exp",
            "Compute the exponential ``e**x``",
            "``e**x``; it overflows to inf in float32 above about 88.7.",
            ">>> jnp.exp(jnp.array([0.0, 1.0]))\nArray([1.       , 2.7182817], dtype=float32)")
exp2 = _math(lax.exp2, "exp2",
             "Compute ``2**x``",
             "``2**x``, in x's inexact dtype.",
             ">>> jnp.exp2(jnp.array([0.0, 3.0, -1.0]))\nArray([1. , 8. , 0.5], dtype=float32)")
expm1 = _math(lax.expm1, "expm1",
              "Compute ``exp(x) - 1``, accurately near zero",
              "``exp(x) - 1`` without the cancellation of computing it directly for small x.",
              ">>> jnp.expm1(jnp.array([0.0, 1e-10]))\nArray([0.e+00, 1.e-10], dtype=float32)")
log = _math(lax.log, "log",
            "Compute the natural logarithm",
            "``log(x)``: -inf at 0 and NaN for real x < 0 (complex x gives the principal branch).",
            ">>> jnp.log(jnp.array([1.0, 0.0]))\nArray([  0., -inf], dtype=float32)")
log1p = _math(lax.log1p, "log1p",
              "Compute ``log(1 + x)``, accurately near zero",
              "``log(1 + x)`` without the rounding of forming ``1 + x`` first.",
              ">>> jnp.log1p(jnp.array([0.0, 1e-10, -1.0]))\n"
              "Array([0.e+00, 1.e-10,   -inf], dtype=float32)")
sqrt = _math(lax.sqrt, "sqrt",
             "Compute the non-negative square root",
             "``sqrt(x)``; NaN for real x < 0 (complex x gives the principal root).",
             ">>> jnp.sqrt(jnp.array([4, 2]))\nArray([2.       , 1.4142135], dtype=float32)")
cbrt = _math(lax.cbrt, "cbrt",
             "Compute the cube root",
             "The real cube root (negative for negative x).",
             ">>> jnp.cbrt(jnp.array([8.0, -27.0]))\nArray([ 2., -3.], dtype=float32)")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def log2(x: Any, /) -> Any:
    """Compute the base-2 logarithm element-wise.

    Args:
        x: an array or scalar; integers promote to the default float type.

    Returns:
        ``log(x) / log(2)``: -inf at 0, NaN for real ``x < 0``.

    Example:
        >>> jnp.log2(jnp.array([1.0, 8.0, 0.5]))
        Array([ 0.,  3., -1.], dtype=float32)
    """
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), lax.log(_scalar(x, 2)))


def log10(x: Any, /) -> Any:
    """Compute the base-10 logarithm element-wise.

    Args:
        x: an array or scalar; integers promote to the default float type.

    Returns:
        ``log(x) / log(10)`` (computed as ``log(x)`` times the constant ``1 / log(10)``,
        as JAX does): -inf at 0, NaN for real ``x < 0``.

    Example:
        >>> jnp.log10(jnp.array([1.0, 100.0, 0.0]))
        Array([  0.,   2., -inf], dtype=float32)
    """
    (x,) = promote_args_inexact("log10", x)
    dt = get_aval(x).dtype
    inv_ln10 = np.array(0.4342944819032518, dtypes.finfo(dt).dtype)  # 1 / log(10)
    r = lax.log(x)
    if dtypes.kind(dt) == "c":
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(lax.mul(re, inv_ln10), lax.mul(im, inv_ln10))
    return lax.mul(r, inv_ln10)


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------

def _add(x: Any, y: Any, /) -> Any:
    """Add two arrays element-wise: ``x + y`` (the ``+`` operator of Arrays).

    Args:
        x, y: arrays or scalars, broadcast together and promoted to a common dtype with
            JAX's rules (a Python scalar is weakly typed and takes the array's dtype).

    Returns:
        The sum, of the promoted dtype and the broadcast shape; for bools, the logical OR.

    Example:
        >>> jnp.add(jnp.arange(3), 10)
        Array([10, 11, 12], dtype=int32)
    """
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _kind(x) == "b" else lax.add(x, y)


def _multiply(x: Any, y: Any, /) -> Any:
    """Multiply two arrays element-wise: ``x * y`` (the ``*`` operator of Arrays).

    Args:
        x, y: arrays or scalars, broadcast together and promoted to a common dtype with
            JAX's rules (a Python scalar is weakly typed and takes the array's dtype).

    Returns:
        The product, of the promoted dtype and the broadcast shape; for bools, the logical
        AND.

    Example:
        >>> jnp.multiply(jnp.array([1, 2, 3]), 2)
        Array([2, 4, 6], dtype=int32)
    """
    x, y = promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _kind(x) == "b" else lax.mul(x, y)


def _subtract(x: Any, y: Any, /) -> Any:
    """Subtract two arrays element-wise.

    Args:
        x1, x2: arrays or scalars, broadcast together and promoted with JAX's rules (a
            Python scalar is weakly typed and takes the array's dtype).

    Returns:
        ``x1 - x2``; integers wrap around on overflow. Bools raise ``TypeError``, as in
        NumPy (use ``logical_xor`` or ``!=``).

    Example:
        >>> jnp.subtract(jnp.array([5, 3, 1]), 2)
        Array([ 3,  1, -1], dtype=int32)
    """
    return lax.sub(*promote_args("subtract", x, y))


def _true_divide(x: Any, y: Any, /) -> Any:
    """Divide two arrays element-wise, in floating point.

    Args:
        x1, x2: arrays or scalars, broadcast together; integers and bools promote to the
            default float type.

    Returns:
        ``x1 / x2`` with IEEE semantics: a division by zero gives ``+-inf`` or NaN, never an
        error. ``divide`` is the same function.

    Example:
        >>> jnp.divide(jnp.array([1.0, -1.0, 0.0]), 0.0)
        Array([ inf, -inf,  nan], dtype=float32)
    """
    return lax.div(*promote_args_inexact("true_divide", x, y))


@jit_like_jax("floor_divide")
def _floor_divide(x: Any, y: Any, /) -> Any:
    """Return the largest integer not greater than ``x1 / x2``, element-wise.

    Args:
        x1, x2: arrays or scalars, broadcast together and promoted to a common numeric dtype.

    Returns:
        ``floor(x1 / x2)`` in the promoted dtype; for floats, the quotient of Python's
        ``divmod`` (consistent with ``remainder``). An integer division by zero does not
        raise: its value follows XLA's division (-1 stepped by the sign rule), as in
        JAX; NumPy warns and gives 0.

    Example:
        >>> jnp.floor_divide(jnp.array([7, -7, 7]), 2)
        Array([ 3, -4,  3], dtype=int32)
    """
    x, y = promote_args_numeric("floor_divide", x, y)
    kind = _kind(x)
    if kind == "u":
        return lax.div(x, y)
    if kind == "i":
        q = lax.div(x, y)
        fix = lax.bitwise_and(lax.ne(lax.sign(x), lax.sign(y)),
                              lax.ne(lax.rem(x, y), _scalar(x, 0)))
        return where_(fix, lax.sub(q, _scalar(q, 1)), q)
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    """Floor quotient and remainder of floats (CPython's float_divmod):
    m = fmod(x, y); q = (x - m) / y; where m != 0 and sign(m) != sign(y): m += y, q -= 1;
    q is then rounded to the nearest integer (it is within rounding of one). A zero divisor
    divides x itself (x / 0 = +-inf or NaN, as NumPy)."""
    shape = _common_shape(x, y)
    x, y = _bcast(x, shape), _bcast(y, shape)
    mod = lax.rem(x, y)
    zero = _scalar(x, 0)
    num = where_(lax.eq(y, zero), x, lax.sub(x, mod))  # (JAX's where: its jaxpr text)
    div = lax.div(num, y)
    ind = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select(ind, lax.add(mod, y), mod)
    div = lax.select(ind, lax.sub(div, _scalar(div, 1)), div)
    return lax.round(div), mod


@jit_like_jax("remainder")
def _remainder(x: Any, y: Any, /) -> Any:
    """Return the remainder of a floor division, with the sign of the divisor.

    Args:
        x1, x2: arrays or scalars, broadcast together and promoted to a common numeric dtype.

    Returns:
        ``x1 - floor(x1 / x2) * x2`` (Python's ``%``); an integer divisor of 0 gives 0 (as
        NumPy, without its warning). ``mod`` is the same function.

    Example:
        >>> jnp.remainder(jnp.array([7, -7, 7]), jnp.array([3, 3, -3]))
        Array([ 1,  2, -2], dtype=int32)
    """
    x, y = promote_args_numeric("remainder", x, y)
    zero = _scalar(x, 0)
    if _kind(y) in "iu":
        y = where_(lax.eq(y, zero), lax.full_like(y, 1), y)  # (JAX's where: its jaxpr text)
    r = lax.rem(x, y)
    nonzero = lax.ne(r, zero)  # (traced first, as JAX does, so the jaxprs print alike)
    fix = lax.bitwise_and(lax.ne(lax.lt(r, zero), lax.lt(y, zero)), nonzero)
    return lax.select(fix, lax.add(r, y), r)


@jit_like_jax("fmod")
def fmod(x: Any, y: Any, /) -> Any:
    """Return the remainder of a division with the sign of the dividend (C's ``fmod``).

    Args:
        x1, x2: arrays or scalars, broadcast together and promoted to a common numeric dtype.

    Returns:
        ``x1 - trunc(x1 / x2) * x2``; an integer divisor of 0 gives 0 (as NumPy, without its
        warning). See ``remainder`` for the sign of the divisor.

    Example:
        >>> jnp.fmod(jnp.array([7, -7, 7]), jnp.array([3, 3, -3]))
        Array([ 1, -1,  1], dtype=int32)
    """
    check_arraylike("fmod", x, y)
    x, y = promote_args_numeric("fmod", x, y)
    if _kind(y) in "iu":
        y = where_(lax.eq(y, _scalar(y, 0)), lax.full_like(y, 1), y)
    return lax.rem(x, y)


@jit_like_jax("divmod")
def divmod(x: Any, y: Any, /) -> tuple[Any, Any]:  # noqa: A001
    """Return the floor quotient and the remainder of a division together, element-wise.

    Args:
        x1, x2: arrays or scalars, broadcast together and promoted to a common numeric
            dtype.

    Returns:
        ``(floor_divide(x1, x2), remainder(x1, x2))``: the remainder has the sign of
        ``x2`` and ``x1 == q * x2 + r``. An integer division by zero gives 0 for the
        remainder (NumPy warns and gives 0 too) rather than raising.

    Example:
        >>> q, r = jnp.divmod(jnp.array([7, -7, 7]), jnp.array([2, 2, -2]))
        >>> q
        Array([ 3, -4, -4], dtype=int32)
        >>> r
        Array([ 1,  1, -1], dtype=int32)
    """
    x, y = promote_args_numeric("divmod", x, y)
    if _kind(x) in "iu":
        return _floor_divide(x, y), _remainder(x, y)
    return _float_divmod(x, y)


def _power(x: Any, y: Any, /) -> Any:
    """Raise the first array to the powers of the second, element-wise.

    Args:
        x1: the bases.
        x2: the exponents, broadcast against ``x1``; promoted together with JAX's rules.

    Returns:
        ``x1 ** x2``. A concrete integer scalar exponent is computed by repeated
        multiplication (``integer_pow``), keeping ``x1``'s dtype; integer bases with integer
        arrays of exponents use binary exponentiation (negative exponents are not defined
        for integers). ``pow`` is the same function.

    Example:
        >>> jnp.power(jnp.array([2, 3]), 3)
        Array([ 8, 27], dtype=int32)
        >>> jnp.power(jnp.array([4.0, 2.0]), jnp.array([0.5, -1.0]))
        Array([2. , 0.5], dtype=float32)
    """
    if not isinstance(y, Tracer) and not isinstance(y, builtins.bool) and (
            isinstance(y, (int, np.integer))
            or (hasattr(y, "_ember_aval") and get_aval(y).ndim == 0
                and dtypes.kind(get_aval(y).dtype) in "iu")):
        (x,) = promote_args_numeric("power", x)
        return lax.integer_pow(x, int(y))
    x, y = promote_args_numeric("power", x, y)
    if _kind(x) in "iu":
        return _integer_power(x, y)
    return lax.pow(x, y)


def _integer_power(x: Any, y: Any) -> Any:
    """x ** y for integer arrays by binary exponentiation over the bits of y:
    acc *= base where bit i of y is set; base squares each step (wrapping)."""
    shape = _common_shape(x, y)
    x, y = _bcast(x, shape), _bcast(y, shape)
    acc = lax.broadcast_in_dim(_scalar(x, 1), shape, ())
    base = x
    one = _scalar(y, 1)
    for _ in range(get_aval(y).dtype.itemsize * 8):
        bit = lax.ne(lax.bitwise_and(y, one), _scalar(y, 0))
        acc = lax.select(bit, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        y = lax.shift_right_logical(y, one)
    return acc


def float_power(x: Any, y: Any, /) -> Any:
    """Raise ``x`` to the power ``y`` element-wise, in a floating-point type.

    Args:
        x, y: arrays or scalars, broadcast together; promoted to a common inexact dtype
            (integers and bools to the default float type).

    Returns:
        ``x ** y`` computed in floating point. Unlike NumPy, which computes in float64
        (complex128), the result keeps JAX's promoted dtype: float32 unless x64 is on.

    Example:
        >>> jnp.float_power(jnp.array([2, 3, 4]), jnp.array([2, -1, 0.5]))
        Array([4.        , 0.33333334, 2.        ], dtype=float32)
    """
    return lax.pow(*promote_args_inexact("float_power", x, y))


def _maximum(x: Any, y: Any, /) -> Any:
    """Return the element-wise maximum of two arrays.

    Args:
        x, y: arrays or scalars, broadcast together and promoted to a common dtype with
            JAX's rules (a Python scalar is weakly typed and takes the array's dtype).

    Returns:
        The larger of ``x`` and ``y`` at each position; NaN where either is NaN (see
        ``fmax`` to ignore NaNs).

    Example:
        >>> jnp.maximum(jnp.array([1.0, jnp.nan, 3.0]), 2.0)
        Array([ 2., nan,  3.], dtype=float32)
    """
    return lax.max(*promote_args("maximum", x, y))


def _minimum(x: Any, y: Any, /) -> Any:
    """Return the element-wise minimum of two arrays.

    Args:
        x, y: arrays or scalars, broadcast together and promoted to a common dtype with
            JAX's rules (a Python scalar is weakly typed and takes the array's dtype).

    Returns:
        The smaller of ``x`` and ``y`` at each position; NaN where either is NaN (see
        ``fmin`` to ignore NaNs).

    Example:
        >>> jnp.minimum(jnp.array([1.0, jnp.nan, 3.0]), 2.0)
        Array([ 1., nan,  2.], dtype=float32)
    """
    return lax.min(*promote_args("minimum", x, y))


@jit_like_jax("fmax")
def fmax(x: Any, y: Any, /) -> Any:
    """Element-wise maximum that ignores NaNs.

    Args:
        x, y: arrays or scalars, broadcast together and promoted with JAX's rules.

    Returns:
        The larger of ``x`` and ``y`` at each position; where one of them is NaN, the
        other; NaN only where both are. Unlike ``maximum``, which propagates NaNs.

    Example:
        >>> jnp.fmax(jnp.array([1.0, jnp.nan, 3.0]), jnp.array([2.0, 0.5, jnp.nan]))
        Array([2. , 0.5, 3. ], dtype=float32)
    """
    # x where (x > y) or y is NaN, else y: a NaN x loses every comparison, so y wins.
    return where_(bitwise_or(greater(x, y), isnan(y)), x, y)


@jit_like_jax("fmin")
def fmin(x: Any, y: Any, /) -> Any:
    """Element-wise minimum that ignores NaNs.

    Args:
        x, y: arrays or scalars, broadcast together and promoted with JAX's rules.

    Returns:
        The smaller of ``x`` and ``y`` at each position; where one of them is NaN, the
        other; NaN only where both are. Unlike ``minimum``, which propagates NaNs.

    Example:
        >>> jnp.fmin(jnp.array([1.0, jnp.nan, 3.0]), jnp.array([2.0, 0.5, jnp.nan]))
        Array([1. , 0.5, 3. ], dtype=float32)
    """
    # x where (x < y) or y is NaN, else y (the mirror of fmax).
    return where_(bitwise_or(less(x, y), isnan(y)), x, y)


def where_(c: Any, x: Any, y: Any) -> Any:
    from ember.numpy._manipulation import where
    return where(c, x, y)


def _arctan2(x: Any, y: Any, /) -> Any:
    """Return the angle of the point ``(x2, x1)`` element-wise: ``arctan(x1 / x2)`` with
    the quadrant taken from both signs.

    Args:
        x1, x2: arrays or scalars (the y and x coordinates), broadcast together; promoted
            to a common inexact dtype (integers to the default float type).

    Returns:
        The angle in radians, in ``[-pi, pi]``; the signs of zeros choose between 0 and
        ``+-pi`` as in C's ``atan2`` (``arctan2(0.0, -0.0)`` is ``pi``). Complex inputs
        are refused, as in NumPy and JAX.

    Example:
        >>> jnp.arctan2(jnp.array([1.0, -1.0, 0.0]), jnp.array([-1.0, -1.0, -0.0]))
        Array([ 2.3561945, -2.3561945,  3.1415927], dtype=float32)
    """
    return lax.atan2(*promote_args_inexact("arctan2", x, y))


@jit_like_jax("hypot")
def _hypot(x: Any, y: Any, /) -> Any:
    """Return the hypotenuse ``sqrt(x**2 + y**2)`` element-wise, without overflow.

    Args:
        x, y: real arrays or scalars, broadcast together; integers promote to the default
            float type. Complex values raise a ``ValueError``.

    Returns:
        The hypotenuse of the right triangle with legs ``x`` and ``y``: 0 where both are 0,
        ``inf`` where either is infinite (even when the other is NaN).

    Example:
        >>> jnp.hypot(jnp.array([3.0, 5.0]), jnp.array([4.0, 12.0]))
        Array([ 5., 13.], dtype=float32)
    """
    # with a = max(abs(x), abs(y)), b = min(abs(x), abs(y)): a * sqrt(1 + (b / a)^2)
    x, y = promote_args_inexact("hypot", x, y)
    if _kind(x) == "c":
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    # (The ops are traced in JAX's order, the a == 0 test twice as JAX does, so the nested
    # jit[name=hypot] prints as JAX's.)
    x, y = lax.abs(x), lax.abs(y)
    any_inf = lax.bitwise_or(isposinf(x), isposinf(y))
    a, b = maximum(x, y), minimum(x, y)
    zero, one = _scalar(a, 0), _scalar(a, 1)
    a_is_zero = lax.eq(a, zero)
    safe_a = where_(lax.eq(a, zero), lax.broadcast_in_dim(one, get_aval(a).shape, ()), a)
    out = lax.mul(a, lax.sqrt(lax.add(one, lax.square(lax.div(b, safe_a)))))
    out = where_(a_is_zero, a, out)
    return where_(any_inf, _scalar(out, np.inf), out)


def _logaddexp(x: Any, y: Any, /) -> Any:
    """Return ``log(exp(x) + exp(y))`` element-wise, without overflow or underflow.

    Args:
        x, y: arrays or scalars, broadcast together; integers promote to the default float.

    Returns:
        The logarithm of the sum of the exponentials: ``logaddexp(-inf, y)`` is ``y``,
        ``logaddexp(inf, inf)`` is ``inf``.

    Example:
        >>> jnp.logaddexp(jnp.array([0.0, 1000.0]), -jnp.inf)
        Array([   0., 1000.], dtype=float32)
    """
    from ember.numpy import _logaddexp as core  # (a custom_jvp function, as JAX's)
    x, y = promote_args_inexact("logaddexp", x, y)
    return core.logaddexp(x, y)


def _logaddexp2(x: Any, y: Any, /) -> Any:
    """Return ``log2(2**x + 2**y)`` element-wise, without overflow or underflow.

    Args:
        x, y: arrays or scalars, broadcast together; integers promote to the default float.

    Returns:
        The base-2 logarithm of the sum of the powers of two.

    Example:
        >>> jnp.logaddexp2(jnp.array([1.0, 100.0]), jnp.array([1.0, -jnp.inf]))
        Array([  2., 100.], dtype=float32)
    """
    from ember.numpy import _logaddexp as core  # (a custom_jvp function, as JAX's)
    x, y = promote_args_inexact("logaddexp2", x, y)
    return core.logaddexp2(x, y)


def _int_type_of(dtype: np.dtype) -> np.dtype:
    return np.dtype({2: np.int16, 4: np.int32, 8: np.int64}[dtype.itemsize])


@jit_like_jax("signbit")
def signbit(x: Any, /) -> Any:
    """Test element-wise whether the sign bit is set.

    Args:
        x: a real array or scalar.

    Returns:
        A bool array: True for negative values, including -0.0 and a NaN with its sign bit
        set; ``x < 0`` for integers; False for bools.

    Example:
        >>> jnp.signbit(jnp.array([-1.0, 0.0, -0.0, jnp.nan]))
        Array([ True, False,  True, False], dtype=bool)
    """
    (x,) = promote_args("signbit", x)
    dt = get_aval(x).dtype
    if dtypes.kind(dt) == "c":
        raise ValueError(f"jax.numpy.signbit is not well defined for {dt.name}")
    if dtypes.kind(dt) in "iu":
        return lax.lt(x, _scalar(x, 0))
    if dtypes.kind(dt) == "b":
        return lax.broadcast_in_dim(lax.convert_element_type(False, np.bool_),
                                    get_aval(x).shape, ())
    ity = _int_type_of(dt)
    bits = lax.bitcast_convert_type(x, ity)
    # The sign is the top bit: an arithmetic shift by (width - 1) leaves 0 or -1, and
    # -1 converts to True (JAX's formulation; its jaxpr text is matched op for op).
    width = np.dtype(ity).itemsize * 8
    shifted = lax.shift_right_arithmetic(bits, lax.convert_element_type(width - 1, ity))
    return lax.convert_element_type(shifted, np.bool_)


@jit_like_jax("copysign")
def _copysign(x: Any, y: Any, /) -> Any:
    """Return ``x``'s magnitude with ``y``'s sign, element-wise.

    Args:
        x, y: arrays or scalars, broadcast together; integers promote to the default float.

    Returns:
        ``abs(x)`` where ``y``'s sign bit is clear, ``-abs(x)`` where it is set (so
        ``copysign(1.0, -0.0)`` is ``-1.0``).

    Example:
        >>> jnp.copysign(jnp.array([1.0, -2.0, 3.0]), -1.0)
        Array([-1., -2., -3.], dtype=float32)
    """
    x, y = promote_args_inexact("copysign", x, y)
    if _kind(x) == "c":
        raise TypeError("copysign does not support complex-valued inputs")
    return where_(signbit(y), lax.neg(lax.abs(x)), lax.abs(x))


def _nextafter(x: Any, y: Any, /) -> Any:
    """Return the next floating-point value after ``x`` toward ``y``, element-wise.

    Args:
        x, y: arrays or scalars, broadcast together; integers promote to the default float.

    Returns:
        The representable value adjacent to ``x`` in the direction of ``y``: ``y`` where
        ``x == y``, NaN where either is NaN, the smallest subnormal of ``y``'s sign after 0.

    Example:
        >>> jnp.nextafter(jnp.array([1.0, 0.0]), jnp.array([2.0, -1.0]))
        Array([ 1.0000001e+00, -1.4012985e-45], dtype=float32)
    """
    # on the bit patterns: for x != 0 the integer view of abs(x) steps by one (up when
    # moving away from zero)
    x, y = promote_args_inexact("nextafter", x, y)
    shape = _common_shape(x, y)
    x, y = _bcast(x, shape), _bcast(y, shape)
    dt = get_aval(x).dtype
    ity = _int_type_of(dt)
    bits = lax.bitcast_convert_type(x, ity)
    one = lax.convert_element_type(1, ity)
    zero = _scalar(x, 0)
    # Moving away from zero increments the magnitude bits, toward zero decrements them; the
    # sign bit is kept, so incrementing the integer view of a negative float moves down.
    away = lax.eq(lax.gt(y, x), lax.gt(x, zero))
    stepped = lax.select(away, lax.add(bits, one), lax.sub(bits, one))
    out = lax.bitcast_convert_type(stepped, dt)
    tiny = lax.bitcast_convert_type(lax.broadcast_in_dim(one, shape, ()), dt)
    from_zero = lax.select(signbit(y), lax.neg(tiny), tiny)
    out = lax.select(lax.eq(x, zero), from_zero, out)
    out = lax.select(lax.eq(x, y), y, out)
    nan = lax.bitwise_or(lax.ne(x, x), lax.ne(y, y))
    return lax.select(nan, lax.add(x, y), out)


@jit_like_jax("heaviside")
def _heaviside(x: Any, h0: Any, /) -> Any:
    """Compute the Heaviside step function element-wise.

    Args:
        x1: the input values.
        x2: the value where ``x1`` is 0, broadcast against ``x1``.

    Returns:
        0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where ``x1 == 0``, NaN where ``x1`` is
        NaN.

    Example:
        >>> jnp.heaviside(jnp.array([-2.0, 0.0, 3.0]), 0.5)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    check_arraylike("heaviside", x, h0)
    x, h0 = promote_dtypes_inexact(x, h0)  # (where_ broadcasts, as JAX's _where does)
    zero, one = _scalar(x, 0), _scalar(x, 1)
    # Traced in JAX's order (its jaxpr text): x < 0, x > 0, then NaN passes through.
    neg, pos = lax.lt(x, zero), lax.gt(x, zero)
    return where_(neg, zero, where_(pos, one, where_(lax.ne(x, x), x, h0)))


# ---------------------------------------------------------------------------------------------
# Comparison, logic, bits
# ---------------------------------------------------------------------------------------------

def _to_bool(x: Any) -> Any:
    x = ensure_array(x)
    if _kind(x) == "b":
        return x
    return lax.ne(x, _scalar(x, 0))


def _logical(lax_fn: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any, /) -> Any:
        check_arraylike(name, x, y)
        return lax_fn(*promote_args(name, _to_bool(x), _to_bool(y)))
    fn.__name__ = name
    return fn


def logical_not(x: Any, /) -> Any:
    """Compute the truth value of ``NOT x`` element-wise.

    Args:
        x: an array or scalar of any dtype, read as bool (nonzero is True).

    Returns:
        A bool array of ``x``'s shape.

    Example:
        >>> jnp.logical_not(jnp.array([0, 1, 2]))
        Array([ True, False, False], dtype=bool)
    """
    check_arraylike("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


def _bitwise(lax_fn: Callable[[Any, Any], Any], name: str,
             doc: str) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any, /) -> Any:
        x, y = promote_args(name, x, y)
        if _kind(x) not in "iub":
            raise TypeError(f"{name} is only defined for integer and boolean arrays, got "
                            f"{get_aval(x).dtype.name}")
        return lax_fn(x, y)
    fn.__name__ = name
    fn.__doc__ = doc
    return fn


def bitwise_not(x: Any, /) -> Any:
    """Invert every bit of an integer array element-wise; logical NOT for bools.

    Args:
        x: an integer or bool array or scalar.

    Returns:
        ``~x`` with ``x``'s dtype: ``-x - 1`` for signed integers, ``max - x`` for
        unsigned ones, ``not x`` for bools. ``invert`` and ``bitwise_invert`` are the
        same function. Floats raise ``TypeError``, as in NumPy.

    Example:
        >>> jnp.bitwise_not(jnp.array([0, 5, -3]))
        Array([-1, -6,  2], dtype=int32)
        >>> jnp.invert(jnp.array([0, 255], dtype=jnp.uint8))
        Array([255,   0], dtype=uint8)
    """
    (x,) = promote_args("bitwise_not", x)
    if _kind(x) not in "iub":
        raise TypeError(f"bitwise_not is only defined for integer and boolean arrays, got "
                        f"{get_aval(x).dtype.name}")
    return lax.bitwise_not(x)


invert = bitwise_not
bitwise_invert = bitwise_not


def _left_shift(x: Any, y: Any, /) -> Any:
    """Shift the bits of an integer array to the left element-wise.

    Args:
        x1: an integer array or scalar: the values to shift.
        x2: an integer array or scalar: how many bit positions, broadcast against ``x1``.

    Returns:
        ``x1 * 2**x2`` wrapped to the promoted integer type (the bits shifted out are
        lost); a shift by the bit width or more gives 0, as in JAX and XLA.
        ``bitwise_left_shift`` is the same function.

    Example:
        >>> jnp.left_shift(jnp.array([1, 3, -2]), jnp.array([2, 1, 3]))
        Array([  4,   6, -16], dtype=int32)
    """
    return lax.shift_left(*promote_args_numeric("left_shift", x, y))


def _right_shift(x: Any, y: Any, /) -> Any:
    """Shift the bits of an integer array to the right element-wise.

    Args:
        x1: an integer array or scalar: the values to shift.
        x2: an integer array or scalar: how many bit positions, broadcast against ``x1``.

    Returns:
        ``floor(x1 / 2**x2)`` in the promoted integer type: an arithmetic shift for signed
        integers (the sign bit is copied in), a logical one for unsigned integers. A shift
        by the bit width or more gives 0, or -1 for a negative ``x1``.
        ``bitwise_right_shift`` is the same function.

    Example:
        >>> jnp.right_shift(jnp.array([16, -16, 7]), 2)
        Array([ 4, -4,  1], dtype=int32)
        >>> jnp.right_shift(jnp.array([240], dtype=jnp.uint8), 4)
        Array([15], dtype=uint8)
    """
    x, y = promote_args_numeric("right_shift", x, y)
    if _kind(x) == "u":
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


# The docstrings of the bit-wise ufuncs built by `_bitwise`.
_BITWISE_AND_DOC = """Compute the bit-wise AND of two arrays element-wise.

    Args:
        x1, x2: integer or bool arrays or scalars, broadcast together and promoted with
            JAX's rules.

    Returns:
        ``x1 & x2``: the bits set in both, in the promoted dtype (logical AND
        for bools). Floats raise ``TypeError``, as in NumPy.

    Example:
        >>> jnp.bitwise_and(jnp.array([12, 10, -1]), 6)
        Array([4, 2, 6], dtype=int32)
    """
_BITWISE_OR_DOC = """Compute the bit-wise OR of two arrays element-wise.

    Args:
        x1, x2: integer or bool arrays or scalars, broadcast together and promoted with
            JAX's rules.

    Returns:
        ``x1 | x2``: the bits set in either, in the promoted dtype (logical OR
        for bools). Floats raise ``TypeError``, as in NumPy.

    Example:
        >>> jnp.bitwise_or(jnp.array([12, 10, 0]), 3)
        Array([15, 11,  3], dtype=int32)
    """
_BITWISE_XOR_DOC = """Compute the bit-wise XOR of two arrays element-wise.

    Args:
        x1, x2: integer or bool arrays or scalars, broadcast together and promoted with
            JAX's rules.

    Returns:
        ``x1 ^ x2``: the bits set in exactly one, in the promoted dtype (logical XOR
        for bools). Floats raise ``TypeError``, as in NumPy.

    Example:
        >>> jnp.bitwise_xor(jnp.array([12, 10, 5]), 6)
        Array([10, 12,  3], dtype=int32)
    """


# ---------------------------------------------------------------------------------------------
# The ufunc objects
# ---------------------------------------------------------------------------------------------

def _reducer(name: str) -> Callable[..., Any]:
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        from ember.numpy import _reductions as R
        fn = getattr(R, name)
        kwargs: dict[str, Any] = {"axis": axis, "keepdims": keepdims, "where": where}
        if name in ("sum", "prod"):
            kwargs.update(dtype=dtype, initial=initial)
        elif name in ("max", "min"):
            kwargs.update(initial=initial)
            if dtype is not None:
                a = lax.convert_element_type(ensure_array(a), dtypes.canonicalize(dtype))
        elif initial is not None:
            raise NotImplementedError(f"{name} reduce: initial is not supported")
        return fn(a, **kwargs)
    return reduce


add = ufunc(_add, "add", 2, identity=0, reducer=_reducer("sum"), accumulator="cumsum")
subtract = ufunc(_subtract, "subtract", 2)
multiply = ufunc(_multiply, "multiply", 2, identity=1, reducer=_reducer("prod"),
                 accumulator="cumprod")
true_divide = ufunc(_true_divide, "true_divide", 2)
divide = true_divide
floor_divide = ufunc(_floor_divide, "floor_divide", 2)
remainder = ufunc(_remainder, "remainder", 2)
mod = remainder
power = ufunc(_power, "power", 2)
pow = power  # noqa: A001
maximum = ufunc(_maximum, "maximum", 2, reducer=_reducer("max"), accumulator="cummax")
minimum = ufunc(_minimum, "minimum", 2, reducer=_reducer("min"), accumulator="cummin")
arctan2 = ufunc(_arctan2, "arctan2", 2)
atan2 = arctan2
hypot = ufunc(_hypot, "hypot", 2)
logaddexp = ufunc(_logaddexp, "logaddexp", 2)
logaddexp2 = ufunc(_logaddexp2, "logaddexp2", 2)
copysign = ufunc(_copysign, "copysign", 2)
nextafter = ufunc(_nextafter, "nextafter", 2)
heaviside = ufunc(_heaviside, "heaviside", 2)
equal = ufunc(_binary(lax.eq, "equal"), "equal", 2)
not_equal = ufunc(_binary(lax.ne, "not_equal"), "not_equal", 2)
less = ufunc(_ordering(lax.lt, "less"), "less", 2)
less_equal = ufunc(_ordering(lax.le, "less_equal"), "less_equal", 2)
greater = ufunc(_ordering(lax.gt, "greater"), "greater", 2)
greater_equal = ufunc(_ordering(lax.ge, "greater_equal"), "greater_equal", 2)
logical_and = ufunc(_logical(lax.bitwise_and, "logical_and"), "logical_and", 2,
                    identity=True, reducer=_reducer("all"))
logical_or = ufunc(_logical(lax.bitwise_or, "logical_or"), "logical_or", 2, identity=False,
                   reducer=_reducer("any"))
logical_xor = ufunc(_logical(lax.bitwise_xor, "logical_xor"), "logical_xor", 2,
                    identity=False)
def _pairwise_doc(summary: str, args: str, result: str, example: str) -> str:
    """A JAX-layout docstring for a two-operand comparison or logical ufunc: `summary` (one
    line), `args` (how x and y are read), `result` (the Returns text), `example` (a
    ``>>>`` call and its output, each one line)."""
    call, shown = example.split("\n")
    return (f"{summary}\n\n"
            "    Args:\n"
            f"        x, y: {args}\n\n"
            "    Returns:\n"
            f"        {result}\n\n"
            "    Example:\n"
            f"        >>> {call}\n"
            f"        {shown}\n")


_COMPARED = ("arrays or scalars, broadcast together and promoted to a common dtype with\n"
             "            JAX's rules (a Python scalar takes the array's dtype).")
_ORDERED = (_COMPARED + " Complex values are\n"
            "            ordered as NumPy orders them: by real part, then imaginary part.")
_TRUTH = ("arrays or scalars of any dtype, each read as bool (nonzero is True),\n"
          "            then broadcast together.")
_BOOL_OUT = "A bool array of the broadcast shape."
_AB = "jnp.array([1, 2, 3]), jnp.array([2, 2, 2])"
_PQ = "jnp.array([True, True, False]), jnp.array([True, False, False])"
for _uf, _summary, _args, _shown in [
        (equal, "Test ``x == y`` element-wise (the ``==`` operator of Arrays).", _COMPARED,
         "Array([False,  True, False], dtype=bool)"),
        (not_equal, "Test ``x != y`` element-wise (the ``!=`` operator of Arrays).", _COMPARED,
         "Array([ True, False,  True], dtype=bool)"),
        (less, "Test ``x < y`` element-wise (the ``<`` operator of Arrays).", _ORDERED,
         "Array([ True, False, False], dtype=bool)"),
        (less_equal, "Test ``x <= y`` element-wise (the ``<=`` operator of Arrays).", _ORDERED,
         "Array([ True,  True, False], dtype=bool)"),
        (greater, "Test ``x > y`` element-wise (the ``>`` operator of Arrays).", _ORDERED,
         "Array([False, False,  True], dtype=bool)"),
        (greater_equal, "Test ``x >= y`` element-wise (the ``>=`` operator of Arrays).",
         _ORDERED, "Array([False,  True,  True], dtype=bool)"),
        (logical_and, "Compute the truth value of ``x AND y`` element-wise.", _TRUTH,
         "Array([ True, False, False], dtype=bool)"),
        (logical_or, "Compute the truth value of ``x OR y`` element-wise.", _TRUTH,
         "Array([ True,  True, False], dtype=bool)"),
        (logical_xor, "Compute the truth value of ``x XOR y`` element-wise.", _TRUTH,
         "Array([False,  True, False], dtype=bool)")]:
    _pair = _PQ if _uf.__name__.startswith("logical") else _AB
    _uf.__doc__ = _pairwise_doc(_summary, _args, _BOOL_OUT,
                                f"jnp.{_uf.__name__}({_pair})\n{_shown}")
del _uf, _summary, _args, _shown, _pair


bitwise_and = ufunc(_bitwise(lax.bitwise_and, "bitwise_and", _BITWISE_AND_DOC), "bitwise_and",
                    2, identity=-1)
bitwise_or = ufunc(_bitwise(lax.bitwise_or, "bitwise_or", _BITWISE_OR_DOC), "bitwise_or", 2,
                   identity=0)
bitwise_xor = ufunc(_bitwise(lax.bitwise_xor, "bitwise_xor", _BITWISE_XOR_DOC), "bitwise_xor",
                    2, identity=0)
left_shift = ufunc(_left_shift, "left_shift", 2)
right_shift = ufunc(_right_shift, "right_shift", 2)
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


# ---------------------------------------------------------------------------------------------
# Unary arithmetic and rounding
# ---------------------------------------------------------------------------------------------

def negative(x: Any, /) -> Any:
    """Compute ``-x`` element-wise (the unary ``-`` operator of Arrays).

    Args:
        x: a numeric array or scalar; bool raises a ``TypeError``, as in JAX.

    Returns:
        The negation, with ``x``'s dtype; unsigned integers wrap around modulo
        ``2**bits``.

    Example:
        >>> jnp.negative(jnp.array([1, -2]))
        Array([-1,  2], dtype=int32)
    """
    (x,) = promote_args("negative", x)
    return lax.neg(x)


def positive(x: Any, /) -> Any:
    """Return ``+x`` element-wise (the unary ``+`` operator of Arrays): the values unchanged.

    Args:
        x: an array or scalar.

    Returns:
        ``x`` as an array of its own dtype.

    Example:
        >>> jnp.positive(jnp.array([1, -2]))
        Array([ 1, -2], dtype=int32)
    """
    (x,) = promote_args("positive", x)
    return x


def absolute(x: Any, /) -> Any:
    """Return the absolute value element-wise (``jnp.abs`` is the same function).

    Args:
        x: an array or scalar.

    Returns:
        ``abs(x)``, of ``x``'s dtype (a complex ``x`` gives its real magnitude); bool and
        unsigned values are returned as they are.

    Example:
        >>> jnp.absolute(jnp.array([-1.5, 0.0, 2.0]))
        Array([1.5, 0. , 2. ], dtype=float32)
    """
    (x,) = promote_args("absolute", x)
    return x if _kind(x) in "ub" else lax.abs(x)


abs = absolute  # noqa: A001


def fabs(x: Any, /) -> Any:
    """Return the absolute value element-wise, as a float.

    Args:
        x: a real array or scalar; integers promote to the default float type. Complex
            values raise a ``TypeError``, as NumPy's ``fabs`` does.

    Returns:
        ``abs(x)`` in the promoted float type.

    Example:
        >>> jnp.fabs(jnp.array([-1.5, 2]))
        Array([1.5, 2. ], dtype=float32)
    """
    (x,) = promote_args_inexact("fabs", x)
    if _kind(x) == "c":
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(x)


def sign(x: Any, /) -> Any:
    """Return the sign of each element.

    Args:
        x: an array or scalar.

    Returns:
        -1, 0 or 1 with ``x``'s dtype: NaN stays NaN and ``-0.0`` stays ``-0.0``; unsigned
        values give 0 or 1 and bools are returned as they are. A nonzero complex value
        gives ``x / abs(x)``, as in JAX (NumPy 2 does the same).

    Example:
        >>> jnp.sign(jnp.array([-2.5, 0.0, 3.0, jnp.nan]))
        Array([-1.,  0.,  1., nan], dtype=float32)
    """
    (x,) = promote_args("sign", x)
    if _kind(x) == "b":
        return x
    return lax.sign(x)


def floor(x: Any, /) -> Any:
    """Round each element down to the largest integer not above it.

    Args:
        x: a real array or scalar. Complex input raises a ``TypeError``, as in JAX.

    Returns:
        ``floor(x)`` with ``x``'s dtype. Unlike NumPy, integer and bool inputs are returned
        as they are (NumPy gives a float result for them).

    Example:
        >>> jnp.floor(jnp.array([-1.5, 0.2, 2.7]))
        Array([-2.,  0.,  2.], dtype=float32)
    """
    (x,) = promote_args("floor", x)
    return lax.floor(x) if _kind(x) in "fc" else x  # (lax refuses complex, as JAX)


def ceil(x: Any, /) -> Any:
    """Round each element up to the smallest integer not below it.

    Args:
        x: a real array or scalar. Complex input raises a ``TypeError``, as in JAX.

    Returns:
        ``ceil(x)`` with ``x``'s dtype. Unlike NumPy, integer and bool inputs are returned
        as they are (NumPy gives a float result for them).

    Example:
        >>> jnp.ceil(jnp.array([-1.5, 0.2, 2.7]))
        Array([-1.,  1.,  3.], dtype=float32)
    """
    (x,) = promote_args("ceil", x)
    return lax.ceil(x) if _kind(x) in "fc" else x


@jit_like_jax("trunc")
def trunc(x: Any, /) -> Any:
    """Round each element toward zero, dropping its fractional part.

    Args:
        x: a real array or scalar.

    Returns:
        ``ceil(x)`` where ``x < 0`` and ``floor(x)`` elsewhere, with ``x``'s dtype; integer
        and bool inputs are returned as they are.

    Example:
        >>> jnp.trunc(jnp.array([-1.7, 1.7]))
        Array([-1.,  1.], dtype=float32)
    """
    from ember.numpy._manipulation import _where
    (x,) = promote_args("trunc", x)
    if _kind(x) not in "fc":  # (complex: lax.lt refuses it, as JAX's trunc does)
        return x
    return _where(lax.lt(x, _scalar(x, 0)), lax.ceil(x), lax.floor(x))


def fix(x: Any, out: None = None) -> Any:
    """Round each element toward zero (the same values as ``jnp.trunc``).

    Args:
        x: a real array or scalar.
        out: not supported; kept for NumPy's signature.

    Returns:
        The integral part of ``x`` with ``x``'s dtype (integers are returned as they are).

    Example:
        >>> jnp.fix(jnp.array([-1.7, 1.7]))
        Array([-1.,  1.], dtype=float32)
    """
    return trunc(x)


@jit_like_jax("rint")
def rint(x: Any, /) -> Any:
    """Round each element to the nearest integer, ties to the even one.

    Args:
        x: an array or scalar; integers and bools promote to the default float type, as
            in JAX. A complex value has its real and imaginary parts rounded apart.

    Returns:
        The rounded values, in the promoted inexact dtype.

    Example:
        >>> jnp.rint(jnp.array([0.5, 1.5, 2.5, -0.5]))
        Array([ 0.,  2.,  2., -0.], dtype=float32)
    """
    (x,) = promote_args_inexact("rint", x)
    if _kind(x) == "c":  # each part on its own
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@jit_like_jax("round", static_argnames=("decimals",))
def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001
    """Round each element to a given number of decimals, ties to even.

    Args:
        a: an array or scalar.
        decimals: the number of decimal places, a static Python int; negative rounds to
            tens, hundreds and so on.
        out: not supported (must be None), as in JAX.

    Returns:
        The rounded values with ``a``'s dtype; a complex value has its two parts rounded
        apart. Integers are returned as they are (``decimals < 0`` raises
        ``NotImplementedError`` for them, as in JAX). As in NumPy, a nonzero ``decimals``
        scales by a power of ten, rounds and scales back, so results carry the float
        rounding error of that division.

    Example:
        >>> jnp.round(jnp.array([0.5, 1.5, 2.5]))
        Array([0., 2., 2.], dtype=float32)
        >>> jnp.round(jnp.array([1234.0, 5678.0]), -2)
        Array([1200., 5700.], dtype=float32)
    """
    # round(x * 10^d) / 10^d (for d < 0, divide then multiply by 10^-d); float16 is scaled
    # in float32 to avoid overflow.
    if out is not None:
        raise NotImplementedError("round: the 'out' argument is not supported")
    decimals = int(decimals)
    (a,) = promote_args("round", a)
    dt = get_aval(a).dtype
    if dtypes.kind(dt) == "c":  # each part on its own
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if dtypes.kind(dt) in "iub":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    even = lax.RoundingMethod.TO_NEAREST_EVEN
    if decimals == 0:
        return lax.round(a, even)
    x = lax.convert_element_type(a, np.float32, get_aval(a).weak_type) if dt == np.float16 \
        else a
    factor = _scalar(x, 10.0 ** builtins.abs(decimals))
    if decimals > 0:
        out = lax.div(lax.round(lax.mul(x, factor), even), factor)
    else:
        out = lax.mul(lax.round(lax.div(x, factor), even), factor)
    return lax.convert_element_type(out, dt, get_aval(a).weak_type)


@jit_like_jax("around", static_argnames=("decimals",))
def around(a: Any, decimals: int = 0, out: None = None) -> Any:
    """Round to ``decimals`` places, half to even: ``round`` under its older name.

    Args:
        a: an array or scalar.
        decimals: the number of decimal places (negative: tens, hundreds...).
        out: not supported (must be None), as in JAX.

    Returns:
        ``round(a, decimals)``.

    Example:
        >>> jnp.around(jnp.array([0.5, 1.5, 2.5]))
        Array([0., 2., 2.], dtype=float32)
    """
    return round(a, decimals, out)


def square(x: Any, /) -> Any:
    """Compute ``x * x`` element-wise.

    Args:
        x: an array or scalar.

    Returns:
        The square of each element, with ``x``'s dtype (bool promotes to the default
        integer type); integers wrap around on overflow.

    Example:
        >>> jnp.square(jnp.array([-2, 3]))
        Array([4, 9], dtype=int32)
    """
    (x,) = promote_args_numeric("square", x)
    return lax.square(x)  # (the square primitive, as JAX 0.10.2 stages jnp.square)


def reciprocal(x: Any, /) -> Any:
    """Compute ``1 / x`` element-wise.

    Args:
        x: an array or scalar.

    Returns:
        The reciprocal of each element. Unlike NumPy, which keeps integer inputs integer
        (so ``1 / 2`` gives 0 there), integers promote to the default float type.

    Example:
        >>> jnp.reciprocal(jnp.array([2, 4]))
        Array([0.5 , 0.25], dtype=float32)
    """
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


@jit_like_jax("modf")
def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    """Split values into fractional and integral parts element-wise.

    Args:
        x: an array or scalar; integers promote to the default float type.
        out: not supported (must be None).

    Returns:
        ``(fractional, integral)``, both with ``x``'s sign: ``x - trunc(x)`` and
        ``trunc(x)``.

    Example:
        >>> frac, whole = jnp.modf(jnp.array([2.5, -1.25]))
        >>> frac
        Array([ 0.5 , -0.25], dtype=float32)
        >>> whole
        Array([ 2., -1.], dtype=float32)
    """
    (x,) = promote_args_inexact("modf", x)
    whole = where_(lax.ge(x, _scalar(x, 0)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


# ---------------------------------------------------------------------------------------------
# Classification and cleanup
# ---------------------------------------------------------------------------------------------

def _all_false(x: Any) -> Any:
    return lax.broadcast_in_dim(lax.convert_element_type(False, np.bool_), get_aval(x).shape,
                                ())


def _either_part(test: Callable[[Any], Any], x: Any) -> Any:
    """test(real x) | test(imag x): a complex value is NaN (infinite) when a part is."""
    return lax.bitwise_or(test(lax.real(x)), test(lax.imag(x)))


def isnan(x: Any, /) -> Any:
    """Test each element for NaN.

    Args:
        x: an array or scalar. A complex value counts as NaN when either part is NaN.

    Returns:
        A bool array of ``x``'s shape; all False for integer and bool inputs.

    Example:
        >>> jnp.isnan(jnp.array([1.0, jnp.nan, jnp.inf]))
        Array([False,  True, False], dtype=bool)
    """
    check_arraylike("isnan", x)
    # x != x for every dtype, as JAX stages it (False for integers and bools; a complex
    # value differs from itself when either part is NaN)
    return lax.ne(x, x)


@jit_like_jax("isinf")
def isinf(x: Any, /) -> Any:
    """Test each element for positive or negative infinity.

    Args:
        x: an array or scalar. A complex value counts as infinite when either part is.

    Returns:
        A bool array of ``x``'s shape; all False for integer and bool inputs (NaN is not
        infinite).

    Example:
        >>> jnp.isinf(jnp.array([1.0, jnp.nan, -jnp.inf]))
        Array([False, False,  True], dtype=bool)
    """
    check_arraylike("isinf", x)
    x = ensure_array(x)
    if _kind(x) == "c":
        return _either_part(isinf, x)
    if _kind(x) != "f":
        return _all_false(x)
    return lax.eq(lax.abs(x), _scalar(x, np.inf))


def isfinite(x: Any, /) -> Any:
    """Test each element for being finite (neither infinite nor NaN).

    Args:
        x: an array or scalar. A complex value is finite when both of its parts are.

    Returns:
        A bool array of ``x``'s shape; all True for integer and bool inputs.

    Example:
        >>> jnp.isfinite(jnp.array([1.0, jnp.nan, -jnp.inf]))
        Array([ True, False, False], dtype=bool)
    """
    check_arraylike("isfinite", x)
    x = ensure_array(x)
    if _kind(x) == "c":  # both parts finite
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if _kind(x) != "f":
        return lax.bitwise_not(_all_false(x))
    return lax.is_finite(x)


def _no_complex_infinity(x: Any) -> None:
    if _kind(x) == "c":
        raise ValueError("isposinf/isneginf are not well defined for complex types")


def isposinf(x: Any, /, out: None = None) -> Any:
    """Test element-wise for positive infinity.

    Args:
        x: a real array or scalar; complex inputs raise ``ValueError``, as in JAX.
        out: not supported (must be None).

    Returns:
        A bool array of ``x``'s shape: True where ``x`` is ``+inf`` (all False for
        integers and bools).

    Example:
        >>> jnp.isposinf(jnp.array([jnp.inf, -jnp.inf, 1.0, jnp.nan]))
        Array([ True, False, False, False], dtype=bool)
    """
    x = ensure_array(x)
    _no_complex_infinity(x)
    return lax.eq(x, _scalar(x, np.inf)) if _kind(x) == "f" else _all_false(x)


def isneginf(x: Any, /, out: None = None) -> Any:
    """Test element-wise for negative infinity.

    Args:
        x: a real array or scalar; complex inputs raise ``ValueError``, as in JAX.
        out: not supported (must be None).

    Returns:
        A bool array of ``x``'s shape: True where ``x`` is ``-inf`` (all False for
        integers and bools).

    Example:
        >>> jnp.isneginf(jnp.array([jnp.inf, -jnp.inf, 1.0, jnp.nan]))
        Array([False,  True, False, False], dtype=bool)
    """
    x = ensure_array(x)
    _no_complex_infinity(x)
    return lax.eq(x, _scalar(x, -np.inf)) if _kind(x) == "f" else _all_false(x)


@jit_like_jax("nan_to_num")
def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """Replace NaN and infinities with finite numbers.

    Args:
        x: an array or scalar.
        copy: accepted for NumPy compatibility (a new array is always returned).
        nan: the value for NaN.
        posinf: the value for ``+inf`` (default: the largest finite value of the dtype).
        neginf: the value for ``-inf`` (default: the most negative finite value).

    Returns:
        ``x`` with the replacements; each part of a complex ``x`` on its own; integers and
        bools unchanged.

    Example:
        >>> jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf, -jnp.inf, 1.0]), posinf=9.0)
        Array([ 0.0000000e+00,  9.0000000e+00, -3.4028235e+38,  1.0000000e+00], dtype=float32)
    """
    check_arraylike("nan_to_num", x)
    x = ensure_array(x)
    dt = get_aval(x).dtype
    if dtypes.kind(dt) == "c":  # each part on its own
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    if dtypes.kind(dt) != "f":
        return x
    info = dtypes.finfo(dt)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = where_(isnan(x), _scalar(x, nan), x)
    out = where_(isposinf(out), _scalar(x, hi), out)
    return where_(isneginf(out), _scalar(x, lo), out)


def deg2rad(x: Any, /) -> Any:
    """Convert angles from degrees to radians element-wise.

    Args:
        x: angles in degrees; integers promote to the default float type.

    Returns:
        ``x * pi / 180``. ``radians`` is the same function.

    Example:
        >>> jnp.deg2rad(jnp.array([0.0, 90.0, 180.0]))
        Array([0.       , 1.5707964, 3.1415927], dtype=float32)
    """
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, _scalar(x, np.pi / 180))


def rad2deg(x: Any, /) -> Any:
    """Convert angles from radians to degrees element-wise.

    Args:
        x: angles in radians; integers promote to the default float type.

    Returns:
        ``x * 180 / pi``. ``degrees`` is the same function.

    Example:
        >>> jnp.rad2deg(jnp.array([0.0, jnp.pi / 2, -jnp.pi]))
        Array([   0.,   90., -180.], dtype=float32)
    """
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, _scalar(x, 180 / np.pi))


degrees = rad2deg
radians = deg2rad


def real(val: Any, /) -> Any:
    """Return the real part of complex numbers element-wise.

    Args:
        val: an array or scalar.

    Returns:
        The real parts, in the real type of ``val``'s dtype; ``val`` itself for real inputs.

    Example:
        >>> jnp.real(jnp.array([1 + 2j, 3 - 4j]))
        Array([1., 3.], dtype=float32)
    """
    check_arraylike("real", val)
    x = ensure_array(val)
    return lax.real(x) if _kind(x) == "c" else x


def imag(val: Any, /) -> Any:
    """Return the imaginary part of complex numbers element-wise.

    Args:
        val: an array or scalar.

    Returns:
        The imaginary parts, in the real type of ``val``'s dtype; zeros for real inputs.

    Example:
        >>> jnp.imag(jnp.array([1 + 2j, 3.0]))
        Array([2., 0.], dtype=float32)
    """
    check_arraylike("imag", val)
    x = ensure_array(val)
    if _kind(x) == "c":
        return lax.imag(x)
    aval = get_aval(x)
    return lax.broadcast_in_dim(lax.convert_element_type(0, aval.dtype, aval.weak_type),
                                aval.shape, ())


def conjugate(x: Any, /) -> Any:
    """Return the complex conjugate element-wise.

    Args:
        x: an array or scalar.

    Returns:
        ``real(x) - 1j * imag(x)`` for complex ``x``; ``x`` itself for real dtypes.
        ``conj`` is the same function.

    Example:
        >>> jnp.conj(jnp.array([1 + 2j, 3 - 1j]))
        Array([1.-2.j, 3.+1.j], dtype=complex64)
    """
    check_arraylike("conjugate", x)
    x = ensure_array(x)
    return lax.conj(x) if _kind(x) == "c" else x


conj = conjugate


@jit_like_jax("angle", static_argnames=("deg",))
def angle(z: Any, deg: bool = False) -> Any:
    """Return the angle (argument) of complex numbers element-wise.

    Args:
        z: an array or scalar; real inputs have angle 0 or pi.
        deg: give degrees instead of radians.

    Returns:
        ``arctan2(imag(z), real(z))``, in ``(-pi, pi]``, in the real inexact type of ``z``.

    Example:
        >>> jnp.angle(jnp.array([-1.0, 1.0, 1j]), deg=True)
        Array([180.,   0.,  90.], dtype=float32)
    """
    check_arraylike("angle", z)
    x = ensure_array(z)
    if _kind(x) == "c":
        re, im = lax.real(x), lax.imag(x)
    else:
        (re,) = promote_args_inexact("angle", x)
        im = lax.full_like(re, 0)
    out = lax.atan2(im, re)
    return out * np.array(180 / np.pi, get_aval(out).dtype) if deg else out


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (its value is not looked at)."""
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype if not isinstance(x, complex) else np.dtype(np.complex128)
    return dtypes.kind(np.dtype(dt)) == "c"


def isrealobj(x: Any) -> bool:
    """Whether x has a real (non-complex) dtype."""
    return not iscomplexobj(x)


# ---------------------------------------------------------------------------------------------
# clip and closeness
# ---------------------------------------------------------------------------------------------

_UNSET: Any = object()


@jit_like_jax("clip")
def clip(arr: Any = None, /, min: Any = None, max: Any = None, *,  # noqa: A002
         a: Any = _UNSET, a_min: Any = _UNSET, a_max: Any = _UNSET) -> Any:
    """Clip array values to the range ``[min, max]``.

    Args:
        arr: the array to clip.
        min: the lower bound (an array or scalar broadcast against ``arr``), or None for
            none.
        max: the upper bound, or None for none.
        a, a_min, a_max: NumPy's older names for ``arr``, ``min`` and ``max``.

    Returns:
        ``minimum(max, maximum(min, arr))``, as in JAX: a NaN bound gives NaN, and where
        ``min > max`` the result is ``max``. Complex values raise a ``ValueError``. Under a
        trace it is one ``jit[name=clip]`` equation, as JAX prints it.

    Example:
        >>> jnp.clip(jnp.array([-2.0, 0.5, 3.0]), 0, 1)
        Array([0. , 0.5, 1. ], dtype=float32)
    """
    if a is not _UNSET:
        if arr is not None:
            raise ValueError("clip: pass the array positionally or as a=, not both")
        arr = a
    if a_min is not _UNSET:
        if min is not None:
            raise ValueError("clip: pass min or a_min, not both")
        min = a_min  # noqa: A001
    if a_max is not _UNSET:
        if max is not None:
            raise ValueError("clip: pass max or a_max, not both")
        max = a_max  # noqa: A001
    if arr is None:
        raise TypeError("clip() missing the array argument")
    check_arraylike("clip", arr)
    if any(b is not None and np.dtype(get_aval(ensure_array(b)).dtype).kind == "c"
           for b in (arr, min, max)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the real "
                         "or imaginary components via jax.numpy.real/imag respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return ensure_array(arr)


@jit_like_jax("isclose", static_argnames=("equal_nan",))
def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: bool = False) -> Any:
    """Return where two arrays are equal within a tolerance, element-wise.

    Args:
        a, b: arrays or scalars, broadcast together; integers and bools are compared as
            floats (JAX promotes them to an inexact dtype first, as NumPy does).
        rtol: the relative tolerance, scaled by ``abs(b)``.
        atol: the absolute tolerance.
        equal_nan: whether a NaN in ``a`` is close to a NaN in ``b``.

    Returns:
        A bool array: ``a == b``, or ``b`` finite and ``abs(a - b) <= atol + rtol * abs(b)``
        (so an infinity is close only to the same infinity, and NaN to nothing unless
        ``equal_nan``).

    Example:
        >>> jnp.isclose(jnp.array([1.0, 1.001, jnp.inf]), jnp.array([1.0, 1.0, jnp.inf]))
        Array([ True, False,  True], dtype=bool)
    """
    a, b = promote_args("isclose", a, b)
    a, b = promote_args_inexact("isclose", a, b)
    # The tolerances take the real dtype (|a - b| is real for complex values).
    real = get_aval(lax.abs(b)) if _kind(b) == "c" else get_aval(b)
    rtol = lax.convert_element_type(rtol, real.dtype)
    atol = lax.convert_element_type(atol, real.dtype)
    # Traced in JAX's order so the nested jit prints alike (both_nan is traced even when
    # unused, as JAX's is).
    both_nan = logical_and(isnan(a), isnan(b))
    b_finite = isfinite(b)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = logical_or(lax.eq(a, b), logical_and(b_finite, in_range))
    return logical_or(out, both_nan) if equal_nan else out


@jit_like_jax("allclose", static_argnames=("equal_nan",))
def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: bool = False) -> Any:
    """Return whether every element of ``a`` is close to ``b`` (see ``isclose``).

    Args:
        a, b: arrays or scalars, broadcast together.
        rtol, atol: the relative and absolute tolerances of ``isclose``.
        equal_nan: whether NaNs in the same places count as close.

    Returns:
        A 0-d bool array (NumPy returns a Python bool; under ``jit`` a traced one).

    Example:
        >>> jnp.allclose(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0 + 1e-7]))
        Array(True, dtype=bool)
    """
    from ember.numpy._reductions import all as _all
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Test whether two arrays have the same shape and elements.

    Args:
        a1, a2: arrays or scalars.
        equal_nan: count NaNs in the same positions as equal.

    Returns:
        A 0-d bool array (unlike NumPy's Python bool, so that it can be traced): False when
        the shapes differ.

    Example:
        >>> jnp.array_equal(jnp.array([1.0, jnp.nan]), jnp.array([1.0, jnp.nan]), equal_nan=True)
        Array(True, dtype=bool)
        >>> jnp.array_equal(jnp.array([1, 2]), jnp.array([[1, 2]]))
        Array(False, dtype=bool)
    """
    from ember.numpy._reductions import all as _all
    a1, a2 = ensure_array(a1), ensure_array(a2)
    if get_aval(a1).shape != get_aval(a2).shape:
        return lax.convert_element_type(False, np.bool_)
    eq = equal(a1, a2)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(*promote_args("array_equal", isnan(a1),
                                                              isnan(a2))))
    return _all(eq)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Test whether two arrays broadcast together and are equal everywhere.

    Args:
        a1, a2: arrays or scalars.

    Returns:
        A 0-d bool array: False when the shapes do not broadcast.

    Example:
        >>> jnp.array_equiv(jnp.array([1, 2]), jnp.array([[1, 2], [1, 2]]))
        Array(True, dtype=bool)
    """
    from ember.numpy._reductions import all as _all
    a1, a2 = ensure_array(a1), ensure_array(a2)
    try:
        np.broadcast_shapes(get_aval(a1).shape, get_aval(a2).shape)
    except ValueError:
        return lax.convert_element_type(False, np.bool_)
    return _all(equal(a1, a2))



# sinc and ldexp have modules of their own (custom JVPs); exported from here.
from ember.numpy._frexp import ldexp  # noqa: E402
from ember.numpy._sinc import sinc  # noqa: E402
