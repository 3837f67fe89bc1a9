"""Derivation of the double-precision polynomials of f32 functions that compute in f64
lanes (a developer script, like fit.py; nothing imports it at run time: it needs mpmath).

Run `python -m ember.backends.cpu.mathlib.fit_wide` to print the entries it owns in
`coeffs.py`. Each is mpmath's Chebyshev interpolant at 40 digits (`mp.chebyfit`, within a
small factor of the minimax polynomial), coefficients rounded to doubles, c0 first, and the
weighted error of the rounded polynomial measured at 2001 points of the interval:
  POW32_LOG2_Q(z) = 2 atanh(s) / (s ln2), z = s^2, on [0, 0.0295]  (log2(1 + f) = s Q(z),
      s = f / (2 + f), |s| <= 3 - 2 sqrt(2) = 0.1716, z <= 0.02944); relative error
      (weight 1/Q): 2^-37.8 with 5 coefficients.
  POW32_EXP2_Q(r) = (2^r - 1) / r on [-1/2, 1/2]  (2^r = 1 + r Q(r)); error of 2^r
      relative (weight |r| / 2^r): 2^-27.6 with 6 coefficients.
Rounding the coefficients to doubles adds ~2^-53 relative: nothing at these targets.
"""

from __future__ import annotations

import mpmath as mp

from ember.backends.cpu.mathlib.fit import print_entry, weighted_error

mp.mp.dps = 40
LN2 = mp.log(2)


def _log2_q(z):
    if z < mp.mpf("1e-30"):
        return 2 / LN2
    s = mp.sqrt(z)
    return 2 * mp.atanh(s) / (s * LN2)


def _exp2_q(r):
    if abs(r) < mp.mpf("1e-30"):
        return LN2
    return (mp.power(2, r) - 1) / r


FITS = {
    # name: (function, interval, weight, number of coefficients)
    "POW32_LOG2_Q": (_log2_q, (mp.mpf(0), mp.mpf("0.0295")), lambda z: 1 / _log2_q(z), 5),
    "POW32_EXP2_Q": (_exp2_q, (-mp.mpf(1) / 2, mp.mpf(1) / 2),
                     lambda r: abs(r) / mp.power(2, r), 6),
}


def fit(name: str) -> tuple[list[float], float]:
    """(coefficients c0 first, log2 of the weighted error of the rounded polynomial)."""
    g, (lo, hi), weight, n = FITS[name]
    coeffs = [float(c) for c in reversed(mp.chebyfit(g, [lo, hi], n))]
    worst = weighted_error(g, lo, hi, coeffs, weight, points=2000)
    return coeffs, float(mp.log(worst, 2))


def main() -> None:
    for name in FITS:
        coeffs, err = fit(name)
        print_entry(name, coeffs, f"weighted error 2^{err:.1f} (fit_wide.py)")


if __name__ == "__main__":
    main()
