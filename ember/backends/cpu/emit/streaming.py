"""Streaming stores: a kernel's large output written with non-temporal stores.

Input: an output buffer, a range [begin, end) of its elements (row-major numbering) and a
body that produces element i's value. Output: IR storing every element of the range once:
  head   elements up to the first 64-byte boundary, with ordinary stores;
  tiles  of TILE_BYTES: the body fills an aligned stack tile (an ordinary loop the
         vectorizer widens), then the tile is copied out by 64-byte vector stores marked
         `!nontemporal` (x86: vmovntps/vmovntpd), one cache line per store;
  tail   what is left, with ordinary stores;
then an `sfence`, so the streamed lines are visible before the pool reports the chunk done.
Why: an ordinary store to a line not in cache first reads the line from memory (a
read-for-ownership), so a kernel that reads one array and writes another moves three
arrays through the memory bus; a non-temporal store writes the line without reading it.
That is worth it only when the output would not stay in cache for its next reader anyway:
outputs of at least NT_MIN_BYTES (the last-level cache of a desktop CPU). The values stored
are the body's, bit for bit: only how they reach memory changes.
Invariants: x86-64 only (`enabled()`); not for pred or complex outputs (their elements are
not one LLVM scalar a vector of the tile can hold); every non-temporal store is 64-byte
aligned (the head is computed from the runtime address; an element not aligned to its own
size, never the case for Ember's or NumPy's buffers, makes the whole range take ordinary
stores).
"""

from __future__ import annotations

import platform
from collections.abc import Callable

import llvmlite.ir as ir

from ember.codegen.elemental import Buf
from ember.codegen.irtypes import I64, i64, mem_type
from ember.codegen.loops import VECTOR_NO_UNROLL, for_span
from ember.hlo.ir import Instruction
from ember.hlo.opcodes import MATH_OPCODES
from ember.hlo.shape import Shape, bit_width

NT_MIN_BYTES = 8 << 20  # outputs at least this large stream past the caches
TILE_BYTES = 1024  # 16 cache lines per tile: the fill loop runs long enough to vectorize
LINE = 64

Put = Callable[[ir.Value], None]


def enabled(out: Shape) -> bool:
    """Whether an output buffer of this shape is streamed (row-major, its elements in order:
    what `for_streaming` writes)."""
    et = out.element_type
    return (out.is_row_major and out.size * (bit_width(et) // 8) >= NT_MIN_BYTES
            and et not in ("pred", "c64", "c128") and LINE % max(1, bit_width(et) // 8) == 0
            and platform.machine().lower() in ("x86_64", "amd64"))


def math_heavy(root: Instruction) -> bool:
    """Whether the element code of `root` (its fused graph, read through its operands)
    computes a transcendental (MATH_OPCODES: exp, log, sin, erf, ...)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        inst = stack.pop()
        if id(inst) in seen:
            continue
        seen.add(id(inst))
        if inst.opcode in MATH_OPCODES:
            return True
        stack.extend(inst.operands)
    return False


def for_streaming(b: ir.IRBuilder, out: Buf, begin: ir.Value, end: ir.Value,
                  body: Callable[[ir.Value, Put], None], name: str = "nt",
                  rolled: bool = True) -> None:
    """For i in [begin, end): body(i, put) with put(v) storing element i of `out` (row-major
    `out`; see the module docstring for how). `rolled`: keep the tile's fill loop from
    being unrolled whole (for math-heavy bodies, `math_heavy`; a cheap body, such as a
    layernorm's epilogue, runs faster unrolled)."""
    mty = mem_type(out.shape.element_type)
    size = bit_width(out.shape.element_type) // 8
    per_tile = TILE_BYTES // size
    per_line = LINE // size
    entry = b.function.entry_basic_block
    with b.goto_block(entry):
        b.position_at_start(entry)
        tile = b.alloca(mty, size=i64(per_tile))
        tile.align = LINE

    def ordinary(i: ir.Value) -> None:
        body(i, lambda v: b.store(v, b.gep(out.ptr, [i], inbounds=True, source_etype=mty)))

    # head: elements before the first line boundary (all of them when the address is not
    # a multiple of the element size, so no streamed store is ever misaligned)
    addr = b.ptrtoint(b.gep(out.ptr, [begin], inbounds=True, source_etype=mty), I64)
    mis = b.and_(addr, i64(LINE - 1))
    to_line = b.udiv(b.and_(b.sub(i64(LINE), mis), i64(LINE - 1)), i64(size))
    odd = b.icmp_unsigned("!=", b.and_(addr, i64(size - 1)), i64(0))
    head = b.select(odd, b.sub(end, begin), to_line)
    head_end = b.select(b.icmp_signed("<", b.add(begin, head), end), b.add(begin, head), end)
    for_span(b, begin, head_end, ordinary, name=f"{name}.head")

    tiles = b.sdiv(b.sub(end, head_end), i64(per_tile))

    def one_tile(t: ir.Value) -> None:
        base = b.add(head_end, b.mul(t, i64(per_tile), flags=("nuw", "nsw")), flags=("nuw", "nsw"))

        def fill(j: ir.Value) -> None:
            i = b.add(base, j, flags=("nuw", "nsw"))
            body(i, lambda v: b.store(v, b.gep(tile, [j], inbounds=True, source_etype=mty)))

        # rolled: the vectorizer's loop of constant trip count (TILE_BYTES / 64 vectors)
        # would otherwise be unrolled whole, and a math-heavy body (erf's 10 table rows,
        # erfc) then kept 16 vectors' temporaries live at once: 66 spills per tile for the
        # table erf over 1e7 f32, none in the rolled loop
        # (a layernorm's cheap epilogue instead loses 20% rolled: 0.46 -> 0.57 ms at
        # 4096x1024 f32, so only math-heavy bodies stay rolled)
        for_span(b, i64(0), i64(per_tile), fill, name=f"{name}.fill",
                 hints=VECTOR_NO_UNROLL if rolled else ())
        vty = ir.VectorType(mty, per_line)
        for k in range(per_tile // per_line):
            src = b.gep(tile, [i64(k * per_line)], inbounds=True, source_etype=mty)
            vec = b.load(src, typ=vty)
            vec.align = LINE
            dst = b.gep(out.ptr, [b.add(base, i64(k * per_line))], inbounds=True,
                        source_etype=mty)
            st = b.store(vec, dst)
            st.align = LINE
            st.set_metadata("nontemporal", b.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))

    for_span(b, i64(0), tiles, one_tile, name=f"{name}.tile")
    tail = b.add(head_end, b.mul(tiles, i64(per_tile)))
    for_span(b, tail, end, ordinary, name=f"{name}.tail")
    fence(b)


def fence(b: ir.IRBuilder) -> None:
    """sfence: streamed stores are weakly ordered; this orders them before later stores
    (the pool's done counter), so another thread that sees the chunk done sees its data."""
    m = b.module
    fn = m.globals.get("llvm.x86.sse.sfence")
    if fn is None:
        fn = ir.Function(m, ir.FunctionType(ir.VoidType(), []), name="llvm.x86.sse.sfence")
    b.call(fn, [])


__all__ = ["NT_MIN_BYTES", "enabled", "fence", "for_streaming"]
