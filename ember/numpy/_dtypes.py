"""Dtype names and dtype functions of ember.numpy: float32, int32, ..., result_type,
promote_types, can_cast, finfo, iinfo, isdtype, issubdtype.

`jnp.float32` is callable like JAX's: `jnp.float32(2)` is a 0-d ember.Array (strongly
typed), and it is accepted anywhere a dtype is (`np.dtype(jnp.float32)` works).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.trace import get_aval


class _ScalarMeta(type):
    dtype: np.dtype

    def __call__(cls, x: Any = 0) -> Any:
        # array(x, dtype) (always strongly typed), warning as JAX's asarray does when x64
        # is off and the type is a 64-bit one
        from ember.numpy._creation import _array, _dtype
        return _array(x, _dtype(cls.dtype, "asarray"))

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._numpy_type)

    def __eq__(cls, other: Any) -> Any:
        """Equal to the same scalar type, NumPy dtype or dtype name (`jnp.float32 ==
        "float32"`); anything else is not equal, never an error (test suites compare dtypes
        with arbitrary objects)."""
        if type(other) is np.dtype or isinstance(other, np.dtype):  # (dict lookups: first)
            return cls.dtype == other
        if isinstance(other, _ScalarMeta):
            return cls.dtype == other.dtype
        if isinstance(other, (str, type)):
            try:
                return np.dtype(other) == cls.dtype
            except Exception:  # TypeError, ValueError, SyntaxError...: not a dtype spelling
                return False
        return NotImplemented  # (Python falls back to identity: False; `!=` inverts this)

    def __hash__(cls) -> int:
        return hash(cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'ember.numpy.{cls.__name__}'>"


def bfloat16_type() -> type:
    """`jnp.bfloat16`, made on first use (ember.numpy's `__getattr__`): it needs ml_dtypes,
    which is slow to import, so a program without bfloat16 never loads it."""
    global _BFLOAT16
    if _BFLOAT16 is None:
        _BFLOAT16 = _scalar_type(dtypes.bfloat16().type)
    return _BFLOAT16


_BFLOAT16: type | None = None


def _scalar_type(np_type: type) -> type:
    name = np.dtype(np_type).name
    doc = (f"The {name} scalar type, as `jax.numpy.{name}`: `{name}(x)` is a 0-d Array of "
           f"that dtype, and it names the dtype wherever a dtype is accepted.")
    return _ScalarMeta(name, (), {"dtype": np.dtype(np_type), "_numpy_type": np_type,
                                  "__doc__": doc})


bool_ = _scalar_type(np.bool_)
int8, int16, int32, int64 = (_scalar_type(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_scalar_type(t) for t in
                                 (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (_scalar_type(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = _scalar_type(np.complex64), _scalar_type(np.complex128)
single, double = float32, float64
half = float16
# NumPy's default-width aliases. JAX spells them as the 64-bit types, which canonicalize to
# 32 bits unless jax_enable_x64 is on, so `jnp.int_(1).dtype` follows the x64 flag.
int_, uint, float_, complex_ = int64, uint64, float64, complex128
intp, uintp = int64, uint64
byte, ubyte, short, ushort = int8, uint8, int16, uint16
intc, uintc = int32, uint32
longlong, ulonglong = int64, uint64
csingle, cdouble = complex64, complex128

generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
complexfloating, character, flexible = np.complexfloating, np.character, np.flexible
bool = bool_  # noqa: A001

dtype = np.dtype

__all__ = [
    "bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "single", "double", "half",
    "int_", "uint", "float_", "complex_", "intp", "uintp", "byte", "ubyte", "short", "ushort",
    "intc", "uintc", "longlong", "ulonglong", "csingle", "cdouble",
    "generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger",
    "complexfloating", "character", "flexible", "dtype",
    "result_type", "promote_types", "can_cast", "finfo", "iinfo", "issubdtype", "isdtype",
]


def _as_dtype(x: Any) -> np.dtype:
    """A NumPy dtype from a dtype-like (dtype, name, scalar type) or an array's dtype."""
    if isinstance(x, np.dtype):
        return x
    if isinstance(x, _ScalarMeta):
        return x.dtype
    if isinstance(x, type) and issubclass(x, (np.generic, int, float, complex)):
        return np.dtype(x)
    if isinstance(x, str):
        return dtypes.bfloat16() if x == "bfloat16" else np.dtype(x)
    return get_aval(x).dtype


_PY_TYPES = {int: "int", float: "float", complex: "complex"}


def _typed(a: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak_type) of one result_type argument."""
    if a is builtins.bool:
        return dtypes.bool_, False
    if isinstance(a, type) and a in _PY_TYPES:
        # The Python types stand for weakly typed scalars, as in JAX.
        return dtypes.python_scalar_dtype(a(0)), True
    if isinstance(a, (np.dtype, str, _ScalarMeta)) or (
            isinstance(a, type) and issubclass(a, np.generic)):
        return dtypes.canonicalize(_as_dtype(a)), False
    aval = get_aval(a)
    return aval.dtype, aval.weak_type


def result_type(*args: Any) -> np.dtype:
    """Return the dtype that Ember's operations would give for these operands.

    Args:
        *args: arrays, dtypes, scalar types or Python scalars (which are weakly typed: they
            take the other operands' kind and width where they can).

    Returns:
        The promoted dtype under JAX's rules, canonicalized (32-bit unless x64 is on).

    Example:
        >>> jnp.result_type(jnp.int8, 1.0)
        dtype('float32')
        >>> jnp.result_type(jnp.array([1, 2]), jnp.float16)
        dtype('float16')
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    return dtypes.promote(*[_typed(a) for a in args])[0]


def promote_types(a: Any, b: Any) -> np.dtype:
    """Return the dtype two dtypes promote to.

    Args:
        a, b: dtypes or scalar types, both taken as strongly typed.

    Returns:
        Their join in JAX's type-promotion lattice, which differs from NumPy's: it never
        widens to 64 bits on its own (``int32`` with ``float16`` gives ``float16``, where
        NumPy gives ``float64``).

    Example:
        >>> jnp.promote_types(jnp.int8, jnp.uint8)
        dtype('int16')
        >>> jnp.promote_types(jnp.int32, jnp.float16)
        dtype('float16')
    """
    return dtypes.promote_types(_as_dtype(a), _as_dtype(b))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> Any:
    """Test whether a cast between dtypes is allowed by a casting rule.

    Args:
        from_: a dtype, a scalar type or an array (standing for its dtype).
        to: the target dtype.
        casting: NumPy's rule: ``'no'``, ``'equiv'``, ``'safe'`` (the default: no loss of
            values), ``'same_kind'`` or ``'unsafe'``.

    Returns:
        A Python bool.

    Example:
        >>> jnp.can_cast(jnp.int8, jnp.int32)
        True
        >>> jnp.can_cast(jnp.float32, jnp.int32)
        False
    """
    return np.can_cast(_as_dtype(from_), _as_dtype(to), casting=casting)


def finfo(dt: Any) -> Any:
    """Return the machine limits of a floating-point dtype.

    Args:
        dt: a float or complex dtype, scalar type or array (complex types give their real
            part's limits).

    Returns:
        A ``numpy.finfo``-like object (``eps``, ``max``, ``min``, ``tiny``,
        ``smallest_subnormal``, ``bits``, ...) of the dtype named, not canonicalized: as in
        JAX, ``finfo(jnp.float64)`` describes float64 even with x64 off; bfloat16's comes
        from ml_dtypes.

    Example:
        >>> float(jnp.finfo(jnp.float16).max)
        65504.0
    """
    return dtypes.finfo(_as_dtype(dt))


def iinfo(dt: Any) -> np.iinfo:
    """Return the machine limits of an integer dtype.

    Args:
        dt: an integer dtype, scalar type or array.

    Returns:
        A ``numpy.iinfo`` (``min``, ``max``, ``bits``) of the dtype named, not canonicalized.

    Example:
        >>> jnp.iinfo(jnp.int8).max
        127
    """
    return np.iinfo(_as_dtype(dt))


def issubdtype(arg1: Any, arg2: Any) -> Any:
    """Test whether a dtype is below another in NumPy's type hierarchy.

    Args:
        arg1: a dtype or scalar type (Ember's ``jnp.float32`` and friends included).
        arg2: a dtype or an abstract type such as ``jnp.integer`` or ``jnp.floating``.

    Returns:
        A Python bool. Unlike NumPy, which does not know it, bfloat16 counts as a floating
        type (as in JAX).

    Example:
        >>> jnp.issubdtype(jnp.int8, jnp.integer)
        True
        >>> jnp.issubdtype(jnp.float32, jnp.integer)
        False
    """
    a = arg1.dtype if isinstance(arg1, _ScalarMeta) else arg1
    b = arg2.dtype.type if isinstance(arg2, _ScalarMeta) else arg2
    return dtypes.issubdtype(a, b)


_KINDS = {
    "bool": lambda d: dtypes.kind(d) == "b",
    "signed integer": lambda d: dtypes.kind(d) == "i",
    "unsigned integer": lambda d: dtypes.kind(d) == "u",
    "integral": lambda d: dtypes.kind(d) in "iu",
    "real floating": lambda d: dtypes.kind(d) == "f",
    "complex floating": lambda d: dtypes.kind(d) == "c",
    "numeric": lambda d: dtypes.kind(d) in "iufc",
}


def isdtype(dt: Any, kind: Any) -> Any:
    """Test whether a dtype is of a given kind (the Array API's predicate).

    Args:
        dt: a dtype or scalar type.
        kind: a dtype, one of the kind names ``'bool'``, ``'signed integer'``,
            ``'unsigned integer'``, ``'integral'``, ``'real floating'``,
            ``'complex floating'``, ``'numeric'``, or a tuple of these (any may match).

    Returns:
        A Python bool.

    Example:
        >>> jnp.isdtype(jnp.float32, "real floating")
        True
        >>> jnp.isdtype(jnp.int8, ("integral", jnp.bool_))
        True
    """
    d = _as_dtype(dt)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized kind: {k!r}")
            if _KINDS[k](d):
                return True
        elif _as_dtype(k) == d:
            return True
    return False
