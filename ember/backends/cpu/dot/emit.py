"""Kernels for a dot or a kOutput fusion (dot + elementwise epilogue), as planned by
plan.py.

Input: the kernel's context (emit/kinds.py: the entry instruction, its boundary, output
and work slots: packed operands, the dot's temporary; the module emitter). Output: LLVM
functions whose calls the emitter's entry makes, in order (`KIND`, the "dot" row of
kinds.KINDS, adds the packing calls itself; the emitter adds the kernel's):
  `<kernel>.pack_lhs` / `.pack_rhs`  copy an operand that is no BLAS view into scratch as
                                     [batch..., rows, cols] (serial, before the kernel);
  `<kernel>(buffers..., [begin, end])` for each work unit u in the range: one BLAS call
                                     (gemm, or gemv for matrix-vector products) writing the
                                     unit's block of the dot, then the epilogue over that
                                     block while it is in cache: root(i) for each element i
                                     of the block, reading the dot's value at i.
Splittable kernels run units [units*t/T, units*(t+1)/T) on Ember's thread t (the emitter's
worker); BLAS itself is single-threaded inside (blas.py), so the two pools never overlap.
The epilogue overwrites the dot's value in place when both have the same element size
(each element is loaded before its result is stored at the same address); otherwise the
dot goes to a work buffer. If fast sin/cos in the epilogue flag an argument beyond their
reduction range, the unit runs again (BLAS call included, since the dot's values were
overwritten) with the precise variants. Loop-route products (integers, tiny ones) run
kernels.emit_dot_kernel, then the epilogue over the whole result.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.dot import blas
from ember.backends.cpu.dot.plan import PARALLEL_MIN_MACS, DotPlan, View, plan
from ember.backends.cpu.emit import kernels
from ember.backends.cpu.emit.elements import LoopElements
from ember.codegen.elemental import Buf, ElementGenerator, load, store
from ember.codegen.index import Index
from ember.codegen.irtypes import I8, I32, I64, PTR, VOID, i64, mem_type
from ember.codegen.loops import for_nest, for_range, for_span, smin
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.emitter import ModuleEmitter
    from ember.backends.cpu.emit.kinds import KernelContext
    from ember.backends.cpu.plan.schedule import Slot


class _DotKind:
    """Dots and kOutput fusions (see the module doc); `KIND` in kinds.KINDS."""

    def split_extent(self, ctx: KernelContext) -> int:
        """BLAS work units, when the product is large enough for threads to pay off."""
        p = plan(ctx.inst)
        big = p.batch_count * p.m * p.n * p.k >= PARALLEL_MIN_MACS
        return p.units if p.route == "blas" and p.units > 1 and big else 1

    def emit(self, ctx: KernelContext) -> None:
        emit(ctx)


KIND = _DotKind()


def emit(ctx: KernelContext) -> None:
    """Emit the packing kernels of `ctx.inst` (their calls added first), then the body of
    its kernel; `ctx.work` holds the work buffers the schedule reserved (in
    `DotPlan.work_shapes` order)."""
    p = plan(ctx.inst)
    em, name, bound = ctx.emitter, ctx.name, ctx.bound
    work = dict(zip([role for role, _ in p.work_shapes()], ctx.work))
    for side in ("lhs", "rhs"):
        if side in work:
            operand = p.dot.operands[0 if side == "lhs" else 1]
            _emit_pack(em, f"{name}.pack_{side}", p, side, bound[operand], work[side])
    if p.own:
        rhs = p.dot.operands[1]
        _emit_pack_panels(em, f"{name}.pack_b", p,
                          work["rhs"] if "rhs" in work else bound[rhs], work["panels"])
    b = ctx.builder  # (the kernel's function comes after its packing functions)
    # a dot kernel stays a call of its own, even a loop's one-element product (as it always
    # was; other kinds' one-element kernels of a loop may be inlined)
    b.function.attributes.add("noinline")
    ptr, inputs = ctx.pointers, ctx.inputs
    out = ctx.outputs[0]
    dot_buf = Buf(ptr[work["dot"]], p.dot.shape) if "dot" in work else Buf(out.ptr, p.dot.shape)
    # BLAS reads the packed copy of an operand that has one (the epilogue never does)
    operands = [ptr[work[side]] if side in work else inputs[o].ptr
                for side, o in zip(("lhs", "rhs"), p.dot.operands) if o in inputs]
    if p.own:
        operands.append(ptr[work["panels"]])
    if p.route == "blas":
        span = ctx.span if ctx.span is not None else (i64(0), i64(p.units))
        _emit_blas_units(b, p, inputs, operands, dot_buf, out, span)
    else:
        _emit_loops(b, p, inputs, dot_buf, out)


# -- packing --------------------------------------------------------------------------------


def _emit_pack(em: ModuleEmitter, name: str, p: DotPlan, side: str, src: Slot,
               dst: Slot) -> None:
    """dst[batch..., rows, cols] = the operand, in the dot's batch order and axis orders."""
    dot = p.dot
    k = 0 if side == "lhs" else 1
    operand = dot.operands[k]
    a = dot.attrs
    batch = list(a["lhs_batch_dims" if k == 0 else "rhs_batch_dims"])
    contract = list(a["lhs_contracting_dims" if k == 0 else "rhs_contracting_dims"])
    free = [d for d in range(operand.shape.rank) if d not in batch + contract]
    order = batch + (free + contract if k == 0 else contract + free)
    dims = operand.shape.dimensions
    fn = ir.Function(em.ir, ir.FunctionType(VOID, [PTR, PTR]), name=f"{em.prefix}{name}")
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    for arg in fn.args:
        arg.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    sbuf, dbuf = Buf(fn.args[0], operand.shape), Buf(fn.args[1], dst.shape)
    nest = [dims[d] for d in order]

    def body(ix: list[ir.Value]) -> None:
        multi: list[ir.Value] = [i64(0)] * len(dims)
        for d, i in zip(order, ix):
            multi[d] = i
        v = load(b, sbuf, Index(b, dims, multi=multi).linear)
        store(b, dbuf, Index(b, nest, multi=ix).linear, v)

    for_nest(b, nest, body, name="pk")
    b.ret_void()
    em.add_call(fn, [src, dst])


def _emit_pack_panels(em: ModuleEmitter, name: str, p: DotPlan, src: Slot, dst: Slot) -> None:
    """dst = each batch's B packed into the own GEMM's panels (gemm.py), a batch's panels
    split into groups of whole panels: units = batch x groups, parallel when planned so."""
    from ember.backends.cpu.dot import gemm

    rv = p.rhs
    assert rv is not None
    nr = p.panel_cols
    per_batch = p.pack_units // p.batch_count
    panels = -(-p.n // nr)
    split = em.parallel and p.pack_units > 1
    types = [PTR, PTR] + ([I64, I64] if split else [])
    fn = ir.Function(em.ir, ir.FunctionType(VOID, types), name=f"{em.prefix}{name}")
    fn.attributes.add("noinline")
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tb, ldb = rv.blas(p.k, p.n)
    pack = gemm.declare(b.module, gemm.prec_of(p.et), "pack_b")

    def unit(u: ir.Value) -> None:
        bi, g = b.udiv(u, i64(per_batch)), b.urem(u, i64(per_batch))
        batch_multi = Index(b, p.batch, linear=bi).multi if p.batch else []
        src = _blas_args(b, p, rv, fn.args[0], batch_multi, i64(0), 0)
        out = b.gep(fn.args[1], [b.mul(bi, i64(p.panel_elems))], inbounds=True,
                    source_etype=mem_type(p.et))
        # group g packs panels [g P / G, (g + 1) P / G), as columns clamped to n
        j0 = b.mul(b.udiv(b.mul(g, i64(panels)), i64(per_batch)), i64(nr))
        j1 = b.mul(b.udiv(b.mul(b.add(g, i64(1)), i64(panels)), i64(per_batch)), i64(nr))
        b.call(pack, [ir.Constant(I32, tb), i64(p.k), i64(p.n), src, i64(ldb), out, j0,
                      smin(b, j1, i64(p.n))])

    span = (fn.args[2], fn.args[3]) if split else (i64(0), i64(p.pack_units))
    for_span(b, span[0], span[1], unit, name="unit")
    b.ret_void()
    if split:  # (listed with its dot: em.parallel_kernels names HLO instructions)
        fn = em.chunk_function(fn, 2, p.pack_units)
    em.add_call(fn, [src, dst], split)


# -- the BLAS route -------------------------------------------------------------------------


def _blas_args(b: ir.IRBuilder, p: DotPlan, view: View, base: ir.Value, batch_multi:
               list[ir.Value], axis_offset: ir.Value, axis_stride: int) -> ir.Value:
    """Pointer to a unit's block of an operand: base + batch offset + offset on the split
    axis (in elements)."""
    off: ir.Value = b.mul(axis_offset, i64(axis_stride))
    for i, s in zip(batch_multi, view.batch):
        if s:
            off = b.add(off, b.mul(i, i64(s)))
    return b.gep(base, [off], inbounds=True, source_etype=mem_type(p.et))


def _emit_blas_units(b: ir.IRBuilder, p: DotPlan, inputs: dict[Instruction, Buf],
                     operands: list[ir.Value], dot_buf: Buf, out: Buf,
                     span: tuple[ir.Value, ir.Value]) -> None:
    lv, rv = p.lhs, p.rhs
    assert lv is not None and rv is not None
    per_batch = p.pm * p.pn
    epilogue = p.root is not p.dot
    entry = b.function.entry_basic_block
    with b.goto_block(entry):
        b.position_at_start(entry)
        flag = b.alloca(I8, name="rerun")

    def unit(u: ir.Value) -> None:
        bi = b.udiv(u, i64(per_batch))
        r = b.urem(u, i64(per_batch))
        mi, ni = b.udiv(r, i64(p.pn)), b.urem(r, i64(p.pn))
        i0, j0 = b.mul(mi, i64(p.mb)), b.mul(ni, i64(p.nb))
        mc = smin(b, i64(p.mb), b.sub(i64(p.m), i0))
        nc = smin(b, i64(p.nb), b.sub(i64(p.n), j0))
        batch_multi = Index(b, p.batch, linear=bi).multi if p.batch else []
        a_ptr = _blas_args(b, p, lv, operands[0], batch_multi, i0, lv.s_rows)
        b_ptr = _blas_args(b, p, rv, operands[1], batch_multi, j0, rv.s_cols)
        c_off = b.add(b.mul(bi, i64(p.m * p.n)), b.add(b.mul(i0, i64(p.n)), j0))
        c_ptr = b.gep(dot_buf.ptr, [c_off], inbounds=True, source_etype=mem_type(p.et))

        def compute(gen: ElementGenerator | None) -> None:
            if p.own:  # all n columns (pn = 1) from the panels of batch bi
                panels = b.gep(operands[2], [b.mul(bi, i64(p.panel_elems))], inbounds=True,
                               source_etype=mem_type(p.et))
                _call_own_gemm(b, p, a_ptr, panels, c_ptr, mc)
            else:
                _call_blas(b, p, a_ptr, b_ptr, c_ptr, mc, nc)
            if gen is not None:
                _emit_block_epilogue(b, p, gen, out, bi, batch_multi, i0, mc, j0, nc)

        if not epilogue:
            compute(None)
            return
        b.store(ir.Constant(I8, 0), flag)
        fast = LoopElements(b, {**inputs, p.dot: dot_buf}, False)
        fast.report_to(flag)
        compute(fast)
        if fast.raised:
            need = b.icmp_unsigned("!=", b.load(flag, typ=I8), ir.Constant(I8, 0))
            with b.if_then(need, likely=False):
                compute(LoopElements(b, {**inputs, p.dot: dot_buf}, True))

    for_span(b, span[0], span[1], unit, name="unit")


def _call_own_gemm(b: ir.IRBuilder, p: DotPlan, a_ptr: ir.Value, panels: ir.Value,
                   c_ptr: ir.Value, mc: ir.Value) -> None:
    """Rows [i0, i0 + mc) of one batch by Ember's GEMM (gemm.py) from B's packed panels."""
    from ember.backends.cpu.dot import gemm

    assert p.lhs is not None
    ta, lda = p.lhs.blas(p.m, p.k)
    fn = gemm.declare(b.module, gemm.prec_of(p.et), "gemm_packed")
    b.call(fn, [ir.Constant(I32, ta), mc, i64(p.n), i64(p.k), a_ptr, i64(lda), panels, c_ptr,
                i64(p.n)])


def _call_blas(b: ir.IRBuilder, p: DotPlan, a_ptr: ir.Value, b_ptr: ir.Value,
               c_ptr: ir.Value, mc: ir.Value, nc: ir.Value) -> None:
    """One BLAS call for a unit: rows [i0, i0 + mc) x cols [j0, j0 + nc) of one batch."""
    lv, rv = p.lhs, p.rhs
    assert lv is not None and rv is not None
    k = i64(p.k)
    if p.form == "gemm":
        ta, lda = lv.blas(p.m, p.k)
        tb, ldb = rv.blas(p.k, p.n)
        fn = blas.declare(b.module, blas.routine(p.et, "gemm"))
        b.call(fn, [ir.Constant(I32, ta), ir.Constant(I32, tb), mc, nc, k, a_ptr, i64(lda),
                    b_ptr, i64(ldb), c_ptr, i64(p.n)])
        return
    fn = blas.declare(b.module, blas.routine(p.et, "gemv"))
    if p.form == "gemv_m":  # y[i] = sum_k A[i, k] x[k]; x is the rhs, its K axis
        t, lda = lv.blas(p.m, p.k)
        incx = rv.s_rows or 1
        rows, cols = (k, mc) if t else (mc, k)
        b.call(fn, [ir.Constant(I32, t), rows, cols, a_ptr, i64(lda), b_ptr, i64(incx), c_ptr,
                    i64(1)])
        return
    # gemv_n: y[j] = sum_k x[k] B[k, j] = (B^T x)[j]; x is the lhs, its K axis
    tb, ldb = rv.blas(p.k, p.n)
    incx = lv.s_cols or 1
    rows, cols = (nc, k) if tb else (k, nc)
    b.call(fn, [ir.Constant(I32, 1 - tb), rows, cols, b_ptr, i64(ldb), a_ptr, i64(incx),
                c_ptr, i64(1)])


def _free_dims(p: DotPlan) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Extents of the result's lhs-free dims and rhs-free dims."""
    nb = len(p.batch)
    dims = p.dot.shape.dimensions
    lhs = p.dot.operands[0]
    a = p.dot.attrs
    nlf = lhs.shape.rank - len(a["lhs_batch_dims"]) - len(a["lhs_contracting_dims"])
    return dims[nb:nb + nlf], dims[nb + nlf:]


def _emit_block_epilogue(b: ir.IRBuilder, p: DotPlan, gen: ElementGenerator, out: Buf,
                         bi: ir.Value, batch_multi: list[ir.Value], i0: ir.Value,
                         mc: ir.Value, j0: ir.Value, nc: ir.Value) -> None:
    """out[bi, r, c] = root at (bi, r, c) for r in [i0, i0+mc), c in [j0, j0+nc)."""
    mdims, ndims = _free_dims(p)
    out_dims = p.dot.shape.dimensions
    row_end, col_end = b.add(i0, mc), b.add(j0, nc)
    batch_base = b.mul(bi, i64(p.m * p.n))

    def row(r: ir.Value) -> None:
        m_multi = Index(b, mdims, linear=r).multi if mdims else []
        row_base = b.add(batch_base, b.mul(r, i64(p.n)))

        def col(c: ir.Value) -> None:
            n_multi = Index(b, ndims, linear=c).multi if ndims else []
            lin = b.add(row_base, c)
            idx = Index(b, out_dims, multi=[*batch_multi, *m_multi, *n_multi], linear=lin)
            store(b, out, lin, gen.value(p.root, idx))
            gen.flush()  # type: ignore[attr-defined]

        for_span(b, j0, col_end, col, name="c")

    for_span(b, i0, row_end, row, name="r")


# -- the loop route -------------------------------------------------------------------------


def _emit_loops(b: ir.IRBuilder, p: DotPlan, inputs: dict[Instruction, Buf], dot_buf: Buf,
                out: Buf) -> None:
    if p.root is p.dot:
        kernels.emit_dot_kernel(b, p.dot, inputs, out)
        return
    dims = p.dot.shape.dimensions
    size = math.prod(dims)

    def body(gen: ElementGenerator) -> None:
        kernels.emit_dot_kernel(b, p.dot, inputs, dot_buf)

        def element(i: ir.Value) -> None:
            store(b, out, i, gen.value(p.root, Index(b, dims, linear=i)))
            gen.flush()  # type: ignore[attr-defined]

        for_range(b, size, element, name="e")

    make: Callable[[bool], LoopElements] = (
        lambda precise: LoopElements(b, {**inputs, p.dot: dot_buf}, precise))
    kernels.with_precise_rerun(b, body, make)
