"""HLO passes: infrastructure (base), DCE, CSE, constant folding, algebraic simplification.

`hardware_independent_pipeline(unsafe_math=False)` is the standard cleanup every backend
runs first: algsimp + constant folding + CSE + DCE + LICM, repeated to a fixpoint. Every
pass works on every computation (loop bodies and branches included); DCE also drops
unneeded loop-state elements, and LICM moves loop-invariant work out of while bodies.
"""

from __future__ import annotations

from ember.passes.algsimp import AlgebraicSimplifier
from ember.passes.base import Fix, HloPass, PassPipeline
from ember.passes.constant_folding import MAX_FOLD_ELEMENTS, ConstantFolding
from ember.passes.cse import CommonSubexpressionElimination
from ember.passes.dce import DeadCodeElimination
from ember.passes.licm import LoopInvariantCodeMotion

__all__ = [
    "MAX_FOLD_ELEMENTS", "AlgebraicSimplifier", "CommonSubexpressionElimination",
    "ConstantFolding", "DeadCodeElimination", "Fix", "HloPass", "LoopInvariantCodeMotion",
    "PassPipeline",
    "hardware_independent_pipeline",
]


def hardware_independent_pipeline(unsafe_math: bool = False) -> PassPipeline:
    simplify = PassPipeline("simplify", [
        AlgebraicSimplifier(unsafe_math=unsafe_math),
        ConstantFolding(),
        CommonSubexpressionElimination(),
        DeadCodeElimination(),
        LoopInvariantCodeMotion(),
    ])
    return PassPipeline("hardware-independent", [Fix(simplify, max_iterations=20)])
