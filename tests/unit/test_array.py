"""ember.Array: immutability, `__array__` semantics, attributes, repr/format/pickle,
isinstance under jit, device helpers, operators with NumPy and Python scalars, and every
kind of NumPy input (eager and jit) giving correct results that never alias user memory.
"""

from __future__ import annotations

import copy
import pickle
import typing

import numpy as np
import pytest

import ember
import ember.numpy as jnp

F32 = np.float32


def _arr(*shape: int, dtype=F32) -> ember.Array:
    return ember.device_put(np.arange(int(np.prod(shape))).reshape(shape).astype(dtype))


def test_np_asarray_is_read_only_view_and_copy_semantics():
    a = _arr(2, 3)
    v = np.asarray(a)
    assert not v.flags.writeable
    with pytest.raises(ValueError):
        v[0, 0] = 1
    assert np.asarray(a).__array_interface__["data"][0] == v.__array_interface__["data"][0]
    c = a.__array__(copy=True)
    assert c.flags.writeable and not np.shares_memory(c, v)
    c[0, 0] = 100
    assert float(np.asarray(a)[0, 0]) == 0.0
    assert np.array(a).flags.writeable              # np.array copies by default
    d = np.asarray(a, dtype=np.float64)
    assert d.dtype == np.float64 and np.array_equal(d, v)
    with pytest.raises(ValueError):
        np.asarray(a, dtype=np.float64, copy=False)
    assert np.asarray(a, copy=False) is not None


def test_attributes():
    a = _arr(2, 3)
    assert a.shape == (2, 3) and a.dtype == np.float32 and a.ndim == 2 and a.size == 6
    assert a.T.shape == (3, 2)
    np.testing.assert_array_equal(np.asarray(a.T), np.asarray(a).T)
    assert a.block_until_ready() is a
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert ember.device_put(np.float32(2.5)).item() == 2.5
    assert isinstance(a.item(4), float)
    assert len(a) == 2 and a.nbytes == 24
    with pytest.raises(AttributeError):
        a.shape = (3, 2)


def test_immutable():
    a = _arr(3)
    with pytest.raises((TypeError, AttributeError, ValueError)):
        a[0] = 5
    with pytest.raises(TypeError):
        hash(a)
    assert copy.copy(a) is a and copy.deepcopy(a) is a


def test_repr_like_jax():
    assert repr(ember.device_put(np.array([1.0, 2.0], F32))) == "Array([1., 2.], dtype=float32)"
    assert repr(ember.device_put(np.array([1, 2], np.int32))) == "Array([1, 2], dtype=int32)"
    assert repr(jnp.asarray(1.5)) == "Array(1.5, dtype=float32, weak_type=True)"
    assert repr(ember.device_put(np.zeros((0, 3), np.int8))) == \
        "Array([], shape=(0, 3), dtype=int8)"
    assert repr(_arr(2, 2)) == "Array([[0., 1.],\n       [2., 3.]], dtype=float32)"
    assert str(_arr(2)) == "[0. 1.]"


def test_format():
    x = ember.device_put(np.float32(3.14159))
    assert f"{x:.2f}" == "3.14"
    assert f"{ember.device_put(np.int32(7)):03d}" == "007"


def test_pickle_roundtrip_keeps_dtype_and_weak_type():
    for a in [_arr(2, 3), _arr(5, dtype=np.uint8), jnp.asarray(2.0)]:
        b = pickle.loads(pickle.dumps(a))
        assert isinstance(b, ember.Array)
        assert b.dtype == a.dtype and b.weak_type == a.weak_type and b.shape == a.shape
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))


def test_type_annotation_and_isinstance():
    def f(x: ember.Array) -> ember.Array:
        assert isinstance(x, ember.Array)
        return x * 2

    assert typing.get_type_hints(f)["x"] is ember.Array
    seen = []
    ember.jit(lambda x: seen.append(isinstance(x, ember.Array)) or x)(np.ones(2, F32))
    assert seen == [True]
    assert isinstance(_arr(2), ember.Array)
    assert not isinstance(np.ones(2), ember.Array)


def test_device_helpers():
    devs = ember.devices()
    assert len(devs) == 1 and devs[0].platform == "cpu"
    tree = ember.device_put({"a": np.ones(2, F32), "b": [np.zeros(3, np.int32)]})
    assert isinstance(tree["a"], ember.Array) and isinstance(tree["b"][0], ember.Array)
    assert ember.block_until_ready(tree) is tree
    src = np.ones(3, F32)
    d = ember.device_put(src)
    src[0] = 7
    assert float(np.asarray(d)[0]) == 1.0          # device_put copied


@pytest.mark.parametrize("op", ["add", "sub", "mul", "lt", "eq"])
def test_operators_with_numpy_and_python_scalars(op):
    import operator
    fn = getattr(operator, op)
    a_np = np.arange(1, 7, dtype=F32).reshape(2, 3)
    a = ember.device_put(a_np)
    for other in [2.0, 3, np.float32(2.5), np.arange(3, dtype=F32)]:
        for res, ref in [(fn(a, other), fn(a_np, other)), (fn(other, a), fn(other, a_np))]:
            assert isinstance(res, ember.Array), (op, type(other), type(res))
            np.testing.assert_array_equal(np.asarray(res), ref)
            assert res.dtype == ref.dtype


def _inputs() -> dict[str, np.ndarray]:
    base = np.arange(24, dtype=F32).reshape(4, 6) - 7.5
    ro = base.copy()
    ro.setflags(write=False)
    return {
        "contiguous": base.copy(),
        "non_contiguous": base[:, ::2],
        "fortran": np.asfortranarray(base),
        "negative_strides": base[::-1, ::-2],
        "big_endian": base.astype(">f4"),
        "read_only": ro,
        "zero_size": np.zeros((0, 3), F32),
        "zero_d": np.array(2.5, F32),
        "transposed": base.T,
    }


@pytest.mark.parametrize("kind", list(_inputs()))
def test_any_numpy_input_eager_and_jit(kind):
    x = _inputs()[kind]
    expect = np.sin(x.astype(F32)) * 2 + x.astype(F32)

    def f(v):
        return jnp.sin(v) * 2 + v

    eager = f(x)
    jitted = ember.jit(f)(x)
    for r in (eager, jitted):
        assert r.shape == x.shape and r.dtype == np.float32
        np.testing.assert_allclose(np.asarray(r), expect, rtol=1e-6, atol=1e-6)
    assert np.asarray(eager).tobytes() == np.asarray(jitted).tobytes()


@pytest.mark.parametrize("kind", list(_inputs()))
def test_identity_result_never_aliases_user_memory(kind):
    x = _inputs()[kind]
    if not x.flags.writeable or x.size == 0:
        x = x.copy()
    keep = x.copy()
    outs = [ember.jit(lambda v: v)(x), ember.jit(lambda v: v.reshape(v.shape))(x),
            ember.jit(lambda v: (v, v))(x)[1], jnp.asarray(x)]
    x[...] = 99
    for out in outs:
        np.testing.assert_array_equal(np.asarray(out), keep)
        assert not np.asarray(out).flags.writeable


def test_results_are_immutable():
    r = ember.jit(lambda v: v + 1)(np.ones(3, F32))
    with pytest.raises(ValueError):
        np.asarray(r)[0] = 5


@pytest.mark.parametrize("src", [
    np.arange(3000, dtype=np.float32)[1:],                          # a misaligned view
    np.arange(6000, dtype=np.float64).reshape(60, 100)[:, ::2],     # strided, cast to f32
    np.arange(2048, dtype=np.int64),                                # cast to int32
    np.linspace(-1e40, 1e40, 1500),                                 # f64 beyond f32: +-inf
])
def test_large_user_copies_start_on_a_cache_line(src):
    """A copied user array of ALIGN_MIN_BYTES or more starts on a 64-byte boundary (kernels
    read it with full-width vector loads), with the values and dtype np.array would give."""
    from ember.array import ALIGN, ALIGN_MIN_BYTES

    a = jnp.asarray(src)
    v = np.asarray(a)
    with np.errstate(over="ignore"):
        want = np.array(src, dtype=a.dtype)
    assert v.nbytes >= ALIGN_MIN_BYTES and v.ctypes.data % ALIGN == 0
    assert v.flags.c_contiguous and not v.flags.writeable and not np.shares_memory(v, src)
    np.testing.assert_array_equal(v, want)
    assert v.shape == src.shape
