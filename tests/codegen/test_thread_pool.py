"""Ember's thread pool (backends/cpu/pool.py): `ember_parallel_for` covers [0, extent) with
chunks exactly once, split kernels (loop, reduction, row, sort, dot) give the 1-thread bits
with 2, 3 and 7 threads, regions run back to back and from several Python threads at once,
a fork's child restarts its workers, and one thread runs everything inline."""

from __future__ import annotations

import ctypes
import multiprocessing
import threading
import time

import numpy as np
import pytest

from ember.backends import cpu
from ember.backends.cpu.dot import plan as dot_plan
from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.runtime import pool
from ember.hlo import Builder, Shape

pytestmark = pytest.mark.skipif(pool.arch_of(llvm_target.target().triple) is None,
                                reason="the thread pool runs on Linux x86-64 and aarch64")

CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
PARALLEL_FOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                ctypes.c_int32)


@pytest.fixture(autouse=True)
def _no_pass_checks(monkeypatch):
    # the differential checks evaluate every big module after every pass: this file tests
    # threads, not passes
    monkeypatch.setenv("EMBER_ENABLE_CHECKS", "0")


@pytest.fixture
def threads_restored():
    before = cpu.get_num_threads()
    yield
    cpu.set_num_threads(before)


@pytest.fixture
def no_backoff():
    """Regions always use helpers (Python chunks wait for the GIL, which looks like stalls)."""
    pool.set_max_backoff_us(0)
    yield
    pool.set_max_backoff_us(pool.MAX_BACKOFF_NS / 1000)


def _parallel_for() -> PARALLEL_FOR:
    return PARALLEL_FOR(pool.address())


def _pooled() -> int:
    """Split calls that reached the pool: run with helpers, or alone because another region
    held the pool or because the pool is backing off after a stall."""
    st = pool.stats()
    return st["regions"] + st["busy_inline"] + st["backoff_inline"]


def _expected_chunks(extent: int, nthreads: int, workers: int) -> list[tuple[int, int]]:
    """The pool's chunking: C = min(extent, 4 T), chunk i = [i q + min(i, r), ...)."""
    c = min(extent, pool.CHUNKS_PER_THREAD * (min(nthreads - 1, workers) + 1))
    q, r = divmod(extent, c)
    return [(i * q + min(i, r), (i + 1) * q + min(i + 1, r)) for i in range(c)]


# -- the native entry point itself ------------------------------------------------------------


def test_the_pool_is_installed():
    assert llvm_target.target().gomp and pool.installed()


@pytest.mark.parametrize("nthreads", [2, 3, 7])
@pytest.mark.parametrize("extent", [2, 3, 5, 17, 1001, 65_537])
def test_chunks_cover_the_extent_once(extent, nthreads, no_backoff):
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def chunk(data, begin, end):
        with lock:
            seen.append((begin, end))

    cb = CHUNK(chunk)
    _parallel_for()(ctypes.cast(cb, ctypes.c_void_p), None, extent, nthreads)
    workers = pool.stats()["workers"]
    assert sorted(seen) == _expected_chunks(extent, nthreads, workers)
    assert workers >= nthreads - 1


@pytest.mark.parametrize("extent", [0, 1, 1000])
def test_one_thread_or_one_index_runs_inline(extent):
    seen: list[tuple[int, int, int]] = []
    cb = CHUNK(lambda data, b, e: seen.append((b, e, threading.get_ident())))
    before = pool.stats()["regions"]
    _parallel_for()(ctypes.cast(cb, ctypes.c_void_p), None, extent, 1)
    assert seen == [(0, extent, threading.get_ident())]
    assert pool.stats()["regions"] == before


def test_data_pointer_reaches_every_chunk():
    out = np.zeros(10_007, dtype=np.int64)

    def chunk(data, begin, end):
        view = (ctypes.c_int64 * out.size).from_address(data)
        for i in range(begin, end):
            view[i] += i + 1

    cb = CHUNK(chunk)
    _parallel_for()(ctypes.cast(cb, ctypes.c_void_p), out.ctypes.data, out.size, 3)
    np.testing.assert_array_equal(out, np.arange(1, out.size + 1))


def test_a_region_inside_a_chunk_runs_alone(no_backoff):
    """A chunk that starts a region finds the pool busy and runs its extent itself."""
    inner: list[tuple[int, int]] = []
    lock = threading.Lock()

    def inner_chunk(data, b, e):
        with lock:
            inner.append((b, e))

    icb = CHUNK(inner_chunk)
    pf = _parallel_for()

    def outer_chunk(data, b, e):
        for _ in range(b, e):
            pf(ctypes.cast(icb, ctypes.c_void_p), None, 7, 3)

    ocb = CHUNK(outer_chunk)
    before = pool.stats()["busy_inline"]
    pf(ctypes.cast(ocb, ctypes.c_void_p), None, 5, 3)
    assert inner == [(0, 7)] * 5
    assert pool.stats()["busy_inline"] - before == 5


def test_a_stalled_worker_makes_the_next_regions_run_alone():
    """A worker holding a chunk far longer than the caller's chunks take is a stall: the
    caller waits for that chunk (it cannot be taken back), then runs regions alone for
    about as long as it waited (here ~0.5 s)."""
    caller = threading.get_ident()
    worker_in = threading.Event()
    seen: list[tuple[int, int, int]] = []

    def chunk(data, b, e):
        seen.append((b, e, threading.get_ident()))
        if threading.get_ident() == caller:
            worker_in.wait(30)  # until a worker holds a chunk
        elif not worker_in.is_set():
            worker_in.set()
            time.sleep(0.5)  # (the caller's other chunks take ~0: far past its patience,
            # and the caller then runs alone for about as long as it waited)

    cb = CHUNK(chunk)
    pf = _parallel_for()
    pool.set_max_backoff_us(pool.MAX_BACKOFF_NS / 1000)  # (no backoff under way)
    before = pool.stats()
    pf(ctypes.cast(cb, ctypes.c_void_p), None, 64, 2)
    assert worker_in.is_set()
    mid = pool.stats()
    assert mid["stalls"] == before["stalls"] + 1
    seen.clear()
    pf(ctypes.cast(cb, ctypes.c_void_p), None, 64, 2)
    assert seen == [(0, 64, caller)]  # alone, inline
    after = pool.stats()
    assert after["backoff_inline"] == mid["backoff_inline"] + 1
    assert after["regions"] == mid["regions"]
    # ending the backoff: helpers again
    pool.set_max_backoff_us(pool.MAX_BACKOFF_NS / 1000)
    pf(ctypes.cast(cb, ctypes.c_void_p), None, 64, 2)
    assert pool.stats()["regions"] == after["regions"] + 1


# -- compiled kernels ---------------------------------------------------------------------------


ET = {"float32": "f32", "float64": "f64", "int32": "s32"}


def _loop(dtype: str, n: int):
    b = Builder(f"loop_{dtype}")
    p = [b.parameter(Shape(ET[dtype], (n,))) for _ in range(3)]
    m = b.build(b.add(b.multiply(p[0], p[1]), p[2]))
    rng = np.random.default_rng(n)
    args = [(rng.standard_normal(n) * 100).astype(dtype) for _ in range(3)]
    return m, args, lambda a, x, y: a * x + y


def _rowsum(dtype: str, shape: tuple[int, int]):
    et = ET[dtype]
    b = Builder(f"rowsum_{et}")
    p = b.parameter(Shape(et, shape))
    m = b.build(b.reduce(p, b.scalar(0, et), (1,), Builder.scalar_computation("add", et)))
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    return m, [x], None


def _softmax_rows(shape: tuple[int, int]):
    b = Builder("softmax_rows")
    p = b.parameter(Shape("f32", shape))
    e = b.exponential(p)
    s = b.reduce(e, b.scalar(0.0, "f32"), (1,), Builder.scalar_computation("add", "f32"))
    m = b.build(b.divide(e, b.broadcast(s, shape, (0,))))
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    return m, [x], None


def _sort_rows(shape: tuple[int, int]):
    from ember.prims.sort import comparator

    b = Builder("sort_rows")
    p = b.parameter(Shape("f32", shape))
    m = b.build(b.sort([p], 1, comparator(["f32"], 1), is_stable=True))
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    return m, [x], lambda v: np.sort(v, axis=1)


def _dot(m_: int, k: int, n: int):
    b = Builder("dot")
    x, y = b.parameter(Shape("f32", (m_, k))), b.parameter(Shape("f32", (k, n)))
    m = b.build(b.dot(x, y, (1,), (0,)))
    rng = np.random.default_rng(4)
    return m, [rng.standard_normal((m_, k)).astype(np.float32),
               rng.standard_normal((k, n)).astype(np.float32)], None


CASES = {
    "loop_f32": lambda: _loop("float32", 200_003),
    "loop_f64": lambda: _loop("float64", 131_101),
    "loop_s32": lambda: _loop("int32", 140_001),
    "reduce_f32": lambda: _rowsum("float32", (1031, 131)),
    "reduce_f64": lambda: _rowsum("float64", (263, 509)),
    "row": lambda: _softmax_rows((263, 509)),
    "sort": lambda: _sort_rows((37, 3547)),
    "dot": lambda: _dot(301, 257, 263),
}


def _compile(case: str):
    m, args, ref = CASES[case]()
    saved = dot_plan.cpu_hint
    dot_plan.cpu_hint = lambda: 7  # several work units whatever this machine has
    try:
        exe = cpu.compile(m, use_cache=False)
    finally:
        dot_plan.cpu_hint = saved
    return exe, args, ref


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernels_match_one_thread_bit_for_bit(case, threads_restored):
    exe, args, ref = _compile(case)
    assert exe.parallel_kernels, exe.kernel_names
    cpu.set_num_threads(1)
    one = exe(*args)
    if ref is not None:  # exact IEEE ops: NumPy computes the same bits
        np.testing.assert_array_equal(one, ref(*args))
    before = _pooled()
    for n in (2, 3, 7):
        cpu.set_num_threads(n)
        for _ in range(3):
            got = exe(*args)
            assert got.dtype == one.dtype and got.shape == one.shape
            assert got.tobytes() == one.tobytes(), f"{case}: {n} threads"
    assert _pooled() - before == 9 * len(exe.parallel_kernels)  # each call used the pool


def test_many_regions_back_to_back(threads_restored):
    """A native loop of split kernels (a region per iteration) and many calls in a row."""
    import ember
    import ember.numpy as jnp
    from ember import lax

    x = np.linspace(-1, 1, 512 * 513).astype(np.float32).reshape(512, 513)

    def jacobi(u):
        def step(i, u):
            inner = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
            return jnp.pad(inner, 1)
        return lax.fori_loop(0, 150, step, u)

    compiled = ember.jit(jacobi).lower(x).compile()._compiled
    exe = compiled.executable
    assert exe.parallel_kernels
    cpu.set_num_threads(1)
    want = exe(x)
    u = x.copy()
    for _ in range(150):
        inner = np.float32(0.25) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
        u = np.pad(inner, 1)
    np.testing.assert_array_equal(want, u)
    cpu.set_num_threads(2)
    before = _pooled()
    for _ in range(20):
        assert exe(x).tobytes() == want.tobytes()
    assert _pooled() - before == 20 * 150 * len(exe.parallel_kernels)


def test_calls_from_several_python_threads(threads_restored):
    exe, (a, x, y), ref = _compile("loop_f32")
    cpu.set_num_threads(3)
    rng = np.random.default_rng(5)
    inputs = [[rng.standard_normal(a.size).astype(np.float32) for _ in range(3)]
              for _ in range(4)]
    want = [ref(*i) for i in inputs]
    errors: list[int] = []
    before = _pooled()
    calls = 25

    def worker(t: int) -> None:
        for _ in range(calls):
            if exe(*inputs[t]).tobytes() != want[t].tobytes():
                errors.append(t)

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    # every split call either got the pool or, finding it busy, ran alone
    assert _pooled() - before == 4 * calls * len(exe.parallel_kernels)


def _child(conn, exe_args) -> None:
    exe, args = exe_args
    cpu.set_num_threads(3)
    got = exe(*args)
    conn.send((got.tobytes(), pool.stats()))
    conn.close()


def test_a_forked_child_computes_with_fresh_workers(threads_restored):
    exe, args, ref = _compile("loop_f32")
    cpu.set_num_threads(3)
    want = exe(*args)  # the parent's workers exist now
    assert pool.stats()["workers"] >= 2
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=_child, args=(child, (exe, args)))
    p.start()
    # (bounded: a child that deadlocks - a lock some other library's thread held at the
    # fork, e.g. jax's once the xla-cpu tests imported it in this worker - fails the test
    # instead of hanging the suite)
    answered = parent.poll(120)
    if not answered:
        p.kill()
    assert answered, "the forked child did not answer within 120 s"
    got, stats = parent.recv()
    p.join(timeout=60)
    assert p.exitcode == 0
    assert got == want.tobytes() == ref(*args).tobytes()
    # the child's pool started from nothing: its own regions, workers started anew
    assert stats["regions"] + stats["backoff_inline"] == len(exe.parallel_kernels)
    assert stats["workers"] == 2


def test_sleeping_workers_are_woken(threads_restored):
    """Workers that sleep at once (no polling) are woken by the next region's futex wake."""
    exe, args, ref = _compile("loop_f32")
    want = ref(*args).tobytes()
    cpu.set_num_threads(3)
    try:
        pool.set_spin_us(0, 0)
        assert exe(*args).tobytes() == want  # (starts the workers)
        wakes = pool.stats()["wakes"]
        for _ in range(5):
            deadline = time.monotonic() + 30
            while not all(pool.asleep()[:2]) and time.monotonic() < deadline:
                time.sleep(0.001)
            assert all(pool.asleep()[:2])
            assert exe(*args).tobytes() == want
        # (a worker preempted between flagging itself asleep and the futex call may see the
        # region itself and need no wake; five in a row cannot all be that)
        assert pool.stats()["wakes"] > wakes
    finally:
        pool.set_spin_us(pool.SPIN_NS / 1000, pool.YIELD_NS / 1000)


def test_one_thread_never_enters_the_pool(threads_restored):
    exe, args, ref = _compile("loop_f32")
    cpu.set_num_threads(1)
    before = _pooled()
    got = exe(*args)
    assert got.tobytes() == ref(*args).tobytes()
    assert _pooled() == before
