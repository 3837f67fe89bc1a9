"""logaddexp and logaddexp2 of same-dtype real floats, as custom_jvp functions (JAX 0.10.2
stages them so: `custom_jvp_call[name=logaddexp ... jvp=_logaddexp_jvp]`).

Input: two arrays of one real floating dtype (the ufuncs in _ufuncs.py promote first).
Output: log(e^x1 + e^x2) (log2(2^x1 + 2^x2)) without overflow: max + log1p(exp(-|x1 - x2|)),
and x1 + x2 where x1 - x2 is NaN (a NaN, or infinities of one sign).
Invariants: the derivative is the pair of weights e^x1 / (e^x1 + e^x2) and its complement,
computed from d = x1 - x2 so that it holds at the infinities: (1, inf) gives (0, 1), and
infinities of one sign split the derivative evenly (d/da logaddexp(a, a) = 1 everywhere).
JAX's own rule differs there (its derivative at (1, inf) is e, at (inf, inf) 2); ours is
the limit of the function's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax
from ember.core.trace import get_aval
from ember.custom_derivatives import custom_jvp


def _const(x: Any, value: float) -> Any:
    return lax.convert_element_type(value, get_aval(x).dtype)


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


def _combine(x1: Any, x2: Any, tail: Any) -> Any:
    """max(x1, x2) + tail(-|x1 - x2|), and x1 + x2 where x1 - x2 is NaN (JAX's op order)."""
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    return lax.select(_isnan(delta), lax.add(x1, x2),
                      lax.add(amax, tail(lax.neg(lax.abs(delta)))))


@custom_jvp
def logaddexp(x1: Any, x2: Any) -> Any:
    return _combine(x1, x2, lambda t: lax.log1p(lax.exp(t)))


@custom_jvp
def logaddexp2(x1: Any, x2: Any) -> Any:
    inv_ln2 = _const(x1, 1 / np.log(2))
    return _combine(x1, x2, lambda t: lax.mul(inv_ln2, lax.log1p(lax.exp2(t))))


def _weights(x1: Any, x2: Any, scale: float) -> tuple[Any, Any]:
    """(e^(s x1), e^(s x2)) / their sum, as sigmoids of s (x1 - x2); 1/2 each where the
    difference is NaN only because both are infinities of one sign."""
    d = lax.sub(x1, x2)
    if scale != 1.0:
        d = lax.mul(d, _const(d, scale))
    one = _const(d, 1.0)
    # sigmoid(d) = 1 / (1 + e^-d), written with e^-|d| so that neither side overflows
    e = lax.exp(lax.neg(lax.abs(d)))
    big = lax.div(one, lax.add(one, e))    # the weight of the larger one
    small = lax.div(e, lax.add(one, e))    # the weight of the smaller one
    pos = lax.ge(d, _const(d, 0.0))
    w1, w2 = lax.select(pos, big, small), lax.select(pos, small, big)
    tie = lax.bitwise_and(_isnan(d), lax.bitwise_not(lax.bitwise_or(_isnan(x1), _isnan(x2))))
    half = lax.full_like(d, 0.5)
    return lax.select(tie, half, w1), lax.select(tie, half, w2)


def _jvp(fun: Any, scale: float) -> Any:
    def rule(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        (x1, x2), (t1, t2) = primals, tangents
        w1, w2 = _weights(x1, x2, scale)
        return fun(x1, x2), lax.add(lax.mul(t1, w1), lax.mul(t2, w2))
    return rule


_logaddexp_jvp = _jvp(logaddexp, 1.0)
_logaddexp_jvp.__name__ = "_logaddexp_jvp"
logaddexp.defjvp(_logaddexp_jvp)
_logaddexp2_jvp = _jvp(logaddexp2, float(np.log(2)))
_logaddexp2_jvp.__name__ = "_logaddexp2_jvp"
logaddexp2.defjvp(_logaddexp2_jvp)
