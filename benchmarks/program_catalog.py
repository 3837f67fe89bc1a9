"""The whole programs of benchmarks/programs.py (issue 26, item 7), written once as a user
would, against a library namespace `L`:

    L.np            numpy, jax.numpy or ember.numpy
    L.special       its scipy.special
    L.fori_loop     lax.fori_loop (a Python loop for NumPy)
    L.set(x, i, v)  x.at[i].set(v) (a copy with the assignment for NumPy)
    L.segment_sum   ops.segment_sum (np.bincount for NumPy)

`catalog(small)` lists `Program`s: a name, the program `fn(L, *args)`, its arguments (small:
the sizes tests/e2e/test_program_catalog.py checks against NumPy; else the benchmark's) and
the relative tolerance of Ember's result against NumPy's. Loop counts are the same at both
sizes (a loop compiles once whatever its trip count). float64 programs need x64 on.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable

import numpy as np

F32, F64 = np.float32, np.float64


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    args: tuple
    rtol: float


def namespace(library: str) -> types.SimpleNamespace:
    """`L` for "ember", "jax" or "numpy" (the libraries are imported here, on demand)."""
    if library == "numpy":
        import scipy.special

        return types.SimpleNamespace(np=np, special=scipy.special, fori_loop=_numpy_fori_loop,
                                     set=_numpy_set, segment_sum=_numpy_segment_sum,
                                     jit=lambda f: f)
    if library == "ember":
        import ember as lib
        import ember.numpy as lnp
        import ember.ops as ops
        import ember.scipy.special as special
    else:
        import jax as lib
        import jax.numpy as lnp
        import jax.ops as ops
        import jax.scipy.special as special
    return types.SimpleNamespace(np=lnp, special=special, fori_loop=lib.lax.fori_loop,
                                 set=_at_set, segment_sum=ops.segment_sum, jit=lib.jit)


def _numpy_fori_loop(lo, hi, body, carry):
    for i in range(lo, hi):
        carry = body(i, carry)
    return carry


def _numpy_set(x, index, value):
    y = x.copy()
    y[index] = value
    return y


def _numpy_segment_sum(data, segment_ids, num_segments):
    return np.bincount(segment_ids, data, num_segments).astype(data.dtype)


def _at_set(x, index, value):
    return x.at[index].set(value)


def compare(name: str, got: object, want: object, rtol: float) -> None:
    """Ember's results against NumPy's: within `rtol` relative, or `rtol` of the largest
    entry absolute."""
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        w = np.asarray(w)
        scale = float(np.max(np.abs(w))) if w.size else 1.0
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"{name}: Ember differs from NumPy")


# -- stencils, pad, sweeps ----------------------------------------------------------------

ALPHA = 0.1


def _five_point(u):
    c = u[1:-1, 1:-1]
    return c + ALPHA * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * c)


def padded_stencil(L, u):
    """A 5-point stencil padded back to the grid's shape (one fused kernel)."""
    return L.np.pad(_five_point(u), 1)


def heat_2d(L, u):
    """The heat equation: 100 explicit steps of the padded stencil."""
    return L.fori_loop(0, 100, lambda i, u: L.np.pad(_five_point(u), 1), u)


def jacobi_1d(L, a, b):
    """1-D Jacobi, two `.at[1:-1].set` per step, 800 steps."""
    def step(i, c):
        a, b = c
        b = L.set(b, slice(1, -1), 0.5 * (a[:-2] + a[2:]))
        a = L.set(a, slice(1, -1), 0.5 * (b[:-2] + b[2:]))
        return a, b
    return L.fori_loop(0, 800, step, (a, b))


def jacobi_2d(L, u):
    """2-D Jacobi: the interior replaced by its 4-neighbour mean, 100 steps."""
    inner = (slice(1, -1), slice(1, -1))

    def step(i, u):
        return L.set(u, inner, 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]))
    return L.fori_loop(0, 100, step, u)


def fdtd_2d(L, ex, ey, hz):
    """A 2-D Yee (FDTD) update, 100 steps: three fields, each step's slices of the others."""
    def step(t, c):
        ex, ey, hz = c
        ey = L.set(ey, 0, L.np.ones_like(ey[0]) * t)  # (the source: the step number)
        ey = L.set(ey, slice(1, None), ey[1:] - 0.5 * (hz[1:] - hz[:-1]))
        ex = L.set(ex, (slice(None), slice(1, None)), ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = L.set(hz, (slice(None, -1), slice(None, -1)), hz[:-1, :-1] - 0.7 * (
            ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
        return ex, ey, hz
    return L.fori_loop(0, 100, step, (ex, ey, hz))


def _thomas(L, d, cp, inv):
    """Solve tridiag(-1, 4, -1) x = d along axis 0 (the Thomas algorithm, vectorized over
    the columns): `cp` and `inv` are the elimination's constants, computed once."""
    n = d.shape[0]

    def forward(i, dp):
        return L.set(dp, i, (d[i] + dp[i - 1]) * inv[i])

    dp = L.fori_loop(1, n, forward, L.set(d, 0, d[0] * inv[0]))

    def backward(j, x):
        i = n - 2 - j
        return L.set(x, i, dp[i] + cp[i] * x[i + 1])

    return L.fori_loop(0, n - 1, backward, dp)


def _thomas_constants(n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    # c'_0 = c/b, c'_i = c/(b - a c'_{i-1}) with a = c = -1, b = 4; cp holds -c', inv the
    # divisors' reciprocals 1/(b - a c'_{i-1}) (= cp for this matrix)
    cp, inv = np.zeros(n), np.zeros(n)
    inv[0] = cp[0] = 1 / 4
    for i in range(1, n):
        inv[i] = 1 / (4 - cp[i - 1])
        cp[i] = inv[i]
    return cp.astype(dtype), inv.astype(dtype)


def adi(L, u, cp, inv):
    """ADI-style sweeps: implicit tridiagonal solves along the rows, then the columns."""
    u = _thomas(L, u, cp, inv)
    return _thomas(L, u.T, cp, inv).T


def red_black_gauss_seidel(L, u, f, red, black):
    """Poisson by red-black Gauss-Seidel, 50 sweeps: each colour from the other's values."""
    def half(u, mask):
        nb = L.np.pad(u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2], 1)
        return L.np.where(mask, 0.25 * (nb + f), u)
    return L.fori_loop(0, 50, lambda i, u: half(half(u, red), black), u)


def wave_1d(L, u, v):
    """The 1-D wave equation by leapfrog, fixed ends, 500 steps."""
    def step(i, c):
        prev, u = c
        lap = L.np.roll(u, 1) - 2 * u + L.np.roll(u, -1)
        nxt = 2 * u - prev + 0.25 * lap
        nxt = L.set(L.set(nxt, 0, 0.0), -1, 0.0)
        return u, nxt
    return L.fori_loop(0, 500, step, (u - 0.01 * v, u))[1]


def conv2d_shifted(L, img, w):
    """A 5x5 convolution written as a sum of shifted slices times weights."""
    h, wd = img.shape[0] - 4, img.shape[1] - 4
    out = w[0, 0] * img[:h, :wd]
    for di in range(5):
        for dj in range(5):
            if di or dj:
                out = out + w[di, dj] * img[di:di + h, dj:dj + wd]
    return out


# -- elementwise and small physics ----------------------------------------------------------

def black_scholes(L, s, k, t, r, v):
    """European call and put prices sharing d1, d2 and the discount (multi-output)."""
    sqrt_t = L.np.sqrt(t)
    d1 = (L.np.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t

    def cdf(x):
        return 0.5 * (1.0 + L.special.erf(x * F32(1 / np.sqrt(2.0))))

    disc = k * L.np.exp(-r * t)
    return s * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - s * cdf(-d1)


def polar(L, rad, theta):
    """Polar to Cartesian coordinates: two outputs reading the same inputs (siblings)."""
    return rad * L.np.cos(theta), rad * L.np.sin(theta)


def lorenz_rk4(L, x, y, z):
    """Lorenz systems (one per element) by 200 RK4 steps: three carries from shared
    stages."""
    sigma, rho, beta, h = F32(10), F32(28), F32(8 / 3), F32(0.005)

    def f(x, y, z):
        return sigma * (y - x), x * (rho - z) - y, x * y - beta * z

    def step(_, c):
        x, y, z = c
        k1 = f(x, y, z)
        k2 = f(x + 0.5 * h * k1[0], y + 0.5 * h * k1[1], z + 0.5 * h * k1[2])
        k3 = f(x + 0.5 * h * k2[0], y + 0.5 * h * k2[1], z + 0.5 * h * k2[2])
        k4 = f(x + h * k3[0], y + h * k3[1], z + h * k3[2])
        return tuple(c[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) for i in range(3))

    return L.fori_loop(0, 200, step, (x, y, z))


def nbody(L, x, y, z, vx, vy, vz, m):
    """25 bodies under gravity, 200 leapfrog steps: pairwise `x.T - x`, `** -1.5`, a
    `where` on the diagonal and products with the masses."""
    n = x.shape[0]
    eye = L.np.eye(n, dtype=bool)
    dt = 1e-3

    def accel(x, y, z):
        dx, dy, dz = (c[None, :] - c[:, None] for c in (x, y, z))
        r2 = dx * dx + dy * dy + dz * dz + 1e-3
        inv = L.np.where(eye, 0.0, r2 ** -1.5)
        return (dx * inv) @ m, (dy * inv) @ m, (dz * inv) @ m

    def step(i, c):
        x, y, z, vx, vy, vz = c
        ax, ay, az = accel(x, y, z)
        vx, vy, vz = vx + dt * ax, vy + dt * ay, vz + dt * az
        return x + dt * vx, y + dt * vy, z + dt * vz, vx, vy, vz

    return L.fori_loop(0, 200, step, (x, y, z, vx, vy, vz))[:3]


def mandelbrot(L, c):
    """Escape counts of a c128 grid over 50 iterations (a frozen point stops growing)."""
    def step(i, s):
        z, count = s
        inside = L.np.abs(z) <= 2.0
        return L.np.where(inside, z * z + c, z), count + inside.astype(L.np.int32)
    return L.fori_loop(0, 50, step, (L.np.zeros_like(c), L.np.zeros(c.shape, L.np.int32)))[1]


# -- linear algebra and graphs written with loops -------------------------------------------

def levinson_durbin(L, r):
    """The Levinson-Durbin recurrence for a Toeplitz system of autocorrelations `r`: at step
    k, a masked sum against the reversed coefficients, and their reflection."""
    n = r.shape[0] - 1
    idx = L.np.arange(n + 1)

    def step(k, c):
        a, e = c
        back = L.np.clip(k - idx, 0, n)
        acc = L.np.sum(L.np.where(idx < k, a * L.np.take(r, back), 0.0))
        lam = -acc / e
        a = L.np.where(idx <= k, a + lam * L.np.take(a, back), a)
        return a, e * (1 - lam * lam)

    a0 = L.np.where(idx == 0, 1.0, 0.0).astype(r.dtype)
    return L.fori_loop(1, n + 1, step, (a0, r[0]))


def cholesky_loops(L, a):
    """Right-looking Cholesky with masks: per column k, the scaled column and the rank-1
    update of the trailing block."""
    n = a.shape[0]
    idx = L.np.arange(n)

    def step(k, a):
        d = L.np.sqrt(a[k, k])
        c = L.np.where(idx > k, a[:, k] / d, 0.0)
        trailing = (idx[:, None] > k) & (idx[None, :] > k)
        a = a - L.np.where(trailing, c[:, None] * c[None, :], 0.0)
        return L.np.where(idx[None, :] == k, L.np.where(idx == k, d, c)[:, None], a)

    return L.np.tril(L.fori_loop(0, n, step, a))


def lu_loops(L, a):
    """LU without pivoting (a diagonally dominant matrix): multipliers below the diagonal,
    U on and above it."""
    n = a.shape[0]
    idx = L.np.arange(n)

    def step(k, a):
        col = L.np.where(idx > k, a[:, k] / a[k, k], 0.0)
        row = L.np.where(idx > k, a[k, :], 0.0)
        a = a - col[:, None] * row[None, :]
        below = (idx[None, :] == k) & (idx[:, None] > k)
        return L.np.where(below, col[:, None], a)

    return L.fori_loop(0, n, step, a)


def floyd_warshall(L, d):
    """All-pairs shortest paths: n relaxations through each intermediate vertex."""
    return L.fori_loop(0, d.shape[0],
                       lambda k, d: L.np.minimum(d, d[:, k][:, None] + d[k, :][None, :]), d)


def csr_spmv(L, data, indices, rows, x):
    """A CSR sparse matrix times a vector: gather, multiply, segment sum over the rows."""
    return L.segment_sum(data * x[indices], rows, x.shape[0])


def kmeans_step(L, x, c):
    """One k-means step: distances through a product, the nearest centre, new centres as a
    one-hot product divided by the counts."""
    d = (L.np.sum(x * x, axis=1)[:, None] - 2 * x @ c.T + L.np.sum(c * c, axis=1)[None, :])
    label = L.np.argmin(d, axis=1)
    onehot = (label[:, None] == L.np.arange(c.shape[0])[None, :]).astype(x.dtype)
    counts = L.np.maximum(L.np.sum(onehot, axis=0), 1.0)
    return onehot.T @ x / counts[:, None]


def causal_attention(L, q, k, v):
    """Causal softmax attention through a logsumexp of the masked scores."""
    s = q @ k.T * F32(1 / np.sqrt(q.shape[1]))
    n = q.shape[0]
    s = L.np.where(L.np.tri(n, dtype=bool), s, -L.np.inf)
    p = L.np.exp(s - L.special.logsumexp(s, axis=1, keepdims=True))
    return p @ v


# -- arguments ------------------------------------------------------------------------------

def _spd(rng, n: int) -> np.ndarray:
    b = rng.standard_normal((n, n))
    return b @ b.T / n + np.eye(n)


def _csr(rng, n: int, per_row: int):
    rows = np.repeat(np.arange(n, dtype=np.int32), per_row)
    indices = rng.integers(0, n, n * per_row).astype(np.int32)
    return rng.standard_normal(n * per_row).astype(F32), indices, rows, \
        rng.standard_normal(n).astype(F32)


def _clusters(rng, n: int, k: int, dims: int):
    centres = rng.uniform(-20, 20, (k, dims))
    x = centres[rng.integers(0, k, n)] + rng.standard_normal((n, dims))
    return x.astype(F32), (centres + 0.1 * rng.standard_normal((k, dims))).astype(F32)


def _red_black(n: int):
    i, j = np.indices((n, n))
    interior = (i > 0) & (i < n - 1) & (j > 0) & (j < n - 1)
    return interior & ((i + j) % 2 == 0), interior & ((i + j) % 2 == 1)


def _options(n: int):
    rng = np.random.default_rng(0)
    return (rng.uniform(5, 150, n).astype(F32), rng.uniform(5, 150, n).astype(F32),
            rng.uniform(0.05, 3, n).astype(F32), F32(0.03), F32(0.25))


def catalog(small: bool = False) -> list[Program]:
    """Every program with its arguments (`small`: test sizes)."""
    rng = np.random.default_rng(1)

    def grid(n: int, dtype=F32) -> np.ndarray:
        return rng.standard_normal((n, n)).astype(dtype)

    s = 8 if small else 1  # (the divisor of the larger sizes)
    heat_n, adi_n, gs_n = (32, 24, 24) if small else (256, 256, 256)
    red, black = _red_black(gs_n)
    cp, inv = _thomas_constants(adi_n, F64)
    lor = [rng.uniform(-10, 10, 4096 // s).astype(F32) + 0.1 * k for k in range(3)]
    bodies = [rng.standard_normal(25) for _ in range(6)] + [rng.uniform(0.5, 1.5, 25)]
    lin_n = 24 if small else 128
    dominant = rng.standard_normal((lin_n, lin_n)) + lin_n * np.eye(lin_n)
    fw_n = 24 if small else 256
    dist = np.where(rng.random((fw_n, fw_n)) < 0.3, rng.uniform(1, 10, (fw_n, fw_n)), 1e4)
    np.fill_diagonal(dist, 0)
    att_n = 48 if small else 512
    lev_n = 64 if small else 1000
    mand = np.linspace(-2, 0.6, 300 // s)[None, :] + 1j * np.linspace(-1.2, 1.2, 300 // s)[:, None]
    fd = (60, 66) if small else (200, 220)
    return [
        Program("stencil-pad-256-f32", padded_stencil, (grid(256 // s),), 1e-5),
        Program("stencil-pad-1024-f32", padded_stencil, (grid(1024 // s),), 1e-5),
        Program("heat-2d-256x100-f32", heat_2d, (grid(heat_n),), 1e-4),
        Program("jacobi-1d-3200x800-f64", jacobi_1d,
                (rng.standard_normal(3200 // s), rng.standard_normal(3200 // s)), 1e-10),
        Program("jacobi-2d-512x100-f32", jacobi_2d, (grid(512 // s),), 1e-4),
        Program("fdtd-2d-yee-200x220-f64", fdtd_2d,
                tuple(rng.standard_normal(fd) for _ in range(3)), 1e-9),
        Program("adi-sweeps-256-f64", adi, (grid(adi_n, F64), cp, inv), 1e-10),
        Program("gauss-seidel-rb-256x50-f32", red_black_gauss_seidel,
                (grid(gs_n), grid(gs_n) * 0.01, red, black), 1e-4),
        Program("wave-1d-2000x500-f32", wave_1d,
                (np.sin(np.linspace(0, 6, 2000 // s)).astype(F32),
                 np.cos(np.linspace(0, 6, 2000 // s)).astype(F32)), 1e-4),
        Program("conv2d-shifted-5x5-512-f32", conv2d_shifted,
                (grid(512 // s), rng.standard_normal((5, 5)).astype(F32)), 1e-5),
        Program("black-scholes-500k-f32", black_scholes, _options(500_000 // s), 1e-3),
        Program("polar-to-cartesian-1e6-f32", polar,
                (rng.uniform(0, 2, 1_000_000 // s).astype(F32),
                 rng.uniform(-3, 3, 1_000_000 // s).astype(F32)), 1e-5),
        # (chaotic: a few steps of f32 rounding apart after 200 steps; checked loosely)
        Program("lorenz-rk4-200-steps-4096-f32", lorenz_rk4, tuple(lor), 1e-2),
        Program("nbody-25x200-f64", nbody, tuple(bodies), 1e-8),
        # (a count may be off by one where |z| rounds across 2 differently)
        Program("mandelbrot-300x50-c128", mandelbrot, (mand,), 0.02),
        Program("levinson-durbin-1000-f64", levinson_durbin,
                (0.5 ** np.arange(lev_n + 1.0),), 1e-9),
        Program("cholesky-loops-128-f64", cholesky_loops, (_spd(rng, lin_n),), 1e-9),
        Program("lu-loops-128-f64", lu_loops, (dominant,), 1e-9),
        Program("floyd-warshall-256-f32", floyd_warshall, (dist.astype(F32),), 1e-6),
        Program("csr-spmv-200k-x8-f32", csr_spmv, _csr(rng, 200_000 // s, 8), 1e-4),
        Program("kmeans-step-20k-x8-k16-f32", kmeans_step, _clusters(rng, 20_000 // s, 16, 8),
                1e-4),
        Program("causal-attention-512x64-f32", causal_attention,
                tuple(rng.standard_normal((att_n, 64)).astype(F32) for _ in range(3)), 1e-4),
    ]
