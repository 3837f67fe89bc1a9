"""`ember.checkpoint_policies`: which values `ember.checkpoint` may save for the backward pass.

Input: a primitive, the abstract values of its operands and its params (one equation of the
checkpointed function's forward computation). Output: True when the equation's outputs may
be saved; False when they are recomputed in the backward pass (prims/checkpoint.py asks).
JAX's policies by name: `everything_saveable` (no recomputation), `nothing_saveable` (the
default: only the function's inputs are kept), `dots_saveable` (alias `checkpoint_dots`:
the results of matrix products are saved, the elementwise work around them recomputed)
and `dots_with_no_batch_dims_saveable` (alias `checkpoint_dots_with_no_batch_dims`: only
products without batch dimensions).
"""

from __future__ import annotations

from typing import Any

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims"]


def everything_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save every value the backward pass needs (as without checkpoint)."""
    return True


def nothing_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save nothing but the function's inputs; recompute the rest."""
    return False


def dots_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save the results of `dot_general` (the expensive part); recompute the rest."""
    return getattr(prim, "name", None) == "dot_general"


def dots_with_no_batch_dims_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Save the results of the ``dot_general`` equations that have no batch dimensions."""
    if getattr(prim, "name", None) != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots = dots_saveable
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable
