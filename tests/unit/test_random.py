"""ember.random against JAX 0.10.2's values (literals in random_golden.py, from the calls in
random_cases.py), eager and under jit, x64 off and on; the samplers' statistics (moments,
Kolmogorov-Smirnov) with fixed keys; typed keys; the argument errors JAX raises; fusion of
the cipher into the kernel that consumes it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats
from random_cases import CASES_32, DERIVED_N, X64_CASES, make_key
from random_golden import GOLDEN

import ember
import ember.numpy as jnp
import ember.random as er

_BITS = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}


def _expected(name: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """JAX's values (the first 64 of a larger draw) and the draw's shape."""
    dtype, shape, values = GOLDEN[name]
    if dtype in _BITS:
        return np.array(values, _BITS[dtype]).view(dtype), shape
    if dtype == "bool":
        return np.array(values, np.uint8).astype(bool), shape
    return np.array(values, dtype), shape


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place (ordered integer views of the floats)."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ai, bi = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    lo = np.iinfo(it).min
    ai = np.where(ai < 0, lo - ai, ai)
    bi = np.where(bi < 0, lo - bi, bi)
    return np.abs(ai - bi)


def _check(name: str, check: str, got) -> None:
    want, shape = _expected(name)
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == shape, (name, got.dtype, got.shape)
    got = got.ravel()[:want.size]
    if check == "exact":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    if check == "factorization":  # (a different algorithm: rounding differs, abs. error)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6, err_msg=name)
        return
    # Through a transcendental: Ember's own log/erfinv. In the bulk a few ulp; JAX's
    # float32 erfinv itself is up to ~100 ulp off in the far tails (test_normal_is_exact_erfinv).
    ulps = _ulps(got, want)
    assert np.median(ulps) <= 1, (name, ulps)
    rtol = {2: 2e-3, 4: 3e-5, 8: 1e-13}[got.dtype.itemsize]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=rtol * 1e-2, err_msg=name)


@pytest.mark.parametrize("case", CASES_32, ids=[c[0] for c in CASES_32])
def test_values_match_jax_eager(case):
    name, kind, seed, call, check = case
    _check(name, check, call(er, make_key(er, kind, seed)))


_JIT_CASES = CASES_32[::3]  # (a third of the cases: each jit compiles its own program)


@pytest.mark.parametrize("case", _JIT_CASES, ids=[c[0] for c in _JIT_CASES])
def test_values_match_jax_under_jit(case):
    """The key is the jit's argument (a typed key passes as a pytree)."""
    name, kind, seed, call, check = case
    key = make_key(er, kind, seed)
    if key is None:
        _check(name, check, ember.jit(lambda: call(er, None))())
    else:
        _check(name, check, ember.jit(lambda k: call(er, k))(key))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_values_match_jax_x64(x64, jit):
    for name, kind, seed, call, check in X64_CASES:
        key = make_key(er, kind, seed)
        fn = (lambda k, c=call: c(er, k))
        _check(name, check, (ember.jit(fn) if jit and key is not None else fn)(key))


# ------------------------------------------------------------------------- typed keys


def test_typed_key_prints_and_behaves_as_jax():
    k = er.key(5)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>"
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 5]"
    ks = er.split(k, (2, 3))
    assert ks.shape == (2, 3) and len(ks) == 2
    np.testing.assert_array_equal(er.key_data(ks[1, 2]), np.asarray(er.key_data(ks))[1, 2])
    assert ks[:, 1].shape == (2,) and ks[..., 0].shape == (2,)
    assert [x.shape for x in ks] == [(3,), (3,)]
    assert ks.reshape(-1).shape == (6,)
    assert bool(jnp.all(er.wrap_key_data(er.key_data(ks)) == ks))
    assert not bool(er.split(k)[0] == er.split(k)[1])
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(k)
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        np.asarray(k)


def test_typed_keys_pass_through_jit_and_pytrees():
    k = er.key(1)
    out = ember.jit(lambda k: er.split(k, 3))(k)
    assert isinstance(out, er.KeyArray) and out.shape == (3,)
    np.testing.assert_array_equal(er.key_data(out), er.key_data(er.split(k, 3)))
    leaves, tree = ember.tree_util.tree_flatten({"k": k})
    assert ember.tree_util.tree_unflatten(tree, leaves)["k"].shape == ()
    # raw and typed keys give the same draws
    np.testing.assert_array_equal(er.normal(k, (5,)), er.normal(er.key_data(k), (5,)))


def test_raw_and_typed_results_follow_the_key_kind():
    raw = er.PRNGKey(0)
    assert er.split(raw).dtype == np.uint32 and er.split(raw).shape == (2, 2)
    assert isinstance(er.fold_in(er.key(0), 3), er.KeyArray)
    assert er.fold_in(raw, 3).shape == (2,)


# ----------------------------------------------------------------------------- errors


def test_float_key_gets_jax_error():
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32; got dtype=float32"):
        er.normal(jnp.zeros(2, jnp.float32))
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32; got dtype=float32"):
        er.uniform(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="expected key_data.shape to end with \\(2,\\); got "
                                        "shape=\\(3,\\)"):
        er.normal(jnp.zeros(3, jnp.uint32))
    with pytest.raises(TypeError, match="expected key_data to have ndim, shape, and dtype"):
        er.normal(1.0)
    with pytest.raises(TypeError, match="unexpected PRNG key type <class 'list'>"):
        er.normal([0, 0])
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        er.PRNGKey(1.5)
    with pytest.raises(TypeError, match="accepts a scalar seed, but was given an array of "
                                        "shape \\(2,\\)"):
        er.key(np.arange(2))


def test_batched_keys_get_jax_error():
    with pytest.raises(ValueError, match="normal accepts a single key, but was given a key "
                                         "array of shape \\(2, 2\\) != \\(\\)"):
        er.normal(jnp.zeros((2, 2), jnp.uint32))
    with pytest.raises(ValueError, match="split accepts a single key, but was given a key "
                                         "array of shape \\(2,\\)"):
        er.split(er.split(er.key(0)))


def test_argument_errors_are_jaxs():
    k = er.PRNGKey(0)
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype"):
        er.uniform(k, (2,), jnp.int32)
    with pytest.raises(ValueError, match="dtype argument to `bits` must be an unsigned int"):
        er.bits(k, (2,), jnp.int32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        er.randint(k, (2,), 0, 5, jnp.float32)
    with pytest.raises(TypeError, match="bernoulli probability `p` must have a floating"):
        er.bernoulli(k, 1)
    with pytest.raises(ValueError, match="got mode='mid', expected 'high' or 'low'"):
        er.bernoulli(k, 0.5, mode="mid")
    with pytest.raises(ValueError, match="randint parameter shapes must be broadcast-"
                                         ".* but got result \\(2, 3\\) for shape argument"):
        er.randint(k, (3,), jnp.zeros((2, 1), jnp.int32), 5)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting: "
                                         "shapes=\\[\\(3,\\), \\(4,\\), \\(\\)\\]"):
        er.randint(k, (3,), jnp.zeros(4, jnp.int32), 5)
    with pytest.raises(ValueError, match="Cannot take a larger sample \\(size 5\\) than "
                                         "population \\(size 3\\)"):
        er.choice(k, 3, (5,), replace=False)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        er.choice(k, 3, (2,), p=jnp.ones(4) / 4)
    with pytest.raises(TypeError, match="shape argument of jax.random.choice must be a seq"):
        er.choice(k, 3, 2)
    with pytest.raises(ValueError, match="Number of samples without replacement \\(4\\) "
                                         "cannot exceed number of categories \\(3\\)"):
        er.categorical(k, jnp.zeros(3), shape=(4,), replace=False)
    with pytest.raises(TypeError, match="x must be an integer or at least 1-dimensional"):
        er.permutation(k, 2.5)
    with pytest.raises(ValueError, match="Must provide valid mode for gumbel"):
        er.gumbel(k, mode="x")
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        er.fold_in(k, np.arange(3))


# ------------------------------------------------------------------------- statistics

_N = 20_000


def _ks(sample, cdf) -> None:
    res = scipy.stats.kstest(np.asarray(sample, np.float64), cdf)
    assert res.pvalue > 1e-3, res


@pytest.mark.parametrize("name,draw,cdf,mean,var", [
    ("uniform", lambda k: er.uniform(k, (_N,), minval=-1.0, maxval=3.0),
     scipy.stats.uniform(-1, 4).cdf, 1.0, 16 / 12),
    ("normal", lambda k: er.normal(k, (_N,)), scipy.stats.norm.cdf, 0.0, 1.0),
    ("exponential", lambda k: er.exponential(k, (_N,)), scipy.stats.expon.cdf, 1.0, 1.0),
    ("gumbel", lambda k: er.gumbel(k, (_N,)), scipy.stats.gumbel_r.cdf, np.euler_gamma,
     np.pi ** 2 / 6),
    ("laplace", lambda k: er.laplace(k, (_N,)), scipy.stats.laplace.cdf, 0.0, 2.0),
    ("logistic", lambda k: er.logistic(k, (_N,)), scipy.stats.logistic.cdf, 0.0,
     np.pi ** 2 / 3),
    ("truncated_normal", lambda k: er.truncated_normal(k, -0.5, 1.5, (_N,)),
     scipy.stats.truncnorm(-0.5, 1.5).cdf, scipy.stats.truncnorm(-0.5, 1.5).mean(),
     scipy.stats.truncnorm(-0.5, 1.5).var()),
])
def test_continuous_distributions(name, draw, cdf, mean, var):
    x = np.asarray(draw(er.key(123)), np.float64)
    assert x.dtype == np.float64 and np.all(np.isfinite(x))
    se = np.sqrt(var / _N)
    assert abs(x.mean() - mean) < 5 * se, (name, x.mean())
    assert abs(x.var() / var - 1) < 0.1, (name, x.var())
    _ks(x, cdf)


def _case(name: str) -> np.ndarray:
    (case,) = [c for c in CASES_32 if c[0] == name]
    _, kind, seed, call, _ = case
    return np.asarray(call(er, make_key(er, kind, seed)), np.float64)


@pytest.mark.parametrize("name,dist", [
    ("cauchy", scipy.stats.cauchy()), ("pareto", scipy.stats.pareto(2.0)),
    ("lognormal", scipy.stats.lognorm(0.5)), ("rayleigh", scipy.stats.rayleigh(scale=2.0)),
    ("weibull_min", scipy.stats.weibull_min(1.5, scale=2.0)), ("maxwell", scipy.stats.maxwell()),
    ("double_sided_maxwell", scipy.stats.maxwell()),
    ("geometric", scipy.stats.geom(0.3)), ("triangular", scipy.stats.triang(0.15, 0.0, 2.0)),
    ("wald", scipy.stats.invgauss(1.5)),
])
def test_derived_distributions(name, dist):
    """The same draws as the value tests (DERIVED_N of each): KS against scipy's law
    (for the discrete geometric, the mean and variance)."""
    x = _case(name)
    assert x.shape == (DERIVED_N,)
    if name == "geometric":
        assert abs(x.mean() - dist.mean()) < 5 * dist.std() / np.sqrt(DERIVED_N)
        assert abs(x.var() / dist.var() - 1) < 0.15
        return
    if name == "double_sided_maxwell":  # |x - loc| / scale is Maxwell, the sign +-1 evenly
        x = np.abs(x - 1.0) / 2.0
    assert scipy.stats.kstest(x, dist.cdf).pvalue > 1e-3


def test_discrete_distributions():
    k = er.key(7)
    b = np.asarray(er.bernoulli(k, 0.3, (_N,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 5 * np.sqrt(0.21 / _N)
    r = np.asarray(er.randint(k, (_N,), -3, 7))
    assert r.min() == -3 and r.max() == 6
    assert scipy.stats.chisquare(np.bincount(r + 3)).pvalue > 1e-3
    logits = np.log(np.array([0.1, 0.2, 0.7], np.float32))
    c = np.asarray(er.categorical(k, logits, shape=(_N,)))
    expected = _N * np.array([0.1, 0.2, 0.7])
    assert scipy.stats.chisquare(np.bincount(c, minlength=3), expected).pvalue > 1e-3
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    ch = np.asarray(er.choice(k, 4, (_N,), p=p))
    expected = _N * np.array([0.1, 0.2, 0.3, 0.4])
    assert scipy.stats.chisquare(np.bincount(ch, minlength=4), expected).pvalue > 1e-3
    perm = np.asarray(er.permutation(k, 1000))
    np.testing.assert_array_equal(np.sort(perm), np.arange(1000))
    assert not np.array_equal(perm, np.arange(1000))
    picked = np.asarray(er.choice(k, 50, (50,), replace=False))
    np.testing.assert_array_equal(np.sort(picked), np.arange(50))


def test_normal_is_exact_erfinv_of_jaxs_uniform():
    """normal = sqrt(2) erfinv(u) for u uniform in (-1, 1): u is bit-identical to JAX's
    (the value tests); Ember's erfinv keeps the result within 2 ulp of the exact one, where
    XLA's float32 erfinv is up to ~100 ulp off in the tails."""
    k = er.PRNGKey(3)
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = np.asarray(er.uniform(k, (_N,), minval=lo, maxval=1.0))
    got = np.asarray(er.normal(k, (_N,)))
    exact = (np.sqrt(2) * scipy.special.erfinv(u.astype(np.float64))).astype(np.float32)
    assert _ulps(got, exact).max() <= 2


def test_bits_are_uniform_per_bit():
    b = np.asarray(er.bits(er.key(11), (_N,)))
    ones = np.unpackbits(b.view(np.uint8)).reshape(_N, 32).mean(axis=0)
    assert np.all(np.abs(ones - 0.5) < 5 * np.sqrt(0.25 / _N))


# ------------------------------------------------------------------------------ fusion


@pytest.mark.parametrize("draw", [lambda k: er.uniform(k, (1000,)),
                                  lambda k: er.normal(k, (10, 100))], ids=["uniform", "normal"])
def test_threefry_fuses_into_its_consumer(draw):
    """One kernel: the cipher's rounds run inside the loop that writes the values."""
    compiled = ember.jit(draw).lower(er.PRNGKey(0)).compile()
    assert len(compiled.kernels()) == 1


def test_split_computes_each_cipher_block_once():
    """split's keys are the two words of one cipher block per key, joined by a
    concatenate that would evaluate the block once per word if fused into it: the fusion's
    recomputation limit (passes/fusion_reuse.py) cuts the cipher into its own kernel
    (both words in one pass), so at most the cipher, its word split and the join run."""
    compiled = ember.jit(lambda k: er.split(k, 7)).lower(er.PRNGKey(0)).compile()
    assert len(compiled.kernels()) <= 3
    np.testing.assert_array_equal(np.asarray(compiled(er.PRNGKey(0))),
                                  np.asarray(er.split(er.PRNGKey(0), 7)))


def test_internal_key_functions_take_any_batch_of_keys():
    """split/fold_in/bits on key data (..., 2) equal the per-key results stacked (what vmap
    of the public functions computes)."""
    from ember.random.prng import bits_data, fold_in_data, split_data

    keys = np.asarray(er.key_data(er.split(er.key(4), (2, 3))))
    got_split = np.asarray(split_data(jnp.asarray(keys), (4,)))
    got_bits = np.asarray(bits_data(jnp.asarray(keys), 32, (5,)))
    got_fold = np.asarray(fold_in_data(jnp.asarray(keys), jnp.uint32(9)))
    assert got_split.shape == (2, 3, 4, 2) and got_bits.shape == (2, 3, 5)
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(got_split[i, j], er.split(keys[i, j], 4))
            np.testing.assert_array_equal(got_bits[i, j], er.bits(keys[i, j], (5,)))
            np.testing.assert_array_equal(got_fold[i, j], er.fold_in(keys[i, j], 9))


@pytest.mark.parametrize("make", [er.key, er.PRNGKey], ids=["typed", "raw"])
def test_vmap_over_keys_equals_one_draw_per_key(make):
    """vmap of a sampler over a batch of keys (typed or raw) gives each key's own draw, as
    jax.vmap does (JAX's values are these per-key draws, which the golden tests pin)."""
    keys = er.split(make(7), 5)

    def draw(k):
        return er.normal(k, (3,)), er.uniform(k, (2,), minval=-1.0), er.randint(k, (4,), 0, 9)

    got = ember.vmap(draw)(keys)
    for i in range(5):
        want = draw(keys[i])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g)[i], np.asarray(w))
    jitted = ember.jit(ember.vmap(draw))(keys)
    for g, j in zip(got, jitted):
        np.testing.assert_allclose(np.asarray(j), np.asarray(g), rtol=2e-7)
