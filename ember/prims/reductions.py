"""Reductions over a set of axes: reduce_sum, reduce_prod, reduce_max, reduce_min,
reduce_and, reduce_or, reduce_xor, argmax, argmin.

Params as JAX 0.10.2 prints them (lax binds reduce_sum with out_sharding=None and the
others without it): `reduce_sum[axes=(1,) out_sharding=None]`,
`reduce_max[axes=(1,)]`, `argmax[axes=(0,) index_dtype=int32]`. Integer sums wrap; max and
min propagate NaN and order -0.0 < +0.0; a sum adds its +0.0 init (sum([-0.0]) = +0.0, as
XLA's reduce); argmax/argmin return the first maximal (or first NaN) index, -0.0 and +0.0
tying.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.evaluator.reductions import plain_reduce
from ember.prims import _ad, _batching, _eager_native
from ember.prims import _lower as L
from ember.prims import _rules as R


def _reduced_shape(name: str, x: ShapedArray, axes: tuple[int, ...]) -> tuple[int, ...]:
    if any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                         f"{x.str_short()}.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    return tuple(s for i, s in enumerate(x.shape) if i not in axes)


def _check_dtype(name: str, x: ShapedArray, kinds: str) -> None:
    """JAX's reduction dtype rules: sum and prod take numbers, the logical reductions
    bool or integers, max and min anything."""
    if dtypes.kind(x.dtype) in kinds:
        return
    if kinds == R.INT_OR_BOOL:
        raise TypeError(f"logical reduction requires operand dtype bool or int, got "
                        f"{x.dtype.name}.")
    raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are "
                    "subtypes of number.")


def _define(name: str, kinds: str, rule: Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
            ) -> Primitive:
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axes: tuple[int, ...], out_sharding: None = None
                  ) -> ShapedArray:
        _check_dtype(name, x, kinds)
        return ShapedArray(_reduced_shape(name, x, axes), x.dtype, x.weak_type)

    @prim.def_impl
    def _impl(x: np.ndarray, *, axes: tuple[int, ...], out_sharding: None = None) -> np.ndarray:
        out = _eager_native.compiled(prim, [x], {"axes": axes, "out_sharding": out_sharding})
        if out is not None:  # (float sums and products: jit's bits, ember/eager_native.py)
            return out
        with np.errstate(all="ignore"):
            return np.asarray(rule(x, tuple(axes))).astype(x.dtype, copy=False)

    return prim


# Eager rules are the HLO reduce their lowering emits, evaluated as the interpreter does
# (plain_reduce): the init value takes part (sum([-0.0]) = 0.0 + -0.0 = +0.0), integers
# wrap, and float max/min are IEEE's (-0.0 < +0.0, NaN propagates).


def _sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return plain_reduce("add", x, axes, 0)


def _prod(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return plain_reduce("multiply", x, axes, 1)


def _max(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if dtypes.kind(x.dtype) == "c":  # (no HLO init for complex: NumPy's lexicographic order)
        return np.max(x, axis=axes)
    return plain_reduce("maximum", x, axes, _lowest(x.dtype))


def _min(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if dtypes.kind(x.dtype) == "c":
        return np.min(x, axis=axes)
    return plain_reduce("minimum", x, axes, _highest(x.dtype))


def _lowest(dtype: np.dtype) -> object:
    if dtypes.kind(dtype) == "c":  # the least in the lexicographic order max and min use
        return complex(-np.inf, -np.inf)
    if dtypes.kind(dtype) == "f":
        return -np.inf
    if dtypes.kind(dtype) == "b":
        return False
    return np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> object:
    if dtypes.kind(dtype) == "c":
        return complex(np.inf, np.inf)
    if dtypes.kind(dtype) == "f":
        return np.inf
    if dtypes.kind(dtype) == "b":
        return True
    return np.iinfo(dtype).max


def _bitwise(ufunc: np.ufunc, identity: Callable[[np.dtype], np.ndarray]
             ) -> Callable[[np.ndarray, tuple[int, ...]], np.ndarray]:
    """A bitwise reduction that gives `identity` over empty axes: all bits set for and
    (-1 for signed types, not INT_MAX; True for bool), 0 for or and xor."""
    def rule(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        if x.size:
            return ufunc.reduce(x, axis=axes)
        return np.full([s for i, s in enumerate(x.shape) if i not in axes], identity(x.dtype),
                       x.dtype)
    return rule


_and = _bitwise(np.bitwise_and, lambda dt: np.invert(np.zeros((), dt)))
_or = _bitwise(np.bitwise_or, lambda dt: np.zeros((), dt))
_xor = _bitwise(np.bitwise_xor, lambda dt: np.zeros((), dt))


reduce_sum_p = _define("reduce_sum", R.NUMBER, _sum)
reduce_prod_p = _define("reduce_prod", R.NUMBER, _prod)
reduce_max_p = _define("reduce_max", R.ANY, _max)
reduce_min_p = _define("reduce_min", R.ANY, _min)
reduce_and_p = _define("reduce_and", R.INT_OR_BOOL, _and)
reduce_or_p = _define("reduce_or", R.INT_OR_BOOL, _or)
reduce_xor_p = _define("reduce_xor", R.INT_OR_BOOL, _xor)

# Lowering: an HLO reduce with the scalar combiner and the reduction's identity as init.
reduce_sum_p.def_lowering(L.reducer("add", lambda dt: 0))
reduce_prod_p.def_lowering(L.reducer("multiply", lambda dt: 1))
reduce_max_p.def_lowering(L.reducer("maximum", _lowest))
reduce_min_p.def_lowering(L.reducer("minimum", _highest))
reduce_and_p.def_lowering(L.reducer("and", lambda dt: np.invert(np.zeros((), dt))))
reduce_or_p.def_lowering(L.reducer("or", lambda dt: 0))
reduce_xor_p.def_lowering(L.reducer("xor", lambda dt: 0))


def _arg_define(name: str, pick: Callable[[np.ndarray, int], np.ndarray]) -> Primitive:
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, *, axes: tuple[int, ...], index_dtype: np.dtype
                  ) -> ShapedArray:
        if len(axes) != 1:
            raise ValueError(f"{name} takes exactly one axis, got {axes}")
        axis = axes[0]
        if not 0 <= axis < x.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] < 1:
            raise ValueError("argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={x.shape} axis={axis}")
        if dtypes.kind(np.dtype(index_dtype)) not in "iu":
            raise TypeError(f"index_dtype must be an integer type, but got "
                            f"{np.dtype(index_dtype).name}")
        return ShapedArray(_reduced_shape(name, x, axes), index_dtype, False)

    @prim.def_impl
    def _impl(x: np.ndarray, *, axes: tuple[int, ...], index_dtype: np.dtype) -> np.ndarray:
        return pick(x, axes[0]).astype(index_dtype)

    return prim


def _argmax(x: np.ndarray, axis: int) -> np.ndarray:
    # np.argmax already returns the first NaN (NaN compares as the maximum in NumPy).
    return np.argmax(x, axis=axis)


def _argmin(x: np.ndarray, axis: int) -> np.ndarray:
    return np.argmin(x, axis=axis)


argmax_p = _arg_define("argmax", _argmax)
argmin_p = _arg_define("argmin", _argmin)
argmax_p.def_lowering(L.arg_reducer("GT"))
argmin_p.def_lowering(L.arg_reducer("LT"))


# -- autodiff rules ------------------------------------------------------------------------------

def _kept_dims(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in range(ndim) if d not in axes)


def _reduce_sum_transpose(ct: Any, x: Any, *, axes: tuple[int, ...], out_sharding: None = None
                          ) -> list:
    # sum is linear; its transpose copies each output cotangent to every summed element.
    # (The kept dims are NumPy integers, as JAX's rule computes them: its text prints
    # broadcast_dimensions=(np.int64(0),).)
    kept = tuple(np.int64(d) for d in _kept_dims(x.aval.ndim, axes))
    return [_ad.broadcast_in_dim(ct, x.aval.shape, kept)]


ad.deflinear(reduce_sum_p)
reduce_sum_p.def_transpose(_reduce_sum_transpose)


def _extremum_jvp(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    """JAX's rule for max and min: the tangent is the mean of the tangents of the elements
    equal to the result, t_out = sum(t * [x == ans]) / sum([x == ans]) (ties share)."""
    def rule(primals: list, tangents: list, *, axes: tuple[int, ...],
             out_sharding: None = None) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        aval = get_aval(x)
        if not ad.is_differentiable(aval):
            return ans, ad.Zero(get_aval(ans))
        # ans with its reduced axes kept as size 1 (JAX's reshape), compared with x by
        # size-1 broadcasting
        where = _ad.reshape(ans, tuple(1 if d in axes else n for d, n in enumerate(aval.shape)))
        mask = _ad.convert(_ad.compare("eq", x, where), aval.dtype)
        counts = _ad.reduce_sum(mask, axes)
        return ans, _ad.div(_ad.reduce_sum(_ad.mul(t, mask), axes), counts)
    return rule


reduce_max_p.def_jvp(_extremum_jvp(reduce_max_p))
reduce_min_p.def_jvp(_extremum_jvp(reduce_min_p))
# Logical reductions and index results have no derivative.
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p, argmax_p, argmin_p):
    ad.defjvp_zero(_p)


def _reduce_prod_jvp(primals: list, tangents: list, *, axes: tuple[int, ...],
                     out_sharding: None = None) -> tuple[Any, Any]:
    """d prod(x) = sum_j t_j * prod_{k != j} x_k, with the product of the others taken as
    (product of the elements before j) * (product of the elements after j): two exclusive
    cumulative products, no division, so it is exact with any number of zeros (a single zero
    gives the product of the rest at its place and 0 elsewhere; no NaN).
    The reduced axes are moved last and flattened into one line of n elements."""
    from ember.prims.cumulative import cumprod_p
    from ember.prims.slicing import pad_p
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    aval = get_aval(x)
    if isinstance(t, ad.Zero) or not ad.is_differentiable(aval):
        return ans, ad.Zero(get_aval(ans))
    kept = _kept_dims(aval.ndim, axes)
    kept_shape = tuple(aval.shape[d] for d in kept)
    n = int(np.prod([aval.shape[d] for d in axes], dtype=np.int64))
    line = kept_shape + (n,)
    xs = _ad.reshape(_ad.transpose(x, kept + tuple(axes)), line)
    ts = _ad.reshape(_ad.transpose(t, kept + tuple(axes)), line)
    last = len(kept)
    if n == 0:
        return ans, _ad.zeros(get_aval(ans))

    def exclusive(reverse: bool) -> Any:
        # prod of x_k for k < j (or k > j when reverse): shift x by one, 1 moves in.
        config = [(0, 0, 0)] * len(line)
        config[last] = (-1, 1, 0) if reverse else (1, -1, 0)
        shifted = pad_p.bind(xs, _ad.const(1, xs), padding_config=tuple(config))
        return cumprod_p.bind(shifted, axis=last, reverse=reverse)

    others = _ad.mul(exclusive(False), exclusive(True))
    return ans, _ad.reduce_sum(_ad.mul(ts, others), (last,))


reduce_prod_p.def_jvp(_reduce_prod_jvp)


# -- batching rules ------------------------------------------------------------------------------
# A reduction works on each example alone: reduce the per-example axes, shifted past the
# batch axis, which stays (one place lower per reduced axis before it).

def _reduce_batch(prim: Primitive) -> Callable[..., tuple[Any, int]]:
    def rule(axis: AxisData, args: list, dims: list, *, axes: tuple[int, ...],
             **params: Any) -> tuple[Any, int]:
        (x,), (b,) = args, dims
        # (NumPy integers, as JAX's np.where makes them: a jaxpr prints them so)
        shifted = tuple(np.where(np.less(axes, b), axes, np.add(axes, 1))) if axes else ()
        return prim.bind(x, axes=shifted, **params), _batching.bdim_after_removing(b, shifted)
    return rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
           reduce_xor_p, argmax_p, argmin_p):
    _p.def_batch(_reduce_batch(_p))
