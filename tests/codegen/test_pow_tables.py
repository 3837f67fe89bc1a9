"""The table-driven pow (mathlib f32_powers, powers, vec, pow_tables): its two code paths
and its accuracy where the tables make it delicate.

- The AVX-512 path (a vector variant looking tables up with vpermi2var, a branchy fast
  path, vscalefpd) and the fallback (the scalar helper inlined, table loads that the
  vectorizer turns into gathers) give bit-identical results, f32 and f64, on random pairs,
  special values, subnormal bases, bases at every table subinterval's edges and huge t.
  Both are compiled here explicitly, in a small loop kernel of our own (the fallback is
  what a host without AVX-512 runs).
- In the AVX-512 path, a lane computed by the vector variant equals the scalar helper's
  (the loop's tail), a block of lanes forced onto the slow path by one special lane
  equals the fast path's values, and the variants for other lane counts (wrappers of the
  native one) equal it.
- Against mpmath at the tables' edges, near x = 1 with huge y, and where the result
  overflows, underflows or is subnormal: within 2 ulp (f64) and 1 ulp of the double result
  rounded to f32 (f32: see f32_powers' error budget).
"""

from __future__ import annotations

import ctypes
import struct

import llvmlite.ir as ir
import mpmath as mp
import numpy as np
import pytest
from codegen_util import ulp_distance

from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.mathlib import powers
from ember.backends.cpu.mathlib.f32 import powers as f32_powers
from ember.backends.cpu.mathlib.tables import pow_tables
from ember.backends.cpu.mathlib.vec import permute_tables

HAS_AVX512 = permute_tables()
needs_avx512 = pytest.mark.skipif(not HAS_AVX512, reason="host lacks AVX-512")
DT = {"f32": np.float32, "f64": np.float64}
_KEEP: list[object] = []  # engines own their code: keep them alive


def _loop_kernel(name: str, et: str, lanes: int, callee_of):
    """A compiled loop `out[i:i+L] = callee(x[i:i+L], y[i:i+L])` over n elements (L =
    `lanes`, scalars for 0), `callee_of(module)` giving the function to call; returns
    (call(x, y) -> out, optimized IR text)."""
    ty = ir.FloatType() if et == "f32" else ir.DoubleType()
    vty = ty if lanes == 0 else ir.VectorType(ty, lanes)
    mod = ir.Module(name=name)
    ptr, i64 = ir.PointerType(), ir.IntType(64)
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr, i64]), name="k")
    for a in fn.args[:3]:
        a.add_attribute("noalias")
    callee = callee_of(mod)
    entry, loop, done = (fn.append_basic_block(n) for n in ("entry", "loop", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", fn.args[3], ir.Constant(i64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    align = 4 if et == "f32" else 8  # element alignment: NumPy's buffers promise no more
    xv = b.load(b.gep(fn.args[0], [i], source_etype=ty), typ=vty, align=align)
    yv = b.load(b.gep(fn.args[1], [i], source_etype=ty), typ=vty, align=align)
    b.store(b.call(callee, [xv, yv]), b.gep(fn.args[2], [i], source_etype=ty), align=align)
    nxt = b.add(i, ir.Constant(i64, max(lanes, 1)))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, fn.args[3]), loop, done)
    b.position_at_end(done)
    b.ret_void()
    llmod = llvm_target.parse_and_verify(str(mod))
    llvm_target.optimize(llmod)
    text = str(llmod)
    engine, addr = llvm_target.load_object(llvm_target.emit_object(llmod), "k")
    _KEEP.append(engine)
    cfn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_int64)(addr)

    def call(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
        out = np.empty_like(x)
        cfn(x.ctypes.data, y.ctypes.data, out.ctypes.data, len(x))
        return out

    return call, text


def _pow_helper(mod: ir.Module, et: str, permute: bool) -> ir.Function:
    if et == "f32":
        return f32_powers.pow_fn(mod, permute)
    return powers.pow_fn(mod, ir.DoubleType(), permute)


def _kernel(et: str, permute: bool):
    """A compiled `out[i] = pow(x[i], y[i])` loop over n elements, with the AVX-512 path
    (`permute`) or the fallback; returns (call(x, y) -> out, optimized IR text)."""
    return _loop_kernel(f"pow_{et}_{permute}", et, 0,
                        lambda mod: _pow_helper(mod, et, permute))


def _wrapper_kernel(et: str, lanes: int):
    """`out[i:i+lanes] = ember.pow.v<lanes>(x[i:i+lanes], y[i:i+lanes])` over whole
    vectors, called directly (the variants the vectorizer picks for other lane counts)."""
    def variant(mod: ir.Module) -> ir.Function:
        _pow_helper(mod, et, True)
        return mod.get_global(f"ember.pow.v{lanes}{et}")

    return _loop_kernel(f"powv_{et}_{lanes}", et, lanes, variant)[0]


def _edges(et: str) -> np.ndarray:
    """Bases at both edges of every table subinterval (in several binades), at 1 +- a few
    ulps, subnormal and the largest finite."""
    dt = DT[et]
    shift, off = (19, pow_tables.OFF32_BITS) if et == "f32" else (48, powers.OFF64_BITS)
    ity = np.uint32 if et == "f32" else np.uint64
    bits = [off + (i << shift) + d for i in range(17) for d in (-2, -1, 0, 1)]
    m = np.array(bits, dtype=ity).view(dt)
    scales = np.array([1.0, 2.0, 0.5, 2.0 ** 20, 2.0 ** -30], dtype=dt)
    ulp_up, ulp_down = np.finfo(dt).eps, np.finfo(dt).epsneg
    near1 = np.array([1 + k * ulp_up for k in (1, 2, 7)] + [1 - k * ulp_down for k in (1, 2, 7)],
                     dtype=dt)
    tiny = np.finfo(dt).tiny
    extra = np.array([tiny, tiny / 3, tiny / 2 ** 10, np.finfo(dt).max,
                      np.nextafter(dt(0), dt(1))], dtype=dt)
    return np.concatenate([(m[:, None] * scales[None, :]).ravel(), near1, extra])


def _pairs(et: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs over the whole range, specials mixed in, plus the edge bases with y
    giving |y log2 x| across the finite, overflow and underflow ranges."""
    dt = DT[et]
    rng = np.random.default_rng(seed)
    lim = 126 if et == "f32" else 1020
    x = np.exp2(rng.uniform(-lim, lim, n)) * rng.choice([1, 1, 1, -1], n)
    y = rng.uniform(-40, 40, n)
    y[: n // 4] = np.round(y[: n // 4])
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, -2.0])
    xs = rng.choice(special, n // 8)
    ys = rng.choice(special, n // 8)
    e = _edges(et).astype(np.float64)
    with np.errstate(all="ignore"):
        lg = np.log2(np.abs(e))
        tmax = 160 if et == "f32" else 1100
        t = rng.uniform(-tmax, tmax, (8, len(e)))
        ye = np.where(lg != 0, t / lg, t).ravel()
    xe = np.tile(e, 8)
    with np.errstate(all="ignore"):
        xa = np.concatenate([x, xs, rng.choice(x, n // 8), xe]).astype(dt)
        ya = np.concatenate([y, rng.choice(y, n // 8), ys, ye]).astype(dt)
    return xa, ya


def _same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: identical bits, or both NaN."""
    return (a.view(np.uint8).reshape(len(a), -1) == b.view(np.uint8).reshape(len(b), -1)
            ).all(axis=1) | (np.isnan(a) & np.isnan(b))


@needs_avx512
@pytest.mark.parametrize("et", ["f32", "f64"])
def test_permute_path_uses_vector_variant(et):
    """The vectorizer calls the variant, which the late always-inliner then inlines: the
    main vector loop itself holds the permute lookups, no call of the native variant."""
    _, text = _kernel(et, True)
    loop = text[text.index('define void @"k"') if 'define void @"k"' in text
                else text.index("define void @k"):]
    loop = loop[:loop.index("\n}\n")]
    lanes = 16 if et == "f32" else 8
    # (an epilogue loop of other widths may still call a wrapper, which is not inlined)
    assert "vpermi2var.pd.512" in loop and f"@ember.pow.v{lanes}{et}(" not in loop
    assert "masked.gather" not in text
    _, fallback = _kernel(et, False)
    assert "@ember.pow.v" not in fallback


@needs_avx512
@pytest.mark.parametrize("et", ["f32", "f64"])
def test_permute_and_fallback_bit_identical(et):
    x, y = _pairs(et, 20_000, 7)
    fast, _ = _kernel(et, True)
    slow, _ = _kernel(et, False)
    a, b = fast(x, y), slow(x, y)
    bad = np.flatnonzero(~_same_bits(a, b))
    assert bad.size == 0, [(x[i], y[i], a[i], b[i]) for i in bad[:5]]


@needs_avx512
@pytest.mark.parametrize("et", ["f32", "f64"])
def test_vector_lanes_equal_scalar_tail_and_slow_path(et):
    dt = DT[et]
    x, y = _pairs(et, 3000, 11)
    k, _ = _kernel(et, True)
    full = k(x, y)
    # each element alone runs the scalar helper (n = 1 is below the vector width)
    alone = np.array([k(x[i:i + 1], y[i:i + 1])[0] for i in range(len(x))], dtype=dt)
    bad = np.flatnonzero(~_same_bits(full, alone))
    assert bad.size == 0, [(x[i], y[i], full[i], alone[i]) for i in bad[:5]]
    # common lanes only, then the same with one special lane per vector (lanes 1.. of
    # each block then take the slow path)
    lanes = 16 if et == "f32" else 8
    rng = np.random.default_rng(3)
    n = lanes * 200
    xc = np.exp2(rng.uniform(-20, 20, n)).astype(dt)
    yc = rng.uniform(-30, 30, n).astype(dt)
    ref = k(xc, yc)
    xs = xc.copy()
    xs[::lanes] = -1.5
    mixed = k(xs, yc)
    keep = np.arange(n) % lanes != 0
    assert np.array_equal(mixed[keep], ref[keep])


@needs_avx512
@pytest.mark.parametrize("et", ["f32", "f64"])
def test_other_lane_counts_equal_native(et):
    """The wrappers for a quarter, half and twice the native lane count (what the
    vectorizer picks on hosts preferring 256-bit vectors, or in loops mixing widths)."""
    native = 16 if et == "f32" else 8
    x, y = _pairs(et, 4000, 13)
    n = len(x) - len(x) % (2 * native)
    x, y = np.ascontiguousarray(x[:n]), np.ascontiguousarray(y[:n])
    ref = _wrapper_kernel(et, native)(x, y)
    for lanes in (native // 4, native // 2, 2 * native):
        got = _wrapper_kernel(et, lanes)(x, y)
        bad = np.flatnonzero(~_same_bits(got, ref))
        assert bad.size == 0, (lanes, [(x[i], y[i], got[i], ref[i]) for i in bad[:5]])


def _mp_pow(x: float, y: float) -> float:
    if x < 0:
        return float((-1) ** int(y) * mp.power(-mp.mpf(x), mp.mpf(y)))
    return float(mp.power(mp.mpf(x), mp.mpf(y)))


@pytest.mark.parametrize("et", ["f32", "f64"])
def test_table_edges_against_mpmath(et):
    dt = DT[et]
    rng = np.random.default_rng(5)
    e = _edges(et)
    e = e[(e > 0) & np.isfinite(e)].astype(np.float64)
    tmax = 152 if et == "f32" else 1080
    t = rng.uniform(-tmax, tmax, (3, len(e)))
    with np.errstate(all="ignore"):
        lg = np.log2(e)
        y = np.where(lg != 0, t / lg, rng.uniform(-50, 50, (3, len(e)))).ravel()
    x = np.tile(e, 3)
    with np.errstate(all="ignore"):
        x, y = x.astype(dt), y.astype(dt)
    keep = np.isfinite(y)
    x, y = x[keep], y[keep]
    mp.mp.dps = 40
    with np.errstate(all="ignore"):
        want = np.array([_mp_pow(float(a), float(b)) for a, b in zip(x, y)]).astype(dt)
    call = _kernel(et, HAS_AVX512)[0]
    got = call(x, y)
    d = ulp_distance(got, want)
    w = int(np.argmax(d))
    assert d.max() <= (1 if et == "f32" else 2), (x[w], y[w], got[w], want[w], int(d.max()))


def test_table_constants_are_consistent():
    """OFF64_BITS is OFF32_BITS's value; subinterval 10 holds 1 with c = 1 (log c = 0, so
    log x near 1 keeps the polynomial's relative accuracy); INVC and the log tables agree;
    r stays within the fitted range and below |log c|."""
    assert struct.unpack("<f", struct.pack("<I", pow_tables.OFF32_BITS))[0] == \
        struct.unpack("<d", struct.pack("<Q", powers.OFF64_BITS))[0]
    assert pow_tables.POW32_INVC[10] == 1.0 and pow_tables.POW32_LOG2C[10] == 0.0
    assert pow_tables.POW64_LOGC_HI[10] == 0.0
    f32 = np.uint32
    for i, (ic, l2, lh) in enumerate(zip(pow_tables.POW32_INVC, pow_tables.POW32_LOG2C,
                                         pow_tables.POW64_LOGC_HI)):
        assert abs(l2 + np.log2(ic)) < 1e-15 and abs(lh + np.log(ic)) < 1e-15
        # powers._log_dd's fast two-sums need |r| <= |log c| (else c = 1, log c = 0)
        ends = np.array([pow_tables.OFF32_BITS + (i << 19), pow_tables.OFF32_BITS
                         + ((i + 1) << 19)], dtype=f32).view(np.float32).astype(np.float64)
        rs = ends * ic - 1
        assert pow_tables.R_LO - 1e-15 <= rs.min() and rs.max() <= pow_tables.R_HI + 1e-15
        assert np.abs(rs).max() <= abs(lh) or (ic == 1.0 and lh == 0.0)


@needs_avx512
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_constant_argument_keeps_the_vector_variant(dtype, x64):
    """x ** 1.7 (one constant argument at every call): the jitted loop still calls the
    vector variant. The scalar helper stays in llvm.compiler.used so interprocedural
    constant propagation cannot delete its parameter (it did: the loop then called a
    one-argument scalar pow per element, 40x slower)."""
    import ember
    import ember.numpy as jnp

    x = np.linspace(0.5, 4.0, 1000).astype(dtype)
    for fn in (lambda v: v ** 1.7, lambda v: jnp.power(dtype(2.0), v)):
        c = ember.jit(fn).lower(x).compile()
        text = str(c.llvm_ir())
        kernel = text[text.index("define void @ember_"):]
        kernel = kernel[:kernel.index("\n}\n")]
        # (the variant, inlined: its table lookups; never the scalar helper per element)
        assert "vpermi2var" in kernel and "@ember.pow.f" not in kernel
        np.testing.assert_allclose(np.asarray(ember.jit(fn)(x)), fn(x), rtol=1e-6)
