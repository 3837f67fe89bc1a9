"""jit of convolutions over a 2x2 mesh of 4 CPU devices (passes/spmd_conv.py): a batch or
output-feature split convolves locally with no collective, an input-feature split leaves
partial sums (one all-reduce), a spatial split convolves each block with a halo of its
neighbours' edge rows (one all-gather of the edges), and what cannot be split is gathered
with a refusal; results equal the unsharded program's (bit for bit on integer-valued
floats, whose sums are exact in any order)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.sharding import NamedSharding, P

RNG = np.random.default_rng(4)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _ints(shape):
    return RNG.integers(-3, 4, shape).astype(np.float32)


def _conv(stride=(1, 1), pad="SAME", dn=("NCHW", "OIHW", "NCHW"), rhs_dilation=None):
    def f(x, k):
        return lax.conv_general_dilated(x, k, stride, pad, rhs_dilation=rhs_dilation,
                                        dimension_numbers=dn)
    return f


X, K = _ints((4, 6, 8, 8)), _ints((8, 6, 3, 3))

# (name, conv, x spec, kernel spec, collectives (opcode, shape), the result's spec)
CASES = [
    ("batch", _conv(), P("data"), P(), [], P("data")),
    ("out_features", _conv(), P(), P("model"), [], P(None, "model")),
    ("batch_and_out_features", _conv(), P("data"), P("model"), [], P("data", "model")),
    ("in_features", _conv(), P(None, "model"), P(None, "model"),
     [("all-reduce", "f32[4,8,8,8]")], P()),
    ("rows", _conv(), P(None, None, "data"), P(),
     [("all-gather", "f32[4,6,4,8]")], P(None, None, "data")),
    ("rows_and_cols", _conv(), P(None, None, "data", "model"), P(),
     [("all-gather", "f32[4,6,4,4]"), ("all-gather", "f32[4,6,6,4]")],
     P(None, None, "data", "model")),
    ("batch_and_rows_strided", _conv(stride=(2, 2)), P("model", None, "data"), P(),
     [("all-gather", "f32[2,6,2,8]")], P("model", None, "data")),
    ("rows_dilated_kernel", _conv(rhs_dilation=(2, 1)), P(None, None, ("data", "model")),
     P(), [("all-gather", "f32[4,6,16,8]")], P(None, None, ("data", "model"))),
    ("rows_valid", _conv(pad="VALID"), P(None, None, "data"), P(),
     [("all-gather", "f32[4,6,4,8]")], P(None, None, "data")),
    ("rows_valid_strided", _conv(stride=(2, 1), pad=((0, 1), (0, 0))), P(None, None, "model"),
     P("data"), [("all-gather", "f32[4,6,2,8]")], P(None, "data", "model")),
    ("uneven_pad_nhwc", _conv(pad=((2, 0), (0, 2)), dn=("NHWC", "HWIO", "NHWC")),
     P(None, "data"), P(), [("all-gather", "f32[4,4,8,6]")], P(None, "data")),
]


@pytest.mark.parametrize("name,fn,xs,ks,colls,out", CASES, ids=[c[0] for c in CASES])
def test_conv_splits(mesh, name, fn, xs, ks, colls, out):
    x, k = X, K
    if name == "uneven_pad_nhwc":
        x, k = X.transpose(0, 2, 3, 1), K.transpose(2, 3, 1, 0)
    f = ember.jit(fn, in_shardings=(NamedSharding(mesh, xs), NamedSharding(mesh, ks)))
    report = ember.explain.collectives(f, x, k)
    assert not report.refusals, report
    assert [(c.opcode, c.shape) for c in report.collectives] == colls, report
    got = f(x, k)
    want = np.asarray(ember.jit(fn)(x, k))
    assert np.asarray(got).tobytes() == want.tobytes()
    assert got.sharding.spec == out
    for sh in got.addressable_shards:
        np.testing.assert_array_equal(np.asarray(sh.data), want[sh.index])
    text = f.lower(x, k).compile().as_text()
    assert text.count("all-gather(") + text.count("all-reduce(") == len(colls)


def test_halo_reaches_the_right_neighbours_with_floats(mesh):
    """Random floats, NaN and inf in the input: each block's halo rows are its
    neighbours' (a NaN in one block's edge reaches the next block's first output row
    only), zeros past the ends; the sums within a tolerance."""
    x = RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)
    x[0, 1, 3, 2] = np.nan  # (the last row of the first of 2 blocks)
    x[1, 0, 4, 5] = np.inf  # (the first row of the second)
    k = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    fn = _conv()
    f = ember.jit(fn, in_shardings=(NamedSharding(mesh, P(None, None, "data")), None))
    got, want = np.asarray(f(x, k)), np.asarray(ember.jit(fn)(x, k))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert np.isnan(got[0, :, 4]).any() and not np.isnan(got[0, :, 6]).any()


def test_spatial_split_the_window_does_not_allow_is_gathered(mesh):
    """VALID padding over 4 blocks: 6 output rows do not cut into 4 blocks, so the rows
    are gathered first (a refusal naming why)."""
    fn = _conv(pad="VALID")
    f = ember.jit(fn, in_shardings=(NamedSharding(mesh, P(None, None, ("data", "model"))),
                                    None))
    report = ember.explain.collectives(f, X, K)
    (r,) = report.refusals
    assert r.opcode == "convolution" and "spatial split its window does not allow" in r.reason
    assert [c.opcode for c in report.collectives] == ["all-gather"]
    assert np.asarray(f(X, K)).tobytes() == np.asarray(ember.jit(fn)(X, K)).tobytes()


def test_data_parallel_cnn_gradient_is_one_all_reduce_per_kernel(mesh):
    """value_and_grad of a two-layer CNN with the batch split: the forward and the input
    gradients convolve locally, each kernel's gradient (a convolution contracting the
    batch) leaves partial sums added once, as XLA's data parallelism does."""
    def loss(ps, x):
        k1, k2 = ps
        dn = ("NHWC", "HWIO", "NHWC")
        h = jnp.tanh(lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn))
        h = lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=dn)
        return jnp.mean(h ** 2)

    x = RNG.standard_normal((4, 6, 6, 2)).astype(np.float32)
    ps = (RNG.standard_normal((3, 3, 2, 3)).astype(np.float32) * 0.3,
          RNG.standard_normal((3, 3, 3, 2)).astype(np.float32) * 0.3)
    g = ember.value_and_grad(loss)
    f = ember.jit(g, in_shardings=(None, NamedSharding(mesh, P(("data", "model")))))
    report = ember.explain.collectives(f, ps, x)
    assert not report.refusals, report
    assert sorted(c.shape for c in report.collectives) == ["f32[3,3,2,3]", "f32[3,3,3,2]",
                                                          "f32[]"], report
    assert all(c.opcode == "all-reduce" and c.group_size == 4 for c in report.collectives)
    (v, (g1, g2)), (vw, (w1, w2)) = f(ps, x), ember.jit(g)(ps, x)
    np.testing.assert_allclose(float(v), float(vw), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(w1), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(g2), np.asarray(w2), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("xs,ks,out", [
    (P(None, None, None, "model"), P(), P(None, None, None, "model")),
    (P("data", None, None, "model"), P(None, None, None, "model"),
     P("data", None, None, "model")),
    (P(None, None, None, ("data", "model")), P(), P(None, None, None, ("data", "model"))),
])
def test_depthwise_conv_split_by_channel_groups(mesh, xs, ks, out):
    """A depthwise convolution (feature_group_count = channels) split along its channels:
    each device convolves its whole groups with its filters, no communication; a split
    that does not divide the groups is gathered (a refusal)."""
    x, k = _ints((2, 8, 8, 4)), _ints((3, 3, 1, 8))

    def fn(x, k, groups=4):
        return lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=groups,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    f = ember.jit(fn, in_shardings=(NamedSharding(mesh, xs), NamedSharding(mesh, ks)))
    report = ember.explain.collectives(f, x, k)
    assert not report.refusals and not report.collectives, report
    got = f(x, k)
    assert np.asarray(got).tobytes() == np.asarray(ember.jit(fn)(x, k)).tobytes()
    assert got.sharding.spec == out
    if xs == P(None, None, None, ("data", "model")):  # (2 groups over 4 devices)
        g = ember.jit(lambda x, k: fn(x, k[..., :4].reshape(3, 3, 2, 2), 2),
                      in_shardings=(NamedSharding(mesh, xs), None))
        (r,) = ember.explain.collectives(g, x, k).refusals
        assert r.opcode == "convolution"


def test_spatially_split_cnn_gradient_sums_each_devices_taps(mesh):
    """value_and_grad of a two-layer CNN with the batch split over one axis and the image
    rows over the other: the forward and input-gradient convolutions take halos, and each
    kernel gradient (a convolution whose window, the output gradient, is split as its
    input is) sums over the rows each device holds, with a halo of its input: only halos
    and the kernels' partial sums move."""
    def loss(ps, x):
        k1, k2 = ps
        dn = ("NHWC", "HWIO", "NHWC")
        h = jnp.tanh(lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn))
        h = lax.conv_general_dilated(h, k2, (1, 1), ((2, 0), (1, 1)), dimension_numbers=dn)
        return jnp.sum(h ** 2)

    x = RNG.standard_normal((2, 8, 4, 2)).astype(np.float32)
    ps = (RNG.standard_normal((3, 3, 2, 3)).astype(np.float32) * 0.3,
          RNG.standard_normal((3, 3, 3, 2)).astype(np.float32) * 0.3)
    g = ember.grad(loss)
    f = ember.jit(g, in_shardings=(None, NamedSharding(mesh, P("data", "model"))))
    report = ember.explain.collectives(f, ps, x)
    assert not report.refusals, report
    reduces = [c for c in report.collectives if c.opcode == "all-reduce"]
    assert sorted(c.shape for c in reduces) == ["f32[3,3,2,3]", "f32[3,3,3,2]"], report
    assert all(c.group_size == 4 for c in reduces)
    halos = [c for c in report.collectives if c.opcode == "all-gather"]
    assert halos and all("halo" in c.reason for c in halos), report
    for a, b in zip(f(ps, x), ember.jit(g)(ps, x)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
