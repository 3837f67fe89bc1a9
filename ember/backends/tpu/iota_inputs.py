"""Iotas out of row fusions, for the TPU's kernels.

Input: a Module after the fusion pass. Output: the same, where each iota inside a kInput
(row) fusion is computed by the caller instead, an iota instruction beside the fusion
handed in as a new operand (a fresh parameter of the fused computation). Why: the CPU's row
kernels generate a causal mask's row and column numbers in place (row_fusion.py takes iota
members), but the TPU's Mosaic generator (kernels.py) has no iota: a row fusion holding one
would fall back to XLA whole. As an input, the iota is an array XLA makes and the Ember
kernel reads, as before row fusion took iotas. Values unchanged.
"""

from __future__ import annotations

from ember.hlo.ir import Instruction, Module
from ember.passes.base import HloPass


class IotaInputs(HloPass):
    """Iotas of row fusions become their operands (module docstring)."""

    name = "tpu-iota-inputs"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            for fusion in list(comp.instructions):
                if fusion.opcode != "fusion" or fusion.attrs.get("kind") != "kInput":
                    continue
                fused = fusion.fused_computation
                for iota in [i for i in fused.post_order() if i.opcode == "iota"]:
                    outer = comp.add_instruction(Instruction(
                        "iota", iota.shape, [], dict(iota.attrs), metadata=dict(iota.metadata)))
                    param = fused.add_instruction(Instruction(
                        "parameter", iota.shape, [],
                        {"parameter_number": len(fused.parameters)}))
                    fused.replace_instruction(iota, param)
                    fusion._add_operand(outer)
                    changed = True
        return changed
