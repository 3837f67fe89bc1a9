"""Derivation of the tables and polynomials of the table-driven pow, f32 and f64 (a
developer script, like fit.py; nothing imports it at run time: it needs mpmath).

Run `python -m ember.backends.cpu.mathlib.tools.fit_pow >
ember/backends/cpu/mathlib/tables/pow_tables.py` to regenerate `pow_tables.py`. Every table
has 16 entries, so one AVX-512 two-register permute (vpermi2var, 8 lanes) looks an entry up
(see vec.py).

log2 table (f32 pow, x an f32 value): with OFF = 0.671875 (bits 0x3F2C0000), x = 2^e m,
  m in [OFF, 2 OFF), and i = the top 4 bits of m's bits minus OFF's: in the bits of the
  float, the 16 subintervals are equally wide (2^19 ulps). OFF is placed so that subinterval
  10 straddles 1: [1 - 2^-6, 1 + 2^-5) (2^18 ulps of 2^-24 below 1, 2^18 of 2^-23 above).
  For subinterval [lo, hi), 1/c = (1/lo + 1/hi) / 2 (r = m/c - 1 then spans the
  subinterval nearly symmetrically about 0), INVC = 1/c rounded to a double
  (r = fma(m, INVC, -1) rounds once, 2^-53 relative), LOG2C = -log2(INVC) of that double,
  rounded (2^-54 |LOG2C|).
  Subinterval 10 takes c = 1 exactly (INVC = 1, LOG2C = 0): there log2 x = log2(1 + r)
  with r = x - 1 exact, so log2 x keeps the polynomial's relative accuracy as x -> 1, where
  a huge y multiplies it (y log2 x up to 151 for x = 1 + 2^-23 needs y ~ 9e8).
  Over all 16, r lies in [R_LO, R_HI] (printed; about [-0.0287, 0.0313]).
LOG2_P(r) = log2(1 + r) / r on [R_LO, R_HI]: relative error (weight 1) printed.
exp2 table: EXP2_T[j] = 2^(j/16) rounded to a double (2^-53 relative), j = 0..15.
EXP2_Q(r) = (2^r - 1) / r on [-1/32, 1/32] (2^r = 1 + r Q(r)), error of 2^r relative
  (weight |r| / 2^r) printed.
f64 pow (natural log and exp, double-double where it matters; powers.py):
  the same subintervals of m and POW32_INVC (there r = m INVC - 1 is formed exactly, as
  fl(m INVC) - 1 plus the product's error by fma); POW64_LOGC_HI + POW64_LOGC_LO =
  -log(INVC) to ~2^-106.
  POW64_LOG_P(r) = (log(1 + r) - r + r^2/2) / r^3 on [R_LO, R_HI], weighted by
  |r^3 / log(1 + r)| (the term's error relative to log(1 + r), which is log x itself on
  subinterval 10): target 2^-64.
  POW64_EXP2_HI + POW64_EXP2_LO = 2^(j/16) to ~2^-106.
  POW64_EXP_Q(r) = (e^r - 1 - r) / r^2 on [-0.0218, 0.0218] (|r| <= ln2/32 plus the
  rounding of the reduction), weighted by r^2 / e^r (the error of e^r relative): target
  2^-62.
Each polynomial is mpmath's Chebyshev interpolant at 40 digits with coefficients rounded to
doubles, the error measured on the rounded coefficients at 2001 points (fit.weighted_error);
the degree is the smallest that meets the target (2^-34 relative for the log, whose error
y amplifies up to 151 times; 2^-34 for exp2).
"""

from __future__ import annotations

import struct

import mpmath as mp

from ember.backends.cpu.mathlib.tools.fit import print_entry, weighted_error

mp.mp.dps = 50
OFF32_BITS = 0x3F2C0000
TARGET = 2.0 ** -34


def _f32_of_bits(i: int) -> mp.mpf:
    return mp.mpf(struct.unpack("<f", struct.pack("<I", i))[0])


def log2_table() -> tuple[list[float], list[float], mp.mpf, mp.mpf]:
    """(INVC, LOG2C, r_lo, r_hi) as described in the module docstring."""
    invc: list[float] = []
    log2c: list[float] = []
    r_lo, r_hi = mp.mpf(0), mp.mpf(0)
    for i in range(16):
        lo = _f32_of_bits(OFF32_BITS + (i << 19))
        hi = _f32_of_bits(OFF32_BITS + ((i + 1) << 19))
        c = mp.mpf(1) if lo < 1 < hi else 2 * lo * hi / (lo + hi)
        ic = float(1 / c)
        invc.append(ic)
        log2c.append(float(-mp.log(mp.mpf(ic), 2)))
        r_lo = min(r_lo, lo * mp.mpf(ic) - 1)
        r_hi = max(r_hi, hi * mp.mpf(ic) - 1)
    return invc, log2c, r_lo, r_hi


def _log2_p(r):
    if abs(r) < mp.mpf("1e-30"):
        return 1 / mp.log(2)
    return mp.log(1 + r, 2) / r


def _exp2_q(r):
    if abs(r) < mp.mpf("1e-30"):
        return mp.log(2)
    return (mp.power(2, r) - 1) / r


def _log_p(r):
    if abs(r) < mp.mpf("1e-12"):
        return mp.mpf(1) / 3 - r / 4 + r * r / 5
    return (mp.log(1 + r) - r + r * r / 2) / r ** 3


def _log_w(r):
    return abs(r) ** 3 / abs(mp.log(1 + r)) if r != 0 else mp.mpf(0)


def _exp_q(r):
    if abs(r) < mp.mpf("1e-12"):
        return mp.mpf(1) / 2 + r / 6 + r * r / 24
    return (mp.exp(r) - 1 - r) / (r * r)


def _split(v) -> tuple[float, float]:
    hi = float(v)
    return hi, float(v - mp.mpf(hi))


def fit_poly(g, lo, hi, weight, target: float = TARGET) -> tuple[list[float], float]:
    """(coefficients c0 first, log2 of the weighted error) of the lowest degree meeting
    `target`."""
    for n in range(2, 20):
        coeffs = [float(c) for c in reversed(mp.chebyfit(g, [lo, hi], n))]
        err = weighted_error(g, lo, hi, coeffs, weight, points=2000)
        if err < target:
            return coeffs, float(mp.log(err, 2))
    raise RuntimeError("no fit")


def main() -> None:
    invc, log2c, r_lo, r_hi = log2_table()
    print('"""Tables and polynomials of the table-driven pow, printed by `fit_pow.py` '
          '(see its\ndocstring for the derivation)."""\n')
    print(f"OFF32_BITS = {OFF32_BITS:#x}  # 0.671875: x = 2^e m, m in [OFF, 2 OFF)")
    print(f"R_LO, R_HI = {float(r_lo)!r}, {float(r_hi)!r}  # range of r = m INVC - 1")
    print_entry("POW32_INVC", invc, "1/c per subinterval of m (index 10 straddles 1: c = 1)")
    print_entry("POW32_LOG2C", log2c, "-log2(INVC), rounded to doubles")
    coeffs, err = fit_poly(_log2_p, r_lo, r_hi, lambda r: 1)
    print_entry("POW32_LOG2_P", coeffs, f"log2(1 + r) / r on [R_LO, R_HI]: relative error "
                f"2^{err:.1f}")
    print_entry("POW32_EXP2_T", [float(mp.power(2, mp.mpf(j) / 16)) for j in range(16)],
                "2^(j/16), rounded to doubles")
    coeffs, err = fit_poly(_exp2_q, -mp.mpf(1) / 32, mp.mpf(1) / 32,
                           lambda r: abs(r) / mp.power(2, r))
    print_entry("POW32_EXP2_Q", coeffs, f"(2^r - 1) / r on [-1/32, 1/32]: error of 2^r "
                f"2^{err:.1f} relative")
    logc = [_split(-mp.log(mp.mpf(ic))) for ic in invc]
    print_entry("POW64_LOGC_HI", [h for h, _ in logc], "-log(INVC) = HI + LO")
    print_entry("POW64_LOGC_LO", [lo for _, lo in logc], "the LO parts")
    coeffs, err = fit_poly(_log_p, r_lo, r_hi, _log_w, 2.0 ** -64)
    print_entry("POW64_LOG_P", coeffs, f"(log(1 + r) - r + r^2/2) / r^3 on [R_LO, R_HI]: "
                f"r^3 P relative to log(1 + r) within 2^{err:.1f}")
    ex = [_split(mp.power(2, mp.mpf(j) / 16)) for j in range(16)]
    print_entry("POW64_EXP2_HI", [h for h, _ in ex], "2^(j/16) = HI + LO")
    print_entry("POW64_EXP2_LO", [lo for _, lo in ex], "the LO parts")
    b = mp.mpf("0.0218")
    coeffs, err = fit_poly(_exp_q, -b, b, lambda r: r * r / mp.exp(r), 2.0 ** -62)
    print_entry("POW64_EXP_Q", coeffs, f"(e^r - 1 - r) / r^2 on [-0.0218, 0.0218]: error of "
                f"e^r 2^{err:.1f} relative")


if __name__ == "__main__":
    main()
