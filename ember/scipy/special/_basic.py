"""Elementary special functions of `jax.scipy.special`: erf, erfc, erfinv, expit, logit,
xlogy, xlog1py, entr, rel_entr, kl_div; and SciPy's softmax / log_softmax (axis
keyword-only, default all axes), which are ember.nn's.

Input: array-likes (promoted to an inexact dtype, as JAX's `promote_args_inexact`).
Output: an elementwise result of the broadcast shape. Invariants: each is the lax
operation or composition JAX 0.10.2 uses, and `logit`, `xlogy`, `xlog1py` and `entr`'s
x log x carry JAX's custom JVPs, so their gradients are JAX's at the edge points
(xlogy(0, 0) = 0 with derivative log(y) in x; d entr(x) = -(log x + 1)).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.custom_derivatives import custom_jvp
from ember.nn import _softmax as nn_softmax
from ember.numpy._promote import promote_args_inexact

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "xlogy", "xlog1py", "entr", "rel_entr",
           "kl_div", "softmax", "log_softmax"]


def _const(x: Any, value: float) -> Any:
    return jnp.asarray(value, dtype=x.dtype)


def erf(x: Any) -> Any:
    """The error function 2/sqrt(pi) * int_0^x e^(-t^2) dt (as jax.scipy.special.erf)."""
    x, = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """1 - erf(x), accurate for large x (as jax.scipy.special.erfc)."""
    x, = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse of erf on (-1, 1) (as jax.scipy.special.erfinv)."""
    x, = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + e^-x) (as jax.scipy.special.expit)."""
    x, = promote_args_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def logit(x: Any) -> Any:
    """log(p / (1 - p)) (as jax.scipy.special.logit)."""
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_const(x, 1), x)))


# d logit / dp = 1 / (p (1 - p))
logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_const(x, 1), x))))


@custom_jvp
def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x == 0 unless y is nan (as jax.scipy.special.xlogy)."""
    x, y = promote_args_inexact("xlogy", x, y)
    return jnp.where((x != 0.) | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (dx, dy) = primals, tangents
    out = xlogy(x, y)
    return out, (dx * lax.log(y) + dy * x / y).astype(out.dtype)


@custom_jvp
def xlog1py(x: Any, y: Any) -> Any:
    """x * log(1 + y), 0 where x == 0 unless y is nan (as jax.scipy.special.xlog1py)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    return jnp.where((x != 0.) | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (dx, dy) = primals, tangents
    out = xlog1py(x, y)
    return out, (dx * lax.log1p(y) + dy * x / (1 + y)).astype(out.dtype)


@custom_jvp
def _xlogx(x: Any) -> Any:
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (dx,) = primals, tangents
    return _xlogx(x), dx * (lax.log(x) + 1)


def entr(x: Any) -> Any:
    """-x log x for x > 0, 0 at 0, -inf for x < 0 (as jax.scipy.special.entr)."""
    x, = promote_args_inexact("entr", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, _const(x, 0)), lax.full_like(x, -np.inf),
                      lax.neg(_xlogx(x)))


def rel_entr(p: Any, q: Any) -> Any:
    """p log(p / q) for p, q > 0; 0 for p = 0, q >= 0; inf otherwise (as
    jax.scipy.special.rel_entr)."""
    p, q = promote_args_inexact("rel_entr", p, q)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    zero = _const(p, 0.0)
    both_positive = lax.gt(p, zero) & lax.gt(q, zero)
    p_zero = lax.eq(p, zero) & lax.ge(q, zero)
    # the logs see 1 outside their domain, so the unused branches stay finite (gradients)
    safe_p = jnp.where(both_positive, p, 1)
    safe_q = jnp.where(both_positive, q, 1)
    value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_positive, value, jnp.where(p_zero, zero, np.inf))


def kl_div(p: Any, q: Any) -> Any:
    """rel_entr(p, q) - p + q (as jax.scipy.special.kl_div)."""
    p, q = promote_args_inexact("kl_div", p, q)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return rel_entr(p, q) - p + q


def softmax(x: Any, /, *, axis: Any = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis`, all axes by default (as
    jax.scipy.special.softmax)."""
    return nn_softmax.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: Any = None) -> Any:
    """x - logsumexp(x) over `axis`, all axes by default (as
    jax.scipy.special.log_softmax)."""
    return nn_softmax.log_softmax(x, axis=axis)
