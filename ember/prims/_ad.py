"""The array operations the autodiff and batching rules of prims/*.py are written with.

Input: tracers, ember.Arrays or NumPy values of one dtype (a Python number is made a 0-d
array of the other operand's dtype by `const`). Output: the result of binding the
primitive, so a rule's arithmetic is traced like any other code (staged under jit,
linear-staged under linearize, differentiated again under an outer JVP).
Invariants: these bind primitives directly (prims cannot import ember.lax, which is built
on them); every primitive module imports this one, so its primitives are imported at first
use, not at module level. `broadcast_to` and `unbroadcast` are the two halves of Ember's
elementwise broadcasting (rank-0 operands, and size-1 dimensions of equal-rank operands):
the JVP of an elementwise op stretches an operand's tangent to the output's shape, and its
transpose sums the cotangent back to the operand's shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.trace import get_aval


def const(value: float, like: Any) -> np.ndarray:
    """`value` as a 0-d array of `like`'s dtype (strongly typed: it broadcasts anywhere)."""
    return np.array(value, dtype=get_aval(like).dtype)


def add(x: Any, y: Any) -> Any:
    from ember.prims.elementwise import add_p
    return add_p.bind(x, y)


def add_any(x: Any, y: Any) -> Any:
    """x + y for two tangents or cotangents of one type (autodiff's sum: JAX's add_any)."""
    from ember.prims.add_any import add_any_p
    return add_any_p.bind(x, y)


def sub(x: Any, y: Any) -> Any:
    from ember.prims.elementwise import sub_p
    return sub_p.bind(x, y)


def mul(x: Any, y: Any) -> Any:
    from ember.prims.elementwise import mul_p
    return mul_p.bind(x, y)


def div(x: Any, y: Any) -> Any:
    from ember.prims.elementwise import div_p
    return div_p.bind(x, y)


def neg(x: Any) -> Any:
    from ember.prims.elementwise import neg_p
    return neg_p.bind(x)


def unary(name: str, x: Any) -> Any:
    """Bind the elementwise primitive `<name>_p` (exp, log, sqrt, ...) on x."""
    from ember.prims import elementwise
    return getattr(elementwise, f"{name}_p").bind(x)


def compare(direction: str, x: Any, y: Any) -> Any:
    from ember.prims import elementwise
    return getattr(elementwise, f"{direction}_p").bind(x, y)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    from ember.prims.conversion import select_n_p
    return select_n_p.bind(pred, on_false, on_true)


def convert(x: Any, dtype: np.dtype) -> Any:
    from ember.prims.conversion import convert_element_type_p
    if get_aval(x).dtype == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=False)


def literal_value(x: Any) -> np.ndarray | None:
    """x as a 0-d array when it is a Python or NumPy scalar (a constant the rule sees as a
    value, as JAX's rules do: converting one folds into a literal rather than staging a
    conversion), else None (tracers and arrays, whose conversions JAX stages)."""
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return np.asarray(x)
    return None


def reduce_sum(x: Any, axes: tuple[int, ...]) -> Any:
    from ember.prims.reductions import reduce_sum_p
    return reduce_sum_p.bind(x, axes=tuple(axes), out_sharding=None) if axes else x


def reshape(x: Any, shape: tuple[int, ...]) -> Any:
    from ember.prims.shape_ops import reshape_p
    if get_aval(x).shape == tuple(shape):
        return x
    return reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None, sharding=None)


def broadcast_in_dim(x: Any, shape: tuple[int, ...], dims: tuple[int, ...]) -> Any:
    from ember.prims.shape_ops import broadcast_in_dim_p
    if shape == () and get_aval(x).shape == ():
        return x  # rank 0 to rank 0 is x itself (JAX's lax.broadcast_in_dim stages none)
    return broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=tuple(dims),
                                   sharding=None)


def transpose(x: Any, permutation: tuple[int, ...]) -> Any:
    from ember.prims.shape_ops import transpose_p
    if tuple(permutation) == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=tuple(permutation))


def zeros(aval: ShapedArray) -> Any:
    """An array of zeros of `aval` (one broadcast of a scalar: no large constant; a rank-0
    zero is the scalar itself, a literal in a jaxpr, as JAX's zeros_like_aval gives)."""
    if aval.shape == ():
        return np.zeros((), aval.dtype)
    return broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def full_like(x: Any, value: float) -> Any:
    aval = get_aval(x)
    return broadcast_in_dim(np.array(value, aval.dtype), aval.shape, ())


def broadcast_to(x: Any, aval: ShapedArray) -> Any:
    """x stretched to `aval`'s shape as an elementwise operand is (rank 0 to anything,
    size-1 dimensions to the output's size)."""
    shape = get_aval(x).shape
    if shape == aval.shape:
        return x
    dims = () if shape == () else tuple(range(len(shape)))
    return broadcast_in_dim(x, aval.shape, dims)


def unbroadcast(ct: Any, aval: ShapedArray) -> Any:
    """The transpose of `broadcast_to`: ct summed over the dimensions `aval` stretched."""
    shape = get_aval(ct).shape
    if shape == aval.shape:
        return ct
    if aval.shape == ():
        return reduce_sum(ct, tuple(range(len(shape))))
    axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, shape)) if a == 1 and c != 1)
    return reshape(reduce_sum(ct, axes), aval.shape)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """x with axis `src` moved to position `dst`, the others in order (one transpose)."""
    ndim = len(get_aval(x).shape)
    perm = [d for d in range(ndim) if d != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def broadcast_axis(x: Any, size: int, axis: int) -> Any:
    """x with a new axis of `size` at position `axis`, every slice along it equal to x."""
    shape = list(get_aval(x).shape)
    shape.insert(axis, size)
    # (NumPy integers, as JAX's np.delete makes them: a jaxpr prints them so)
    dims = tuple(np.delete(np.arange(len(shape)), axis))
    return broadcast_in_dim(x, tuple(shape), dims)


ad.set_tangent_ops(add_any, zeros)
batching.set_axis_ops(moveaxis, broadcast_axis)
