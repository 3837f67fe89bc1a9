"""IR helpers of the LAPACK kernels (emit.py, eig.py): one matrix at a time, row-major.

Input: a KernelContext whose first operand's element type is f32, f64, c64 or c128.
Output: `Kernel`, the builder helpers every routine's kernel uses: stack slots for LAPACK's
by-pointer arguments, element addressing, the call of `ember_lapack_<prefix><routine>`
(find.py's symbols; the complex routines' names where they differ: heevd for syevd, ungqr
for orgqr), tiled transposes, in-place (conjugate) transposes.
A complex element is an LLVM [2 x float|double] (real part, imaginary part), as NumPy and
LAPACK store it; the helpers move it whole, so a transpose is the same loop for every type.
Invariant: every buffer is row-major (checked).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.errors import CpuCompileError
from ember.backends.cpu.lapack import find
from ember.codegen.irtypes import I1, I8, I32, I64, PTR, VOID, i64
from ember.codegen.loops import for_range

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

_PART = {"f32": ir.FloatType(), "f64": ir.DoubleType(), "c64": ir.FloatType(),
         "c128": ir.DoubleType()}
PREFIX = {"f32": "s", "f64": "d", "c64": "c", "c128": "z"}
_COMPLEX_NAME = {"syevd": "heevd", "orgqr": "ungqr"}
_TILE = 32  # transposes copy 32 x 32 tiles (8 KiB in f64: both tiles stay in L1)


class Kernel:
    """IR helpers over one kernel's builder."""

    def __init__(self, ctx: KernelContext) -> None:
        self.ctx = ctx
        self.b = ctx.builder
        self.inst = ctx.inst
        self.et = ctx.inst.operands[0].shape.element_type
        if self.et not in _PART:
            raise CpuCompileError(f"LAPACK kernel {ctx.inst.name}: element type {self.et}")
        self.complex = self.et in ("c64", "c128")
        self.part = _PART[self.et]  # the real type (of a complex type's parts)
        self.fty = ir.ArrayType(self.part, 2) if self.complex else self.part
        self.size = {"f32": 4, "f64": 8, "c64": 8, "c128": 16}[self.et]
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

    def const(self, re: float, im: float = 0.0) -> ir.Constant:
        """An element constant (complex: re + i im)."""
        if self.complex:
            return ir.Constant(self.fty, [ir.Constant(self.part, re),
                                          ir.Constant(self.part, im)])
        return ir.Constant(self.fty, re)

    def conj(self, v: ir.Value) -> ir.Value:
        """The conjugate of a loaded complex element."""
        im = self.b.extract_value(v, 1)
        return self.b.insert_value(v, self.b.fneg(im), 1)

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
        """Call LAPACK's `name` ("getrf") for this kernel's type (zgetrf, cheevd)."""
        module = self.b.module
        if self.complex:
            name = _COMPLEX_NAME.get(name, name)
        sym = find.SYMBOL_PREFIX + PREFIX[self.et] + name
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

    def batch(self, count: int, body: Callable[[ir.Value], None]) -> None:
        """body(index) for each matrix of the batch."""
        if count == 1:
            body(i64(0))
        else:
            for_range(self.b, count, body, name="mat")

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

    def square_pass(self, ptr: ir.Value, n: int,
                    fn: Callable[[ir.Value, ir.Value, ir.Value], None]) -> None:
        """For each (i, j) of an n x n matrix: fn(i, j, element pointer)."""
        b = self.b

        def row(i: ir.Value) -> None:
            def col(j: ir.Value) -> None:
                p = b.gep(ptr, [b.add(b.mul(i, i64(n)), j)], inbounds=True,
                          source_etype=self.fty)
                fn(i, j, p)
            for_range(b, n, col, name="sc")
        for_range(b, n, row, name="sr")

    def transpose_in_place(self, ptr: ir.Value, n: int, conjugate: bool = False) -> None:
        """The n x n matrix at ptr transposed (conjugate: and conjugated) in place."""
        b = self.b

        def fix(v: ir.Value) -> ir.Value:
            return self.conj(v) if conjugate else v

        def swap(i: ir.Value, j: ir.Value, p: ir.Value) -> None:
            with b.if_then(b.icmp_signed("<", i, j)):
                q = b.gep(ptr, [b.add(b.mul(j, i64(n)), i)], inbounds=True,
                          source_etype=self.fty)
                x, y = b.load(p, typ=self.fty), b.load(q, typ=self.fty)
                b.store(fix(y), p)
                b.store(fix(x), q)
            if conjugate:
                with b.if_then(b.icmp_signed("==", i, j)):
                    b.store(fix(b.load(p, typ=self.fty)), p)
        self.square_pass(ptr, n, swap)


def matrices(shape_dims: tuple[int, ...]) -> int:
    """The number of matrices in a batch of this shape."""
    count = 1
    for d in shape_dims[:-2]:
        count *= d
    return count
