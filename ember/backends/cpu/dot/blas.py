"""BLAS for generated code: fixed entry points, bound to the process's BLAS at link time.

Generated kernels call six functions with one ABI whatever BLAS the process has
(row-major, alpha = 1, beta = 0, i32 transpose flags 0/1, i64 sizes):
  ember_blas_sgemm / _dgemm / _cgemm / _zgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
                                                                      c = op(a) op(b)
  ember_blas_sgemv / _dgemv(t, m, n, a, lda, x, incx, y, incy)          y = op(a) x
(cgemm/zgemm: complex64/complex128, interleaved as NumPy stores them; op is never a
conjugation; alpha and beta are the complex 1 and 0, by reference in both ABIs)
where `a` holds an m x n (gemv) or m x k / k x m (gemm, ta) row-major matrix with row pitch
lda. Object code only names these symbols, never an address, so the disk cache's object
code stays valid in any process.

`register_symbols(llvm)` (called by the linker step before it loads object code that
names them) loads a small adapter once per process (its object code is disk-cached by
ABI, since it too names the library's functions only by symbol) and tells the JIT linker
where its functions are. The adapter:
- forwards to the BLAS `blas_find.find()` located (CBLAS with 32/64-bit ints, or SciPy's
  Fortran capsules, where row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T,
  so the operands swap), through symbols `ember_blasimpl_*` bound to their addresses;
- makes every call single-threaded: Ember's threads split the work (emitter.py), so BLAS's
  own threads must stay asleep. Callers count in and out under a spin lock; the first in
  saves the library's thread count and sets it to 1, the last out restores it;
- falls back to plain loops (same sums, k in order) when there is no BLAS or a size does not
  fit a 32-bit BLAS integer.
"""

from __future__ import annotations

from typing import Any

import llvmlite.ir as ir

from ember.backends.cpu.dot import blas_find
from ember.backends.cpu.jit.host_symbol import HostSymbol
from ember.codegen.irtypes import I1, I32, I64, PTR, VOID, i64
from ember.codegen.loops import for_span

SYMBOL_PREFIX = "ember_blas_"
ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv", "cgemm", "zgemm")
F32, F64 = ir.FloatType(), ir.DoubleType()
_FLOAT = {"s": F32, "d": F64, "c": ir.LiteralStructType([F32, F32]),
          "z": ir.LiteralStructType([F64, F64])}

GEMM_TYPE = ir.FunctionType(VOID, [I32, I32, I64, I64, I64, PTR, I64, PTR, I64, PTR, I64])
GEMV_TYPE = ir.FunctionType(VOID, [I32, I64, I64, PTR, I64, PTR, I64, PTR, I64])



def routine(et: str, kind: str) -> str:
    """'f32', 'gemm' -> 'sgemm'; 'c128', 'gemm' -> 'zgemm'."""
    return {"f32": "s", "f64": "d", "c64": "c", "c128": "z"}[et] + kind


def declare(module: ir.Module, name: str) -> ir.Function:
    """The declaration of `ember_blas_<name>` in a generated module."""
    sym = SYMBOL_PREFIX + name
    fn = module.globals.get(sym)
    if fn is None:
        fn = ir.Function(module, GEMM_TYPE if name.endswith("gemm") else GEMV_TYPE, sym)
        fn.attributes.add("nounwind")
    return fn


def calls_blas(obj: bytes) -> bool:
    """Does object code name one of the entry points (so they must be linked first)?"""
    return SYMBOL_PREFIX.encode() in obj


def _load_adapter(llvm: Any) -> tuple[Any, blas_find.BlasFunctions | None]:
    """Build the adapter and publish its entry points to the linker: (its engine, kept for
    the life of the process since its code is called, and what it forwards to)."""
    from ember.backends.cpu.jit import llvm_target

    found = blas_find.find()
    if found is not None:
        for r in ROUTINES:
            llvm.add_symbol(f"ember_blasimpl_{r}", found.routines[r])
        if found.get_threads and found.set_threads:
            llvm.add_symbol("ember_blasimpl_get_threads", found.get_threads)
            llvm.add_symbol("ember_blasimpl_set_threads", found.set_threads)
    engine = llvm_target.link_library(_adapter_object(found),
                                      tuple(SYMBOL_PREFIX + r for r in ROUTINES))
    return engine, found


ADAPTER = HostSymbol(_load_adapter)
# builds the adapter (once per process) and publishes its entry points to the linker
register_symbols = ADAPTER.register


def info() -> blas_find.BlasFunctions | None:
    """What the adapter forwards to (None: loops), once `register_symbols` has run."""
    return ADAPTER.result[1] if ADAPTER.result is not None else None


def _adapter_object(found: blas_find.BlasFunctions | None) -> bytes:
    """Object code of the adapter, from the disk cache when it has it: the code names the
    library's functions by symbol, never by address, so it depends only on the ABI."""
    from ember.backends.cpu.jit import disk_cache, llvm_target

    t = llvm_target.target()
    abi = "loops" if found is None else (
        f"{found.abi}|{found.int_bits}|threads={bool(found.get_threads and found.set_threads)}")

    def build() -> bytes:
        mod = t.llvm.parse_assembly(adapter_ir(found), context=t.llvm.create_context())
        mod.triple = t.triple
        mod.data_layout = str(t.machine.target_data)
        mod.verify()
        if found is None:  # the loops deserve O3; forwarding code needs no optimization
            llvm_target.optimize(mod)
        return llvm_target.emit_object(mod)

    return disk_cache.cached_object(f"ember-blas-adapter|{abi}", "adapter", t.key,
                                    {"what": "BLAS adapter", "abi": abi}, build)


# -- the adapter module ---------------------------------------------------------------------


def adapter_ir(found: blas_find.BlasFunctions | None) -> str:
    m = ir.Module(name="ember_blas_adapter")
    threads = _thread_guard(m, found)
    for name in ROUTINES:
        _define_entry(m, name, found, threads)
    return str(m)


def _thread_guard(m: ir.Module, found: blas_find.BlasFunctions | None
                  ) -> tuple[ir.Function, ir.Function] | None:
    """`enter()` / `leave()`: BLAS runs on one thread between the first enter and the last
    leave of overlapping callers."""
    if found is None or not (found.get_threads and found.set_threads):
        return None
    get = ir.Function(m, ir.FunctionType(I32, []), "ember_blasimpl_get_threads")
    put = ir.Function(m, ir.FunctionType(VOID, [I32]), "ember_blasimpl_set_threads")
    lock = _global(m, "ember_blas.lock", I32)
    active = _global(m, "ember_blas.active", I64)
    saved = _global(m, "ember_blas.saved", I32)
    one32 = ir.Constant(I32, 1)

    def guarded(name: str, delta: int) -> ir.Function:
        fn = ir.Function(m, ir.FunctionType(VOID, []), name)
        fn.linkage = "internal"
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        spin = fn.append_basic_block("spin")
        body = fn.append_basic_block("locked")
        edge = fn.append_basic_block("edge")
        done = fn.append_basic_block("done")
        b.branch(spin)
        b.position_at_end(spin)
        got = b.extract_value(b.cmpxchg(lock, ir.Constant(I32, 0), one32, "acquire",
                                        "monotonic"), 1)
        b.cbranch(got, body, spin)
        b.position_at_end(body)
        n = b.load(active, typ=I64)
        new = b.add(n, i64(delta))
        b.store(new, active)
        # enter: 0 -> 1 saves and sets 1; leave: 1 -> 0 restores
        b.cbranch(b.icmp_signed("==", n if delta > 0 else new, i64(0)), edge, done)
        b.position_at_end(edge)
        if delta > 0:
            cur = b.call(get, [])
            b.store(cur, saved)
            with b.if_then(b.icmp_signed(">", cur, one32)):
                b.call(put, [one32])
        else:
            old = b.load(saved, typ=I32)
            with b.if_then(b.icmp_signed(">", old, one32)):
                b.call(put, [old])
        b.branch(done)
        b.position_at_end(done)
        b.store_atomic(ir.Constant(I32, 0), lock, "release", 4)
        b.ret_void()
        return fn

    return guarded("ember_blas.enter", 1), guarded("ember_blas.leave", -1)


def _global(m: ir.Module, name: str, ty: ir.Type) -> ir.GlobalVariable:
    g = ir.GlobalVariable(m, ty, name)
    g.linkage = "internal"
    g.initializer = ir.Constant(ty, 0)
    return g


def _define_entry(m: ir.Module, name: str, found: blas_find.BlasFunctions | None,
                  threads: tuple[ir.Function, ir.Function] | None) -> None:
    gemm = name.endswith("gemm")
    fn = ir.Function(m, GEMM_TYPE if gemm else GEMV_TYPE, SYMBOL_PREFIX + name)
    fn.attributes.add("nounwind")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    args = list(fn.args)
    if found is not None and found.int_bits == 64:  # every size fits: no loops needed
        _call_blas(b, m, name, found, args, threads)
        b.ret_void()
        return
    loops = _fallback_gemm(m, name[0])
    if gemm:
        ta, tb, mm, n, k, a, lda, bb, ldb, c, ldc = args
        loop_args = args
    else:  # y = op(A) x is the gemm op(A) (rows x cols) times x (cols x 1), pitch incx
        t, mm, n, a, lda, x, incx, y, incy = args
        rows, cols = b.select(b.trunc(t, I1), n, mm), b.select(b.trunc(t, I1), mm, n)
        loop_args = [t, ir.Constant(I32, 0), rows, i64(1), cols, a, lda, x, incx, y, incy]
    if found is None:
        b.call(loops, loop_args)
        b.ret_void()
        return
    sizes = args[2:5] + [lda, ldb, ldc] if gemm else [mm, n, lda, incx, incy]
    fits: ir.Value = ir.Constant(I1, 1)
    if found.int_bits == 32:
        for s in sizes:
            fits = b.and_(fits, b.icmp_unsigned("<=", s, i64(2**31 - 1)))
    with b.if_else(fits) as (ok, too_big):
        with ok:
            _call_blas(b, m, name, found, args, threads)
        with too_big:
            b.call(loops, loop_args)
    b.ret_void()


def _call_blas(b: ir.IRBuilder, m: ir.Module, name: str, found: blas_find.BlasFunctions,
               args: list[ir.Value], threads: tuple[ir.Function, ir.Function] | None) -> None:
    """The library call, between the thread guard's enter and leave."""
    if threads is not None:
        b.call(threads[0], [])
    _forward(b, m, name, found, args)
    if threads is not None:
        b.call(threads[1], [])


def _scalar(fty: ir.Type, value: float) -> ir.Constant:
    """`value` in a real type, or as value + 0i in a complex (struct) one."""
    if isinstance(fty, ir.LiteralStructType):
        part = fty.elements[0]
        return ir.Constant(fty, [ir.Constant(part, value), ir.Constant(part, 0.0)])
    return ir.Constant(fty, value)


def _forward(b: ir.IRBuilder, m: ir.Module, name: str, found: blas_find.BlasFunctions,
             args: list[ir.Value]) -> None:
    ity = I64 if found.int_bits == 64 else I32
    fty = _FLOAT[name[0]]
    one, zero = _scalar(fty, 1.0), _scalar(fty, 0.0)
    complex_ = name[0] in "cz"
    entry = b.function.entry_basic_block

    def ref(v: ir.Value, ty: ir.Type) -> ir.Value:
        with b.goto_block(entry):
            b.position_at_start(entry)
            slot = b.alloca(ty)
        b.store(v, slot)
        return slot

    def n(v: ir.Value) -> ir.Value:  # a size in the library's integer type
        return v if ity is I64 else b.trunc(v, I32)

    gemm = name.endswith("gemm")
    if found.abi == "cblas":
        def flag(t: ir.Value) -> ir.Value:  # CblasNoTrans = 111, CblasTrans = 112
            return b.add(t, ir.Constant(I32, 111))

        row_major = ir.Constant(I32, 101)
        if gemm:
            ta, tb, mm, nn, k, a, lda, bb, ldb, c, ldc = args
            # (CBLAS passes a complex alpha and beta by pointer, a real one by value)
            sty = PTR if complex_ else fty
            alpha, beta = (ref(one, fty), ref(zero, fty)) if complex_ else (one, zero)
            ty = ir.FunctionType(VOID, [I32, I32, I32, ity, ity, ity, sty, PTR, ity, PTR, ity,
                                        sty, PTR, ity])
            call = [row_major, flag(ta), flag(tb), n(mm), n(nn), n(k), alpha, a, n(lda), bb,
                    n(ldb), beta, c, n(ldc)]
        else:
            t, mm, nn, a, lda, x, incx, y, incy = args
            ty = ir.FunctionType(VOID, [I32, I32, ity, ity, fty, PTR, ity, PTR, ity, fty, PTR,
                                        ity])
            call = [row_major, flag(t), n(mm), n(nn), one, a, n(lda), x, n(incx), zero, y,
                    n(incy)]
        b.call(ir.Function(m, ty, f"ember_blasimpl_{name}"), call)
        return
    # Fortran: column-major, by reference; a row-major matrix is its transpose there
    def char(t: ir.Value, flip: bool) -> ir.Value:  # 'N' = 78, 'T' = 84
        t = b.xor(t, ir.Constant(I32, 1)) if flip else t
        code = b.add(b.mul(t, ir.Constant(I32, 6)), ir.Constant(I32, 78))
        return ref(b.trunc(code, ir.IntType(8)), ir.IntType(8))

    def iref(v: ir.Value) -> ir.Value:
        return ref(n(v), ity)

    strlen = [i64(1), i64(1)]  # hidden CHARACTER lengths (gfortran ABI; C BLAS ignores them)
    if gemm:
        ta, tb, mm, nn, k, a, lda, bb, ldb, c, ldc = args
        ty = ir.FunctionType(VOID, [PTR] * 13 + [I64, I64])
        call = [char(tb, False), char(ta, False), iref(nn), iref(mm), iref(k), ref(one, fty),
                bb, iref(ldb), a, iref(lda), ref(zero, fty), c, iref(ldc), *strlen]
    else:
        t, mm, nn, a, lda, x, incx, y, incy = args
        ty = ir.FunctionType(VOID, [PTR] * 11 + [I64])
        call = [char(t, True), iref(nn), iref(mm), ref(one, fty), a, iref(lda), x, iref(incx),
                ref(zero, fty), y, iref(incy), strlen[0]]
    b.call(ir.Function(m, ty, f"ember_blasimpl_{name}"), call)


def _fallback_gemm(m: ir.Module, prec: str) -> ir.Function:
    """Row-major c = op(a) op(b) by loops: c = 0, then for i, p, j: c[i,j] += a(i,p) b(p,j),
    so each sum runs over p in order, like the generated dot loops (complex: the product
    (ac - bd) + i(ad + bc) added part by part)."""
    name = f"ember_blas.loops.{prec}gemm"
    fn = m.globals.get(name)
    if fn is not None:
        return fn
    fty = _FLOAT[prec]
    fn = ir.Function(m, GEMM_TYPE, name)
    fn.linkage = "internal"
    ta, tb, mm, n, k, a, lda, bb, ldb, c, ldc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero = i64(0)
    ta1, tb1 = b.trunc(ta, I1), b.trunc(tb, I1)

    def at(base: ir.Value, row: ir.Value, col: ir.Value, ld: ir.Value) -> ir.Value:
        return b.gep(base, [b.add(b.mul(row, ld), col)], source_etype=fty)

    def madd(acc: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
        if prec not in "cz":
            return b.fadd(acc, b.fmul(x, y))
        (xr, xi), (yr, yi) = ((b.extract_value(v, 0), b.extract_value(v, 1)) for v in (x, y))
        re = b.fsub(b.fmul(xr, yr), b.fmul(xi, yi))
        im = b.fadd(b.fmul(xr, yi), b.fmul(xi, yr))
        acc = b.insert_value(acc, b.fadd(b.extract_value(acc, 0), re), 0)
        return b.insert_value(acc, b.fadd(b.extract_value(acc, 1), im), 1)

    def row(i: ir.Value) -> None:
        for_span(b, zero, n, lambda j: b.store(_scalar(fty, 0.0), at(c, i, j, ldc)),
                 name="z")

        def step(p: ir.Value) -> None:
            av = b.load(b.select(ta1, at(a, p, i, lda), at(a, i, p, lda)), typ=fty)

            def inner(j: ir.Value) -> None:
                bv = b.load(b.select(tb1, at(bb, j, p, ldb), at(bb, p, j, ldb)), typ=fty)
                cp = at(c, i, j, ldc)
                b.store(madd(b.load(cp, typ=fty), av, bv), cp)

            for_span(b, zero, n, inner, name="j")

        for_span(b, zero, k, step, name="p")

    for_span(b, zero, mm, row, name="i")
    b.ret_void()
    return fn
