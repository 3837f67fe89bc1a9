"""Normalizations over axes of `jax.nn`: softmax, log_softmax, logmeanexp, standardize, glu,
one_hot.

Input: an array-like `x`, the axes (`axis`: an int, a tuple, or None for all axes) and, for
the masked forms, a boolean `where` broadcastable to `x`. Output: an array of `x`'s shape
(`logmeanexp` reduces; `one_hot` adds the class axis; `glu` halves `axis`).
Invariants: the same compositions as JAX 0.10.2 with its default flags, so gradients match
JAX's: the maximum subtracted inside softmax and log_softmax is under `stop_gradient`
(JAX's `jax_softmax_custom_jvp` is off by default, so its softmax has no custom rule);
masked-out outputs are 0 (softmax) or -inf (log_softmax).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer, get_aval
from ember.nn._activations import sigmoid
from ember.nn._logsumexp import logsumexp
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike
from ember.numpy._reductions import normalize_axes

__all__ = ["softmax", "log_softmax", "logmeanexp", "standardize", "glu", "one_hot"]


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along `axis` (as jax.nn.softmax); masked-out entries are 0."""
    check_arraylike("max", x)  # (JAX's error names the max it fails in)
    x = jnp.asarray(x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - lax.stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


@jit_like_jax("log_softmax", static_argnames=("axis",))
def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x) along `axis` (as jax.nn.log_softmax); masked-out entries are
    -inf."""
    check_arraylike("log_softmax", x)
    x = jnp.asarray(x)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    result = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


def _count(x: Any, axis: Any, where: Any, keepdims: bool, dtype: Any) -> Any:
    """How many elements each reduction over `axis` sees: a 0-d constant without `where`
    (as JAX's, so the text prints `log 4.0:f32[]` and the subtraction broadcasts it)."""
    shape = get_aval(x).shape
    if where is None:
        n = int(np.prod([shape[d] for d in normalize_axes(axis, len(shape))]))
        return lax.convert_element_type(n, dtype)
    return jnp.sum(jnp.broadcast_to(where, shape), axis, dtype=dtype, keepdims=keepdims)


@jit_like_jax("logmeanexp", static_argnames=("axis", "keepdims"))
def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(exp(x))) = logsumexp(x) - log(n) (as jax.nn.logmeanexp)."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    return lse - jnp.log(_count(x, axis, where, keepdims, lse.dtype))


@jit_like_jax("standardize", static_argnames=("axis", "algorithm"))
def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """(x - mean) / sqrt(variance + epsilon) along `axis` (as jax.nn.standardize); `mean`
    and `variance` default to x's over `axis` (`algorithm="fast"`: E[x^2] - E[x]^2
    clipped at 0; `"stable"`: E[(x - E[x])^2])."""
    check_arraylike("standardize", x)
    for arg in (mean, variance, where):
        if arg is not None:
            check_arraylike("standardize", arg)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                                where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True,
                                where=where) - jnp.square(mean)
            # E[x^2] - E[x]^2 can round below 0, where rsqrt would give nan.
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


@jit_like_jax("glu", static_argnames=("axis",))
def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit (as jax.nn.glu): the first half of `x` along `axis` times the
    sigmoid of the second half."""
    check_arraylike("glu", x)
    x = jnp.asarray(x)
    if x.shape[axis] % 2 != 0:
        raise AssertionError("axis size must be divisible by 2")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: Any = -1) -> Any:
    """One-hot encoding of the integer array `x` (as jax.nn.one_hot): a new axis of size
    `num_classes` at `axis` (or, for a vmap axis name, the position along that axis);
    indices outside [0, num_classes) encode as all zeros."""
    if isinstance(num_classes, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: traced "
            f"array with shape {num_classes.aval.str_short()}\nThe error arose in "
            "jax.nn.one_hot argument `num_classes`.")
    num_classes = operator.index(num_classes)
    x = jnp.asarray(x)
    if not dtypes.issubdtype(x.dtype, np.integer):
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    dtype = dtypes.default_float() if dtype is None else dtype
    return _one_hot(x, num_classes, dtype=dtype, axis=axis)


@jit_like_jax("_one_hot", static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x: Any, num_classes: int, *, dtype: Any, axis: Any) -> Any:
    """one_hot's body, staged as JAX's jit[_one_hot] (the checks stay outside it)."""
    if not isinstance(axis, (int, np.integer)):
        # a vmap axis name: this example's class is its position along that axis
        size = lax.axis_size(axis)
        if num_classes != size:
            raise ValueError(f"Expected num_classes to match the size of axis {axis}, "
                             f"but {num_classes} != {size}")
        return jnp.asarray(x == lax.axis_index(axis), dtype=dtype)
    out_axis = operator.index(axis)
    if not -(x.ndim + 1) <= out_axis < x.ndim + 1:
        raise ValueError(f"axis {out_axis} is out of bounds for array of dimension "
                         f"{x.ndim + 1}")
    out_axis %= x.ndim + 1
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, tuple(rhs_shape), out_axis)
    return (lhs == rhs).astype(dtype)
