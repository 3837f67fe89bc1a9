"""The f32 log family on AVX-512 hosts, division-free and table driven: `ember.log.f32`,
and `ember.log2.f32`, `ember.log10.f32`, `ember.log1p.f32` (lean_log hands them here).

Input: a float x. Output: log(x), measured within 0.6 ulp of the true value over every
float of the binades tested (tests/codegen/test_log_tables.py); log(1) = +0, log(+-0) =
-inf, log(+inf) = +inf, x < 0 or NaN -> NaN, subnormal x exact in range. log2 and log10
within 0.64 and 0.57 ulp, log1p within 0.66 (lean_log's forms on `log_parts` below).

Why: the straight-line body (exp_log, kept on hosts without AVX-512, where the lookups
below would be gathers) divides once, s = f / (2 + f). A vector division is the slowest
instruction of a log-heavy loop (Black-Scholes has two more and a square root): long
latency, one divider. Here every operation is a multiply, an add or a permute.

Reduction. The bits of x are offset by OFF (the float 0.7292..., chosen below):
tmp = bits(x) - OFF, k = tmp >> 23 (arithmetic), z = x 2^-k, whose bits are
bits(x) - (k << 23); so z is in [OFF, 2 OFF) = [0.729, 1.458) and x = 2^k z exactly. The
four bits under the exponent field of tmp, j = (tmp >> 19) mod 16, cut [OFF, 2 OFF) into
16 intervals of 2^19 float steps each: 2^-5 wide below 1, 2^-4 above. Interval 8 holds
1.0 (at two thirds of its steps, so it spans 1 -+ 1/48): its representative is c = 1, so
near x = 1 nothing cancels (k = 0, log c = 0, r = z - 1 exact). Elsewhere c is the
interval's midpoint and |log c| exceeds every |r| of the interval (below).
Per interval, INVC = float(1/c) and log c := -log(INVC) (the float actually stored, so
no error is made here), split as LOGC_HI (a multiple of 2^-15) + LOGC_LO (a float).
  p = z INVC rounded, pl = fma(z, INVC, -p) exactly, r = p - 1 exactly (Sterbenz: p is
    within 3% of 1); z INVC = 1 + r + pl, |r| < 0.0298 (asserted when the table is built).
  log x = k ln2 + log c + log(1 + r + pl)
        = hi + r + (lo + pl (1 - r) + r^2 P(r)) + O(pl^2, r^6 / 6),
  hi = k LN2_HI + LOGC_HI: both are multiples of 2^-15 (LN2_HI has 15 fraction bits) and
    |hi| < 2^7, so hi needs at most 22 bits: the fma computing it is exact;
  lo = k LN2_LO + LOGC_LO (|lo| < 2^-15; its roundings are ~2^-38 absolute);
  P(r) = -1/2 + r/3 - r^2/4 + r^3/5 (Taylor: the first dropped term r^6/6 is below
    2^-32.9; relative to the result it is largest in the intervals next to 1, where
    log x > 0.02: 0.06 ulp; in interval 8, log x ~ r, r^5/6 < 2^-30.5).
  s = hi + r rounds, and its error e = r - (s - hi) is exact (Dekker's fast two-sum:
    hi = 0 or |hi| >= |r|), so the result is s + (e + lo + pl + r (r P - pl)), and the
    small sum's roundings and P's are far below an ulp of the result: one rounding, the
    last add, plus a few hundredths of an ulp.
Fast path (vec.py's branchy variant): every lane positive, normal and finite; otherwise
the general code scales subnormal x by 2^23 (k - 23) and selects the special values.
Both paths run the same core, so a lane's bits do not depend on its neighbours.
log2, log10, log1p: `log_parts` gives (k, hi, lo) with log = k ln2 + hi + lo, hi = LOGC_HI
+ r rounded and lo its exact error plus the small terms, and parts.combine scales and
rounds about once (k E exact, E = ln2 C); log1p(x) is log(u + c) with u + c = 1 + x by a
two-sum, c entering beside pl (so tiny x gives x). One thread, in-cache floats, ns per
element above a negate: log 0.22 -> 0.10, log2 0.28 -> 0.16, log10 0.30 -> 0.18, log1p
0.30 -> 0.22.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.define import define
from ember.backends.cpu.mathlib.exp_log import LN2
from ember.backends.cpu.mathlib.fp import Fp
from ember.backends.cpu.mathlib.vec import (
    Body,
    Lookup,
    define_with_variant,
    out_of_line,
    permute_tables,
)

F32 = ir.FloatType()
STEP = 1 << 19  # float steps per interval (16 intervals per octave)
ONE_BITS = 0x3F800000
# interval 8 holds 1.0, two thirds of its steps below it: below 1 a step is 2^-24, above
# 2^-23, so 1.0 sits at the interval's middle in value (1 -+ 1/48)
OFF_BITS = ONE_BITS - 8 * STEP - (2 * STEP) // 3
ONE_INTERVAL = 8
LN2_HI, LN2_LO = LN2[32]  # LN2_HI = 22713 * 2^-15
HI_QUANTUM = 2.0 ** -15
LOG1P_P = [-0.5, 1.0 / 3.0, -0.25, 0.2]  # log(1 + r) = r + r^2 P(r), Taylor
R_BOUND = 0.0298  # |r| below this in every interval (checked by _tables)


def _f32(v: float) -> float:
    return struct.unpack("<f", struct.pack("<f", v))[0]


def _from_bits(i: int) -> float:
    return struct.unpack("<f", struct.pack("<I", i))[0]


def _tables() -> tuple[list[float], list[float], list[float]]:
    """(INVC, LOGC_HI, LOGC_LO) per interval (module docstring)."""
    invc, hi, lo = [], [], []
    for j in range(16):
        zlo, zhi = _from_bits(OFF_BITS + j * STEP), _from_bits(OFF_BITS + (j + 1) * STEP)
        c = 1.0 if j == ONE_INTERVAL else 0.5 * (zlo + zhi)
        ic = _f32(1.0 / c)
        lc = 0.0 - math.log(ic)  # +0.0 for c = 1
        h = round(lc / HI_QUANTUM) * HI_QUANTUM
        invc.append(ic)
        hi.append(h)
        lo.append(_f32(lc - h))
        # the bounds the docstring's error analysis rests on
        assert max(abs(zlo * ic - 1), abs(zhi * ic - 1)) < R_BOUND, j
        assert j == ONE_INTERVAL or abs(lc) > R_BOUND, j
    return invc, hi, lo


INVC, LOGC_HI, LOGC_LO = _tables()


def _reduce(fp: Fp, lookup: Lookup, x: ir.Value, kadj: ir.Value | None
            ) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value, ir.Value]:
    """(k as a float, j, INVC[j], pl, r) with x = 2^k z and z INVC = 1 + r + pl, for
    positive normal finite x (the general paths pass x scaled into that range and kadj,
    the power of two to add back; None adds nothing). Other lanes: garbage, no traps."""
    b = fp.b
    ix = fp.to_bits(x)
    tmp = b.sub(ix, fp.ci(OFF_BITS))
    j = b.lshr(tmp, fp.ci(19))  # the lookups read its low 4 bits
    k = b.ashr(tmp, fp.ci(23))
    z = fp.from_bits(b.sub(ix, b.shl(k, fp.ci(23))))
    if kadj is not None:
        k = b.add(k, kadj)
    invc = lookup(fp, "log_invc", INVC, j)
    p = fp.mul(z, invc)
    pl = fp.fma(z, invc, fp.neg(p))
    r = fp.sub(p, fp.c(1.0))
    return b.sitofp(k, fp.ty), j, invc, pl, r


def _small(fp: Fp, r: ir.Value, pl: ir.Value, rest: ir.Value) -> ir.Value:
    """r^2 P - r pl + pl + rest (log(1 + r + pl) - r to second order in pl, plus rest)."""
    return fp.fma(r, fp.fma(r, fp.poly(r, LOG1P_P), fp.neg(pl)), fp.add(rest, pl))


def _core(fp: Fp, lookup: Lookup, x: ir.Value, kadj: ir.Value | None) -> ir.Value:
    """log x for positive normal finite x (see `_reduce`)."""
    kf, j, _, pl, r = _reduce(fp, lookup, x, kadj)
    hi = fp.fma(kf, fp.c(LN2_HI), lookup(fp, "log_hi", LOGC_HI, j))  # exact
    lo = fp.fma(kf, fp.c(LN2_LO), lookup(fp, "log_lo", LOGC_LO, j))
    s, e = fp.fast_two_sum(hi, r)
    return fp.add(s, _small(fp, r, pl, fp.add(lo, e)))


def log_parts(fp: Fp, lookup: Lookup, x: ir.Value, kadj: ir.Value | None,
              tail: ir.Value | None = None) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(k, hi, lo): log(x + tail) = k ln2 + hi + lo (`_reduce`'s x; tail, if any, a few
    ulp of x at most), the pieces parts.combine takes: log z = log c + log(1 + r + pl'),
    pl' = pl + tail 2^-k INVC (k capped at 100 so 2^-k stays normal: beyond, tail is far
    below the result's ulp; pl'^2 / 2 is dropped: under 2^-49 for log1p of x < 2^-23,
    0.04 ulp); hi = LOGC_HI + r rounded (fast two-sum: LOGC_HI = 0 or |LOGC_HI| > |r|),
    lo its exact error plus the small terms."""
    kf, j, invc, pl, r = _reduce(fp, lookup, x, kadj)
    if tail is not None:
        b = fp.b
        k = fp.to_int(kf)
        k = b.select(b.icmp_signed(">", k, fp.ci(100)), fp.ci(100), k)
        pl = fp.fma(fp.mul(tail, fp.pow2i(b.neg(k))), invc, pl)
    s, e = fp.fast_two_sum(lookup(fp, "log_hi", LOGC_HI, j), r)
    return kf, s, _small(fp, r, pl, fp.add(lookup(fp, "log_lo", LOGC_LO, j), e))


def _specials(fp: Fp, x: ir.Value, res: ir.Value) -> ir.Value:
    """log-family result for x = +inf (inf), 0 (-inf), x < 0 or NaN (NaN)."""
    res = fp.sel(fp.eq(x, fp.c(math.inf)), x, res)
    res = fp.sel(fp.eq(x, fp.c(0.0)), fp.c(-math.inf), res)
    return fp.sel(fp.b.or_(fp.lt(x, fp.c(0.0)), fp.isnan(x)), fp.c(math.nan), res)


def _scaled(fp: Fp, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(x scaled into the normal range, the power of two to add back): subnormal x (and
    zero and negative x, selected away later) times 2^23."""
    sub = fp.lt(x, fp.c(2.0 ** -126))
    return (fp.sel(sub, fp.mul(x, fp.c(2.0 ** 23)), x),
            fp.b.select(sub, fp.ci(-23), fp.ci(0)))


def _branchy(fp: Fp, x: ir.Value, quick: Callable[[], ir.Value],
             full: Callable[[], ir.Value]) -> ir.Value:
    """quick() where every lane of x is positive, normal and finite, else full(): the
    unsigned compare wraps 0 and subnormals to the top, and negatives' sign bit puts them
    there too. quick must give full's values on such lanes."""
    b = fp.b
    ok = b.icmp_unsigned("<", b.sub(fp.to_bits(x), fp.ci(0x00800000)), fp.ci(0x7F000000))
    mask_ty = ir.IntType(fp.lanes)
    every = b.icmp_unsigned("==", b.bitcast(ok, mask_ty), ir.Constant(mask_ty, -1))
    with b.if_else(every, likely=True) as (fast, slow):
        with fast:
            q = quick()
            quick_bb = b.block
        with slow:
            f = full()
            full_bb = b.block
    res = b.phi(fp.ty)
    res.add_incoming(q, quick_bb)
    res.add_incoming(f, full_bb)
    return res


def _general(base: str, body: Body, fp: Fp, lookup: Lookup, args: list[ir.Value]
             ) -> Callable[[], ir.Value]:
    """The general code as a call (vec.out_of_line): the branchy body is copied into the
    loop and each vector variant, its rarely taken general half need not be."""
    def build(vfp: Fp, vargs: list[ir.Value]) -> ir.Value:
        return body(vfp, lookup, vargs, False)

    return lambda: out_of_line(fp, f"ember.{base}.general.v{fp.lanes}f32", build, args)


def _log_table_body(fp: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool) -> ir.Value:
    (x,) = args
    if not branchy:
        return _specials(fp, x, _core(fp, lookup, *_scaled(fp, x)))
    return _branchy(fp, x, lambda: _core(fp, lookup, x, None),
                    _general("log", _log_table_body, fp, lookup, args))


def _scaled_log_body(base: str, em: tuple[float, float], cm: tuple[float, float]) -> Body:
    """log(x) C written k E + (hi + lo) C (parts.combine), E = ln2 C with few enough bits
    that k E is exact: log2 (E = 1) and log10."""

    def body(fp: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool) -> ir.Value:
        from ember.backends.cpu.mathlib.parts import combine  # (imports fractions: lazily)

        (x,) = args

        def value(xs: ir.Value, kadj: ir.Value | None) -> ir.Value:
            return combine(fp, *log_parts(fp, lookup, xs, kadj), em, cm)

        if not branchy:
            return _specials(fp, x, value(*_scaled(fp, x)))
        return _branchy(fp, x, lambda: value(x, None), _general(base, body, fp, lookup, args))

    return body


def _log1p_body(fp: Fp, lookup: Lookup, args: list[ir.Value], branchy: bool) -> ir.Value:
    """log1p(x) = log(u + c), u + c = 1 + x exactly (two-sum): tiny x gives x (u = 1,
    c = x); -0.0 kept by a select; x = -1 gives -inf, x < -1 NaN, +inf +inf."""
    from ember.backends.cpu.mathlib.parts import LN2_PAIR, combine  # (as above)

    (x,) = args
    u, c = fp.two_sum(fp.c(1.0), x)

    def quick() -> ir.Value:
        res = combine(fp, *log_parts(fp, lookup, u, None, c), LN2_PAIR[32], None)
        return fp.sel(fp.eq(x, fp.c(0.0)), x, res)  # keeps -0.0

    if not branchy:  # u is 0 or normal: no scaling
        return _specials(fp, u, fp.sel(fp.eq(x, fp.c(math.inf)), x, quick()))
    return _branchy(fp, u, quick, _general("log1p", _log1p_body, fp, lookup, args))


def scaled_log32_fn(module: ir.Module, base: str, em: tuple[float, float],
                    cm: tuple[float, float]) -> ir.Function:
    """`ember.<base>.f32` (log2, log10) on AVX-512 hosts (lean_log's callers decide)."""
    return define_with_variant(module, base, F32, 1, _scaled_log_body(base, em, cm), True)


def log1p32_fn(module: ir.Module) -> ir.Function:
    """`ember.log1p.f32` on AVX-512 hosts (lean_log's caller decides)."""
    return define_with_variant(module, "log1p", F32, 1, _log1p_body, True)


def log32_fn(module: ir.Module, permute: bool | None = None) -> ir.Function:
    """`ember.log.f32`: the table-driven body where the host has AVX-512 (`permute`
    default), exp_log's straight-line body elsewhere (its lookups would be gathers)."""
    if permute is None:
        permute = permute_tables()
    if permute:
        return define_with_variant(module, "log", F32, 1, _log_table_body, True)
    from ember.backends.cpu.mathlib.exp_log import log_body

    return define(module, "ember.log.f32", F32, 1, log_body)
