"""Complex exp, log, sqrt, the trig and hyperbolic functions, expm1 and log1p as scalar IR
on the backend's real math.

Input: an IRBuilder, the opcode, operand element types (c64/c128), complex register values
(`{re, im}` structs) and the backend's MathEmitter (its real exp, log, sin, cos, atan2,
log1p). Output: (value, rerun flag or None): the flags of the real sin/cos are or-ed.
Semantics: C99 Annex G's special values, which NumPy's loops (the evaluator, eager mode)
give; the finite formulas:
- exp(a + ib) = e^a (cos b + i sin b); b == 0 gives (e^a, b) (so exp(inf + 0i) = inf + 0i
  and the sign of a zero b is kept); for a above the component's exp overflow threshold
  e^a is applied as e^(a/2) twice, so e^a cos b stays finite when e^a alone is not;
  a = -inf with b inf/NaN gives 0 + 0i, a = +inf with b inf/NaN gives inf + NaN i.
- log(z) = log|z| + i atan2(b, a), with log|z| = log m + log1p((n/m)^2) / 2 for
  m = max(|a|, |b|), n = min (XLA's formula: no overflow of the squares), except for m
  near 1, where that cancels: there log1p(m^2 - 1 + n^2) / 2 with the squares split
  exactly by FMAs (close to glibc's clog, which NumPy runs);
  log(0) = -inf + i atan2(b, a); an infinite part gives +inf as the real part, even
  beside a NaN.
- sqrt(z): Kahan's t = sqrt((|a| + |z|) / 2); a >= 0: (t, b / 2t), else (|b| / 2t,
  copysign(t, b)); parts above a quarter of the largest float are scaled by 1/4 first
  (exactly) so |a| + |z| cannot overflow; sqrt(+-0 + ib) for b = +-0 is (+0, b);
  b = +-inf gives (+inf, b) even with a NaN; a = -inf: (0 or NaN, +-inf), a = +inf:
  (+inf, +-0 or NaN), as C99 lists them; subnormal parts are scaled up by 2^2k first.
- sinh, cosh: sinh x cos y + i cosh x sin y and cosh x cos y + i sinh x sin y (past the
  exp threshold through e^(|x|/2) twice), tanh by Kahan's formula; sin z = -i sinh(iz),
  cos z = cosh(iz), tan z = -i tanh(iz); C99's special values (each function's docstring
  lists them; where C99 leaves a sign open, glibc's, which NumPy runs).
- expm1, log1p, exp2, log2, log10: NumPy's own formulas, as the evaluator runs them;
  rsqrt is 1 / sqrt z (Smith's division), as the evaluator computes it.
Invariants: selects only (no branches), so a loop of these vectorizes.
"""

from __future__ import annotations

from typing import Any

import llvmlite.ir as ir

from ember.codegen.complex_ops import fabs, hypot, isinf, isnan, make, parts

Result = tuple[ir.Value, ir.Value | None]


class _Math:
    """The backend's real math on one builder, collecting the rerun flags."""

    def __init__(self, b: ir.IRBuilder, math: Any, precise: bool) -> None:
        if math is None:
            raise NotImplementedError("complex math needs the backend's real math")
        self.b, self.math, self.precise = b, math, precise
        self.flags: list[ir.Value] = []

    def __call__(self, opcode: str, *args: ir.Value) -> ir.Value:
        v, flag = self.math.emit(self.b, opcode, list(args), self.precise)
        if flag is not None:
            self.flags.append(flag)
        return v

    def flag(self) -> ir.Value | None:
        if not self.flags:
            return None
        out = self.flags[0]
        for f in self.flags[1:]:
            out = self.b.or_(out, f)
        return out


def _c(x: ir.Value, v: float) -> ir.Constant:
    return ir.Constant(x.type, v)


def _copysign(b: ir.IRBuilder, x: ir.Value, s: ir.Value) -> ir.Value:
    name = f"llvm.copysign.{'f32' if str(x.type) == 'float' else 'f64'}"
    fn = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(x.type, [x.type, x.type]), name=name)
    return b.call(fn, [x, s])


def exp(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    a, y = parts(b, z)
    big = 709.0 if str(a.type) == "double" else 88.0
    inf = _c(a, float("inf"))
    over = b.fcmp_ordered(">", a, _c(a, big))
    half = m("exponential", b.fmul(a, _c(a, 0.5)))
    e = m("exponential", a)
    cos, sin = m("cosine", y), m("sine", y)
    re = b.select(over, b.fmul(b.fmul(half, cos), half), b.fmul(e, cos))
    im = b.select(over, b.fmul(b.fmul(half, sin), half), b.fmul(e, sin))
    y_zero = b.fcmp_ordered("==", y, _c(y, 0.0))
    re = b.select(y_zero, e, re)
    im = b.select(y_zero, y, im)
    y_bad = b.or_(isinf(b, y), isnan(b, y))
    minus_inf = b.and_(b.fcmp_ordered("==", a, b.fneg(inf)), y_bad)
    plus_inf = b.and_(b.fcmp_ordered("==", a, inf), y_bad)
    nan = _c(a, float("nan"))
    re = b.select(minus_inf, _c(a, 0.0), b.select(plus_inf, inf, re))
    im = b.select(minus_inf, _c(a, 0.0), b.select(plus_inf, nan, im))
    return make(b, re, im)


def log(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    a, y = parts(b, z)
    aa, ay = fabs(b, a), fabs(b, y)
    hi = b.select(b.fcmp_ordered(">", aa, ay), aa, ay)
    lo = b.select(b.fcmp_ordered(">", aa, ay), ay, aa)
    r = b.fdiv(lo, hi)
    far = b.fadd(m("log", hi), b.fmul(_c(a, 0.5), m("log-plus-one", b.fmul(r, r))))
    # near |z| = 1 the two terms above cancel: log1p(hi^2 - 1 + lo^2) / 2 instead, the
    # squares split exactly into a rounded product and its error (FMAs) and hi^2 - 1 into
    # its rounded value and error (Fast2Sum, |1| >= hi^2 here): one rounding in the sum
    hi2, lo2 = b.fmul(hi, hi), b.fmul(lo, lo)
    d = b.fsub(hi2, _c(a, 1.0))
    d_err = b.fsub(hi2, b.fadd(d, _c(a, 1.0)))
    errs = b.fadd(b.fadd(_fma(b, hi, hi, b.fneg(hi2)), _fma(b, lo, lo, b.fneg(lo2))), d_err)
    s = b.fadd(b.fadd(d, lo2), errs)
    near_one = b.and_(b.fcmp_ordered(">=", hi, _c(a, 0.5)),
                      b.fcmp_ordered("<", hi, _c(a, 1.0)))
    re = b.select(near_one, b.fmul(_c(a, 0.5), m("log-plus-one", s)), far)
    zero = b.and_(b.fcmp_ordered("==", aa, _c(a, 0.0)),  # log 0 = -inf (0/0 above is NaN)
                  b.fcmp_ordered("==", ay, _c(a, 0.0)))
    re = b.select(zero, _c(a, float("-inf")), re)
    # hi = inf: inf/inf is NaN above; an infinite part (NaN or not beside it) gives +inf
    re = b.select(b.or_(isinf(b, a), isinf(b, y)), _c(a, float("inf")), re)
    return make(b, re, m("atan2", y, a))


def sqrt(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    a, y = parts(b, z)
    ty = a.type
    fmax = 3.4028234663852886e38 if str(ty) == "float" else 1.7976931348623157e308
    aa, ay = fabs(b, a), fabs(b, y)
    big = b.select(b.fcmp_ordered(">", aa, ay), aa, ay)
    huge = b.fcmp_ordered(">", big, _c(a, fmax / 4))
    # subnormal parts lose bits in |a| + |z|: scale them up by 2^2k, the result down by 2^k
    k = 54 if str(ty) == "double" else 24
    tiny = b.fcmp_ordered("<", big, _c(a, 2.0 ** (-1000 if k == 54 else -100)))
    scale_in = b.select(huge, _c(a, 0.25), b.select(tiny, _c(a, 2.0 ** (2 * k)), _c(a, 1.0)))
    # sqrt(1/4) = 1/2, undone by 2; sqrt(2^2k) = 2^k, undone by 2^-k
    scale_out = b.select(huge, _c(a, 2.0), b.select(tiny, _c(a, 2.0 ** -k), _c(a, 1.0)))
    sa, sy = b.fmul(a, scale_in), b.fmul(y, scale_in)
    sqrt_fn = _sqrt_fn(b, ty)
    t = b.call(sqrt_fn, [b.fmul(b.fadd(fabs(b, sa), hypot(b, sa, sy)), _c(a, 0.5))])
    two_t = b.fmul(t, _c(a, 2.0))
    pos = b.fcmp_ordered(">=", a, _c(a, 0.0))
    re = b.select(pos, b.fmul(t, scale_out), b.fmul(b.fdiv(fabs(b, sy), two_t), scale_out))
    im = b.select(pos, b.fmul(b.fdiv(sy, two_t), scale_out),
                  b.fmul(_copysign(b, t, y), scale_out))
    inf, nan = _c(a, float("inf")), _c(a, float("nan"))
    zero = b.and_(b.fcmp_ordered("==", a, _c(a, 0.0)), b.fcmp_ordered("==", y, _c(a, 0.0)))
    re = b.select(zero, _c(a, 0.0), re)
    im = b.select(zero, y, im)
    # a = +-inf (b finite or NaN): C99's table
    a_minf = b.fcmp_ordered("==", a, b.fneg(inf))
    a_pinf = b.fcmp_ordered("==", a, inf)
    y_nan = isnan(b, y)
    re = b.select(a_minf, b.select(y_nan, nan, _c(a, 0.0)), re)
    im = b.select(a_minf, _copysign(b, inf, y), im)
    re = b.select(a_pinf, inf, re)
    im = b.select(a_pinf, b.select(y_nan, y, _copysign(b, _c(a, 0.0), y)), im)
    # b = +-inf wins over everything, NaN real parts included
    y_inf = isinf(b, y)
    re = b.select(y_inf, inf, re)
    im = b.select(y_inf, y, im)
    return make(b, re, im)


def _sinh_cosh(b: ir.IRBuilder, x: ir.Value, m: _Math, cos: ir.Value, sin: ir.Value
               ) -> tuple[ir.Value, ir.Value]:
    """(sinh x * cos, cosh x * sin) without overflow where the products are finite: past
    the exp threshold both are sign * e^(|x|/2) * (f/2) * e^(|x|/2)."""
    big = 709.0 if str(x.type) == "double" else 88.0
    ax = fabs(b, x)
    over = b.fcmp_ordered(">", ax, _c(x, big))
    e = m("exponential", b.fmul(ax, _c(x, 0.5)))
    half_cos, half_sin = b.fmul(cos, _c(x, 0.5)), b.fmul(sin, _c(x, 0.5))
    big_s = b.fmul(_copysign(b, _c(x, 1.0), x), b.fmul(b.fmul(e, half_cos), e))
    big_c = b.fmul(b.fmul(e, half_sin), e)
    s = b.fmul(m("sinh", x), cos)
    c = b.fmul(m("cosh", x), sin)
    return b.select(over, big_s, s), b.select(over, big_c, c)


def sinh(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """sinh x cos y + i cosh x sin y, with C99's special values: y = 0 gives (sinh x, y);
    x = 0 with y inf/NaN gives (x, NaN); x = +-inf with y inf/NaN gives (+inf, NaN)."""
    x, y = parts(b, z)
    re, im = _sinh_cosh(b, x, m, m("cosine", y), m("sine", y))
    y_zero = b.fcmp_ordered("==", y, _c(y, 0.0))
    re = b.select(y_zero, m("sinh", x), re)
    im = b.select(y_zero, y, im)
    y_bad = b.or_(isinf(b, y), isnan(b, y))
    keep_x = b.and_(y_bad, b.or_(b.fcmp_ordered("==", x, _c(x, 0.0)), isinf(b, x)))
    nan = _c(x, float("nan"))
    # (C99 leaves the sign of the infinite real part open; glibc's, which NumPy runs, is +)
    return make(b, b.select(keep_x, b.select(isinf(b, x), fabs(b, x), x), re),
                b.select(keep_x, nan, im))


def cosh(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """cosh x cos y + i sinh x sin y, with C99's special values: y = 0 gives
    (cosh x, y copysign(1, x)); x = 0 with y inf/NaN gives (NaN, 0); x = +-inf with y
    inf/NaN gives (+inf, NaN)."""
    x, y = parts(b, z)
    cos, sin = m("cosine", y), m("sine", y)
    im, re = _sinh_cosh(b, x, m, sin, cos)  # sinh x sin y, cosh x cos y
    y_zero = b.fcmp_ordered("==", y, _c(y, 0.0))
    re = b.select(y_zero, m("cosh", x), re)
    im = b.select(y_zero, b.fmul(y, _copysign(b, _c(x, 1.0), x)), im)
    y_bad = b.or_(isinf(b, y), isnan(b, y))
    nan, inf = _c(x, float("nan")), _c(x, float("inf"))
    x_zero = b.and_(y_bad, b.fcmp_ordered("==", x, _c(x, 0.0)))
    re = b.select(x_zero, nan, re)
    im = b.select(x_zero, _c(x, 0.0), im)
    x_inf = b.and_(y_bad, isinf(b, x))
    return make(b, b.select(x_inf, inf, re), b.select(x_inf, nan, im))


def tanh(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """Kahan's formula: t = tan y, s = sinh x, beta = 1 + t^2, rho = sqrt(1 + s^2),
    d = 1 + beta s^2: (beta rho s / d, t / d); past |x| = 22 (f64; 9 for f32) tanh x is
    +-1 to the last bit and the imaginary part is 4 sin y cos y e^(-2|x|). Special
    values (C99): x = +-inf gives (+-1, copysign(0, sin 2y)) for finite y and (+-1, +-0)
    for y inf/NaN; finite x with y inf/NaN gives NaN + NaN i, except x = 0: (x, NaN)
    (C11); y = 0 gives (tanh x, y)."""
    x, y = parts(b, z)
    ty = x.type
    limit = 22.0 if str(ty) == "double" else 9.0
    t = m("tan", y)
    s = m("sinh", x)
    beta = b.fadd(_c(x, 1.0), b.fmul(t, t))
    rho = b.call(_sqrt_fn(b, ty), [b.fadd(_c(x, 1.0), b.fmul(s, s))])
    d = b.fadd(_c(x, 1.0), b.fmul(beta, b.fmul(s, s)))
    re = b.fdiv(b.fmul(b.fmul(beta, rho), s), d)
    im = b.fdiv(t, d)
    ax = fabs(b, x)
    far = b.fcmp_ordered(">", ax, _c(x, limit))
    sin, cos = m("sine", y), m("cosine", y)
    far_im = b.fmul(b.fmul(b.fmul(_c(x, 4.0), sin), cos),
                    m("exponential", b.fmul(_c(x, -2.0), ax)))
    one = _copysign(b, _c(x, 1.0), x)
    re = b.select(far, one, re)
    im = b.select(far, far_im, im)
    y_zero = b.fcmp_ordered("==", y, _c(y, 0.0))
    re = b.select(y_zero, m("tanh", x), re)
    im = b.select(y_zero, y, im)
    y_bad = b.or_(isinf(b, y), isnan(b, y))
    x_inf = isinf(b, x)
    # x = +-inf: the imaginary part is a zero with the sign of sin 2y (of y for y inf/NaN)
    zero_im = _copysign(b, _c(x, 0.0), b.select(y_bad, y, b.fmul(sin, cos)))
    re = b.select(x_inf, one, re)
    im = b.select(x_inf, zero_im, im)
    nan = _c(x, float("nan"))
    bad = b.and_(y_bad, b.not_(x_inf))
    x_zero = b.fcmp_ordered("==", x, _c(x, 0.0))
    re = b.select(bad, b.select(x_zero, x, nan), re)
    im = b.select(bad, nan, im)
    return make(b, re, im)


def _rotated(fn):
    """f(z) = -i g(iz) for g = sinh/tanh (sin, tan): iz = (-y, x), g(iz) = (A, B) gives
    (B, -A)."""
    def rotated(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
        x, y = parts(b, z)
        re, im = parts(b, fn(b, make(b, b.fneg(y), x), m))
        return make(b, im, b.fneg(re))

    return rotated


def sin(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """sin z = -i sinh(iz); for y = +-inf beside an infinite or NaN x, C99 leaves the sign
    of the infinite imaginary part open and glibc's (NumPy's) is +."""
    x, y = parts(b, z)
    re, im = parts(b, _rotated(sinh)(b, z, m))
    plus = b.and_(isinf(b, y), b.or_(isinf(b, x), isnan(b, x)))
    return make(b, re, b.select(plus, _c(x, float("inf")), im))


def cos(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """cos z = cosh(iz), iz = (-y, x)."""
    x, y = parts(b, z)
    return cosh(b, make(b, b.fneg(y), x), m)


def expm1(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """NumPy's formula (its loop is the evaluator's): with h = sin(y/2),
    (expm1(x) cos y - 2 h^2, e^x sin y). (JAX's is more careful for tiny |z| in the
    imaginary part; we keep eager mode's values so compiled code agrees with it.)"""
    x, y = parts(b, z)
    h = m("sine", b.fmul(y, _c(y, 0.5)))
    re = b.fsub(b.fmul(m("exponential-minus-one", x), m("cosine", y)),
                b.fmul(_c(x, 2.0), b.fmul(h, h)))
    return make(b, re, b.fmul(m("exponential", x), m("sine", y)))


def log1p(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """NumPy's formula (the evaluator's): (log |x + 1 + iy|, atan2(y, x + 1)). (JAX's
    keeps the real part accurate for tiny |z|, where this rounds x + 1 first; we keep
    eager mode's values so compiled code agrees with it.)"""
    x, y = parts(b, z)
    x1 = b.fadd(x, _c(x, 1.0))
    return make(b, m("log", hypot(b, x1, y)), m("atan2", y, x1))


def power(b: ir.IRBuilder, x: ir.Value, y: ir.Value, m: _Math) -> ir.Value:
    """x^y as NumPy's complex power loop (the evaluator's) computes it:
    y = 0: 1 + 0i (even for a NaN x); x = 0: 0 for re y > 0, else NaN + NaN i;
    a real integer y with |y| < 100: y = 1, 2, 3 unrolled (x, x x, x (x x)), else binary
    powering from 1 (one squaring per bit, the product taken where the bit is set), and
    1 / that for y < 0 (Smith's division); any other y: exp(y log x) (glibc's cpow, whose
    product is C's, with Annex G's recovery of infinities). Where an integer power
    overflows, which of the parts come out inf and which NaN depends on the last bits of
    the intermediate products and may differ from NumPy's; finite values agree.
    The integer powers multiply without FMAs, as NumPy's scalar complex product does.
    Selects between all of them, so the loop stays branch-free."""
    from ember.codegen.complex_ops import divide, multiply_plain, select

    xr, xi = parts(b, x)
    yr, yi = parts(b, y)
    ty = xr.type
    zero, one = _c(xr, 0.0), _c(xr, 1.0)
    general = exp(b, _annex_g_multiply(b, y, log(b, x, m)), m)
    # the integer exponents: n = |y| (at most 99: 7 bits)
    trunc = b.module.globals.get(f"llvm.trunc.{'f32' if str(ty) == 'float' else 'f64'}")
    if trunc is None:
        trunc = ir.Function(b.module, ir.FunctionType(ty, [ty]),
                            name=f"llvm.trunc.{'f32' if str(ty) == 'float' else 'f64'}")
    ay = fabs(b, yr)
    is_int = b.and_(b.and_(b.fcmp_ordered("==", yi, zero),
                           b.fcmp_ordered("==", b.call(trunc, [yr]), yr)),
                    b.fcmp_ordered("<", ay, _c(xr, 100.0)))
    n = b.fptosi(b.select(is_int, ay, zero), ir.IntType(32))
    acc = make(b, one, zero)
    p = x
    for bit in range(7):
        on = b.icmp_unsigned("!=", b.and_(n, ir.Constant(ir.IntType(32), 1 << bit)),
                             ir.Constant(ir.IntType(32), 0))
        acc = select(b, on, multiply_plain(b, acc, p), acc)
        if bit < 6:
            p = multiply_plain(b, p, p)
    square = multiply_plain(b, x, x)
    for k, v in ((1, x), (2, square), (3, multiply_plain(b, x, square))):
        acc = select(b, b.icmp_signed("==", n, ir.Constant(ir.IntType(32), k)), v, acc)
    negative = b.fcmp_ordered("<", yr, zero)
    acc = select(b, b.and_(negative, b.icmp_signed(">", n, ir.Constant(ir.IntType(32), 3))),
                 divide(b, make(b, one, zero), acc), acc)
    # (y = -1, -2, -3: NumPy's unrolled cases ignore the sign: its n == 1, 2, 3 tests run
    # on the signed n, so they never see y < 0; the loop handles those too)
    acc = select(b, b.and_(negative, b.icmp_signed("<=", n, ir.Constant(ir.IntType(32), 3))),
                 divide(b, make(b, one, zero), _int_pow_loop(b, x, n)), acc)
    out = select(b, is_int, acc, general)
    x_zero = b.and_(b.fcmp_ordered("==", xr, zero), b.fcmp_ordered("==", xi, zero))
    pos_real = b.fcmp_ordered(">", yr, zero)  # (NumPy 2: 0^y = 0 for re y > 0, any im y)
    nan = _c(xr, float("nan"))
    out = select(b, x_zero, select(b, pos_real, make(b, zero, zero), make(b, nan, nan)), out)
    y_zero = b.and_(b.fcmp_ordered("==", yr, zero), b.fcmp_ordered("==", yi, zero))
    return select(b, y_zero, make(b, one, zero), out)


def _annex_g_multiply(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """C's complex product (C99 Annex G, libgcc's __muldc3, which glibc's cpow uses):
    the plain product, unless both of its parts are NaN while an operand or a partial
    product is infinite; then the infinite operand's parts become +-1/+-0 (NaNs +-0) and
    the product is recomputed times inf, so inf * (1 + 1i) is an infinity, not NaN."""
    from ember.codegen.complex_ops import multiply_plain

    (a, bb), (c, d) = parts(b, x), parts(b, y)
    one, zero, inf = _c(a, 1.0), _c(a, 0.0), _c(a, float("inf"))
    plain = multiply_plain(b, x, y)
    re, im = parts(b, plain)
    both_nan = b.and_(isnan(b, re), isnan(b, im))

    def box(v: ir.Value) -> ir.Value:  # inf -> +-1, finite -> +-0 (keeps the sign)
        return _copysign(b, b.select(isinf(b, v), one, zero), v)

    def nan0(v: ir.Value) -> ir.Value:  # NaN -> +-0
        return b.select(isnan(b, v), _copysign(b, zero, v), v)

    x_inf = b.or_(isinf(b, a), isinf(b, bb))
    y_inf = b.or_(isinf(b, c), isinf(b, d))
    a1, b1 = b.select(x_inf, box(a), a), b.select(x_inf, box(bb), bb)
    c1, d1 = b.select(x_inf, nan0(c), c), b.select(x_inf, nan0(d), d)
    c2, d2 = b.select(y_inf, box(c1), c1), b.select(y_inf, box(d1), d1)
    a2, b2 = b.select(y_inf, nan0(a1), a1), b.select(y_inf, nan0(b1), b1)
    partial_inf = b.or_(b.or_(isinf(b, b.fmul(a, c)), isinf(b, b.fmul(bb, d))),
                        b.or_(isinf(b, b.fmul(a, d)), isinf(b, b.fmul(bb, c))))
    third = b.and_(b.not_(b.or_(x_inf, y_inf)), partial_inf)
    a3, b3 = b.select(third, nan0(a2), a2), b.select(third, nan0(b2), b2)
    c3, d3 = b.select(third, nan0(c2), c2), b.select(third, nan0(d2), d2)
    recalc = b.and_(both_nan, b.or_(b.or_(x_inf, y_inf), third))
    re2 = b.fmul(inf, b.fsub(b.fmul(a3, c3), b.fmul(b3, d3)))
    im2 = b.fmul(inf, b.fadd(b.fmul(a3, d3), b.fmul(b3, c3)))
    return make(b, b.select(recalc, re2, re), b.select(recalc, im2, im))


def _int_pow_loop(b: ir.IRBuilder, x: ir.Value, n: ir.Value) -> ir.Value:
    """x^n for 0 <= n < 8 by NumPy's binary powering from 1 (three bits)."""
    from ember.codegen.complex_ops import multiply_plain, select

    xr, _ = parts(b, x)
    acc = make(b, _c(xr, 1.0), _c(xr, 0.0))
    p = x
    for bit in range(3):
        on = b.icmp_unsigned("!=", b.and_(n, ir.Constant(ir.IntType(32), 1 << bit)),
                             ir.Constant(ir.IntType(32), 0))
        acc = select(b, on, multiply_plain(b, acc, p), acc)
        if bit < 2:
            p = multiply_plain(b, p, p)
    return acc


def exp2(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """2^z = exp(z ln 2), both parts scaled (NumPy's exp2 loop)."""
    x, y = parts(b, z)
    ln2 = _c(x, 0.6931471805599453)
    return exp(b, make(b, b.fmul(x, ln2), b.fmul(y, ln2)), m)


def _scaled_log(factor: float):
    """log2 / log10: log z with both parts times log2(e) or log10(e) (NumPy's loops)."""
    def fn(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
        re, im = parts(b, log(b, z, m))
        return make(b, b.fmul(re, _c(re, factor)), b.fmul(im, _c(re, factor)))

    return fn


def rsqrt(b: ir.IRBuilder, z: ir.Value, m: _Math) -> ir.Value:
    """1 / sqrt z by Smith's division (the evaluator's `1 / np.sqrt(x)`)."""
    from ember.codegen.complex_ops import divide

    s = sqrt(b, z, m)
    re, _ = parts(b, s)
    return divide(b, make(b, _c(re, 1.0), _c(re, 0.0)), s)


def _fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    name = f"llvm.fma.{'f32' if str(x.type) == 'float' else 'f64'}"
    fn = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(x.type, [x.type] * 3), name=name)
    return b.call(fn, [x, y, z])


def _sqrt_fn(b: ir.IRBuilder, ty: ir.Type) -> ir.Function:
    name = f"llvm.sqrt.{'f32' if str(ty) == 'float' else 'f64'}"
    return b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(ty, [ty]), name=name)


_FNS = {"exponential": exp, "log": log, "sqrt": sqrt, "sinh": sinh, "cosh": cosh,
        "tanh": tanh, "sine": sin, "cosine": cos, "tan": _rotated(tanh),
        "exponential-minus-one": expm1, "log-plus-one": log1p, "exp2": exp2,
        "log2": _scaled_log(1.4426950408889634), "log10": _scaled_log(0.4342944819032518),
        "rsqrt": rsqrt}
# the complex math opcodes compiled natively (the others' modules run on the interpreter)
OPCODES: frozenset[str] = frozenset({*_FNS, "power"})


def emit(b: ir.IRBuilder, opcode: str, in_types: list[str], args: list[ir.Value],
         precise: bool, math: Any) -> Result:
    """A complex math opcode (see the module docstring); raises NotImplementedError for an
    opcode outside OPCODES (support.py never lets one reach code generation)."""
    if opcode == "power":
        m = _Math(b, math, precise)
        return power(b, args[0], args[1], m), m.flag()
    fn = _FNS.get(opcode)
    if fn is None:
        raise NotImplementedError(f"no complex emitter for {opcode} on {in_types[0]}")
    m = _Math(b, math, precise)
    v = fn(b, args[0], m)
    return v, m.flag()


__all__ = ["OPCODES", "emit", "exp", "log", "sqrt"]
