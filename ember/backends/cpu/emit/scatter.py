"""Scatter kernels: XLA scatter as its own loop nest, with the update computation inlined.

Input: an LLVM function being built, the scatter instruction (operand, indices, updates,
to_apply), its input buffers and its output buffer. Output: the kernel body
  out = operand                  (a flat copy loop; none when they are one buffer)
  for s in update scatter index space (row-major over the update dims not in
            update_window_dims):
      start[d] = indices[s, k] for d = scatter_dims_to_operand_dims[k], else 0
      if 0 <= start[d] <= dim_d - window_d for every d:      (else the window is dropped)
          for w in the window (row-major over update_window_dims):
              o = start + w placed on the operand dims not in inserted_window_dims
              out[o] = to_apply(out[o], updates[s, w])
Semantics follow the evaluator (interpreter/indexing.py) exactly: a window that does not fit
entirely is skipped, never clipped; updates combine in row-major order of (scatter index,
window index), so duplicate indices accumulate in update order (the same float rounding as
NumPy's `ufunc.at`) and the last of several `set`s wins.
Invariants: every store is in bounds because a window is entered only when it fits; index
elements are read at loop indices of the indices array, so those reads are in bounds too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import llvmlite.ir as ir

from ember.backends.cpu.emit.elements import CpuElements
from ember.codegen.elemental import Buf, index_to_i64, load, store
from ember.codegen.index import Index
from ember.codegen.irtypes import I1, i64
from ember.codegen.loops import for_nest, for_range
from ember.hlo.ir import Instruction

if TYPE_CHECKING:
    from ember.backends.cpu.emit.kinds import KernelContext


def emit_scatter_kernel(b: ir.IRBuilder, scatter: Instruction,
                        inputs: dict[Instruction, Buf], out: Buf) -> None:
    operand, indices, updates = scatter.operands
    a = scatter.attrs
    gen = CpuElements(b, inputs, precise=True)
    dims = operand.shape.dimensions
    n = operand.shape.size
    if n == 0:
        return
    # out = operand, as one flat (vectorizable) loop; nothing to do when buffer assignment
    # made them one buffer (in_place.py: the operand dies here, e.g. a loop's carry)
    src = inputs.get(operand)
    if src is None or src.ptr is not out.ptr:
        for_range(b, n, lambda i: store(b, out, i, gen.value(operand, Index(b, dims, linear=i))),
                  name="copy")

    udims = updates.shape.dimensions
    window_pos = list(a["update_window_dims"])
    scatter_pos = [p for p in range(len(udims)) if p not in window_pos]
    inserted = set(a["inserted_window_dims"])
    window_operand = [d for d in range(len(dims)) if d not in inserted]
    window = {d: udims[p] for d, p in zip(window_operand, window_pos)}
    to_operand = list(a["scatter_dims_to_operand_dims"])
    ivd = a["index_vector_dim"]
    ivec = indices.shape.dimensions
    ity = indices.shape.element_type
    comp = scatter.to_apply

    def per_scatter_index(s_multi: list[ir.Value]) -> None:
        starts: dict[int, ir.Value] = {}
        fits: ir.Value = ir.Constant(I1, 1)
        for k, d in enumerate(to_operand):
            at = s_multi if ivd == len(ivec) else [*s_multi[:ivd], i64(k), *s_multi[ivd:]]
            s = index_to_i64(b, gen.value(indices, Index(b, ivec, multi=at)), ity)
            # 0 <= s <= dim - window (a negative limit admits no s: the window never fits)
            ok = b.and_(b.icmp_signed(">=", s, i64(0)),
                        b.icmp_signed("<=", s, i64(dims[d] - window.get(d, 1))))
            fits = b.and_(fits, ok)
            starts[d] = s

        def per_window_index(w_multi: list[ir.Value]) -> None:
            u_multi: list[ir.Value] = [i64(0)] * len(udims)
            for p, i in zip(scatter_pos, s_multi):
                u_multi[p] = i
            for p, i in zip(window_pos, w_multi):
                u_multi[p] = i
            o_multi: list[ir.Value] = []
            for d in range(len(dims)):
                w = w_multi[window_operand.index(d)] if d in window else None
                s = starts.get(d)
                if s is None:
                    o_multi.append(w if w is not None else i64(0))
                else:
                    o_multi.append(b.add(s, w) if w is not None else s)
            lin = Index(b, dims, multi=o_multi).linear
            new = gen.value(updates, Index(b, udims, multi=u_multi))
            store(b, out, lin, gen.scalar_computation(comp, [load(b, out, lin), new])[0])

        with b.if_then(fits):
            for_nest(b, [udims[p] for p in window_pos], per_window_index, name="w")

    for_nest(b, [udims[p] for p in scatter_pos], per_scatter_index, name="s")


class _ScatterKind:
    """Scatter: serial (updates at duplicate indices combine in update order)."""

    def split_extent(self, ctx: KernelContext) -> int:
        return 1

    def emit(self, ctx: KernelContext) -> None:
        emit_scatter_kernel(ctx.builder, ctx.root, ctx.inputs, ctx.outputs[0])


KIND = _ScatterKind()
