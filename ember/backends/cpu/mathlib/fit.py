"""Derivation of the fitted polynomial coefficients in `coeffs.py` (a developer script).

Run `python -m ember.backends.cpu.mathlib.fit` to print `coeffs.py` again; nothing imports
this module at run time (it needs mpmath). For each function g on an interval [a, b] it
takes mpmath's Chebyshev interpolant of degree n-1 at 40 digits (`mp.chebyfit`: within a
small factor of the minimax polynomial), rounds the monomial coefficients to doubles (c0
also as c0 + c0_lo, the list's last entry, for code that adds c0 in two parts), and
measures the error of the rounded polynomial against g at 1000 points. The smallest n whose
weighted error `scale * |p - g|` is under the target is kept: 2^-56 for f64 (so the
polynomial's error is a small fraction of an ulp after the range reduction's final add;
c0 is counted exact) and
2^-32 for f32 (evaluated in double, rounded once to f32).

Functions (z = x^2 where the approximated function is odd; the weight is the largest
factor by which an error in g reaches the final relative error):
  atan_P(z)   = (atan(sqrt z)/sqrt z - 1)/z  on [0, tan(pi/8)^2]  atan u = u + u z P
  asin_P(z)   = (asin(sqrt z)/sqrt z - 1)/z  on [0, 1/4]          asin u = u + u z P
  tan_P(z)    = (tan(sqrt z)/sqrt z - 1)/z   on [0, (0.7854 * 1.001)^2]
  erf_P(z)    = erf(sqrt z)/sqrt z - 1       on [0, 1]            erf x = x + x P(x^2)
  erfc_Q(t)   = erfc(x) e^(x^2) / t, x = 2/t - 2, on [2/8.4, 0.8]   (0.5 <= x <= 6.4)
      t = 2/(2+x) maps [0.5, 6.4] onto [0.238, 0.8]; erfc(x) e^(x^2) ~ 1/(x sqrt(pi)) is
      smooth there and dividing by t leaves a bounded, slowly varying function (0.36..0.77).
  erfc_G(u)   = sqrt(pi) x e^(x^2) erfc(x), u = 1/x^2, on [0, 1/6.4^2]   (x >= 6.4)
      = 1 - u/2 + 3u^2/4 - ... (the asymptotic series; its smallest term at x = 6.4 is
      about e^-41 < 2^-59, so a polynomial in u is accurate there; t-polynomials are not,
      because x -> inf is not an analytic point in t).
  cbrt_P(m)   = m^(1/3)                      on [1, 2]   (start of Newton's iteration)
  erfinv_A(w) = erfinv(x)/x with w = -log(1 - x^2), on [0, 6.25]
  erfinv_B(s) = erfinv(x)/x with s = sqrt(w), on [2.5, 6.1]   (w up to 37: x = 1 - 2^-53)
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 40


def _odd_ratio(f):
    """(f(sqrt z)/sqrt z - 1)/z, by its series near z = 0."""
    def g(z):
        if z < mp.mpf("1e-12"):
            return mp.taylor(lambda t: f(t), 0, 3)[3]
        s = mp.sqrt(z)
        return (f(s) / s - 1) / z
    return g


def _erf_p(z):
    if z == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    s = mp.sqrt(z)
    return mp.erf(s) / s - 1


def _erfc_q(t):
    if t == 0:
        return 1 / (2 * mp.sqrt(mp.pi))
    x = 2 / t - 2
    return mp.erfc(x) * mp.exp(x * x) / t


def _erfc_g(u):
    if u == 0:
        return mp.mpf(1)
    x = 1 / mp.sqrt(u)
    return mp.erfc(x) * mp.exp(x * x) * x * mp.sqrt(mp.pi)


def _erfinv_w(w):
    if w == 0:
        return mp.sqrt(mp.pi) / 2
    x = mp.sqrt(-mp.expm1(-w))
    return mp.erfinv(x) / x


FITS = {
    # name: (function, interval, error weight, (f32 target, f64 target) or one target)
    "atan_P": (_odd_ratio(mp.atan), (0, mp.tan(mp.pi / 8) ** 2), 0.18, None),
    "asin_P": (_odd_ratio(mp.asin), (0, mp.mpf(1) / 4), 0.25, None),
    "tan_P": (_odd_ratio(mp.tan), (0, (mp.mpf("0.7854") * mp.mpf("1.001")) ** 2), 0.5, None),
    "erf_P": (_erf_p, (0, 1), 1.0, None),
    "erfc_Q": (_erfc_q, (2 / (2 + mp.mpf("6.4")), mp.mpf("0.8")), 1.0, None),
    "erfc_G": (_erfc_g, (0, 1 / mp.mpf("6.4") ** 2), 1.0, None),
    "cbrt_P": (mp.cbrt, (1, 2), 1.0, 2.0 ** -18),
    "erfinv_A": (_erfinv_w, (0, mp.mpf("6.25")), 1.0, 2.0 ** -27),
    "erfinv_B": (lambda s: _erfinv_w(s * s), (mp.mpf("2.5"), mp.mpf("6.1")), 1.0, 2.0 ** -27),
}
# polynomials in (t - SHIFT): an interval far from 0 makes monomial coefficients in t cancel
SHIFT = {"erfc_Q": mp.mpf("0.25")}  # t - 0.25 is exact for t in [0.125, 1]
TARGET = {"f32": 2.0 ** -32, "f64": 2.0 ** -56}


def _rounded_error(g, lo, hi, coeffs: list[float], c0: mp.mpf) -> float:
    worst = mp.mpf(0)
    for i in range(1001):
        x = lo + (hi - lo) * mp.mpf(i) / 1000
        p = mp.mpf(0)
        for c in reversed(coeffs[1:]):
            p = p * x + mp.mpf(c)
        p = p * x + c0
        worst = max(worst, abs(p - g(x)))
    return float(worst)


def fit(name: str, target: float) -> tuple[list[float], float]:
    g0, (lo, hi), scale, _ = FITS[name]
    shift = SHIFT.get(name, 0)
    lo, hi = lo - shift, hi - shift

    def g(v):
        return g0(v + shift)

    for n in range(2, 40):
        poly = mp.chebyfit(g, [lo, hi], n)
        coeffs = [float(c) for c in reversed(poly)]  # c0 first
        c0 = poly[-1]
        err = _rounded_error(g, mp.mpf(lo), mp.mpf(hi), coeffs, c0) * scale
        if err < target:
            return coeffs + [float(c0 - mp.mpf(coeffs[0]))], err
    raise RuntimeError(name)


def main() -> None:
    print('"""Fitted coefficients (c0 first) printed by `fit.py`; see its docstring."""\n')
    for name, (_, _, _, fixed) in FITS.items():
        kinds = {"all": fixed} if fixed else TARGET
        for kind, target in kinds.items():
            coeffs, err = fit(name, target)
            key = name if fixed else f"{name}_{kind}"
            print(f"# max weighted error {err:.3g} (target {target:.3g})")
            print(f"{key.upper()} = [")
            for c in coeffs:
                print(f"    {c!r},")
            print("]")


if __name__ == "__main__":
    main()
