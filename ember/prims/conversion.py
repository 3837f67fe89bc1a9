"""Type conversions and value selection: convert_element_type, bitcast_convert_type,
select_n, clamp, stop_gradient.

convert_element_type follows XLA: float -> int saturates and NaN -> 0, anything -> bool is
x != 0. Its params are `new_dtype` and `weak_type` (JAX also carries a sharding, which it
does not print). select_n(which, *cases) picks cases[which]: `which` is bool (two cases) or
int32, scalar or of the cases' shape; out-of-range integer `which` takes the last case.
"""

from __future__ import annotations

import numpy as np

from ember.backends.interpreter import elementwise as ew
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.prims import _rules as R

convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.hlo_opcode = "convert"  # type: ignore[attr-defined]


@convert_element_type_p.def_abstract_eval
def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


@convert_element_type_p.def_impl
def _convert_impl(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool) -> np.ndarray:
    return ew.convert_array(x, new_dtype)


bitcast_convert_type_p = Primitive("bitcast_convert_type")
bitcast_convert_type_p.hlo_opcode = "bitcast-convert"  # type: ignore[attr-defined]


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
    if old == new:
        return ShapedArray(x.shape, new_dtype)
    if old > new:
        if old % new:
            raise TypeError(f"bitcast_convert_type: {x.dtype} to {new_dtype} is not a whole ratio")
        return ShapedArray((*x.shape, old // new), new_dtype)
    ratio = new // old
    if not x.shape or x.shape[-1] != ratio:
        raise TypeError(f"bitcast_convert_type from {x.dtype} to {new_dtype} needs a last "
                        f"dimension of {ratio}, got shape {x.shape}")
    return ShapedArray(x.shape[:-1], new_dtype)


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    new_dtype = np.dtype(new_dtype)
    x = np.ascontiguousarray(x)
    if x.dtype.itemsize >= new_dtype.itemsize:
        out = x.view(new_dtype)
        if x.dtype.itemsize > new_dtype.itemsize:
            out = out.reshape(*x.shape, x.dtype.itemsize // new_dtype.itemsize)
        return out
    return x.view(new_dtype).reshape(x.shape[:-1])


select_n_p = Primitive("select_n")


@select_n_p.def_abstract_eval
def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype.kind == "b":
        if len(cases) > 2:
            raise TypeError("select_n with a boolean predicate takes at most two cases")
    elif which.dtype != np.dtype(np.int32):
        raise TypeError(f"select_n `which` must be bool or int32, got {which.dtype.name}")
    R.check_same_dtypes("select_n", *cases)
    shapes = {c.shape for c in cases}
    if len(shapes) > 1:
        raise TypeError("select_n cases must have the same shapes, got "
                        + ", ".join(str(c.shape) for c in cases) + ".")
    if which.shape not in ((), cases[0].shape):
        raise TypeError(f"select_n `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    return ShapedArray(cases[0].shape, cases[0].dtype, R.all_weak(*cases))


@select_n_p.def_impl
def _select_n_impl(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return ew.select(which, cases[1], cases[0])
    idx = np.clip(which.astype(np.int64), 0, len(cases) - 1)
    out = np.choose(np.broadcast_to(idx, cases[0].shape), cases)
    return np.asarray(out, dtype=cases[0].dtype)


clamp_p = Primitive("clamp")
clamp_p.hlo_opcode = "clamp"  # type: ignore[attr-defined]


@clamp_p.def_abstract_eval
def _clamp_abstract(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    R.check_same_dtypes("clamp", lo, x, hi)
    for name, b in (("min", lo), ("max", hi)):
        if b.shape not in ((), x.shape):
            raise TypeError(f"clamp requires {name} to be a scalar or have the operand's shape "
                            f"{x.shape}, got {b.shape}.")
    return x


@clamp_p.def_impl
def _clamp_impl(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return ew.clamp(np.broadcast_to(lo, x.shape), x, np.broadcast_to(hi, x.shape))


stop_gradient_p = Primitive("stop_gradient")


@stop_gradient_p.def_abstract_eval
def _stop_gradient_abstract(x: ShapedArray) -> ShapedArray:
    return x


@stop_gradient_p.def_impl
def _stop_gradient_impl(x: np.ndarray) -> np.ndarray:
    return x
