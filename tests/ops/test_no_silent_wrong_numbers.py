"""No silently wrong number (issue 24): Python ints that do not fit raise JAX's
OverflowError at every entry (creation, operands, jit arguments, scalar types, `.at[]`
values), the edge values of each type are accepted, a 64-bit dtype asked for with x64 off
warns as in JAX, and ember's scalar types compare with anything without raising.

The expected texts are JAX 0.10.2's (NumPy 2's where JAX passes NumPy's error on).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import ember
import ember.numpy as jnp

INT_TYPES = [jnp.int8, jnp.int16, jnp.int32, jnp.uint8, jnp.uint16, jnp.uint32]


def _too_large(value: int, dtype: str = "int32") -> str:
    return re.escape(f"Python int {value} too large to convert to {dtype}")


def _out_of_bounds(value: int, dtype: str) -> str:
    return re.escape(f"Python integer {value} out of bounds for {dtype}")


# ---------------------------------------------------------------------------------------------
# Scalar types compare with anything
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("other", [object(), None, 1, 1.5, [1, 2], (1, 2), {"a": 1},
                                   "abc", "i4,(", "M8[bogus]", ValueError])
def test_scalar_type_compares_with_anything(other):
    assert (jnp.float32 == other) is False
    assert (jnp.float32 != other) is True


def test_scalar_type_compares_with_an_array():
    # NumPy's reflected comparison answers elementwise, as with NumPy's own scalar types
    np.testing.assert_array_equal(jnp.float32 == np.array([1, 2]), [False, False])


def test_scalar_type_equalities_kept():
    assert jnp.float32 == np.float32 and jnp.float32 == np.dtype("float32")
    assert jnp.float32 == "float32" and jnp.int32 == jnp.int32 and jnp.float32 != jnp.int32
    assert np.dtype("float32") == jnp.float32
    assert {jnp.float32: 1}[np.dtype("float32")] == 1  # the hash is the dtype's


# ---------------------------------------------------------------------------------------------
# Python ints out of range
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [jnp.array, jnp.asarray, lambda v: jnp.array(v, ndmin=1)])
@pytest.mark.parametrize("value", [2 ** 31, 2 ** 40, -2 ** 31 - 1, 2 ** 64, 2 ** 100])
def test_weak_int_creation_overflows(make, value):
    with pytest.raises(OverflowError, match=_too_large(value)):
        make(value)


@pytest.mark.parametrize("value", [2 ** 31 - 1, -2 ** 31, 0, -1])
def test_default_int_edges_accepted(value):
    out = jnp.array(value)
    assert out.dtype == np.int32 and int(out) == value
    assert int(ember.jit(lambda x: x)(value)) == value


def test_weak_int_x64(x64):
    assert int(jnp.array(2 ** 40)) == 2 ** 40
    assert int(jnp.array(2 ** 63 - 1)) == 2 ** 63 - 1
    with pytest.raises(OverflowError, match=_too_large(2 ** 63, "int64")):
        jnp.array(2 ** 63)


@pytest.mark.parametrize("op", [lambda x, v: x + v, lambda x, v: v + x, lambda x, v: x * v,
                                lambda x, v: x == v, lambda x, v: x < v, jnp.maximum,
                                lambda x, v: jnp.where(True, x, v),
                                lambda x, v: jnp.clip(x, 0, v)])
@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint32, jnp.float32, jnp.bool_])
def test_binary_operand_overflows(op, dtype):
    # As JAX: a weakly typed int operand must fit the default int, whatever the other
    # operand's dtype (JAX rejects f32 + 2**40 and u32 + 2**32 - 1 too).
    x = jnp.ones(2, dtype)
    with pytest.raises(OverflowError, match=_too_large(2 ** 40)):
        op(x, 2 ** 40)
    # (where and clip are nested jits under a trace, as in JAX: the int is then a jitted
    # function's argument, and JAX's text for that names its path)
    jitted = (f"{_too_large(2 ** 40)}|An overflow was encountered while parsing an argument "
              "to a jitted computation, whose argument path is (y|max)\\. Got <class 'int'> "
              "with value 1099511627776")
    with pytest.raises(OverflowError, match=jitted):
        ember.jit(lambda a: op(a, 2 ** 40))(x)


def test_binary_operand_edges():
    x = jnp.ones(2, jnp.int32)
    np.testing.assert_array_equal(x * -2 ** 31, [-2 ** 31] * 2)
    np.testing.assert_array_equal(x + (2 ** 31 - 2), [2 ** 31 - 1] * 2)
    np.testing.assert_array_equal(jnp.ones(2, jnp.float32) + 2 ** 30, [2.0 ** 30] * 2)
    np.testing.assert_array_equal(jnp.ones(2, jnp.bool_) + 2, [3, 3])


def test_jit_argument_overflow_names_the_argument():
    f = ember.jit(lambda x, y: x + y)
    msg = ("An overflow was encountered while parsing an argument to a jitted computation, "
           "whose argument path is y. Got <class 'int'> with value 1099511627776")
    with pytest.raises(OverflowError, match=re.escape(msg)):
        f(1, 2 ** 40)
    g = ember.jit(lambda p: p["w"] + 1)
    with pytest.raises(OverflowError, match=re.escape("argument path is p['w']")):
        g({"w": -2 ** 31 - 1})
    assert int(f(1, 2 ** 31 - 2)) == 2 ** 31 - 1


@pytest.mark.parametrize("t", INT_TYPES)
def test_scalar_types_edges_and_overflow(t):
    info = np.iinfo(t.dtype)
    assert int(t(int(info.max))) == info.max and int(t(int(info.min))) == info.min
    for bad in (int(info.max) + 1, int(info.min) - 1):
        with pytest.raises(OverflowError, match=_out_of_bounds(bad, t.dtype.name)):
            t(bad)
        with pytest.raises(OverflowError, match=_out_of_bounds(bad, t.dtype.name)):
            jnp.array(bad, dtype=t)
        with pytest.raises(OverflowError, match=_out_of_bounds(bad, t.dtype.name)):
            jnp.array([0, bad], dtype=t)
        with pytest.raises(OverflowError, match=_out_of_bounds(bad, t.dtype.name)):
            jnp.full(2, bad, t)
        with pytest.raises(OverflowError, match=_out_of_bounds(bad, t.dtype.name)):
            jnp.full_like(jnp.zeros(2, t), bad)


def test_unsigned_rejects_negatives():
    with pytest.raises(OverflowError, match=_out_of_bounds(-1, "uint32")):
        jnp.uint32(-1)
    with pytest.raises(OverflowError, match=_out_of_bounds(-1, "uint8")):
        jnp.uint8(-1)


def test_int64_request_narrowed_is_checked_against_int32():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(OverflowError, match=_out_of_bounds(2 ** 40, "int32")):
            jnp.array(2 ** 40, jnp.int64)
        with pytest.raises(OverflowError, match=_out_of_bounds(2 ** 40, "int32")):
            jnp.int64(2 ** 40)


def test_lists_of_ints():
    with pytest.raises(OverflowError, match=_out_of_bounds(2 ** 40, "int32")):
        jnp.array([1, 2 ** 40])
    with pytest.raises(OverflowError, match=_out_of_bounds(-2 ** 31 - 1, "int32")):
        jnp.array([[1], [-2 ** 31 - 1]])
    np.testing.assert_array_equal(jnp.array([2 ** 31 - 1, -2 ** 31]), [2 ** 31 - 1, -2 ** 31])
    assert float(jnp.array([2 ** 40], jnp.float32)[0]) == 2.0 ** 40


def test_float_and_bool_targets():
    assert float(jnp.array(2 ** 40, jnp.float32)) == 2.0 ** 40
    assert float(jnp.float32(2 ** 40)) == 2.0 ** 40
    assert float(jnp.full(2, 2 ** 40, jnp.float32)[0]) == 2.0 ** 40
    assert float(jnp.float32(2 ** 200)) == np.inf  # in float range: rounds to inf, as JAX
    with pytest.raises(OverflowError, match="int too large to convert to float"):
        jnp.float32(2 ** 1100)
    assert bool(jnp.array(2 ** 40, jnp.bool_)) is True


def test_weak_fill_and_index_update():
    with pytest.raises(OverflowError, match=_too_large(2 ** 40)):
        jnp.full(2, 2 ** 40)
    x = jnp.ones(2, jnp.int32)
    with pytest.raises(OverflowError, match=_too_large(2 ** 40)):
        x.at[0].set(2 ** 40)
    np.testing.assert_array_equal(x.at[0].set(-2 ** 31), [-2 ** 31, 1])


def test_index_update_of_uint32_takes_uint32_python_ints():
    # Found by the fuzzer (ember.testing): JAX takes a Python int that fits the array's
    # uint32 (but not the default int32) into it; only ints outside both raise.
    u = jnp.array([1, 2], jnp.uint32)
    for f in (lambda u: u.at[0].set(2 ** 32 - 1), ember.jit(lambda u: u.at[0].set(2 ** 32 - 1))):
        np.testing.assert_array_equal(f(u), np.array([2 ** 32 - 1, 2], np.uint32))
    np.testing.assert_array_equal(u.at[1].add(2 ** 31), np.array([1, 2 ** 31 + 2], np.uint32))
    with pytest.raises(OverflowError, match=_too_large(2 ** 40)):
        u.at[0].set(2 ** 40)
    with pytest.raises(OverflowError, match=_too_large(2 ** 32 - 1)):
        jnp.array([1], jnp.uint8).at[0].set(2 ** 32 - 1)


def test_lax_convert_keeps_xla_semantics():
    # lax.convert_element_type of a Python int converts to the type named, as in JAX
    # (2**40 to f32 is exact; to an int type it wraps, XLA's conversion).
    assert float(ember.lax.convert_element_type(2 ** 40, jnp.float32)) == 2.0 ** 40
    assert int(ember.lax.convert_element_type(2 ** 40 + 5, jnp.int32)) == 5


# ---------------------------------------------------------------------------------------------
# The dtype-truncation warning
# ---------------------------------------------------------------------------------------------

_TRUNCATED = ("Explicitly requested dtype {req} requested in {fname} is not available, and "
              "will be truncated to dtype {out}. To enable more dtypes, set the jax_enable_x64 "
              "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
              "https://github.com/jax-ml/jax#current-gotchas for more.")

_WARNING_CASES = [
    ("zeros", lambda d: jnp.zeros(3, dtype=d)),
    ("ones", lambda d: jnp.ones(3, d)),
    ("empty", lambda d: jnp.empty(3, d)),
    ("full", lambda d: jnp.full(2, 1, d)),
    ("zeros_like", lambda d: jnp.zeros_like(jnp.ones(2), dtype=d)),
    ("ones_like", lambda d: jnp.ones_like(jnp.ones(2), dtype=d)),
    ("full_like", lambda d: jnp.full_like(jnp.ones(2), 1, dtype=d)),
    ("array", lambda d: jnp.array([1], dtype=d)),
    ("asarray", lambda d: jnp.asarray([1], dtype=d)),
    ("arange", lambda d: jnp.arange(3, dtype=d)),
    ("linspace", lambda d: jnp.linspace(0, 1, 3, dtype=d)),
    ("eye", lambda d: jnp.eye(2, dtype=d)),
    ("identity", lambda d: jnp.identity(2, dtype=d)),
    ("tri", lambda d: jnp.tri(2, dtype=d)),
    ("astype", lambda d: jnp.ones(2).astype(d)),
]


@pytest.mark.parametrize("fname,make", _WARNING_CASES, ids=[c[0] for c in _WARNING_CASES])
@pytest.mark.parametrize("req,out", [(jnp.float64, "float32"), ("float64", "float32"),
                                     (np.int64, "int32"), (jnp.uint64, "uint32")])
def test_truncation_warning_once(fname, make, req, out):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = make(req)
    msgs = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    req_name = np.dtype(req).name
    assert msgs == [_TRUNCATED.format(req=req_name, fname=fname, out=out)]
    assert result.dtype == np.dtype(out)


def test_scalar_type_warns_as_asarray():
    with pytest.warns(UserWarning, match="requested in asarray"):
        jnp.float64(1)


@pytest.mark.parametrize("dtype", [float, int, complex, None, jnp.float32, "int32", bool])
def test_no_warning_for_default_or_narrow_types(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.zeros(3, dtype)
        jnp.array([1], dtype=dtype)


def test_no_warning_under_x64(x64):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.zeros(3, jnp.float64).dtype == np.float64
        assert jnp.int64(2 ** 40).dtype == np.int64
