"""Reduction splitting: a large reduction to a few outputs becomes two, so threads can share it.

Input: a Module before layout assignment (shapes row-major). Output: the module where
    reduce(x[..., R], init, dims = the trailing R elements)         (few outputs)
 => reduce(reduce(reshape(x, [..., B, R/B]), init, {last}), init, {last})
for a plain reduction (add, multiply, maximum, minimum, and, or) whose reduced elements are
the trailing dimensions (contiguous in memory), R >= MIN_REDUCED and at most MAX_OUTPUTS
outputs. The first reduce has B times more outputs, each a contiguous block of R/B
elements: the CPU backend splits a reduction over its outputs, so B blocks go to the
threads; the second adds B partial results in order.
Why it is allowed: XLA promises no summation order, and this order depends only on the
shapes (B is chosen from R alone), never on the thread count, so results are the same bits
on any machine's number of threads. The initial value must be the operation's identity
(it is then counted B + 1 times harmlessly); reductions with another initial value are left
alone. Max/min/and/or results do not depend on the order at all.
"""

from __future__ import annotations

import math

import numpy as np

from ember.backends.interpreter.evaluator import plain_binary_opcode
from ember.hlo.ir import Computation, Instruction, Module, _clone_computation
from ember.hlo.shape import Shape
from ember.passes.base import HloPass

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


def _splittable(red: Instruction) -> int:
    """B for `red`, or 1 when it is left alone."""
    if red.opcode != "reduce" or len(red.operands) != 2 or red.shape.is_tuple:
        return 1
    x, init = red.operands
    op = plain_binary_opcode(red.to_apply)
    rank = x.shape.rank
    dims = sorted(red.attrs["dimensions"])
    if (op is None or op == "overwrite" or not dims or dims != list(range(rank - len(dims), rank))
            or red.shape.size > MAX_OUTPUTS or not _is_identity(op, init)):
        return 1
    reduced = math.prod(x.shape.dimensions[d] for d in dims)
    return blocks_for(reduced) if reduced >= MIN_REDUCED else 1


def split(module: Module, comp: Computation, red: Instruction, blocks: int) -> None:
    x, init = red.operands
    kept = list(red.shape.dimensions)
    et = red.shape.element_type
    reduced = x.shape.size // max(1, math.prod(kept))
    md = dict(red.metadata)
    tiles = comp.add_instruction(Instruction(
        "reshape", Shape(et, (*kept, blocks, reduced // blocks)), [x], metadata=md))
    partial = comp.add_instruction(Instruction(
        "reduce", Shape(et, (*kept, blocks)), [tiles, init], {"dimensions": (len(kept) + 1,)},
        [red.to_apply], metadata=md))
    # each reduce calls its own copy of the combiner (as the lowering makes them)
    combiner = module.add_computation(_clone_computation(red.to_apply, {}))
    total = Instruction("reduce", red.shape, [partial, init], {"dimensions": (len(kept),)},
                        [combiner], metadata=md)
    comp.replace_instruction(red, total)


class ReductionSplitting(HloPass):
    """Splits large few-output reductions in two (see the module docstring)."""

    name = "reduction-splitting"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            for inst in comp.post_order():
                blocks = _splittable(inst)
                if blocks > 1:
                    split(module, comp, inst, blocks)
                    changed = True
        return changed


__all__ = ["ReductionSplitting", "blocks_for"]
