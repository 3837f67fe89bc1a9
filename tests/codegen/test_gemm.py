"""Ember's own GEMM library (ember/backends/cpu/dot/gemm.py) called directly: pack_b then
gemm_packed against NumPy in float64, for f32 and f64, both transposes, odd sizes around the
tile and block edges, pitches wider than the matrices (nothing written outside C), k = 0,
B packed in column ranges, rows computed in pieces (the same bits as in one call), IEEE
specials; and the blockings of hosts with 16 vector registers (AVX2, SSE) compiled here."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from ember.backends.cpu.dot import gemm
from ember.backends.cpu.jit import llvm_target

P, L, I = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32
PACK_T = ctypes.CFUNCTYPE(None, I, L, L, P, L, P, L, L)
GEMM_T = ctypes.CFUNCTYPE(None, I, L, L, L, P, L, P, P, L)
_LIBS: dict[str, tuple] = {}


class Lib:
    """The library compiled for a feature string (its blocking), run on this host."""

    def __init__(self, features: str):
        self.engine, _ = llvm_target.load_object(gemm.compile_library(features),
                                                 gemm.name("s", "gemm_packed"))
        self.features = features
        self.fn = {(p, w): (PACK_T if w == "pack_b" else GEMM_T)(
            self.engine.get_function_address(gemm.name(p, w)))
            for p in "sd" for w in ("pack_b", "gemm_packed")}

    def panels(self, dt, k: int, n: int) -> tuple[np.ndarray, int]:
        q = gemm.blocking("s" if dt == np.float32 else "d", self.features)
        buf = np.full(gemm.packed_b_elements(q.nr, k, n) + 64, np.nan, dt)
        return buf, q.nr

    def product(self, a, b, ta: int, tb: int, m: int, n: int, k: int, c=None,
                ranges=None, rows=None) -> np.ndarray:
        """C = op(A) op(B) with op(A) m x k, op(B) k x n; `a`, `b` may be wider than the
        operands (their pitch is their row length); `ranges`: pack B in these column
        ranges; `rows`: compute C in these row blocks."""
        prec = "s" if a.dtype == np.float32 else "d"
        bp, nr = self.panels(a.dtype, k, n)
        for j0, j1 in ranges or [(0, n)]:
            self.fn[prec, "pack_b"](tb, k, n, b.ctypes.data, b.shape[1], bp.ctypes.data, j0, j1)
        if c is None:
            c = np.full((m, n), np.nan, a.dtype)
        item = a.dtype.itemsize
        for i0, i1 in rows or [(0, m)]:
            a_off = (i0 if ta else i0 * a.shape[1]) * item
            self.fn[prec, "gemm_packed"](ta, i1 - i0, n, k, a.ctypes.data + a_off, a.shape[1],
                                         bp.ctypes.data, c.ctypes.data + i0 * c.shape[1] * item,
                                         c.shape[1])
        return c


def lib(features: str | None = None) -> Lib:
    features = llvm_target.target().features if features is None else features
    if features not in _LIBS:
        _LIBS[features] = Lib(features)
    return _LIBS[features]


def operands(rng, dt, m, n, k, ta, tb, extra=0):
    a = rng.standard_normal((k, m + extra) if ta else (m, k + extra)).astype(dt)
    b = rng.standard_normal((n, k + extra) if tb else (k, n + extra)).astype(dt)
    return a, b


def reference(a, b, ta, tb, m, n, k):
    av = (a[:k, :m].T if ta else a[:m, :k]).astype(np.float64)
    bv = (b[:n, :k].T if tb else b[:k, :n]).astype(np.float64)
    return av @ bv, np.abs(av) @ np.abs(bv)


def close(got, a, b, ta, tb, m, n, k):
    want, scale = reference(a, b, ta, tb, m, n, k)
    eps = np.finfo(got.dtype).eps
    return bool(np.all(np.abs(got - want) <= (k + 2) * eps * scale + 1e-30))


SHAPES = [(1, 1, 1), (6, 64, 256), (7, 65, 257), (13, 33, 7), (37, 65, 300), (100, 50, 513),
          (97, 530, 129), (2, 3, 1000), (200, 17, 3)]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_products_match_numpy(dt, ta, tb):
    rng = np.random.default_rng(ta * 2 + tb)
    for m, n, k in SHAPES:
        a, b = operands(rng, dt, m, n, k, ta, tb)
        assert close(lib().product(a, b, ta, tb, m, n, k), a, b, ta, tb, m, n, k), (m, n, k)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pitches_wider_than_the_matrices_and_nothing_written_outside(dt):
    rng = np.random.default_rng(7)
    m, n, k = 37, 70, 45
    for ta, tb in [(0, 0), (1, 1)]:
        a, b = operands(rng, dt, m, n, k, ta, tb, extra=5)
        c = np.full((m + 2, n + 9), np.nan, dt)
        lib().product(a, b, ta, tb, m, n, k, c=c)
        assert close(c[:m, :n], a, b, ta, tb, m, n, k)
        assert np.isnan(c[:m, n:]).all() and np.isnan(c[m:]).all()


def test_k_zero_gives_zeros():
    c = lib().product(np.ones((5, 1), np.float32), np.ones((1, 7), np.float32), 0, 0, 5, 7, 0)
    assert np.array_equal(c, np.zeros((5, 7), np.float32))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_split_packing_and_row_blocks_give_the_same_bits(dt):
    """Column ranges of whole panels packed separately, rows in blocks (as threads run
    them): bit for bit the one-call result."""
    rng = np.random.default_rng(3)
    m, n, k = 131, 300, 700
    a, b = operands(rng, dt, m, n, k, 0, 0)
    whole = lib().product(a, b, 0, 0, m, n, k)
    _, nr = lib().panels(dt, k, n)
    cuts = [0, nr, 3 * nr, n]
    split = lib().product(a, b, 0, 0, m, n, k, ranges=list(zip(cuts, cuts[1:])),
                          rows=[(0, 5), (5, 64), (64, 100), (100, m)])
    assert np.array_equal(whole, split)


def test_ieee_specials():
    rng = np.random.default_rng(4)
    m, n, k = 40, 70, 50
    a, b = operands(rng, np.float32, m, n, k, 0, 0)
    a[5, 7], a[9, 3] = np.nan, np.inf
    b[3, :] = 0.0
    b[11, 20] = -np.inf
    got = lib().product(a, b, 0, 0, m, n, k)
    with np.errstate(invalid="ignore", over="ignore"):
        want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))


@pytest.mark.parametrize("features", ["+avx2,+fma,+avx", "+sse2"])
def test_other_hosts_blockings(features):
    """The 16-register blockings (6 x 2 vectors of 8 or 4 f32) are right too."""
    host = llvm_target.target().features
    if "+avx2" in features and "+avx2" not in host:
        pytest.skip("host without AVX2")
    q = gemm.blocking("s", features)
    assert q.nr == 2 * q.lanes and q.lanes == (8 if "+avx" in features else 4)
    rng = np.random.default_rng(5)
    for ta, tb in [(0, 0), (1, 1)]:
        for dt in (np.float32, np.float64):
            m, n, k = 37, 41, 300
            a, b = operands(rng, dt, m, n, k, ta, tb)
            assert close(lib(features).product(a, b, ta, tb, m, n, k), a, b, ta, tb, m, n, k)


def test_library_comes_from_the_disk_cache_in_a_new_process(tmp_path):
    """A second process links the GEMM library (and the product's executable) from the
    disk cache: no code generation, same result."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np, ember\n"
            "from ember.backends.cpu.jit import llvm_target as lt\n"
            "a = np.random.default_rng(0).standard_normal((70, 90)).astype(np.float32)\n"
            "r = np.asarray(ember.jit(lambda x, y: x @ y)(a, a.T.copy()))\n"
            "assert np.allclose(r, a.astype(np.float64) @ a.T, atol=1e-4)\n"
            "from ember.backends.cpu.dot import gemm\n"
            "print(lt.STATS['codegen_runs'], int(gemm.LIBRARY.bound))\n")
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), EMBER_MATMUL_BACKEND="ember")
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        codegen, linked = map(int, out.stdout.split())
        assert linked == 1  # the library was linked in both processes
        runs.append(codegen)
    assert runs == [2, 0]  # library + executable, then neither
