"""Shape manipulation against NumPy over dtypes and shapes, eager and jit (bit for bit).

test_pad and test_flip_roll_rot90 collect their cases in a `NumpyBatch`
(tests/ops/batched_checks.py): the same checks per case, one compiled program per test."""

# The checks call their lambdas at once, inside the loop that binds their variables.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import NumpyBatch
from test_numpy_support import DTYPES, check, rand

import ember
import ember.numpy as jnp

ND = [(7,), (3, 5), (2, 3, 4), (0, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_family(dtype):
    x = rand((2, 3, 4), dtype)
    for shape in ((24,), (4, -1), (2, 12), (4, 3, 2)):
        for order in ("C", "F"):
            check(lambda a: jnp.reshape(a, shape, order=order),
                  lambda a: np.reshape(a, shape, order=order), x)
    check(jnp.ravel, np.ravel, x)
    check(lambda a: jnp.ravel(a, order="F"), lambda a: np.ravel(a, order="F"), x)
    check(jnp.transpose, np.transpose, x)
    check(lambda a: jnp.transpose(a, (1, 0, 2)), lambda a: np.transpose(a, (1, 0, 2)), x)
    check(lambda a: jnp.permute_dims(a, (2, 0, 1)), lambda a: np.transpose(a, (2, 0, 1)), x)
    check(jnp.matrix_transpose, lambda a: np.swapaxes(a, -1, -2), x)
    check(lambda a: jnp.moveaxis(a, 0, -1), lambda a: np.moveaxis(a, 0, -1), x)
    check(lambda a: jnp.moveaxis(a, (0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0)),
          x)
    check(lambda a: jnp.swapaxes(a, 0, 2), lambda a: np.swapaxes(a, 0, 2), x)
    check(lambda a: jnp.astype(a, jnp.float32), lambda a: a.astype(np.float32), x)
    with pytest.raises(TypeError):
        jnp.reshape(x, (5, 5))
    assert jnp.shape(x) == (2, 3, 4) and jnp.ndim(x) == 3 and jnp.size(x) == 24
    assert jnp.size(x, 1) == 3


@pytest.mark.parametrize("dtype", DTYPES)
def test_squeeze_expand_broadcast(dtype):
    x = rand((1, 3, 1, 4), dtype)
    check(jnp.squeeze, np.squeeze, x)
    check(lambda a: jnp.squeeze(a, 2), lambda a: np.squeeze(a, 2), x)
    check(lambda a: jnp.squeeze(a, (0, -2)), lambda a: np.squeeze(a, (0, -2)), x)
    with pytest.raises(ValueError):
        jnp.squeeze(x, 1)
    y = rand((3, 4), dtype)
    for ax in (0, 1, -1, (0, 3)):
        check(lambda a: jnp.expand_dims(a, ax), lambda a: np.expand_dims(a, ax), y)
    check(lambda a: jnp.broadcast_to(a, (2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4)), y)
    check(lambda a: jnp.broadcast_to(a, (3, 5)), lambda a: np.broadcast_to(a, (3, 5)),
          rand((3, 1), dtype))
    check(jnp.broadcast_arrays, np.broadcast_arrays, rand((3, 1), dtype), rand((4,), dtype))
    assert jnp.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    with pytest.raises(ValueError):
        jnp.broadcast_to(y, (5, 4))


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_select(dtype):
    c = rand((3, 4), np.bool_, 7)
    x, y = rand((3, 4), dtype, 1), rand((4,), dtype, 2)
    check(jnp.where, np.where, c, x, y)
    check(lambda cc, a: jnp.where(cc, a, 0), lambda cc, a: np.where(cc, a, 0), c, x,
          check_dtype=dtype if dtype != np.bool_ else np.int32)
    check(jnp.where, np.where, rand((4,), np.int8), x, y)
    check(lambda a, b: jnp.select([a > 0, b < 2], [a, b], 7),
          lambda a, b: np.select([a > 0, b < 2], [a, b], 7), x, rand((3, 4), dtype, 3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_join(dtype):
    a, b = rand((2, 3), dtype, 1), rand((4, 3), dtype, 2)
    check(lambda u, v: jnp.concatenate([u, v]), lambda u, v: np.concatenate([u, v]), a, b)
    check(lambda u, v: jnp.concatenate([u.T, v.T], axis=-1),
          lambda u, v: np.concatenate([u.T, v.T], axis=-1), a, b)
    check(lambda u, v: jnp.concatenate([u, v], axis=None),
          lambda u, v: np.concatenate([u, v], axis=None), a, b)
    check(lambda u, v: jnp.concat([u, v]), lambda u, v: np.concatenate([u, v]), a, b)
    c = rand((2, 3), dtype, 3)
    for axis in (0, 1, 2, -1):
        check(lambda u, v: jnp.stack([u, v], axis), lambda u, v: np.stack([u, v], axis), a, c)
    v1, v2 = rand((5,), dtype, 4), rand((5,), dtype, 5)
    for jf, nf in ((jnp.hstack, np.hstack), (jnp.vstack, np.vstack), (jnp.dstack, np.dstack),
                   (jnp.column_stack, np.column_stack)):
        check(lambda u, v: jf([u, v]), lambda u, v: nf([u, v]), v1, v2)
        check(lambda u, v: jf([u, v]), lambda u, v: nf([u, v]), a, c)
    check(lambda u, v: jnp.append(u, v), np.append, a, b)
    check(lambda u, v: jnp.append(u, v, axis=0), lambda u, v: np.append(u, v, axis=0), a, b)
    with pytest.raises(ValueError):
        jnp.concatenate([a, rand((2, 2), dtype)])
    with pytest.raises(ValueError):
        jnp.concatenate([np.float32(1), np.float32(2)])


def test_concatenate_promotes():
    out = jnp.concatenate([np.ones(2, np.int8), np.ones(2, np.uint8)])
    assert out.dtype == np.int16
    assert jnp.stack([np.ones(2, np.float32), np.ones(2, np.int32)]).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_])
def test_split(dtype):
    x = rand((6, 4), dtype)
    check(lambda a: jnp.split(a, 3), lambda a: np.split(a, 3), x)
    check(lambda a: jnp.split(a, [1, 4]), lambda a: np.split(a, [1, 4]), x)
    check(lambda a: jnp.split(a, [-2, 10]), lambda a: np.split(a, [-2, 10]), x)
    check(lambda a: jnp.split(a, 2, axis=1), lambda a: np.split(a, 2, axis=1), x)
    check(lambda a: jnp.array_split(a, 4), lambda a: np.array_split(a, 4), x)
    check(lambda a: jnp.array_split(rand((7,), dtype), 3),
          lambda a: np.array_split(rand((7,), dtype), 3), x)
    check(lambda a: jnp.hsplit(a, 2), lambda a: np.hsplit(a, 2), x)
    check(lambda a: jnp.vsplit(a, [2]), lambda a: np.vsplit(a, [2]), x)
    check(lambda a: jnp.dsplit(a, 2), lambda a: np.dsplit(a, 2), rand((2, 2, 4), dtype))
    check(lambda a: jnp.unstack(a, axis=1), lambda a: tuple(np.moveaxis(a, 1, 0)), x)
    with pytest.raises(ValueError):
        jnp.split(x, 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ND)
def test_flip_roll_rot90(dtype, shape):
    batch = NumpyBatch()
    x = rand(shape, dtype)
    batch.check(jnp.flip, np.flip, x)
    batch.check(lambda a: jnp.flip(a, 0), lambda a: np.flip(a, 0), x)
    batch.check(jnp.flipud, np.flipud, x)
    for shift, axis in ((2, None), (-3, 0), (10, -1), ((1, 2), (0, -1)), (1, (0, -1))):
        if axis is not None and len(shape) == 1 and isinstance(axis, tuple):
            continue
        batch.check(lambda a: jnp.roll(a, shift, axis), lambda a: np.roll(a, shift, axis), x)
    if len(shape) >= 2:
        batch.check(jnp.fliplr, np.fliplr, x)
        for k in range(-1, 5):
            batch.check(lambda a: jnp.rot90(a, k), lambda a: np.rot90(a, k), x)
        batch.check(lambda a: jnp.rot90(a, 1, (1, 0)), lambda a: np.rot90(a, 1, (1, 0)), x)
    batch.run()


def test_roll_traced_shift():
    x = rand((7,), np.float32)
    for s in (-9, -1, 0, 3, 7, 12):
        got = ember.jit(lambda a, sh: jnp.roll(a, sh))(x, np.int32(s))
        np.testing.assert_array_equal(got, np.roll(x, s))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_repeat(dtype):
    x = rand((2, 3), dtype)
    for reps in (2, (2, 1), (1, 2, 3), (0, 2)):
        check(lambda a: jnp.tile(a, reps), lambda a: np.tile(a, reps), x)
    check(lambda a: jnp.tile(a, 3), lambda a: np.tile(a, 3), rand((), dtype))
    for reps, axis in ((2, None), (3, 0), (2, 1), (0, 1), ([1, 0, 2], 1), ([2, 1], 0)):
        check(lambda a: jnp.repeat(a, reps, axis), lambda a: np.repeat(a, reps, axis), x)
    check(lambda a: jnp.repeat(a, 2, total_repeat_length=12),
          lambda a: np.repeat(a, 2), x)
    got = ember.jit(lambda a, r: jnp.repeat(a, r, total_repeat_length=5))(
        np.arange(3), np.array([2, 0, 3]))
    np.testing.assert_array_equal(got, [0, 0, 2, 2, 2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap",
                                  "maximum", "minimum", "mean", "median", "linear_ramp"])
def test_pad(dtype, mode):
    batch = NumpyBatch()
    if mode in ("mean", "median", "linear_ramp") and dtype == np.bool_:
        pytest.skip(f"NumPy's {mode} mode is undefined for bool")
    # widths 0, 1 and wider than the axis (reflect/symmetric/wrap then take several
    # rounds), 1-D to 3-D, scalar / pair / per-axis widths
    for shape, width in (((5,), 2), ((5,), (1, 3)), ((3, 4), ((1, 2), (0, 3))),
                         ((2, 3, 2), 1), ((1,), 3), ((3, 2), ((7, 7), (5, 1))),
                         ((4,), 0), ((2,), 9), ((2, 3, 4), ((0, 2), (4, 0), (1, 11))),
                         ((3, 1, 2), ((1, 1),))):
        x = rand(shape, dtype)
        batch.check(lambda a: jnp.pad(a, width, mode=mode),
                    lambda a: np.pad(a, width, mode=mode), x, rtol=1e-6)
    if mode in ("maximum", "minimum", "mean", "median"):
        x = rand((3, 5), dtype)
        for sl in (2, ((1, 2), (3, 9)), (4, 1)):
            batch.check(lambda a: jnp.pad(a, ((1, 2), (2, 3)), mode=mode, stat_length=sl),
                        lambda a: np.pad(a, ((1, 2), (2, 3)), mode=mode, stat_length=sl), x,
                        rtol=1e-6)
    if mode == "linear_ramp":
        x = rand((3, 5), dtype)
        for ev in (3, ((1, 2), (4, 0))):
            batch.check(lambda a: jnp.pad(a, ((1, 2), (4, 3)), mode=mode, end_values=ev),
                        lambda a: np.pad(a, ((1, 2), (4, 3)), mode=mode, end_values=ev), x,
                        rtol=1e-5, atol=1e-5)
    if mode == "constant":
        x = rand((3, 4), dtype)
        for cv in (5, ((1, 2), (3, 4))):
            batch.check(lambda a: jnp.pad(a, ((1, 2), (2, 1)), constant_values=cv),
                        lambda a: np.pad(a, ((1, 2), (2, 1)), constant_values=cv), x)
    batch.run()


def test_pad_errors_and_jaxpr():
    with pytest.raises(ValueError):
        jnp.pad(np.ones(3), -1)
    with pytest.raises(NotImplementedError):
        jnp.pad(np.ones(3), 1, mode="bogus")
    with pytest.raises(TypeError, match="integral"):
        jnp.pad(np.ones(3), 1.5)
    with pytest.raises(ValueError, match="unsupported shape"):
        jnp.pad(np.ones((2, 2)), ((1, 2, 3),))
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(np.ones((0, 2)), 1, mode="edge")
    with pytest.raises(ValueError, match="stat_length of 0"):
        jnp.pad(np.ones(3), 1, mode="mean", stat_length=0)
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(np.ones(3), 1, mode="edge", stat_length=1)
    with pytest.raises(ValueError, match="constant_values"):
        jnp.pad(np.ones(3), 1, constant_values=[1, 2, 3])
    with pytest.raises(ember.errors.ConcretizationTypeError):
        ember.jit(lambda a, w: jnp.pad(a, w))(np.ones(3), 1)
    # one nested jit[name=_pad], as JAX stages it, whose body converts the traced constant
    closed = ember.make_jaxpr(lambda a: jnp.pad(a, 1))(np.zeros(3, np.float32))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit"]
    inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert [e.primitive.name for e in inner.eqns] == ["convert_element_type", "pad"]


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_reflect_type_odd(mode):
    batch = NumpyBatch()
    for dtype in (np.float32, np.int32):
        for shape, width in (((5,), (2, 3)), ((1,), 2), ((3,), 7), ((3, 4), ((1, 2), (4, 0)))):
            x = rand(shape, dtype)
            batch.check(lambda a: jnp.pad(a, width, mode=mode, reflect_type="odd"),
                        lambda a: np.pad(a, width, mode=mode, reflect_type="odd"), x,
                        rtol=1e-6)
    batch.run()


def test_pad_zero_dim_and_empty_axes():
    # a 0-d array comes back as it is; an empty axis takes constant padding
    np.testing.assert_array_equal(np.asarray(jnp.pad(np.float32(3), 2)), np.float32(3))
    np.testing.assert_array_equal(np.asarray(jnp.pad(np.ones((0, 2), np.float32), 1)),
                                  np.pad(np.ones((0, 2), np.float32), 1))
    np.testing.assert_array_equal(
        np.asarray(ember.jit(lambda a: jnp.pad(a, ((0, 0), (1, 2)), mode="wrap"))(
            np.ones((0, 2), np.float32))),
        np.pad(np.ones((0, 2), np.float32), ((0, 0), (1, 2)), mode="wrap"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_atleast_diagonal_trace(dtype):
    for shape in ((), (3,), (2, 3), (2, 3, 4)):
        x = rand(shape, dtype)
        for jf, nf in ((jnp.atleast_1d, np.atleast_1d), (jnp.atleast_2d, np.atleast_2d),
                       (jnp.atleast_3d, np.atleast_3d)):
            check(jf, nf, x)
    m = rand((4, 6), dtype)
    for k in (-5, -2, 0, 1, 5, 7):
        check(lambda a: jnp.diagonal(a, k), lambda a: np.diagonal(a, k), m)
    t = rand((2, 3, 4), dtype)
    check(lambda a: jnp.diagonal(a, 1, 2, 0), lambda a: np.diagonal(a, 1, 2, 0), t)
    if dtype != np.bool_:
        check(jnp.trace, lambda a: np.trace(a).astype(jnp.sum(a).dtype), m)
        check(lambda a: jnp.trace(a, 1, 1, 2), lambda a: np.trace(a, 1, 1, 2), t)


def test_diff():
    x = rand((3, 7), np.float32)
    for n in (0, 1, 2):
        check(lambda a: jnp.diff(a, n), lambda a: np.diff(a, n), x, atol=1e-6)
    check(lambda a: jnp.diff(a, axis=0), lambda a: np.diff(a, axis=0), x)
    check(lambda a: jnp.diff(a, prepend=0, append=1), lambda a: np.diff(a, prepend=0, append=1),
          rand((5,), np.int32))
    check(jnp.diff, np.diff, rand((6,), np.bool_))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap", "mean"])
def test_pad_under_vmap_and_grad(mode):
    # the jit[_pad] inside vmap and grad: per-row pads, and the gradient of sum(pad(a)**2),
    # 2 P^T P a for the (linear) padding matrix P that np.pad gives column by column
    m = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    got = ember.vmap(lambda r: jnp.pad(r, (2, 5), mode=mode))(m)
    np.testing.assert_allclose(np.asarray(got),
                               np.stack([np.pad(r, (2, 5), mode=mode) for r in m]), rtol=1e-6)
    a = m[0]
    p = np.stack([np.pad(e, (2, 5), mode=mode) for e in np.eye(4, dtype=np.float32)], axis=1)
    g = ember.grad(lambda v: jnp.sum(jnp.pad(v, (2, 5), mode=mode) ** 2))(a)
    np.testing.assert_allclose(np.asarray(g), 2 * p.T @ p @ a, rtol=1e-5)
    # a traced constant value, one per row under vmap
    got = ember.vmap(lambda r, c: jnp.pad(r, 1, constant_values=c))(m, np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(got)[:, 0], [0, 1, 2])


def test_concatenate_and_stack_of_one_array():
    # an array argument is its rows (JAX's reshape path), NumPy's values eagerly and in jit
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for axis in (0, 1, -1, -2, None):
        want = np.concatenate(x, axis=axis)
        for fun in (jnp.concatenate, ember.jit(jnp.concatenate, static_argnums=1)):
            np.testing.assert_array_equal(np.asarray(fun(x, axis)), want)
        np.testing.assert_array_equal(np.asarray(jnp.concatenate(jnp.asarray(x), axis)),
                                      want)
    for axis in (0, 1, 2, -1, -3):
        want = np.stack(x, axis=axis)
        for fun in (jnp.stack, ember.jit(jnp.stack, static_argnums=1)):
            np.testing.assert_array_equal(np.asarray(fun(x, axis)), want)
    got = jnp.concatenate(np.arange(6).reshape(3, 2), dtype=np.float32)
    assert np.asarray(got).dtype == np.float32
    with pytest.raises(ValueError, match="Zero-dimensional"):
        jnp.concatenate(np.arange(3))
    with pytest.raises(ValueError, match="at least one"):
        jnp.concatenate(np.zeros((0, 2)))
