"""Dtypes: canonicalization and JAX's type-promotion lattice, weak types included.

Input: NumPy dtypes, Python scalar types, and values. Output: canonical NumPy dtypes
(32-bit unless `jax_enable_x64`) and promotion results `(dtype, weak_type)`.
Invariants: promotion is JAX's lattice (not NumPy's value-based rules): a Python scalar
(weak type) never widens a typed array (`f32 * 2.0 -> f32`, `u8 + 1 -> u8`), mixing signed
and unsigned integers climbs to the next signed width, and i64/u64 with a float gives the
weak-float default. Every dtype an Ember value carries has gone through `canonicalize`.
bfloat16 (ml_dtypes' type) is in the lattice beside float16 (their join is float32); it is
recognized by name, so that ml_dtypes, slow to import, loads only where a program uses it
(`bfloat16()` imports it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in
                                 (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

SUPPORTED = frozenset([bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                       float16, float32, float64])

_SHORT_NAMES = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
                uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64", float16: "f16",
                float32: "f32", float64: "f64", complex64: "c64", complex128: "c128"}

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def bfloat16() -> np.dtype:
    """ml_dtypes' bfloat16 (imported on first use: it takes a while to load)."""
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16)


def is_bfloat16(dtype: Any) -> bool:
    """Whether `dtype` is bfloat16 (without importing ml_dtypes)."""
    return getattr(dtype, "name", None) == "bfloat16"


def short_name(dtype: np.dtype) -> str:
    """`f32`, `i32`, `bool`: the dtype spelling of jaxpr types."""
    if is_bfloat16(dtype):
        return "bf16"
    return _SHORT_NAMES.get(dtype, dtype.name)


def x64_enabled() -> bool:
    return bool(config.jax_enable_x64)


# canonicalize and promote run several times per eager op: their answers, keyed by the
# arguments and the x64 flag (the only state they read), are kept (a few dozen entries)
_CANONICAL: dict[tuple[Any, ...], np.dtype] = {}
_PROMOTED: dict[tuple[Any, ...], tuple[np.dtype, bool]] = {}


def _kept(store: dict[tuple[Any, ...], Any], args: tuple[Any, ...],
          compute: Callable[..., Any]) -> Any:
    """compute(*args), remembered in `store` by (args, x64); unhashable args (a spelling
    NumPy accepts but Python cannot hash) are computed every time, failures never kept."""
    key = (*args, bool(config.jax_enable_x64))
    try:
        out = store.get(key)
    except TypeError:
        return compute(*args)
    if out is None:  # computed outside any except block: its errors carry no context
        out = store[key] = compute(*args)
    return out


def canonicalize(dtype: Any) -> np.dtype:
    """The dtype Ember uses for `dtype`: 64-bit types narrow to 32 unless x64 is on."""
    return _kept(_CANONICAL, (dtype,), _canonicalize)


def _canonicalize(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if not dt.isnative:
        # A big-endian `>f4` is the same number type as `float32`; values are converted to
        # native byte order when read (trace.to_numpy).
        dt = dt.newbyteorder("=")
    if dt not in SUPPORTED and dt.kind not in "c" and not is_bfloat16(dt):
        raise TypeError(f"Ember does not support the dtype {dt}")
    if not config.jax_enable_x64:
        return _TO_32.get(dt, dt)
    return dt


def canonicalize_requested(dtype: Any, fname: str) -> np.dtype:
    """canonicalize for a dtype a caller of `fname` asked for: when x64 is off and it names
    a 64-bit type, JAX's UserWarning says the result is narrower than asked (the Python
    types `int`, `float`, `complex` stand for the defaults and never warn)."""
    # (a NumPy dtype first: a key like jnp.float32 in canonicalize's store would collide
    # with np.dtype("float32"), whose every lookup would then call its Python __eq__)
    requested = np.dtype(dtype)
    out = canonicalize(requested)
    if out.itemsize == 4 or out.kind == "c":  # the common case: nothing narrowed (cheaply)
        if dtype not in _PY_DEFAULT_TYPES and _TO_32.get(requested) == out:
            _warn_truncated(requested, out, fname)
    return out


# (a set of the types themselves: `dtype=float` asks for the default float, whatever its
# width; hashing, not ==, since `jnp.int64 == int` holds)
_PY_DEFAULT_TYPES = frozenset((int, float, complex))


def _warn_truncated(requested: np.dtype, out: np.dtype, fname: str) -> None:
    import warnings
    warnings.warn(
        f"Explicitly requested dtype {requested} requested in {fname} is not available, and "
        f"will be truncated to dtype {out}. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
        "https://github.com/jax-ml/jax#current-gotchas for more.", stacklevel=5)


def default_int() -> np.dtype:
    return int64 if config.jax_enable_x64 else int32


def default_uint() -> np.dtype:
    return uint64 if config.jax_enable_x64 else uint32


def default_float() -> np.dtype:
    return float64 if config.jax_enable_x64 else float32


# ---------------------------------------------------------------------------------------------
# The promotion lattice. Nodes are dtypes plus three weak nodes: "i*" (Python int),
# "f*" (Python float), "c*" (Python complex). Edges point to the types each node promotes to;
# the join of two nodes is their least upper bound in the lattice.
# ---------------------------------------------------------------------------------------------
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_WEAK = frozenset((_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX))
_BF16 = "bf16"  # bfloat16's node (its dtype object needs ml_dtypes: `_dtype_of`)

_LATTICE: dict[Any, list[Any]] = {
    bool_: [_WEAK_INT],
    _WEAK_INT: [uint8, int8],
    uint8: [int16, uint16],
    uint16: [int32, uint32],
    uint32: [int64, uint64],
    uint64: [_WEAK_FLOAT],
    int8: [int16],
    int16: [int32],
    int32: [int64],
    int64: [_WEAK_FLOAT],
    _WEAK_FLOAT: [float16, _BF16, _WEAK_COMPLEX],
    float16: [float32],
    _BF16: [float32],
    float32: [float64, complex64],
    float64: [complex128],
    _WEAK_COMPLEX: [complex64],
    complex64: [complex128],
    complex128: [],
}


def _upper_bounds(node: Any) -> frozenset:
    seen = {node}
    stack = [node]
    while stack:
        for nxt in _LATTICE[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return frozenset(seen)


_UPPER = {node: _upper_bounds(node) for node in _LATTICE}


@functools.lru_cache(maxsize=4096)
def _join(a: Any, b: Any) -> Any:
    common = _UPPER[a] & _UPPER[b]
    # The least upper bound is the common bound whose own upper set contains all others.
    for c in common:
        if _UPPER[c] >= common:
            return c
    raise TypeError(f"no common type for {a} and {b}")


def _node(dtype: np.dtype, weak: bool) -> Any:
    if not weak:
        return _BF16 if is_bfloat16(dtype) else dtype
    k = kind(dtype)
    if k == "b":
        return bool_
    if k in "iu":
        return _WEAK_INT
    if k == "f":
        return _WEAK_FLOAT
    return _WEAK_COMPLEX


def _weak_default(node: Any) -> np.dtype:
    if node == _WEAK_INT:
        return default_int()
    if node == _WEAK_FLOAT:
        return default_float()
    return complex128 if config.jax_enable_x64 else complex64


def promote(*typed: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Join `(dtype, weak_type)` pairs; returns the canonical result and whether it is weak."""
    return _kept(_PROMOTED, typed, _promote)


def _promote(*typed: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    node = None
    for dtype, weak in typed:
        n = _node(dtype, weak)
        node = n if node is None else _join(node, n)
    if node is None:
        raise TypeError("promote needs at least one type")
    if node in _WEAK:
        return _weak_default(node), True
    return canonicalize(_dtype_of(node)), False


def _dtype_of(node: Any) -> np.dtype:
    """The dtype of a strong lattice node (bfloat16's is the one string among them)."""
    return bfloat16() if isinstance(node, str) else node


def promote_types(a: Any, b: Any) -> np.dtype:
    """`jnp.promote_types`: the join of two (strong) dtypes in the lattice, not narrowed to
    32 bits (as JAX: `promote_types(int32, int64)` is int64 with x64 off too; the values
    an operation makes are narrowed where they are made)."""
    da, db = np.dtype(a), np.dtype(b)
    node = _join(_node(da, False), _node(db, False))
    if node in _WEAK:  # (u)int64 with uint64: Python's float, as JAX names it
        return {_WEAK_INT: int64, _WEAK_FLOAT: float64}.get(node, complex128)
    if node == int64 and not config.jax_enable_x64 and int64 not in (da, db):
        return int32  # (JAX's 32-bit lattice: uint32 with a signed int meets at int32)
    return _dtype_of(node)


def python_scalar_dtype(value: Any) -> np.dtype:
    """The (weak) dtype a Python scalar takes: bool, default int, float or complex."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int()
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return complex128 if config.jax_enable_x64 else complex64
    raise TypeError(f"not a Python scalar: {value!r}")


# exact types: np.float64 (a float subclass) is a NumPy scalar, not a weak Python one
PYTHON_SCALAR_TYPES = frozenset((bool, int, float, complex))


def is_python_scalar(value: Any) -> bool:
    return type(value) in PYTHON_SCALAR_TYPES


def kind(dtype: Any) -> str:
    """NumPy's kind letter of `dtype` ('b', 'i', 'u', 'f', 'c'), with bfloat16 as 'f': ml_dtypes
    gives it kind 'V', which every `kind in "fc"` test would take for a non-number."""
    k = dtype.kind
    return "f" if k == "V" and is_bfloat16(dtype) else k


# the abstract NumPy types bfloat16 belongs to (JAX places it under np.floating)
_BF16_PARENTS = (np.floating, np.inexact, np.number, np.generic)


def issubdtype(a: Any, b: Any) -> bool:
    """np.issubdtype, with bfloat16 a subtype of np.floating (as jax.dtypes.issubdtype)."""
    if _names_bfloat16(a):
        return _names_bfloat16(b) or any(b is t for t in _BF16_PARENTS)
    if _names_bfloat16(b):
        return False
    return bool(np.issubdtype(a, b))


def _names_bfloat16(x: Any) -> bool:
    """Whether `x` (a dtype, a scalar type, a name) is bfloat16."""
    if isinstance(x, str):
        return x == "bfloat16"
    if isinstance(x, type):
        return x.__name__ == "bfloat16"
    return is_bfloat16(x)


def is_float(dtype: np.dtype) -> bool:
    return kind(dtype) == "f"


def is_int(dtype: np.dtype) -> bool:
    return dtype.kind in "iu"


def iinfo(dtype: Any) -> np.iinfo:
    return np.iinfo(dtype)


def finfo(dtype: Any) -> Any:
    if is_bfloat16(np.dtype(dtype)):
        import ml_dtypes
        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


# ---------------------------------------------------------------------------------------------
# Python ints that do not fit: an error where NumPy's cast would wrap silently (JAX's
# OverflowError). Two wordings, as JAX has two: a weakly typed int taking the default int
# (`jnp.array(2**40)`, `x + 2**40`), and an int converted to a dtype the caller named
# (`jnp.int32(2**40)`, `jnp.array(2**40, jnp.int32)`: NumPy's message, which JAX passes on).
# ---------------------------------------------------------------------------------------------

def int_too_large(value: int, dtype: np.dtype) -> OverflowError:
    """The error for a weakly typed Python int outside the default int type."""
    return OverflowError(f"Python int {value} too large to convert to {dtype}")


# (min, max) of each integer type, as Python ints: one chained comparison per check
INT_BOUNDS = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max))
              for d in (int8, int16, int32, int64, uint8, uint16, uint32, uint64)}


def check_int_fits(value: int, dtype: np.dtype) -> None:
    """Raise NumPy's OverflowError if the Python int `value` is outside the integer type
    `dtype` (a negative one for an unsigned type included); other dtypes accept any int (a
    float target rounds, or raises Python's own OverflowError beyond float range)."""
    bounds = INT_BOUNDS.get(dtype)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
