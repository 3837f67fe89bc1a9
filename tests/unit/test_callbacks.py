"""Host callbacks: `ember.pure_callback` eager and under jit, on both backends.

Checks results against NumPy over shapes and dtypes (odd sizes included), pytrees in and
out, callbacks inside fori_loop and scan bodies, the declared-shape and dtype errors naming
the callback, calls from several Python threads at once, and the jaxpr text against JAX
0.10.2's own (embedded below).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.dispatch import compile_jaxpr


@pytest.fixture(params=["interpreter", "cpu"])
def backend(request, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", request.param)
    return request.param


def _sds(x):
    return ember.ShapeDtypeStruct(x.shape, x.dtype)


@pytest.mark.parametrize("shape", [(), (7,), (33,), (2, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pure_callback_eager_and_jit_match_numpy(backend, shape, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 10).astype(dtype)

    def host(a):
        assert isinstance(a, np.ndarray)
        return (a * 3 - 1).astype(a.dtype)

    def f(x):
        return ember.pure_callback(host, _sds(x), x) + 1

    want = x * 3 - 1 + 1
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    got = ember.jit(f)(x)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == dtype


def test_pure_callback_runs_in_native_code_on_cpu(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    x = np.arange(5, dtype=np.float32)

    def f(x):
        return jnp.sin(ember.pure_callback(np.cos, _sds(x), x)) * 2

    closed = ember.make_jaxpr(f)(x)
    compiled = compile_jaxpr(closed)
    assert compiled.backend == "cpu"
    assert any(k.startswith("custom-call") for k in compiled.executable.kernel_names)
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x)), np.sin(np.cos(x)) * 2,
                               rtol=1e-6)


def test_pure_callback_pytrees_and_kwargs(backend):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.arange(3, dtype=np.int32)

    def host(pair, *, scale):
        a, b = pair
        return {"sum": a.sum(axis=0) * scale, "idx": b[::-1].copy()}

    def f(x, y):
        spec = {"sum": ember.ShapeDtypeStruct((3,), np.float32),
                "idx": ember.ShapeDtypeStruct((3,), np.int32)}
        return ember.pure_callback(host, spec, (x, y), scale=np.float32(2))

    for fn in (f, ember.jit(f)):
        out = fn(x, y)
        np.testing.assert_array_equal(np.asarray(out["sum"]), x.sum(axis=0) * 2)
        np.testing.assert_array_equal(np.asarray(out["idx"]), y[::-1])


def test_pure_callback_inside_fori_loop_and_scan(backend):
    seen = []

    def host(c, i):
        seen.append(int(i))
        return (c * 0.5 + i).astype(np.float32)

    def loop(x):
        def body(i, c):
            return ember.pure_callback(host, _sds(c), c, i)
        return lax.fori_loop(0, 4, body, x)

    def scanned(x):
        def step(c, i):
            c = ember.pure_callback(host, _sds(c), c, i)
            return c, c.sum()
        return lax.scan(step, x, jnp.arange(3))

    x = np.linspace(-1, 1, 7).astype(np.float32)
    want = x.copy()
    for i in range(4):
        want = want * 0.5 + i
    np.testing.assert_allclose(np.asarray(ember.jit(loop)(x)), want, rtol=1e-6)
    assert seen[-4:] == [0, 1, 2, 3]
    carry, sums = ember.jit(scanned)(x)
    c, ys = x.copy(), []
    for i in range(3):
        c = c * 0.5 + i
        ys.append(c.sum())
    np.testing.assert_allclose(np.asarray(carry), c, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sums), np.array(ys, np.float32), rtol=1e-5)


def test_wrong_declared_shape_names_the_callback(backend):
    def too_long(a):
        return np.ones(4, np.float32)

    def f(x):
        return ember.pure_callback(too_long, ember.ShapeDtypeStruct((3,), np.float32), x)

    x = np.ones(3, np.float32)
    match = r"too_long: Incorrect output shape for return value #0: Expected: \(3,\), Actual"
    with pytest.raises(RuntimeError, match=match):
        f(x)
    with pytest.raises(RuntimeError, match=match):
        ember.jit(f)(x)
    # the executable stays usable after a failed call
    good = ember.jit(lambda x: ember.pure_callback(np.negative, _sds(x), x))
    np.testing.assert_array_equal(np.asarray(good(x)), -x)


def test_wrong_dtype_kind_is_an_error_and_float64_is_cast(backend):
    x = np.ones(3, np.float32)

    def ints(a):
        return np.ones(3, np.int32)

    f = ember.jit(lambda x: ember.pure_callback(ints, ember.ShapeDtypeStruct((3,), np.float32),
                                                x))
    with pytest.raises(RuntimeError, match="ints: Incorrect output dtype"):
        f(x)
    g = ember.jit(lambda x: ember.pure_callback(lambda a: a.astype(np.float64) / 3,
                                                _sds(x), x))
    out = g(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), x / 3, rtol=1e-6)


def test_callbacks_from_several_threads(backend):
    # Each thread calls the compiled function: the native code releases the GIL and the
    # trampoline takes it again on that thread.
    f = ember.jit(lambda x: ember.pure_callback(lambda a: a * 2, _sds(x), x) + 1)
    results, errors = {}, []

    def work(k):
        try:
            x = np.full(33, k, np.float32)
            for _ in range(20):
                results[k] = np.asarray(f(x))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        np.testing.assert_array_equal(results[k], np.full(33, 2 * k + 1, np.float32))


JAX_PURE_CALLBACK = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = pure_callback[
      callback=_FlatCallback(callback_func=<function test_jaxpr_matches_jax.<locals>.f.<locals>.<lambda> at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
      result_avals=(ShapedArray(float32[3]),)
      sharding=None
      vmap_method=None
    ] a
    c:f32[3] = mul b 2.0:f32[]
  in (c,) }"""  # noqa: E501 - JAX 0.10.2's text (the qualname is this test's)


def test_jaxpr_matches_jax():
    def f(x):
        y = ember.pure_callback(lambda a: np.sin(a), _sds(x), x)
        return y * 2

    assert str(ember.make_jaxpr(f)(np.ones(3, np.float32))) == JAX_PURE_CALLBACK


def test_pure_callback_lowers_to_custom_call():
    x = np.ones(3, np.float32)
    text = ember.jit(lambda x: ember.pure_callback(np.sin, _sds(x), x)).lower(x).as_text()
    assert 'custom_call_target="ember.python_callback"' in text
    assert "custom_call_has_side_effect" not in text


def test_callback_beside_parallel_kernels(monkeypatch):
    # Big enough that the elementwise kernels around it may run on GOMP worker threads;
    # the callback kernel itself is never split, so it runs once, on the calling thread.
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    calls = []

    def host(a):
        calls.append(threading.get_ident())
        return np.sqrt(np.abs(a))

    def f(x):
        y = jnp.sin(x) * 3 + 1
        return jnp.cos(ember.pure_callback(host, _sds(y), y)) + x

    x = np.linspace(-5, 5, 1 << 20).astype(np.float32)
    out = np.asarray(ember.jit(f)(x))
    y = np.sin(x) * 3 + 1
    np.testing.assert_allclose(out, np.cos(np.sqrt(np.abs(y))) + x, rtol=1e-5, atol=1e-5)
    assert calls == [threading.get_ident()]


def test_errors_raised_by_a_callback_propagate(backend):
    def boom(a):
        raise KeyError("from the callback")

    f = ember.jit(lambda x: ember.pure_callback(boom, _sds(x), x) * 2)
    with pytest.raises(KeyError, match="from the callback"):
        f(np.ones(3, np.float32))
    with pytest.raises(KeyError, match="from the callback"):
        f(np.ones(3, np.float32))  # again: the error is not left pending


_FRESH_PROCESS = """
import numpy as np, ember
f = ember.jit(lambda x: ember.pure_callback(lambda a: a + 40, ember.ShapeDtypeStruct((3,),
              np.int32), x) * 2)
print(np.asarray(f(np.arange(3, dtype=np.int32))).tolist())
from ember.dispatch import _compiled
print([c.executable.from_disk for d in _compiled.values() for c in d.values()])
"""


def test_disk_cached_executable_with_callback_in_a_fresh_process(tmp_path):
    # The object code names the trampoline by symbol: loading it from the disk cache in a
    # new process binds it to that process's trampoline and that process's callback.
    import os
    import subprocess
    import sys

    env = dict(os.environ, EMBER_BACKEND="cpu", EMBER_CACHE_DIR=str(tmp_path))
    outs = [subprocess.run([sys.executable, "-c", _FRESH_PROCESS], env=env, check=True,
                           capture_output=True, text=True).stdout.split("\n")
            for _ in range(2)]
    assert outs[0][0] == outs[1][0] == "[80, 82, 84]"
    assert outs[1][1] == "[True]"
