"""ember.Array / tracer methods and properties, the jnp namespace's hygiene and constants,
dtype functions, and the Array API namespace pieces (__array_namespace_info__, isdtype,
unstack, correction=)."""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from test_numpy_support import check, rand

import ember
import ember.numpy as jnp


def test_namespace_has_no_leaked_helpers():
    for leaked in ("Any", "np", "lax", "dtypes", "annotations", "builtins", "operator",
                   "get_aval", "Tracer", "math", "Sequence", "Callable", "ensure_array",
                   "promote_args", "check_arraylike", "normalize_axes", "ArrayImpl"):
        assert not hasattr(jnp, leaked), leaked
    assert jnp.ndarray is ember.Array
    assert jnp.pi == np.pi and jnp.e == np.e and np.isinf(jnp.inf) and np.isnan(jnp.nan)
    assert jnp.newaxis is None
    assert jnp.__array_api_version__ == "2024.12"


def test_methods_match_numpy():
    x = rand((3, 4), np.float32)
    for name, args, kwargs in [("sum", (), {}), ("sum", (1,), {"keepdims": True}),
                               ("mean", (0,), {}), ("max", (), {}), ("min", (1,), {}),
                               ("prod", (), {}), ("std", (), {"ddof": 1}),
                               ("argmax", (1,), {}), ("argmin", (), {}), ("ptp", (0,), {}),
                               ("all", (), {}), ("any", (0,), {}), ("ravel", (), {}),
                               ("flatten", (), {}), ("transpose", (), {}),
                               ("transpose", (1, 0), {}), ("reshape", (2, 6), {}),
                               ("reshape", ((6, 2),), {}), ("swapaxes", (0, 1), {}),
                               ("clip", (-1, 1), {}), ("round", (1,), {}),
                               ("repeat", (2,), {"axis": 0}), ("diagonal", (), {}),
                               ("trace", (), {}), ("conj", (), {}), ("astype", (np.int32,),
                                                                     {}),
                               ("cumsum", (1,), {}), ("squeeze", (), {})]:
        ref = (lambda a: np.ptp(a, *args)) if name == "ptp" else (
            lambda a: getattr(a, name)(*args, **kwargs))
        check(lambda a: getattr(jnp.asarray(a), name)(*args, **kwargs), ref, x, rtol=1e-5)
    # x.var() eagerly only: under jit the staging tracer's own `var` attribute (its jaxpr
    # variable) shadows the method (a core/staging.py issue).
    np.testing.assert_allclose(jnp.asarray(x).var(1), x.var(1), rtol=1e-5)
    check(lambda a: jnp.asarray(a).T, lambda a: a.T, x)
    check(lambda a: jnp.asarray(a).mT, lambda a: np.swapaxes(a, -1, -2), x)
    check(lambda a: jnp.asarray(a).real, lambda a: a.real, x)
    check(lambda a: jnp.asarray(a).imag, lambda a: a.imag, x)
    m = rand((3, 4), np.bool_, 3)
    check(lambda a, w: jnp.asarray(a).mean(where=w), lambda a, w: a.mean(where=w), x, m,
          rtol=1e-5)
    check(lambda a: jnp.asarray(a).sort(axis=1), lambda a: np.sort(a, axis=1), x)
    check(lambda a: jnp.asarray(a).argsort(axis=0), lambda a: np.argsort(a, axis=0,
                                                                        kind="stable"), x)
    check(lambda a: jnp.asarray(a).take(np.array([0, 2])), lambda a: a.take([0, 2]), x)


def test_item_tolist_copy_view():
    x = jnp.arange(6, dtype=jnp.int32).reshape(2, 3)
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert jnp.float32(2.5).item() == 2.5
    assert x.copy() is not None and np.array_equal(x.copy(), x)
    f = np.array([1.0, -2.0], np.float32)
    check(lambda a: jnp.asarray(a).view(jnp.int32), lambda a: a.view(np.int32), f)
    check(lambda a: jnp.asarray(a).view(jnp.uint16), lambda a: a.view(np.uint16), f)
    check(lambda a: jnp.asarray(a).view(jnp.float32),
          lambda a: a.view(np.float32), np.arange(4, dtype=np.uint16))
    with pytest.raises(ember.ConcretizationTypeError):
        ember.jit(lambda a: a.item())(f)


def test_array_namespace_info():
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float32
    assert info.default_dtypes()["integral"] == np.int32
    assert "float32" in info.dtypes() and "float64" not in info.dtypes()
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "uint8", "uint16",
                                                 "uint32"}
    assert info.devices() and info.default_device() == info.devices()[0]
    assert info.capabilities()["boolean indexing"] is False
    assert jnp.asarray(1.0).__array_namespace__() is jnp


def test_array_namespace_info_x64(x64):
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64
    assert "int64" in info.dtypes()


def test_dtype_functions():
    assert jnp.isdtype(jnp.float32, "real floating")
    assert jnp.isdtype(jnp.int8, ("bool", "integral"))
    assert not jnp.isdtype(jnp.uint8, "signed integer")
    assert jnp.isdtype(np.dtype("int16"), jnp.int16)
    with pytest.raises(ValueError):
        jnp.isdtype(jnp.int8, "bogus")
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.issubdtype(jnp.int8, jnp.integer) and not jnp.issubdtype(jnp.int8, jnp.floating)
    assert jnp.can_cast(jnp.int8, jnp.int32) and not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
    assert jnp.iinfo(jnp.uint8).max == 255
    assert jnp.promote_types(jnp.uint8, jnp.int8) == np.int16


def test_array_api_names():
    x = rand((3, 4), np.float32)
    check(lambda a: jnp.acos(jnp.clip(a, -1, 1)), lambda a: np.arccos(np.clip(a, -1, 1)), x,
          rtol=2e-6)
    check(lambda a: jnp.pow(a, 2.0), lambda a: a ** 2.0, x, rtol=1e-6)
    check(lambda a: jnp.bitwise_invert(a), np.invert, rand((5,), np.int8))
    check(lambda a: jnp.bitwise_left_shift(a, 2), lambda a: a << 2, rand((5,), np.uint8))
    check(lambda a: jnp.unstack(a), lambda a: tuple(a), x)
    check(lambda a: jnp.std(a, correction=1), lambda a: np.std(a, ddof=1), x, rtol=1e-5)
    check(lambda a: jnp.var(a, 0, correction=0), lambda a: np.var(a, 0), x, rtol=1e-5)
    check(lambda a: jnp.clip(a, min=-0.5, max=0.5), lambda a: np.clip(a, -0.5, 0.5), x)
    check(jnp.trunc, np.trunc, x)
    check(lambda a: jnp.astype(a, jnp.int8), lambda a: a.astype(np.int8), x)
    check(lambda a: jnp.concat([a, a], axis=1), lambda a: np.concatenate([a, a], 1), x)
    np.testing.assert_array_equal(jnp.from_dlpack(x), x)
