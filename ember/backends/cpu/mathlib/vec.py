"""Math helpers with hand-written vector variants, and 16-entry tables looked up in registers.

Input: a module, a helper name (`ember.pow.f32`), its scalar type and arity, and a body
builder `body(fp, lookup, args, branchy)` written once against `Fp` (whose type may be a
scalar or a vector: `VecFp`). Output: the scalar helper the kernel emitter calls.

Why: the loop vectorizer widens a scalar helper that was inlined into the loop, and turns
each table load `T[i]` into a gather (~1 element per cycle on Zen 4, several per result).
With AVX-512 a 16-entry f64 table fits in two registers and `vpermi2var.pd.512` picks 8
entries in one instruction (a 16-entry f32 table: one register, `vpermps` picks 16). The
vectorizer cannot emit that from scalar code, but it can call a vector variant of a
scalar function it was told about (the vector function ABI:
the attribute `"vector-function-abi-variant"="_ZGV_LLVM_N<lanes><v..>_<name>(<variant>),..."`
on the scalar function). So with AVX-512 F and DQ (`permute_tables()`):
  - the body is built once, as `ember.<base>.v<L><type>` on L lanes (one zmm of inputs:
    16 f32, 8 f64), with table lookups by vpermi2var; it may branch (`branchy`): a short
    common path, and the general code for a vector with any lane that needs it;
  - the vectorizer chooses the lane count, so variants for L/4, L/2 (a host preferring
    256-bit vectors) and 2L (loops mixing widths) wrap it: fewer lanes are padded with
    copies of lane 0 and cut back, twice as many are two calls;
  - the scalar helper `ember.<base>.<type>` (noinline, memory(none)) runs the L-lane
    variant on a splat of its arguments: the loop's scalar tail and loops left scalar
    compute with the very same code, so a lane's result never depends on where it ran;
  - the scalar helper and the L/4 wrapper call the L-lane body through a noinline call
    site (each inlined copy is compiled again), and a branchy body can move its general
    code out of line (`out_of_line`): a first compile of an f32 log kernel took 52 ms of
    CPU, 37 so; L/2 and 2L inline it: loops mixing f32 and f64 run on those (f64 pow in
    a loop of f32 data: 1.24 ns per element, 3.7 through calls);
  The variants and the scalar helper are kept alive until the vectorizer runs by
  `llvm.compiler.used` (the helper also keeps its signature: see below); the
  body asks for 512-bit legal types (`min-legal-vector-width`), else a target that
  prefers 256-bit vectors would split its zmm values.
  A body's branchy fast path must give the general code's values on the lanes it takes.
Without AVX-512 there is no variant: the helper is the body on scalars (the general code,
table lookups as loads from a private constant array), alwaysinline as usual, and the
vectorizer turns the loads into gathers. Tests compile this path explicitly and compare
it bit for bit with the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir

from ember.backends.cpu.mathlib.fp import Fp, intrinsic, type_suffix

PTR = ir.PointerType()
NOINLINE = ("noinline",)
Lookup = Callable[[Fp, str, Sequence[float], ir.Value], ir.Value]
Body = Callable[[Fp, Lookup, list[ir.Value], bool], ir.Value]


class VecFp(Fp):
    """`Fp` on vectors of `lanes` floats: splat constants, vector intrinsics, vector ints."""

    def __init__(self, b: ir.IRBuilder, elem: ir.Type, lanes: int) -> None:
        super().__init__(b, elem)
        self.elem = elem
        self.lanes = lanes
        self.ty = ir.VectorType(elem, lanes)
        self.ity = ir.VectorType(ir.IntType(self.bits), lanes)

    def _intr(self, name: str, *args: ir.Value) -> ir.Value:
        fn = intrinsic(self.module, f"llvm.{name}.v{self.lanes}{type_suffix(self.elem)}",
                       self.ty, [self.ty] * len(args))
        return self.b.call(fn, list(args))


def like(fp: Fp, elem: ir.Type) -> Fp:
    """An `Fp` on `elem` with fp's lane count (scalar for a scalar fp)."""
    if isinstance(fp, VecFp):
        return VecFp(fp.b, elem, fp.lanes)
    return Fp(fp.b, elem)


def permute_tables() -> bool:
    """Whether the host has AVX-512 F and DQ (vpermi2var, vscalefpd, vrangepd)."""
    from ember.backends.cpu.jit.llvm_target import host_has

    return host_has("+avx512f", "+avx512dq")  # vrangepd is DQ


def _table_global(module: ir.Module, name: str, values: Sequence[float],
                  elem: ir.Type) -> ir.GlobalVariable:
    gname = f"ember.tab.{name}"
    gv = module.globals.get(gname)
    if gv is None:
        aty = ir.ArrayType(elem, len(values))
        gv = ir.GlobalVariable(module, aty, gname)
        gv.global_constant = True
        gv.linkage = "private"
        gv.initializer = ir.Constant(aty, [float(v) for v in values])
    return gv


def scalar_lookup(fp: Fp, name: str, values: Sequence[float], idx: ir.Value) -> ir.Value:
    """values[idx mod 16] for a scalar integer idx: a load from a constant array of fp's
    float type (an f32 table's entries are float32 values)."""
    assert len(values) == 16
    gv = _table_global(fp.module, name, values, fp.ty)
    idx = fp.b.and_(idx, ir.Constant(idx.type, 15))
    p = fp.b.gep(gv, [ir.Constant(idx.type, 0), idx], inbounds=True)
    return fp.b.load(p)


def permute_lookup(fp: Fp, name: str, values: Sequence[float], idx: ir.Value) -> ir.Value:
    """values[idx mod 16] per lane for a 16-entry table and an integer vector idx of fp's
    lanes: f64 (N a multiple of 8) by one vpermi2var.pd.512 per 8 lanes (entries 0-7 in
    one register, 8-15 in the other; the instruction reads the low 4 bits of each index);
    f32 (N a multiple of 16) by one vpermps (permvar.sf.512) per 16 lanes, the table in
    one register (low 4 bits of each index)."""
    assert isinstance(fp, VecFp) and len(values) == 16
    b = fp.b
    if fp.bits == 32:
        assert fp.lanes % 16 == 0
        v16 = ir.VectorType(ir.FloatType(), 16)
        i16 = ir.VectorType(ir.IntType(32), 16)
        fn = intrinsic(fp.module, "llvm.x86.avx512.permvar.sf.512", v16, [v16, i16])
        table = ir.Constant(v16, [float(v) for v in values])
        return concat(b, [b.call(fn, [table, sub]) for sub in _chunks(fp, idx, 16)])
    assert fp.lanes % 8 == 0
    v8 = ir.VectorType(ir.DoubleType(), 8)
    i8 = ir.VectorType(ir.IntType(64), 8)
    fn = intrinsic(fp.module, "llvm.x86.avx512.vpermi2var.pd.512", v8, [v8, i8, v8])
    lo = ir.Constant(v8, [float(v) for v in values[:8]])
    hi = ir.Constant(v8, [float(v) for v in values[8:]])
    return concat(b, [b.call(fn, [lo, sub, hi]) for sub in _chunks(fp, idx)])


def _chunks(fp: Fp, v: ir.Value, width: int = 8) -> list[ir.Value]:
    """v (a vector of fp.lanes lanes, a multiple of `width`) as its `width`-lane pieces."""
    if fp.lanes == width:
        return [v]
    return [fp.b.shuffle_vector(v, ir.Constant(v.type, None),
                                ir.Constant(ir.VectorType(ir.IntType(32), width),
                                            list(range(k, k + width))))
            for k in range(0, fp.lanes, width)]


def scalef(fp: Fp, v: ir.Value, s: ir.Value) -> ir.Value:
    """v 2^floor(s) per lane (vscalefpd / vscalefps: exact unless the result leaves the
    normal range, then rounded once; s = +inf gives inf, -inf gives 0 for finite nonzero
    v; a NaN in either gives NaN). s is a float: no conversion to an integer first."""
    n = 16 if fp.bits == 32 else 8
    assert isinstance(fp, VecFp)
    vt = ir.VectorType(fp.elem, n)
    mask = ir.IntType(n)
    fn = intrinsic(fp.module, f"llvm.x86.avx512.mask.scalef.{'ps' if n == 16 else 'pd'}.512",
                   vt, [vt, vt, vt, mask, ir.IntType(32)])
    return concat(fp.b, [fp.b.call(fn, [a, c, ir.Constant(vt, 0.0), ir.Constant(mask, -1),
                                        ir.Constant(ir.IntType(32), 4)])
                         for a, c in zip(_chunks(fp, v, n), _chunks(fp, s, n))])


def trunc_to_int(fp: Fp, v: ir.Value) -> ir.Value:
    """v truncated to i32 per lane by vcvttps2dq (f32, 16 lanes per instruction): a NaN or
    out-of-range lane gives 0x80000000, where LLVM's fptosi would give poison."""
    assert isinstance(fp, VecFp) and fp.bits == 32 and fp.lanes % 16 == 0
    v16 = ir.VectorType(ir.FloatType(), 16)
    i16 = ir.VectorType(ir.IntType(32), 16)
    fn = intrinsic(fp.module, "llvm.x86.avx512.mask.cvttps2dq.512", i16,
                   [v16, i16, ir.IntType(16), ir.IntType(32)])
    return concat(fp.b, [fp.b.call(fn, [a, ir.Constant(i16, None), ir.Constant(ir.IntType(16), -1),
                                        ir.Constant(ir.IntType(32), 4)])
                         for a in _chunks(fp, v, 16)])


def clamp_abs(fp: Fp, v: ir.Value, bound: float) -> ir.Value:
    """copysign(min(|v|, bound), v) per lane in one vrangepd (imm 2: smaller magnitude,
    sign of the first operand); v not NaN."""
    v8 = ir.VectorType(ir.DoubleType(), 8)
    fn = intrinsic(fp.module, "llvm.x86.avx512.mask.range.pd.512", v8,
                   [v8, v8, ir.IntType(32), v8, ir.IntType(8), ir.IntType(32)])
    c = ir.Constant(v8, float(bound))
    return concat(fp.b, [fp.b.call(fn, [a, c, ir.Constant(ir.IntType(32), 2),
                                        ir.Constant(v8, 0.0), ir.Constant(ir.IntType(8), -1),
                                        ir.Constant(ir.IntType(32), 4)])
                         for a in _chunks(fp, v)])


def concat(b: ir.IRBuilder, parts: list[ir.Value]) -> ir.Value:
    """The vectors of `parts` (equal lengths, a power-of-two count) joined in order."""
    while len(parts) > 1:
        n = parts[0].type.count
        mask = ir.Constant(ir.VectorType(ir.IntType(32), 2 * n), list(range(2 * n)))
        parts = [b.shuffle_vector(parts[i], parts[i + 1], mask)
                 for i in range(0, len(parts), 2)]
    return parts[0]


def _keep_alive(module: ir.Module, fn: ir.Function) -> None:
    """Add fn to `llvm.compiler.used` (one appending array per module, grown in place)."""
    gv = module.globals.get("llvm.compiler.used")
    members = [] if gv is None else list(gv.initializer.constant)
    members.append(fn)
    aty = ir.ArrayType(PTR, len(members))
    if gv is None:
        gv = ir.GlobalVariable(module, aty, "llvm.compiler.used")
        gv.linkage = "appending"
        gv.section = "llvm.metadata"
    gv.value_type = aty
    gv.initializer = ir.Constant(aty, members)


def _pad_or_split(b: ir.IRBuilder, native: ir.Function, args: list[ir.Value], n: int,
                  lanes: int) -> ir.Value:
    """native (on `lanes` lanes) applied to n-lane (or scalar, n = 0) args: fewer lanes
    are padded with copies of lane 0 (a valid input, so the padding cannot send the call
    to a slow path lane 0 would not take) and cut back; twice as many are two calls."""
    i32 = ir.IntType(32)
    if n == 2 * lanes:
        halves = [[b.shuffle_vector(a, ir.Constant(a.type, None), ir.Constant(
            ir.VectorType(i32, lanes), list(range(k, k + lanes)))) for a in args]
            for k in (0, lanes)]
        return concat(b, [b.call(native, h) for h in halves])
    if n == 0:  # a scalar: splat it
        wide = [b.shuffle_vector(b.insert_element(ir.Constant(native.args[0].type, None), a,
                                                  ir.Constant(i32, 0)),
                                 ir.Constant(native.args[0].type, None),
                                 ir.Constant(ir.VectorType(i32, lanes), [0] * lanes))
                for a in args]
        return b.extract_element(b.call(native, wide, attrs=NOINLINE), ir.Constant(i32, 0))
    pad = ir.Constant(ir.VectorType(i32, lanes), list(range(n)) + [0] * (lanes - n))
    wide = [b.shuffle_vector(a, ir.Constant(a.type, None), pad) for a in args]
    res = b.call(native, wide, attrs=NOINLINE if n < lanes // 2 else ())
    return b.shuffle_vector(res, ir.Constant(res.type, None),
                            ir.Constant(ir.VectorType(i32, n), list(range(n))))


def _function(module: ir.Module, name: str, ty: ir.Type, nargs: int) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(ty, [ty] * nargs), name=name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    set.add(fn.attributes, "memory(none)")  # llvmlite's list lacks it; printed as is
    return fn


def out_of_line(fp: Fp, name: str, build: Callable[[Fp, list[ir.Value]], ir.Value],
                args: list[ir.Value]) -> ir.Value:
    """A call of `name` (defined once per module: noinline, 512-bit legal, its body
    `build(vector fp, its arguments)`) on args of fp's vector type: a branchy body's
    general code, compiled once instead of in every copy of the body (the loop's, the
    variants', the scalar helper's)."""
    assert isinstance(fp, VecFp)
    fn = fp.module.globals.get(name)
    if fn is None:
        fn = _function(fp.module, name, fp.ty, len(args))
        fn.attributes.add("noinline")
        set.add(fn.attributes, '"min-legal-vector-width"="512"')
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(build(VecFp(b, fp.elem, fp.lanes), list(fn.args)))
    return fp.b.call(fn, args)


def define_with_variant(module: ir.Module, base: str, scalar_ty: ir.Type, nargs: int,
                        body: Body, permute: bool | None = None) -> ir.Function:
    """`ember.<base>.f32|f64`; with `permute` (default: the host has AVX-512) a call
    of its vector variant, which it names for the vectorizer. See the module docstring."""
    suf = type_suffix(scalar_ty)
    name = f"ember.{base}.{suf}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    if permute is None:
        permute = permute_tables()
    if not permute:
        fn = ir.Function(module, ir.FunctionType(scalar_ty, [scalar_ty] * nargs), name=name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        fn.attributes.add("alwaysinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        b.ret(body(Fp(b, scalar_ty), scalar_lookup, list(fn.args), False))
        return fn
    lanes = 512 // (32 if suf == "f32" else 64)
    native = _function(module, f"ember.{base}.v{lanes}{suf}", ir.VectorType(scalar_ty, lanes),
                       nargs)
    # zmm registers even where the target prefers 256-bit vectors (which splits 512-bit
    # types into halves unless a function asks for them, as this one does)
    set.add(native.attributes, '"min-legal-vector-width"="512"')
    # inlined into the vectorized loops by llvm_target.optimize's late always-inliner
    native.attributes.add("alwaysinline")
    vb = ir.IRBuilder(native.append_basic_block("entry"))
    vb.ret(body(VecFp(vb, scalar_ty, lanes), permute_lookup, list(native.args), True))
    mangled = [f"_ZGV_LLVM_N{lanes}{'v' * nargs}_{name}({native.name})"]
    _keep_alive(module, native)
    # the vectorizer picks the lane count (a host preferring 256-bit vectors picks half,
    # a loop mixing f32 and f64 may pick twice as many): wrappers for those
    for n in (lanes // 4, lanes // 2, 2 * lanes):
        w = _function(module, f"ember.{base}.v{n}{suf}", ir.VectorType(scalar_ty, n), nargs)
        wb = ir.IRBuilder(w.append_basic_block("entry"))
        wb.ret(_pad_or_split(wb, native, list(w.args), n, lanes))
        mangled.append(f"_ZGV_LLVM_N{n}{'v' * nargs}_{name}({w.name})")
        _keep_alive(module, w)
    # the scalar helper (the loop's tail, loops the vectorizer leaves alone) runs the
    # variant on a splat: the same code, so the same bits as a vector lane. noinline:
    # inlined before vectorization, the call (and its variants) would be gone.
    fn = _function(module, name, scalar_ty, nargs)
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(_pad_or_split(b, native, list(fn.args), 0, lanes))
    set.add(fn.attributes, f'"vector-function-abi-variant"="{",".join(mangled)}"')
    # kept alive too: an internal function whose every call passes one constant (x**1.7)
    # would have it propagated in and the parameter deleted (IPSCCP, dead argument
    # elimination), so the call no longer matched its variants and the loop ran scalar,
    # 40x slower; a function whose address escapes keeps its signature
    _keep_alive(module, fn)
    return fn
