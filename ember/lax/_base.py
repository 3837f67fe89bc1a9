"""Argument handling shared by the ember.lax functions.

lax functions take arrays, tracers, NumPy values and Python scalars. Unlike ember.numpy
they do not promote dtypes: operands must already agree, except that weakly typed values
(Python scalars, or results computed only from them) take the dtype of the strongly typed
operands, as in JAX.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ember.array import ArrayImpl
from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.jaxpr import remember_python_text
from ember.core.trace import Tracer, get_aval
from ember.prims.conversion import convert_element_type_p


def is_concrete_constant(x: Any) -> bool:
    """A NumPy value or Python scalar (not an ember.Array or tracer): converted eagerly."""
    return not isinstance(x, (Tracer, ArrayImpl))


# the largest finite value of each float dtype: a Python float within it converts without
# overflow (np.array(x, dtype) rounds once, as XLA's convert does)
_F64 = np.dtype(np.float64)
_FLOAT_MAX = {np.dtype(t): float(dtypes.finfo(t).max) for t in (np.float16, np.float32, np.float64)}
# the Python ints each type holds exactly (floats: up to 2^(mantissa bits + 1)), which
# np.array(x, dtype) converts without rounding, wrapping or an error
_EXACT_INTS = {np.dtype(t): (-(2 ** (dtypes.finfo(t).nmant + 1)), 2 ** (dtypes.finfo(t).nmant + 1))
               for t in (np.float16, np.float32, np.float64)}
_EXACT_INTS.update({np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
                    for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                              np.uint32, np.uint64)})


def _converts_exactly(x: Any, dtype: np.dtype) -> bool:
    """Whether np.array(x, dtype) gives XLA's conversion of the Python scalar x: a float
    within the type's finite range (rounded once; NaN too), an int the type holds exactly."""
    if type(x) is float:
        limit = _FLOAT_MAX.get(dtype)
        return limit is not None and not abs(x) > limit
    if type(x) is int:
        bounds = _EXACT_INTS.get(dtype)
        return bounds is not None and bounds[0] <= x <= bounds[1]
    return False


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast x to new_dtype (canonicalized) with XLA's conversion semantics.

    NumPy values and Python scalars are converted right away (no equation is staged, so a
    Python `2.0` under jit becomes the literal `2.0:f32[]`), as JAX does.
    """
    new_dtype = dtypes.canonicalize(new_dtype)
    if _converts_exactly(x, new_dtype):  # the common eager case (x * 2.0, x > 0), without
        value = np.array(x, dtype=new_dtype)  # the general path's checks and copies
        value.setflags(write=False)
        out = ArrayImpl(value, ShapedArray((), new_dtype, weak_type))
        if weak_type and type(x) is float and new_dtype == dtypes.canonicalize(_F64):
            remember_python_text(out, x)  # (its own aval: a jaxpr prints the float's text)
        return out
    if is_concrete_constant(x):
        from ember.hlo.evaluator.elementwise import convert_array
        if type(x) is int:
            # An int converts to the type named (2**40 to f32 is exact), not by way of the
            # default int (whose range get_aval checks); beyond 64 bits through a float
            # (float() raises OverflowError beyond float range, as in JAX).
            value = np.asarray(x) if -2 ** 63 <= x < 2 ** 64 else np.asarray(float(x))
        else:
            get_aval(x)  # rejects values that are not arrays or scalars
            value = np.asarray(x)
        out = convert_array(value, new_dtype) if value.dtype != new_dtype else value
        return ArrayImpl._from_rule(np.array(out, copy=True), ShapedArray(
            value.shape, new_dtype, weak_type))
    aval = get_aval(x)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    if dtypes.kind(aval.dtype) == "c" and dtypes.kind(new_dtype) != "c":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=2)
    if isinstance(x, ArrayImpl) and aval.shape == ():
        # A concrete scalar (jnp.asarray(2.0) inside a traced function) is converted now,
        # not staged: JAX folds a convert of a scalar constant, so `x * jnp.asarray(2.0)`
        # prints `mul x 2.0:f32[]` there too.
        from ember.hlo.evaluator.elementwise import convert_array
        value = np.asarray(x)
        out = convert_array(value, new_dtype) if value.dtype != new_dtype else value
        return ArrayImpl._from_rule(np.array(out, copy=True), ShapedArray(
            (), new_dtype, bool(weak_type)))
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


def to_common_dtype(*args: Any) -> list[Any]:
    """Give weakly typed operands the dtype of the strongly typed ones (if they agree)."""
    avals = [get_aval(a) for a in args]
    strong = {a.dtype for a in avals if not a.weak_type}
    if len(strong) == 1:
        target = strong.pop()
    elif not strong:
        kinds = {a.dtype for a in avals}
        if len(kinds) == 1:
            return [_weak_as_is(a, v) for a, v in zip(args, avals)]
        target, _ = dtypes.promote(*[(a.dtype, True) for a in avals])
        return [convert_element_type(a, target, True) if v.dtype != target else
                _weak_as_is(a, v) for a, v in zip(args, avals)]
    else:
        return [_weak_as_is(a, v) for a, v in zip(args, avals)]
    # A weakly typed tracer of the target dtype enters as it is (as in JAX: the result is
    # strong because one operand is), and so does a Python float of the target dtype (a
    # weak literal, printed as written: `mul a 0.2:f32[]`); other constants and dtypes are
    # converted.
    return [convert_element_type(a, target, type(a) is float and v.dtype == target)
            if v.weak_type and (v.dtype != target or is_concrete_constant(a)) else a
            for a, v in zip(args, avals)]


def _weak_as_is(x: Any, aval: ShapedArray) -> Any:
    if is_concrete_constant(x):
        return convert_element_type(x, aval.dtype, aval.weak_type)
    return x


def aval_of(x: Any) -> ShapedArray:
    return get_aval(x)


def canonical_axis(axis: int, ndim: int, name: str = "axis") -> int:
    if not -ndim <= axis < max(ndim, 1) and not (ndim == 0 and axis in (0, -1)):
        raise ValueError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0
