"""Reduction splitting: a large reduction to a few outputs becomes two, so threads can share it.

Input: a Module before layout assignment (shapes row-major). Output: the module where
    reduce(x[..., R], init, dims = the trailing R elements)         (few outputs)
 => reduce(reduce(reshape(x, [..., B, R/B]), init, {last}), init, {last})
for a plain reduction (add, multiply, maximum, minimum, and, or) whose reduced elements are
the trailing dimensions (contiguous in memory), R >= MIN_REDUCED and at most MAX_OUTPUTS
outputs. The first reduce has B times more outputs, each a contiguous block of R/B
elements: the CPU backend splits a reduction over its outputs, so B blocks go to the
threads; the second adds B partial results in order.
Reductions over the leading dimensions (column sums: `sum(x, axis=0)` of [R, C]) split the
same way along the reduced rows, for any number of outputs:
    reduce(x[R, C...], init, dims = the leading R elements)
 => reduce(reduce(reshape(x, [B, R/B, C...]), init, {1}), init, {0})
with B <= MAX_LEAD_BLOCKS blocks of whole rows: the first reduce's outputs lead with the
B blocks, so the backend gives each thread whole blocks of rows (contiguous memory, the
column scheme's stride-1 inner loop) instead of a narrow strip of every row; the partial
sums, B x C, are small next to the input.
Why it is allowed: XLA promises no summation order, and this order depends only on the
shapes (B is chosen from R alone), never on the thread count, so results are the same bits
on any machine's number of threads. The initial value must be the operation's identity
(it is then counted B + 1 times harmlessly); reductions with another initial value are left
alone. Max/min/and/or results do not depend on the order at all.
"""

from __future__ import annotations

import math

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Computation, Instruction, Module, clone_computation
from ember.hlo.shape import Shape
from ember.passes.base import HloPass

_REDUCE = frozenset({"reduce"})

MIN_REDUCED = 1 << 18  # below this one thread reads the whole input in well under 100 us
MAX_OUTPUTS = 16  # more outputs already split across threads without help
MAX_BLOCKS = 64
MIN_BLOCK = 1 << 13  # each block still streams whole vector registers for a while


def _is_identity(op: str, init: Instruction) -> bool:
    if init.opcode != "constant" or init.shape.size != 1:
        return False
    v = np.asarray(init.value).reshape(())
    if op == "add":
        return bool(v == 0) and not (v.dtype.kind == "f" and np.signbit(v))  # +0: x + 0 = x
    if op == "multiply":
        return bool(v == 1)
    if op == "maximum":
        return bool(v == -np.inf) if v.dtype.kind == "f" else _is_extreme(v, low=True)
    if op == "minimum":
        return bool(v == np.inf) if v.dtype.kind == "f" else _is_extreme(v, low=False)
    if op == "and":
        return bool(v == (True if v.dtype == np.bool_ else -1))
    if op == "or":
        return bool(v == 0)
    return False


def _is_extreme(v: np.ndarray, low: bool) -> bool:
    if v.dtype == np.bool_:
        return bool(v) is not low
    info = np.iinfo(v.dtype)
    return int(v) == (info.min if low else info.max)


def blocks_for(reduced: int) -> int:
    """B: the most blocks (<= MAX_BLOCKS) of at least MIN_BLOCK elements dividing R."""
    for b in range(min(MAX_BLOCKS, reduced // MIN_BLOCK), 3, -1):
        if reduced % b == 0:
            return b
    return 1


MAX_LEAD_BLOCKS = 16  # partial results B x C stay a few percent of a large input
MIN_LEAD_ROWS = 8  # a block of rows still streams several rows per output


def lead_blocks_for(rows: int) -> int:
    """B for a leading-dimension reduction over `rows` rows: the most blocks
    (<= MAX_LEAD_BLOCKS) of at least MIN_LEAD_ROWS rows dividing `rows`."""
    for b in range(min(MAX_LEAD_BLOCKS, rows // MIN_LEAD_ROWS), 3, -1):
        if rows % b == 0:
            return b
    return 1


def _splittable(red: Instruction) -> tuple[str, int]:
    """("trailing" or "leading", B) for `red`; B == 1 when it is left alone."""
    if red.opcode != "reduce" or len(red.operands) != 2 or red.shape.is_tuple:
        return "", 1
    x, init = red.operands
    op = plain_binary_opcode(red.to_apply)
    rank = x.shape.rank
    dims = sorted(red.attrs["dimensions"])
    if op is None or op == "overwrite" or not dims or not _is_identity(op, init):
        return "", 1
    reduced = math.prod(x.shape.dimensions[d] for d in dims)
    if dims == list(range(rank - len(dims), rank)):
        if red.shape.size > MAX_OUTPUTS or reduced < MIN_REDUCED:
            return "", 1
        return "trailing", blocks_for(reduced)
    if dims == list(range(len(dims))) and x.shape.size >= MIN_REDUCED:
        return "leading", lead_blocks_for(reduced)
    return "", 1


def split(module: Module, comp: Computation, red: Instruction, blocks: int) -> None:
    """The trailing form: [kept..., R] -> [kept..., B, R/B] -> [kept..., B] -> [kept...]."""
    x, init = red.operands
    kept = list(red.shape.dimensions)
    et = red.shape.element_type
    reduced = x.shape.size // max(1, math.prod(kept))
    _two_reduces(module, comp, red, Shape(et, (*kept, blocks, reduced // blocks)),
                 len(kept) + 1, Shape(et, (*kept, blocks)), len(kept))


def split_leading(module: Module, comp: Computation, red: Instruction, blocks: int) -> None:
    """The leading form: [R, kept...] -> [B, R/B, kept...] -> [B, kept...] -> [kept...]."""
    x = red.operands[0]
    kept = list(red.shape.dimensions)
    et = red.shape.element_type
    rows = x.shape.size // max(1, math.prod(kept))
    _two_reduces(module, comp, red, Shape(et, (blocks, rows // blocks, *kept)), 1,
                 Shape(et, (blocks, *kept)), 0)


def _two_reduces(module: Module, comp: Computation, red: Instruction, tiled: Shape,
                 first_dim: int, partial_shape: Shape, second_dim: int) -> None:
    """red(x) => reduce(reduce(reshape(x, tiled), {first_dim}), {second_dim})."""
    x, init = red.operands
    md = dict(red.metadata)
    tiles = comp.add_instruction(Instruction("reshape", tiled, [x], metadata=md))
    partial = comp.add_instruction(Instruction(
        "reduce", partial_shape, [tiles, init], {"dimensions": (first_dim,)},
        [red.to_apply], metadata=md))
    # each reduce calls its own copy of the combiner (as the lowering makes them)
    combiner = module.add_computation(clone_computation(red.to_apply, {}))
    total = Instruction("reduce", red.shape, [partial, init], {"dimensions": (second_dim,)},
                        [combiner], metadata=md)
    comp.replace_instruction(red, total)


class ReductionSplitting(HloPass):
    """Splits large few-output and leading-dimension reductions in two (module docstring)."""

    name = "reduction-splitting"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            if not comp.holds(_REDUCE):  # (what _splittable needs)
                continue
            for inst in comp.post_order():
                form, blocks = _splittable(inst)
                if blocks > 1:
                    (split if form == "trailing" else split_leading)(module, comp, inst, blocks)
                    changed = True
        return changed


__all__ = ["ReductionSplitting", "blocks_for", "lead_blocks_for"]
