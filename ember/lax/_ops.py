"""The lax functions for elementwise primitives, reductions and shape primitives.

Each function binds one primitive after `to_common_dtype` (lax does not promote, except
for weakly typed operands). Functions that are compositions of primitives (square via
integer_pow, expand_dims via broadcast_in_dim, ...) are written here as plain functions.
"""

from __future__ import annotations

import operator
import textwrap
from collections.abc import Sequence
from typing import Any

from ember.core import dtypes
from ember.lax._base import aval_of, convert_element_type, to_common_dtype
from ember.prims import complex_parts as Cx
from ember.prims import conversion as C
from ember.prims import elementwise as E
from ember.prims import reductions as Rd
from ember.prims import shape_ops as S
from ember.prims.elementwise import RoundingMethod

# What each elementwise function computes, and (where it is not x's dtype) what it returns.
_SUMMARY = {
    "add": "Add element-wise: ``x + y``.",
    "sub": "Subtract element-wise: ``x - y``.",
    "mul": "Multiply element-wise: ``x * y``.",
    "div": "Divide element-wise: ``x / y`` (integer division rounds toward zero).",
    "rem": "Remainder element-wise: ``x - y * trunc(x / y)``, with the sign of ``x`` (C's "
           "``fmod``).",
    "max": "Maximum element-wise (a NaN in either operand gives NaN).",
    "min": "Minimum element-wise (a NaN in either operand gives NaN).",
    "atan2": "Arctangent of ``x / y`` element-wise, in the quadrant of the point ``(y, x)``.",
    "eq": "Compare element-wise: ``x == y``.",
    "ne": "Compare element-wise: ``x != y``.",
    "lt": "Compare element-wise: ``x < y``.",
    "le": "Compare element-wise: ``x <= y``.",
    "gt": "Compare element-wise: ``x > y``.",
    "ge": "Compare element-wise: ``x >= y``.",
    "and": "Bitwise AND element-wise (logical AND for bools).",
    "or": "Bitwise OR element-wise (logical OR for bools).",
    "xor": "Bitwise XOR element-wise (logical XOR for bools).",
    "not": "Bitwise NOT element-wise (logical NOT for bools).",
    "shift_left": "Shift the bits of ``x`` left by ``y`` places (integers).",
    "shift_right_logical": "Shift the bits of ``x`` right by ``y`` places, filling with "
                           "zeros (integers).",
    "shift_right_arithmetic": "Shift the bits of ``x`` right by ``y`` places, filling with "
                              "the sign bit (integers).",
    "neg": "Negate element-wise: ``-x``.",
    "abs": "Absolute value element-wise (the magnitude for complex ``x``).",
    "sign": "Sign element-wise: -1, 0 or 1 (NaN for NaN; ``x / abs(x)`` for complex ``x``).",
    "floor": "Round down to an integral value element-wise (floats).",
    "ceil": "Round up to an integral value element-wise (floats).",
    "is_finite": "Test element-wise whether ``x`` is finite (neither infinite nor NaN).",
    "real": "The real part of a complex array, element-wise.",
    "imag": "The imaginary part of a complex array, element-wise.",
    "complex": "Make a complex array ``x + 1j * y`` from its real and imaginary parts.",
    "exp": "Exponential element-wise: ``e ** x``.",
    "exp2": "Base-2 exponential element-wise: ``2 ** x``.",
    "log": "Natural logarithm element-wise.",
    "log1p": "``log(1 + x)`` element-wise, accurate for ``x`` near 0.",
    "expm1": "``exp(x) - 1`` element-wise, accurate for ``x`` near 0.",
    "sqrt": "Square root element-wise.",
    "rsqrt": "Reciprocal square root element-wise: ``1 / sqrt(x)``.",
    "cbrt": "Cube root element-wise (real, also for negative ``x``).",
    "sin": "Sine element-wise (radians).",
    "cos": "Cosine element-wise (radians).",
    "tan": "Tangent element-wise (radians).",
    "asin": "Arcsine element-wise.",
    "acos": "Arccosine element-wise.",
    "atan": "Arctangent element-wise.",
    "sinh": "Hyperbolic sine element-wise.",
    "cosh": "Hyperbolic cosine element-wise.",
    "tanh": "Hyperbolic tangent element-wise.",
    "asinh": "Inverse hyperbolic sine element-wise.",
    "acosh": "Inverse hyperbolic cosine element-wise.",
    "atanh": "Inverse hyperbolic tangent element-wise.",
    "logistic": "Logistic sigmoid element-wise: ``1 / (1 + exp(-x))``.",
    "erf": "Error function element-wise.",
    "erfc": "Complementary error function element-wise: ``1 - erf(x)``, accurate for large "
            "``x``.",
    "erf_inv": "Inverse error function element-wise (on (-1, 1)).",
    "population_count": "Count the 1 bits of each element (integers).",
    "clz": "Count the leading zero bits of each element (integers).",
    "square": "Square element-wise: ``x * x``.",
}
_RETURNS = {
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "is_finite"), "A bool array"),
    **dict.fromkeys(("real", "imag"), "A real array of the matching precision"),
    "complex": "A complex array (complex64 for float32 parts, complex128 for float64)",
    "abs": "An array of x's dtype (the matching real dtype for complex x)",
}
_ARGS_UNARY = "x: an array or scalar."
_ARGS_BINARY = ("x, y: arrays or scalars of one dtype and one shape (a scalar broadcasts).\n"
                "        lax does not promote, except that a Python scalar or other weakly\n"
                "        typed value takes the other operand's dtype.")


def _doc(prim: Any, args: str) -> str:
    """The docstring of the lax function binding the elementwise `prim`."""
    name = prim.name
    returns = _RETURNS.get(name, "An array of the operands' dtype")
    ret = textwrap.fill(f"{returns}, shaped like the operands (one ``{name}`` equation when "
                        "traced).", 88, initial_indent="    ", subsequent_indent="    ")
    return f"{_SUMMARY[name]}\n\nArgs:\n    {args}\n\nReturns:\n{ret}\n"


def _unary(prim: Any) -> Any:
    def fn(x: Any) -> Any:
        return prim.bind(*to_common_dtype(x))
    fn.__name__ = prim.name
    fn.__doc__ = _doc(prim, _ARGS_UNARY)
    return fn


def _binary(prim: Any) -> Any:
    def fn(x: Any, y: Any) -> Any:
        return prim.bind(*to_common_dtype(x, y))
    fn.__name__ = prim.name
    fn.__doc__ = _doc(prim, _ARGS_BINARY)
    return fn


add = _binary(E.add_p)
sub = _binary(E.sub_p)
mul = _binary(E.mul_p)
div = _binary(E.div_p)
rem = _binary(E.rem_p)
max = _binary(E.max_p)  # noqa: A001
min = _binary(E.min_p)  # noqa: A001
atan2 = _binary(E.atan2_p)
eq = _binary(E.eq_p)
ne = _binary(E.ne_p)
lt = _binary(E.lt_p)
le = _binary(E.le_p)
gt = _binary(E.gt_p)
ge = _binary(E.ge_p)
bitwise_and = _binary(E.and_p)
bitwise_or = _binary(E.or_p)
bitwise_xor = _binary(E.xor_p)
shift_left = _binary(E.shift_left_p)
shift_right_logical = _binary(E.shift_right_logical_p)
shift_right_arithmetic = _binary(E.shift_right_arithmetic_p)

neg = _unary(E.neg_p)
abs = _unary(E.abs_p)  # noqa: A001
sign = _unary(E.sign_p)
floor = _unary(E.floor_p)
ceil = _unary(E.ceil_p)
is_finite = _unary(E.is_finite_p)
real = _unary(Cx.real_p)
imag = _unary(Cx.imag_p)
complex = _binary(Cx.complex_p)  # noqa: A001


def conj(x: Any) -> Any:
    """The complex conjugate; a real x gives a complex value (JAX's lax.conj)."""
    (x,) = to_common_dtype(x)
    return Cx.conj_p.bind(x, input_dtype=aval_of(x).dtype)

exp = _unary(E.exp_p)
exp2 = _unary(E.exp2_p)
log = _unary(E.log_p)
log1p = _unary(E.log1p_p)
expm1 = _unary(E.expm1_p)
sqrt = _unary(E.sqrt_p)
rsqrt = _unary(E.rsqrt_p)
cbrt = _unary(E.cbrt_p)
sin = _unary(E.sin_p)
cos = _unary(E.cos_p)
tan = _unary(E.tan_p)
asin = _unary(E.asin_p)
acos = _unary(E.acos_p)
atan = _unary(E.atan_p)
sinh = _unary(E.sinh_p)
cosh = _unary(E.cosh_p)
tanh = _unary(E.tanh_p)
asinh = _unary(E.asinh_p)
acosh = _unary(E.acosh_p)
atanh = _unary(E.atanh_p)
logistic = _unary(E.logistic_p)
erf = _unary(E.erf_p)
erfc = _unary(E.erfc_p)
erf_inv = _unary(E.erf_inv_p)
bitwise_not = _unary(E.not_p)
population_count = _unary(E.population_count_p)
clz = _unary(E.clz_p)
square = _unary(E.square_p)

# JAX's names for the logical ops are the bitwise ones on bool.
bitwise_and.__name__ = "and"
bitwise_or.__name__ = "or"
bitwise_xor.__name__ = "xor"
bitwise_not.__name__ = "not"


def pow(x: Any, y: Any) -> Any:  # noqa: A001
    """x ** y for float x and float or integer y."""
    xa, ya = aval_of(x), aval_of(y)
    if dtypes.kind(ya.dtype) in "iu" and dtypes.kind(xa.dtype) == "f":
        return E.pow_p.bind(*to_common_dtype(x), y)
    return E.pow_p.bind(*to_common_dtype(x, y))


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a static Python integer y."""
    return E.integer_pow_p.bind(*to_common_dtype(x), y=int(y))


def round(x: Any, rounding_method: int = RoundingMethod.AWAY_FROM_ZERO) -> Any:  # noqa: A001
    """Round to integral values; half away from zero unless TO_NEAREST_EVEN."""
    return E.round_p.bind(*to_common_dtype(x), rounding_method=RoundingMethod(rounding_method))


def select_n(which: Any, *cases: Any) -> Any:
    """cases[which]: `which` is bool (2 cases) or int32, scalar or of the cases' shape."""
    return C.select_n_p.bind(which, *to_common_dtype(*cases))


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """pred ? on_true : on_false (select_n with the cases swapped)."""
    return select_n(pred, on_false, on_true)


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002
    """min(max(x, min), max), with min and max scalars or of x's shape."""
    return C.clamp_p.bind(*to_common_dtype(min, x, max))


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of `x` as `new_dtype` (as lax.bitcast_convert_type); a narrower
    type adds a trailing dimension, a wider one consumes it."""
    return C.bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonicalize(new_dtype))


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round floats to the precision and range of a narrower format, keeping the dtype.

    Args:
        operand: a float array or scalar.
        exponent_bits: the format's exponent width (at least 1).
        mantissa_bits: the format's mantissa width (at least 0).

    Returns:
        ``operand`` with each value as that format would hold it: the mantissa rounded to
        nearest even, values beyond its range infinite, values below its smallest normal
        zero, NaN kept (XLA's ReducePrecision).

    Example:
        >>> lax.reduce_precision(jnp.array([1.0, 3.14159, 70000.0]), 5, 10)  # float16's
        Array([1.      , 3.140625,      inf], dtype=float32)
    """
    from ember.prims.reduce_precision import check_bits, reduce_precision_p
    exponent_bits, mantissa_bits = check_bits(exponent_bits, mantissa_bits)
    return reduce_precision_p.bind(to_common_dtype(operand)[0], exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


def stop_gradient(x: Any) -> Any:
    """Stop gradients: return ``x`` unchanged, as a constant for differentiation.

    Args:
        x: an array or a pytree of arrays.

    Returns:
        ``x``'s values; ``grad``, ``jvp`` and ``vjp`` see them as constants (their
        derivative is zero).

    Example:
        >>> float(ember.grad(lambda x: x * lax.stop_gradient(x))(3.0))
        3.0
    """
    from ember.tree_util import tree_map
    return tree_map(lambda v: C.stop_gradient_p.bind(v), x)


def optimization_barrier(operand: Any) -> Any:
    """Return `operand` (a pytree of arrays) unchanged, as values the compiler's
    simplifications may not look through (as lax.optimization_barrier): computations on
    the results are not merged with equal computations on the inputs."""
    from ember.prims.barrier import optimization_barrier_p
    from ember.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     sharding: Any = None) -> Any:
    """Broadcast `x` to `shape`, operand dimension i becoming result dimension
    `broadcast_dimensions[i]` (as lax.broadcast_in_dim)."""
    shape = tuple(int(d) for d in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    aval = aval_of(x)
    if aval.shape == shape and dims == tuple(range(len(shape))):
        return x
    return S.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims, sharding=None)


def broadcast(x: Any, sizes: Sequence[int]) -> Any:
    """Add leading dimensions `sizes` to x."""
    aval = aval_of(x)
    sizes = tuple(sizes)
    return broadcast_in_dim(x, sizes + aval.shape,
                            tuple(range(len(sizes), len(sizes) + aval.ndim)))


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """Add leading size-1 dimensions to `x` until it has `rank` dimensions (as
    lax.broadcast_to_rank)."""
    aval = aval_of(x)
    if aval.ndim >= rank:
        return x
    return broadcast(x, (1,) * (rank - aval.ndim))


def reshape(x: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Any:
    """Reshape `x` to `new_sizes` in row-major order, after transposing it by `dimensions`
    when given (as lax.reshape: one `reshape[dimensions=...]` equation, the permutation
    kept as its parameter unless it is the identity)."""
    new_sizes = tuple(int(d) for d in new_sizes)
    aval = aval_of(x)
    dims = None
    if dimensions is not None:
        dims = tuple(operator.index(d) for d in dimensions)
        if sorted(dims) != list(range(aval.ndim)):
            raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, "
                            f"got dimensions {dims} for shape {aval.shape}.")
        if dims == tuple(range(aval.ndim)):
            dims = None
    if dims is None and aval.shape == new_sizes:
        return x
    return S.reshape_p.bind(x, new_sizes=new_sizes, dimensions=dims, sharding=None)


def squeeze(x: Any, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 `dimensions` of `x` (as lax.squeeze)."""
    ndim = aval_of(x).ndim
    dims = tuple(sorted(d % ndim for d in dimensions)) if ndim else ()
    if not dims:
        return x
    return S.squeeze_p.bind(x, dimensions=dims)


def expand_dims(x: Any, dimensions: Sequence[int]) -> Any:
    """Insert size-1 dimensions at `dimensions` (positions in the result)."""
    aval = aval_of(x)
    out_ndim = aval.ndim + len(dimensions)
    dims = sorted(d % out_ndim for d in dimensions)
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(out_ndim) if i not in dims]
    return broadcast_in_dim(x, tuple(shape), tuple(kept))


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    """Permute the dimensions of `x`: result dimension i is operand dimension
    `permutation[i]` (as lax.transpose)."""
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))):
        return x
    return S.transpose_p.bind(x, permutation=perm)


def rev(x: Any, dimensions: Sequence[int]) -> Any:
    """Reverse the order of elements of `x` along `dimensions` (as lax.rev)."""
    return S.rev_p.bind(x, dimensions=tuple(int(d) for d in dimensions))


def iota(dtype: Any, size: int) -> Any:
    """Create the 1-d array 0, 1, ..., size - 1 of `dtype` (as lax.iota)."""
    return broadcasted_iota(dtype, (int(size),), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, sharding: Any = None
                     ) -> Any:
    """Create an array of `shape` whose values count 0, 1, ... along `dimension` (as
    lax.broadcasted_iota)."""
    return S.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=tuple(int(s) for s in shape),
                         dimension=int(dimension), sharding=None)


def _axes(axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(a) for a in axes)


def reduce_sum(x: Any, axes: Sequence[int]) -> Any:
    """Compute the sum of `x` over `axes` (as lax.reduce_sum; no type promotion)."""
    return Rd.reduce_sum_p.bind(x, axes=_axes(axes), out_sharding=None)


def reduce_prod(x: Any, axes: Sequence[int]) -> Any:
    """Compute the product of `x` over `axes` (as lax.reduce_prod)."""
    return Rd.reduce_prod_p.bind(x, axes=_axes(axes))


def reduce_max(x: Any, axes: Sequence[int]) -> Any:
    """Compute the maximum of `x` over `axes` (as lax.reduce_max)."""
    return Rd.reduce_max_p.bind(x, axes=_axes(axes))


def reduce_min(x: Any, axes: Sequence[int]) -> Any:
    """Compute the minimum of `x` over `axes` (as lax.reduce_min)."""
    return Rd.reduce_min_p.bind(x, axes=_axes(axes))


def reduce_and(x: Any, axes: Sequence[int]) -> Any:
    """Compute the logical or bit-wise AND of `x` over `axes` (as lax.reduce_and)."""
    return Rd.reduce_and_p.bind(x, axes=_axes(axes))


def reduce_or(x: Any, axes: Sequence[int]) -> Any:
    """Compute the logical or bit-wise OR of `x` over `axes` (as lax.reduce_or)."""
    return Rd.reduce_or_p.bind(x, axes=_axes(axes))


def reduce_xor(x: Any, axes: Sequence[int]) -> Any:
    """Compute the logical or bit-wise XOR of `x` over `axes` (as lax.reduce_xor)."""
    return Rd.reduce_xor_p.bind(x, axes=_axes(axes))


def argmax(x: Any, axis: int, index_dtype: Any) -> Any:
    """Compute the index of the maximum of `x` along `axis`, as `index_dtype` (as
    lax.argmax; the first one on ties)."""
    return Rd.argmax_p.bind(x, axes=(int(axis),), index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x: Any, axis: int, index_dtype: Any) -> Any:
    """Compute the index of the minimum of `x` along `axis`, as `index_dtype` (as
    lax.argmin; the first one on ties)."""
    return Rd.argmin_p.bind(x, axes=(int(axis),), index_dtype=dtypes.canonicalize(index_dtype))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of `shape` filled with a scalar: a broadcast of the converted scalar."""
    shape = tuple(int(s) for s in shape)
    aval = aval_of(fill_value)
    if aval.shape != ():
        raise TypeError(f"full must be called with scalar fill_value, got shape {aval.shape}")
    dt = dtypes.canonicalize(dtype) if dtype is not None else aval.dtype
    weak = dtype is None and aval.weak_type
    value = convert_element_type(fill_value, dt, weak)
    return broadcast_in_dim(value, shape, ())


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Create an array filled with `fill_value`, with the shape and dtype of `x` unless
    `shape` / `dtype` are given (as lax.full_like)."""
    aval = aval_of(x)
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype)


def zeros_like_array(x: Any) -> Any:
    """Create an array of zeros with the shape and dtype of `x` (as lax.zeros_like_array)."""
    return full_like(x, 0)


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "Any", "Sequence", "np", "annotations", "dtypes", "aval_of", "C", "Cx", "E", "Rd", "S")]
