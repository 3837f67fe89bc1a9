"""ember.dtypes against jax.dtypes (JAX 0.10.2): canonicalization, the subtype relation
(bfloat16, float0, typed keys), promotion with weak scalars, scalar types, bit sizes."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import dtypes as ed

jax = pytest.importorskip("jax")
jd = jax.dtypes

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128, "bfloat16"]
ABSTRACT = [np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
            np.inexact, np.floating, np.complexfloating, np.bool_, np.float32]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_canonicalize_dtype_matches_jax(dtype: object) -> None:
    assert ed.canonicalize_dtype(dtype) == jd.canonicalize_dtype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_issubdtype_matches_jax(dtype: object) -> None:
    for parent in ABSTRACT + [jd.bfloat16]:
        assert ed.issubdtype(dtype, parent) == jd.issubdtype(dtype, parent), (dtype, parent)
    assert not ed.issubdtype(dtype, ed.prng_key) and not ed.issubdtype(dtype, ed.extended)


def test_key_dtypes_are_extended_prng_keys() -> None:
    key = ember.random.key(0)
    assert ed.issubdtype(key.dtype, ed.prng_key) and ed.issubdtype(key.dtype, ed.extended)
    assert not ed.issubdtype(key.dtype, np.floating)
    assert ed.canonicalize_dtype(key.dtype, allow_extended_dtype=True) == key.dtype
    with pytest.raises(ValueError, match="extended dtype"):
        ed.canonicalize_dtype(key.dtype)
    assert ed.issubdtype(ed.float0, np.void) and ed.float0 == jd.float0


@pytest.mark.parametrize("args", [(1, 2.0), (np.int8, 1), (jnp.ones(2, jnp.int8), 2.5),
                                  (np.float16, np.int32), (1j, np.float32), (True, 1),
                                  (np.uint8, np.int8), ("bfloat16", np.float16)], ids=str)
def test_result_type_matches_jax(args: tuple) -> None:
    jargs = [jax.numpy.ones(2, jax.numpy.int8) if isinstance(a, ember.Array) else a
             for a in args]
    assert ed.result_type(*args) == jd.result_type(*jargs)
    assert (ed.result_type(*args, return_weak_type_flag=True)
            == jd.result_type(*jargs, return_weak_type_flag=True))
    with pytest.raises(ValueError):
        ed.result_type()


def test_scalar_type_of_itemsize_bits_finfo_iinfo() -> None:
    for x in (True, 3, 2.5, 1j, np.int8(1), np.float16(1), np.complex64(1)):
        assert ed.scalar_type_of(x) is jd.scalar_type_of(x)
    assert ed.scalar_type_of(jnp.ones(2, jnp.int32)) is int
    with pytest.raises(TypeError, match="not a valid array type"):
        ed.scalar_type_of(np.array(["a"]))
    for d in DTYPES:
        assert ed.itemsize_bits(d) == jd.itemsize_bits(d), d
    assert ed.bfloat16 is jd.bfloat16
    assert ed.finfo(ed.bfloat16).eps == jd.finfo(jd.bfloat16).eps
    assert ed.finfo(np.float16).tiny == jd.finfo(np.float16).tiny
    assert ed.iinfo(np.int8).min == jd.iinfo(np.int8).min
    assert issubclass(ed.TypePromotionError, ValueError)
