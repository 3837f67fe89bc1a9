"""Helpers for the CPU code generation tests: edge-value inputs and result comparison.

Input: HLO modules built with ember.hlo.Builder, NumPy arguments. Output: assertions that
the compiled module agrees with the interpreter's `evaluate` (bit-exact, or within an ulp
budget for transcendentals).
"""

from __future__ import annotations

import numpy as np

from ember.backends import cpu
from ember.hlo.evaluator import evaluate

FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 1e-3, 100.0, -100.0,
               np.inf, -np.inf, np.nan, 1e30, -1e30, 7.0, 0.1]


def edge_array(dtype: np.dtype | str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random values with the dtype's edge values mixed in (at the front)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        edges = [0, 1, info.max, info.min, 2, 7, 31, 32, 33, 64]
        if dt.kind == "i":
            edges += [-1, -2, info.min + 1, -7]
        flat = rng.integers(info.min, int(info.max) + 1, n, dtype=dt)
        k = min(n, len(edges))
        perm = rng.permutation(len(edges))[:k]
        flat[:k] = np.array([edges[p] for p in perm], dtype=dt)
    else:
        finfo = np.finfo(dt)
        edges = FLOAT_EDGES + [float(finfo.max), float(finfo.tiny), float(finfo.tiny) / 8]
        flat = (rng.standard_normal(n) * 4).astype(dt)
        k = min(n, len(edges))
        perm = rng.permutation(len(edges))[:k]
        with np.errstate(over="ignore"):
            flat[:k] = np.array([edges[p] for p in perm], dtype=dt)
    return flat.reshape(shape)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place (NaN vs NaN and equal infinities count 0)."""
    a, b = np.asarray(a), np.asarray(b)
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    imin = np.int64(np.iinfo(it).min)
    # map sign-magnitude bits to a monotonic integer line: negative floats -> imin - bits
    ia = a.view(it).astype(np.int64)
    ib = b.view(it).astype(np.int64)
    ia = np.where(ia < 0, imin - ia, ia)
    ib = np.where(ib < 0, imin - ib, ib)
    same_side = (ia < 0) == (ib < 0)
    with np.errstate(over="ignore"):
        d = np.where(same_side, np.abs(ia - ib), np.abs(ia // 2) + np.abs(ib // 2))
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, np.where(np.isnan(a) ^ np.isnan(b), 2**62, d))


def assert_same(got, want, *, ulps: int = 0, signed_zeros: bool = True, what: str = ""):
    """Bit-equal (NaNs equal to NaNs), or within `ulps` for floats."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, ulps=ulps, signed_zeros=signed_zeros, what=f"{what}[{k}]")
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if got.size == 0:
        return
    if want.dtype.kind == "f":
        d = ulp_distance(got, want)
        if not signed_zeros:
            d = np.where((got == 0) & (want == 0), 0, d)
        bad = d > ulps
        if bad.any():
            k = np.flatnonzero(bad.reshape(-1))[:5]
            raise AssertionError(f"{what}: {bad.sum()} elements differ by > {ulps} ulp; "
                                 f"got {got.reshape(-1)[k]}, want {want.reshape(-1)[k]}, "
                                 f"ulps {d.reshape(-1)[k]}")
    else:
        if not np.array_equal(got, want):
            k = np.flatnonzero((got != want).reshape(-1))[:5]
            raise AssertionError(f"{what}: got {got.reshape(-1)[k]}, want "
                                 f"{want.reshape(-1)[k]}")


def check(module, *args, ulps: int = 0, signed_zeros: bool = True, what: str = ""):
    """Compile `module`, run it and the interpreter on `args`, compare; returns the exe."""
    exe = cpu.compile(module)
    got = exe(*args)
    want = evaluate(module, *args)
    assert_same(got, want, ulps=ulps, signed_zeros=signed_zeros, what=what or module.name)
    return exe


def unrolled_program(steps: int):
    """The compile-time tests' unrolled program: `steps` rounds of sin, cos of the reversed
    vector and a running sum (one kernel per round and a scalar sum each)."""
    import ember.numpy as jnp

    def f(x):
        s = 0.0
        for _ in range(steps):
            x = jnp.sin(x) + jnp.cos(x[::-1])
            s = s + jnp.sum(x)
        return x, s
    return f


def unrolled_numpy(x: np.ndarray, steps: int) -> tuple[np.ndarray, np.float32]:
    """`unrolled_program(steps)` in NumPy."""
    s = np.float32(0)
    for _ in range(steps):
        x = np.sin(x) + np.cos(x[::-1])
        s += x.sum()
    return x, s
