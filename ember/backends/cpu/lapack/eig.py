"""The geev kernel: eigenvalues and eigenvectors of general square matrices.

Input: a KernelContext of a lapack_?geev_ffi custom call (plan.py): operand a (..., n, n)
row-major; backend_config "jobvl=V|N,jobvr=V|N"; outputs w (..., n) complex, then vl and
vr (..., n, n) complex where asked for, then info (...) s32; plan.py's work buffers.
Output: per matrix, LAPACK's geev on a column-major copy of a (a general matrix is not
its own transpose, so it is copied transposed), eigenvectors in the columns of vl / vr as
LAPACK normalizes them (unit 2-norm, largest component real).
The real routines (s/dgeev) return wr, wi and real vectors where a complex pair
(w_j, w_{j+1} = conj(w_j), wi_j > 0) shares two columns: v_j = x_j + i x_{j+1},
v_{j+1} = x_j - i x_{j+1}. The kernel unpacks them into the complex outputs, column by
column, with selects (column j reads column j-1 when wi_j < 0, column j+1 when wi_j > 0;
the indices clamped so that no select reads outside the matrix), transposing as it goes.
The complex routines (c/zgeev) write their vectors into the outputs, transposed in place.
A matrix with a NaN or an infinity is not given to geev (its balancing step calls it an
illegal argument and prints so): its info is set to n + 1, which the lowering makes NaNs,
as the evaluator does.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir

from ember.backends.cpu.lapack.kernel import Kernel, matrices
from ember.backends.cpu.lapack.plan import geev_jobs
from ember.codegen.irtypes import I1, I32, i64
from ember.codegen.loops import for_range


def _finite_then(k: Kernel, ptr: ir.Value, n: int, info_ptr: ir.Value,
                 body: Callable[[], None]) -> None:
    """body() when the n x n matrix at ptr is all finite, else info = n + 1."""
    b = k.b
    flag = k.ref(ir.Constant(I1, 1))
    parts = 2 * n * n if k.complex else n * n

    def check(j: ir.Value) -> None:
        x = b.load(b.gep(ptr, [j], inbounds=True, source_etype=k.part), typ=k.part)
        d = b.fsub(x, x)  # NaN exactly when x is NaN or infinite
        with b.if_then(b.fcmp_unordered("uno", d, d), likely=False):
            b.store(ir.Constant(I1, 0), flag)
    for_range(b, parts, check, name="fin")
    with b.if_else(b.load(flag, typ=I1)) as (finite, bad):
        with finite:
            body()
        with bad:
            b.store(ir.Constant(I32, n + 1), info_ptr)


def geev(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    left, right = geev_jobs(inst)
    outs = [o.ptr for o in ctx.outputs]
    w, info = outs[0], outs[-1]
    vl = outs[1] if left else None
    vr = outs[1 + left] if right else None
    n = inst.operands[0].shape.dimensions[-1]
    jl, jr = k.char_ref("V" if left else "N"), k.char_ref("V" if right else "N")
    nn = k.int_ref(n)
    ldvl, ldvr = k.int_ref(n if left else 1), k.int_ref(n if right else 1)
    count = matrices(inst.operands[0].shape.dimensions)
    if k.complex:
        _complex(k, a, w, vl, vr, info, n, count, (jl, jr, nn, ldvl, ldvr))
    else:
        _real(k, a, w, vl, vr, info, n, count, (jl, jr, nn, ldvl, ldvr))


def _complex(k: Kernel, a: ir.Value, w: ir.Value, vl: ir.Value | None, vr: ir.Value | None,
             info: ir.Value, n: int, count: int, args: tuple) -> None:
    jl, jr, nn, ldvl, ldvr = args
    acopy, work, rwork = (x.ptr for x in k.ctx.work_buffers)
    lw = k.int_ref(k.ctx.work_buffers[1].shape.size)

    def one(i: ir.Value) -> None:
        k.transpose_copy(acopy, k.at(a, i, n * n), n, n)
        pl = k.at(vl, i, n * n) if vl is not None else acopy  # (unread for 'N')
        pr = k.at(vr, i, n * n) if vr is not None else acopy
        info_i = k.at(info, i, 1, I32)

        def run() -> None:
            k.call("geev", [jl, jr, nn, acopy, nn, k.at(w, i, n), pl, ldvl, pr, ldvr, work,
                            lw, rwork, info_i])
            for v, p in ((vl, pl), (vr, pr)):
                if v is not None:
                    k.transpose_in_place(p, n)
        _finite_then(k, acopy, n, info_i, run)
    k.batch(count, one)


def _real(k: Kernel, a: ir.Value, w: ir.Value, vl: ir.Value | None, vr: ir.Value | None,
          info: ir.Value, n: int, count: int, args: tuple) -> None:
    jl, jr, nn, ldvl, ldvr = args
    b = k.b
    acopy, wr, wi, xl, xr, work = (x.ptr for x in k.ctx.work_buffers)
    lw = k.int_ref(k.ctx.work_buffers[5].shape.size)
    cty = ir.ArrayType(k.part, 2)

    def pair(re: ir.Value, im: ir.Value) -> ir.Value:
        return b.insert_value(b.insert_value(ir.Constant(cty, ir.Undefined), re, 0), im, 1)

    def load(ptr: ir.Value, index: ir.Value) -> ir.Value:
        return b.load(b.gep(ptr, [index], inbounds=True, source_etype=k.part), typ=k.part)

    def unpack(src: ir.Value, dst: ir.Value) -> None:
        """dst (row-major complex n x n) from LAPACK's packed column-major src."""
        def column(j: ir.Value) -> None:
            wij = load(wi, j)
            zero = ir.Constant(k.part, 0.0)
            pos = b.fcmp_ordered(">", wij, zero)
            neg = b.fcmp_ordered("<", wij, zero)
            # (clamped: the selects below evaluate both columns' loads)
            j_re = b.select(b.and_(neg, b.icmp_signed(">", j, i64(0))), b.sub(j, i64(1)), j)
            j_im = b.select(b.and_(pos, b.icmp_signed("<", j, i64(n - 1))),
                            b.add(j, i64(1)), j)

            def row(r: ir.Value) -> None:
                re = load(src, b.add(r, b.mul(j_re, i64(n))))
                other = load(src, b.add(r, b.mul(j_im, i64(n))))
                im = b.select(pos, other, b.select(neg, b.fneg(other), zero))
                b.store(pair(re, im), b.gep(dst, [b.add(b.mul(r, i64(n)), j)], inbounds=True,
                                            source_etype=cty))
            for_range(b, n, row, name="vr")
        for_range(b, n, column, name="vc")

    def one(i: ir.Value) -> None:
        k.transpose_copy(acopy, k.at(a, i, n * n), n, n)
        info_i = k.at(info, i, 1, I32)

        def run() -> None:
            k.call("geev", [jl, jr, nn, acopy, nn, wr, wi, xl, ldvl, xr, ldvr, work, lw,
                            info_i])
            wout = b.gep(w, [b.mul(i, i64(n))], inbounds=True, source_etype=cty)

            def eigenvalue(j: ir.Value) -> None:
                b.store(pair(load(wr, j), load(wi, j)),
                        b.gep(wout, [j], inbounds=True, source_etype=cty))
            for_range(b, n, eigenvalue, name="ev")
            for v, x in ((vl, xl), (vr, xr)):
                if v is not None:
                    unpack(x, b.gep(v, [b.mul(i, i64(n * n))], inbounds=True,
                                    source_etype=cty))
        _finite_then(k, acopy, n, info_i, run)
    k.batch(count, one)
