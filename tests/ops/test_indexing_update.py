"""`x.at[idx]` updates, `jnp.take` and `jnp.take_along_axis` against NumPy references.

References: `np.add.at` / `np.multiply.at` / `np.minimum.at` / `np.maximum.at` (which
accumulate duplicates in order, as scatter does) and plain assignment for `.set` (the last
duplicate wins). Out-of-bounds: `.at` updates drop them, `take` fills them.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_indexing import DTYPES, X64_DTYPES, same_bits, sample

import ember
import ember.numpy as jnp

UFUNC_AT = {"add": np.add, "multiply": np.multiply, "mul": np.multiply, "min": np.minimum,
            "max": np.maximum}


def reference_update(x, idx, values, method):
    out = x.copy()
    values = np.asarray(values).astype(x.dtype)
    if method == "set":
        out[idx] = values
    else:
        target = np.broadcast_to(values, x[idx].shape)
        with np.errstate(all="ignore"):
            UFUNC_AT[method].at(out, idx, target)
    return out


def check_update(x, idx, values, method, **kw):
    want = reference_update(x, idx, values, method)
    got = getattr(jnp.asarray(x).at[idx], method)(values, **kw)
    jitted = ember.jit(lambda a, v: getattr(a.at[idx], method)(v, **kw))(x, values)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.asarray(got).dtype == x.dtype
    assert same_bits(got, jitted), (idx, method)


UPDATE_INDICES = [
    0, -1, (1, 2), slice(1, 4), slice(None, None, -2), (slice(None), 3), (Ellipsis, 1),
    (None, 2), np.array([0, 4, 1]), (np.array([0, 1]), np.array([6, -7])),
    (slice(None, None, 2), np.array([1, 2])), (np.array([[0], [3]]), slice(2, 5)),
    (np.array([0, 1]), None, np.array([1, 2])), (1, slice(None), None),
]


@pytest.mark.parametrize("idx", UPDATE_INDICES, ids=repr)
@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_update_forms(idx, method):
    x = sample((5, 7), np.float32)
    values = sample(x[idx].shape, np.float32, seed=3)
    check_update(x, idx, values, method)
    check_update(x, idx, np.float32(2.5), method)  # a broadcast scalar


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (33,), (3, 5)])
def test_update_dtypes(dtype, shape):
    x = sample(shape, dtype)
    idx = np.array([0, 2, 2, -1])
    for method in ["set", "add", "min", "max", "mul"]:
        values = sample(x[idx].shape, dtype, seed=5)
        check_update(x, idx, values, method)


@pytest.mark.parametrize("dtype", X64_DTYPES)
def test_update_x64(x64, dtype):
    x = sample((7,), dtype)
    for method in ["set", "add", "max"]:
        check_update(x, np.array([1, 1, 6]), sample((3,), dtype, seed=2), method)


def test_size_zero_and_scalar_operands():
    check_update(np.zeros((0,), np.float32), slice(None), np.float32(1), "set")
    check_update(np.zeros((3, 0), np.int32), np.array([0, 2]), np.int32(1), "add")
    check_update(np.full((), 2.0, np.float32), (), np.float32(3), "add")
    check_update(np.ones((), np.float32), None, np.float32(3), "set")


def test_duplicates_accumulate_in_order():
    x = np.zeros(4, np.float32)
    idx = np.array([1, 1, 1, 3, 1])
    vals = np.array([1, 2, 3, 4, 5], np.float32)
    np.testing.assert_array_equal(jnp.asarray(x).at[idx].add(vals), [0, 11, 0, 4])
    np.testing.assert_array_equal(jnp.asarray(x).at[idx].set(vals), [0, 5, 0, 4])  # last wins
    np.testing.assert_array_equal(jnp.asarray(x + 2).at[idx].multiply(vals), [2, 60, 2, 8])
    # Integer sums wrap.
    y = jnp.asarray(np.array([120], np.int8)).at[np.array([0, 0])].add(np.int8(5))
    assert y.dtype == np.int8 and int(y[0]) == -126


def test_out_of_bounds_updates_are_dropped():
    x = np.arange(5, dtype=np.float32)
    idx = np.array([0, 5, -6, 100, -1])
    for method in ["set", "add", "mul", "min", "max"]:
        got = getattr(jnp.asarray(x).at[idx], method)(np.float32(-7))
        keep = np.array([0, 4])
        want = reference_update(x, keep, np.float32(-7), method)
        np.testing.assert_array_equal(got, want)
    # Traced indices too, and a static int.
    f = ember.jit(lambda a, i: a.at[i].set(9.0))
    np.testing.assert_array_equal(f(x, np.int32(7)), x)
    np.testing.assert_array_equal(f(x, np.int32(-2)), [0, 1, 2, 9, 4])
    np.testing.assert_array_equal(jnp.asarray(x).at[10].add(1.0), x)
    # mode='clip' clamps instead.
    np.testing.assert_array_equal(jnp.asarray(x).at[idx[:4]].set(9.0, mode="clip"),
                                  [9, 1, 2, 3, 9])


def test_traced_index_and_values():
    x = sample((6, 4), np.float32)
    idx = np.array([[0, 5], [2, -1]], np.int32)
    vals = sample((2, 2, 4), np.float32, seed=7)
    got = ember.jit(lambda a, i, v: a.at[i].add(v))(x, idx, vals)
    np.testing.assert_allclose(got, reference_update(x, idx, vals, "add"), rtol=1e-6)


def test_values_cast_and_broadcast():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = jnp.asarray(x).at[:, 1].set(7.9)  # float -> int32 truncates, as a cast does
    np.testing.assert_array_equal(got, [[0, 7, 2], [3, 7, 5]])
    assert got.dtype == np.int32
    got = jnp.asarray(x).at[0].set([10, 20, 30])
    np.testing.assert_array_equal(got, [[10, 20, 30], [3, 4, 5]])
    with pytest.raises(ValueError):
        jnp.asarray(x).at[0].set(np.ones(4))


def test_divide_power_apply_get():
    x = np.arange(1, 7, dtype=np.float32)
    idx = np.array([0, 2, 2])
    got = jnp.asarray(x).at[idx].divide(np.float32(2))
    np.testing.assert_allclose(got, [0.5, 2, 0.75, 4, 5, 6])
    got = jnp.asarray(x).at[idx].power(np.float32(2))
    np.testing.assert_allclose(got, [1, 2, 81, 4, 5, 6])
    got = jnp.asarray(x).at[idx].apply(lambda v: v * 3)
    np.testing.assert_array_equal(got, [3, 2, 27, 4, 5, 6])  # applied once per duplicate
    jitted = ember.jit(lambda a: a.at[idx].apply(jnp.sqrt))(x)
    want = x.copy()
    np.sqrt.at(want, idx)
    np.testing.assert_allclose(jitted, want, rtol=1e-6)
    np.testing.assert_array_equal(jnp.asarray(x).at[np.array([1, 9])].get(), [2, 6])
    np.testing.assert_array_equal(
        jnp.asarray(x).at[np.array([1, 9, -1, -7])].get(mode="fill", fill_value=-1),
        [2, -1, 6, -1])
    filled = jnp.asarray(x).at[np.array([9])].get(mode="fill")
    assert np.isnan(np.asarray(filled)).all()
    text = str(ember.make_jaxpr(lambda a: a.at[1].apply(jnp.sin))(x))
    assert "update_jaxpr={ lambda ; " in text and "sin" in text


def test_update_jaxpr_names():
    # As JAX 0.10.2 stages them: `set` has no update_jaxpr, the combining scatters carry
    # their scalar combiner (which only annotates the equation).
    x = np.zeros(3, np.float32)
    for method, name, combiner in [("set", "scatter[", None), ("add", "scatter-add[", "add"),
                                   ("mul", "scatter-mul[", "mul"), ("min", "scatter-min[", "min"),
                                   ("max", "scatter-max[", "max")]:
        text = str(ember.make_jaxpr(lambda a, i, m=method: getattr(a.at[i], m)(1.0))(
            x, np.int32(0)))
        assert name in text and "mode=GatherScatterMode.FILL_OR_DROP" in text
        flat = " ".join(text.split())
        if combiner is None:
            assert "update_consts=() update_jaxpr=None" in flat
        else:
            assert re.search(r"update_consts=\(\) update_jaxpr=\{ lambda ; (\w+):f32\[\] "
                             r"(\w+):f32\[\]\. let (\w+):f32\[\] = " + combiner +
                             r" \1 \2 in \(\3,\) \}", flat), flat


def test_scalar_bool_update():
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(jnp.asarray(x).at[True].set(5.0), [5, 5, 5])
    np.testing.assert_array_equal(jnp.asarray(x).at[False].set(5.0), x)
    mask = x > 0
    check_update(x, mask, np.float32(4), "add")


# --- take, take_along_axis ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_take_fill_default(dtype):
    a = sample((4, 5), dtype)
    idx = np.array([[0, -1], [4, 5]])
    got = jnp.take(a, idx, axis=1)
    jitted = ember.jit(lambda v, i: jnp.take(v, i, axis=1))(a, idx.astype(np.int32))
    assert same_bits(got, jitted)
    got = np.asarray(got)
    np.testing.assert_array_equal(got[:, 0, :], np.take(a, idx[0], axis=1))
    np.testing.assert_array_equal(got[:, 1, 0], a[:, 4])
    kind = np.dtype(dtype).kind
    fill = got[:, 1, 1]
    if kind == "f":
        assert np.isnan(fill).all()
    elif kind == "i":
        assert (fill == np.iinfo(dtype).min).all()
    elif kind == "u":
        assert (fill == np.iinfo(dtype).max).all()
    else:
        assert fill.all()


def test_take_modes_and_axis_none():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, 11, 12, -1, -13])
    got = np.asarray(jnp.take(a, idx))
    np.testing.assert_array_equal(got[[0, 1, 3]], [0, 11, 11])
    assert np.isnan(got[[2, 4]]).all()
    np.testing.assert_array_equal(jnp.take(a, idx, mode="clip"), np.take(a, idx, mode="clip"))
    np.testing.assert_array_equal(jnp.take(a, idx, axis=1, mode="wrap"),
                                  np.take(a, idx, axis=1, mode="wrap"))
    np.testing.assert_array_equal(jnp.take(a, idx[:2], fill_value=-1.0), [0, 11])
    np.testing.assert_array_equal(jnp.take(a, 2, axis=0), a[2])
    np.testing.assert_array_equal(jnp.asarray(a).take(np.array([1]), axis=-1), a[:, [1]])
    with pytest.raises(NotImplementedError):
        jnp.take(a, idx, mode="raise")
    with pytest.raises(IndexError, match="empty axis"):
        jnp.take(np.zeros((2, 0)), np.array([0]), axis=1)
    assert jnp.take(np.zeros((2, 0)), np.zeros(0, np.int32), axis=1).shape == (2, 0)


def test_take_traced():
    a = sample((33,), np.float32)
    idx = np.array([0, 32, 33, -33, -34], np.int32)
    got = ember.jit(jnp.take)(a, idx)
    np.testing.assert_array_equal(np.asarray(got)[:2], a[[0, 32]])
    assert np.asarray(got)[3] == a[0]
    assert np.isnan(np.asarray(got)[[2, 4]]).all()


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis(axis):
    a = sample((3, 4), np.int32)
    rng = np.random.default_rng(0)
    if axis is None:
        idx = rng.integers(0, 12, (5,))
        want = np.take_along_axis(a, idx, axis=None)
    else:
        shape = [3, 4]
        shape[axis] = 6
        idx = rng.integers(-a.shape[axis], a.shape[axis], shape)
        want = np.take_along_axis(a, idx, axis=axis)
    got = jnp.take_along_axis(a, idx, axis=axis)
    jitted = ember.jit(lambda v, i: jnp.take_along_axis(v, i, axis=axis))(
        a, idx.astype(np.int32))
    np.testing.assert_array_equal(got, want)
    assert same_bits(got, jitted)


def test_take_along_axis_broadcast_and_fill():
    a = sample((4, 1, 5), np.float32)
    idx = np.array([[[0, 4]], [[5, -1]]] * 2).reshape(4, 1, 2)
    idx = np.broadcast_to(idx, (4, 3, 2))
    got = np.asarray(jnp.take_along_axis(a, idx, axis=2))
    assert got.shape == (4, 3, 2)
    np.testing.assert_array_equal(got[0, :, :], np.broadcast_to(a[0, 0, [0, 4]], (3, 2)))
    assert np.isnan(got[1, :, 0]).all() and (got[1, :, 1] == a[1, 0, 4]).all()
    np.testing.assert_array_equal(jnp.take_along_axis(a, np.full((4, 1, 1), 7), 2,
                                                      mode="clip"), a[:, :, 4:])
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.take_along_axis(a, np.zeros((4, 2), np.int32), axis=1)


@pytest.mark.parametrize("mode", ["clip", "wrap", "promise_in_bounds"])
def test_take_along_axis_modes(mode):
    # Every mode is one batched gather (JAX's program). Negative indices count from the end
    # first (but for promise_in_bounds, whose indices are promised in range), then 'clip'
    # clamps and 'wrap' takes the index mod the length: NumPy's values on the indices so
    # normalized; eager and jit agree; NaN and -0.0 pass through unchanged.
    x = np.array([[-0.0, np.nan, 1.5, 2.0, -3.0], [4.0, -np.inf, 5.0, 0.0, 6.0],
                  [7.0, 8.0, np.inf, 9.0, -1.0]], np.float32)
    if mode == "promise_in_bounds":
        idx = np.array([[0, 4, 1], [3, 2, 2], [1, 0, 4]], np.int32)
        norm = idx
    else:
        idx = np.array([[0, -1, 7], [-6, 2, 12], [-5, 4, -13]], np.int32)
        norm = (np.clip(np.where(idx < 0, idx + 5, idx), 0, 4) if mode == "clip"
                else np.mod(idx, 5))
    want = np.take_along_axis(x, norm, axis=1)
    got = jnp.take_along_axis(x, idx, axis=1, mode=mode)
    jitted = ember.jit(lambda a, i: jnp.take_along_axis(a, i, axis=1, mode=mode))(x, idx)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert same_bits(got, jitted)
    # a broadcast index (one row for every row of x) along axis 0, and axis=None
    col = np.array([[2, -1, 0, 1, 2]], np.int32)
    ncol = np.where(col < 0, col + 3, col)
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(x, ncol if mode == "promise_in_bounds" else col,
                                       axis=0, mode=mode)),
        np.take_along_axis(x, ncol, axis=0))
    flat = np.array([14, 0, 3], np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, flat, None, mode=mode)),
                                  x.ravel()[flat])


def test_take_along_axis_wrap_negative_indices_flag():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[-1], [0], [5]], np.int32)
    got = jnp.take_along_axis(x, idx, axis=1, wrap_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(got)[1:, 0], [4.0, np.nan])
    assert np.isnan(np.asarray(got)[0, 0])  # -1 is out of range when not wrapped
    got = jnp.take_along_axis(x, idx, axis=1, mode="clip", wrap_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(got)[:, 0], [0.0, 4.0, 11.0])
    with pytest.raises(NotImplementedError):
        jnp.take_along_axis(x, idx, axis=1, mode="raise")
    with pytest.raises(ValueError, match="Invalid mode"):
        jnp.take_along_axis(x, idx, axis=1, mode="nearest")


def test_eager_update_of_a_transposed_array_keeps_the_updates():
    """The eager scatter rule writes through a flat view of its copy of the operand: the
    copy must be C-ordered, or an operand that is not (x.T) loses every update."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = x.T.copy()
    want[1] = 100.0
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).T.at[1].set(100.0)), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(lambda a: a.T.at[1].set(100.0))(x)),
                                  want)
