"""Threads: big kernels split their outer loop across cores from native code (Ember's pool,
tested in depth by test_thread_pool.py); results do not depend on the thread count, and an
executable may be called from several Python threads at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.jit import llvm_target
from ember.hlo import Builder, Shape
from ember.lowering import lower_jaxpr

pytestmark = pytest.mark.skipif(not llvm_target.target().gomp,
                                reason="the thread pool cannot run on this host")


def softmax(x):
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def _modules():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 1031)).astype(np.float32)
    yield lower_jaxpr(ember.make_jaxpr(softmax)(x)).module, (x,)
    b = Builder("axpb")
    s = Shape("f32", (200_003,))
    p = [b.parameter(s) for _ in range(3)]
    v = [rng.standard_normal(200_003).astype(np.float32) for _ in range(3)]
    yield b.build(b.add(b.multiply(p[1], b.sine(p[0])), p[2])), tuple(v)
    b = Builder("rowsum")
    p0 = b.parameter(Shape("f32", (517, 300)))
    red = b.reduce(b.exponential(p0), b.scalar(0.0, "f32"), (1,),
                   Builder.scalar_computation("add", "f32"))
    yield b.build(red), (rng.standard_normal((517, 300)).astype(np.float32),)


@pytest.mark.parametrize("k", range(3))
def test_results_do_not_depend_on_the_thread_count(k):
    m, args = list(_modules())[k]
    exe = cpu.compile(m)
    assert exe.parallel_kernels, exe.kernel_names
    saved = cpu.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3, 5):
            cpu.set_num_threads(n)
            results.append(exe(*args))
    finally:
        cpu.set_num_threads(saved)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_small_kernels_stay_sequential():
    b = Builder("small")
    x = b.parameter(Shape("f32", (1000,)))
    exe = cpu.compile(b.build(b.sine(x)))
    assert exe.parallel_kernels == []


def test_calls_from_several_python_threads():
    """One executable (a parallel kernel: Ember's pool is entered from 8 threads at once),
    8 Python threads, each with its own input: each gets its own answer every time."""
    m, args = list(_modules())[0]
    exe = cpu.compile(m)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(args[0].shape).astype(np.float32) for _ in range(8)]
    want = [exe(x) for x in inputs]
    errors: list[str] = []
    start = threading.Barrier(8)

    def worker(t: int) -> None:
        start.wait()
        for _ in range(6):
            got = exe(inputs[t])
            if not np.array_equal(got, want[t]):
                errors.append(f"thread {t}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


RACE = """
import json, threading
import numpy as np
import ember, ember.numpy as jnp

def program(x, y):
    return jnp.sum(jnp.sin(x) * y, axis=-1) + jnp.max(x)

f = ember.jit(program)
# threads 0-3 share one shape (their first calls race on one signature), 4-7 have their
# own; every thread has its own values
shapes = [(3, 5)] * 4 + [(1, 1), (2, 7), (4, 33), (5, 300)]
rng = np.random.default_rng(0)
inputs = [(rng.standard_normal(s).astype(np.float32),
           rng.standard_normal(s[-1:]).astype(np.float32)) for s in shapes]
got = {"jit": [None] * 8, "eager": [None] * 8}
errors = []
start = threading.Barrier(8)

def worker(t):
    try:
        x, y = inputs[t]
        start.wait()  # the first calls (trace, compile, the process's first trampoline,
        # thread pool and eager math kernels) run at the same time in all 8 threads
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        runs = []
        for k in range(8):  # numpy and Array arguments: the general and the fast path
            runs.append((np.asarray(f(x, y)), np.asarray(f(jx, jy))))
        eager = [np.asarray(jnp.sum(jnp.sin(jx) * jy, axis=-1) + jnp.max(jx))
                 for _ in range(8)]
        got["jit"][t] = [r.tolist() for pair in runs for r in pair]
        got["eager"][t] = [e.tolist() for e in eager]
    except BaseException as e:
        errors.append(f"thread {t}: {type(e).__name__}: {e}")

threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
# references after the race, one thread: the same compiled code, so the same bits
want_jit = [np.asarray(f(x, y)).tolist() for x, y in inputs]
want_eager = [np.asarray(jnp.sum(jnp.sin(jnp.asarray(x)) * jnp.asarray(y), axis=-1)
                         + jnp.max(jnp.asarray(x))).tolist() for x, y in inputs]
want_np = [(np.sum(np.sin(x.astype(np.float64)) * y, axis=-1) + x.max()).tolist()
           for x, y in inputs]
print(json.dumps({"errors": errors, "got": got, "want_jit": want_jit,
                  "want_eager": want_eager, "want_np": want_np,
                  "traces": f.trace_count}))
"""


def test_first_calls_racing_in_eight_threads_with_different_shapes():
    """A fresh process (nothing compiled yet, no trampoline, no pool): 8 threads make
    their first calls of one jitted function at once (4 of them on one shape, whose
    compilations race; 4 on shapes of their own), then call it again with NumPy and Array
    arguments, and run the same program eagerly. Every thread gets its own inputs'
    answer, bit for bit what one thread gets afterwards, and close to NumPy's."""
    import json

    env = dict(os.environ, EMBER_CACHE_DIR="off", EMBER_ENABLE_CHECKS="0")
    run = subprocess.run([sys.executable, "-c", RACE], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["errors"] == []
    for t in range(8):
        assert all(r == out["want_jit"][t] for r in out["got"]["jit"][t]), t
        assert all(r == out["want_eager"][t] for r in out["got"]["eager"][t]), t
        np.testing.assert_allclose(out["want_jit"][t], out["want_np"][t], rtol=2e-5,
                                   atol=2e-5)
        np.testing.assert_allclose(out["want_eager"][t], out["want_np"][t], rtol=2e-5,
                                   atol=2e-5)


def test_env_sets_the_thread_count():
    env = dict(os.environ, EMBER_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", "from ember.backends import cpu; "
                          "print(cpu.get_num_threads())"], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "1"
