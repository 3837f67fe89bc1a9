"""Buffers of native loops: nested loops over one array, and views of a loop's state.

A large loop leaf trades places with the body's result instead of being copied (the two
buffers are reached through pointer variables while the loop runs; loops_native.py and
loops_emit.py). These programs once broke that:
- nested loops whose inner loop is (or ends) the outer body: the outer body's result IS
  the inner loop's state, so both loops reach one buffer through their own variable; the
  inner loop's exit dropped the outer's variable (KeyError in the compiler);
- a view of the state with other dimensions (`u.reshape(-1)`) read the buffer's fixed
  address instead of the variable (a wrong result from the second iteration on).
Each program runs on the CPU backend and is compared with the same algorithm in NumPy:
minimal reproducers, then what users wrote (Gauss-Seidel, ADI, modified Gram-Schmidt,
Nussinov). Every test runs twice: with the default swap threshold (leaves of 4 KiB and
more: the sizes below are chosen above it) and with every leaf swapped (threshold 0),
which puts scalars and small vectors through the same pointer variables.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends import cpu
from ember.backends.cpu.plan import loops_native
from ember.tree_util import tree_leaves


@pytest.fixture(autouse=True, params=["default", "all"])
def swap_threshold(request, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    if request.param == "all":
        monkeypatch.setattr(loops_native, "SWAP_MIN_BYTES", 0)
    return request.param


def _run(f, *args) -> list[np.ndarray]:
    """`f` compiled by the CPU backend (no cache: the swap threshold is not part of a
    cache key) and run on `args`; its output leaves."""
    module = ember.jit(f).lower(*args)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    assert "while" in exe.as_text()
    out = exe(*[np.asarray(a) for a in tree_leaves(args)])
    return [np.asarray(v) for v in (out if isinstance(out, tuple) else (out,))]


# -- minimal reproducers -------------------------------------------------------------------

def test_inner_loop_is_the_outer_body():
    # the outer loop swaps its state with the inner loop's result buffer, which the inner
    # loop itself swaps with its body's result: one buffer, two loops' pointer variables
    def f(x):
        return lax.fori_loop(0, 3, lambda i, x: lax.fori_loop(0, 2, lambda j, y: jnp.sin(y),
                                                              x), x)

    x = np.linspace(-1, 1, 1024).astype(np.float32)  # 4 KiB
    want = x.astype(np.float64)
    for _ in range(6):
        want = np.sin(want)
    (got,) = _run(f, x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_three_nested_loops_updating_one_array():
    # what Gauss-Seidel reduces to: the middle loop's body ends with the innermost loop;
    # trip counts are arguments, so zero and odd counts happen at run time (a swapped
    # buffer whose final value sits in the other buffer, or no iteration at all)
    def f(u, outer, inner):
        def row(i, u):
            return lax.fori_loop(0, inner, lambda j, u: u.at[i, j].set(u[i, j] * 2 + 1), u)
        return lax.fori_loop(0, outer, lambda k, u: lax.fori_loop(0, 4, row, u), u)

    u = np.arange(32 * 32, dtype=np.float32).reshape(32, 32) / 1024
    module = ember.jit(f).lower(u, 1, 1)._lowered.module
    exe = cpu.compile(module, use_cache=False)
    for outer, inner in [(1, 1), (2, 3), (3, 2), (0, 2), (2, 0)]:
        want = u.astype(np.float64)
        for _ in range(outer):
            for i in range(4):
                for j in range(inner):
                    want[i, j] = want[i, j] * 2 + 1
        got = exe(u, np.int32(outer), np.int32(inner))
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_a_view_of_the_state_reads_the_current_buffer(steps, x64):
    # the dot reads the state through a reshape (a view: the same buffer, other
    # dimensions), which must follow the state's pointer variable like the state itself
    n = 32
    w = np.arange(n * n, dtype=np.float64) / (n * n)

    def f(u, w):
        def body(i, c):
            u, acc = c
            return u * 1.5 + 1.0, acc + jnp.dot(u.reshape(-1), w)
        return lax.fori_loop(0, steps, body, (u, 0.0))

    u = np.ones((n, n))
    want_u, want_acc = u.copy(), 0.0
    for _ in range(steps):
        want_u, want_acc = want_u * 1.5 + 1.0, want_acc + want_u.reshape(-1) @ w
    got_u, got_acc = _run(f, u, w)
    np.testing.assert_allclose(got_u, want_u, rtol=1e-12)
    np.testing.assert_allclose(got_acc, want_acc, rtol=1e-12)


def test_a_loop_inside_a_branch_inside_a_loop(x64):
    # the conditional's result is the outer body's result; one branch runs a loop whose
    # result lands there, the other passes the state through
    def f(u):
        def body(i, u):
            return lax.cond(i % 2 == 0,
                            lambda u: lax.fori_loop(0, 2, lambda j, v: jnp.sin(v) + 0.5, u),
                            lambda u: u, u)
        return lax.fori_loop(0, 5, body, u)

    u = np.linspace(-2, 2, 600)
    want = u.copy()
    for i in range(5):
        if i % 2 == 0:
            for _ in range(2):
                want = np.sin(want) + 0.5
    (got,) = _run(f, u)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# -- programs as users write them ----------------------------------------------------------

def test_gauss_seidel(x64):
    n, iters = 24, 3

    def gs(u, f):
        def sweep(k, u):
            def row(i, u):
                def col(j, u):
                    return u.at[i, j].set(0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1]
                                                  + u[i, j + 1] - f[i, j]))
                return lax.fori_loop(1, n - 1, col, u)
            return lax.fori_loop(1, n - 1, row, u)
        return lax.fori_loop(0, iters, sweep, u)

    rng = np.random.default_rng(0)
    u, f = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    want = u.copy()
    for _ in range(iters):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                want[i, j] = 0.25 * (want[i - 1, j] + want[i + 1, j] + want[i, j - 1]
                                     + want[i, j + 1] - f[i, j])
    (got,) = _run(gs, u, f)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _thomas_np(a: float, b: float, c: float, d: np.ndarray) -> np.ndarray:
    n = len(d)
    cp, dp, x = np.zeros(n), np.zeros(n), np.zeros(n)
    cp[0], dp[0] = c / b, d[0] / b
    for j in range(1, n):
        m = b - a * cp[j - 1]
        cp[j], dp[j] = c / m, (d[j] - a * dp[j - 1]) / m
    x[n - 1] = dp[n - 1]
    for j in range(n - 2, -1, -1):
        x[j] = dp[j] - cp[j] * x[j + 1]
    return x


def test_adi_solver(x64):
    # alternating direction implicit: each step solves one tridiagonal system per row,
    # then one per column (Thomas algorithm), writing the grid element by element; the
    # step ends with the column sweep, whose rows end with the back substitution
    n, steps = 24, 2
    a, b, c = -1.0, 4.0, -1.0

    def thomas(u, i, by_column):  # line i of u (a row, or a column) replaced by its solution
        def get(u, j):
            return u[j, i] if by_column else u[i, j]

        def put(u, j, v):
            return u.at[j, i].set(v) if by_column else u.at[i, j].set(v)

        def forward(j, cd):
            cp, dp = cd
            m = b - a * cp[j - 1]
            return cp.at[j].set(c / m), dp.at[j].set((get(u, j) - a * dp[j - 1]) / m)
        cp = jnp.zeros(n).at[0].set(c / b)
        dp = jnp.zeros(n).at[0].set(get(u, 0) / b)
        cp, dp = lax.fori_loop(1, n, forward, (cp, dp))
        u = put(u, n - 1, dp[n - 1])

        def back(k, u):
            j = n - 2 - k
            return put(u, j, dp[j] - cp[j] * get(u, j + 1))
        return lax.fori_loop(0, n - 1, back, u)

    def adi(u):
        def step(t, u):
            u = lax.fori_loop(0, n, lambda i, u: thomas(u, i, False), u)
            return lax.fori_loop(0, n, lambda i, u: thomas(u, i, True), u)
        return lax.fori_loop(0, steps, step, u)

    u = np.random.default_rng(1).standard_normal((n, n))
    want = u.copy()
    for _ in range(steps):
        want = np.stack([_thomas_np(a, b, c, r) for r in want])
        want = np.stack([_thomas_np(a, b, c, r) for r in want.T]).T
    (got,) = _run(adi, u)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_modified_gram_schmidt(x64):
    m, n = 24, 24

    def mgs(A):
        def column(j, qr):
            Q, R = qr

            def project(k, vr):
                v, R = vr
                r = jnp.dot(Q[:, k], v)
                return v - r * Q[:, k], R.at[k, j].set(r)
            v, R = lax.fori_loop(0, j, project, (A[:, j], R))
            norm = jnp.sqrt(jnp.dot(v, v))
            return Q.at[:, j].set(v / norm), R.at[j, j].set(norm)
        return lax.fori_loop(0, n, column, (jnp.zeros((m, n)), jnp.zeros((n, n))))

    A = np.random.default_rng(2).standard_normal((m, n)) + 3 * np.eye(m, n)
    Q, R = np.zeros((m, n)), np.zeros((n, n))
    for j in range(n):
        v = A[:, j].copy()
        for k in range(j):
            R[k, j] = Q[:, k] @ v
            v = v - R[k, j] * Q[:, k]
        R[j, j] = np.sqrt(v @ v)
        Q[:, j] = v / R[j, j]
    got_q, got_r = _run(mgs, A)
    np.testing.assert_allclose(got_q, Q, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_r, R, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_q @ got_r, A, rtol=1e-10, atol=1e-10)


def test_nussinov(x64):
    # maximum number of nested base pairs (A-U, C-G), filled one diagonal at a time
    n = 24
    seq = np.random.default_rng(3).integers(0, 4, n).astype(np.int32)  # A=0 C=1 G=2 U=3

    def nussinov(seq):
        def diagonal(d, dp):
            def cell(i, dp):
                j = i + d
                pair = jnp.where(seq[i] + seq[j] == 3, 1.0, 0.0)
                best = jnp.maximum(jnp.maximum(dp[i + 1, j], dp[i, j - 1]),
                                   dp[i + 1, j - 1] + pair)
                best = lax.fori_loop(i + 1, j, lambda k, best: jnp.maximum(
                    best, dp[i, k] + dp[k + 1, j]), best)
                return dp.at[i, j].set(best)
            return lax.fori_loop(0, n - d, cell, dp)
        return lax.fori_loop(1, n, diagonal, jnp.zeros((n, n)))

    want = np.zeros((n, n))
    for d in range(1, n):
        for i in range(n - d):
            j = i + d
            pair = 1.0 if seq[i] + seq[j] == 3 else 0.0
            best = max(want[i + 1, j], want[i, j - 1], want[i + 1, j - 1] + pair)
            for k in range(i + 1, j):
                best = max(best, want[i, k] + want[k + 1, j])
            want[i, j] = best
    (got,) = _run(nussinov, seq)
    np.testing.assert_array_equal(got, want)
