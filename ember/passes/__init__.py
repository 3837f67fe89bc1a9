"""HLO passes: infrastructure (base), DCE, CSE, constant folding, algebraic simplification.

`hardware_independent_pipeline(unsafe_math=False)` is the standard cleanup every backend
runs first: algsimp + constant folding + CSE + DCE + LICM, repeated to a fixpoint. Every
pass works on every computation (loop bodies and branches included); DCE also drops
unneeded loop-state elements, and LICM moves loop-invariant work out of while bodies.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ember.passes.base import Fix, HloPass, PassPipeline

if TYPE_CHECKING:
    from ember.passes.algsimp import AlgebraicSimplifier
    from ember.passes.constant_folding import MAX_FOLD_ELEMENTS, ConstantFolding
    from ember.passes.cse import CommonSubexpressionElimination
    from ember.passes.dce import DeadCodeElimination
    from ember.passes.licm import LoopInvariantCodeMotion

# The passes load on first use (PEP 562): a program whose every compile is a disk-cache
# hit, and `ember.passes.dump`'s users, never import them.
_LAZY = {"AlgebraicSimplifier": "algsimp", "MAX_FOLD_ELEMENTS": "constant_folding",
         "ConstantFolding": "constant_folding", "CommonSubexpressionElimination": "cse",
         "DeadCodeElimination": "dce", "LoopInvariantCodeMotion": "licm"}


def __getattr__(name: str) -> Any:
    sub = _LAZY.get(name)
    if sub is None:
        raise AttributeError(f"module 'ember.passes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ember.passes.{sub}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_FOLD_ELEMENTS", "AlgebraicSimplifier", "CommonSubexpressionElimination",
    "ConstantFolding", "DeadCodeElimination", "Fix", "HloPass", "LoopInvariantCodeMotion",
    "PassPipeline",
    "hardware_independent_pipeline",
]


def hardware_independent_pipeline(unsafe_math: bool = False) -> PassPipeline:
    from ember.passes.algsimp import AlgebraicSimplifier
    from ember.passes.constant_folding import ConstantFolding
    from ember.passes.cse import CommonSubexpressionElimination
    from ember.passes.dce import DeadCodeElimination
    from ember.passes.licm import LoopInvariantCodeMotion

    simplify = PassPipeline("simplify", [
        AlgebraicSimplifier(unsafe_math=unsafe_math),
        ConstantFolding(),
        CommonSubexpressionElimination(),
        DeadCodeElimination(),
        LoopInvariantCodeMotion(),
    ])
    return PassPipeline("hardware-independent", [Fix(simplify, max_iterations=20)])
