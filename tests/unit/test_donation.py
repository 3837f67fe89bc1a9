"""Buffer donation (`jit(donate_argnums=...)`): outputs written into donated Arrays' memory,
never into memory anyone else can still see (ember/donation.py, cpu scratch_plan aliases)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.donation import exclusive_value

N = 1 << 16  # large enough for the caching allocator's pool (allocator.MIN_BYTES)


@pytest.fixture(autouse=True)
def cpu_backend(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")


def _addr(a) -> int:
    return np.asarray(a).__array_interface__["data"][0]


def _fresh(n=N, seed=0):
    """An Array nothing else references (made by a jitted function)."""
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    return ember.jit(lambda a: a + 0)(x), x


@pytest.mark.parametrize("n", [5, N])
def test_output_takes_the_donated_memory(n):
    f = ember.jit(lambda x, y: jnp.exp(x) * 2 + y, donate_argnums=0)
    y = np.ones(n, np.float32)
    x, xv = _fresh(n)
    where = _addr(x)
    out = f(x, y)
    assert x.is_deleted()
    assert _addr(out) == where
    np.testing.assert_allclose(np.asarray(out), np.exp(xv) * 2 + 1, rtol=1e-6)
    # repeated calls (the dispatch fast path) keep reusing the same memory
    for _ in range(3):
        prev, where = out, _addr(out)
        out = f(prev, y)
        assert prev.is_deleted() and _addr(out) == where
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_memory_analysis_reports_the_alias():
    x = np.ones(1000, np.float32)
    donating = ember.jit(lambda a: a * 3 + 1, donate_argnums=0).lower(x).compile()
    plain = ember.jit(lambda a: a * 3 + 1).lower(x).compile()
    assert donating.memory_analysis().alias_size_in_bytes == 4000
    assert plain.memory_analysis().alias_size_in_bytes == 0
    assert "into donated parameter 0" in donating.memory_analysis().buffer_assignment
    assert donating.memory_analysis().peak_memory_in_bytes == 4000


def test_numpy_arguments_and_shared_arrays_are_never_written():
    f = ember.jit(lambda x: x * 2 - 1, donate_argnums=0)
    xn = np.linspace(0, 1, N, dtype=np.float32)
    keep = xn.copy()
    for _ in range(2):  # first call and the fast path
        np.testing.assert_array_equal(np.asarray(f(xn)), keep * 2 - 1)
        np.testing.assert_array_equal(xn, keep)
    # an Array the user also holds as a NumPy array (or a view of one)
    for make_view in (lambda a: np.asarray(a), lambda a: np.asarray(a)[3:]):
        for _ in range(2):
            a, av = _fresh()
            view = make_view(a)
            seen = view.copy()
            np.testing.assert_array_equal(np.asarray(f(a)), av * 2 - 1)
            np.testing.assert_array_equal(view, seen)
            assert a.is_deleted()


def test_exclusive_value_rules():
    a, _ = _fresh()
    assert exclusive_value(a) is not None
    held = np.asarray(a)
    assert exclusive_value(a) is None
    del held
    assert exclusive_value(a) is not None
    small, _ = _fresh(7)
    assert exclusive_value(small) is not None
    assert exclusive_value(np.ones(3)) is None  # not an ember Array
    b = ember.numpy.asarray(np.arange(6.0).reshape(2, 3))
    t = b.T  # eager transpose: a strided view of b's memory?
    assert exclusive_value(t) is None or not np.shares_memory(np.asarray(t), np.asarray(b))


def test_donated_parameter_read_after_the_writer_is_not_aliased():
    # both outputs read x: writing the first into x would corrupt the second
    f = ember.jit(lambda x: (x * 2, x[::-1] * 3 + x.sum()), donate_argnums=0)
    x, xv = _fresh(1001)
    a, b = f(x)
    np.testing.assert_allclose(np.asarray(a), xv * 2)
    np.testing.assert_allclose(np.asarray(b), xv[::-1] * 3 + xv.sum(), rtol=1e-4, atol=1e-4)


def test_donation_with_loops_and_pytrees():
    def step(state, k):
        def body(i, s):
            return {"u": s["u"] * 0.5 + k, "v": s["v"] + s["u"]}
        return lax.fori_loop(0, 4, body, state)

    f = ember.jit(step, donate_argnums=0)
    u, uv = _fresh(N, 1)
    v, vv = _fresh(N, 2)
    out = f({"u": u, "v": v}, 0.25)
    for _ in range(4):
        vv = vv + uv
        uv = uv * 0.5 + 0.25
    np.testing.assert_allclose(np.asarray(out["u"]), uv, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["v"]), vv, rtol=1e-6)
    assert u.is_deleted() and v.is_deleted()


def test_compiled_call_donates_too():
    f = ember.jit(lambda x: jnp.abs(x) + 1, donate_argnums=0)
    x, xv = _fresh()
    compiled = f.lower(x).compile()
    where = _addr(x)
    out = compiled(x)
    assert _addr(out) == where and x.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.abs(xv) + 1)


def test_unusable_donation_warns_as_jax_does():
    f = ember.jit(lambda x: x.sum(), donate_argnums=0)
    with pytest.warns(UserWarning, match=r"donated buffers were not usable: f32\[8\]"):
        f(ember.numpy.ones(8, np.float32))
