"""Sort kernels: a stable merge sort per row, the comparator computation inlined.

Input: an LLVM function being built, the sort instruction (operands of one shape, a
`dimension`, a comparator `to_apply` taking (lhs0, rhs0, lhs1, rhs1, ...) to pred), its
input buffers, one output buffer per operand and one work buffer per operand (scratch of
the operand's size, from the executable's scratch block). Output: the kernel body.

Rows: every index of the other dimensions is one row of n = dims[dimension] elements at
stride prod(dims[dimension+1:]). Row r's elements live, during the sort, in two "views"
(pointer, base, stride): the output row (strided) and row r of the work buffers
(contiguous at r * n). All operands move together; only the comparator looks at them.
Per row:
  1. insertion sort of each run of RUN elements, reading the input and writing the view the
     merge passes start from (stable: an element moves left only past strictly greater
     ones, `less(x, prev)`);
  2. P = ceil(log2(ceil(n / RUN))) bottom-up merge passes, widths RUN, 2 RUN, ...,
     alternating between the views; the first view is chosen by the parity of P (known at
     compile time) so the last pass writes the output. A merge takes the right run's head
     only when `less(right, left)`, so equal elements keep their input order (stable); it
     runs from both ends at once (see `_merge_block`).
The merge step is branch-free: both heads are loaded at indices clamped into the block
(an exhausted run's head is a harmless in-bounds duplicate the select discards), so every
read and write stays inside its buffer. Work is O(n log n) comparator calls per row; rows
are independent, so a `span` of rows is what threads split.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import CpuElements
from ember.codegen.elemental import Buf, load, store
from ember.codegen.index import Index
from ember.codegen.irtypes import I1, I64, i64
from ember.codegen.loops import for_range, for_span, smax, smin
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

RUN = 16  # elements per insertion-sorted run before merging


def sort_row_count(sort: Instruction) -> int:
    """Rows a sort kernel's `span` ranges over."""
    dims = sort.operands[0].shape.dimensions
    if not dims or not math.prod(dims):
        return 1
    return math.prod(dims) // dims[sort.attrs["dimension"]]


class _View:
    """Elements [0, n) of one row in every operand's buffer: element j of operand k at
    bufs[k][base + j * stride]."""

    def __init__(self, bufs: list[Buf], base: ir.Value, stride: ir.Value) -> None:
        self.bufs, self.base, self.stride = bufs, base, stride

    def _at(self, b: ir.IRBuilder, j: ir.Value) -> ir.Value:
        return b.add(self.base, b.mul(j, self.stride))

    def load(self, b: ir.IRBuilder, j: ir.Value) -> list[ir.Value]:
        lin = self._at(b, j)
        return [load(b, buf, lin) for buf in self.bufs]

    def store(self, b: ir.IRBuilder, j: ir.Value, vals: list[ir.Value]) -> None:
        lin = self._at(b, j)
        for buf, v in zip(self.bufs, vals):
            store(b, buf, lin, v)


def _var(b: ir.IRBuilder, init: ir.Value, name: str) -> ir.Value:
    """An i64 stack variable (promoted to registers by mem2reg)."""
    entry = b.function.entry_basic_block
    with b.goto_block(entry):
        b.position_at_start(entry)
        slot = b.alloca(I64, name=name)
    b.store(init, slot)
    return slot


def _while(b: ir.IRBuilder, cond: Callable[[], ir.Value], body: Callable[[], None],
           name: str) -> None:
    """while (cond()) body(); cond may emit blocks of its own (short-circuit tests)."""
    fn = b.function
    header = fn.append_basic_block(f"{name}.cond")
    loop = fn.append_basic_block(f"{name}.body")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    b.cbranch(cond(), loop, exit_)
    b.position_at_end(loop)
    body()
    b.branch(header)
    b.position_at_end(exit_)


def emit_sort_kernel(b: ir.IRBuilder, sort: Instruction, inputs: dict[Instruction, Buf],
                     outs: list[Buf], work: list[Buf],
                     span: tuple[ir.Value, ir.Value] | None = None) -> None:
    ops = sort.operands
    dims = ops[0].shape.dimensions
    if math.prod(dims) == 0:
        return
    gen = CpuElements(b, inputs, precise=True)
    comp = sort.to_apply
    dim = sort.attrs["dimension"] if dims else 0
    n = dims[dim] if dims else 1
    stride = math.prod(dims[dim + 1:]) if dims else 1
    outer = tuple(d for k, d in enumerate(dims) if k != dim)
    nrows = math.prod(outer)
    nruns = -(-n // RUN)
    passes = math.ceil(math.log2(nruns)) if nruns > 1 else 0

    def less(x: list[ir.Value], y: list[ir.Value]) -> ir.Value:
        args: list[ir.Value] = []
        for xv, yv in zip(x, y):
            args += [xv, yv]
        return gen.scalar_computation(comp, args)[0]

    def row(r: ir.Value) -> None:
        o_multi = list(Index(b, outer, linear=r).multi) if outer else []
        full = [*o_multi[:dim], i64(0), *o_multi[dim:]] if dims else []
        base = Index(b, dims, multi=full).linear if dims else i64(0)
        out_view = _View(outs, base, i64(stride))
        work_view = _View(work, b.mul(r, i64(n)), i64(1))
        first = out_view if passes % 2 == 0 else work_view

        def read_input(j: ir.Value) -> list[ir.Value]:
            lin = b.add(base, b.mul(j, i64(stride)))
            return [gen.value(o, Index(b, dims, linear=lin)) for o in ops]

        _insertion_sort_runs(b, n, first, read_input, less)
        if passes:
            _merge_passes(b, n, passes, first, work_view if first is out_view else out_view,
                          less)

    if span is not None:
        for_span(b, span[0], span[1], row, name="row")
    else:
        for_range(b, nrows, row, name="row")


def _insertion_sort_runs(b: ir.IRBuilder, n: int, dst: _View,
                         read: Callable[[ir.Value], list[ir.Value]],
                         less: Callable[[list[ir.Value], list[ir.Value]], ir.Value]) -> None:
    """dst[lo:hi] = sorted(input[lo:hi]) for each run [lo, hi) of RUN elements."""
    j_var = _var(b, i64(0), "j")

    def run(q: ir.Value) -> None:
        lo = b.mul(q, i64(RUN))
        hi = smin(b, b.add(lo, i64(RUN)), i64(n))

        def insert(i: ir.Value) -> None:
            x = read(i)
            b.store(i, j_var)

            def cond() -> ir.Value:
                # j > lo && less(x, dst[j - 1]): the load happens only when j > lo
                j = b.load(j_var, typ=I64)
                pre = b.block
                test = b.function.append_basic_block("ins.test")
                join = b.function.append_basic_block("ins.join")
                b.cbranch(b.icmp_signed(">", j, lo), test, join)
                b.position_at_end(test)
                lt = less(x, dst.load(b, b.sub(j, i64(1))))
                test_end = b.block
                b.branch(join)
                b.position_at_end(join)
                phi = b.phi(I1)
                phi.add_incoming(ir.Constant(I1, 0), pre)
                phi.add_incoming(lt, test_end)
                return phi

            def shift() -> None:
                # dst[j] = dst[j - 1]; j -= 1 (the reload is cheaper than threading the
                # test block's value through a phi, and LLVM's GVN merges the two loads)
                j = b.load(j_var, typ=I64)
                jm1 = b.sub(j, i64(1))
                dst.store(b, j, dst.load(b, jm1))
                b.store(jm1, j_var)

            _while(b, cond, shift, "ins")
            dst.store(b, b.load(j_var, typ=I64), x)

        for_span(b, lo, hi, insert, name="ins.i")

    for_range(b, -(-n // RUN), run, name="run")


def _merge_passes(b: ir.IRBuilder, n: int, passes: int, first: _View, other: _View,
                  less: Callable[[list[ir.Value], list[ir.Value]], ir.Value]) -> None:
    """`passes` bottom-up merge passes of runs of width RUN << p, first -> other -> ..."""
    lo_var = _var(b, i64(0), "lo")
    i_var, j_var = _var(b, i64(0), "mi"), _var(b, i64(0), "mj")  # heads (front merge)
    p_var, q_var = _var(b, i64(0), "mp"), _var(b, i64(0), "mq")  # tails (back merge)

    def one_pass(p: ir.Value) -> None:
        even = b.icmp_unsigned("==", b.and_(p, i64(1)), i64(0))
        # even passes read `first`, odd ones read `other`; pointers and strides by select
        src = _View([Buf(b.select(even, f.ptr, o.ptr), f.shape)
                     for f, o in zip(first.bufs, other.bufs)],
                    b.select(even, first.base, other.base),
                    b.select(even, first.stride, other.stride))
        dst = _View([Buf(b.select(even, o.ptr, f.ptr), f.shape)
                     for f, o in zip(first.bufs, other.bufs)],
                    b.select(even, other.base, first.base),
                    b.select(even, other.stride, first.stride))
        width = b.shl(i64(RUN), p)
        b.store(i64(0), lo_var)

        def block() -> None:
            lo = b.load(lo_var, typ=I64)
            mid = smin(b, b.add(lo, width), i64(n))
            hi = smin(b, b.add(mid, width), i64(n))
            _merge_block(b, src, dst, lo, mid, hi, (i_var, j_var, p_var, q_var), less)
            b.store(hi, lo_var)

        _while(b, lambda: b.icmp_signed("<", b.load(lo_var, typ=I64), i64(n)), block,
               "blocks")

    for_range(b, passes, one_pass, name="pass")


def _merge_block(b: ir.IRBuilder, src: _View, dst: _View, lo: ir.Value, mid: ir.Value,
                 hi: ir.Value, cursors: tuple[ir.Value, ...],
                 less: Callable[[list[ir.Value], list[ir.Value]], ir.Value]) -> None:
    """dst[lo:hi] = the stable merge of src[lo:mid] and src[mid:hi] (lo < mid <= hi).

    Bidirectional: a front merge writes the first ceil(L/2) outputs from the heads while a
    back merge writes the last floor(L/2) from the tails (L = hi - lo). Both are exact
    parts of the one stable merge, and their dependency chains (load -> compare -> advance)
    are independent, so the CPU overlaps them. Front: the right head goes first only when
    less(right, left); back: the left tail goes last only when less(right tail, left
    tail), so equal elements keep left before right either way. Exhausted runs are read at
    an index clamped into the block (a harmless duplicate the select discards).
    """
    i_var, j_var, p_var, q_var = cursors
    one = i64(1)
    for var, v in zip(cursors, (lo, mid, b.sub(mid, one), b.sub(hi, one))):
        b.store(v, var)
    last_left, last = b.sub(mid, one), b.sub(hi, one)

    def front(k: ir.Value) -> None:
        i, j = b.load(i_var, typ=I64), b.load(j_var, typ=I64)
        left = src.load(b, smin(b, i, last_left))
        right = src.load(b, smin(b, j, last))
        take_right = b.and_(b.icmp_signed("<", j, hi),
                            b.or_(b.icmp_signed(">=", i, mid), less(right, left)))
        dst.store(b, k, [b.select(take_right, r, x) for r, x in zip(right, left)])
        step = b.zext(take_right, I64)
        b.store(b.add(j, step), j_var)
        b.store(b.add(i, b.sub(one, step)), i_var)

    def back(t: ir.Value) -> None:
        p, q = b.load(p_var, typ=I64), b.load(q_var, typ=I64)
        left = src.load(b, smax(b, p, lo))
        right = src.load(b, smin(b, smax(b, q, mid), last))  # mid == hi: no right run
        take_left = b.and_(b.icmp_signed(">=", p, lo),
                           b.or_(b.icmp_signed("<", q, mid), less(right, left)))
        dst.store(b, t, [b.select(take_left, x, r) for r, x in zip(right, left)])
        step = b.zext(take_left, I64)
        b.store(b.sub(p, step), p_var)
        b.store(b.sub(q, b.sub(one, step)), q_var)

    length = b.sub(hi, lo)
    half = b.lshr(length, one)

    def both(s: ir.Value) -> None:
        front(b.add(lo, s))
        back(b.sub(last, s))

    for_span(b, i64(0), half, both, name="merge")
    with b.if_then(b.icmp_unsigned("!=", b.and_(length, one), i64(0))):
        front(b.add(lo, half))


class _SortKind:
    """Sorts: split by rows; the merge passes' second buffer is the schedule's work."""

    def split_extent(self, ctx: KernelContext) -> int:
        return ctx.if_worth_splitting(sort_row_count(ctx.root))

    def emit(self, ctx: KernelContext) -> None:
        emit_sort_kernel(ctx.builder, ctx.root, ctx.inputs, ctx.outputs, ctx.work_buffers,
                         ctx.span)


KIND = _SortKind()
