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
    """Test element-wise for a nonzero imaginary part.

    Args:
        x: an array or scalar.

    Returns:
        A bool array of ``x``'s shape: True where ``imag(x) != 0`` (all False for real
        dtypes).

    Example:
        >>> jnp.iscomplex(jnp.array([1 + 1j, 2 + 0j]))
        Array([ True, False], dtype=bool)
    """
    check_arraylike("iscomplex", x)
    return jnp.imag(jnp.asarray(x)) != 0


@jit_like_jax("isreal")
def isreal(x: Any) -> Any:
    """Test element-wise for a zero imaginary part.

    Args:
        x: an array or scalar.

    Returns:
        A bool array of ``x``'s shape: True where ``imag(x) == 0`` (all True for real
        dtypes).

    Example:
        >>> jnp.isreal(jnp.array([1 + 1j, 2 + 0j]))
        Array([False,  True], dtype=bool)
    """
    check_arraylike("isreal", x)
    return jnp.imag(jnp.asarray(x)) == 0


def iscomplexobj(x: Any) -> bool:
    """Test whether an object has a complex dtype.

    Args:
        x: an array, a scalar or anything with a ``dtype``.

    Returns:
        A Python bool, from the dtype alone (``1 + 0j`` is complex).

    Example:
        >>> jnp.iscomplexobj(jnp.array([1.0]))
        False
    """
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return bool(dtypes.issubdtype(dtype, np.complexfloating))


def isrealobj(x: Any) -> bool:
    """Test whether an object has a non-complex dtype.

    Args:
        x: an array, a scalar or anything with a ``dtype``.

    Returns:
        ``not iscomplexobj(x)``, a Python bool.

    Example:
        >>> jnp.isrealobj(jnp.array([1 + 0j]))
        False
    """
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """Test whether an object is a scalar.

    Args:
        element: any object.

    Returns:
        A Python bool: True for Python and NumPy scalars and, as in JAX (unlike NumPy), for
        0-d arrays.

    Example:
        >>> jnp.isscalar(jnp.array(1.0))
        True
        >>> jnp.isscalar(jnp.array([1.0]))
        False
    """
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
    """Test whether an object can be iterated over.

    Args:
        y: any object.

    Returns:
        A Python bool: whether ``iter(y)`` succeeds.

    Example:
        >>> jnp.iterable([1, 2])
        True
        >>> jnp.iterable(3)
        False
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True
