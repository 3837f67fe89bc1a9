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
    m, args = list(_modules())[0]
    exe = cpu.compile(m)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(args[0].shape).astype(np.float32) for _ in range(4)]
    want = [exe(x) for x in inputs]
    errors: list[str] = []

    def worker(t: int) -> None:
        for _ in range(10):
            got = exe(inputs[t])
            if not np.array_equal(got, want[t]):
                errors.append(f"thread {t}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_env_sets_the_thread_count():
    env = dict(os.environ, EMBER_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", "from ember.backends import cpu; "
                          "print(cpu.get_num_threads())"], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "1"
