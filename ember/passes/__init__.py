"""HLO passes: infrastructure (base), DCE, CSE, constant folding, algebraic simplification.

`hardware_independent_pipeline(unsafe_math=False)` is the standard cleanup every backend
runs first: algsimp + constant folding + CSE + DCE + LICM, repeated to a fixpoint. Every
pass works on every computation (loop bodies and branches included); DCE also drops
unneeded loop-state elements, and LICM moves loop-invariant work out of while bodies.
`disabled_passes()` reads EMBER_DISABLE_PASSES (pass names to skip; part of every compile
cache key). It lives here, and everything else loads on first use, so that a compile served
from a cache (which needs only that set) imports no pass and not the infrastructure.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ember.config import config

if TYPE_CHECKING:
    from ember.passes.algsimp import AlgebraicSimplifier
    from ember.passes.base import Fix, HloPass, PassPipeline
    from ember.passes.constant_folding import MAX_FOLD_ELEMENTS, ConstantFolding
    from ember.passes.cse import CommonSubexpressionElimination
    from ember.passes.dce import DeadCodeElimination
    from ember.passes.licm import LoopInvariantCodeMotion

# Everything loads on first use (PEP 562), the infrastructure (base.py) included: a
# program whose every compile is a cache hit, and `ember.passes.dump`'s users, import no
# pass.
_LAZY = {"AlgebraicSimplifier": "algsimp", "MAX_FOLD_ELEMENTS": "constant_folding",
         "ConstantFolding": "constant_folding", "CommonSubexpressionElimination": "cse",
         "DeadCodeElimination": "dce", "LoopInvariantCodeMotion": "licm",
         "Fix": "base", "HloPass": "base", "PassPipeline": "base"}


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
    "disabled_passes", "hardware_independent_pipeline",
]


def disabled_passes() -> frozenset[str]:
    """The pass names EMBER_DISABLE_PASSES lists, read at each call (whitespace around a
    name stripped, empty items dropped): PassPipeline skips them, and every compile cache
    key includes them."""
    return config.ember_disable_passes


def hardware_independent_pipeline(unsafe_math: bool = False) -> PassPipeline:
    from ember.passes.algsimp import AlgebraicSimplifier
    from ember.passes.base import Fix, OnOpcodes, PassPipeline
    from ember.passes.constant_folding import ConstantFolding
    from ember.passes.cse import CommonSubexpressionElimination
    from ember.passes.dce import DeadCodeElimination

    simplify = PassPipeline("simplify", [
        AlgebraicSimplifier(unsafe_math=unsafe_math),
        ConstantFolding(),
        CommonSubexpressionElimination(),
        DeadCodeElimination(),
        # (imported for the first module with a loop: base.OnOpcodes)
        OnOpcodes("licm", "ember.passes.licm:LoopInvariantCodeMotion", frozenset({"while"})),
    ])
    return PassPipeline("hardware-independent", [Fix(simplify, max_iterations=20)])
