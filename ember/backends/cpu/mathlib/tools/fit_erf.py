"""Derivation of the table-driven f32 erf's tables in `tables/erf_tables.py` (a developer
script: `python -m ember.backends.cpu.mathlib.tools.fit_erf` prints that module; it needs
mpmath and nothing imports it at run time).

erf(a), a = |x| clamped to 3.92, is split by s = 4a into 16 intervals [k, k + 1) (k =
floor(s) in 0..15), each with its own polynomial in u = s - OFF[k], and
  erf(a) = H + (u C + (L + u Qk(u)))   (C, H, L per interval):
  k = 0:  OFF = 0, u = 4a in [0, 1], H = L = 0, C = float(1/(2 sqrt(pi))) = float(erf'(0)/4),
          Q0(u) = erf(u/4)/u - C (relative error weight 1/(C + Q0): an error of Q0 is the
          result's relative error). C alone carries the leading term: u C rounds once
          with the small u Q0 added, so the result is erf within about half an ulp near
          0 (Q0 absorbs C's rounding as its constant term);
  k >= 1: OFF = k + 1/2, u in [-1/2, 1/2], C = 0, H + L = erf(c), c = (k + 1/2)/4, a float
          pair, Qk(u) = (erf(c + u/4) - erf(c))/u (weight |u|/erf(a): an absolute error
          of Qk reaches the result scaled by |u|/erf).
Every Qk has the same number N of float32 coefficients (one 16-entry table per power of u:
`ERF_Q[j][k]` is the u^j coefficient of interval k), the smallest N meeting the target
2^-27 on every interval. Coefficients are rounded to float one at a time, c0 first, the
rest refitted (fit.py's `fit32_coeffs`). The code looks a row up with one in-register
permute (vec.py), so the intervals cost no branch and no gather.
"""

from __future__ import annotations

import mpmath as mp

from ember.backends.cpu.mathlib.tools.fit import _f32, fit32_coeffs, weighted_error

TARGET = 2.0 ** -27
INTERVALS = 16


def _pieces(k: int):
    """(g, lo, hi, weight, H, L, C) of interval k (see the module docstring)."""
    if k == 0:
        g0 = 1 / (2 * mp.sqrt(mp.pi))
        cc = _f32(g0)

        def ratio(u):
            return mp.erf(u / 4) / u if u != 0 else g0

        return (lambda u: ratio(u) - cc, mp.mpf(0), mp.mpf(1), lambda u: 1 / ratio(u),
                0.0, 0.0, cc)
    c = (k + mp.mpf(1) / 2) / 4
    e = mp.erf(c)
    d0 = 2 / mp.sqrt(mp.pi) * mp.exp(-c * c) / 4

    def gk(u):
        return (mp.erf(c + u / 4) - e) / u if u != 0 else d0

    hi = _f32(e)
    lo = _f32(e - mp.mpf(hi))
    return (gk, -mp.mpf(1) / 2, mp.mpf(1) / 2, lambda u: abs(u) / mp.erf(c + u / 4), hi, lo,
            0.0)


def fit_all() -> tuple[list[list[float]], dict[str, list[float]], list[float]]:
    """(Q[j][k], {"H", "L", "C"}: [k], errors[k]) for the smallest number of coefficients
    meeting TARGET on every interval."""
    pieces = [_pieces(k) for k in range(INTERVALS)]
    for n in range(4, 12):
        rows: list[list[float]] = []
        errs: list[float] = []
        for g, lo, hi, w, *_ in pieces:
            cs = fit32_coeffs(g, lo, hi, n)
            errs.append(weighted_error(g, lo, hi, cs, w, points=400))
            rows.append(cs)
        if max(errs) < TARGET:
            q = [[rows[k][j] for k in range(INTERVALS)] for j in range(n)]
            named = {name: [p[4 + i] for p in pieces] for i, name in enumerate("HLC")}
            return q, named, errs
    raise RuntimeError("no degree meets the target")


def main() -> None:
    q, named, errs = fit_all()
    print('"""Tables of the table-driven f32 erf, printed by `tools/fit_erf.py` (see its '
          'docstring)."""\n')
    print(f"# largest weighted error over the 16 intervals: {max(errs):.3g} "
          f"(target {TARGET:.3g})")
    print("ERF_OFF = [0.0] + [k + 0.5 for k in range(1, 16)]  # u = 4a - ERF_OFF[k]")
    for name, vals in named.items():
        print(f"ERF_{name} = [")
        for v in vals:
            print(f"    {v!r},")
        print("]")
    print(f"# ERF_Q[j][k]: coefficient of u^j on interval k ({len(q)} per interval)")
    print("ERF_Q = [")
    for row in q:
        print("    [")
        for v in row:
            print(f"        {v!r},")
        print("    ],")
    print("]")


if __name__ == "__main__":
    main()
