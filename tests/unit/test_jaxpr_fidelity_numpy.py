"""jnp functions whose jaxprs print as JAX 0.10.2 prints them (jnp.piecewise, and the jnp
functions JAX wraps in `jit`: cumsum, sort, round, where, clip...), plus jnp.piecewise's
values against NumPy, and where's and clip's eagerly and under jit.

The expected texts are JAX's own output (jaxpr_fidelity_numpy_expected.py), generated once
from the venv's JAX 0.10.2 with the same programs; these tests never import JAX.
"""

from __future__ import annotations

import numpy as np
import pytest
from jaxpr_fidelity_numpy_expected import EXPECTED

import ember
import ember.numpy as jnp

X5 = np.linspace(-2, 2, 5).astype(np.float32)
X7 = np.linspace(-2, 2, 7).astype(np.float32)
M34 = np.arange(12, dtype=np.float32).reshape(3, 4)


_TIMES = ember.jit(lambda a, b: a * b)


def _pw(x, conds, funcs, *a, **k):
    return jnp.piecewise(x, conds, funcs, *a, **k)


PROGRAMS = {
    "main": (lambda x: _pw(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 2,
                                                lambda v: v + 1]), (X5,)),
    "const": (lambda x: _pw(x, [x < 0, x > 1], [3, lambda v: v * 2, 1.5]), (X5,)),
    "nodef": (lambda x: _pw(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 2]), (X5,)),
    "scalar": (lambda x: _pw(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 2,
                                                  lambda v: v + 1]), (np.float32(0.5),)),
    "args": (lambda x, y: _pw(x, [x < 0, x > 1],
                              [lambda v, a, b=1.0: -v * a + b, lambda v, a, b=1.0: v * 2,
                               lambda v, a, b=1.0: v + a], y, b=2.0), (X5, np.float32(3))),
    "2d": (lambda x: _pw(x, [x < 2, x > 4], [lambda v: -v, 7, lambda v: v + 1]),
           (np.arange(6, dtype=np.float32).reshape(2, 3),)),
    "int": (lambda x: _pw(x, [x < 2], [lambda v: v * 2, 0]), (np.arange(5, dtype=np.int32),)),
    "closs": (lambda x, s: _pw(x, [x < 0], [lambda v: v * s, 0]), (X5, np.float32(2))),
    "scalarconst": (lambda x: _pw(x, [x < 0, x > 1], [lambda v: -v, 3, 1.5]),
                    (np.float32(0.5),)),
    "scalarcond": (lambda x: _pw(x, jnp.array([False, True]), [lambda v: -v,
                                                                lambda v: v * 3]), (X5,)),
    "ident": (lambda x: _pw(x, [x < 0], [lambda v: v, lambda v: v]), (X5,)),
    "r3": (lambda x: _pw(x, [x < 2], [lambda v: -v, 7]),
           (np.arange(24, dtype=np.float32).reshape(2, 3, 4),)),
    "u2": (lambda x: _pw(x, jnp.array([False, True]), [lambda v: -v, 2, lambda v: v * 3]),
           (np.arange(6, dtype=np.float32).reshape(2, 3),)),
    "xs": (lambda x: _pw(np.float32(2), [x < 2], [lambda v: -v, 7]),
           (np.arange(6, dtype=np.float32).reshape(2, 3),)),
    "jnp_cumsum": (lambda a: jnp.cumsum(a), (X7,)),
    "jnp_cumsum_ax": (lambda a: jnp.cumsum(a, axis=1), (M34,)),
    "jnp_cumprod": (lambda a: jnp.cumprod(a), (X7,)),
    "jnp_sort": (lambda a: jnp.sort(a), (X7,)),
    "jnp_argsort": (lambda a: jnp.argsort(a), (X7,)),
    "jnp_round": (lambda a: jnp.round(a, 1), (X7,)),
    "jnp_round0": (lambda a: jnp.round(a), (X7,)),
    # where and clip: JAX jits them (`jit[name=_where]`, `jit[name=clip]`)
    "jnp_where": (lambda x: jnp.where(x > 0, x, 0.0), (X5,)),
    "jnp_where_bcast": (lambda x, m: jnp.where(x > 0, x, m), (X5[:4], M34)),
    "jnp_where_int": (lambda x: jnp.where(x > 2, x, 1.5), (np.arange(5, dtype=np.int32),)),
    "jnp_where_scalar_cond": (lambda x: jnp.where(True, x, -x), (X5,)),
    "jnp_clip": (lambda x: jnp.clip(x, 0, 1), (X5,)),
    "jnp_clip_min": (lambda x: jnp.clip(x, 0.5), (X5,)),
    "jnp_clip_max_array": (lambda x, m: jnp.clip(x, max=m), (M34, M34[0])),
    "jnp_clip_int": (lambda x: jnp.clip(x, 1, 3), (np.arange(5, dtype=np.int32),)),
    "jnp_nan_to_num": (lambda x: jnp.nan_to_num(x), (X7,)),
    "jnp_diff": (lambda x: jnp.diff(x), (X7,)),
    "jnp_diff_2": (lambda m: jnp.diff(m, n=2, axis=0), (M34,)),
    "jnp_angle": (lambda x: jnp.angle(x, deg=True), (X7,)),
    "jnp_append": (lambda x: jnp.append(x, x), (X7,)),
    "jnp_append_axis": (lambda m: jnp.append(m, m, axis=1), (M34,)),
    "jnp_trunc": (lambda x: jnp.trunc(x), (X7,)),
    # tril, triu, trace, fmax, fmin: JAX jits them (and eye/tri inside follow its op order)
    "jnp_tril": (lambda m: jnp.tril(m), (M34,)),
    "jnp_tril_neg": (lambda m: jnp.tril(m, -1), (np.ones((2, 3, 4), np.float32),)),
    "jnp_triu": (lambda m: jnp.triu(m, 1), (M34,)),
    "jnp_trace": (lambda m: jnp.trace(m), (M34,)),
    "jnp_trace_axes": (lambda m: jnp.trace(m, axis1=1, axis2=2),
                       (np.ones((2, 3, 4), np.float32),)),
    "jnp_trace_int": (lambda m: jnp.trace(m), (np.ones((3, 4), np.int32),)),
    "jnp_eye": (lambda s: jnp.eye(3) + s, (np.float32(1),)),
    "jnp_tri": (lambda s: jnp.tri(3, 4, 1) + s, (np.float32(1),)),
    "jnp_fmax": (lambda a, b: jnp.fmax(a, b), (X7, X7[::-1].copy())),
    "jnp_fmax_bcast": (lambda a, b: jnp.fmax(a, b), (M34, M34[0])),
    "jnp_fmin": (lambda a, b: jnp.fmin(a, b), (X7, X7[::-1].copy())),
    "jnp_fmin_scalar": (lambda a: jnp.fmin(a, 1.0), (X7,)),
    # count_nonzero, kron, isclose, allclose (whose tolerances enter the nested isclose as
    # Python floats, printed as written)
    "jnp_count_nonzero": (lambda m: jnp.count_nonzero(m), (M34,)),
    "jnp_count_nonzero_bool": (lambda m: jnp.count_nonzero(m > 2, axis=0, keepdims=True),
                               (M34,)),
    "jnp_kron": (lambda a, b: jnp.kron(a, b), (M34[:2, :2], M34[1:, 2:])),
    "jnp_kron_ranks": (lambda a, b: jnp.kron(a, b), (np.arange(3, dtype=np.int32),
                                                     M34[:2, :2])),
    "jnp_isclose": (lambda a, b: jnp.isclose(a, b), (X7, X7[::-1].copy())),
    "jnp_isclose_nan_int": (lambda a, b: jnp.isclose(a, b, equal_nan=True),
                            (np.arange(5, dtype=np.int32), np.int32(2))),
    "jnp_allclose": (lambda a, b: jnp.allclose(a, b), (X7, X7)),
    "jnp_allclose_tol": (lambda a, b: jnp.allclose(a, b, rtol=0.1, atol=0.5), (M34, M34[0])),
    "jit_python_float_arg": (lambda x: ember.jit(lambda x, r: x * r)(x, 0.1), (X7,)),
    # flip and ptp: JAX's public functions call jitted `_flip` and `_ptp`
    "jnp_flip": (lambda m: jnp.flip(m), (M34,)),
    "jnp_flip_axes": (lambda m: jnp.flip(m, [0, -1]), (np.ones((2, 3, 4), np.float32),)),
    "jnp_fliplr": (lambda m: jnp.fliplr(m), (M34,)),
    "jnp_ptp": (lambda m: jnp.ptp(m), (M34,)),
    "jnp_ptp_axis": (lambda m: jnp.ptp(m, axis=[1], keepdims=True), (M34.astype(np.int32),)),
    # signbit and copysign (JAX's: an arithmetic shift of the float's bits)
    "jnp_signbit": (lambda x: jnp.signbit(x), (X7,)),
    "jnp_signbit_int": (lambda x: jnp.signbit(x), (np.arange(-2, 3, dtype=np.int32),)),
    "jnp_copysign": (lambda x: jnp.copysign(x, -x), (X7,)),
    "jnp_copysign_int_scalar": (lambda x: jnp.copysign(x, -1), (np.arange(3, dtype=np.int32),)),
    "jnp_copysign_scalar_first": (lambda x: jnp.copysign(2.0, x), (X7,)),
    # more of the ufuncs JAX jits: rint, isinf, isreal, iscomplex, around, fmod, remainder,
    # modf
    "jnp_rint": (lambda x: jnp.rint(x), (X7,)),
    "jnp_isinf": (lambda x: jnp.isinf(x), (X7,)),
    "jnp_isinf_int": (lambda x: jnp.isinf(x), (np.arange(3, dtype=np.int32),)),
    "jnp_isreal": (lambda x: jnp.isreal(x), (X7,)),
    "jnp_iscomplex": (lambda x: jnp.iscomplex(x), (M34,)),
    "jnp_around": (lambda x: jnp.around(x), (X7,)),
    "jnp_around_2": (lambda x: jnp.around(x, 2), (X7,)),
    "jnp_fmod": (lambda x, y: jnp.fmod(x, y), (X7, X7[::-1].copy())),
    "jnp_fmod_scalar": (lambda x: jnp.fmod(x, 1.5), (X7,)),
    "jnp_remainder": (lambda x, y: jnp.remainder(x, y), (X7, X7[::-1].copy())),
    "jnp_mod_scalar": (lambda x: jnp.mod(x, 1.5), (M34,)),
    "jnp_modf": (lambda x: jnp.modf(x), (X7,)),
    "jnp_hypot": (lambda x, y: jnp.hypot(x, y), (X7, X7[::-1].copy())),
    "jnp_hypot_int": (lambda x: jnp.hypot(x, 2), (np.arange(3, dtype=np.int32),)),
    # the NaN-skipping reductions and rot90
    "jnp_nansum": (lambda x: jnp.nansum(x), (X7,)),
    "jnp_nansum_int": (lambda x: jnp.nansum(x), (np.arange(4, dtype=np.int32),)),
    "jnp_nanprod": (lambda m: jnp.nanprod(m, axis=0), (M34,)),
    "jnp_nanmax": (lambda x: jnp.nanmax(x), (X7,)),
    "jnp_nanmin": (lambda m: jnp.nanmin(m, axis=1, keepdims=True), (M34,)),
    "jnp_nanmean": (lambda x: jnp.nanmean(x), (X7,)),
    "jnp_nanmean_axis": (lambda m: jnp.nanmean(m, axis=0, keepdims=True), (M34,)),
    "jnp_rot90": (lambda m: jnp.rot90(m), (M34,)),
    "jnp_rot90_2": (lambda m: jnp.rot90(m, 2), (M34,)),
    "jnp_rot90_3_axes": (lambda m: jnp.rot90(m, 3, (1, 2)), (np.ones((2, 3, 4), np.float32),)),
    "jnp_heaviside": (lambda x: jnp.heaviside(x, 0.5), (X7,)),
    "jnp_heaviside_bcast": (lambda m, h: jnp.heaviside(m, h), (M34 - 5, X7[:4])),
    "jnp_floor_divide": (lambda x, y: jnp.floor_divide(x, y), (X7, X7[::-1].copy())),
    "jnp_floor_divide_int": (lambda x: jnp.floor_divide(x, 3), (np.arange(-4, 4, dtype=np.int32),)),
    # an outer variable passed twice to a nested jit: the second binder gets a new name
    "jit_same_arg_twice": (lambda x: _TIMES(x, x) + 1, (X7,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jaxpr_text_equals_jax(name):
    fun, args = PROGRAMS[name]
    assert str(ember.make_jaxpr(fun)(*args)) == EXPECTED[name]


def test_piecewise_f64_jaxpr_equals_jax():
    with _x64():
        x = X5.astype(np.float64)
        text = str(ember.make_jaxpr(
            lambda x: _pw(x, [x < 0, x > 1], [lambda v: -v, 2, lambda v: v + 1]))(x))
    assert text == EXPECTED["f64"]


class _x64:
    def __enter__(self):
        self.old = ember.config.jax_enable_x64
        ember.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        ember.config.update("jax_enable_x64", self.old)


# ---------------------------------------------------------------------------------------------
# Values against NumPy.
# ---------------------------------------------------------------------------------------------

def _np_piecewise(x, conds, funcs, *a, **k):
    return np.piecewise(x, [np.asarray(c) for c in conds], funcs, *a, **k)


SHAPES = [(), (1,), (7,), (33,), (3, 5), (2, 3, 4), (1, 5)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_piecewise_values(shape, dtype, mode):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    funcs = [lambda v: -v, 4, lambda v: v * 2, lambda v: v + 1]
    def f(x):
        return jnp.piecewise(x, [x < 0, x > 1, x > 2], funcs)
    got = f(x) if mode == "eager" else ember.jit(f)(x)
    want = _np_piecewise(x, [x < 0, x > 1, x > 2], funcs)
    assert np.asarray(got).dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_piecewise_no_default_is_zero(mode):
    x = np.linspace(-3, 3, 13).astype(np.float32)
    def f(x):
        return jnp.piecewise(x, [x < -1, x > 1], [lambda v: v - 1, lambda v: v + 1])
    got = f(x) if mode == "eager" else ember.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(got), np.piecewise(
        x, [x < -1, x > 1], [lambda v: v - 1, lambda v: v + 1]))


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_piecewise_args_kwargs_and_closure(mode):
    x = np.linspace(-3, 3, 33).astype(np.float32)
    s = np.float32(0.5)
    def f(x, y, s):
        return jnp.piecewise(x, [x < 0, x > 1],
                             [lambda v, a, b=1.0: v * a + b * s, lambda v, a, b=1.0: v - b,
                              lambda v, a, b=1.0: v * s], y, b=2.0)
    got = (f if mode == "eager" else ember.jit(f))(x, np.float32(3), s)
    want = np.piecewise(x, [x < 0, x > 1], [lambda v, a, b=1.0: v * a + b * s,
                                            lambda v, a, b=1.0: v - b,
                                            lambda v, a, b=1.0: v * s], np.float32(3), b=2.0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_piecewise_f64_values():
    with _x64():
        x = np.linspace(-2, 2, 9)
        got = ember.jit(lambda x: jnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, 2,
                                                                     lambda v: v + 1]))(x)
        assert np.asarray(got).dtype == np.float64
        np.testing.assert_array_equal(np.asarray(got), np.piecewise(
            x, [x < 0, x > 1], [lambda v: -v, 2, lambda v: v + 1]))


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_piecewise_broadcast_conditions(mode):
    # conditions of shape (3,) against x of shape (2, 3), and scalar conditions.
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    c = np.array([True, False, True])
    def f(x):
        return jnp.piecewise(x, [c], [lambda v: -v, lambda v: v * 3])
    got = f(x) if mode == "eager" else ember.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(got), np.where(c, -x, x * 3))
    def g(x):
        return jnp.piecewise(x, jnp.array([False, True]), [lambda v: -v, 2, lambda v: v * 3])
    got = g(x) if mode == "eager" else ember.jit(g)(x)
    np.testing.assert_array_equal(np.asarray(got), np.full_like(x, 2))


def test_piecewise_nan_and_inf_pass_through():
    x = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1.5], np.float32)
    f = ember.jit(lambda x: jnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 2,
                                                              lambda v: v + 1]))
    want = np.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 2, lambda v: v + 1])
    np.testing.assert_array_equal(np.asarray(f(x)), want)


def test_piecewise_wrong_number_of_functions():
    with pytest.raises(ValueError, match="either 2 or 3 functions"):
        jnp.piecewise(X5, [X5 < 0, X5 > 1], [lambda v: v])


@pytest.mark.parametrize("fname", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
def test_cumulative_eager_unchanged_and_jit_wrapped(fname):
    x = np.array([1.5, np.nan, -2.0, 3.0, 0.5, 2.0, 1.0], np.float32)
    f = getattr(jnp, fname)
    np.testing.assert_allclose(np.asarray(f(x)), getattr(np, fname)(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x)), getattr(np, fname)(x), rtol=1e-6)
    text = str(ember.make_jaxpr(f)(x))
    assert "jit[" in text and f"name={fname}" in text


@pytest.mark.parametrize("fname", ["sort", "argsort", "round"])
def test_wrapped_functions_eager_and_jit_values(fname):
    x = np.array([1.25, np.nan, -2.5, 3.0, 0.5, -0.0, 2.75], np.float32)
    f = getattr(jnp, fname)
    want = getattr(np, fname)(x)
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x)), want)


# ---------------------------------------------------------------------------------------------
# where and clip (staged as a nested jit under a trace, run op by op eagerly): values.
# ---------------------------------------------------------------------------------------------

WHERE_SHAPES = [((), (), ()), ((5,), (5,), ()), ((), (2, 3), (3,)), ((4,), (3, 4), (1,)),
                ((0,), (0,), ()), ((2, 1), (1, 3), (2, 3))]


@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_where_values_eager_and_jit(shapes, dtype):
    rng = np.random.default_rng(1)
    c_shape, x_shape, y_shape = shapes
    c = rng.standard_normal(c_shape) > 0
    x = (rng.standard_normal(x_shape) * 5).astype(dtype)
    y = (rng.standard_normal(y_shape) * 5).astype(dtype)
    want = np.where(c, x, y)
    for fn in (jnp.where, ember.jit(jnp.where)):
        got = fn(c, x, y)
        assert got.shape == want.shape and np.asarray(got).dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_clip_values_eager_and_jit(shape, dtype):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    lo, hi = dtype(-1), dtype(2)
    want = np.clip(x, lo, hi)
    for fn in (jnp.clip, ember.jit(jnp.clip)):
        got = fn(x, lo, hi)
        assert np.asarray(got).dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(lambda v: jnp.clip(v, max=0))(x)),
                                  np.minimum(x, 0))


def test_where_and_clip_grad_through_the_nested_jit():
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    g = ember.grad(lambda v: jnp.sum(jnp.where(v > 0, v * v, -v) + jnp.clip(v, 0, 1)))(x)
    np.testing.assert_allclose(np.asarray(g), [-1.0 + 0.0, 1.0 + 1.0, 4.0 + 0.0])
    batched = ember.vmap(lambda v: jnp.clip(jnp.where(v > 0, v, 0.0), 0, 1))(np.stack([x, -x]))
    np.testing.assert_array_equal(np.asarray(batched), [[0, 0.5, 1], [1, 0, 0]])


# ---------------------------------------------------------------------------------------------
# The functions rewritten in JAX's op order (tril, triu, trace, eye, tri, fmax, fmin,
# count_nonzero, kron, isclose, allclose): values against NumPy, eagerly and under one jit.
# ---------------------------------------------------------------------------------------------

_NANS = np.array([1.0, np.nan, 3.0, np.nan, -0.0, np.inf, -np.inf, 2.0], np.float32)
_NANS2 = np.array([2.0, 0.5, np.nan, np.nan, 0.0, np.inf, np.inf, 2.0 + 1e-6], np.float32)
_R = np.random.default_rng(1)
_CUBE = _R.standard_normal((2, 3, 5)).astype(np.float32)
# rows with some NaNs, an all-NaN row (NaN for max, min and mean; 0 for sum) and none
_NANM = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [4.0, 5.0, 6.0]], np.float32)

VALUE_CASES = {
    "tril": (lambda m: jnp.tril(m, 1), lambda m: np.tril(m, 1), (_CUBE,)),
    "triu": (lambda m: jnp.triu(m, -1), lambda m: np.triu(m, -1), (_CUBE,)),
    "tril_empty": (lambda m: jnp.tril(m), np.tril, (np.ones((0, 3), np.int32),)),
    "trace": (lambda m: jnp.trace(m, 1, 2, 0), lambda m: np.trace(m, 1, 2, 0), (_CUBE,)),
    "trace_neg": (lambda m: jnp.trace(m, -1), lambda m: np.trace(m, -1), (_CUBE[0],)),
    "trace_empty": (lambda m: jnp.trace(m), np.trace, (np.ones((3, 0), np.float32),)),
    # a traced offset (an argument of the nested jit, as in JAX), beyond the matrix too
    "trace_traced_offset": (lambda m, k: jnp.trace(m, k, 0, 2), lambda m, k: np.trace(
        m, int(k), 0, 2), (_CUBE, np.int32(-1))),
    "trace_traced_offset_out": (lambda m, k: jnp.trace(m, k), lambda m, k: np.trace(
        m, int(k)), (_CUBE[0], np.int32(7))),
    "eye": (lambda s: jnp.eye(4, 3, -1) + s, lambda s: np.eye(4, 3, -1) + s, (np.float32(0),)),
    "tri": (lambda s: jnp.tri(3, 5, 2) + s, lambda s: np.tri(3, 5, 2) + s, (np.float32(0),)),
    "fmax": (jnp.fmax, np.fmax, (_NANS, _NANS2)),
    "fmin": (jnp.fmin, np.fmin, (_NANS, _NANS2)),
    "fmax_int": (jnp.fmax, np.fmax, (np.arange(-3, 4, dtype=np.int32), np.int32(1))),
    "count_nonzero": (lambda a: jnp.count_nonzero(a, axis=(0, 2)),
                      lambda a: np.count_nonzero(a, axis=(0, 2)),
                      (np.where(_CUBE > 0, _CUBE, 0),)),
    "count_nonzero_nan": (jnp.count_nonzero, np.count_nonzero, (_NANS,)),
    "kron": (jnp.kron, np.kron, (_CUBE[0, :2, :3], _CUBE[1])),
    "kron_ranks": (jnp.kron, np.kron, (np.arange(3, dtype=np.int32), _CUBE)),
    "kron_empty": (jnp.kron, np.kron, (np.ones((0, 2), np.float32), _CUBE[0])),
    "isclose": (jnp.isclose, np.isclose, (_NANS, _NANS2)),
    "isclose_nan": (lambda a, b: jnp.isclose(a, b, equal_nan=True),
                    lambda a, b: np.isclose(a, b, equal_nan=True), (_NANS, _NANS2)),
    # integers compare with the tolerances too, as in NumPy and JAX
    "isclose_int": (lambda a: jnp.isclose(a, 101, rtol=0.1), lambda a: np.isclose(a, 101,
                                                                                   rtol=0.1),
                    (np.array([100, 50, 111], np.int32),)),
    "allclose": (lambda a, b: jnp.allclose(a, b, atol=1e-5), lambda a, b: np.allclose(
        a, b, atol=1e-5), (_NANS2[-2:], _NANS2[-2:] + np.float32(1e-6))),
    "flip": (lambda m: jnp.flip(m, (0, 2)), lambda m: np.flip(m, (0, 2)), (_CUBE,)),
    "flip_all": (jnp.flip, np.flip, (_CUBE,)),
    "flip_0d": (jnp.flip, np.flip, (np.float32(3),)),
    "ptp": (lambda m: jnp.ptp(m, axis=(0, 2)), lambda m: np.ptp(m, axis=(0, 2)), (_CUBE,)),
    "ptp_int": (jnp.ptp, np.ptp, (np.arange(7, dtype=np.int32),)),
    "signbit": (jnp.signbit, np.signbit, (np.array([-0.0, 0.0, -np.nan, np.nan, -np.inf, 2.0],
                                                    np.float32),)),
    "signbit_int": (jnp.signbit, np.signbit, (np.arange(-3, 3, dtype=np.int32),)),
    "copysign": (jnp.copysign, np.copysign, (_NANS, -_NANS2)),
    "copysign_bcast": (jnp.copysign, np.copysign, (M34, np.array([-1.0, 0.0, -0.0, 2.0],
                                                                  np.float32))),
    "rint": (jnp.rint, np.rint, (np.array([0.5, 1.5, 2.5, -0.5, -2.7, np.nan], np.float32),)),
    "isinf": (jnp.isinf, np.isinf, (_NANS,)),
    "isinf_int": (jnp.isinf, np.isinf, (np.arange(3, dtype=np.int32),)),
    "isreal": (jnp.isreal, np.isreal, (np.array([1 + 0j, 1j, 2], np.complex64),)),
    "iscomplex": (jnp.iscomplex, np.iscomplex, (np.array([1 + 0j, 1j, 2], np.complex64),)),
    "around": (lambda x: jnp.around(x, 1), lambda x: np.around(x, 1), (X7,)),
    "fmod": (jnp.fmod, np.fmod, (_CUBE * 3, np.float32(-1.25))),
    "fmod_int": (jnp.fmod, np.fmod, (np.arange(-4, 4, dtype=np.int32), np.int32(3))),
    "remainder": (jnp.remainder, np.remainder, (X7, np.float32(-0.75))),
    "remainder_int": (jnp.remainder, np.remainder, (np.arange(-4, 4, dtype=np.int32),
                                                    np.int32(-3))),
    "modf_frac": (lambda x: jnp.modf(x)[0], lambda x: np.modf(x)[0], (_CUBE * 3,)),
    "modf_whole": (lambda x: jnp.modf(x)[1], lambda x: np.modf(x)[1], (_NANS,)),
    "hypot": (jnp.hypot, np.hypot, (np.array([3.0, 0.0, np.inf, np.nan, 1e30, -5.0, 0.0],
                                              np.float32),
                                     np.array([4.0, 0.0, np.nan, 1.0, 1e30, 12.0, -2.0],
                                              np.float32))),
    "nansum": (lambda m: jnp.nansum(m, axis=1), lambda m: np.nansum(m, axis=1), (_NANM,)),
    "nanprod": (jnp.nanprod, np.nanprod, (_NANS[:4],)),
    "nanmax": (lambda m: jnp.nanmax(m, axis=0), lambda m: np.nanmax(m, axis=0), (_NANM,)),
    "nanmin": (lambda m: jnp.nanmin(m, axis=1), lambda m: np.nanmin(m, axis=1), (_NANM,)),
    "nanmean": (lambda m: jnp.nanmean(m, axis=1), lambda m: np.nanmean(m, axis=1), (_NANM,)),
    "nanmean_where": (lambda m: jnp.nanmean(m, axis=0, where=m < 5),
                      lambda m: np.nanmean(m, axis=0, where=m < 5), (_NANM,)),
    "nanmean_int": (jnp.nanmean, np.nanmean, (np.arange(5, dtype=np.int32),)),
    "nanmean_complex": (jnp.nanmean, np.nanmean, (np.array([1 + 2j, np.nan, 3 - 1j, 1j * np.nan],
                                                            np.complex64),)),
    "nancumsum_complex": (jnp.nancumsum, np.nancumsum, (np.array([1 + 2j, np.nan, 3 - 1j],
                                                                  np.complex64),)),
    "nansum_complex": (jnp.nansum, np.nansum, (np.array([1 + 2j, np.nan, 3 - 1j], np.complex64),)),
    "rot90": (lambda m: jnp.rot90(m, -3, [2, 0]), lambda m: np.rot90(m, -3, [2, 0]), (_CUBE,)),
    "rot90_2": (lambda m: jnp.rot90(m, 2), lambda m: np.rot90(m, 2), (_CUBE,)),
    "heaviside": (jnp.heaviside, np.heaviside, (np.array([-1.0, 0.0, -0.0, 2.0, np.nan, np.inf],
                                                          np.float32), np.float32(0.5))),
    "heaviside_int": (jnp.heaviside, np.heaviside, (np.arange(-2, 3, dtype=np.int32),
                                                    np.arange(5, dtype=np.int32))),
    "floor_divide": (jnp.floor_divide, np.floor_divide, (_CUBE * 4, np.float32(-0.75))),
    "floor_divide_zero": (jnp.floor_divide, np.floor_divide, (X7, np.zeros(7, np.float32))),
    "floor_divide_int": (jnp.floor_divide, np.floor_divide, (np.arange(-5, 5, dtype=np.int32),
                                                             np.int32(-3))),
    "divmod_mod": (lambda x, y: jnp.divmod(x, y)[1], lambda x, y: np.divmod(x, y)[1],
                   (_CUBE * 4, np.float32(0.75))),
    "allclose_false": (jnp.allclose, np.allclose, (_NANS, _NANS)),
}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_jax_ordered_functions_values(name):
    fun, ref, args = VALUE_CASES[name]
    want = np.asarray(ref(*args))
    for got in (fun(*args), ember.jit(fun)(*args)):
        got = np.asarray(got)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_trace_same_axes_error():
    with pytest.raises(ValueError, match="axis1 and axis2 can not be same"):
        jnp.trace(M34, axis1=1, axis2=-1)


def test_grad_through_nested_jits_applied_to_tangents():
    # A custom JVP rule that applies jit-wrapped jnp functions (trace, tril, where) and a
    # user's jit to the tangent: linearizing stages `jit` equations on tangents, which
    # reverse mode must transpose.
    scale = ember.jit(lambda t: t * 3.0)

    @ember.custom_jvp
    def f(m):
        return jnp.sum(m * m)

    @f.defjvp
    def f_jvp(primals, tangents):
        (m,), (t,) = primals, tangents
        lin = jnp.trace(jnp.tril(t)) + jnp.sum(jnp.where(m > 0, scale(t), -t))
        return f(m), lin

    m = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]], np.float32)
    want = np.eye(2, 3, dtype=np.float32) + np.where(m > 0, 3.0, -1.0)
    np.testing.assert_allclose(np.asarray(ember.grad(f)(m)), want)
    np.testing.assert_allclose(np.asarray(ember.jit(ember.grad(f))(m)), want)
