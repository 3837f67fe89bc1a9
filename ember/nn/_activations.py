"""Elementwise activation functions of `jax.nn` (relu, gelu, sigmoid, softplus, ...).

Input: an array-like `x` (plus a function's scalar parameters such as `alpha`). Output: an
array of `x`'s shape, in the dtype JAX's formula gives (integer inputs stay integer where
the formula keeps them so, e.g. `relu`; they become floats where it does not).
Invariants: each function is the same composition of `ember.numpy`/`ember.lax` operations
as JAX 0.10.2's, so values, dtypes and gradients agree with JAX's, edge points included;
`relu`, `relu6` and `log1mexp` carry JAX's custom JVPs (the derivative of `relu` at 0 is 0,
of `relu6` at 0 and 6 is 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.custom_derivatives import custom_jvp
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike, promote_args_inexact
from ember.prims.copy import copy_p

__all__ = ["identity", "relu", "relu6", "squareplus", "softplus", "sparse_plus",
           "soft_sign", "sigmoid", "sparse_sigmoid", "silu", "swish", "mish",
           "log_sigmoid", "elu", "leaky_relu", "hard_tanh", "celu", "selu", "gelu",
           "hard_sigmoid", "hard_silu", "hard_swish", "log1mexp", "tanh"]

# SELU's fixed point constants (Klambauer et al. 2017, "Self-Normalizing Neural Networks").
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _arraylike(fname: str, x: Any) -> Any:
    check_arraylike(fname, x)
    return jnp.asarray(x)


@jit_like_jax("identity")
def identity(x: Any) -> Any:
    """The identity activation: returns `x` as an array (as jax.nn.identity)."""
    return _arraylike("identity", x)


@custom_jvp
@jit_like_jax("relu")
def relu(x: Any) -> Any:
    """Rectified linear unit, max(x, 0) (as jax.nn.relu). Its derivative at 0 is 0."""
    return jnp.maximum(x, 0)


# d relu / dx = 1 for x > 0 and 0 otherwise: the subgradient 0 is taken at x = 0.
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
@jit_like_jax("relu6")
def relu6(x: Any) -> Any:
    """ReLU capped at 6, min(max(x, 0), 6) (as jax.nn.relu6). Its derivative is 0 at 0
    and at 6."""
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@jit_like_jax("squareplus")
def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2 (as jax.nn.squareplus)."""
    check_arraylike("squareplus", x, b)
    x, b = jnp.asarray(x), jnp.asarray(b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@jit_like_jax("softplus")
def softplus(x: Any) -> Any:
    """log(1 + e^x), computed as logaddexp(x, 0) (as jax.nn.softplus)."""
    return jnp.logaddexp(x, 0)


@jit_like_jax("sparse_plus")
def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, (x + 1)^2 / 4 between, x for x >= 1 (as jax.nn.sparse_plus)."""
    x = _arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit_like_jax("soft_sign")
def soft_sign(x: Any) -> Any:
    """Soft-sign activation: ``x / (abs(x) + 1)``, element-wise.

    Args:
        x: an array.

    Returns:
        An array of ``x``'s shape and dtype, with values in (-1, 1).
    """
    x = _arraylike("soft_sign", x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x: Any) -> Any:
    """The logistic function 1 / (1 + e^-x) (as jax.nn.sigmoid)."""
    return lax.logistic(x)


@jit_like_jax("sparse_sigmoid")
def sparse_sigmoid(x: Any) -> Any:
    """(x + 1) / 2 clipped to [0, 1] (as jax.nn.sparse_sigmoid)."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit_like_jax("silu")
def silu(x: Any) -> Any:
    """x * sigmoid(x) (as jax.nn.silu; `swish` is the same function)."""
    x = _arraylike("silu", x)
    return x * sigmoid(x)


swish = silu


@jit_like_jax("mish")
def mish(x: Any) -> Any:
    """x * tanh(softplus(x)) (as jax.nn.mish)."""
    x = _arraylike("mish", x)
    return x * jnp.tanh(softplus(x))


@jit_like_jax("log_sigmoid")
def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x) (as jax.nn.log_sigmoid)."""
    x = _arraylike("log_sigmoid", x)
    return -softplus(-x)


@jit_like_jax("elu")
def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x for x > 0, alpha * (e^x - 1) otherwise (as jax.nn.elu)."""
    x = _arraylike("elu", x)
    # expm1 sees 0 where x > 0, so a large positive x cannot overflow into the unused
    # branch (whose inf would turn the gradient of the select into nan).
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


@jit_like_jax("leaky_relu")
def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """x for x >= 0, negative_slope * x otherwise (as jax.nn.leaky_relu)."""
    x = _arraylike("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


@jit_like_jax("hard_tanh")
def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1] (as jax.nn.hard_tanh)."""
    x = _arraylike("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit_like_jax("celu")
def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha * (e^(min(x, 0) / alpha) - 1) (as jax.nn.celu)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@jit_like_jax("selu")
def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with SELU's constants (as jax.nn.selu)."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit (as jax.nn.gelu): x/2 * erfc(-x/sqrt(2)), or with
    `approximate=True` x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    [x] = promote_args_inexact("gelu", x)
    if approximate:
        k = np.sqrt(2 / np.pi).astype(x.dtype)
        return x * (0.5 * (1.0 + jnp.tanh(k * (x + 0.044715 * (x ** 3)))))
    half = np.sqrt(0.5).astype(x.dtype)
    # JAX ends with jnp.array(..., dtype=x.dtype), which stages a `copy`: keep it, so the
    # texts match (it lowers to nothing).
    return copy_p.bind(0.5 * x * lax.erfc(-x * half))


@jit_like_jax("hard_sigmoid")
def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6 (as jax.nn.hard_sigmoid)."""
    return relu6(x + 3.) / 6.


@jit_like_jax("hard_silu")
def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x) (as jax.nn.hard_silu; `hard_swish` is the same function)."""
    x = _arraylike("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@custom_jvp
@jit_like_jax("log1mexp")
def log1mexp(x: Any) -> Any:
    """log(1 - e^-x), accurate on both sides of log 2 (as jax.nn.log1mexp)."""
    x = _arraylike("log1mexp", x)
    # Maechler's split: log(-expm1(-x)) near 0, log1p(-exp(-x)) for large x.
    return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


# d/dx log(1 - e^-x) = e^-x / (1 - e^-x) = 1 / (e^x - 1)
log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))

tanh = jnp.tanh
