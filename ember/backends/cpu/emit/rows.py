"""Row kernels: a row fusion (see ember/passes/row_fusion.py) as one loop over rows.

Input: the fused computation (holding reductions over the last dimension of a row shape
D = [rows..., n]; its root of shape D, or one value per row), its input buffers and the
output buffer. Output: for each row, one loop over the row per *phase* and a final
epilogue loop (none for a root with one value per row: it is stored once per row):
  phase p computes the reductions whose operands need only reductions of earlier phases
  (softmax: 1 = max, 2 = sum of exp; layernorm: 1 = sum, 2 = sum of squared deviations);
  the row values between them (mean, 1/sqrt(var + eps)) are computed once per row;
  the epilogue stores the root for every element of the row.
An expensive row-level value used by several phases (softmax's exp) is computed once, in
the first phase that needs it, and kept in a row-local scratch (`alloca [n x T]`) that the
later phases read: never recomputed, never duplicated. Cheap ones (x - max) are recomputed
by identical code on identical inputs, so every phase sees the same bits.
`emit_row_kernel(..., rows=(begin, end))` runs a range of rows: the unit threads split.
Loops stay rolled (loop metadata, loops.py): LLVM would otherwise unroll the row loop fully
when the row count is small and each vectorized phase loop fully (a 1000-long row is ~16
vector iterations), which made a 4x1000 softmax 3,661 lines of IR and ~200 ms of LLVM
time; rolled, ~400 lines and ~40 ms. Phase and epilogue loops keep the vectorizer's own
interleave count (VECTOR_NO_UNROLL), so reductions keep their accumulators and sum in the
same order as before; measured on 4096x1024 softmax and layernorm, the same bits and run
time within noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit import streaming
from ember.backends.cpu.emit.elements import LoopElements
from ember.backends.cpu.emit.kernels import rerun_per_unit, row_combine
from ember.codegen.elemental import Buf, ElementGenerator, load, store
from ember.codegen.index import Index
from ember.codegen.irtypes import i64, mem_type, reg_type
from ember.codegen.loops import NO_UNROLL, VECTOR_NO_UNROLL, for_range, for_span
from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Computation, Instruction
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext

Inputs = dict[Instruction, Buf]


def row_shape(root: Instruction) -> tuple[int, ...]:
    """The row shape D = [rows..., n] of the row fusion rooted at `root`: what its reduces
    reduce over the last dimension (the root's own shape, unless it holds one value per
    row)."""
    for inst in _post_order(root, {}):
        if inst.opcode == "reduce":
            return inst.operands[0].shape.dimensions
    return root.shape.dimensions


def row_count(root: Instruction) -> int:
    """Rows a row kernel's `rows` span ranges over."""
    return math.prod(row_shape(root)[:-1])


def is_row_fusion(comp: Computation) -> bool:
    """A fusion of reductions the row kernel runs: its root is a full-shape value that
    recombines reductions (softmax), or it holds one value per row and a dependent
    reduction, one of values that need another reduction (a row variance, logsumexp);
    other reduce-rooted fusions are plain reductions (kernels.py)."""
    reduces = [i for i in comp.instructions if i.opcode == "reduce"]
    if not reduces or comp.root.opcode == "tuple":
        return False
    if comp.root.opcode != "reduce" and comp.root.shape.dimensions == row_shape(comp.root):
        return True
    return _per_row_shaped(comp.root, reduces) and RowPlan(comp.root, {}).last_phase >= 2


def _per_row_shaped(root: Instruction, reduces: list[Instruction]) -> bool:
    """What row_fusion.py builds with one value per row: every reduce reduces the same
    shape D over its last dimension from one operand and a scalar init, and the root has
    one value per row of D (other fused reductions run as plain reduce kernels)."""
    dims = reduces[0].operands[0].shape.dimensions
    if len(dims) < 2:
        return False
    for r in reduces:
        if (len(r.operands) != 2 or r.operands[0].shape.dimensions != dims
                or r.operands[1].shape.size != 1
                or tuple(r.attrs["dimensions"]) != (len(dims) - 1,)):
            return False
    return not root.shape.is_tuple and root.shape.size == math.prod(dims[:-1])


class RowPlan:
    """Phases, row values and scratch of one row fusion (pure analysis, no IR)."""

    def __init__(self, root: Instruction, inputs: Inputs) -> None:
        self.root = root
        self.dims = row_shape(root)
        # one value per row (a variance, logsumexp): the root is a row value, stored once
        # per row after the last phase, with no epilogue loop
        self.per_row = root.shape.dimensions != self.dims
        self.n = self.dims[-1]
        self.inputs = inputs
        order = _post_order(root, inputs)
        self.order = order
        self.reduces = [i for i in order if i.opcode == "reduce"]
        # phase of a value: 1 + the latest phase among the reductions it needs (0: none)
        self.phase: dict[Instruction, int] = {}
        for inst in order:
            ops = [] if inst in inputs else inst.operands
            p = max((self.phase[o] for o in ops), default=0)
            self.phase[inst] = p + 1 if inst.opcode == "reduce" else p
        self.last_phase = max((self.phase[r] for r in self.reduces), default=0)
        # values computed once per row: those that need a reduction and are not full-shape
        # (the others, such as broadcasts of g or of constants, are evaluated where read)
        self.row_values = [i for i in order if i not in inputs and self.phase[i] > 0
                           and i.shape.dimensions != self.dims]
        # row-level values each loop evaluates (phase k's reductions; the epilogue's root)
        uses: dict[Instruction, set[int]] = {}
        for k in range(1, self.last_phase + 2):
            roots = ([r.operands[0] for r in self.reduces if self.phase[r] == k]
                     if k <= self.last_phase else [root])
            for v in _row_level_cone(roots, self.dims, inputs):
                uses.setdefault(v, set()).add(k)
        self.scratch = {v: min(ks) for v, ks in uses.items()
                        if len(ks) > 1 and OPCODES[v.opcode].expensive}


def _post_order(root: Instruction, inputs: Inputs) -> list[Instruction]:
    out: list[Instruction] = []
    seen: set[Instruction] = set()

    def visit(i: Instruction) -> None:
        if i in seen:
            return
        seen.add(i)
        if i not in inputs:
            for o in i.operands:
                visit(o)
        out.append(i)

    visit(root)
    return out


def _row_level_cone(roots: list[Instruction], dims: tuple[int, ...],
                    inputs: Inputs) -> set[Instruction]:
    """Computed full-shape values the loop evaluating `roots` touches (stops at inputs,
    reductions and row values, which it reads)."""
    out: set[Instruction] = set()
    stack = list(roots)
    while stack:
        i = stack.pop()
        if i in out or i in inputs or i.shape.dimensions != dims or i.opcode == "constant":
            continue
        out.add(i)
        stack.extend(i.operands)
    return out


class _RowGen(LoopElements):
    """Element generator reading row values from registers and scratch rows by column."""

    def __init__(self, b: ir.IRBuilder, inputs: Inputs, precise: bool) -> None:
        super().__init__(b, inputs, precise)
        self.row_vals: dict[Instruction, ir.Value] = {}
        self.ready: dict[Instruction, Buf] = {}  # filled scratch rows
        self.col: ir.Value = i64(0)

    def provides(self, inst: Instruction) -> bool:
        return inst in self.row_vals or inst in self.ready

    def value(self, inst: Instruction, idx: Index) -> ir.Value:
        v = self.row_vals.get(inst)
        if v is not None:
            return v
        buf = self.ready.get(inst)
        if buf is not None:
            return load(self.b, buf, self.col)
        return super().value(inst, idx)


def emit_row_kernel(b: ir.IRBuilder, root: Instruction, inputs: Inputs, out: Buf,
                    rows: tuple[ir.Value, ir.Value] | None = None) -> None:
    plan = RowPlan(root, inputs)
    dims, n = plan.dims, plan.n
    stream = streaming.enabled(out.shape) and not plan.per_row
    outer = dims[:-1]

    def body(gen: ElementGenerator, lo: ir.Value, hi: ir.Value,
             after_row: Callable[[ir.Value], None] | None) -> None:
        """Rows [lo, hi); `after_row(r)` after each (kernels.rerun_per_unit)."""
        assert isinstance(gen, _RowGen)
        # scratch in the entry block of the function being emitted: the kernel, or its
        # precise copy (kernels.with_precise_rerun), which gets scratch of its own (while
        # the copy runs, both frames hold a row: 2 x 256 KB at most, row_fusion.py)
        entry = b.function.entry_basic_block
        with b.goto_block(entry):
            b.position_at_start(entry)
            scratch = {v: Buf(b.alloca(mem_type(v.shape.element_type), size=i64(n)),
                              Shape(v.shape.element_type, (n,))) for v in plan.scratch}
            accs = {r: b.alloca(reg_type(r.shape.element_type)) for r in plan.reduces}

        def row(r: ir.Value) -> None:
            gen.row_vals = {}
            gen.ready = {}
            outer_multi = Index(b, outer, linear=r).multi if outer else []

            def compute_row_values(upto: int) -> None:
                for v in plan.row_values:
                    if v.opcode != "reduce" and v not in gen.row_vals and plan.phase[v] <= upto:
                        vi = Index(b, v.shape.dimensions, linear=r)
                        gen.row_vals[v] = gen._generate(v, vi)

            def loop(body_fn: Callable[[Index], None]) -> None:
                base = b.mul(r, i64(n)) if outer else i64(0)

                def step(j: ir.Value) -> None:
                    gen.col = j
                    lin = b.add(base, j, flags=("nuw", "nsw")) if outer else j
                    body_fn(Index(b, dims, multi=[*outer_multi, j], linear=lin))
                    gen.flush()  # type: ignore[attr-defined]

                for_range(b, n, step, name="j", hints=VECTOR_NO_UNROLL)

            for k in range(1, plan.last_phase + 1):
                compute_row_values(k - 1)
                reds = [red for red in plan.reduces if plan.phase[red] == k]
                for red in reds:
                    init = gen.value(red.operands[1], Index.scalar(b))
                    b.store(init, accs[red])
                fills = [v for v, p in plan.scratch.items() if p == k]

                def phase_body(idx: Index, reds=reds, fills=fills) -> None:
                    for red in reds:
                        et = red.shape.element_type
                        x = gen.value(red.operands[0], idx)
                        acc = b.load(accs[red], typ=reg_type(et))
                        plain = plain_binary_opcode(red.to_apply)
                        if plain is not None and plain != "overwrite":
                            new = row_combine(b, plain, et, acc, x)
                        else:
                            new = gen.scalar_computation(red.to_apply, [acc, x])[0]
                        b.store(new, accs[red])
                    for v in fills:
                        store(b, scratch[v], gen.col, gen.value(v, idx))

                loop(phase_body)
                for red in reds:
                    gen.row_vals[red] = b.load(accs[red], typ=reg_type(red.shape.element_type))
                for v in fills:
                    gen.ready[v] = scratch[v]
            compute_row_values(plan.last_phase)
            if plan.per_row:
                store(b, out, r, gen.row_vals[root])
            elif stream and outer:  # the epilogue's row goes past the caches (streaming.py)
                base = b.mul(r, i64(n))

                def put_element(lin: ir.Value, put: streaming.Put) -> None:
                    j = b.sub(lin, base, flags=("nuw", "nsw"))
                    gen.col = j
                    put(gen.value(root, Index(b, dims, multi=[*outer_multi, j], linear=lin)))
                    gen.flush()  # type: ignore[attr-defined]

                streaming.for_streaming(b, out, base, b.add(base, i64(n)), put_element,
                                        rolled=streaming.math_heavy(root))
            else:
                loop(lambda idx: store(b, out, idx.linear, gen.value(root, idx)))
            if after_row is not None:
                after_row(r)

        for_span(b, lo, hi, row, name="row", hints=NO_UNROLL)

    nrows = 1
    for d in outer:
        nrows *= d
    lo, hi = rows if rows is not None else (i64(0), i64(nrows))
    # a row whose fast code asked for precise math is recomputed alone: rows are the unit,
    # so which rows are precise never depends on how rows were cut among threads
    rerun_per_unit(b, body, lambda precise: _RowGen(b, inputs, precise), lo, hi,
                    optimize=True)


class _RowKind:
    """Row fusions (softmax, layernorm): split by rows."""

    def split_extent(self, ctx: KernelContext) -> int:
        return ctx.if_worth_splitting(row_count(ctx.root))

    def emit(self, ctx: KernelContext) -> None:
        emit_row_kernel(ctx.builder, ctx.root, ctx.inputs, ctx.outputs[0], ctx.span)


KIND = _RowKind()
