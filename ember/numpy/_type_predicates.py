"""Type and value predicates for ember.numpy: iscomplex, isreal, iscomplexobj, isrealobj,
isscalar, iterable.

Input: any object (iscomplex/isreal: an array-like). Output: a Python bool for the *obj
predicates, isscalar and iterable (decided by the type, never by traced values); a bool
array for iscomplex/isreal (imaginary part != 0 / == 0, so all False / all True for the
real dtypes, which are all Ember has until complex dtypes land).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.core import dtypes
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import check_arraylike

__all__ = ["iscomplex", "isreal", "iscomplexobj", "isrealobj", "isscalar", "iterable"]


@jit_like_jax("iscomplex")
def iscomplex(x: Any) -> Any:
    """Elementwise: is the imaginary part nonzero?"""
    check_arraylike("iscomplex", x)
    return jnp.imag(jnp.asarray(x)) != 0


@jit_like_jax("isreal")
def isreal(x: Any) -> Any:
    """Elementwise: is the imaginary part zero?"""
    check_arraylike("isreal", x)
    return jnp.imag(jnp.asarray(x)) == 0


def iscomplexobj(x: Any) -> bool:
    """Is x a complex number or an array of a complex dtype (whatever its values)?"""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return bool(dtypes.issubdtype(dtype, np.complexfloating))


def isrealobj(x: Any) -> bool:
    """not iscomplexobj(x)."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """A Python or NumPy scalar, or a 0-d array (JAX counts those as scalars)."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, jnp.ndarray)):
        return element.ndim == 0
    if hasattr(element, "__jax_array__"):
        return jnp.asarray(element).ndim == 0
    from ember.core.trace import Tracer
    if isinstance(element, Tracer):
        return np.ndim(element) == 0
    return False


def iterable(y: Any) -> bool:
    """Can iter(y) be called?"""
    try:
        iter(y)
    except TypeError:
        return False
    return True
