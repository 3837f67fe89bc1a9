"""`lax.optimization_barrier` (prims/barrier.py) and checkpoint's `prevent_cse`.

The barrier is the identity on values (eager, jit on the CPU and the interpreter, grad,
vmap) and prints as JAX prints it; CSE does not merge across it; the CPU pipeline removes it
from loop bodies after simplification (passes/barrier_removal.py) and schedules the entry's
as views (no kernel). With prevent_cse (the default) the
backward pass of a checkpointed function recomputes its products instead of CSE merging
the recomputation back into the forward pass's values, so fewer bytes are live; with
prevent_cse=False the recomputation is merged.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax


def _dots(compiled) -> int:
    return sum(1 for line in compiled.as_text().splitlines() if " dot(" in line)


def test_identity_everywhere():
    x = np.linspace(-1.0, 2.0, 7, dtype=np.float32)

    def f(x):
        a, (b,) = lax.optimization_barrier((jnp.sin(x), (x * 2,)))
        return a * b

    want = np.sin(x) * (x * 2)
    for backend in ("cpu", "interpreter"):
        np.testing.assert_allclose(ember.jit(f, backend=backend)(x), want, rtol=1e-6)
    np.testing.assert_allclose(f(x), want, rtol=1e-6)
    g = ember.grad(lambda x: jnp.sum(f(x)))
    want_g = np.cos(x) * 2 * x + np.sin(x) * 2
    np.testing.assert_allclose(g(x), want_g, rtol=1e-5)
    np.testing.assert_allclose(ember.jit(g)(x), want_g, rtol=1e-5)
    np.testing.assert_allclose(ember.vmap(f)(np.stack([x, x + 1])),
                               np.stack([want, np.sin(x + 1) * (x + 1) * 2]), rtol=1e-6)
    _, t = ember.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, want_g, rtol=1e-5)
    assert lax.optimization_barrier(()) == ()
    text = str(ember.make_jaxpr(lambda x: lax.optimization_barrier((x, x * 2)))(x))
    assert "c:f32[7] d:f32[7] = optimization_barrier a b" in text


def test_cse_does_not_merge_across_it():
    x = np.linspace(0.0, 1.0, 64, dtype=np.float32).reshape(8, 8)

    def f(x):
        (y,) = lax.optimization_barrier((x,))
        return jnp.tanh(x @ x) + jnp.tanh(y @ y)

    low = ember.jit(f).lower(x)
    assert "opt-barrier" in low.as_text()
    compiled = low.compile()
    assert _dots(compiled) == 2  # without the barrier CSE keeps one
    assert _dots(ember.jit(lambda x: jnp.tanh(x @ x) + jnp.tanh(x @ x)).lower(x).compile()) == 1
    np.testing.assert_allclose(ember.jit(f)(x), 2 * np.tanh(x @ x), rtol=1e-5)


_W = (np.random.default_rng(0).standard_normal((256, 256)) * 0.06).astype(np.float32)


def _layers(x, w):
    for _ in range(6):
        x = jnp.tanh(x @ w)
    return x


@pytest.mark.parametrize("prevent_cse", [True, False])
def test_prevent_cse_keeps_the_recomputation(prevent_cse):
    x = np.ones((256, 256), np.float32) * 0.1
    block = ember.checkpoint(_layers, prevent_cse=prevent_cse)

    def loss(wrap):
        g = wrap(_layers)
        return lambda x, w: jnp.sum(g(g(x, w), w))

    plain = ember.jit(ember.grad(loss(lambda f: f))).lower(x, _W).compile()
    ckpt = ember.jit(ember.grad(loss(lambda f: block))).lower(x, _W).compile()
    if prevent_cse:
        # the recomputed products are there, and fewer bytes are live at once
        assert _dots(ckpt) > _dots(plain)
        assert (ckpt.memory_analysis().temp_size_in_bytes
                < plain.memory_analysis().temp_size_in_bytes - 2 * x.nbytes)
    else:
        assert _dots(ckpt) == _dots(plain)
    want = ember.grad(loss(lambda f: f))(x, _W)
    np.testing.assert_allclose(ember.jit(ember.grad(loss(lambda f: block)))(x, _W), want,
                               rtol=2e-4, atol=1e-6)


def test_in_a_loop_body_it_is_removed_after_cse():
    x = np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4)

    def body(i, v):
        (w,) = lax.optimization_barrier((v,))
        return jnp.tanh(v @ v) * 0.5 + jnp.tanh(w @ w) * 0.5

    f = ember.jit(lambda x: lax.fori_loop(0, 3, body, x))
    compiled = f.lower(x).compile()
    want = x
    for _ in range(3):
        want = np.tanh(want @ want)
    np.testing.assert_allclose(f(x), want, rtol=1e-5)
    assert "opt-barrier" in f.lower(x).as_text()
    text = compiled.as_text()
    assert "opt-barrier" not in text and text.count(" dot(") == 2
