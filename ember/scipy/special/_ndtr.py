"""The standard normal distribution function and its inverse: ndtr, ndtri, log_ndtr (as
jax.scipy.special).

Input: a float32 or float64 array (other dtypes raise JAX's TypeError). Output: an array
of the same shape and dtype. Invariants:
- ndtr(x) = erfc(-x / sqrt 2) / 2, through erf near 0 and erfc in the tails, so neither
  tail loses digits to cancellation.
- ndtri is Cephes' piecewise rational approximation (S. Moshier's ndtri.c, netlib): a
  rational function of (p - 1/2)^2 in the middle, p in (e^-2, 1 - e^-2), and in the tails
  one of two rational functions of 1/z, z = sqrt(-2 log q), q = min(p, 1 - p); ndtri(0) =
  -inf, ndtri(1) = inf, nan outside [0, 1].
- log_ndtr(x) is -ndtr(-x) above an upper cut (8 for float64, 5 for float32), log(ndtr)
  in the middle, and below a lower cut (-20 / -10) the asymptotic series
  log(e^(-x^2/2) / (-x sqrt(2 pi))) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n)), with
  `series_order` terms; its custom JVP is d/dx = e^(log pdf(x) - log_ndtr(x)), finite
  far in the lower tail where pdf and ndtr both underflow.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.custom_derivatives import custom_jvp

__all__ = ["ndtr", "ndtri", "log_ndtr"]


def _float_input(x: Any) -> Any:
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return x


def _ndtr(x: Any) -> Any:
    dt = x.dtype.type
    half_sqrt2 = dt(np.sqrt(0.5))
    w = x * half_sqrt2
    z = lax.abs(w)
    # |w| < 1/sqrt 2: 1 + erf(w) has no cancellation; beyond, erfc of |w| keeps the digits
    # of the small tail (and 2 - erfc(|w|) those of the large side).
    y = lax.select(z < half_sqrt2, dt(1.) + lax.erf(w),
                   lax.select(w > dt(0.), dt(2.) - lax.erfc(z), lax.erfc(z)))
    return dt(0.5) * y


def ndtr(x: Any) -> Any:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2 (as jax.scipy.special.ndtr)."""
    return _ndtr(_float_input(x))


# Cephes ndtri.c's coefficients, highest power first.
# Middle: x / sqrt(2 pi) = w + w^3 P0(w^2) / Q0(w^2), w = p - 1/2.
_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0)
_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0)
# Tails, 2 <= z < 8: x = z - log(z) / z - P1(1/z) / (z Q1(1/z)).
_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4)
# Far tails, z >= 8 (q < e^-32).
_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _horner(coeffs: tuple[float, ...], t: Any) -> Any:
    dt = t.dtype.type
    acc = jnp.full_like(t, dt(coeffs[0]))
    for c in coeffs[1:]:
        acc = acc * t + dt(c)
    return acc


def ndtri(p: Any) -> Any:
    """The inverse of ndtr: x with ndtr(x) = p (as jax.scipy.special.ndtri)."""
    if isinstance(p, (list, tuple)):  # (JAX reads the dtype first, which lists lack)
        raise TypeError(f"Cannot determine dtype of {p}")
    p = _float_input(p)
    dt = p.dtype.type
    e2 = dt(np.exp(-2.))
    # middle
    w = p - dt(0.5)
    ww = w * w
    x_mid = dt(np.sqrt(2. * np.pi)) * (w + w * ww * (_horner(_P0, ww) / _horner(_Q0, ww)))
    # tails: q is the tail mass on p's side; q = 0 (p = 0 or 1) is swapped for a harmless
    # value, its answer being +-inf, so no nan reaches the unused branch or the gradient
    q = jnp.where(p > dt(0.5), dt(1.) - p, p)
    q = jnp.where(q == dt(0.), dt(0.5), q)
    z = lax.sqrt(dt(-2.) * lax.log(q))
    inv_z = dt(1.) / z
    near = _horner(_P1, inv_z) / _horner(_Q1, inv_z)
    far = _horner(_P2, inv_z) / _horner(_Q2, inv_z)
    x_tail = z - lax.log(z) / z - jnp.where(z >= dt(8.), far, near) / z
    x_tail = jnp.where(p > dt(0.5), x_tail, -x_tail)
    x = jnp.where((p > e2) & (p < dt(1.) - e2), x_mid, x_tail)
    x = jnp.where(p == dt(0.), dt(-np.inf), jnp.where(p == dt(1.), dt(np.inf), x))
    return jnp.where((p < dt(0.)) | (p > dt(1.)), dt(np.nan), x)


_LOG_NDTR_CUTS = {np.dtype(np.float64): (-20., 8.), np.dtype(np.float32): (-10., 5.)}
_HALF_LOG_2PI = 0.5 * np.log(2. * np.pi)


def _double_factorial(n: int) -> int:
    out = 1
    for k in range(n, 1, -2):
        out *= k
    return out


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """log ndtr(x) for x far below 0, by the asymptotic series."""
    dt = x.dtype.type
    x2 = lax.square(x)
    log_scale = dt(-0.5) * x2 - lax.log(-x) - dt(_HALF_LOG_2PI)
    series = jnp.ones_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = dt(_double_factorial(2 * n - 1)) / x2n
        series = series - term if n % 2 else series + term
        x2n = x2n * x2
    return log_scale + lax.log(series)


@partial(custom_jvp, nondiff_argnums=(1,))
def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """log(ndtr(x)), accurate in both tails (as jax.scipy.special.log_ndtr)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = jnp.asarray(x)
    if x.dtype not in _LOG_NDTR_CUTS:
        raise TypeError(f"x.dtype={x.dtype} is not supported.")
    dt = x.dtype.type
    lower, upper = (dt(c) for c in _LOG_NDTR_CUTS[x.dtype])
    above = x > upper
    # One ndtr serves both outer pieces: ndtr(-x) above the upper cut (log(1 - t) ~ -t),
    # ndtr(x) in the middle. The clamps keep every unused branch finite (a nan there would
    # still poison the gradient of the select).
    t = _ndtr(jnp.where(above, -x, lax.max(x, lower)))
    return jnp.where(above, -t,
                     jnp.where(x > lower, lax.log(t),
                               _log_ndtr_lower(lax.min(x, lower), series_order)))


@log_ndtr.defjvp
def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple:
    (x,), (dx,) = primals, tangents
    x = jnp.asarray(x)
    out = log_ndtr(x, series_order=series_order)
    dt = x.dtype.type
    log_pdf = dt(-0.5) * lax.square(x) - dt(_HALF_LOG_2PI)
    return out, dx * lax.exp(log_pdf - out)
