"""The answers eager dispatch keeps (dtypes.canonicalize, dtypes.promote, the output types
of eager primitives) follow the x64 flag and the params, and never keep a failure."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.core import dtypes, trace
from ember.core.aval import ShapedArray
from ember.prims.elementwise import add_p


def test_canonicalize_and_promote_follow_x64(x64):
    strong_int_weak_float = ((np.dtype("int32"), False), (np.dtype("float32"), True))
    ember.config.update("jax_enable_x64", False)
    assert dtypes.canonicalize(np.float64) == np.float32
    assert dtypes.promote(*strong_int_weak_float) == (np.float32, True)
    ember.config.update("jax_enable_x64", True)
    assert dtypes.canonicalize(np.float64) == np.float64
    assert dtypes.canonicalize("int64") == np.int64
    assert dtypes.promote(*strong_int_weak_float) == (np.float64, True)  # the weak default
    ember.config.update("jax_enable_x64", False)
    assert dtypes.canonicalize(np.float64) == np.float32
    assert dtypes.canonicalize("int64") == np.int32
    assert dtypes.promote(*strong_int_weak_float) == (np.float32, True)


def test_eager_results_follow_x64(x64):
    ember.config.update("jax_enable_x64", False)
    assert (jnp.ones(3) + 1.5).dtype == np.float32
    ember.config.update("jax_enable_x64", True)
    assert (jnp.ones(3) + 1.5).dtype == np.float64
    assert jnp.arange(3).dtype == np.int64
    ember.config.update("jax_enable_x64", False)
    assert (jnp.ones(3) + 1.5).dtype == np.float32
    assert jnp.arange(3).dtype == np.int32


def test_unsupported_dtype_raises_every_time():
    for _ in range(2):
        with pytest.raises(TypeError, match="does not support the dtype"):
            dtypes.canonicalize(np.dtype("datetime64[s]"))


def test_output_types_depend_on_params():
    x = jnp.ones((2, 3), np.float32)
    assert jnp.sum(x, axis=0).shape == (3,)
    assert jnp.sum(x, axis=1).shape == (2,)
    assert lax.convert_element_type(x, np.int32).dtype == np.int32
    assert lax.convert_element_type(x, np.uint8).dtype == np.uint8
    assert lax.convert_element_type(x, np.float32).dtype == np.float32


def test_weak_and_strong_operands_are_different_questions():
    weak = lax.add(jnp.ones(3, np.float32), 1.0)  # a Python float stays weak
    assert not weak.aval.weak_type
    both_weak = lax.add(jnp.asarray(2.0), 1.0)
    assert both_weak.aval.weak_type
    assert lax.add(jnp.asarray(2.0), jnp.asarray(1.0, np.float32)).aval.weak_type is False


def test_a_bad_call_raises_with_its_line_each_time():
    x = jnp.ones(3, np.float32)
    y = jnp.ones(4, np.float32)
    for _ in range(2):
        with pytest.raises(TypeError, match="test_eager_dispatch_cache.py"):
            add_p.bind(x, y)
    assert add_p.bind(x, x).shape == (3,)


def test_kept_answers_are_bounded_and_not_shared_lists(monkeypatch):
    monkeypatch.setattr(trace, "_EAGER_AVALS_MAX", 4)
    for n in range(1, 12):
        assert (jnp.ones(n, np.float32) * 2.0).shape == (n,)
    assert len(trace._EAGER_AVALS) <= 4
    # a primitive with several results gets a fresh list each time
    x = jnp.arange(6.0, dtype=np.float32).reshape(2, 3)
    a = jnp.split(x, 3, axis=1)
    b = jnp.split(x, 3, axis=1)
    assert [v.shape for v in a] == [v.shape for v in b] == [(2, 1)] * 3


def test_params_that_are_not_plain_values_are_evaluated_each_time():
    assert trace._plain_key(lambda: 0) is None
    assert trace._plain_key((1, (2, np.dtype("f4")), None)) is not None
    assert trace._plain_key((1, [2])) is None
    # True and 1 are equal and hash alike, but are different params
    assert trace._plain_key(True) != trace._plain_key(1)


def test_promotion_shortcut_keeps_jax_semantics(x64):
    from ember.numpy import _promote

    x = jnp.ones(3, np.float32)
    m = jnp.ones((2, 3), np.float32)
    assert _promote._already_promoted((x, x, jnp.asarray(np.float32(2))))
    assert not _promote._already_promoted((x, m))  # ranks differ: rank promotion decides
    assert not _promote._already_promoted((x, jnp.ones(3, np.int32)))
    assert not _promote._already_promoted((x, 2.0))
    assert not _promote._already_promoted((jnp.asarray(2.0), jnp.asarray(3.0)))  # weak
    assert (x + jnp.ones(3, np.int32)).dtype == np.float32
    assert (x + m).shape == (2, 3)
    ember.config.update("jax_numpy_rank_promotion", "raise")
    try:
        with pytest.raises(ValueError, match="rank_promotion"):
            jnp.add(x, m)
        assert jnp.add(x, x).shape == (3,)
    finally:
        ember.config.update("jax_numpy_rank_promotion", "allow")
    ember.config.update("jax_enable_x64", True)
    wide = jnp.ones(3, np.float64)
    assert _promote._already_promoted((wide, wide))
    ember.config.update("jax_enable_x64", False)
    # a float64 Array made under x64 is not canonical any more: the full path narrows it
    assert not _promote._already_promoted((wide, wide))
    assert (wide + wide).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("enable_x64", [False, True])
def test_python_float_conversion_shortcut_matches_the_general_path(dtype, enable_x64, x64):
    import warnings

    ember.config.update("jax_enable_x64", enable_x64)
    want = dtypes.canonicalize(dtype)
    values = [0.0, -0.0, 0.1, -2.5, 1e-40, 1e-300, 65504.0, 65520.0, 7e4, 3.4028235e38,
              3.5e38, 1e300, float("inf"), float("-inf"), float("nan")]
    for weak in (False, True):
        for v in values:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # overflow converts quietly, as XLA does
                fast = lax.convert_element_type(v, dtype, weak)
                general = lax.convert_element_type(np.float64(v), dtype, weak)
            assert fast.dtype == general.dtype == want
            assert fast.aval.weak_type is weak
            assert fast.shape == ()
            assert np.asarray(fast).tobytes() == np.asarray(general).tobytes(), v
            assert not np.asarray(fast).flags.writeable


def test_python_scalar_avals_follow_type_and_x64(x64):
    from ember.core.trace import get_aval

    ember.config.update("jax_enable_x64", False)
    assert get_aval(1.5) == ShapedArray((), np.float32, True)
    assert get_aval(3) == ShapedArray((), np.int32, True)
    assert get_aval(True) == ShapedArray((), np.bool_, False)
    assert get_aval(1j) == ShapedArray((), np.complex64, True)
    assert get_aval(np.float64(1.5)) == ShapedArray((), np.float32, False)  # not weak
    ember.config.update("jax_enable_x64", True)
    assert get_aval(1.5) == ShapedArray((), np.float64, True)
    assert get_aval(3) == ShapedArray((), np.int64, True)
    assert get_aval(np.float64(1.5)) == ShapedArray((), np.float64, False)
    ember.config.update("jax_enable_x64", False)
    assert get_aval(1.5) == ShapedArray((), np.float32, True)


@pytest.mark.parametrize("dtype", sorted(dtypes.SUPPORTED, key=str)
                         + [np.dtype(np.complex64), np.dtype(np.complex128), np.dtype(">f4")])
@pytest.mark.parametrize("shape", [(5,), (0,), (3, 0), (2, 3), (1, 3)])
def test_operand_broadcast_matches_numpy(dtype, shape):
    from ember.prims.elementwise import _broadcast_all

    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape).astype(dtype)
    scalar = np.asarray(np.array(7, dtype))
    row = np.ones((3,), dtype)[: shape[-1]] if shape[-1] <= 3 else np.ones(shape[-1:], dtype)
    for args in [(x, scalar), (scalar, x), (x, row, scalar)]:
        got = _broadcast_all(*args)
        want = np.broadcast_arrays(*args)
        for g, w, a in zip(got, want, args):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
            if g.shape != a.shape:  # a stretched operand is a read-only view
                assert not g.flags.writeable


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32,
                                   np.int64, np.uint8, np.uint32, np.uint64, np.bool_])
@pytest.mark.parametrize("enable_x64", [False, True])
def test_python_int_conversion_shortcut_matches_the_general_path(dtype, enable_x64, x64):
    ember.config.update("jax_enable_x64", enable_x64)
    want = dtypes.canonicalize(dtype)
    values = [0, 1, -1, 2, 127, 128, 255, 256, -129, 2047, 2048, 2049, 65504, 2 ** 24,
              2 ** 24 + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 3, 2 ** 53 + 1, -(2 ** 63)]
    for weak in (False, True):
        for v in values:
            with np.errstate(all="ignore"):
                general = lax.convert_element_type(np.int64(v), dtype, weak)
            fast = lax.convert_element_type(v, dtype, weak)
            assert fast.dtype == general.dtype == want
            assert fast.aval.weak_type is weak
            assert np.asarray(fast).tobytes() == np.asarray(general).tobytes(), v
