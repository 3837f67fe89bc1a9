"""Convolutions: lax.conv_general_dilated (random dimension numbers, strides, paddings,
dilations, feature and batch groups, odd sizes), lax.conv, conv_with_general_padding,
conv_transpose, jnp.convolve/correlate; against a direct-loop NumPy reference, eagerly and
under one shared jit; gradients by check_grads (finite differences, transpose identity)
and, where JAX is installed, against JAX 0.10.2's values; vmap over either operand or
both; the HLO text of the `convolution` opcode and its parse round trip.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.hlo.evaluator.core import evaluate
from ember.hlo.parser import parse_module
from ember.hlo.printer import print_module
from tests.ops.ad_checks import check_grads

RNG = np.random.default_rng(23)


def ref_conv(lhs, rhs, strides, padding, lhs_dil, rhs_dil, dn, fg=1, bg=1):
    """Direct loops over output positions and taps (features by matrix products)."""
    lhs_spec, rhs_spec, out_spec = dn
    x = np.transpose(np.asarray(lhs, np.float64), lhs_spec)
    w = np.transpose(np.asarray(rhs, np.float64), rhs_spec)
    nsp = x.ndim - 2
    for k in range(nsp):  # dilate
        n = x.shape[2 + k]
        shape = list(x.shape)
        shape[2 + k] = (n - 1) * lhs_dil[k] + 1 if n else 0
        d = np.zeros(shape)
        idx = [slice(None)] * x.ndim
        idx[2 + k] = slice(None, None, lhs_dil[k])
        d[tuple(idx)] = x
        x = d
    for k, (lo, hi) in enumerate(padding):  # pad (negative crops)
        widths = [(0, 0)] * x.ndim
        widths[2 + k] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        idx = [slice(None)] * x.ndim
        idx[2 + k] = slice(max(-lo, 0), x.shape[2 + k] - max(-hi, 0))
        x = x[tuple(idx)]
    ksz = w.shape[2:]
    ext = [(kk - 1) * r + 1 for kk, r in zip(ksz, rhs_dil)]
    out_sp = [max(0, (x.shape[2 + k] - ext[k]) // strides[k] + 1) for k in range(nsp)]
    n, c = x.shape[:2]
    o = w.shape[0]
    groups = fg * bg
    nb, cg, og = n // bg, c // fg, o // groups
    out = np.zeros((nb, o, *out_sp))
    for pos in np.ndindex(*out_sp):
        for tap in np.ndindex(*ksz):
            at = tuple(p * s + t * r for p, s, t, r in zip(pos, strides, tap, rhs_dil))
            for g in range(groups):
                rows = slice(g * nb, (g + 1) * nb) if bg > 1 else slice(None)
                chans = slice(g * cg, (g + 1) * cg) if fg > 1 else slice(None)
                outs = slice(g * og, (g + 1) * og)
                out[(slice(None), outs, *pos)] += (
                    x[(rows, chans, *at)] @ w[(outs, slice(None), *tap)].T)
    return np.transpose(out, np.argsort(out_spec))


def _random_case(rng, nsp, batch_groups=False):
    """(lhs, rhs, kwargs) with random layouts, strides, paddings, dilations and groups
    (batch groups when asked)."""
    nd = nsp + 2
    specs = [tuple(int(i) for i in rng.permutation(nd)) for _ in range(3)]
    fg = bg = 1
    if batch_groups:
        bg = int(rng.integers(2, 4))
    elif rng.random() < 0.35:
        fg = int(rng.integers(2, 4))
    n = bg * int(rng.integers(1, 3))
    cg = int(rng.integers(1, 4))
    o = fg * bg * int(rng.integers(1, 3))
    ksz = [int(rng.integers(1, 4)) for _ in range(nsp)]
    sp = [int(rng.integers(3, 8)) for _ in range(nsp)]
    strides = tuple(int(rng.integers(1, 4)) for _ in range(nsp))
    lhs_dil = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    rhs_dil = tuple(int(rng.integers(1, 3)) for _ in range(nsp))
    padding = tuple((int(rng.integers(-1, 3)), int(rng.integers(-1, 3))) for _ in range(nsp))
    lshape, rshape = [0] * nd, [0] * nd
    for dim, size in zip(specs[0], (n, cg * fg, *sp)):
        lshape[dim] = size
    for dim, size in zip(specs[1], (o, cg, *ksz)):
        rshape[dim] = size
    lhs = rng.standard_normal(lshape).astype(np.float32)
    rhs = rng.standard_normal(rshape).astype(np.float32)
    kw = dict(window_strides=strides, padding=padding, lhs_dilation=lhs_dil,
              rhs_dilation=rhs_dil, dimension_numbers=lax.ConvDimensionNumbers(*specs),
              feature_group_count=fg, batch_group_count=bg)
    return lhs, rhs, kw


def _ref(lhs, rhs, kw):
    return ref_conv(lhs, rhs, kw["window_strides"], kw["padding"], kw["lhs_dilation"],
                    kw["rhs_dilation"], kw["dimension_numbers"], kw["feature_group_count"],
                    kw["batch_group_count"])


CASES = [_random_case(RNG, nsp) for nsp in (1, 1, 2, 2, 2, 2, 2, 2, 3, 2, 1, 2)]
CASES += [_random_case(RNG, 1, batch_groups=True), _random_case(RNG, 2, batch_groups=True)]
BATCH_GROUPED = [len(CASES) - 2, len(CASES) - 1]


def test_random_cases_eager_and_one_jit():
    eager = [lax.conv_general_dilated(lhs, rhs, **kw) for lhs, rhs, kw in CASES]
    jitted = ember.jit(lambda args: [lax.conv_general_dilated(a, b, **kw)
                                     for (a, b), (_, _, kw) in zip(args, CASES)])(
        [(lhs, rhs) for lhs, rhs, _ in CASES])
    for (lhs, rhs, kw), e, j in zip(CASES, eager, jitted):
        want = _ref(lhs, rhs, kw)
        assert e.shape == want.shape and e.dtype == np.float32
        np.testing.assert_allclose(np.asarray(e), want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.asarray(j), want, rtol=1e-4, atol=1e-4)


def test_string_dimension_numbers_and_padding_modes():
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)  # NHWC
    w = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)  # HWIO
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    # spatial dimensions are ordered as the kernel spec lists them
    assert lax.conv_general_permutations(("NWHC", "HWIO", "NCHW")) == (
        (0, 3, 2, 1), (3, 2, 0, 1), (0, 1, 2, 3))
    assert lax.padtype_to_pads((5, 6), (3, 3), (2, 2), "SAME") == [(1, 1), (0, 1)]
    assert lax.padtype_to_pads((6,), (3,), (2,), "SAME_LOWER") == [(1, 0)]
    assert lax.padtype_to_pads((6,), (3,), (2,), "VALID") == [(0, 0)]
    f = ember.jit(lambda a, b: [lax.conv_general_dilated(a, b, (2, 1), p, dimension_numbers=(
        "NHWC", "HWIO", "NHWC"), rhs_dilation=(1, 2)) for p in ("SAME", "VALID", "SAME_LOWER")])
    for got, mode in zip(f(x, w), ("SAME", "VALID", "SAME_LOWER")):
        pads = lax.padtype_to_pads((7, 6), (3, 3), (2, 1), mode)
        want = ref_conv(x, w, (2, 1), pads, (1, 1), (1, 2), dn)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    assert f(x, w)[0].shape == (2, 4, 6, 4)  # SAME keeps ceil(n / stride) positions


def test_conv_conv_with_general_padding_and_dtypes():
    x = RNG.standard_normal((2, 3, 6, 5))
    w = RNG.standard_normal((4, 3, 2, 3))
    want = ref_conv(x, w, (1, 2), [(0, 0), (0, 0)], (1, 1), (1, 1), lax.conv_dimension_numbers(
        x.shape, w.shape, None))
    got = lax.conv(x.astype(np.float32), w.astype(np.float32), (1, 2), "VALID")
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    got = lax.conv_with_general_padding(x.astype(np.float32), w.astype(np.float32), (2, 1),
                                        [(1, 0), (2, -1)], (2, 1), (1, 2))
    want = ref_conv(x, w, (2, 1), [(1, 0), (2, -1)], (2, 1), (1, 2),
                    lax.conv_dimension_numbers(x.shape, w.shape, None))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    # float16 accumulates in float32; int8 in int32 with preferred_element_type
    h = lax.conv(x.astype(np.float16), w.astype(np.float16), (1, 1), "SAME")
    assert h.dtype == np.float16
    xi = RNG.integers(-100, 100, (1, 2, 5, 5)).astype(np.int8)
    wi = RNG.integers(-100, 100, (3, 2, 3, 3)).astype(np.int8)
    for fn in (lambda a, b: lax.conv(a, b, (1, 1), "VALID", preferred_element_type=np.int32),
               ember.jit(lambda a, b: lax.conv(a, b, (1, 1), "VALID",
                                               preferred_element_type=np.int32))):
        got = fn(xi, wi)
        assert got.dtype == np.int32
        want = ref_conv(xi, wi, (1, 1), [(0, 0)] * 2, (1, 1), (1, 1),
                        lax.conv_dimension_numbers(xi.shape, wi.shape, None))
        np.testing.assert_array_equal(np.asarray(got), want.astype(np.int64))


def test_empty_and_degenerate_shapes():
    x = np.zeros((0, 2, 5), np.float32)
    w = np.ones((3, 2, 2), np.float32)
    assert lax.conv(x, w, (1,), "VALID").shape == (0, 3, 4)
    assert ember.jit(lambda a, b: lax.conv(a, b, (1,), "VALID"))(x, w).shape == (0, 3, 4)
    # a window larger than the padded input: no positions
    y = np.ones((1, 2, 2), np.float32)
    w3 = np.ones((3, 2, 3), np.float32)
    assert lax.conv(y, w3, (1,), "VALID").shape == (1, 3, 0)
    # no spatial dimensions: a matrix product
    a, b = RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal((5, 3))
    got = ember.jit(lambda p, q: lax.conv_general_dilated(p, q, (), ()))(a, b.astype(np.float32))
    np.testing.assert_allclose(np.asarray(got), a @ b.T, rtol=1e-5, atol=1e-5)


def test_errors():
    x = np.ones((2, 4, 5, 5), np.float32)
    with pytest.raises(ValueError, match="feature_group_count must divide lhs feature"):
        lax.conv_general_dilated(x, np.ones((6, 2, 3, 3), np.float32), (1, 1), "VALID",
                                 feature_group_count=3)
    with pytest.raises(ValueError, match="At most one of batch_group_count"):
        lax.conv_general_dilated(x, np.ones((4, 2, 3, 3), np.float32), (1, 1), "VALID",
                                 feature_group_count=2, batch_group_count=2)
    with pytest.raises(TypeError, match="must contain the characters 'N' and 'C'"):
        lax.conv_general_dilated(x, np.ones((3, 3, 4, 2), np.float32), (1, 1), "VALID",
                                 dimension_numbers=("NHWX", "HWIO", "NHWC"))
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, np.ones((2, 4, 3, 3), np.float32), (1, 1), "SAME",
                                 lhs_dilation=(2, 2))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv_general_dilated(x, np.ones((2, 4, 3, 3), np.int32), (1, 1), "SAME")


@pytest.mark.parametrize("index", [0, 2, 3, 8, 9, *BATCH_GROUPED])
def test_grads(index, x64):
    lhs, rhs, kw = CASES[index]
    check_grads(lambda a, b: lax.conv_general_dilated(a, b, **kw), [lhs, rhs], order=1,
                use_jit=index == 3)


def test_vmap_each_operand_and_both():
    for lhs, rhs, kw in CASES[:8] + [CASES[i] for i in BATCH_GROUPED]:
        xb = RNG.standard_normal((3, *lhs.shape)).astype(np.float32)
        wb = RNG.standard_normal((3, *rhs.shape)).astype(np.float32)

        def f(a, b, kw=kw):
            return lax.conv_general_dilated(a, b, **kw)
        for axes, a, b in (((0, None), xb, rhs), ((None, 0), lhs, wb), ((0, 0), xb, wb)):
            got = ember.vmap(f, in_axes=axes)(a, b)
            want = np.stack([_ref(a[i] if axes[0] == 0 else a, b[i] if axes[1] == 0 else b, kw)
                             for i in range(3)])
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    # mapped on a middle axis, under jit
    lhs, rhs, kw = CASES[4]
    xb = RNG.standard_normal((*lhs.shape[:1], 2, *lhs.shape[1:])).astype(np.float32)
    got = ember.jit(ember.vmap(lambda a: lax.conv_general_dilated(a, rhs, **kw), 1, 2))(xb)
    want = np.stack([_ref(xb[:, i], rhs, kw) for i in range(2)], axis=2)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_convolve_and_correlate():
    for n, m in ((7, 3), (3, 7), (5, 5), (1, 4), (6, 1)):
        a, v = RNG.standard_normal(n), RNG.standard_normal(m)
        for mode in ("full", "same", "valid"):
            np.testing.assert_allclose(np.asarray(jnp.convolve(a, v, mode)),
                                       np.convolve(a, v, mode), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(np.asarray(jnp.correlate(a, v, mode)),
                                       np.correlate(a, v, mode), rtol=1e-5, atol=1e-5)
    got = ember.jit(lambda p, q: (jnp.convolve(p, q), jnp.correlate(p, q, "same")))(
        np.arange(5.0), np.array([1.0, -2.0, 0.5]))
    np.testing.assert_allclose(np.asarray(got[0]), np.convolve(np.arange(5.0), [1, -2, .5]))
    np.testing.assert_allclose(np.asarray(got[1]),
                               np.correlate(np.arange(5.0), [1, -2, .5], "same"))
    assert jnp.convolve(np.arange(3), np.arange(2)).dtype == np.float32
    with pytest.raises(ValueError, match="only support 1-dimensional"):
        jnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.correlate(np.ones(3), np.ones(2), "bad")


def test_hlo_text_and_evaluator():
    x = np.ones((1, 6, 6, 2), np.float32)
    w = np.ones((3, 3, 1, 4), np.float32)
    f = ember.jit(lambda a, b: lax.conv_general_dilated(
        a, b, (2, 1), ((1, 1), (0, 2)), (1, 1), (1, 2), ("NHWC", "HWIO", "NHWC"),
        feature_group_count=2))
    text = f.lower(x, w).as_text()
    line = next(t for t in text.splitlines() if " convolution(" in t)
    assert "window={size=3x3 stride=2x1 pad=1_1x0_2 rhs_dilate=1x2}" in line
    assert "dim_labels=b01f_01io->b01f" in line and "feature_group_count=2" in line
    module = parse_module(text)
    assert print_module(module) == print_module(parse_module(print_module(module)))
    np.testing.assert_allclose(evaluate(module, x, w), np.asarray(f(x, w)))


def test_conv_transpose_against_jax():
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((2, 5, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 4)).astype(np.float32)  # HWIO
    w_swapped = RNG.standard_normal((3, 2, 4, 3)).astype(np.float32)  # I, O trade places
    for pad in ("SAME", "VALID", ((1, 2), (0, 1))):
        for tk in (False, True):
            w_ = w_swapped if tk else w
            kw = dict(strides=(2, 1), padding=pad, rhs_dilation=(1, 2), transpose_kernel=tk)
            got = lax.conv_transpose(x, w_, **kw)
            want = jax.lax.conv_transpose(x, w_, **kw)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4,
                                       atol=1e-4)


def test_grads_against_jax():
    jax = pytest.importorskip("jax")
    cases = CASES[:6] + [CASES[i] for i in BATCH_GROUPED]
    args = [(lhs, rhs) for lhs, rhs, _ in cases]

    def grads(conv, grad, dn_type):
        def all_grads(pairs):
            out = []
            for (a, b), (_, _, kw) in zip(pairs, cases):
                k = dict(kw, dimension_numbers=dn_type(*kw["dimension_numbers"]))
                out.append(grad(lambda p, q, k=k: (conv(p, q, **k) ** 2).sum(), (0, 1))(a, b))
            return out
        return all_grads

    got = ember.jit(grads(lax.conv_general_dilated, ember.grad, lax.ConvDimensionNumbers))(args)
    want = jax.jit(grads(jax.lax.conv_general_dilated, jax.grad,
                         jax.lax.ConvDimensionNumbers))(args)
    for g, v in zip(jax.tree_util.tree_leaves(want), ember.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(np.asarray(v), np.asarray(g), rtol=2e-4, atol=2e-4)


def test_jaxprs_print_as_jax_does():
    jax = pytest.importorskip("jax")
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 2, 2), np.float32)
    cases = [
        (lambda m: (lambda a, b: m.lax.conv_general_dilated(
            a, b, (1, 2), "SAME", rhs_dilation=(2, 1), dimension_numbers=(
                "NCHW", "OIHW", "NHWC"))), (x, w)),
        (lambda m: (lambda a: m.lax.reduce_window(a, -np.inf, m.lax.max, (1, 1, 2, 2),
                                                  (1, 1, 2, 2), "SAME")), (x,)),
        (lambda m: (lambda a: m.lax.reduce_window(a, 0.0, m.lax.add, (1, 1, 3, 1),
                                                  (1, 1, 1, 1), "VALID")), (x,)),
    ]
    for make, args in cases:
        assert str(ember.make_jaxpr(make(ember))(*args)) == str(jax.make_jaxpr(make(jax))(*args))
