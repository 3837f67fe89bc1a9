"""The LAPACK kernel kind: one kernel per cholesky / triangular-solve / LAPACK custom call.

Input: a KernelContext of an instruction plan.py's `routine` names (its operands, outputs
and plan.py's work buffers, all row-major). Output: a kernel that loops over the batch,
one matrix at a time, and calls `ember_lapack_<s|d><routine>` (find.py) on it.
A row-major m x n matrix is, read column-major, its n x m transpose; each routine uses that
where it can and copies where it cannot:
  potrf   the lower triangle (row-major) is the upper one (column-major): potrf('U') on a
          copy gives U with U^T U = A, i.e. L = U^T row-major; then the other triangle is
          zeroed, or the whole matrix set to NaN when info != 0
  trsm    op(A) X = B row-major is X^T op(A)^T = B^T column-major: the side and the
          triangle flip, the transpose flag stays; no copies but B into the output
  getrf, geqrf, orgqr  factor a real column-major copy (pivoting and reflectors are by
          rows): transposed into the work buffer and back
  syevd   the symmetric matrix is its own transpose (the triangle flips); the eigenvectors
          come back column-major and are transposed in place
  gesdd   the SVD of A^T = U' S V'^T is A = V' S U'^T, and a column-major V'^T (ldvt = its
          rows) is a row-major V', so u and vt are written in place with the roles swapped
  gtsv    copies of the diagonals (overwritten) and a column-major copy of b, solved and
          transposed back
Info codes go to the info outputs (getrf, syevd, gesdd, gtsv); the lowering makes NaNs of them.
Invariants: never split among threads (LAPACK threads itself); every buffer row-major.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.lapack import find
from ember.backends.cpu.lapack.plan import gesdd_job, routine
from ember.codegen.irtypes import I1, I8, I32, I64, PTR, VOID, i64
from ember.codegen.loops import for_range

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

_FLOAT = {"f32": ir.FloatType(), "f64": ir.DoubleType()}
_TILE = 32  # transposes copy 32 x 32 tiles (8 KiB in f64: both tiles stay in L1)


class _Kernel:
    """IR helpers over one kernel's builder."""

    def __init__(self, ctx: KernelContext) -> None:
        self.ctx = ctx
        self.b = ctx.builder
        self.inst = ctx.inst
        self.et = ctx.inst.operands[0].shape.element_type
        if self.et not in _FLOAT:
            raise CpuCompileError(f"LAPACK kernel {ctx.inst.name}: element type {self.et}")
        self.fty = _FLOAT[self.et]
        self.size = 4 if self.et == "f32" else 8
        for buf in [*ctx.outputs, *ctx.inputs.values(), *ctx.work_buffers]:
            if not buf.shape.is_row_major:
                raise CpuCompileError(f"LAPACK kernel {ctx.inst.name}: a buffer is not "
                                      "row-major")

    # -- values ----------------------------------------------------------------------------

    def ref(self, value: ir.Value) -> ir.Value:
        """A stack slot holding `value` (allocated in the entry block), for by-pointer args."""
        b = self.b
        entry = b.function.entry_basic_block
        with b.goto_block(entry):
            b.position_at_start(entry)
            slot = b.alloca(value.type)
        b.store(value, slot)
        return slot

    def int_ref(self, v: int) -> ir.Value:
        return self.ref(ir.Constant(I32, int(v)))

    def char_ref(self, ch: str) -> ir.Value:
        return self.ref(ir.Constant(I8, ord(ch)))

    def at(self, ptr: ir.Value, index: ir.Value, per: int, ty: ir.Type | None = None
           ) -> ir.Value:
        """&ptr[index * per] in elements of `ty` (the float type by default)."""
        off = self.b.mul(index, i64(per))
        return self.b.gep(ptr, [off], inbounds=True, source_etype=ty or self.fty)

    def call(self, name: str, args: list[ir.Value]) -> None:
        module = self.b.module
        sym = find.SYMBOL_PREFIX + ("s" if self.et == "f32" else "d") + name
        fn = module.globals.get(sym)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(VOID, [PTR] * len(args)), sym)
            fn.attributes.add("nounwind")
        self.b.call(fn, args)

    def memcpy(self, dst: ir.Value, src: ir.Value, elems: int) -> None:
        module = self.b.module
        name = "llvm.memcpy.p0.p0.i64"
        fn = module.globals.get(name)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(VOID, [PTR, PTR, I64, I1]), name=name)
        self.b.call(fn, [dst, src, i64(elems * self.size), ir.Constant(I1, 0)])

    # -- loops -----------------------------------------------------------------------------

    def batch(self, count: int, body: object) -> None:
        """body(index) for each matrix of the batch."""
        if count == 1:
            body(i64(0))  # type: ignore[operator]
        else:
            for_range(self.b, count, body, name="mat")  # type: ignore[arg-type]

    def transpose_copy(self, dst: ir.Value, src: ir.Value, rows: int, cols: int) -> None:
        """dst (cols x rows, row-major) = src (rows x cols, row-major) transposed, in
        TILE x TILE tiles (each tile's reads and writes stay within a few cache lines per
        row; a plain double loop strides a whole row apart on every write), then the
        strips a whole number of tiles leaves over."""
        t = _TILE
        full_r, full_c = rows // t * t, cols // t * t
        if full_r and full_c:
            def tile_row(ib: ir.Value) -> None:
                def tile_col(jb: ir.Value) -> None:
                    r0, c0 = self.b.mul(ib, i64(t)), self.b.mul(jb, i64(t))
                    self._transpose_block(dst, src, rows, cols, r0, t, c0, t)
                for_range(self.b, cols // t, tile_col, name="tj")
            for_range(self.b, rows // t, tile_row, name="ti")
        if full_c < cols:  # the right strip, every row
            self._transpose_block(dst, src, rows, cols, i64(0), rows, i64(full_c),
                                  cols - full_c)
        if full_r < rows and full_c:  # the bottom strip, the tiled columns
            self._transpose_block(dst, src, rows, cols, i64(full_r), rows - full_r, i64(0),
                                  full_c)

    def _transpose_block(self, dst: ir.Value, src: ir.Value, rows: int, cols: int,
                         r0: ir.Value, nr: int, c0: ir.Value, nc: int) -> None:
        """dst[j, i] = src[i, j] for i in [r0, r0 + nr), j in [c0, c0 + nc)."""
        b = self.b

        def row(di: ir.Value) -> None:
            i = b.add(r0, di)

            def col(dj: ir.Value) -> None:
                j = b.add(c0, dj)
                v = b.load(b.gep(src, [b.add(b.mul(i, i64(cols)), j)], inbounds=True,
                                 source_etype=self.fty), typ=self.fty)
                b.store(v, b.gep(dst, [b.add(b.mul(j, i64(rows)), i)], inbounds=True,
                                 source_etype=self.fty))
            for_range(b, nc, col, name="tc")
        for_range(b, nr, row, name="tr")

    def square_pass(self, ptr: ir.Value, n: int, fn: object) -> None:
        """For each (i, j) of an n x n matrix: fn(i, j, element pointer)."""
        b = self.b

        def row(i: ir.Value) -> None:
            def col(j: ir.Value) -> None:
                p = b.gep(ptr, [b.add(b.mul(i, i64(n)), j)], inbounds=True,
                          source_etype=self.fty)
                fn(i, j, p)  # type: ignore[operator]
            for_range(b, n, col, name="sc")
        for_range(b, n, row, name="sr")

    def transpose_in_place(self, ptr: ir.Value, n: int) -> None:
        b = self.b

        def swap(i: ir.Value, j: ir.Value, p: ir.Value) -> None:
            with b.if_then(b.icmp_signed("<", i, j)):
                q = b.gep(ptr, [b.add(b.mul(j, i64(n)), i)], inbounds=True,
                          source_etype=self.fty)
                x, y = b.load(p, typ=self.fty), b.load(q, typ=self.fty)
                b.store(y, p)
                b.store(x, q)
        self.square_pass(ptr, n, swap)


def _matrices(shape_dims: tuple[int, ...]) -> int:
    count = 1
    for d in shape_dims[:-2]:
        count *= d
    return count


def _potrf(k: _Kernel) -> None:
    ctx, b = k.ctx, k.b
    a = ctx.inputs[k.inst.operands[0]].ptr
    out = ctx.outputs[0].ptr
    n = k.inst.shape.dimensions[-1]
    lower = bool(k.inst.attrs.get("lower", False))
    uplo, nn, info = k.char_ref("U" if lower else "L"), k.int_ref(n), k.int_ref(0)
    nan = ir.Constant(k.fty, float("nan"))
    zero = ir.Constant(k.fty, 0.0)

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
    k.batch(_matrices(k.inst.shape.dimensions), one)


def _trsm(k: _Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    rhs = ctx.inputs[inst.operands[1]].ptr
    out = ctx.outputs[0].ptr
    ma = inst.operands[0].shape.dimensions[-1]
    r, c = inst.shape.dimensions[-2:]
    attrs = inst.attrs
    side = k.char_ref("R" if attrs.get("left_side") else "L")
    uplo = k.char_ref("U" if attrs.get("lower") else "L")
    trans = k.char_ref("N" if attrs.get("transpose_a", "NO_TRANSPOSE") == "NO_TRANSPOSE"
                       else "T")
    diag = k.char_ref("U" if attrs.get("unit_diagonal") else "N")
    mm, nn, lda = k.int_ref(c), k.int_ref(r), k.int_ref(ma)
    alpha = k.ref(ir.Constant(k.fty, 1.0))
    count = _matrices(inst.shape.dimensions)
    k.memcpy(out, rhs, count * r * c)

    def one(i: ir.Value) -> None:
        k.call("trsm", [side, uplo, trans, diag, mm, nn, alpha, k.at(a, i, ma * ma), lda,
                        k.at(out, i, r * c), mm])
    k.batch(count, one)


def _getrf(k: _Kernel) -> None:
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
    k.batch(_matrices(inst.operands[0].shape.dimensions), one)


def _geqrf(k: _Kernel) -> None:
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
    k.batch(_matrices(inst.operands[0].shape.dimensions), one)


def _orgqr(k: _Kernel) -> None:
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
    k.batch(_matrices(inst.operands[0].shape.dimensions), one)


def _syevd(k: _Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    v, w, info = (o.ptr for o in ctx.outputs)
    work, iwork = (x.ptr for x in ctx.work_buffers)
    lwork, liwork = (x.shape.size for x in ctx.work_buffers)
    n = inst.operands[0].shape.dimensions[-1]
    lower = "uplo=U" not in (inst.attrs.get("backend_config") or "")
    jobz, uplo = k.char_ref("V"), k.char_ref("U" if lower else "L")
    nn, lw, liw = k.int_ref(n), k.int_ref(lwork), k.int_ref(liwork)

    def one(i: ir.Value) -> None:
        pv = k.at(v, i, n * n)
        k.memcpy(pv, k.at(a, i, n * n), n * n)
        k.call("syevd", [jobz, uplo, nn, pv, nn, k.at(w, i, n), work, lw, iwork, liw,
                         k.at(info, i, 1, I32)])
        k.transpose_in_place(pv, n)
    k.batch(_matrices(inst.operands[0].shape.dimensions), one)


def _gesdd(k: _Kernel) -> None:
    ctx, inst = k.ctx, k.inst
    a = ctx.inputs[inst.operands[0]].ptr
    job = gesdd_job(inst)
    outs = [o.ptr for o in ctx.outputs]
    s, info = outs[0], outs[-1]
    acopy, work, iwork = (x.ptr for x in ctx.work_buffers)
    lwork = ctx.work_buffers[1].shape.size
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
        k.call("gesdd", [jobz, rows, cols, acopy, rows, k.at(s, i, kk), vt_ptr, ldu, u_ptr,
                         ldvt, work, lw, iwork, k.at(info, i, 1, I32)])
    k.batch(_matrices(inst.operands[0].shape.dimensions), one)


def _gtsv(k: _Kernel) -> None:
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
    k.batch(_matrices(dims), one)


_EMITTERS = {"potrf": _potrf, "trsm": _trsm, "getrf": _getrf, "geqrf": _geqrf,
             "orgqr": _orgqr, "syevd": _syevd, "gesdd": _gesdd, "gtsv": _gtsv}


class LapackKind:
    """KernelKind of the LAPACK-backed instructions (see the module doc)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        name = routine(ctx.inst)
        if name is None:  # pragma: no cover - kinds.py's test
            raise CpuCompileError(f"{ctx.inst.name} is not a LAPACK instruction")
        _EMITTERS[name](_Kernel(ctx))


KIND = LapackKind()
