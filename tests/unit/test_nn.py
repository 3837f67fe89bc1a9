"""ember.nn against NumPy/SciPy references, and its gradients against JAX 0.10.2's.

Values: every activation over edge values (+-0, +-inf, nan, large |x|) and random ones, in
float32 and float64 (x64), shapes (), (0,), (7,), (3, 5), eagerly and under one `jit` per
dtype; softmax/log_softmax/logsumexp/logmeanexp with axes, `where`, `b`; one_hot;
standardize; glu; dot_product_attention against a per-head NumPy loop (causal, mask, bias,
grouped heads, sequence lengths, windows, residual). Gradients: JAX 0.10.2's values at edge
points written below as literals (made with `jax.vmap(jax.grad(jax.nn.f))`), and
`check_grads` in float64. vmap of softmax and attention. The compiled text holds no host
callback.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import ember
import ember.nn as nn
import ember.numpy as jnp
from tests.ops.ad_checks import check_grads

inf, nan = float("inf"), float("nan")

EDGES = np.array([-np.inf, -100., -20., -6., -1., -0.5, -0.0, 0., 1e-30, 0.5, 1., 3., 6.,
                  20., 100., np.inf, np.nan])


def _inputs(dtype: type) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([EDGES, rng.normal(0, 4, 13)]).astype(dtype)  # 30 values


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

# name -> (ember function, float64 NumPy reference)
ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "selu": (nn.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(np.minimum(x, 0)))),
    "celu": (lambda x: nn.celu(x, 0.5),
             lambda x: np.maximum(x, 0) + 0.5 * np.expm1(np.minimum(x, 0) / 0.5)),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                                           * (x + 0.044715 * x ** 3)))),
    "gelu_erf": (lambda x: nn.gelu(x, approximate=False),
                 lambda x: 0.5 * x * sp.erfc(-x / np.sqrt(2))),
    "sigmoid": (nn.sigmoid, sp.expit),
    "softplus": (nn.softplus, lambda x: np.logaddexp(x, 0)),
    "silu": (nn.silu, lambda x: x * sp.expit(x)),
    "swish": (nn.swish, lambda x: x * sp.expit(x)),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "leaky_relu_0.2": (lambda x: nn.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -np.logaddexp(0, -x)),
    "mish": (nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0))),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "sparse_plus": (nn.sparse_plus,
                    lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    "sparse_sigmoid": (nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "tanh": (nn.tanh, np.tanh),
    "identity": (nn.identity, lambda x: x),
}


# float32 formulas that cancel (1 + tanh(u) for u near -3 in gelu's approximation,
# x + sqrt(x^2 + 4) for x << 0) lose
# a few more bits than one rounding, in JAX as here.
LOOSE32 = {"gelu_tanh": 2e-5, "squareplus": 1e-4}


def _close(got: object, want: np.ndarray, dtype: type, name: str = "") -> None:
    got = np.asarray(got)
    assert got.dtype == dtype, (got.dtype, dtype)
    want = np.asarray(want, np.float64)
    rtol = LOOSE32.get(name, 2e-6) if dtype == np.float32 else 1e-13
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol * 1e-3,
                                   equal_nan=True)


def _check_activations(dtype: type) -> None:
    x = _inputs(dtype)
    with np.errstate(all="ignore"):
        want = {n: ref(x.astype(np.float64)) for n, (_, ref) in ACTIVATIONS.items()}
    jitted = ember.jit(lambda v: {n: f(v) for n, (f, _) in ACTIVATIONS.items()})(x)
    for name, (f, _) in ACTIVATIONS.items():
        _close(f(x), want[name], dtype, name)
        _close(jitted[name], want[name], dtype, name)
        for shape in [(), (0,), (7,), (3, 5)]:
            part = x[5:5 + int(np.prod(shape))].reshape(shape)
            out = f(part)
            assert out.shape == shape
            _close(out, want[name][5:5 + int(np.prod(shape))].reshape(shape), dtype, name)


def test_activations_float32() -> None:
    _check_activations(np.float32)


def test_activations_float64(x64) -> None:
    _check_activations(np.float64)


def test_integer_inputs_keep_jax_dtypes() -> None:
    x = np.array([-3, 0, 2, 9], np.int32)
    assert nn.relu(x).dtype == np.int32 and nn.relu6(x).dtype == np.float32
    np.testing.assert_array_equal(nn.relu(x), [0, 0, 2, 9])
    assert nn.gelu(x).dtype == np.float32
    assert nn.one_hot(x, 3).dtype == np.float32
    with pytest.raises(TypeError, match="silu requires ndarray or scalar arguments"):
        nn.silu([1.0, 2.0])
    with pytest.raises(TypeError, match="max requires ndarray or scalar arguments"):
        nn.softmax([1.0, 2.0])


def test_log1mexp() -> None:
    x = np.array([1e-6, 0.1, 0.6931472, 1., 5., 40., np.inf, 0., -1.], np.float32)
    with np.errstate(all="ignore"):
        want = np.log(-np.expm1(-x.astype(np.float64)))
    _close(nn.log1mexp(x), want, np.float32)
    _close(ember.jit(nn.log1mexp)(x), want, np.float32)


# JAX 0.10.2's derivatives, jax.vmap(jax.grad(jax.nn.f))(POINTS), float32.
POINTS = np.array([-np.inf, -50., -6., -1., -0.0, 0., 0.5, 1., 6., 50., np.inf], np.float32)
JAX_GRADS = {
    "relu": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    "relu6": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    "elu": [0.0, 0.0, 0.00247877836227417, 0.3678794503211975, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
            1.0],
    "selu": [0.0, 0.0, 0.004357938654720783, 0.6467686295509338, 1.7580993175506592,
             1.7580993175506592, 1.0507010221481323, 1.0507010221481323, 1.0507010221481323,
             1.0507010221481323, 1.0507010221481323],
    "celu": [0.0, 0.0, 0.00247877836227417, 0.3678794503211975, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
             1.0],
    "sigmoid": [0.0, 1.9287498933537385e-22, 0.0024665091186761856, 0.1966119408607483, 0.25,
                0.25, 0.23500370979309082, 0.1966119259595871, 0.002466465812176466, 0.0,
                0.0],
    "softplus": [0.0, 1.9287498933537385e-22, 0.0024726230185478926, 0.26894140243530273,
                 0.5, 0.5, 0.622459352016449, 0.7310585379600525, 0.9975273013114929, 1.0,
                 1.0],
    "silu": [nan, -9.450874540542191e-21, -0.012326431460678577, 0.07232949137687683, 0.5,
             0.5, 0.7399612069129944, 0.9276705384254456, 1.0123262405395508, 1.0, nan],
    "leaky_relu": [0.009999999776482582, 0.009999999776482582, 0.009999999776482582,
                   0.009999999776482582, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    "hard_tanh": [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
    "log_sigmoid": [1.0, 1.0, 0.9975273013114929, 0.7310585379600525, 0.5, 0.5,
                    0.3775406777858734, 0.26894140243530273, 0.0024726230185478926,
                    1.9287498933537385e-22, 0.0],
    "mish": [nan, -9.450874540542191e-21, -0.012359967455267906, 0.05921675264835358,
             0.6000000238418579, 0.6000000238418579, 0.8864244222640991, 1.0490361452102661,
             1.0001333951950073, 1.0, nan],
    "soft_sign": [nan, 0.00038446858525276184, 0.02040816843509674, 0.25, 1.0, 1.0,
                  0.444444477558136, 0.25, 0.02040816843509674, 0.00038446858525276184, nan],
    "hard_sigmoid": [0.0, 0.0, 0.0, 0.1666666716337204, 0.1666666716337204,
                     0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.0, 0.0,
                     0.0],
    "hard_silu": [0.0, 0.0, 0.0, 0.1666666716337204, 0.5, 0.5, 0.6666666865348816,
                  0.8333333730697632, 1.0, 1.0, 1.0],
    "sparse_plus": [nan, 0.0, 0.0, 0.0, 0.5, 0.5, 0.75, 1.0, 1.0, 1.0, nan],
    "sparse_sigmoid": [0.0, 0.0, 0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0, 0.0, 0.0],
    # (at -50 the derivative 1 + x / sqrt(x^2 + 4) cancels: 5 digits agree)
    "squareplus": [nan, 0.00039954856038093567, 0.02565835416316986, 0.27639320492744446,
                   0.5, 0.5, 0.6212677955627441, 0.7236068248748779, 0.974341630935669,
                   0.9996004700660706, nan],
    "gelu_tanh": [nan, 0.0, 0.0, -0.08296407014131546, 0.5, 0.5, 0.8673699498176575,
                  1.0829639434814453, 1.0, 1.0, nan],
    "gelu_erf": [nan, 0.0, -3.546877991311703e-08, -0.08331547677516937, 0.5, 0.5,
                 0.8674951195716858, 1.0833154916763306, 1.0, 1.0, nan],
}
LOG1MEXP_POINTS = np.array([1e-3, 0.5, 0.6931472, 1., 6., 50., np.inf], np.float32)
LOG1MEXP_GRAD = [999.5001831054688, 1.5414940118789673, 1.0, 0.5819767117500305,
                 0.0024849115870893, 1.9287498933537385e-22, 0.0]


def _grad_close(got: object, want: list[float], rtol: float = 2e-6) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float32).ravel(), np.float32(want),
                               rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", sorted(JAX_GRADS))
def test_gradients_match_jax_at_edge_points(name: str) -> None:
    f = nn.celu if name == "celu" else ACTIVATIONS[name][0]  # (JAX's at the default alpha)
    _grad_close(ember.vmap(ember.grad(f))(POINTS), JAX_GRADS[name],
                rtol=1e-4 if name == "squareplus" else 2e-6)


def test_gradients_match_jax_under_jit() -> None:
    names = ["relu", "relu6", "gelu_erf", "softplus", "elu"]
    grads = ember.jit(lambda x: [ember.vmap(ember.grad(ACTIVATIONS[n][0]))(x)
                                 for n in names])(POINTS)
    for n, g in zip(names, grads, strict=True):
        _grad_close(g, JAX_GRADS[n])
    _grad_close(ember.vmap(ember.grad(nn.log1mexp))(LOG1MEXP_POINTS), LOG1MEXP_GRAD)


def test_relu_subgradient_at_zero_is_zero() -> None:
    assert float(ember.grad(nn.relu)(0.)) == 0.0
    assert float(ember.grad(nn.relu6)(6.)) == 0.0 and float(ember.grad(nn.relu6)(0.)) == 0.0
    assert float(ember.jit(ember.grad(nn.relu))(0.)) == 0.0
    # second derivative through the custom rule: 0 everywhere
    assert float(ember.grad(ember.grad(nn.relu))(2.)) == 0.0


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "gelu_tanh", "gelu_erf", "sigmoid",
                                  "softplus", "silu", "log_sigmoid", "mish", "soft_sign",
                                  "squareplus"])
def test_check_grads(x64, name: str) -> None:
    f = ACTIVATIONS[name][0]
    x = np.array([-3.1, -0.7, 0.4, 2.3])
    check_grads(f, (x,), order=2)


def test_check_grads_jit(x64) -> None:
    x = np.array([[-1.3, 0.2, 2.0], [0.5, -0.4, 1.1]])
    check_grads(lambda v: nn.softmax(v, axis=1), (x,), order=2, use_jit=True)
    check_grads(lambda v: nn.log_softmax(v, axis=0), (x,), order=1, use_jit=True)
    check_grads(lambda v: nn.logsumexp(v, axis=(0, 1)), (x,), order=2)
    check_grads(lambda v: nn.standardize(v, axis=1), (x,), order=1)
    check_grads(lambda v: nn.glu(v, axis=0), (x,), order=1)


# softmax family ---------------------------------------------------------------------------

def _np_softmax(x: np.ndarray, axis: object, where: np.ndarray | None = None) -> np.ndarray:
    w = np.ones_like(x, bool) if where is None else np.broadcast_to(where, x.shape)
    m = np.max(np.where(w, x, -np.inf), axis=axis, keepdims=True)
    e = np.where(w, np.exp(x - m), 0)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_log_softmax(request, dtype: type) -> None:
    if dtype == np.float64:
        request.getfixturevalue("x64")
    rng = np.random.default_rng(1)
    x = rng.normal(0, 3, (3, 4, 5)).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    fn = ember.jit(lambda v, w: [nn.softmax(v, axis=(0, 2)), nn.log_softmax(v),
                                 nn.softmax(v, axis=1, where=w),
                                 nn.log_softmax(v, axis=None, where=w)])
    w = rng.random((4, 5)) > 0.3
    for outs in ([nn.softmax(x, axis=(0, 2)), nn.log_softmax(x), nn.softmax(x, axis=1, where=w),
                  nn.log_softmax(x, axis=None, where=w)], fn(x, w)):
        assert all(o.dtype == dtype for o in outs)
        np.testing.assert_allclose(outs[0], _np_softmax(x, (0, 2)), rtol=rtol)
        np.testing.assert_allclose(outs[1], sp.log_softmax(x, axis=-1), rtol=rtol, atol=rtol)
        np.testing.assert_allclose(outs[2], _np_softmax(x, 1, w), rtol=rtol)
        with np.errstate(divide="ignore"):
            want = np.where(w, np.log(_np_softmax(x, (0, 1, 2), w)), -np.inf)
        np.testing.assert_allclose(outs[3], want, rtol=rtol, atol=rtol)
    # edge rows: an inf gives nan (inf / inf), a -inf entry weight 0; size 0 and rank 0
    e = np.array([[1., -np.inf, 2.], [np.inf, 0., 1.]], dtype)
    out = np.asarray(nn.softmax(e))
    np.testing.assert_allclose(out[0], _np_softmax(e[:1], -1)[0], rtol=rtol)
    assert np.isnan(out[1]).all()
    assert nn.softmax(np.zeros((0, 3), dtype)).shape == (0, 3)
    assert float(nn.softmax(np.asarray(2.5, dtype), axis=None)) == 1.0


def test_logsumexp_logmeanexp() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(0, 5, (4, 6)).astype(np.float32)
    b = rng.normal(0, 1, (4, 6)).astype(np.float32)
    w = (rng.random((4, 6)) > 0.4) | (np.arange(4) == 0)[:, None]  # (no empty column)
    r, s = nn.logsumexp(x, axis=1, b=b, return_sign=True)
    wr, ws = sp.logsumexp(x.astype(np.float64), axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(r, wr, rtol=1e-5)
    np.testing.assert_array_equal(s, ws)
    # a negative sum without return_sign is nan, as SciPy's
    got = np.asarray(nn.logsumexp(x, axis=1, b=b))
    np.testing.assert_array_equal(np.isnan(got), ws < 0)
    np.testing.assert_allclose(nn.logsumexp(x, axis=(0, 1), keepdims=True),
                               sp.logsumexp(x, axis=(0, 1), keepdims=True), rtol=1e-6)
    want = np.log(np.sum(np.where(w, np.exp(x.astype(np.float64)), 0), axis=0))
    np.testing.assert_allclose(nn.logsumexp(x, axis=0, where=w), want, rtol=1e-5)
    cnt = w.sum(axis=0)
    np.testing.assert_allclose(nn.logmeanexp(x, axis=0, where=w), want - np.log(cnt),
                               rtol=1e-5)
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1, keepdims=True),
                               sp.logsumexp(x, axis=1, keepdims=True) - np.log(6), rtol=1e-5)
    # all -inf rows give -inf, an inf gives inf, empty gives -inf
    e = np.array([[-np.inf, -np.inf], [np.inf, 1.]], np.float32)
    np.testing.assert_array_equal(nn.logsumexp(e, axis=1), [-np.inf, np.inf])
    assert float(nn.logsumexp(np.zeros((0,), np.float32))) == -np.inf
    np.testing.assert_allclose(ember.jit(lambda v: nn.logsumexp(v, axis=1, b=b))(x),
                               got, rtol=1e-5, equal_nan=True)


# JAX 0.10.2's gradients of sum(w * softmax(R)), ..., float32 (jax.grad).
ROWS = np.array([[1., 2., -np.inf, 0.5], [-np.inf] * 4, [3., 3., 3., 3.]], np.float32)
WEIGHTS = np.array([1., -2., 0.5, 3.], np.float32)
MASK = np.array([True, False, True, True])
SOFTMAX_GRAD = [0.37113896012306213, -0.8767348527908325, 0.0, 0.5055959224700928, nan, nan,
                nan, nan, 0.09375, -0.65625, -0.03125, 0.59375]
LOG_SOFTMAX_GRAD = [0.5375522375106812, -3.257063388824463, 0.0, 2.7195112705230713, nan, nan,
                    nan, nan, 0.375, -2.625, -0.125, 2.375]
LSE_GRAD = [0.23122389614582062, 0.6285316944122314, 0.0, 0.14024437963962555, nan, nan, nan,
            nan, 0.25, 0.25, 0.25, 0.25]
SOFTMAX_WHERE_GRAD = [-0.47000735998153687, 0.0, -0.0, 0.47000744938850403, nan, 0.0, nan,
                      nan, -0.1666666567325592, 0.0, -0.3333333134651184, 0.5]
LSE_B_GRAD = [0.622459352016449, 0.0, 0.0, 0.3775406777858734, nan, 0.0, nan, nan, 0.25, 0.0,
              0.5, 0.25]


def test_softmax_family_gradients_match_jax() -> None:
    def finite_log_softmax(x: object) -> object:
        y = nn.log_softmax(x)
        return jnp.sum(jnp.where(jnp.isfinite(y), y, 0) * WEIGHTS)

    cases = [(lambda x: jnp.sum(nn.softmax(x) * WEIGHTS), SOFTMAX_GRAD),
             (finite_log_softmax, LOG_SOFTMAX_GRAD),
             (lambda x: jnp.sum(nn.logsumexp(x, axis=1)), LSE_GRAD),
             (lambda x: jnp.sum(nn.softmax(x, where=MASK) * WEIGHTS), SOFTMAX_WHERE_GRAD),
             (lambda x: jnp.sum(nn.logsumexp(x, axis=1, b=np.float32([1, 0, 2, 1]))),
              LSE_B_GRAD)]
    for f, want in cases:
        _grad_close(ember.grad(f)(ROWS), want)
    _grad_close(ember.jit(ember.grad(cases[0][0]))(ROWS), SOFTMAX_GRAD)


# one_hot, standardize, glu ---------------------------------------------------------------

def test_one_hot() -> None:
    x = np.array([[0, 2, -1], [3, 1, 1]], np.int32)
    want = (x[..., None] == np.arange(3)).astype(np.float32)
    np.testing.assert_array_equal(nn.one_hot(x, 3), want)
    np.testing.assert_array_equal(nn.one_hot(x, 3, axis=0), np.moveaxis(want, -1, 0))
    np.testing.assert_array_equal(nn.one_hot(x, 3, axis=1), np.moveaxis(want, -1, 1))
    out = ember.jit(lambda v: nn.one_hot(v, 3, dtype=jnp.int8))(x)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, want)
    assert nn.one_hot(np.zeros((0,), np.int32), 4).shape == (0, 4)
    np.testing.assert_array_equal(nn.one_hot(2, 4), [0, 0, 1, 0])
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        nn.one_hot(x, 3, axis=3)
    with pytest.raises(ember.errors.ConcretizationTypeError,
                       match="The error arose in jax.nn.one_hot argument `num_classes`."):
        ember.jit(lambda n: nn.one_hot(x, n))(3)
    with pytest.warns(DeprecationWarning, match="should be integer-typed"):
        nn.one_hot(np.array([1.0]), 2)
    # a vmap axis name: each example's class is its position along the axis
    got = ember.vmap(lambda v: nn.one_hot(v, 4, axis="i"), axis_name="i")(
        np.array([0, 2, 2, 3], np.int32))
    np.testing.assert_array_equal(got, [1, 0, 1, 1])
    with pytest.raises(ValueError, match="Expected num_classes to match the size of axis i"):
        ember.vmap(lambda v: nn.one_hot(v, 3, axis="i"), axis_name="i")(np.arange(4))


def test_standardize_and_glu() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(2, 3, (3, 8)).astype(np.float32)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(x), ref, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(nn.standardize(x, algorithm="stable"), ref, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(ember.jit(nn.standardize)(x), ref, rtol=2e-4, atol=2e-5)
    ref0 = (x - 1.) / np.sqrt(4. + 0.1)
    np.testing.assert_allclose(nn.standardize(x, axis=0, mean=1., variance=4., epsilon=0.1),
                               ref0, rtol=1e-6)
    w = rng.random((3, 8)) > 0.3
    m = np.sum(np.where(w, x, 0), -1, keepdims=True) / w.sum(-1, keepdims=True)
    v = np.sum(np.where(w, (x - m) ** 2, 0), -1, keepdims=True) / w.sum(-1, keepdims=True)
    np.testing.assert_allclose(nn.standardize(x, where=w, algorithm="stable"),
                               (x - m) / np.sqrt(v + 1e-5), rtol=1e-5, atol=1e-5)
    # a constant row: the fast variance rounds at 0 and is clipped, no nan
    assert np.isfinite(np.asarray(nn.standardize(np.full((5,), 3.3, np.float32)))).all()
    with pytest.raises(ValueError, match="Unknown algorithm 'x'. Expected 'fast' or 'stable'."):
        nn.standardize(x, algorithm="x")
    np.testing.assert_allclose(nn.glu(x), x[:, :4] * sp.expit(x[:, 4:]), rtol=1e-6)
    np.testing.assert_allclose(nn.glu(x[:2], axis=0), x[:1] * sp.expit(x[1:2]), rtol=1e-6)
    with pytest.raises(AssertionError, match="axis size must be divisible by 2"):
        nn.glu(x, axis=0)


# dot_product_attention -------------------------------------------------------------------

def _np_attention(q, k, v, bias=None, mask=None, causal=False, scale=None, q_len=None,
                  kv_len=None, window=None):
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(h) if scale is None else scale
    out = np.zeros((b, t, n, h))
    lse = np.zeros((b, t, n))
    big = -0.7 * float(np.finfo(np.float32).max)
    for bi in range(b):
        for ni in range(n):
            kv = ni // (n // kh)
            logits = q[bi, :, ni].astype(np.float64) @ k[bi, :, kv].T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (b, n, t, s))[bi, ni]
            keep = np.ones((t, s), bool)
            if mask is not None:
                keep &= np.broadcast_to(mask, (b, n, t, s))[bi, ni]
            i, j = np.mgrid[:t, :s]
            if causal:
                keep &= j <= i
            if window is not None:
                keep &= (i <= j + window[0]) & (i >= j - window[1])
            if q_len is not None:
                keep &= i < q_len[bi]
            if kv_len is not None:
                keep &= j < kv_len[bi]
            if mask is not None or causal or window or q_len is not None or kv_len is not None:
                logits = np.where(keep, logits, big)
            p = _np_softmax(logits, -1)
            out[bi, :, ni] = p @ v[bi, :, kv]
            lse[bi, :, ni] = sp.logsumexp(logits, axis=-1)
            if q_len is not None:
                out[bi, q_len[bi]:, ni] = 0
    return out, lse


def test_dot_product_attention() -> None:
    rng = np.random.default_rng(4)
    b, t, s, n, kh, h = 2, 5, 6, 4, 2, 3
    q = rng.normal(size=(b, t, n, h)).astype(np.float32)
    k = rng.normal(size=(b, s, kh, h)).astype(np.float32)
    v = rng.normal(size=(b, s, kh, h)).astype(np.float32)
    bias = rng.normal(size=(1, n, t, s)).astype(np.float32)
    mask = rng.random((b, 1, t, s)) > 0.3
    q_len, kv_len = np.array([3, 5], np.int32), np.array([6, 2], np.int32)
    cases = [
        ({}, {}),
        ({"is_causal": True}, {"causal": True}),
        ({"bias": bias, "mask": mask, "scale": 0.7}, {"bias": bias, "mask": mask,
                                                     "scale": 0.7}),
        ({"query_seq_lengths": q_len, "key_value_seq_lengths": kv_len, "is_causal": True},
         {"q_len": q_len, "kv_len": kv_len, "causal": True}),
        ({"local_window_size": (1, 2)}, {"window": (1, 2)}),
        ({"local_window_size": 1}, {"window": (1, 1)}),
    ]
    for kwargs, ref_kwargs in cases:
        want, want_lse = _np_attention(q, k, v, **ref_kwargs)
        got = nn.dot_product_attention(q, k, v, **kwargs)
        assert got.shape == q.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        out, lse = nn.dot_product_attention(q, k, v, return_residual=True, **kwargs)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-5)
    # float16 operands: logits and softmax in float32, output float16
    half = nn.dot_product_attention(q.astype(np.float16), k.astype(np.float16),
                                    v.astype(np.float16), is_causal=True)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float32), _np_attention(q, k, v, causal=True)[0],
                               rtol=2e-2, atol=5e-3)
    # jit, and rank-3 (TNH) inputs
    f = ember.jit(lambda a, c, d: nn.dot_product_attention(a, c, d, is_causal=True,
                                                           implementation="xla"))
    np.testing.assert_allclose(f(q[0], k[0], v[0]), _np_attention(
        q[:1], k[:1], v[:1], causal=True)[0][0], rtol=1e-5, atol=1e-5)
    # vmap over a leading axis equals the batched call
    got = ember.vmap(lambda a, c, d: nn.dot_product_attention(a, c, d, is_causal=True))(
        q, k, v)
    np.testing.assert_allclose(got, _np_attention(q, k, v, causal=True)[0], rtol=1e-5,
                               atol=1e-5)


def test_dot_product_attention_grads_match_jax() -> None:
    # (the softmax runs in float32 whatever the inputs, as JAX's, so finite differences
    # cannot check it; JAX's own gradients can)
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    q = rng.normal(size=(2, 3, 4, 2)).astype(np.float32)
    k = rng.normal(size=(2, 5, 2, 2)).astype(np.float32)
    v = rng.normal(size=(2, 5, 2, 2)).astype(np.float32)
    bias = rng.normal(size=(2, 1, 3, 5)).astype(np.float32)
    mask = rng.random((1, 4, 3, 5)) > 0.2
    w = rng.normal(size=q.shape).astype(np.float32)

    def loss(mod, numpy):
        def f(a, c, d, e):
            out = mod.dot_product_attention(a, c, d, e, mask, is_causal=True)
            return numpy.sum(out * w)
        return f

    want = jax.grad(loss(jax.nn, jax.numpy), argnums=(0, 1, 2, 3))(q, k, v, bias)
    got = ember.jit(ember.grad(loss(nn, jnp), argnums=(0, 1, 2, 3)))(q, k, v, bias)
    for g, e in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(e), rtol=2e-5, atol=2e-6)


def test_dot_product_attention_errors(x64) -> None:
    rng = np.random.default_rng(5)
    q = rng.normal(size=(1, 3, 2, 2))
    k = rng.normal(size=(1, 4, 1, 2))
    v = rng.normal(size=(1, 4, 1, 2))
    with pytest.raises(ValueError, match="value shape should be"):
        nn.dot_product_attention(q, k, v[:, :3])
    with pytest.raises(ValueError, match="query dtype should be float64, but got float32"):
        nn.dot_product_attention(q.astype(np.float32), k, v)
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 3, 4)))
    with pytest.raises(ValueError, match="number of query heads must be a multiple"):
        nn.dot_product_attention(rng.normal(size=(1, 3, 3, 2)), np.ones((1, 4, 2, 2)),
                                 np.ones((1, 4, 2, 2)))
    with pytest.raises(ValueError, match="Unsupported implementation option: foo"):
        nn.dot_product_attention(q, k, v, implementation="foo")
    with pytest.raises(ValueError, match="cuDNN"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")


def test_vmap_softmax_and_no_host_callbacks() -> None:
    x = np.random.default_rng(6).normal(size=(4, 7)).astype(np.float32)
    np.testing.assert_allclose(ember.vmap(nn.softmax)(x), _np_softmax(x, -1), rtol=1e-6)
    np.testing.assert_allclose(ember.vmap(nn.log_softmax, in_axes=1, out_axes=1)(x),
                               sp.log_softmax(x, axis=0), rtol=1e-5, atol=1e-6)
    text = ember.jit(lambda v: [nn.gelu(v, approximate=False), nn.softmax(v),
                                ember.grad(lambda u: jnp.sum(nn.relu(u)))(v)]
                     ).lower(x).as_text()
    assert "custom-call" not in text


def test_missing_names_say_not_implemented() -> None:
    with pytest.raises(AttributeError, match="ember.nn.scaled_matmul is not implemented yet"):
        nn.scaled_matmul  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'surely_not'"):
        nn.surely_not  # noqa: B018


def test_a_jax_style_training_step_matches_jax() -> None:
    # The same model code on both libraries: an MLP with gelu/relu, layer standardization,
    # softmax cross-entropy on one_hot labels, jit(value_and_grad) and per-example grads
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(7)
    params = {"w1": rng.normal(0, 0.5, (6, 8)).astype(np.float32),
              "b1": np.zeros(8, np.float32),
              "w2": rng.normal(0, 0.5, (8, 3)).astype(np.float32)}
    x = rng.normal(size=(5, 6)).astype(np.float32)
    y = np.array([0, 2, 1, 1, 0], np.int32)

    def make(lib_nn, lib_np, lib):
        def loss(p, xb, yb):
            h = lib_nn.gelu(xb @ p["w1"] + p["b1"])
            h = lib_nn.relu(lib_nn.standardize(h, axis=-1)) + lib_nn.silu(h)
            logits = h @ p["w2"]
            labels = lib_nn.one_hot(yb, 3)
            return -lib_np.mean(lib_np.sum(labels * lib_nn.log_softmax(logits), axis=-1))

        step = lib.jit(lib.value_and_grad(loss))
        per_example = lib.jit(lib.vmap(lib.grad(loss), in_axes=(None, 0, 0)))
        return step, per_example

    e_step, e_per = make(nn, jnp, ember)
    j_step, j_per = make(jax.nn, jax.numpy, jax)
    (ev, eg), (jv, jg) = e_step(params, x, y), j_step(params, x, y)
    np.testing.assert_allclose(ev, np.asarray(jv), rtol=1e-5)
    for k in params:
        np.testing.assert_allclose(eg[k], np.asarray(jg[k]), rtol=1e-4, atol=1e-6)
    ep, jp = e_per(params, x[:, None], y[:, None]), j_per(params, x[:, None], y[:, None])
    for k in params:
        np.testing.assert_allclose(ep[k], np.asarray(jp[k]), rtol=1e-4, atol=1e-6)
