"""Programs that iterate, written exactly as for JAX (`import ember as jax; import
ember.numpy as jnp; from ember import lax`), against NumPy's answers, eager and jitted:
a Jacobi stencil and a time-stepping loop with fori_loop, Mandelbrot with a fixed
iteration count, an RNN cell with scan, power iteration with while_loop and a `(v, 0)`
carry, and k-means with fori_loop."""

from __future__ import annotations

import numpy as np

import ember as jax
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(7)


def _check(fn, args, ref, rtol=1e-5, atol=1e-6):
    """jit and eager against the reference, jit twice without retracing."""
    jitted = jax.jit(fn)
    outs = jax.tree_util.tree_leaves(jitted(*args))
    eager = jax.tree_util.tree_leaves(fn(*args))
    refs = jax.tree_util.tree_leaves(ref)
    assert len(outs) == len(refs) == len(eager)
    for o, e, r in zip(outs, eager, refs):
        np.testing.assert_allclose(np.asarray(o), r, rtol=rtol, atol=atol)
        np.testing.assert_allclose(np.asarray(e), np.asarray(o), rtol=rtol, atol=atol)
    jitted(*args)
    assert jitted.trace_count == 1
    return outs


def test_jacobi_stencil_with_fori_loop():
    def jacobi(grid, steps):
        def step(_, g):
            interior = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
            return g.at[1:-1, 1:-1].set(interior)
        return lax.fori_loop(0, steps, step, grid)

    grid = np.zeros((17, 13), np.float32)
    grid[0, :] = 1.0
    grid[:, -1] = RNG.uniform(0, 2, 17).astype(np.float32)
    want = grid.astype(np.float64)
    for _ in range(60):   # Jacobi: every interior point from the previous grid
        new = want.copy()
        new[1:-1, 1:-1] = 0.25 * (want[:-2, 1:-1] + want[2:, 1:-1] + want[1:-1, :-2]
                                  + want[1:-1, 2:])
        want = new
    _check(lambda g: jacobi(g, 60), (grid,), want)


def test_time_stepping_with_fori_loop():
    def run(x):
        return lax.fori_loop(0, 1000, lambda i, x: x * 0.99 + 0.01 * jnp.sin(x), x)

    x = RNG.uniform(-3, 3, 257).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(1000):
        want = want * 0.99 + 0.01 * np.sin(want)
    _check(run, (x,), want, rtol=2e-5, atol=2e-6)


def test_mandelbrot_fixed_iteration_count():
    def mandelbrot(cr, ci, iters):
        def step(_, state):
            zr, zi, count = state
            inside = zr * zr + zi * zi <= 4.0
            nzr = jnp.where(inside, zr * zr - zi * zi + cr, zr)
            nzi = jnp.where(inside, 2.0 * zr * zi + ci, zi)
            return nzr, nzi, count + inside.astype(jnp.int32)
        zero = jnp.zeros_like(cr)
        return lax.fori_loop(0, iters, step, (zero, zero, jnp.zeros(cr.shape, jnp.int32)))[2]

    re, im = np.meshgrid(np.linspace(-2.0, 0.6, 41), np.linspace(-1.2, 1.2, 31))
    cr, ci = re.astype(np.float32), im.astype(np.float32)
    zr, zi = np.zeros_like(cr), np.zeros_like(ci)
    count = np.zeros(cr.shape, np.int32)
    for _ in range(30):   # the same float32 arithmetic, so the counts agree exactly
        inside = zr * zr + zi * zi <= np.float32(4.0)
        zr, zi = (np.where(inside, zr * zr - zi * zi + cr, zr),
                  np.where(inside, np.float32(2.0) * zr * zi + ci, zi))
        count += inside
    out = _check(lambda a, b: mandelbrot(a, b, 30), (cr, ci), count, rtol=0, atol=0)
    assert out[0].dtype == np.int32 and 0 < int(np.asarray(out[0]).min()) < 30


def test_rnn_cell_with_scan():
    hidden, features, steps = 8, 5, 12
    wx = (RNG.standard_normal((features, hidden)) * 0.4).astype(np.float32)
    wh = (RNG.standard_normal((hidden, hidden)) * 0.4).astype(np.float32)
    b = (RNG.standard_normal(hidden) * 0.1).astype(np.float32)
    xs = RNG.standard_normal((steps, features)).astype(np.float32)
    h0 = np.zeros(hidden, np.float32)

    def rnn(params, h0, xs):
        wx, wh, b = params

        def cell(h, x):
            h = jnp.tanh(x @ wx + h @ wh + b)
            return h, h
        return lax.scan(cell, h0, xs)

    h, hs = h0.astype(np.float64), []
    for x in xs.astype(np.float64):
        h = np.tanh(x @ wx + h @ wh + b)
        hs.append(h)
    _check(rnn, ((wx, wh, b), h0, xs), (h, np.array(hs)), rtol=2e-5, atol=2e-5)


def test_power_iteration_with_while_loop_and_a_weak_counter():
    n = 6
    q, _ = np.linalg.qr(RNG.standard_normal((n, n)))
    a = (q @ np.diag([9.0, 4.0, 3.0, 2.0, 1.0, 0.5]) @ q.T).astype(np.float32)

    def power_iteration(a, v0):
        def cond(state):
            v, k = state
            return k < 200

        def body(state):
            v, k = state
            w = a @ v
            return w / jnp.linalg.norm(w), k + 1

        v, k = lax.while_loop(cond, body, (v0, 0))
        return v @ (a @ v), k

    v0 = np.ones(n, np.float32) / np.sqrt(n)
    lam, k = _check(power_iteration, (a, v0), (9.0, 200), rtol=1e-5, atol=1e-4)
    assert np.asarray(k).dtype == np.int32


def test_power_iteration_until_converged():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)

    def solve(a):
        def body(state):
            v, prev, k = state
            w = a @ v
            w = w / jnp.linalg.norm(w)
            return w, v, k + 1
        v0 = jnp.array([1.0, 0.0])
        v, _, k = lax.while_loop(
            lambda s: (jnp.max(jnp.abs(s[0] - s[1])) > 1e-6) & (s[2] < 500),
            body, (v0, jnp.zeros(2), 0))
        return v, k

    evals, evecs = np.linalg.eigh(a.astype(np.float64))
    top = evecs[:, -1] * np.sign(evecs[0, -1])
    (v, k) = jax.jit(solve)(a)
    np.testing.assert_allclose(np.asarray(v), top, atol=1e-5)
    assert 5 < int(k) < 500


def test_kmeans_with_fori_loop():
    centers = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
    pts = np.concatenate([c + RNG.standard_normal((40, 2)) * 0.6 for c in centers])
    pts = pts.astype(np.float32)
    init = pts[[0, 45, 90]].copy()

    def kmeans(x, c0, iters):
        k = c0.shape[0]

        def step(_, c):
            d = jnp.sum((x[:, None, :] - c[None, :, :]) ** 2, axis=-1)
            onehot = (jnp.argmin(d, axis=1)[:, None] == jnp.arange(k)[None, :])
            onehot = onehot.astype(x.dtype)
            counts = onehot.sum(0)
            sums = onehot.T @ x
            return jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1)[:, None], c)
        return lax.fori_loop(0, iters, step, c0)

    c = init.astype(np.float64)
    for _ in range(10):
        d = ((pts[:, None, :] - c[None, :, :]) ** 2).sum(-1)
        lab = d.argmin(1)
        c = np.array([pts[lab == j].mean(0) if (lab == j).any() else c[j] for j in range(3)])
    _check(lambda x, c0: kmeans(x, c0, 10), (pts, init), c, rtol=1e-5, atol=1e-5)


def test_cond_inside_scan_and_scan_inside_cond():
    def f(xs, flag):
        def step(c, x):
            c = lax.cond(x > 0, lambda v: v + x, lambda v: v * 0.5, c)
            return c, c
        return lax.cond(flag, lambda xs: lax.scan(step, 1.0, xs),
                        lambda xs: (jnp.float32(0.0), jnp.zeros_like(xs)), xs)

    xs = np.array([1.0, -2.0, 3.0, -1.0, 0.5], np.float32)
    c, ys = 1.0, []
    for x in xs:
        c = c + x if x > 0 else c * 0.5
        ys.append(c)
    _check(f, (xs, np.bool_(True)), (c, np.array(ys)))
    _check(f, (xs, np.bool_(False)), (0.0, np.zeros(5)))
