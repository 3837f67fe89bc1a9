"""ember.dtypes: JAX's `jax.dtypes` module over Ember's dtype lattice.

Input: dtype-likes (NumPy dtypes, scalar types, names, `jnp.float32`), values (arrays,
Python scalars) and Ember's typed PRNG key dtype (`key<fry>`). Output:
  canonicalize_dtype(d)   the dtype Ember computes in (64-bit types narrow to 32 unless
                          x64 is on); key dtypes only with allow_extended_dtype=True
  issubdtype(a, b)        np.issubdtype, with bfloat16 under np.floating and key dtypes
                          under `prng_key` and `extended` (and nothing else)
  result_type(*args)      the promoted dtype (JAX's lattice, weak scalars included), with
                          return_weak_type_flag=True the (dtype, weak) pair
  scalar_type_of(x)       the Python scalar type of x's dtype (bool, int, float, complex)
  itemsize_bits(d)        the size of one element in bits
  finfo, iinfo, float0 (the tangent dtype of integer values), bfloat16 (ml_dtypes' type,
  imported on first use), extended and prng_key (abstract classes for issubdtype only),
  TypePromotionError (the error class of JAX's promotion lattice).
Invariant: no dtype decision of its own: everything defers to ember.core.dtypes and
ember.numpy's dtype functions, so `ember.dtypes` and `ember.numpy` always agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.ad_api import float0
from ember.core import dtypes as _core

__all__ = ["TypePromotionError", "bfloat16",  # noqa: F822 - module __getattr__
           "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]


class TypePromotionError(ValueError):
    """A promotion the dtype lattice refuses (JAX raises it under strict promotion)."""


class extended:  # noqa: N801 - JAX's name
    """Abstract parent of the dtypes that are not NumPy's (here: PRNG key dtypes); only
    meaningful as issubdtype's second argument."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """Abstract parent of typed PRNG key dtypes: `issubdtype(key.dtype, prng_key)`."""


def _is_key_dtype(x: Any) -> bool:
    # ember.random's KeyTy, recognized by its name (core must not import ember.random)
    return str(getattr(x, "name", "")).startswith("key<") and not isinstance(x, np.dtype)


def _as_dtype(x: Any) -> np.dtype:
    from ember.numpy._dtypes import _as_dtype as as_dtype
    return as_dtype(x)


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """The dtype Ember computes in for `dtype` (int64 -> int32 unless x64 is on)."""
    if _is_key_dtype(dtype):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"canonicalize_dtype called on extended dtype {dtype} with "
                         "allow_extended_dtype=False")
    return _core.canonicalize(_as_dtype(dtype))


def issubdtype(a: Any, b: Any) -> bool:
    """Whether dtype `a` is `b` or below it (NumPy's hierarchy, bfloat16 a floating type,
    key dtypes under prng_key and extended)."""
    b_abstract = isinstance(b, type) and issubclass(b, extended)
    if _is_key_dtype(a):
        return b_abstract or _is_key_dtype(b)
    if b_abstract or _is_key_dtype(b):
        return False
    from ember.numpy._dtypes import issubdtype as np_issubdtype
    return bool(np_issubdtype(a, b))


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype JAX's lattice promotes `args` (values or dtypes) to, canonicalized; with
    return_weak_type_flag, (dtype, weak) where weak says every argument was a weak scalar."""
    from ember.numpy._dtypes import _typed
    if not args:
        raise ValueError("at least one array or dtype is required")
    dtype, weak = _core.promote(*[_typed(a) for a in args])
    dtype = _core.canonicalize(dtype)
    return (dtype, weak) if return_weak_type_flag else dtype


_SCALAR_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def scalar_type_of(x: Any) -> type:
    """bool, int, float or complex: the Python scalar type of x's dtype."""
    try:
        dtype = _as_dtype(x) if isinstance(x, (np.dtype, str, type)) else np.result_type(
            np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype)
    except TypeError as err:
        raise TypeError(f"scalar_type_of: {x!r} has no numeric dtype") from err
    kind = _core.kind(dtype)
    if kind not in _SCALAR_TYPES:
        raise TypeError(f"Value {x!r} with dtype {dtype} is not a valid array type. Only "
                        "arrays of numeric types are supported.")
    return _SCALAR_TYPES[kind]


def itemsize_bits(dtype: Any) -> int:
    """The bits one element of `dtype` takes (bool: 8, as stored)."""
    dt = _as_dtype(dtype)
    if dt.name in ("int4", "uint4", "float4_e2m1fn"):
        return 4
    if dt.name in ("int2", "uint2"):
        return 2
    return dt.itemsize * 8


def finfo(dtype: Any) -> Any:
    """Machine limits of a float dtype (bfloat16's from ml_dtypes)."""
    return _core.finfo(_as_dtype(dtype))


def iinfo(dtype: Any) -> np.iinfo:
    """Machine limits of an integer dtype."""
    return _core.iinfo(_as_dtype(dtype))


def __getattr__(name: str) -> Any:
    if name == "bfloat16":  # ml_dtypes' scalar type, imported on first use (slow import)
        return _core.bfloat16().type
    from ember._missing import missing_error
    raise missing_error(__name__, name)
