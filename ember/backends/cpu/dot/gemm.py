"""Ember's own matrix product: packed panels and a register-tile micro-kernel in LLVM IR.

Input: an element type (f32, f64) and the host's vector width. Output: two functions per
type in a library module (compiled once per process, its object code disk-cached like the
BLAS adapter's, `library_object`):

  ember_blas_{s,d}pack_b(tb, k, n, b, ldb, bp, j_begin, j_end)
      packs the columns [j_begin, j_end) (multiples of NR, or n) of op(B) (k x n) into the
      panel layout below; disjoint column ranges may be packed by different threads;
  ember_blas_{s,d}gemm_packed(ta, m, n, k, a, lda, bp, c, ldc)
      C (m x n, row-major, pitch ldc) = op(A) (m x k) times the packed B (all n columns).

Packed B: per block of KC rows (pc = 0, KC, ...: kc = min(KC, k - pc) rows) and per panel
of NR columns (jr = 0, NR, ...), kc rows of NR contiguous elements, zero past n:
    bp[pc * npad + jr * kc + p * NR + j] = op(B)[pc + p, jr + j]      npad = ceil(n / NR) NR
so a product packs B once and every row block of C (any thread) reads the same panels.
A plain B is packed row by row (vector copies); a transposed one by lanes x lanes tiles
transposed in registers (`_transpose`), since its panel rows are B's columns.

The loops (Goto's blocking, B packed up front):

    for jc in [0, n) step NC:                  one block of B columns, KC x NC: stays in L2
      for pc in [0, k) step KC:
        for ic in [0, m) step MC:
          pack A[ic:ic+mc, pc:pc+kc] into MR-row panels: ap[ir * kc + p * MR + i]
          for ir in [0, mc) step MR:           the A panel (MR x kc) stays in L1
            for jr in [jc, jc+nc) step NR:     B panels stream from L2
              C[ir:ir+MR, jr:jr+NR] (+)= A panel @ B panel      (the micro-kernel)

The micro-kernel keeps the MR x NR tile of C in registers: MR rows of NR / lanes vectors
(6 x 4 zmm = 24 of AVX-512's 32 registers; 6 x 2 with 16 registers). Per step p it loads
row p of the B panel (NR / lanes vector loads), broadcasts each A[i, p] and does MR * NR /
lanes fused multiply-adds, enough independent chains to keep both FMA pipes busy (measured
on Zen 4: 116 GFLOP/s f32 with the panels in L1, the peak kernel's 115). Tiles that
overhang m or n are computed into a local MR x NR buffer and their valid part copied.

Invariants: reads A, B only inside op(A)[0:m, 0:k], op(B)[0:k, 0:n] (through their pitches)
and writes C only in [0:m, 0:n]. C[i, j] = sum over the KC blocks in order of each block's
sum over p in order, one lane per (i, j): the value depends neither on how callers split
the rows of C nor on the thread count. k = 0 gives C = 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir

from ember.backends.cpu.jit.host_symbol import HostSymbol
from ember.backends.cpu.jit.llvm_target import vector_bytes
from ember.codegen.irtypes import I1, I32, I64, PTR, VOID, i64
from ember.codegen.loops import Hint, for_span, smax, smin

# strided copies stay scalar: vectorized, they become scatters/gathers (slow on Zen 4)
SCALAR: tuple[Hint, ...] = (("llvm.loop.vectorize.enable", False),)

F32, F64 = ir.FloatType(), ir.DoubleType()
_TYPES = {"s": F32, "d": F64}
PACK_B_TYPE = ir.FunctionType(VOID, [I32, I64, I64, PTR, I64, PTR, I64, I64])
GEMM_PACKED_TYPE = ir.FunctionType(VOID, [I32, I64, I64, I64, PTR, I64, PTR, PTR, I64])
PREFIX = "ember_gemm_"
ENTRIES = tuple(f"{PREFIX}{prec}{what}" for prec in "sd" for what in ("pack_b", "gemm_packed"))


@dataclass(frozen=True)
class Blocking:
    lanes: int   # elements per vector register
    mr: int      # rows of the register tile
    nr: int      # columns of the register tile (a multiple of lanes)
    kc: int      # depth of one block
    mc: int      # rows of one packed A block (a multiple of mr)
    nc: int      # columns of one B block (a multiple of nr)


def blocking(prec: str, features: str) -> Blocking:
    """Tile and blocks for 's' / 'd' on a host with these LLVM features. AVX-512 has 32
    vector registers: 6 x 4 accumulators; otherwise 16: 6 x 2. The A panel (MR x KC,
    6 KB for f32) stays in L1 while the B panels of one KC x NC block (512 KB for f32 on
    AVX-512: half of a 1 MB L2) stream past it from L2."""
    vec_bytes = vector_bytes(features)
    lanes = vec_bytes // (4 if prec == "s" else 8)
    vecs = 4 if vec_bytes == 64 else 2
    kc = 256 if prec == "s" else 128
    return Blocking(lanes, 6, vecs * lanes, kc, 96, 512 // (vecs * lanes) * vecs * lanes)


def prec_of(et: str) -> str:
    """The library's letter for an element type: 'f32' -> 's', 'f64' -> 'd'."""
    return {"f32": "s", "f64": "d"}[et]


def packed_b_elements(nr: int, k: int, n: int) -> int:
    """Elements of the packed B of a k x n operand in panels of `nr` columns (k >= 1 rows
    of n rounded up to whole panels)."""
    return max(1, k) * (-(-n // nr) * nr)


def name(prec: str, what: str) -> str:
    """'s', 'gemm_packed' -> 'ember_gemm_sgemm_packed'."""
    return f"{PREFIX}{prec}{what}"


def declare(module: ir.Module, prec: str, what: str) -> ir.Function:
    """The declaration of a library entry in a generated module."""
    sym = name(prec, what)
    fn = module.globals.get(sym)
    if fn is None:
        fn = ir.Function(module, PACK_B_TYPE if what == "pack_b" else GEMM_PACKED_TYPE, sym)
        fn.attributes.add("nounwind")
    return fn


# -- IR helpers -----------------------------------------------------------------------------


def _at(b: ir.IRBuilder, ty: ir.Type, p: ir.Value, off: ir.Value) -> ir.Value:
    return b.gep(p, [off], inbounds=True, source_etype=ty)


# -- the micro-kernel -----------------------------------------------------------------------


def _define_micro(m: ir.Module, sym: str, ty: ir.Type, q: Blocking) -> ir.Function:
    """micro(kc, ap, bp, c, ldc, acc): C[0:MR, 0:NR] = (acc ? C : 0) + A panel @ B panel."""
    vecs = q.nr // q.lanes
    vty = ir.VectorType(ty, q.lanes)
    fma_name = f"llvm.fma.v{q.lanes}{'f32' if ty == F32 else 'f64'}"
    fma = m.globals.get(fma_name) or ir.Function(m, ir.FunctionType(vty, [vty] * 3), fma_name)
    fn = ir.Function(m, ir.FunctionType(VOID, [I64, PTR, PTR, PTR, I64, I1]), sym)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    fn.attributes.add("noinline")  # two call sites (whole and edge tiles): one copy
    kc, ap, bp, c, ldc, accumulate = fn.args
    for a in (ap, bp, c):
        a.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pre = b.block
    head, body, done = (fn.append_basic_block(s) for s in ("k.head", "k.body", "k.done"))
    b.branch(head)
    b.position_at_end(head)
    p = b.phi(I64, name="p")
    p.add_incoming(i64(0), pre)
    accs = []
    for t in range(q.mr * vecs):
        acc = b.phi(vty, name=f"acc{t}")
        acc.add_incoming(ir.Constant(vty, None), pre)
        accs.append(acc)
    b.cbranch(b.icmp_signed("<", p, kc), body, done)
    b.position_at_end(body)
    brow, arow = b.mul(p, i64(q.nr)), b.mul(p, i64(q.mr))
    bv = [b.load(_at(b, ty, bp, b.add(brow, i64(v * q.lanes))), typ=vty, align=1)
          for v in range(vecs)]
    splat = ir.Constant(ir.VectorType(I32, q.lanes), [0] * q.lanes)
    undef = ir.Constant(vty, ir.Undefined)
    new = []
    for i in range(q.mr):
        s = b.load(_at(b, ty, ap, b.add(arow, i64(i))), typ=ty)
        sv = b.shuffle_vector(b.insert_element(undef, s, ir.Constant(I32, 0)), undef, splat)
        new += [b.call(fma, [sv, bv[v], accs[i * vecs + v]]) for v in range(vecs)]
    p.add_incoming(b.add(p, i64(1), flags=("nsw",)), b.block)
    for acc, v in zip(accs, new):
        acc.add_incoming(v, b.block)
    b.branch(head)
    b.position_at_end(done)
    def store_tile(add: bool) -> None:
        for i in range(q.mr):
            for v in range(vecs):
                ptr = _at(b, ty, c, b.add(b.mul(i64(i), ldc), i64(v * q.lanes)))
                val = accs[i * vecs + v]
                if add:
                    val = b.fadd(b.load(ptr, typ=vty, align=1), val)
                b.store(val, ptr, align=1)

    with b.if_else(accumulate) as (add, first):
        with add:
            store_tile(True)
        with first:
            store_tile(False)
    b.ret_void()
    return fn


# -- packing --------------------------------------------------------------------------------


def _pack(b: ir.IRBuilder, ty: ir.Type, src: ir.Value, s_depth: ir.Value, s_width: ir.Value,
          width_contiguous: ir.Value | None, depth: ir.Value, valid: ir.Value, w: int,
          dst: ir.Value) -> None:
    """dst[p * w + j] = src[p * s_depth + j * s_width] for p < depth, j < w; zero for
    j >= valid (an edge panel's padding). Full panels copy contiguous runs: rows of w
    elements when the width is contiguous, else w lines along the depth
    (`width_contiguous` None: never contiguous, the rows variant is not emitted)."""
    zero = ir.Constant(ty, 0.0)

    def rows() -> None:
        def row(p: ir.Value) -> None:
            s0, d0 = _at(b, ty, src, b.mul(p, s_depth)), _at(b, ty, dst, b.mul(p, i64(w)))
            for j in range(w):
                b.store(b.load(_at(b, ty, s0, i64(j)), typ=ty), _at(b, ty, d0, i64(j)))
        for_span(b, i64(0), depth, row, "pk.row")

    def lines() -> None:
        if w <= 16:  # A panels: per step, one element of each of the w lines
            def step(p: ir.Value) -> None:
                d0 = _at(b, ty, dst, b.mul(p, i64(w)))
                for j in range(w):
                    line = _at(b, ty, src, b.mul(i64(j), s_width))
                    b.store(b.load(_at(b, ty, line, p), typ=ty), _at(b, ty, d0, i64(j)))
            for_span(b, i64(0), depth, step, "pk.line", SCALAR)
            return

        def line(j: ir.Value) -> None:  # wide panels of a transposed B: line by line
            s0, d0 = _at(b, ty, src, b.mul(j, s_width)), _at(b, ty, dst, j)

            def step(p: ir.Value) -> None:
                b.store(b.load(_at(b, ty, s0, p), typ=ty), _at(b, ty, d0, b.mul(p, i64(w))))
            for_span(b, i64(0), depth, step, "pk.step", SCALAR)
        for_span(b, i64(0), i64(w), line, "pk.line")

    with b.if_else(b.icmp_signed(">=", valid, i64(w)), likely=True) as (full, edge):
        with full:
            if width_contiguous is None:
                lines()
            else:
                with b.if_else(width_contiguous) as (by_rows, by_lines):
                    with by_rows:
                        rows()
                    with by_lines:
                        lines()
        with edge:  # rare: a runtime loop over the panel's width
            def step_edge(p: ir.Value) -> None:
                def col(j: ir.Value) -> None:
                    inside = b.icmp_signed("<", j, valid)
                    off = b.select(inside, b.add(b.mul(p, s_depth), b.mul(j, s_width)), i64(0))
                    v = b.select(inside, b.load(_at(b, ty, src, off), typ=ty), zero)
                    b.store(v, _at(b, ty, dst, b.add(b.mul(p, i64(w)), j)))
                for_span(b, i64(0), i64(w), col, "pk.col", SCALAR)
            for_span(b, i64(0), depth, step_edge, "pk.edge", SCALAR)


def _transpose(b: ir.IRBuilder, rows: list[ir.Value]) -> list[ir.Value]:
    """The transpose of a square tile held as L vectors of L lanes (out[i][l] = rows[l][i]),
    in log2 L butterfly stages: for each bit k, rows i and i + k (bit k of i clear) swap
    the lanes where bit k of the lane differs from bit k of the row. Two-input constant
    shuffles, which the x86 backend turns into unpack / permute instructions."""
    r = list(rows)
    n = len(r)
    i32 = ir.IntType(32)
    k = n // 2
    while k:
        lo = ir.Constant(ir.VectorType(i32, n), [l if not l & k else l - k + n for l in range(n)])
        hi = ir.Constant(ir.VectorType(i32, n), [l + k if not l & k else l + n for l in range(n)])
        for i in range(n):
            if not i & k:
                a, c = r[i], r[i + k]
                r[i], r[i + k] = b.shuffle_vector(a, c, lo), b.shuffle_vector(a, c, hi)
        k //= 2
    return r


def _define_pack_b(m: ir.Module, prec: str, q: Blocking) -> ir.Function:
    ty = _TYPES[prec]
    fn = ir.Function(m, PACK_B_TYPE, name(prec, "pack_b"))
    fn.attributes.add("nounwind")
    tb32, kk, nn, bb, ldb, bp, j_begin, j_end = fn.args
    vty = ir.VectorType(ty, q.lanes)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tb = b.icmp_signed("!=", tb32, ir.Constant(I32, 0))
    # op(B)[p, j] = bb[p * ldb + j], or bb[j * ldb + p] when transposed
    s_depth, s_width = b.select(tb, i64(1), ldb), b.select(tb, ldb, i64(1))
    npad = b.mul(b.sdiv(b.add(nn, i64(q.nr - 1)), i64(q.nr)), i64(q.nr))

    # whole panels (the last may overhang n: packed by _pack with its zero padding)
    j_full = smin(b, j_end, b.mul(b.sdiv(nn, i64(q.nr)), i64(q.nr)))

    def block(pc: ir.Value) -> None:
        kc = smin(b, i64(q.kc), b.sub(kk, pc))
        base = b.mul(pc, npad)

        def panel(jr: ir.Value) -> None:  # one panel at a time (transposed B, edges)
            src = _at(b, ty, bb, b.add(b.mul(pc, s_depth), b.mul(jr, s_width)))
            dst = _at(b, ty, bp, b.add(base, b.mul(jr, kc)))
            # (whole panels get here only when B is transposed: lines, never rows)
            _pack(b, ty, src, s_depth, s_width, None, kc, b.sub(nn, jr), q.nr, dst)

        with b.if_else(tb) as (transposed, plain):
            with transposed:
                # whole panels by square tiles transposed in registers: lanes lines of B
                # (columns of op(B)) loaded along the depth, stored as lanes panel rows
                def tiles(jr: ir.Value) -> None:
                    dst = _at(b, ty, bp, b.add(base, b.mul(jr, kc)))
                    deep = b.mul(b.sdiv(kc, i64(q.lanes)), i64(q.lanes))

                    def tile(p0: ir.Value) -> None:
                        for jb in range(0, q.nr, q.lanes):
                            lines = [b.load(_at(b, ty, bb, b.add(
                                b.mul(b.add(jr, i64(jb + t)), ldb), b.add(pc, p0))),
                                typ=vty, align=1) for t in range(q.lanes)]
                            for d, v in enumerate(_transpose(b, lines)):
                                row = b.mul(b.add(p0, i64(d)), i64(q.nr))
                                b.store(v, _at(b, ty, dst, b.add(row, i64(jb))), align=1)

                    def rest(p: ir.Value) -> None:  # the last kc mod lanes steps
                        def col(j: ir.Value) -> None:
                            v = b.load(_at(b, ty, bb, b.add(b.mul(b.add(jr, j), ldb),
                                                            b.add(pc, p))), typ=ty)
                            b.store(v, _at(b, ty, dst, b.add(b.mul(p, i64(q.nr)), j)))
                        for_span(b, i64(0), i64(q.nr), col, "tcol", SCALAR)
                    for_span(b, i64(0), deep, tile, "tp", step=q.lanes)
                    for_span(b, deep, kc, rest, "trest")
                for_span(b, j_begin, j_full, tiles, "jt", step=q.nr)
                for_span(b, smax(b, j_full, j_begin), j_end, panel, "jtedge", step=q.nr)
            with plain:
                # row by row: each row of B is read front to back (the prefetchers follow
                # it; panel by panel would read kc rows a pitch apart, a page each)
                def row(p: ir.Value) -> None:
                    src = _at(b, ty, bb, b.mul(b.add(pc, p), ldb))
                    dst = _at(b, ty, bp, b.add(base, b.mul(p, i64(q.nr))))

                    def chunk(jr: ir.Value) -> None:
                        s0, d0 = _at(b, ty, src, jr), _at(b, ty, dst, b.mul(jr, kc))
                        for j in range(0, q.nr, q.lanes):
                            v = b.load(_at(b, ty, s0, i64(j)), typ=vty, align=1)
                            b.store(v, _at(b, ty, d0, i64(j)), align=1)
                    for_span(b, j_begin, j_full, chunk, "jr", step=q.nr)
                for_span(b, i64(0), kc, row, "p")
                # the overhanging panel, if it is in [j_begin, j_end)
                for_span(b, smax(b, j_full, j_begin), j_end, panel, "jedge", step=q.nr)

    for_span(b, i64(0), kk, block, "pc", step=q.kc)
    b.ret_void()
    return fn


# -- the blocked product --------------------------------------------------------------------


def _define_gemm_packed(m: ir.Module, prec: str, q: Blocking) -> ir.Function:
    ty = _TYPES[prec]
    micro = _define_micro(m, f"{name(prec, 'gemm')}.micro", ty, q)
    memset = m.globals.get("llvm.memset.p0.i64") or ir.Function(
        m, ir.FunctionType(VOID, [PTR, ir.IntType(8), I64, I1]), "llvm.memset.p0.i64")
    fn = ir.Function(m, GEMM_PACKED_TYPE, name(prec, "gemm_packed"))
    fn.attributes.add("nounwind")
    ta32, mm, nn, kk, a, lda, bp, c, ldc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    size = 4 if ty == F32 else 8
    tile = b.alloca(ty, size=i64(q.mr * q.nr))
    tile.align = 64
    # the packed A block on the stack (MC x KC: 96 KB; no allocation that could fail)
    ap = b.alloca(ty, size=i64(q.mc * q.kc))
    ap.align = 64
    with b.if_then(b.icmp_signed("<=", kk, i64(0)), likely=False):  # C = 0 (empty sums)
        def zero_row(i: ir.Value) -> None:
            b.call(memset, [_at(b, ty, c, b.mul(i, ldc)), ir.Constant(ir.IntType(8), 0),
                            b.mul(nn, i64(size)), ir.Constant(I1, 0)])
        for_span(b, i64(0), mm, zero_row, "z")
    ta = b.icmp_signed("!=", ta32, ir.Constant(I32, 0))
    # op(A)[i, p] = a[i * lda + p], or a[p * lda + i] when transposed; a panel's width
    # (its MR rows) is contiguous in memory only when A is transposed
    s_depth, s_width = b.select(ta, lda, i64(1)), b.select(ta, i64(1), lda)
    npad = b.mul(b.sdiv(b.add(nn, i64(q.nr - 1)), i64(q.nr)), i64(q.nr))

    def jc_block(jc: ir.Value) -> None:
        nc = smin(b, i64(q.nc), b.sub(nn, jc))

        def pc_block(pc: ir.Value) -> None:
            kc = smin(b, i64(q.kc), b.sub(kk, pc))
            accumulate = b.icmp_signed("!=", pc, i64(0))

            def ic_block(ic: ir.Value) -> None:
                mc = smin(b, i64(q.mc), b.sub(mm, ic))

                def pack_a(ir_: ir.Value) -> None:
                    src = _at(b, ty, a, b.add(b.mul(pc, s_depth), b.mul(b.add(ic, ir_), s_width)))
                    _pack(b, ty, src, s_depth, s_width, ta, kc, b.sub(mc, ir_), q.mr,
                          _at(b, ty, ap, b.mul(ir_, kc)))

                for_span(b, i64(0), mc, pack_a, "pa", step=q.mr)

                def tile_at(ir_: ir.Value, jr: ir.Value) -> None:
                    a_panel = _at(b, ty, ap, b.mul(ir_, kc))
                    b_panel = _at(b, ty, bp, b.add(b.mul(pc, npad), b.mul(jr, kc)))
                    cptr = _at(b, ty, c, b.add(b.mul(b.add(ic, ir_), ldc), jr))
                    rows = smin(b, i64(q.mr), b.sub(mc, ir_))
                    cols = smin(b, i64(q.nr), b.sub(nn, jr))
                    full = b.and_(b.icmp_signed("==", rows, i64(q.mr)),
                                  b.icmp_signed("==", cols, i64(q.nr)))
                    with b.if_else(full, likely=True) as (inside, edge):
                        with inside:
                            b.call(micro, [kc, a_panel, b_panel, cptr, ldc, accumulate])
                        with edge:
                            with b.if_then(accumulate):
                                _copy_tile(b, ty, q, cptr, ldc, tile, rows, cols, True)
                            b.call(micro, [kc, a_panel, b_panel, tile, i64(q.nr), accumulate])
                            _copy_tile(b, ty, q, cptr, ldc, tile, rows, cols, False)

                def a_panel_row(ir_: ir.Value) -> None:  # the A panel stays in L1
                    for_span(b, jc, b.add(jc, nc), lambda jr: tile_at(ir_, jr), "jr",
                             step=q.nr)

                for_span(b, i64(0), mc, a_panel_row, "ir", step=q.mr)

            for_span(b, i64(0), mm, ic_block, "ic", step=q.mc)

        for_span(b, i64(0), kk, pc_block, "pc", step=q.kc)

    for_span(b, i64(0), nn, jc_block, "jc", step=q.nc)
    b.ret_void()
    return fn


def _copy_tile(b: ir.IRBuilder, ty: ir.Type, q: Blocking, cptr: ir.Value, ldc: ir.Value,
               tile: ir.Value, rows: ir.Value, cols: ir.Value, into_tile: bool) -> None:
    """The valid rows x cols corner between C and the local tile (pitch NR)."""
    def row(r: ir.Value) -> None:
        def col(j: ir.Value) -> None:
            t = _at(b, ty, tile, b.add(b.mul(r, i64(q.nr)), j))
            g = _at(b, ty, cptr, b.add(b.mul(r, ldc), j))
            src, dst = (g, t) if into_tile else (t, g)
            b.store(b.load(src, typ=ty), dst)
        for_span(b, i64(0), cols, col, "tc")
    for_span(b, i64(0), rows, row, "tr")


def library_ir(features: str) -> str:
    """IR text of the library module: pack_b and gemm_packed for f32 and f64."""
    m = ir.Module(name="ember_gemm")
    for prec in ("s", "d"):
        q = blocking(prec, features)
        _define_pack_b(m, prec, q)
        _define_gemm_packed(m, prec, q)
    return str(m)


def _load_library(llvm: Any) -> Any:
    """Load the library and publish its entries to the JIT linker; returns its engine, kept
    for the life of the process (`llvm`, the binding module, is the host target's own)."""
    from ember.backends.cpu.jit import disk_cache, llvm_target

    t = llvm_target.target()
    # keyed by the target and, through make_key, by Ember's source hash
    obj = disk_cache.cached_object("ember-gemm-library", "library", t.key,
                                   {"what": "GEMM library"},
                                   lambda: compile_library(t.features))
    return llvm_target.link_library(obj, ENTRIES)


LIBRARY = HostSymbol(_load_library)


def register_symbols(llvm: Any = None) -> None:
    """Load the library (once per process) and publish its entries to the JIT linker;
    called before loading object code that names them (llvm_target.load_object)."""
    LIBRARY.register(llvm)


def compile_library(features: str) -> bytes:
    """Object code of the library with the blocking of a host with these features."""
    from ember.backends.cpu.jit import llvm_target

    mod = llvm_target.parse_and_verify(library_ir(features))
    # No IR pipeline: the code is vector code already (the micro-kernel's loop compiles to
    # the same FMA schedule without it), and the pipeline took 0.8 of the 0.9 s this
    # costs a process once per machine; GEMM speed unchanged (measured 2026-12-03).
    return llvm_target.emit_object(mod)
