"""The LAPACK kernel kind: one kernel per cholesky / triangular-solve / LAPACK custom call.

Input: a KernelContext of an instruction plan.py's `routine` names (its operands, outputs
and plan.py's work buffers, all row-major; f32, f64, c64, c128). Output: a kernel that
loops over the batch, one matrix at a time, and calls `ember_lapack_<s|d|c|z><routine>`
(find.py) on it (kernel.py's helpers; geev in eig.py).
A row-major m x n matrix is, read column-major, its n x m transpose; each routine uses that
where it can and copies where it cannot:
  potrf   the lower triangle (row-major) is the upper one (column-major): potrf('U') on a
          copy gives U with U^H U = A^T (= conj(A) for Hermitian A), i.e. L = U^T
          row-major with L L^H = A; then the other triangle is zeroed, or the whole
          matrix set to NaN when info != 0
  trsm    op(A) X = B row-major is X^T op(A)^T = B^T column-major: the side and the
          triangle flip, the transpose flag stays (N, T, or C for the adjoint, since
          (A^H)^T is the adjoint of the column-major A^T); no copies but B into the output
  getrf, geqrf, orgqr  factor a real column-major copy (pivoting and reflectors are by
          rows): transposed into the work buffer and back
  syevd   the symmetric matrix is its own transpose (the triangle flips); the eigenvectors
          come back column-major and are transposed in place. heevd (complex): the
          transpose of a Hermitian matrix is its conjugate, whose eigenvectors are the
          conjugates: transposed and conjugated in place
  gesdd   the SVD of A^T = U' S V'^T is A = V' S U'^T, and a column-major V'^T (ldvt = its
          rows) is a row-major V', so u and vt are written in place with the roles swapped
          (complex: A^T = U' S V'^H gives A = conj(V') S U'^T, and conj(V') is the row-major
          read of V'^H: the same swap)
  gtsv    copies of the diagonals (overwritten) and a column-major copy of b, solved and
          transposed back
Info codes go to the info outputs (getrf, syevd, gesdd, gtsv, geev); the lowering makes
NaNs of them. Real values of complex routines (heevd's eigenvalues, gesdd's singular
values, their rwork) are of the part type.
Invariants: never split among threads (LAPACK threads itself); every buffer row-major.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.lapack.eig import geev
from ember.backends.cpu.lapack.kernel import Kernel, matrices
from ember.backends.cpu.lapack.plan import gesdd_job, routine
from ember.codegen.irtypes import I32, i64

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

def _potrf(k: Kernel) -> None:
    ctx, b = k.ctx, k.b
    a = ctx.inputs[k.inst.operands[0]].ptr
    out = ctx.outputs[0].ptr
    n = k.inst.shape.dimensions[-1]
    lower = bool(k.inst.attrs.get("lower", False))
    uplo, nn, info = k.char_ref("U" if lower else "L"), k.int_ref(n), k.int_ref(0)
    nan = k.const(float("nan"), float("nan"))
    zero = k.const(0.0)

    def one(i: ir.Value) -> None:
        pa, po = k.at(a, i, n * n), k.at(out, i, n * n)
        k.memcpy(po, pa, n * n)
        k.call("potrf", [uplo, nn, po, nn, info])
        bad = b.icmp_signed("!=", b.load(info, typ=I32), ir.Constant(I32, 0))

        def fix(r: ir.Value, c: ir.Value, p: ir.Value) -> None:
            outside = b.icmp_signed(">" if lower else "<", c, r)
            v = b.select(outside, zero, b.load(p, typ=k.fty))
            b.store(b.select(bad, nan, v), p)
        k.square_pass(po, n, fix)
    k.batch(matrices(k.inst.shape.dimensions), one)


def _trsm(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    rhs = ctx.inputs[inst.operands[1]].ptr
    out = ctx.outputs[0].ptr
    ma = inst.operands[0].shape.dimensions[-1]
    r, c = inst.shape.dimensions[-2:]
    attrs = inst.attrs
    side = k.char_ref("R" if attrs.get("left_side") else "L")
    uplo = k.char_ref("U" if attrs.get("lower") else "L")
    trans = k.char_ref({"NO_TRANSPOSE": "N", "TRANSPOSE": "T", "ADJOINT": "C"}[
        attrs.get("transpose_a", "NO_TRANSPOSE")])
    diag = k.char_ref("U" if attrs.get("unit_diagonal") else "N")
    mm, nn, lda = k.int_ref(c), k.int_ref(r), k.int_ref(ma)
    alpha = k.ref(k.const(1.0))
    count = matrices(inst.shape.dimensions)
    k.memcpy(out, rhs, count * r * c)

    def one(i: ir.Value) -> None:
        k.call("trsm", [side, uplo, trans, diag, mm, nn, alpha, k.at(a, i, ma * ma), lda,
                        k.at(out, i, r * c), mm])
    k.batch(count, one)


def _getrf(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    out, ipiv, info = (o.ptr for o in ctx.outputs)
    w = ctx.work_buffers[0].ptr
    m, n = inst.operands[0].shape.dimensions[-2:]
    kk = min(m, n)
    mm, nn = k.int_ref(m), k.int_ref(n)

    def one(i: ir.Value) -> None:
        k.transpose_copy(w, k.at(a, i, m * n), m, n)
        k.call("getrf", [mm, nn, w, mm, k.at(ipiv, i, kk, I32), k.at(info, i, 1, I32)])
        k.transpose_copy(k.at(out, i, m * n), w, n, m)
    k.batch(matrices(inst.operands[0].shape.dimensions), one)


def _geqrf(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    out, tau = (o.ptr for o in ctx.outputs)
    w, work = (x.ptr for x in ctx.work_buffers)
    lwork = ctx.work_buffers[1].shape.size
    m, n = inst.operands[0].shape.dimensions[-2:]
    kk = min(m, n)
    mm, nn, lw, info = k.int_ref(m), k.int_ref(n), k.int_ref(lwork), k.int_ref(0)

    def one(i: ir.Value) -> None:
        k.transpose_copy(w, k.at(a, i, m * n), m, n)
        k.call("geqrf", [mm, nn, w, mm, k.at(tau, i, kk), work, lw, info])
        k.transpose_copy(k.at(out, i, m * n), w, n, m)
    k.batch(matrices(inst.operands[0].shape.dimensions), one)


def _orgqr(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    tau = ctx.inputs[inst.operands[1]].ptr
    out = ctx.outputs[0].ptr
    w, work = (x.ptr for x in ctx.work_buffers)
    lwork = ctx.work_buffers[1].shape.size
    m, n = inst.operands[0].shape.dimensions[-2:]
    kk = inst.operands[1].shape.dimensions[-1]
    mm, nn, kr = k.int_ref(m), k.int_ref(n), k.int_ref(kk)
    lw, info = k.int_ref(lwork), k.int_ref(0)

    def one(i: ir.Value) -> None:
        k.transpose_copy(w, k.at(a, i, m * n), m, n)
        k.call("orgqr", [mm, nn, kr, w, mm, k.at(tau, i, kk), work, lw, info])
        k.transpose_copy(k.at(out, i, m * n), w, n, m)
    k.batch(matrices(inst.operands[0].shape.dimensions), one)


def _syevd(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    v, w, info = (o.ptr for o in ctx.outputs)
    bufs = [x.ptr for x in ctx.work_buffers]
    sizes = [k.int_ref(x.shape.size) for x in ctx.work_buffers]
    n = inst.operands[0].shape.dimensions[-1]
    lower = "uplo=U" not in (inst.attrs.get("backend_config") or "")
    jobz, uplo = k.char_ref("V"), k.char_ref("U" if lower else "L")
    nn = k.int_ref(n)
    # syevd: work, iwork; heevd: work, rwork, iwork (each followed by its size)
    work_args = [x for pair in zip(bufs, sizes) for x in pair]

    def one(i: ir.Value) -> None:
        pv = k.at(v, i, n * n)
        k.memcpy(pv, k.at(a, i, n * n), n * n)
        k.call("syevd", [jobz, uplo, nn, pv, nn, k.at(w, i, n, k.part), *work_args,
                         k.at(info, i, 1, I32)])
        k.transpose_in_place(pv, n, conjugate=k.complex)
    k.batch(matrices(inst.operands[0].shape.dimensions), one)


def _gesdd(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    job = gesdd_job(inst)
    outs = [o.ptr for o in ctx.outputs]
    s, info = outs[0], outs[-1]
    acopy, work, *more = (x.ptr for x in ctx.work_buffers)
    lwork = ctx.work_buffers[1].shape.size
    extra = more if k.complex else more[-1:]  # complex: rwork, then iwork
    m, n = inst.operands[0].shape.dimensions[-2:]
    kk = min(m, n)
    # the column-major problem is A^T: n x m
    jobz = k.char_ref("NSA"[job])
    rows, cols, lw = k.int_ref(n), k.int_ref(m), k.int_ref(lwork)
    ldvt_rows = m if job == 2 else kk
    u_elems = m * ldvt_rows  # row-major u: m x (m | k)
    vt_elems = (n if job == 2 else kk) * n  # row-major vt: (n | k) x n
    ldu = k.int_ref(n if job else 1)
    ldvt = k.int_ref(ldvt_rows if job else 1)

    def one(i: ir.Value) -> None:
        k.memcpy(acopy, k.at(a, i, m * n), m * n)
        if job:
            u_ptr, vt_ptr = k.at(outs[1], i, u_elems), k.at(outs[2], i, vt_elems)
        else:
            u_ptr = vt_ptr = acopy  # not referenced for jobz = 'N'
        k.call("gesdd", [jobz, rows, cols, acopy, rows, k.at(s, i, kk, k.part), vt_ptr, ldu,
                         u_ptr, ldvt, work, lw, *extra, k.at(info, i, 1, I32)])
    k.batch(matrices(inst.operands[0].shape.dimensions), one)


def _gtsv(k: Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    dl, d, du, rhs = (ctx.inputs[o].ptr for o in inst.operands)
    x, info = (o.ptr for o in ctx.outputs)
    wdl, wd, wdu, wb = (w.ptr for w in ctx.work_buffers)
    dims = inst.operands[3].shape.dimensions
    m, n = dims[-2:]
    mm, nn = k.int_ref(m), k.int_ref(n)

    def one(i: ir.Value) -> None:
        k.memcpy(wdl, k.at(dl, i, m), m)
        k.memcpy(wd, k.at(d, i, m), m)
        k.memcpy(wdu, k.at(du, i, m), m)
        k.transpose_copy(wb, k.at(rhs, i, m * n), m, n)
        # LAPACK's sub-diagonal starts at A[1, 0]: dl[1:]; the super-diagonal is du[:m-1]
        k.call("gtsv", [mm, nn, k.at(wdl, i64(1), 1), wd, wdu, wb, mm,
                        k.at(info, i, 1, I32)])
        k.transpose_copy(k.at(x, i, m * n), wb, n, m)
    k.batch(matrices(dims), one)


_EMITTERS = {"potrf": _potrf, "trsm": _trsm, "getrf": _getrf, "geqrf": _geqrf,
             "orgqr": _orgqr, "syevd": _syevd, "gesdd": _gesdd, "gtsv": _gtsv,
             "geev": geev}


class LapackKind:
    """KernelKind of the LAPACK-backed instructions (see the module doc)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        name = routine(ctx.inst)
        if name is None:  # pragma: no cover - kinds.py's test
            raise CpuCompileError(f"{ctx.inst.name} is not a LAPACK instruction")
        _EMITTERS[name](Kernel(ctx))


KIND = LapackKind()
