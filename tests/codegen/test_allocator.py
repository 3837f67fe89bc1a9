"""The caching allocator: results the user holds are never rewritten, dropped ones are
recycled, the pool is bounded and trimmed, and a loop discarding results pays no faults."""

from __future__ import annotations

import resource

import numpy as np

from ember.backends import cpu
from ember.backends.cpu.runtime.allocator import MIN_BYTES, Allocator
from ember.hlo import Builder, Shape

N = 1 << 20  # 4 MB of f32: above the pool's threshold


def _axpb(n: int = N):
    b = Builder("axpb")
    s = Shape("f32", (n,))
    x, a, c = b.parameter(s), b.parameter(s), b.parameter(s)
    return b.build(b.add(b.multiply(a, b.sine(x)), c))


def _with_temporary(n: int = N):
    """exp(x) has two users, one reading it in reverse order, so it lives in a scratch
    temporary between two kernels (an elementwise reader alone would take it into its
    kernel: multi-output fusion)."""
    b = Builder("temp")
    x = b.parameter(Shape("f32", (n,)))
    e = b.exponential(x)
    return b.build(b.tuple([b.add(b.reverse(e, (0,)), x), b.multiply(e, e)]))


def test_result_of_call_k_is_unchanged_by_call_k_plus_1():
    exe = cpu.compile(_axpb())
    one, zero = np.ones(N, np.float32), np.zeros(N, np.float32)
    results = []
    for k in range(4):
        results.append(exe(zero, one, np.full(N, float(k), np.float32)))
    for k, r in enumerate(results):
        assert (r == k).all()


def test_dropped_results_are_recycled_and_views_keep_theirs():
    exe = cpu.compile(_axpb())
    x = np.zeros(N, np.float32)
    exe(x, x, x)
    before = cpu.allocator_stats()
    for _ in range(10):
        exe(x, x, x)  # result dropped at once
    after = cpu.allocator_stats()
    assert after["misses"] - before["misses"] <= 1
    assert after["hits"] - before["hits"] >= 9
    r = exe(x, x, x)
    view = r[1:]
    del r
    for k in range(3):
        r2 = exe(x, x, np.full(N, 7.0 + k, np.float32))
        assert not np.shares_memory(r2, view)
    assert (view == 0).all()


def test_temporaries_use_the_pool_and_stay_correct():
    exe = cpu.compile(_with_temporary())
    assert exe._spec.scratch_bytes >= MIN_BYTES
    x = np.linspace(-3, 3, N).astype(np.float32)
    first = exe(x)
    before = cpu.allocator_stats()
    for _ in range(3):
        got = exe(x)
        np.testing.assert_array_equal(got[0], first[0])
        np.testing.assert_array_equal(got[1], first[1])
    assert cpu.allocator_stats()["hits"] > before["hits"]


def test_pool_is_bounded_and_trimmed():
    pool = Allocator(limit_bytes=3 * MIN_BYTES)
    blocks = [pool.take(MIN_BYTES) for _ in range(5)]
    for blk in blocks:
        pool.give_back(blk)
    assert pool.snapshot()["bytes_held"] <= 3 * MIN_BYTES
    assert pool.trim(0.0) > 0
    assert pool.snapshot()["bytes_held"] == 0
    arr = pool.empty((MIN_BYTES // 4,), np.dtype(np.float32))
    assert arr.__array_interface__["data"][0] % 64 == 0
    del arr
    pool.trim(0.0)  # collects the dropped output, then releases it
    snap = pool.snapshot()
    assert snap["bytes_held"] == 0 and snap["bytes_outstanding"] == 0


def test_small_outputs_bypass_the_pool():
    pool = Allocator()
    a = pool.empty((8,), np.dtype(np.float64))
    assert a.shape == (8,) and pool.snapshot()["misses"] == 0


def test_discarding_loop_pays_no_page_faults():
    n = 4 << 20  # 16 MB outputs: 4096 faults each when freshly mapped with 4 KB pages
    exe = cpu.compile(_axpb(n))
    x = np.zeros(n, np.float32)
    for _ in range(3):
        exe(x, x, x)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        exe(x, x, x)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    assert faults < 500, faults
