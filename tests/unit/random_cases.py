"""The calls whose values tests/unit/test_random.py checks against JAX 0.10.2's.

Each case is (name, key kind, seed, call, check) where `call(r, key)` runs with `r` either
`jax.random` (once, in random_golden_gen.py, which writes random_golden.py) or
`ember.random` (in the tests); `check` is "exact" (bit-identical) or "close" (a path
through a transcendental function: within a few ulp of JAX's in the bulk, and at most
JAX's own erfinv error of ~100 ulp in the far tails). X64_CASES run with jax_enable_x64.
"""

from __future__ import annotations

import numpy as np

_X = np.arange(12, dtype=np.float32).reshape(3, 4)
_LOGITS = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
_P = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
GAMMA_N = 4000
DERIVED_N = 2000
DIRICHLET_ALPHA = np.array([0.5, 1.0, 2.0], np.float32)
MVN_MEAN = np.array([1.0, -2.0, 0.5], np.float32)
MVN_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)


def _cases_32() -> list[tuple]:
    c: list[tuple] = []

    def add(name, kind, seed, call, check="exact"):
        c.append((name, kind, seed, call, check))

    add("key_data", "typed", 7, lambda r, k: r.key_data(k))
    add("PRNGKey_neg", "none", 0, lambda r, k: r.PRNGKey(-1))
    add("PRNGKey_big", "none", 0, lambda r, k: r.PRNGKey(2 ** 32 + 5))
    add("PRNGKey_int8", "none", 0, lambda r, k: r.PRNGKey(np.int8(-3)))
    add("split_2", "raw", 3, lambda r, k: r.split(k))
    add("split_3", "raw", 3, lambda r, k: r.split(k, 3))
    add("split_2x3", "typed", 3, lambda r, k: r.key_data(r.split(k, (2, 3))))
    add("split_0", "raw", 3, lambda r, k: r.split(k, (0,)))
    add("split_split", "raw", 11, lambda r, k: r.split(r.split(k)[1], 4))
    for d in (0, 1, 2 ** 31, 2 ** 32 - 1):
        add(f"fold_in_{d}", "raw", 3, lambda r, k, d=d: r.fold_in(k, d))
    add("fold_in_typed", "typed", 5, lambda r, k: r.key_data(r.fold_in(k, 17)))
    for dt in ("uint8", "uint16", "uint32"):
        for shape in ((), (5,), (3, 4), (2, 0)):
            add(f"bits_{dt}_{shape}", "raw", 3, lambda r, k, s=shape, d=dt: r.bits(k, s, d))
    add("bits_rank3", "typed", 9, lambda r, k: r.bits(k, (2, 3, 5)))
    for dt in ("float32", "float16"):
        for shape in ((), (7,), (3, 5)):
            add(f"uniform_{dt}_{shape}", "raw", 3, lambda r, k, s=shape, d=dt: r.uniform(k, s, d))
        add(f"uniform_{dt}_bounds", "raw", 4,
            lambda r, k, d=dt: r.uniform(k, (33,), d, -2.5, 3.7))
        add(f"normal_{dt}", "raw", 3, lambda r, k, d=dt: r.normal(k, (4, 6), d), "close")
    add("uniform_array_bounds", "typed", 6,
        lambda r, k: r.uniform(k, (2, 3), minval=np.array([0.0, 1.0, 2.0], np.float32),
                               maxval=np.float32(5.0)))
    add("uniform_size1", "typed", 6, lambda r, k: r.uniform(k, (1,)))
    for dt in ("int32", "int8", "uint8", "int16", "uint32"):
        add(f"randint_{dt}", "raw", 3, lambda r, k, d=dt: r.randint(k, (17,), 0, 100, d))
        add(f"randint_{dt}_wide", "raw", 3, lambda r, k, d=dt: r.randint(k, (9,), -5, 1000, d))
    add("randint_full", "raw", 3, lambda r, k: r.randint(k, (9,), -2 ** 31, 2 ** 31 - 1))
    add("randint_empty_range", "raw", 3, lambda r, k: r.randint(k, (4,), 5, 5))
    add("randint_array_bounds", "typed", 8,
        lambda r, k: r.randint(k, (2, 3), np.array([0, 10, 100]), 1000))
    add("bernoulli", "raw", 3, lambda r, k: r.bernoulli(k, 0.3, (20,)))
    add("bernoulli_high", "raw", 3, lambda r, k: r.bernoulli(k, 0.3, (20,), mode="high"))
    add("bernoulli_p", "typed", 2,
        lambda r, k: r.bernoulli(k, np.linspace(0, 1, 7, dtype=np.float32)))
    add("truncated_normal", "raw", 3, lambda r, k: r.truncated_normal(k, -1.0, 2.0, (20,)),
        "close")
    for f in ("exponential", "laplace", "logistic", "gumbel"):
        for dt in ("float32", "float16"):
            add(f"{f}_{dt}", "raw", 3, lambda r, k, f=f, d=dt: getattr(r, f)(k, (3, 5), d),
                "close")
    add("gumbel_high", "raw", 3, lambda r, k: r.gumbel(k, (20,), mode="high"), "close")
    add("gumbel_highest", "raw", 3, lambda r, k: r.gumbel(k, (20,), mode="highest"), "close")
    add("cauchy", "raw", 3, lambda r, k: r.cauchy(k, (DERIVED_N,)), "close")
    add("pareto", "raw", 3, lambda r, k: r.pareto(k, 2.0, (DERIVED_N,)), "close")
    add("lognormal", "typed", 3, lambda r, k: r.lognormal(k, 0.5, (DERIVED_N,)), "close")
    add("rayleigh", "raw", 3, lambda r, k: r.rayleigh(k, 2.0, (DERIVED_N,)), "close")
    add("weibull_min", "raw", 3, lambda r, k: r.weibull_min(k, 2.0, 1.5, (DERIVED_N,)), "close")
    add("maxwell", "raw", 3, lambda r, k: r.maxwell(k, (DERIVED_N,)), "close")
    add("double_sided_maxwell", "raw", 3,
        lambda r, k: r.double_sided_maxwell(k, 1.0, 2.0, (DERIVED_N,)), "close")
    add("geometric", "raw", 3, lambda r, k: r.geometric(k, 0.3, (DERIVED_N,)))
    add("triangular", "raw", 3, lambda r, k: r.triangular(k, 0.0, 0.3, 2.0, (DERIVED_N,)))
    add("wald", "raw", 3, lambda r, k: r.wald(k, 1.5, (DERIVED_N,)), "close")
    add("categorical", "raw", 3, lambda r, k: r.categorical(k, _LOGITS))
    add("categorical_shape", "raw", 3, lambda r, k: r.categorical(k, _LOGITS, shape=(4, 2)))
    add("categorical_axis0", "typed", 3,
        lambda r, k: r.categorical(k, _LOGITS, axis=0, shape=(5, 3)))
    add("categorical_noreplace", "raw", 3,
        lambda r, k: r.categorical(k, _LOGITS, shape=(3, 2), replace=False))
    add("permutation_int", "raw", 3, lambda r, k: r.permutation(k, 10))
    add("permutation_1", "raw", 3, lambda r, k: r.permutation(k, 1))
    add("permutation_array", "raw", 3, lambda r, k: r.permutation(k, _X))
    add("permutation_axis1", "typed", 3, lambda r, k: r.permutation(k, _X, axis=1))
    add("permutation_independent", "raw", 3,
        lambda r, k: r.permutation(k, _X, axis=1, independent=True))
    add("choice", "raw", 3, lambda r, k: r.choice(k, 10, (5,)))
    add("choice_noreplace", "raw", 3, lambda r, k: r.choice(k, 10, (2, 3), replace=False))
    add("choice_array_axis1", "typed", 3, lambda r, k: r.choice(k, _X, (2,), axis=1))
    add("choice_p", "raw", 3, lambda r, k: r.choice(k, 4, (7,), p=_P))
    add("choice_p_noreplace", "raw", 3, lambda r, k: r.choice(k, 4, (3,), replace=False, p=_P))
    return c


def _cases_64() -> list[tuple]:
    c: list[tuple] = []

    def add(name, kind, seed, call, check="exact"):
        c.append((name, kind, seed, call, check))

    for s in (-1, 2 ** 40 + 3, -2 ** 40):
        add(f"x64_PRNGKey_{s}", "none", 0, lambda r, k, s=s: r.PRNGKey(s))
    add("x64_bits_default", "raw", 3, lambda r, k: r.bits(k, (5,)))
    add("x64_bits_uint64", "typed", 4, lambda r, k: r.bits(k, (2, 3), "uint64"))
    add("x64_uniform", "raw", 3, lambda r, k: r.uniform(k, (7,)))
    add("x64_uniform_bounds", "raw", 3, lambda r, k: r.uniform(k, (33,), minval=-2.5, maxval=3.7))
    add("x64_uniform_f32", "raw", 3, lambda r, k: r.uniform(k, (7,), "float32"))
    add("x64_randint", "raw", 3, lambda r, k: r.randint(k, (10,), -5, 2 ** 40))
    add("x64_randint_int32", "raw", 3, lambda r, k: r.randint(k, (10,), -5, 1000, "int32"))
    add("x64_bernoulli", "raw", 3, lambda r, k: r.bernoulli(k, 0.5, (12,)))
    add("x64_normal", "raw", 3, lambda r, k: r.normal(k, (50,)), "close")
    add("x64_exponential", "raw", 3, lambda r, k: r.exponential(k, (9,)), "close")
    add("x64_permutation", "raw", 3, lambda r, k: r.permutation(k, 20))
    add("x64_choice_p", "raw", 3, lambda r, k: r.choice(k, 4, (7,), p=_P.astype(np.float64)))
    return c


def _cases_gamma() -> list[tuple]:
    c: list[tuple] = []

    def add(name, kind, seed, call, check="close"):
        c.append((name, kind, seed, call, check))

    # (sample sizes the KS tests of test_random_gamma.py use too: one compile serves both;
    # the golden file keeps the first values of large draws)
    add("gamma_small_a", "raw", 3, lambda r, k: r.gamma(k, np.float32(0.3), (GAMMA_N,)))
    add("gamma_large_a", "raw", 4, lambda r, k: r.gamma(k, np.float32(4.5), (GAMMA_N,)))
    add("loggamma", "typed", 4, lambda r, k: r.loggamma(k, np.float32(0.2), (7,)))
    add("beta", "raw", 3,
        lambda r, k: r.beta(k, np.float32(0.5), np.float32(2.0), (GAMMA_N,)))
    add("dirichlet", "raw", 3, lambda r, k: r.dirichlet(k, DIRICHLET_ALPHA, (GAMMA_N // 4,)))
    add("rademacher", "raw", 3, lambda r, k: r.rademacher(k, (GAMMA_N,)), "exact")
    add("ball", "raw", 3, lambda r, k: r.ball(k, 3, shape=(GAMMA_N // 4,)))
    add("multivariate_normal", "raw", 3,
        lambda r, k: r.multivariate_normal(k, MVN_MEAN, MVN_COV, (GAMMA_N,)), "factorization")
    add("multivariate_normal_batched_cov", "typed", 3,
        lambda r, k: r.multivariate_normal(k, MVN_MEAN, np.stack([MVN_COV, 2 * MVN_COV])),
        "factorization")
    add("orthogonal", "raw", 3, lambda r, k: r.orthogonal(k, 4, (GAMMA_N // 16,)),
        "factorization")
    add("orthogonal_wide", "raw", 4, lambda r, k: r.orthogonal(k, 3, (2,), m=5),
        "factorization")
    add("t", "raw", 3, lambda r, k: r.t(k, 3.0, (GAMMA_N,)))
    add("chisquare", "raw", 3, lambda r, k: r.chisquare(k, 3.0, (GAMMA_N,)))
    add("f", "typed", 3, lambda r, k: r.f(k, 3.0, 5.0, (GAMMA_N,)))
    add("poisson_small", "raw", 3, lambda r, k: r.poisson(k, 3.0, (GAMMA_N,)), "exact")
    add("poisson_large", "typed", 4, lambda r, k: r.poisson(k, 60.0, (GAMMA_N,)), "exact")
    add("poisson_mixed", "raw", 5,
        lambda r, k: r.poisson(k, np.array([0.0, 1.0, 9.9, 10.0, 50.0], np.float32), (3, 5)),
        "exact")
    return c


CASES_32 = _cases_32()
GAMMA_CASES = _cases_gamma()
X64_CASES = _cases_64()


def make_key(r, kind: str, seed: int):
    """The key a case runs with: a raw PRNGKey, a typed key, or None."""
    if kind == "raw":
        return r.PRNGKey(seed)
    if kind == "typed":
        return r.key(seed)
    return None
