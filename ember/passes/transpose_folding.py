"""Transpose folding: a transpose feeding a dot becomes the dot's dimension numbers.

Input: a Module (every computation). Output: the module where
  dot(transpose(x), y) => dot(x, y)      with lhs dims mapped through the permutation
  dot(x, transpose(y)) => dot(x, y)      likewise for rhs
so BLAS reads x through a transposed (trans flag) view instead of a transposed copy; the
transpose is removed when nothing else uses it.
Invariant: the result is unchanged, element for element and in shape. A dot's result
lists the operand's free dims in the operand's dimension order, so folding is exact only
when the permutation keeps the free dims in the same relative order; batch and contracting
dims are matched by position in the dimension-number lists, so they may move freely.
(x.T @ y: lhs = transpose(x, {1,0}) contracting {1} => lhs = x contracting {0}.)
"""

from __future__ import annotations

from ember.hlo.ir import Instruction, Module
from ember.passes.base import HloPass

_KEYS = {0: ("lhs_batch_dims", "lhs_contracting_dims"),
         1: ("rhs_batch_dims", "rhs_contracting_dims")}


def fold_operand(dot: Instruction, k: int) -> bool:
    """Fold a transpose in operand k of `dot`; True if it did."""
    t = dot.operands[k]
    if t.opcode != "transpose":
        return False
    perm = list(t.attrs["dimensions"])  # result dim i is operand dim perm[i]
    batch_key, contract_key = _KEYS[k]
    batch, contract = list(dot.attrs[batch_key]), list(dot.attrs[contract_key])
    free = [d for d in range(len(perm)) if d not in batch + contract]
    mapped_free = [perm[d] for d in free]
    if mapped_free != sorted(mapped_free):
        return False  # the free dims would come out in another order
    dot.attrs[batch_key] = tuple(perm[d] for d in batch)
    dot.attrs[contract_key] = tuple(perm[d] for d in contract)
    dot.replace_operand(k, t.operand)
    return True


class TransposeFolding(HloPass):
    """Folds transposes into the dots that read them (see the module docstring)."""

    name = "transpose-folding"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            folded = False
            for inst in comp.post_order():
                if inst.opcode == "dot":
                    for k in (0, 1):
                        folded |= fold_operand(inst, k)
            if folded:
                comp.remove_dead()
                changed = True
        return changed
