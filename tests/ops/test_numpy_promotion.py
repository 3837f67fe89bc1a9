"""`(x + y).dtype` and weak_type against JAX's documented type promotion table
(docs.jax.dev "Type promotion semantics"), for every pair of dtypes plus Python int/float
weak scalars, under 32-bit defaults and under x64; also jnp.promote_types/result_type."""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp

# JAX's binary promotion table, restricted to the types Ember supports (rows and columns in
# this order). "i*"/"f*" are weakly typed Python int/float; a weak entry in the table means
# the result is weakly typed with the default int/float dtype.
_NAMES = ["b1", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f2", "f4", "f8", "i*", "f*"]
_TABLE = """
b1 b1 u1 u2 u4 u8 i1 i2 i4 i8 f2 f4 f8 i* f*
u1 u1 u1 u2 u4 u8 i2 i2 i4 i8 f2 f4 f8 u1 f*
u2 u2 u2 u2 u4 u8 i4 i4 i4 i8 f2 f4 f8 u2 f*
u4 u4 u4 u4 u4 u8 i8 i8 i8 i8 f2 f4 f8 u4 f*
u8 u8 u8 u8 u8 u8 f* f* f* f* f2 f4 f8 u8 f*
i1 i1 i2 i4 i8 f* i1 i2 i4 i8 f2 f4 f8 i1 f*
i2 i2 i2 i4 i8 f* i2 i2 i4 i8 f2 f4 f8 i2 f*
i4 i4 i4 i4 i8 f* i4 i4 i4 i8 f2 f4 f8 i4 f*
i8 i8 i8 i8 i8 f* i8 i8 i8 i8 f2 f4 f8 i8 f*
f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f2 f4 f8 f2 f2
f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f4 f8 f4 f4
f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8 f8
i* i* u1 u2 u4 u8 i1 i2 i4 i8 f2 f4 f8 i* f*
f* f* f* f* f* f* f* f* f* f* f2 f4 f8 f* f*
"""
TABLE = {}
for _line in _TABLE.strip().splitlines():
    _row, *_cells = _line.split()
    TABLE.update({(_row, c): v for c, v in zip(_NAMES, _cells)})

_DT = {"b1": np.bool_, "u1": np.uint8, "u2": np.uint16, "u4": np.uint32, "u8": np.uint64,
       "i1": np.int8, "i2": np.int16, "i4": np.int32, "i8": np.int64, "f2": np.float16,
       "f4": np.float32, "f8": np.float64}
_SMALL = ["b1", "u1", "u2", "u4", "i1", "i2", "i4", "f2", "f4", "i*", "f*"]
_X64 = ["i8", "u8", "f8"]


def _value(name):
    if name == "i*":
        return 3
    if name == "f*":
        return 1.5
    return np.ones((2,), _DT[name])


def _expected(a, b, x64):
    res = TABLE[(a, b)]
    if res in ("i*", "f*"):
        dt = {"i*": np.int64 if x64 else np.int32, "f*": np.float64 if x64 else np.float32}
        return np.dtype(dt[res]), True
    dt = np.dtype(_DT[res])
    if not x64:
        dt = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
              np.dtype(np.float64): np.dtype(np.float32)}.get(dt, dt)
    return dt, False


def _check_pair(a, b, x64):
    x, y = _value(a), _value(b)
    want_dtype, want_weak = _expected(a, b, x64)
    # bool + bool is a logical or in jnp.add; the dtype rule is the same.
    out = jnp.add(x, y)
    assert (out.dtype, out.weak_type) == (want_dtype, want_weak), (a, b, out)
    traced = ember.jit(lambda u, v: jnp.add(u, v))(x, y)
    assert (traced.dtype, traced.weak_type) == (want_dtype, want_weak), (a, b, traced)
    if a not in ("i*", "f*") and b not in ("i*", "f*"):
        assert jnp.promote_types(_DT[a], _DT[b]) == want_dtype
    assert jnp.result_type(x, y) == want_dtype


@pytest.mark.parametrize("a", _SMALL)
def test_promotion_table_32bit(a):
    for b in _SMALL:
        _check_pair(a, b, x64=False)


@pytest.mark.parametrize("a", _SMALL + _X64)
def test_promotion_table_x64(a, x64):
    for b in _SMALL + _X64:
        _check_pair(a, b, x64=True)


def test_64bit_inputs_canonicalize_without_x64():
    # Without x64, NumPy 64-bit inputs become 32-bit, so i64 + u8 is i32, u64 + i8 is the
    # promotion of u32 and i8 (i64 -> i32).
    assert jnp.add(np.ones(2, np.int64), np.ones(2, np.uint8)).dtype == np.int32
    assert jnp.add(np.ones(2, np.uint64), np.ones(2, np.int8)).dtype == np.int32
    assert jnp.add(np.ones(2, np.float64), 1).dtype == np.float32


def test_weak_scalar_operators_keep_dtype():
    x = jnp.ones(3, jnp.uint8)
    assert (x + 1).dtype == np.uint8 and (2 * x).dtype == np.uint8
    assert (x * 1.5).dtype == np.float32 and (x * 1.5).weak_type
    h = jnp.ones(3, jnp.float16)
    assert (h + 1.0).dtype == np.float16 and not (h + 1.0).weak_type
    assert (jnp.int8(3) + 200).dtype == np.int8


def test_result_type_of_python_types_and_dtypes():
    assert jnp.result_type(jnp.int8, int) == np.int8
    assert jnp.result_type(jnp.uint8, float) == np.float32
    assert jnp.result_type(bool, jnp.int16) == np.int16
    assert jnp.result_type("float16", jnp.int32) == np.float16
    assert jnp.result_type(jnp.float32, jnp.int64) == np.float32


_ALL_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]
# jnp.promote_types is the lattice's join, not narrowed to 32 bits (JAX 0.10.2's answers;
# with x64 off JAX's lattice meets uint32 and a signed int at int32). Rows: a; columns: b.
_JOIN_ROWS = {
    "int8":   "i8 i8 i16 i32 i64 i16 i32 X f64 f16 f32 f64 c64 c128",
    "uint32": "u32 X X X i64 u32 u32 u32 u64 f16 f32 f64 c64 c128",
    "uint64": "u64 f64 f64 f64 f64 u64 u64 u64 u64 f16 f32 f64 c64 c128",
    "int64":  "i64 i64 i64 i64 i64 i64 i64 i64 f64 f16 f32 f64 c64 c128",
    "float64": "f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 f64 c128 c128",
}
_SHORT = {"bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
          "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16",
          "f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}


@pytest.mark.parametrize("x64", [False, True])
def test_promote_types_is_the_unnarrowed_join(x64):
    prev = ember.config.jax_enable_x64
    ember.config.update("jax_enable_x64", x64)
    try:
        for a, row in _JOIN_ROWS.items():
            for b, want in zip(_ALL_NAMES, row.split()):
                if want == "X":  # uint32 with int8/16/32: int64 in the x64 lattice only
                    want = "i64" if x64 else "i32"
                got = jnp.promote_types(a, b)
                assert got == np.dtype(_SHORT[want]), (a, b, got, want)
                assert jnp.promote_types(b, a) == got
    finally:
        ember.config.update("jax_enable_x64", prev)
