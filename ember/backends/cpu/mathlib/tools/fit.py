"""Derivation of the fitted polynomial coefficients in `coeffs.py` (a developer script).

Run `python -m ember.backends.cpu.mathlib.tools.fit` to print `coeffs.py` again (`... fit f32`
prints `coeffs32.py`); nothing imports this module at run time (it needs mpmath). For each
function g on an interval [a, b] it takes mpmath's Chebyshev interpolant of degree n-1 at 40
digits (`mp.chebyfit`: within a small factor of the minimax polynomial), rounds the monomial
coefficients to doubles (c0 also as c0 + c0_lo, the list's last entry, for code that adds c0
in two parts), and measures the error of the rounded polynomial against g at 1000 points.
The smallest n whose weighted error `scale * |p - g|` is under the target is kept: 2^-56 for
f64 (so the polynomial's error is a small fraction of an ulp after the range reduction's
final add; c0 is counted exact) and 2^-32 for f32 (evaluated in double, rounded once to f32:
the erf family, whose f32 bodies are the double ones); atan_P, asin_P and tan_P serve f64
only (`F64_ONLY`: f32 has native bodies with the FITS32 fits below).

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

Native f32 polynomials (`python -m ember.backends.cpu.mathlib.tools.fit f32` prints `coeffs32.py`):
near-minimax fits (see `fit32`) whose every coefficient is a float32 value (c0 included: the
code evaluates them in f32 arithmetic), the error measured with those rounded values. The
target is a weighted error under 2^-27 (an eighth of an f32 ulp at worst, so rounding in
the f32 evaluation, analysed in each function's docstring, dominates). Weights:
  exp2_Q(r)  = (2^r - 1)/r             on [-1/2, 1/2]        2^r = 1 + r Q; |r|/2^r <= 0.71
  expm1_Q(r) = (e^r - 1 - r)/r^2       on [-0.35, 0.35]      e^r - 1 = r + r^2 Q; r^2/e^r
      <= 0.175 (|r| <= ln2/2 + rounding)
  atan_P(z)  = (atan(sqrt z)/sqrt z - 1)/z  on [0, 1]        atan u = u + u z P;
      u z/atan(u) <= 1/atan(1) = 1.27
  asin_P(z)  = (asin(sqrt z)/sqrt z - 1)/z  on [0, 1/4]      u z/asin(u) <= 0.24; the
      large-argument forms 2 s w P and pi/2 - ... weigh at most 0.25
  sinh_P(z)  = (sinh(sqrt z)/sqrt z - 1)/z  on [0, 1]        a z/sinh(a) <= 0.85
  cosh_P(z)  = (cosh(sqrt z) - 1)/z         on [0, 1]        z/cosh(sqrt z) <= 0.65
  icbrt_P(m) = m^(-1/3)                     on [1, 2]        start of Newton's iteration,
      target 2^-12 (one Newton step squares it, a corrected step finishes)
  tan_P(z)   = (tan(sqrt z)/sqrt z - 1)/z   on [0, (0.7854 * 1.001)^2]   u z/tan(u) <= 0.49
  tanh_P(z)  = (tanh(sqrt z)/sqrt z - 1)/z  on [0, 0.625^2]   u z/tanh(u) <= 0.44
  erf_P(z)   = erf(sqrt z)/sqrt z - 1       on [0, 1]        erf x = x + x P; weight
      x/erf(x) <= 1.19 (the error of x P relative to the result)
  erfcx_R(v) = e^(a^2) erfc(a), a = v + 5/2, on a in [1, 3.92]   erf a = 1 - e^(-a^2) R;
      weight e^(-a^2)/erf(a) (an absolute error of erfc relative to erf(a) >= 0.84)
  erfc_Q1(v) = (Q(v) - Q(0))/v, Q(v) = erfc_Q(v + 1/4) (above), on t = v + 1/4 in
      [2/12.1, 0.8] (0.5 <= x <= 10.1, where float erfc underflows); weight |v|/Q(v);
      erfc x = e^(-x^2) t (Q0 + v Q1) with Q0 = Q(0) a float pair (ERFC_Q0)
  erfinv_A1(w) = (A(w) - A(0))/w, A(w) = erfinv(x)/x, w = -log(1 - x^2), on [0, 6.25];
      weight w/A(w); erfinv x = x (A0 + w A1) with A0 = sqrt(pi)/2 a float pair
  erfinv_B1(v) = (B(v) - B(0))/v, B(v) = A((v + 13/4)^2), on sqrt(w) in [2.5, 4.01]
      (w <= 16 for float x < 1); weight |v|/B(v); B0 = B(0) a float pair (ERFINV_B0).
      Taking c0 out as an exact pair matters: rounding it to float alone costs 2^-25.
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
# f32 computes these natively (FITS32's fits), so only the double fit is printed
F64_ONLY = {"atan_P", "asin_P", "tan_P"}


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


def _ratio(f, c0, order: int = 1):
    """(f(t) - c0 t^(order-1)... ) / t^order style helpers: g(t) = (f(t) - 1)/t for order 1
    and (f(t) - 1 - t)/t^2 for order 2, by their series where t is tiny."""
    def g(t):
        if abs(t) < mp.mpf("1e-15"):
            return mp.taylor(f, 0, order)[order]
        if order == 1:
            return (f(t) - c0) / t
        return (f(t) - c0 - t) / (t * t)
    return g


def _cosh_p(z):
    if z < mp.mpf("1e-15"):
        return mp.mpf(1) / 2
    return (mp.cosh(mp.sqrt(z)) - 1) / z


def _w_atan(z):  # u z / atan(u), u = sqrt z
    return z * mp.sqrt(z) / mp.atan(mp.sqrt(z)) if z > 0 else mp.mpf(0)


def _w_asin(z):  # the largest of u z / asin(u) and 2 s w / (pi/2 - 2 asin(s))
    if z == 0:
        return mp.mpf(0)
    s = mp.sqrt(z)
    return max(z * s / mp.asin(s), 2 * z * s / (mp.pi / 2 - 2 * mp.asin(s)))


ERFCX_SHIFT = mp.mpf("2.5")  # erfcx_R is a polynomial in a - 2.5 (exact in float)


def _erfcx(a):
    return mp.erfc(a) * mp.exp(a * a)


ERFINV_SHIFT = mp.mpf("3.25")  # erfinv_B1 is a polynomial in sqrt(w) - 3.25


def _erfinv_s(v):
    return _erfinv_w((v + ERFINV_SHIFT) ** 2)


def _erfc_qv(v):
    return _erfc_q(v + mp.mpf("0.25"))


def _less_c0(g, v):
    """(g(v) - g(0)) / v, by the derivative at v = 0."""
    if v == 0:
        return mp.diff(g, 0, direction=1)  # one-sided: A is defined for w >= 0 only
    return (g(v) - g(0)) / v


FITS32 = {
    # name: (function, interval, error weight (a function of the variable), target)
    "exp2_Q": (_ratio(lambda t: mp.power(2, t), 1), (-mp.mpf(1) / 2, mp.mpf(1) / 2),
               lambda r: abs(r) / mp.power(2, r), 2.0 ** -27),
    "expm1_Q": (_ratio(mp.exp, 1, 2), (-mp.mpf("0.35"), mp.mpf("0.35")),
                lambda r: r * r / mp.exp(r), 2.0 ** -27),
    "atan_P": (_odd_ratio(mp.atan), (0, 1), _w_atan, 2.0 ** -27),
    "asin_P": (_odd_ratio(mp.asin), (0, mp.mpf(1) / 4), _w_asin, 2.0 ** -27),
    "sinh_P": (_odd_ratio(mp.sinh), (0, 1),
               lambda z: z * mp.sqrt(z) / mp.sinh(mp.sqrt(z)) if z > 0 else 0, 2.0 ** -27),
    "cosh_P": (_cosh_p, (0, 1), lambda z: z / mp.cosh(mp.sqrt(z)), 2.0 ** -27),
    "icbrt_P": (lambda m: mp.power(m, -mp.mpf(1) / 3), (1, 2), lambda m: 1, 2.0 ** -12),
    "tan_P": (_odd_ratio(mp.tan), (0, (mp.mpf("0.7854") * mp.mpf("1.001")) ** 2),
              lambda z: z * mp.sqrt(z) / mp.tan(mp.sqrt(z)) if z > 0 else 0, 2.0 ** -27),
    "tanh_P": (_odd_ratio(mp.tanh), (0, mp.mpf("0.625") ** 2),
               lambda z: z * mp.sqrt(z) / mp.tanh(mp.sqrt(z)) if z > 0 else 0, 2.0 ** -27),
    "erf_P": (_erf_p, (0, 1),
              lambda z: mp.sqrt(z) / mp.erf(mp.sqrt(z)) if z > 0 else mp.sqrt(mp.pi) / 2,
              2.0 ** -27),
    "erfcx_R": (lambda v: _erfcx(v + ERFCX_SHIFT), (1 - ERFCX_SHIFT, mp.mpf("3.92") - ERFCX_SHIFT),
                lambda v: mp.exp(-(v + ERFCX_SHIFT) ** 2) / mp.erf(v + ERFCX_SHIFT), 2.0 ** -27),
    "erfc_Q1": (lambda v: _less_c0(_erfc_qv, v), (2 / mp.mpf("12.1") - mp.mpf("0.25"),
                                                   mp.mpf("0.55")),
                lambda v: abs(v) / _erfc_qv(v), 2.0 ** -27),
    "erfinv_A1": (lambda w: _less_c0(_erfinv_w, w), (0, mp.mpf("6.25")),
                  lambda w: w / _erfinv_w(w), 2.0 ** -27),
    "erfinv_B1": (lambda v: _less_c0(_erfinv_s, v), (mp.mpf("2.5") - ERFINV_SHIFT,
                                                     mp.mpf("4.01") - ERFINV_SHIFT),
                  lambda v: abs(v) / _erfinv_s(v), 2.0 ** -27),
}


def _f32(v) -> float:
    import struct

    return struct.unpack("f", struct.pack("f", float(v)))[0]


def fit32(name: str) -> tuple[list[float], float]:
    """Coefficients (c0 first, each a float32 value) of the smallest degree meeting the
    target, and the weighted error measured with the rounded coefficients.

    Rounding every coefficient of the interpolant to float32 at once costs ~2^-25 |c_j|
    each, more than the target for most functions here; so coefficients are rounded one at
    a time, c0 first, and the remaining ones refitted (least squares at 4n Chebyshev points
    of the interval, close to minimax) to absorb what the rounded ones left."""
    g, (lo, hi), weight, target = FITS32[name]
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    for n in range(2, 30):
        coeffs = fit32_coeffs(g, lo, hi, n)
        err = weighted_error(g, lo, hi, coeffs, weight)
        if err < target:
            return coeffs, err
    raise RuntimeError(name)


def fit32_coeffs(g, lo, hi, n: int) -> list[float]:
    """n float32 coefficients (c0 first) of a near-minimax fit of g on [lo, hi], rounded
    one at a time and the rest refitted (see fit32)."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    m = 4 * n
    ts = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / m)
          for k in range(m)]
    gs = [g(t) for t in ts]
    coeffs: list[float] = []
    for i in range(n):
        rest = [gv - sum(mp.mpf(c) * t ** j for j, c in enumerate(coeffs))
                for t, gv in zip(ts, gs)]
        a = mp.matrix([[t ** j for j in range(i, n)] for t in ts])
        sol, _ = mp.qr_solve(a, mp.matrix(rest))
        coeffs.append(_f32(sol[0]))
    return coeffs


def weighted_error(g, lo, hi, coeffs: list[float], weight, points: int = 1000) -> float:
    """Largest |P(x) - g(x)| weight(x) over points + 1 evenly spaced x in [lo, hi]."""
    worst = mp.mpf(0)
    for i in range(points + 1):
        x = lo + (hi - lo) * mp.mpf(i) / points
        p = mp.mpf(0)
        for c in reversed(coeffs):
            p = p * x + mp.mpf(c)
        worst = max(worst, abs(p - g(x)) * weight(x))
    return float(worst)


def print_entry(name: str, coeffs: list[float], comment: str) -> None:
    """One `coeffs.py` entry: a comment line, then NAME = [c0, c1, ...] one per line."""
    print(f"# {comment}")
    print(f"{name} = [")
    for c in coeffs:
        print(f"    {c!r},")
    print("]")


def main32() -> None:
    print('"""Native f32 polynomial coefficients (c0 first, float32 values) printed by '
          '`fit.py f32`;\nsee its docstring."""\n')
    for name, c0 in (("ERFC_Q0", _erfc_qv(0)), ("ERFINV_A0", _erfinv_w(0)),
                     ("ERFINV_B0", _erfinv_s(0))):
        hi = _f32(c0)
        print(f"{name} = ({hi!r}, {float(c0 - mp.mpf(hi))!r})  # float hi + lo")
    print()
    for name in FITS32:
        coeffs, err = fit32(name)
        print_entry(name.upper(), coeffs,
                    f"max weighted error {err:.3g} (target {FITS32[name][3]:.3g})")


def main() -> None:
    import sys

    if sys.argv[1:] == ["f32"]:
        main32()
        return
    print('"""Fitted coefficients (c0 first) printed by `fit.py`; see its docstring."""\n')
    for name, (_, _, _, fixed) in FITS.items():
        kinds = {"all": fixed} if fixed else (
            {"f64": TARGET["f64"]} if name in F64_ONLY else TARGET)
        for kind, target in kinds.items():
            coeffs, err = fit(name, target)
            key = name if fixed else f"{name}_{kind}"
            print_entry(key.upper(), coeffs,
                        f"max weighted error {err:.3g} (target {target:.3g})")


if __name__ == "__main__":
    main()
