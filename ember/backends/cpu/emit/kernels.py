"""Kernel bodies: one loop nest per kernel, for loop fusions, reductions and dot.

Input: an LLVM function whose arguments are the kernel's buffers, the graph root (the
fused computation's root, or a lone entry instruction), a map from boundary instructions
to input buffers, and output buffers. Output: the function body.
- loop kernels store root(i) for every output element (each root's, for a multi-output
  loop fusion), walking the output in its memory order (its layout); when every op is
  elementwise on the output's shape and every buffer shares the layout, the nest collapses
  to one flat loop over the elements.
- reduce kernels (minor and memory order taken from the input's layout, so a column sum
  of a transposed-by-layout array still reads with stride 1):
  when the minor input dimension is reduced ("row"), accumulators live in
  registers across the inner loops, and plain add/mul carry the `reassoc` flag (the only
  relaxed math: a reduction's order is unspecified, as in XLA) so LLVM keeps several
  vector accumulators; max/min use llvm.maximum/minimum (IEEE 754-2019, as the elementwise
  ops: NaN propagates, -0.0 < +0.0; which of several different NaNs wins is unspecified,
  as the accumulators visit elements out of order). Otherwise
  ("column"), the output is initialized and accumulated in place while the loops walk the
  input in memory order, so the innermost loop is contiguous in both.
- dot: out = 0, then loops (batch, lhs free, contracting, rhs free) accumulate in place;
  the route of integer, bool, f16 and tiny products (float products call BLAS; the
  choice and the kOutput epilogue live in ../dot/plan.py and ../dot/emit.py).
`LOOP` and `REDUCE` are the "loop" and "reduce" kinds of kinds.KINDS. A reduce kernel's steps
are `_ReduceKernel`'s methods, one per loop level of each scheme.
Fast sin/cos/tan report arguments beyond their reduction range through a flag; if any lane
raised it, the whole nest runs again with the precise (libm) variants, in `<kernel>.precise`,
a cold copy of the kernel that LLVM does not optimize (`with_precise_rerun`). Kernels are
pure functions of their inputs, so rerunning is safe. Where the module being emitted asks
for it (lazy_precise.py: the jit's executables), that copy is compiled on first use and
called through a pointer, so a first compile does not pay for code that rarely runs.
A flat loop of small work runs its last partial vector under a mask (`TAIL_FOLDED`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit import streaming
from ember.backends.cpu.emit.elements import CpuElements, LoopElements
from ember.backends.cpu.jit.compile_effort import LIGHT_MAX_ELEMENTS
from ember.backends.cpu.mathlib.fp import intrinsic, type_suffix
from ember.codegen import convert as conv
from ember.codegen import regions
from ember.codegen.elemental import Buf, ElementGenerator, load, store, store_at
from ember.codegen.index import Index
from ember.codegen.irtypes import I8, I64, const, i64, is_float, is_signed_int, reg_type
from ember.codegen.loops import (
    TAIL_FOLDED,
    VECTOR_NO_UNROLL,
    for_nest,
    for_range,
    for_regions,
    for_span,
)
from ember.codegen.scalar_ops import emit_elementwise
from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Instruction
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import bit_width, memory_order

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

Inputs = dict[Instruction, Buf]


# Attributes of a kernel's precise copy (`with_precise_rerun`). It runs only when a lane of
# sin/cos/tan was beyond the fast reduction's range, so LLVM should spend next to nothing on
# it: `optnone` skips the O3 pipeline for it (the always-inliner still inlines the math
# helpers) and code generation takes the fast instruction selector. Measured on the fusion
# example (f32[1000]), the precise nest inline in the kernel cost ~5 ms of optimization and
# ~5 ms of code generation; this copy ~0.5 and ~2.5 ms (minsize or optsize copies cost
# more than the inline nest: they still run the whole pipeline, on one more function).
# Values are those optimized code computes: no fast-math anywhere, and IEEE operations are
# exact functions of their operands whatever the pass; only a NaN's sign and payload,
# which IEEE 754 and LLVM leave unspecified, may differ (a NaN stays a NaN).
PRECISE_ATTRIBUTES = ("noinline", "optnone", "cold", "nounwind")
# ... and of an optimized copy: row kernels sum with `reassoc` in loops the precise math
# does not touch (softmax's sum of exp reads the sin it kept in scratch), which must add in
# the order the kernel's own loops do, or a rerun in one thread's rows would change sums by
# an ulp with the thread count; the copy's loops are the kernel's, optimized alike. (A sum
# in the very loop that calls the C library runs scalar in any precise nest, so there a
# rerun still adds in another order than the vectorized kernel, as it always did.)
OPTIMIZED_PRECISE_ATTRIBUTES = ("noinline", "cold", "nounwind")


def with_precise_rerun(b: ir.IRBuilder, body: Callable[[ElementGenerator], None],
                        make_gen: Callable[[bool], LoopElements], *,
                        optimize: bool = False) -> None:
    """Emit `body` with fast math; if it raised flags, a guarded call of a precise copy.

    The copy is `<kernel>.precise`, a cold function of the kernel's own signature that runs
    `body` with precise math over the same arguments (kernels are pure functions of their
    inputs: rerunning the whole nest is safe); unoptimized (PRECISE_ATTRIBUTES) unless
    `optimize`. `body` may refer to the kernel's arguments (the copy's arguments print the
    same) and allocate scratch in `b.function`'s entry block; if it refers to any other
    value of the kernel, the precise body is emitted inline after the fast one instead, as
    a guarded block."""
    fn = b.function
    fast, flag = _fast_gen(b, make_gen)
    body(fast)
    if not fast.raised:
        return
    cold = _precise_copy(b, fn.function_type.args, lambda _: body(make_gen(True)),
                         _attributes(optimize))
    need = b.icmp_unsigned("!=", b.load(flag, typ=I8), ir.Constant(I8, 0))
    with b.if_then(need, likely=False):
        if cold is None:
            body(make_gen(True))
            return
        # (lazy_precise.attach's attribute, read without importing it: eager kernels and
        # other modules that did not ask for lazy copies never load lazy_precise.py)
        slots = None if optimize else getattr(b.module, "ember_precise_slots", None)
        if slots is not None:  # compiled on first use, through a slot (lazy_precise.py)
            slots.call(b, cold, list(fn.args))
        else:
            b.call(cold, list(fn.args))


UnitEmitter = Callable[[ElementGenerator, ir.Value, ir.Value, Callable[[ir.Value], None] | None],
                      None]


def rerun_per_unit(b: ir.IRBuilder, emit: UnitEmitter,
                    make_gen: Callable[[bool], LoopElements], lo: ir.Value, hi: ir.Value,
                    *, optimize: bool = False) -> None:
    """`emit(gen, lo, hi, after_unit)` emits units (rows of a row kernel, outputs of a
    row-scheme reduction) [lo, hi) and calls `after_unit(u)` after unit u's code. Units run
    with fast math; a unit whose fast code raised a flag is recomputed alone, right after
    it, by `<kernel>.precise(pointers..., u, u + 1)` (a cold copy, unoptimized unless
    `optimize`). Which units are precise then depends on each unit's own data, never on
    how the units were cut into chunks for threads: a whole-chunk rerun (as
    `with_precise_rerun` does) would recompute a chunk's other units with the precise
    copy's summation order and change them by ulps with the thread count."""
    fn = b.function
    nptr = sum(1 for a in fn.args if isinstance(a.type, ir.PointerType))
    fast, flag = _fast_gen(b, make_gen)
    cold: list[ir.Function | None] = []

    def after_unit(u: ir.Value) -> None:
        if not fast.raised:
            return  # nothing in the unit's code can ask for a rerun
        need = b.icmp_unsigned("!=", b.load(flag, typ=I8), ir.Constant(I8, 0))
        with b.if_then(need, likely=False):
            b.store(ir.Constant(I8, 0), flag)
            if not cold:  # `void <kernel>.precise(<pointers>, i64 begin, i64 end)`
                cold.append(_precise_copy(
                    b, [a.type for a in fn.args[:nptr]] + [I64, I64],
                    lambda c: emit(make_gen(True), c.args[nptr], c.args[nptr + 1], None),
                    _attributes(optimize)))
            nxt = b.add(u, i64(1), flags=("nuw", "nsw"))
            if cold[0] is not None:
                b.call(cold[0], [*fn.args[:nptr], u, nxt])
            else:
                emit(make_gen(True), u, nxt, None)

    emit(fast, lo, hi, after_unit)


def _fast_gen(b: ir.IRBuilder, make_gen: Callable[[bool], LoopElements]
              ) -> tuple[LoopElements, ir.Value]:
    """A fast-math generator whose flags (a lane wants precise math) are or-ed into an i8
    slot of the kernel's frame, zero on entry; (generator, slot)."""
    entry = b.function.entry_basic_block
    with b.goto_block(entry):
        b.position_at_start(entry)
        flag = b.alloca(I8, name="rerun")
        b.store(ir.Constant(I8, 0), flag)
    fast = make_gen(False)
    fast.report_to(flag)
    return fast, flag


def _attributes(optimize: bool) -> tuple[str, ...]:
    return OPTIMIZED_PRECISE_ATTRIBUTES if optimize else PRECISE_ATTRIBUTES


def _precise_copy(b: ir.IRBuilder, arg_types: Sequence[ir.Type],
                  fill: Callable[[ir.Function], None], attrs: tuple[str, ...]
                  ) -> ir.Function | None:
    """`void <kernel>.precise(arg_types...)`, its body emitted by `fill(copy)`; the copy's
    leading arguments stand for the kernel's (same attributes). None (and nothing left in
    the module) when the body used a value local to the kernel."""
    fn = b.function
    mod = fn.module
    ty = ir.FunctionType(ir.VoidType(), list(arg_types))
    cold = ir.Function(mod, ty, name=mod.get_unique_name(f"{fn.name}.precise"))
    cold.linkage = "internal"
    for attr in attrs:
        cold.attributes.add(attr)
    shared = list(zip(fn.args, cold.args))
    for a, c in shared:
        c.attributes = a.attributes  # noalias buffers stay noalias
    # the body names the kernel's arguments; a fresh function numbers its own (unnamed)
    # arguments the same way, so those references print as the copy's arguments
    if any(a.get_reference() != c.get_reference() for a, c in shared):
        del mod.globals[cold.name]
        return None
    resume = b.block
    b.position_at_end(cold.append_basic_block("entry"))
    fill(cold)
    b.ret_void()
    b.position_at_end(resume)
    if _uses_foreign_values(cold, fn):
        del mod.globals[cold.name]
        return None
    return cold


def _uses_foreign_values(cold: ir.Function, kernel: ir.Function) -> bool:
    """Whether any instruction of `cold` reads a value or block local to another function
    than itself, other than `kernel`'s arguments (which print as `cold`'s own)."""
    for block in cold.blocks:
        for ins in block.instructions:
            values = list(ins.operands)
            if isinstance(ins, ir.PhiInstr):
                values += [v for pair in ins.incomings for v in pair]
            for v in values:
                if isinstance(v, ir.Argument):
                    if v.parent is not kernel and v.parent is not cold:
                        return True
                elif isinstance(v, ir.Instruction):
                    if v.function is not cold:
                        return True
                elif isinstance(v, ir.Block) and v.function is not cold:
                    return True
    return False


def _is_flat(root: Instruction, inputs: Inputs) -> bool:
    """Every op elementwise on the root's dims (scalars allowed): one flat loop suffices."""
    dims = root.shape.dimensions
    stack, seen = [root], set()
    while stack:
        inst = stack.pop()
        if inst in seen:
            continue
        seen.add(inst)
        if inst.shape.size == 1 and inst is not root:
            continue
        if inst.shape.dimensions != dims:
            return False
        if inst in inputs:
            continue
        op = inst.opcode
        if op == "broadcast" and inst.operand.shape.size == 1:
            continue
        if not OPCODES[op].elementwise or op == "map":
            if op != "reshape" or inst.operand.shape.dimensions != dims:
                return False
        stack.extend(inst.operands)
    return True


Span = tuple[ir.Value, ir.Value] | None  # [begin, end) of the split loop, for threads

# A flat loop of at most this many elements folds its remainder into the vector loop
# (masked loads and stores, loops.TAIL_FOLDED) instead of running it through a scalar copy
# of the loop body: one copy fewer of the element's code for LLVM to optimize and compile.
# Measured at 1000 elements: a*sin(x)+b ~2 ms less LLVM time (of ~22), the tanh/exp/log1p
# chain ~8 ms (of ~33); run time within noise up to 8192 elements (a masked AVX-512 access
# costs what a plain one does). Longer loops keep the plain remainder: their run time
# matters more than a few milliseconds of compilation. So do kernels of loop bodies, which
# run once per iteration: there the mask computed per vector cost more than the loop's
# work (x + 1 over 1000 f32 in a fori_loop: ~210 ns an iteration folded, ~90 plain).
TAIL_FOLD_MAX_ELEMENTS = LIGHT_MAX_ELEMENTS


def _loop_order(root: Instruction, inputs: Inputs) -> tuple[bool, tuple[int, ...]]:
    """How a loop kernel walks its output: (flat, dims from major to minor in the output's
    layout). Walking memory order makes the innermost loop store with stride 1; one flat
    loop also needs every array input laid out as the output (one offset serves all)."""
    lay = memory_order(root.shape)
    flat = _is_flat(root, inputs) and all(  # a boundary instruction has its buffer's shape
        memory_order(i.shape) == lay for i in inputs if not i.shape.is_tuple and i.shape.size > 1)
    return flat, tuple(reversed(lay))


def loop_split_extent(root: Instruction, inputs: Inputs,
                      more: Sequence[Instruction] = ()) -> int:
    """Trip count of the loop a loop kernel's `span` ranges over (`more`: a multi-output
    kernel's other roots, which decide with `root` whether the loop is flat, as in
    `emit_loop_kernel`)."""
    dims = root.shape.dimensions
    if not dims:
        return 1
    flat, order = _loop_order(root, inputs)
    flat = flat and all(_is_flat(r, inputs) for r in more)
    return root.shape.size if flat else dims[order[0]]


def loop_roots(root: Instruction) -> list[Instruction]:
    """The values a loop kernel stores: the root, or a multi-output fusion's tuple operands
    (one shape and layout: fusion.py's carry fusion)."""
    return list(root.operands) if root.opcode == "tuple" else [root]


def emit_loop_kernel(b: ir.IRBuilder, root: Instruction, inputs: Inputs, out: Buf,
                     span: Span = None, more: Sequence[tuple[Instruction, Buf]] = (),
                     tail_fold: bool = True) -> None:
    """`span`: only flat elements (or outermost indices, in memory order) in [begin, end).
    `more`: further (root, output) pairs of the root's shape and layout, stored at the same
    index in the same loop (a multi-output fusion). `tail_fold`: a short flat loop may run
    its last partial vector masked (TAIL_FOLD_MAX_ELEMENTS); off in loop bodies."""
    dims = root.shape.dimensions
    flat, order = _loop_order(root, inputs)
    flat = flat and all(_is_flat(r, inputs) for r, _ in more)
    stores = [(root, out), *more]
    if flat and not out.shape.is_row_major:
        # every buffer shares one layout and the ops are elementwise: element k of memory
        # pairs with element k of memory, so index all of them as if row-major
        inputs = {i: Buf(buf.ptr, buf.shape.without_layout()) for i, buf in inputs.items()}
        stores = [(r, Buf(o.ptr, o.shape.without_layout())) for r, o in stores]
        out = stores[0][1]
    if span is not None and not dims:
        span = None

    def body(gen: ElementGenerator) -> None:
        def element(idx: Index, linear: ir.Value) -> None:
            for r, o in stores:
                store_at(b, o, idx, gen.value(r, idx))
            gen.flush()  # type: ignore[attr-defined]

        if flat or not dims:
            n = root.shape.size
            if not dims:
                element(Index.scalar(b), const("s64", 0))
            elif streaming.enabled(out.shape) and not more:
                def put_element(i: ir.Value, put: streaming.Put) -> None:
                    put(gen.value(root, Index(b, dims, linear=i)))
                    gen.flush()  # type: ignore[attr-defined]

                lo, hi = span if span is not None else (i64(0), i64(n))
                streaming.for_streaming(b, out, lo, hi, put_element,
                                        rolled=streaming.math_heavy(root))
            elif span is not None:
                for_span(b, span[0], span[1], lambda i: element(Index(b, dims, linear=i), i))
            else:
                fold = tail_fold and n <= TAIL_FOLD_MAX_ELEMENTS
                for_range(b, n, lambda i: element(Index(b, dims, linear=i), i),
                          hints=TAIL_FOLDED if fold else ())
        else:
            # loops cut at the pads' and concatenates' borders (regions.py): in each
            # region, the index's static ranges settle their selects
            def nest(walk: list[ir.Value], box: list[tuple[int, int]]) -> None:
                multi: list[ir.Value] = [i64(0)] * len(dims)
                for d, i in zip(order, walk):
                    multi[d] = i
                idx = Index(b, dims, multi=multi, ranges=box)
                element(idx, idx.linear)

            tree = regions.plan([r for r, _ in stores], inputs, order)
            for_regions(b, tree, order, nest, span,
                        inner_hints=VECTOR_NO_UNROLL if regions.is_split(tree) else ())

    with_precise_rerun(b, body, lambda precise: LoopElements(b, inputs, precise))


# -- reductions -------------------------------------------------------------------------------


def _intr(b: ir.IRBuilder, name: str, x: ir.Value, y: ir.Value) -> ir.Value:
    fn = intrinsic(b.module, f"llvm.{name}.{type_suffix(x.type)}", x.type, [x.type, x.type])
    return b.call(fn, [x, y])


def _freeze(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """`freeze x`: the same value, but opaque to InstCombine's folding of an operation into
    a select. A masked max, maximum(acc, select(c, x, -inf)), would otherwise become
    select(c, maximum(acc, x), acc): a conditional min/max reduction, which LLVM's loop
    vectorizer does not vectorize (a causal attention's row max ran scalar, 45x slower)."""
    inst = ir.instructions.Instruction(b.block, x.type, "freeze", [x])
    b._insert(inst)
    return inst


def row_combine(b: ir.IRBuilder, op: str, et: str, acc: ir.Value, x: ir.Value) -> ir.Value:
    """acc op x for a register accumulator of a plain reduction (reassociable)."""
    if is_float(et):
        if op == "add":
            return b.fadd(acc, x, flags=("reassoc",))
        if op == "multiply":
            return b.fmul(acc, x, flags=("reassoc",))
        if op in ("maximum", "minimum"):
            return _intr(b, op, acc, _freeze(b, x))
    v, _ = emit_elementwise(b, op, [et, et], et, [acc, x], {}, False)
    return v


# a kept dimension at least this long is split even when a longer one is more minor: the
# outermost split gives each thread whole contiguous slabs (reduction_splitting.py makes
# column sums lead with 8-16 blocks of rows)
_MAJOR_SPLIT_MIN = 8


def _column_split_dim(red: Instruction) -> int | None:
    """The kept (output) dimension a column-scheme reduce kernel's `span` ranges over.

    Each output element belongs to one index of that dimension, so threads write disjoint
    outputs and every output still sums its inputs in the same order: the result does not
    depend on the thread count. The most major kept dimension in memory order is preferred
    (each thread reads whole slabs); else the longest one (a column sum of [R, C] splits the
    C columns: each thread reads a stride-1 stretch of every row)."""
    in_dims = red.operands[0].shape.dimensions
    rdims = red.attrs["dimensions"]
    kept = [d for d in reversed(memory_order(red.operands[0].shape)) if d not in rdims]
    if not kept:
        return None
    if in_dims[kept[0]] >= _MAJOR_SPLIT_MIN:
        return kept[0]
    return max(kept, key=lambda d: in_dims[d])


COLUMN_UNROLL = 8  # rows combined per accumulator update in the column scheme
# ... when a row of accumulators is at least this long: measured on 2 threads, unrolling
# rows of 1-16k f32 accumulators brought the column sum from 1.3-2.5x a row sum's time to
# 1.1-1.2x, while short rows (256 f32, whose rows follow each other in memory) ran 2x slower
UNROLL_MIN_ROW_BYTES = 4096


def _column_unroll(walk: tuple[int, ...], rdims: set[int], in_dims: tuple[int, ...],
                   parts: list, element_type: str) -> tuple[int, int]:
    """(U, position in `walk`) of the column scheme's unrolled reduced dimension: the one
    just outside the minor kept dimensions, U the largest of 8, 4, 2 dividing it; (1, -1)
    when the reductions are not all plain single-operand ones, the minor kept dimensions
    hold fewer than UNROLL_MIN_ROW_BYTES, or no such dimension exists."""
    if any(n != 1 or plain is None or plain == "overwrite" for _, _, n, plain in parts):
        return 1, -1
    k = len(walk)
    row = 1
    while k > 0 and walk[k - 1] not in rdims:
        k -= 1
        row *= in_dims[walk[k]]
    if k == len(walk) or k == 0:  # the minor dimension is reduced (row scheme), or none is
        return 1, -1
    if row * bit_width(element_type) < 8 * UNROLL_MIN_ROW_BYTES:
        return 1, -1
    extent = in_dims[walk[k - 1]]
    for u in (COLUMN_UNROLL, 4, 2):
        if u <= COLUMN_UNROLL and extent % u == 0:
            return u, k - 1
    return 1, -1


def reduce_split_extent(reds: list[Instruction]) -> int:
    """How far a reduce kernel's `span` ranges (1: not splittable): its outputs for the row
    scheme, the split kept dimension (`_column_split_dim`) for the column scheme."""
    in_dims = reds[0].operands[0].shape.dimensions
    rdims = reds[0].attrs["dimensions"]
    if not in_dims:
        return 1
    if memory_order(reds[0].operands[0].shape)[0] not in rdims:
        d = _column_split_dim(reds[0])
        return 1 if d is None else in_dims[d]
    return reds[0].shape.tuple_shapes[0].size if reds[0].shape.is_tuple else reds[0].shape.size


def emit_reduce_kernel(b: ir.IRBuilder, reds: list[Instruction], inputs: Inputs,
                       outs: list[Buf], span: Span = None) -> None:
    """Reductions over the same input shape and dimensions in one pass (several for a
    sibling multi-output fusion); `outs` holds every reduce's outputs in order. `span`:
    only the row-scheme outputs with linear index in [begin, end), or the column-scheme
    outputs whose `_column_split_dim` index lies in it."""
    _ReduceKernel(b, reds, inputs, outs, span).emit()


class _ReduceKernel:
    """The steps of one reduce kernel. The shape facts (dimensions, scheme, accumulators)
    are fixed at construction; `body` emits the loops once per element generator: for the
    fast copy, then for the precise one (which may be emitted in the middle of the fast
    body, from `rerun_per_unit`'s `after_unit`), so nothing generator-specific is kept on
    `self`: the steps take the generator and their scratch as arguments."""

    def __init__(self, b: ir.IRBuilder, reds: list[Instruction], inputs: Inputs,
                 outs: list[Buf], span: Span) -> None:
        self.b, self.reds, self.inputs, self.outs, self.span = b, reds, inputs, outs, span
        red0 = reds[0]
        self.in_dims = red0.operands[0].shape.dimensions
        self.rdims = sorted(red0.attrs["dimensions"])
        self.kept = [d for d in range(len(self.in_dims)) if d not in self.rdims]
        self.out_dims = tuple(self.in_dims[d] for d in self.kept)
        # memory order of the input (its layout, major to minor) picks the scheme and the
        # loop order, so the innermost loop reads with stride 1: "row" when the minor dim
        # is reduced
        self.walk = tuple(reversed(memory_order(red0.operands[0].shape)))
        self.row = not self.in_dims or self.walk[-1] in self.rdims
        self.rwalk = [d for d in self.walk if d in self.rdims]  # reduced dims, major to minor
        # one accumulator per reduce output; (reduce, first accumulator, count, plain op)
        self.parts: list[tuple[Instruction, int, int, str | None]] = []
        self.ets: list[str] = []  # accumulator element types
        for red in reds:
            n = len(red.operands) // 2
            plain = plain_binary_opcode(red.to_apply) if n == 1 else None
            self.parts.append((red, len(self.ets), n, plain))
            self.ets += [x.shape.element_type for x in red.operands[:n]]

    def emit(self) -> None:
        """The kernel with its precise rerun: per output for the row scheme (an output's
        sum order is the precise copy's only when its own inputs asked for it); per whole
        kernel for the column scheme, which adds each output in the same order in either
        copy (its vectors run across outputs, so a whole-chunk rerun changes nothing else)."""
        b = self.b

        def make(precise: bool) -> LoopElements:
            return LoopElements(b, self.inputs, precise)

        if self.row:
            count = 1
            for d in self.out_dims:
                count *= d
            lo, hi = self.span if self.span is not None else (i64(0), i64(count))
            rerun_per_unit(b, self.body, make, lo, hi)
        else:
            with_precise_rerun(b, self.body, make)

    def body(self, gen: ElementGenerator, lo: ir.Value | None = None,
             hi: ir.Value | None = None,
             after_unit: Callable[[ir.Value], None] | None = None) -> None:
        """The kernel's loops; the row scheme runs outputs [lo, hi) (`rerun_per_unit`)."""
        init_vals = [gen.value(i, Index.scalar(self.b)) for red, _, n, _ in self.parts
                     for i in red.operands[n:]]
        if self.row:
            assert lo is not None and hi is not None
            self._row_scheme(gen, init_vals, lo, hi, after_unit)
        else:
            self._column_scheme(gen, init_vals)

    # -- steps both schemes share ----------------------------------------------------------

    def _in_index(self, multi: list[ir.Value]) -> Index:
        return Index(self.b, self.in_dims, multi=multi)

    def _combine(self, gen: ElementGenerator, accs: list[ir.Value], idx: Index,
                 in_row: bool) -> list[ir.Value]:
        """Every accumulator combined with the input element at `idx`; `in_row`: register
        accumulators of the row scheme, whose plain ops may reassociate."""
        b = self.b
        new: list[ir.Value] = []
        for red, first, n, plain in self.parts:
            vals = [gen.value(x, idx) for x in red.operands[:n]]
            acc = accs[first:first + n]
            et = self.ets[first]
            if plain is not None and plain != "overwrite":
                if in_row:
                    new.append(row_combine(b, plain, et, acc[0], vals[0]))
                else:
                    v, _ = emit_elementwise(b, plain, [et] * 2, et, [acc[0], vals[0]], {}, False)
                    new.append(v)
            else:
                new += gen.scalar_computation(red.to_apply, acc + vals)
        return new

    # -- the row scheme: accumulators in registers, one output at a time ---------------------

    def _row_scheme(self, gen: ElementGenerator, init_vals: list[ir.Value], lo: ir.Value,
                    hi: ir.Value, after_unit: Callable[[ir.Value], None] | None) -> None:
        """Outputs [lo, hi), `after_unit(o)` after output o's code."""
        b = self.b
        entry = b.function.entry_basic_block
        with b.goto_block(entry):  # (the accumulators of the function being emitted)
            b.position_at_start(entry)
            slots = [b.alloca(reg_type(et)) for et in self.ets]

        def one_output(o: ir.Value) -> None:
            self._row_output(gen, slots, init_vals, Index(b, self.out_dims, linear=o).multi)
            if after_unit is not None:
                after_unit(o)

        for_span(b, lo, hi, one_output, name="o")

    def _row_output(self, gen: ElementGenerator, slots: list[ir.Value],
                    init_vals: list[ir.Value], out_multi: list[ir.Value]) -> None:
        """Reset the accumulators, run the reduced dims, store the output at `out_multi`."""
        b = self.b
        for s, v in zip(slots, init_vals):
            b.store(v, s)
        for_nest(b, [self.in_dims[d] for d in self.rwalk],
                 lambda r_multi: self._row_step(gen, slots, out_multi, r_multi), name="r")
        lin = Index(b, self.out_dims, multi=list(out_multi)).linear if self.out_dims else None
        for o, s, et in zip(self.outs, slots, self.ets):
            store(b, o, lin if lin is not None else const("s64", 0),
                  b.load(s, typ=reg_type(et)))

    def _row_step(self, gen: ElementGenerator, slots: list[ir.Value],
                  out_multi: list[ir.Value], r_multi: list[ir.Value]) -> None:
        """One input element into the register accumulators."""
        b = self.b
        multi = [None] * len(self.in_dims)
        for d, i in zip(self.kept, out_multi):
            multi[d] = i
        for d, i in zip(self.rwalk, r_multi):
            multi[d] = i
        accs = [b.load(s, typ=reg_type(et)) for s, et in zip(slots, self.ets)]
        for s, v in zip(slots, self._combine(gen, accs, self._in_index(multi), True)):
            b.store(v, s)
        gen.flush()  # type: ignore[attr-defined]

    # -- the column scheme: outputs accumulated in place, the input in memory order ---------

    def _column_scheme(self, gen: ElementGenerator, init_vals: list[ir.Value]) -> None:
        """Initialize the outputs, then walk the input in memory order; with a span, only
        the outputs whose `_column_split_dim` index lies in it."""
        b = self.b
        split = _column_split_dim(self.reds[0]) if self.span is not None else None
        for_nest(b, self.out_dims, lambda multi: self._column_init(init_vals, multi),
                 name="z", span_at=None if split is None else self.kept.index(split),
                 span=self.span)
        # Unrolling the reduced dimension just outside the minor kept ones: with U rows
        # combined as a tree before they meet the accumulator,
        #     acc[c] = acc[c] + ((x[r, c] + x[r+1, c]) + (x[r+2, c] + x[r+3, c])) ...
        # the accumulators are loaded and stored once per U rows instead of per row (two
        # threads each doing load-add-store per element fall well short of the bandwidth
        # a row sum reaches). The order is fixed by the shapes alone.
        unroll, upos = _column_unroll(self.walk, set(self.rdims), self.in_dims, self.parts,
                                      self.ets[0])
        sizes = [self.in_dims[d] for d in self.walk]
        if unroll > 1:
            sizes[upos] //= unroll
            step = lambda w: self._column_rows(gen, unroll, upos, w)
        else:
            step = lambda w: self._column_element(gen, w)
        for_nest(b, sizes, step, name="c",
                 span_at=None if split is None else self.walk.index(split), span=self.span)

    def _column_init(self, init_vals: list[ir.Value], multi: list[ir.Value]) -> None:
        lin = Index(self.b, self.out_dims, multi=multi).linear
        for o, v in zip(self.outs, init_vals):
            store(self.b, o, lin, v)

    def _column_element(self, gen: ElementGenerator, w: list[ir.Value]) -> None:
        """One input element (`w`: indices in memory order) into its outputs."""
        b = self.b
        multi: list[ir.Value] = [i64(0)] * len(self.in_dims)
        for d, i in zip(self.walk, w):
            multi[d] = i
        lin = Index(b, self.out_dims, multi=[multi[d] for d in self.kept]).linear
        accs = [load(b, o, lin) for o in self.outs]
        for o, v in zip(self.outs, self._combine(gen, accs, self._in_index(multi), False)):
            store(b, o, lin, v)
        gen.flush()  # type: ignore[attr-defined]

    def _column_rows(self, gen: ElementGenerator, unroll: int, upos: int,
                     w: list[ir.Value]) -> None:
        """`unroll` rows of the dimension at `upos` of the walk (its index w[upos] counts
        groups of rows), combined as a tree, then into the outputs."""
        b = self.b
        multis = []
        for j in range(unroll):
            multi: list[ir.Value] = [i64(0)] * len(self.in_dims)
            for k, (d, i) in enumerate(zip(self.walk, w)):
                multi[d] = i
                if k == upos:
                    multi[d] = b.add(b.mul(i, i64(unroll), flags=("nuw", "nsw")),
                                     i64(j), flags=("nuw", "nsw"))
            multis.append(multi)
        lin = Index(b, self.out_dims, multi=[multis[0][d] for d in self.kept]).linear
        new = []
        for o, (red, first, _, plain) in zip(self.outs, self.parts):
            et = self.ets[first]
            vals = [gen.value(red.operands[0], self._in_index(m)) for m in multis]
            while len(vals) > 1:  # the tree: pairs of neighbours
                vals = [emit_elementwise(b, plain, [et] * 2, et, [vals[i], vals[i + 1]],
                                         {}, False)[0] for i in range(0, len(vals), 2)]
            new.append(emit_elementwise(b, plain, [et] * 2, et, [load(b, o, lin), vals[0]],
                                        {}, False)[0])
        for o, v in zip(self.outs, new):
            store(b, o, lin, v)
        gen.flush()  # type: ignore[attr-defined]


# -- dot ------------------------------------------------------------------------------------------


def emit_dot_kernel(b: ir.IRBuilder, dot: Instruction, inputs: Inputs, out: Buf) -> None:
    lhs, rhs = dot.operands
    a = dot.attrs
    lb, lc = list(a["lhs_batch_dims"]), list(a["lhs_contracting_dims"])
    rb, rc = list(a["rhs_batch_dims"]), list(a["rhs_contracting_dims"])
    lf = [d for d in range(lhs.shape.rank) if d not in lb + lc]
    rf = [d for d in range(rhs.shape.rank) if d not in rb + rc]
    ld, rd = lhs.shape.dimensions, rhs.shape.dimensions
    et = dot.shape.element_type
    out_dims = dot.shape.dimensions
    gen = CpuElements(b, inputs, precise=True)
    zero = const(et, 0)

    def init(multi: list[ir.Value]) -> None:
        store(b, out, Index(b, out_dims, multi=multi).linear, zero)

    for_nest(b, out_dims, init, name="z")
    sizes = [ld[d] for d in lb] + [ld[d] for d in lf] + [ld[d] for d in lc] + [rd[d] for d in rf]
    nb, nf, nc = len(lb), len(lf), len(lc)

    def step(ix: list[ir.Value]) -> None:
        bi, fi, ki, ri = ix[:nb], ix[nb:nb + nf], ix[nb + nf:nb + nf + nc], ix[nb + nf + nc:]
        lm: list[ir.Value] = [None] * len(ld)  # type: ignore[list-item]
        rm: list[ir.Value] = [None] * len(rd)  # type: ignore[list-item]
        for d, i in zip(lb, bi):
            lm[d] = i
        for d, i in zip(rb, bi):
            rm[d] = i
        for d, i in zip(lf, fi):
            lm[d] = i
        for d, i in zip(rf, ri):
            rm[d] = i
        for dl, dr, i in zip(lc, rc, ki):
            lm[dl] = i
            rm[dr] = i
        x = conv.convert(b, lhs.shape.element_type, et, gen.value(lhs, Index(b, ld, multi=lm)))
        y = conv.convert(b, rhs.shape.element_type, et, gen.value(rhs, Index(b, rd, multi=rm)))
        lin = Index(b, out_dims, multi=bi + fi + ri).linear
        acc = load(b, out, lin)
        if et == "pred":
            new = b.or_(acc, b.and_(x, y))
        elif is_float(et):
            new = b.fadd(acc, b.fmul(x, y))
        else:
            new = b.add(acc, b.mul(x, y))
        store(b, out, lin, new)

    for_nest(b, sizes, step, name="k")


# -- the kinds (kinds.KINDS) ------------------------------------------------------------------


def _reduces(root: Instruction) -> list[Instruction]:
    """A reduce kernel's reductions: the root, or a sibling multi-output fusion's tuple."""
    return [root] if root.opcode == "reduce" else list(root.operands)


class _LoopKind:
    """Loop fusions and lone elementwise, shape and indexing instructions."""

    def split_extent(self, ctx: KernelContext) -> int:
        roots = loop_roots(ctx.root)
        return ctx.if_worth_splitting(loop_split_extent(roots[0], ctx.bound, roots[1:]))

    def emit(self, ctx: KernelContext) -> None:
        roots = loop_roots(ctx.root)
        emit_loop_kernel(ctx.builder, roots[0], ctx.inputs, ctx.outputs[0], ctx.span,
                         list(zip(roots[1:], ctx.outputs[1:])), tail_fold=not ctx.in_loop)


class _ReduceKind:
    """Reductions over one input shape (several for a sibling multi-output fusion)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return ctx.if_worth_splitting(reduce_split_extent(_reduces(ctx.root)))

    def emit(self, ctx: KernelContext) -> None:
        emit_reduce_kernel(ctx.builder, _reduces(ctx.root), ctx.inputs, ctx.outputs, ctx.span)


LOOP = _LoopKind()
REDUCE = _ReduceKind()

__all__ = ["LOOP", "REDUCE", "emit_dot_kernel", "emit_loop_kernel", "emit_reduce_kernel",
           "is_signed_int"]
