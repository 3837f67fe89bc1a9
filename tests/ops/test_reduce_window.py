"""lax.reduce_window: the sum/max/min primitives JAX's monoid detection picks, and the
general fold for any other computation; padding strings and pairs (negative crops),
strides, base and window dilation, odd sizes and empty windows; against a direct-loop
NumPy reference, eagerly and under one shared jit; gradients by check_grads and, where JAX
is installed, against JAX 0.10.2's values (max pooling); vmap; the HLO text.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import lax
from ember.hlo.parser import parse_module
from ember.hlo.printer import print_module
from tests.ops.ad_checks import check_grads

RNG = np.random.default_rng(5)


def ref_reduce_window(x, init, op, dims, strides, padding, base, wdil):
    """Loops over output positions and taps; padding and holes hold `init`."""
    x = np.asarray(x)
    shape = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, base)]
    d = np.full(shape, init, x.dtype)
    d[tuple(slice(None, None, b) for b in base)] = x
    for k, (lo, hi) in enumerate(padding):
        widths = [(0, 0)] * x.ndim
        widths[k] = (max(lo, 0), max(hi, 0))
        d = np.pad(d, widths, constant_values=init)
        idx = [slice(None)] * x.ndim
        idx[k] = slice(max(-lo, 0), d.shape[k] - max(-hi, 0))
        d = d[tuple(idx)]
    ext = [(w - 1) * r + 1 if w else 0 for w, r in zip(dims, wdil)]
    out_shape = [max(0, (n - e) // s + 1) if n >= e else 0
                 for n, e, s in zip(d.shape, ext, strides)]
    out = np.full(out_shape, init, x.dtype)
    for pos in np.ndindex(*out_shape):
        acc = np.asarray(init, x.dtype)
        for tap in np.ndindex(*dims):
            acc = op(acc, d[tuple(p * s + t * r for p, s, t, r in zip(pos, strides, tap, wdil))])
        out[pos] = acc
    return out


MONOIDS = [("add", lax.add, np.add, 0.0), ("max", lax.max, np.maximum, -np.inf),
           ("min", lax.min, np.minimum, np.inf)]


def _random_params(rng, ndim):
    return dict(window_dimensions=tuple(int(rng.integers(1, 4)) for _ in range(ndim)),
                window_strides=tuple(int(rng.integers(1, 4)) for _ in range(ndim)),
                padding=tuple((int(rng.integers(-1, 3)), int(rng.integers(-1, 3)))
                              for _ in range(ndim)),
                base_dilation=tuple(int(rng.integers(1, 3)) for _ in range(ndim)),
                window_dilation=tuple(int(rng.integers(1, 3)) for _ in range(ndim)))


def _ref(x, init, np_op, p):
    return ref_reduce_window(x, init, np_op, p["window_dimensions"], p["window_strides"],
                             p["padding"], p["base_dilation"], p["window_dilation"])


SHAPES = [(7,), (5, 6), (3, 5, 4), (2, 9, 8, 3)]
CASES = [(RNG.standard_normal(s).astype(np.float32), _random_params(RNG, len(s)))
         for s in SHAPES for _ in range(2)]


def test_monoids_random_params_eager_and_one_jit():
    fns = [(name, op, np_op, init, x, p) for name, op, np_op, init in MONOIDS
           for x, p in CASES]
    eager = [lax.reduce_window(x, init, op, **p) for _, op, _, init, x, p in fns]
    jitted = ember.jit(lambda xs: [lax.reduce_window(x, init, op, **p) for x, (
        _, op, _, init, _, p) in zip(xs, fns)])([f[4] for f in fns])
    for (name, _, np_op, init, x, p), e, j in zip(fns, eager, jitted):
        want = _ref(x, np.float32(init), np_op, p)
        assert e.shape == want.shape, (name, p)
        np.testing.assert_allclose(np.asarray(e), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.asarray(j), want, rtol=1e-6, atol=1e-6)


def test_padding_strings_and_pooling_shapes():
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
    f = ember.jit(lambda a: [lax.reduce_window(a, -np.inf, lax.max, (1, 3, 2, 1),
                                               (1, 2, 2, 1), mode) for mode in
                             ("SAME", "VALID", "SAME_LOWER")])
    for got, mode in zip(f(x), ("SAME", "VALID", "SAME_LOWER")):
        pads = lax.padtype_to_pads(x.shape, (1, 3, 2, 1), (1, 2, 2, 1), mode)
        want = ref_reduce_window(x, -np.inf, np.maximum, (1, 3, 2, 1), (1, 2, 2, 1), pads,
                                 (1,) * 4, (1,) * 4)
        np.testing.assert_array_equal(np.asarray(got), want)
    assert f(x)[0].shape == (2, 4, 3, 3)


def test_integer_and_identity_detection():
    xi = RNG.integers(-50, 50, (6, 5)).astype(np.int32)
    lo = np.iinfo(np.int32).min
    for fn in (lambda a: lax.reduce_window(a, lo, lax.max, (2, 2), (1, 2), "SAME"),
               ember.jit(lambda a: lax.reduce_window(a, lo, lax.max, (2, 2), (1, 2), "SAME"))):
        want = ref_reduce_window(xi, lo, np.maximum, (2, 2), (1, 2), [(0, 1), (0, 1)],
                                 (1, 1), (1, 1))
        np.testing.assert_array_equal(np.asarray(fn(xi)), want)
    # the identity picks the primitive; another init value takes part in every window
    jaxpr = str(ember.make_jaxpr(lambda a: lax.reduce_window(a, 0.0, lax.add, (2,), (1,)))(
        np.ones(4, np.float32)))
    assert "reduce_window_sum" in jaxpr
    got = ember.jit(lambda a: lax.reduce_window(a, 10.0, lax.add, (2,), (1,)))(
        np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(got), [11.0, 13.0, 15.0])


def test_general_computation_and_empty_windows():
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    for fn in (lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 2), (1, 1), "VALID"),
               ember.jit(lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 2), (1, 1),
                                                     "VALID"))):
        want = ref_reduce_window(x, np.float32(1), np.multiply, (2, 2), (1, 1),
                                 [(0, 0)] * 2, (1, 1), (1, 1))
        np.testing.assert_allclose(np.asarray(fn(x)), want, rtol=1e-6)
    # a window with no taps gives the init value; an empty operand an empty result
    got = lax.reduce_window(x, 0.0, lax.add, (0, 2), (1, 1))
    np.testing.assert_array_equal(np.asarray(got), np.zeros((6, 3), np.float32))
    e = np.zeros((0, 3), np.float32)
    assert ember.jit(lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 2), (1, 1)))(
        e).shape == (0, 2)


def test_grads(x64):
    x = RNG.standard_normal((5, 7))  # distinct values: max/min are differentiable
    # (every max/min window holds an element of x: an all-padding window is -inf)
    params = [_random_params(RNG, 2),
              dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (0, 2)),
                   base_dilation=(1, 1), window_dilation=(1, 2)),
              dict(window_dimensions=(3, 2), window_strides=(2, 1), padding=((0, 1), (1, 1)),
                   base_dilation=(1, 1), window_dilation=(2, 1))]
    for (name, op, _, init), p in zip(MONOIDS, params):
        check_grads(lambda a, op=op, init=init, p=p: lax.reduce_window(a, init, op, **p),
                    [x], order=1, use_jit=name == "max")
    check_grads(lambda a: lax.reduce_window(a, 1.0, lax.mul, (2, 2), (1, 1), "SAME"), [x],
                order=1)


def test_vmap():
    for x, p in CASES[2:6]:
        xb = RNG.standard_normal((3, *x.shape)).astype(np.float32)
        for _, op, np_op, init in MONOIDS:
            got = ember.vmap(lambda a, op=op, init=init, p=p:
                             lax.reduce_window(a, init, op, **p), 1, 0)(np.moveaxis(xb, 0, 1))
            want = np.stack([_ref(xb[i], np.float32(init), np_op, p) for i in range(3)])
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


def test_hlo_text():
    f = ember.jit(lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 3), (2, 1),
                                              ((1, 0), (0, 2)), (1, 2), (2, 1)))
    text = f.lower(np.ones((6, 5), np.float32)).as_text()
    line = next(t for t in text.splitlines() if " reduce-window(" in t)
    assert "window={size=2x3 stride=2x1 pad=1_0x0_2 lhs_dilate=1x2 rhs_dilate=2x1}" in line
    assert "to_apply=" in line
    module = parse_module(text)
    assert print_module(module) == print_module(parse_module(print_module(module)))


def test_max_pool_grads_against_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((2, 8, 7, 3)).astype(np.float32)

    def loss(lax_mod, grad):
        def fn(a):
            pooled = lax_mod.reduce_window(a, -np.inf, lax_mod.max, (1, 3, 2, 1), (1, 2, 2, 1),
                                           "SAME")
            summed = lax_mod.reduce_window(a, 0.0, lax_mod.add, (1, 2, 2, 1), (1, 1, 1, 1),
                                           ((0, 0), (1, 0), (0, 1), (0, 0)), (1, 2, 1, 1))
            return (pooled ** 2).sum() + (summed ** 3).sum()
        return grad(fn)

    got = ember.jit(loss(lax, ember.grad))(x)
    want = jax.jit(loss(jax.lax, jax.grad))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_several_operands():
    """A pytree of operands folds with the computation over (value, index) pairs: each
    window's maximum and the flat index where it first occurs."""
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    idx = np.arange(30, dtype=np.int32).reshape(5, 6)

    def pick(a, b):
        take_b = b[0] > a[0]
        return lax.select(take_b, b[0], a[0]), lax.select(take_b, b[1], a[1])

    def f(x, idx):
        return lax.reduce_window((x, idx), (-np.inf, np.int32(-1)), pick, (2, 3), (1, 2),
                                 "SAME")

    pads = lax.padtype_to_pads(x.shape, (2, 3), (1, 2), "SAME")
    xp = np.pad(x, pads, constant_values=-np.inf)
    ip = np.pad(idx, pads, constant_values=-1)
    want_v = np.empty((5, 3), np.float32)
    want_i = np.empty((5, 3), np.int32)
    for r in range(5):
        for c in range(3):
            win_v = xp[r:r + 2, 2 * c:2 * c + 3].reshape(-1)
            win_i = ip[r:r + 2, 2 * c:2 * c + 3].reshape(-1)
            want_v[r, c], want_i[r, c] = win_v.max(), win_i[np.argmax(win_v)]
    for fn in (f, ember.jit(f)):
        v, i = fn(x, idx)
        np.testing.assert_array_equal(np.asarray(v), want_v)
        np.testing.assert_array_equal(np.asarray(i), want_i)
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce_window((x, idx), (0.0,), pick, (2, 2))
