"""`x[idx]` against NumPy: every form of index, eager and under jit, static and traced.

Each case checks the value and dtype against NumPy, and that eager and jit agree bit for
bit. Out-of-range traced / array indices clamp (JAX's default for `x[idx]`); boolean masks
work when concrete and raise NonConcreteBooleanIndexError when traced.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember
import ember.numpy as jnp
from ember import lax
from ember.errors import NonConcreteBooleanIndexError

DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32"]
X64_DTYPES = ["int64", "uint64", "float64"]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True
                        ).astype(dtype)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def check_getitem(x, idx):
    """x[idx] eagerly and under jit (index closed over, static) equals NumPy's x[idx]."""
    want = x[idx]
    got = jnp.asarray(x)[idx]
    jitted = ember.jit(lambda a: a[idx])(x)
    assert np.asarray(got).shape == want.shape, (idx, np.asarray(got).shape, want.shape)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.asarray(got).dtype == want.dtype
    assert same_bits(got, jitted), idx


# Index expressions for a (5, 7, 4) array (shape matters: odd sizes and a rank-3 operand).
BASIC = [
    0, -1, 4, (1, 2), (-5, -7, -4), slice(None), slice(1, None), slice(None, 3),
    slice(None, None, -1), slice(None, None, 2), slice(4, 0, -2), slice(-2, None),
    slice(3, 1), slice(10, 20), slice(-100, 100, 3), (slice(None), 3), (slice(1, 4), -2, 1),
    (Ellipsis, 0), (Ellipsis,), (0, Ellipsis, 2), (None,), (None, 0), (slice(None), None, 2),
    (None, Ellipsis, None), (Ellipsis, None), (2, slice(None, None, -3), None, slice(1, 3)),
    (),
]
ADVANCED = [
    np.array([0, 4, 2, 2]), np.array([-1, -5, 3]), [0, 1], [[0, 1], [2, 3]],
    (slice(None), np.array([6, 0, -1])), (np.array([0, 1]), np.array([2, 3])),
    (np.array([[0], [4]]), np.array([1, 2, 3])), (0, slice(None), np.array([1, 2])),
    (slice(None), 0, np.array([1, 2])), (np.array([0, 1]), slice(None), np.array([1, 3])),
    (np.array([0, 1]), None, np.array([1, 3])), (Ellipsis, np.array([3, 0])),
    (slice(None, None, -1), np.array([1, 2]), slice(None, None, 2)),
    (None, np.array([1, 2]), None, 1), (np.array(2), slice(1, 3)), (np.array([], np.int64),),
    (slice(1, 4), np.array([[1, 2], [3, 4]]), 2), np.array([[[0]]]),
]


@pytest.mark.parametrize("idx", BASIC + ADVANCED, ids=repr)
def test_index_forms_match_numpy(idx):
    check_getitem(sample((5, 7, 4), np.float32), idx)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (33,), (0,), (3, 5), (2, 3, 4)])
def test_dtypes_and_shapes(dtype, shape):
    x = sample(shape, dtype)
    for idx in [slice(1, None), slice(None, None, -2), (Ellipsis, None)]:
        check_getitem(x, idx)
    if shape[0]:
        for idx in [0, -1, np.array([0, -1, 0]), (Ellipsis, np.array([0]))]:
            check_getitem(x, idx)


@pytest.mark.parametrize("dtype", X64_DTYPES)
def test_x64_dtypes(x64, dtype):
    x = sample((7, 3), dtype)
    for idx in [1, (slice(None, None, -1), 2), np.array([6, 0, 3]), x[:, 0] > 0 if
                dtype != "uint64" else x[:, 0] > 50]:
        check_getitem(x, idx)


def test_scalar_operand():
    x = np.float32(3.5)
    for idx in [(), None, Ellipsis, (None, None), True, False]:
        check_getitem(np.asarray(x), idx)


def test_boolean_masks():
    x = sample((4, 5), np.int32)
    for idx in [x > 0, (x[:, 0] > 0), (slice(None), x[0] > 0), (x > 100), True, False,
                [True, False, True, True], (np.array([True, False, True, False]), 1),
                (Ellipsis, np.array([False, True, True, False, True]))]:
        check_getitem(x, idx)
    # A concrete ember.Array mask works under jit too (it is a constant there).
    mask = jnp.asarray(x > 0)
    np.testing.assert_array_equal(ember.jit(lambda a: a[mask])(x), x[x > 0])


def test_traced_boolean_mask_raises():
    x = np.arange(5.0, dtype=np.float32)
    with pytest.raises(NonConcreteBooleanIndexError, match="concrete"):
        ember.jit(lambda a: a[a > 2])(x)
    with pytest.raises(IndexError):  # it is an IndexError, as in JAX
        ember.jit(lambda a, m: a[m])(x, x > 2)


def test_mask_shape_mismatch():
    with pytest.raises(IndexError, match="boolean index did not match"):
        jnp.arange(5)[np.array([True, False])]


# --- traced indices ------------------------------------------------------------------------

def test_dynamic_scalar_index_golden():
    f = lambda x, i: x[i]  # noqa: E731
    text = str(ember.make_jaxpr(f)(np.zeros(3, np.float32), np.int32(0)))
    assert text == """{ lambda ; a:f32[3] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 3:i32[]
    e:i32[] = select_n c b d
    f:f32[1] = dynamic_slice[slice_sizes=(1,)] a e
    g:f32[] = squeeze[dimensions=(0,)] f
  in (g,) }"""


def test_static_slice_golden():
    text = str(ember.make_jaxpr(lambda x: x[1:])(np.zeros(4, np.float32)))
    assert "slice[limit_indices=(4,) start_indices=(1,) strides=None] a" in text
    text = str(ember.make_jaxpr(lambda x: x[::-1])(np.zeros(4, np.float32)))
    assert "rev[dimensions=(0,)]" in text and "slice" not in text


@pytest.mark.parametrize("i", [0, 2, -1, -7, 7, 100, -100])
def test_traced_scalar_index_clamps(i):
    x = np.arange(21, dtype=np.float32).reshape(7, 3)
    f = ember.jit(lambda a, j: (a[j], a[j, 1:], a[1:3, j % 3], a[::-1, j % 3]))
    out = f(x, np.int32(i))
    k = int(np.clip(i + 7 if i < 0 else i, 0, 6))
    np.testing.assert_array_equal(out[0], x[k])
    np.testing.assert_array_equal(out[1], x[k, 1:])
    np.testing.assert_array_equal(out[2], x[1:3, i % 3])
    np.testing.assert_array_equal(out[3], x[::-1, i % 3])
    # Eagerly, a scalar Array index behaves exactly as under jit.
    assert same_bits(jnp.asarray(x)[jnp.asarray(np.int32(i))], out[0])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32", "int32"])
def test_traced_index_array_clamps(dtype):
    x = sample((6, 5), np.float32)
    lo = 0 if np.dtype(dtype).kind == "u" else -8
    idx = np.array([lo, 0, 3, 5, 9, 100 if dtype != "int8" else 99], dtype)
    wrapped = np.where(idx.astype(np.int64) < 0, idx.astype(np.int64) + 6, idx.astype(np.int64))
    want = x[np.clip(wrapped, 0, 5)]
    f = ember.jit(lambda a, i: a[i])
    got = f(x, idx)
    np.testing.assert_array_equal(got, want)
    assert same_bits(jnp.asarray(x)[jnp.asarray(idx)], got)
    # Mixed with slices and a second (static) advanced index.
    got2 = ember.jit(lambda a, i: a[i, ::2])(x, idx)
    np.testing.assert_array_equal(got2, want[:, ::2])
    got3 = ember.jit(lambda a, i: a[1:, i[:2]])(x, idx)
    np.testing.assert_array_equal(got3, x[1:, np.clip(wrapped[:2], 0, 4)])


def test_traced_2d_index_and_broadcasting():
    x = sample((4, 6), np.int32)
    i = np.array([[0, 3], [-1, 2]], np.int32)
    j = np.array([5, -6], np.int32)
    got = ember.jit(lambda a, p, q: a[p, q])(x, i, j)
    np.testing.assert_array_equal(got, x[i, j])
    got = ember.jit(lambda a, p: a[None, p, ..., None])(x, i)
    np.testing.assert_array_equal(got, x[None, i, ..., None])


def test_static_out_of_range_array_indices_clamp():
    x = np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(jnp.asarray(x)[np.array([7, -9, 2])], x[[4, 0, 2]])
    np.testing.assert_array_equal(jnp.asarray(x)[11], 4)  # JAX clamps static ints too


def test_no_retrace():
    count = []

    def f(a, i):
        count.append(1)
        return a[i, 1:]
    g = ember.jit(f)
    x = np.zeros((4, 3), np.float32)
    g(x, np.int32(1))
    g(x, np.int32(3))
    assert len(count) == 1


def test_traced_slice_bounds_raise():
    with pytest.raises(IndexError, match="static start/stop/step"):
        ember.jit(lambda a, i: a[i:i + 2])(np.zeros(5, np.float32), np.int32(1))
    # The documented alternative works.
    out = ember.jit(lambda a, i: lax.dynamic_slice(a, (i,), (2,)))(
        np.arange(5, dtype=np.float32), np.int32(1))
    np.testing.assert_array_equal(out, [1, 2])


def test_index_errors():
    x = jnp.zeros((2, 3))
    with pytest.raises(IndexError, match="Too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[np.array([0.5])]
    with pytest.raises(TypeError):
        x["a"]
    with pytest.raises(IndexError, match="broadcast"):
        x[np.array([0, 1]), np.array([0, 1, 2])]


def test_weak_type_preserved():
    y = ember.jit(lambda a: (a * 2)[1:])(np.zeros(3, np.float32))
    assert y.dtype == np.float32
    z = lax.full((3,), 2.0)  # weakly typed f32[3]
    assert z[1:].weak_type and z[np.array([0, 1])].weak_type


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_index_expressions(data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    x = sample(shape, np.int16, seed=1)
    alen = data.draw(st.integers(1, 3))  # one length, so the index arrays broadcast
    items = []
    for d in range(ndim):
        kind = data.draw(st.sampled_from(["int", "slice", "array", "none", "skip"]))
        n = shape[d]
        if kind == "int":
            items.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            items.append(slice(data.draw(st.none() | st.integers(-6, 6)),
                               data.draw(st.none() | st.integers(-6, 6)),
                               data.draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))))
        elif kind == "array":
            items.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=alen,
                                                     max_size=alen))))
        elif kind == "none":
            items.extend([None, slice(None)])
        else:
            items.append(slice(None))
    check_getitem(x, tuple(items))


def test_narrow_traced_scalar_index():
    # i + size must not overflow an int8 index, and static starts must fit with it.
    x = np.arange(600, dtype=np.float32).reshape(300, 2)
    f = ember.jit(lambda a, i: (a[i], a[299, i], a[250:, i]))
    row, elem, col = f(x, np.int8(-1))
    np.testing.assert_array_equal(row, x[-1])
    assert float(elem) == x[299, 1]
    np.testing.assert_array_equal(col, x[250:, 1])
    np.testing.assert_array_equal(f(x, np.uint8(200))[0], x[200])


# Constant index arrays staged with JAX's negative-index fix-up (lt/add/select_n) and several
# index arrays broadcast to their common shape first: NumPy's values, eager == jit, and the
# fix-up folds away (the compiled module compares nothing).
CONSTANT_INDEXES = {
    "list": lambda x: x[:, [0, -2, 3]],
    "numpy": lambda x: x[np.array([[0], [-1]]), 1],
    "int8": lambda x: x[np.array([0, -3, 2], np.int8)],
    "uint8": lambda x: x[:, np.array([4, 0], np.uint8)],
    "mask": lambda x: x[np.array([True, False, True])],
    "two_lists": lambda x: x[[0, -1], [[1], [-2]]],
    "int_and_list": lambda x: x[-1, [0, 2]],
    "ix": lambda x: x[np.ix_([2, -3], [0, -1, 1])],
}


@pytest.mark.parametrize("name", sorted(CONSTANT_INDEXES))
def test_constant_index_arrays_fold_and_match_numpy(name):
    f = CONSTANT_INDEXES[name]
    x = np.array([[-0.0, np.nan, 1.5, 2.0, -3.0], [4.0, -np.inf, 5.0, 0.0, 6.0],
                  [7.0, 8.0, np.inf, 9.0, -1.0]], np.float32)
    want = f(x)
    eager = f(jnp.asarray(x))
    staged = ember.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(eager), want)
    assert same_bits(eager, staged) and same_bits(staged, want)
    compiled = ember.jit(f).lower(x).compile().as_text()
    assert "compare" not in compiled and "select" not in compiled


@pytest.mark.parametrize("method", ["set", "add"])
def test_constant_index_array_updates_match_numpy(method):
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    idx = (slice(None), [0, -1, 2])
    want = x.copy()
    if method == "set":
        want[idx] = 7.0
    else:
        np.add.at(want, idx, 7.0)
    f = lambda a: getattr(a.at[idx], method)(7.0)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x)), want)


def test_constant_unsigned_index_past_int32_stays_out_of_range():
    # 3e9 does not fit the int32 index dtype: it is not wrapped into range (which would
    # read row 0), but clamps to the last row as any out-of-range index does; eager == jit
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = lambda a: a[np.array([3_000_000_000, 1], np.uint32)]  # noqa: E731
    eager, staged = f(jnp.asarray(x)), ember.jit(f)(x)
    assert same_bits(eager, staged)
    np.testing.assert_array_equal(np.asarray(staged), x[[2, 1]])
