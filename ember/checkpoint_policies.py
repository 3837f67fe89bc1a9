"""`ember.checkpoint_policies`: which values `ember.checkpoint` may save for the backward pass.

Input: a primitive, the abstract values of its operands and its params (one equation of the
checkpointed function's forward computation). Output: True when the equation's outputs may
be saved; False when they are recomputed in the backward pass (prims/checkpoint.py asks).
JAX's policies by name: `everything_saveable` (no recomputation), `nothing_saveable` (the
default: only the function's inputs are kept), `dots_saveable` (alias `checkpoint_dots`:
the results of matrix products are saved, the elementwise work around them recomputed)
and `dots_with_no_batch_dims_saveable` (alias `checkpoint_dots_with_no_batch_dims`: only
products without batch dimensions). The name policies read the values the user tagged with
`checkpoint_name(x, name)` (prims/name.py): `save_only_these_names(*names)` saves just
those, `save_any_names_but_these(*names)` every named value but those;
`save_from_both_policies(p1, p2)` saves what either saves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ember.prims.name import name_p

__all__ = ["everything_saveable", "nothing_saveable", "dots_saveable", "checkpoint_dots",
           "dots_with_no_batch_dims_saveable", "checkpoint_dots_with_no_batch_dims",
           "save_only_these_names", "save_any_names_but_these",
           "save_anything_except_these_names", "save_from_both_policies"]


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


@dataclass(frozen=True)
class _SaveOnlyTheseNames:
    names: frozenset[str]

    def __call__(self, prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in self.names


@dataclass(frozen=True)
class _SaveAnyNamesButThese:
    names: frozenset[str]

    def __call__(self, prim: Any, *avals: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """Save only the values named (by `checkpoint_name`) with one of `names`."""
    return _SaveOnlyTheseNames(frozenset(names))


def save_any_names_but_these(*names: str) -> Callable[..., bool]:
    """Save every named value except those named with one of `names`; unnamed values are
    recomputed."""
    return _SaveAnyNamesButThese(frozenset(names))


def save_anything_except_these_names(*names: str) -> Callable[..., bool]:
    """JAX 0.10.2's policy of this name saves every value (its name list is ignored);
    kept with that meaning so that programs using it compute what they do under JAX."""
    return everything_saveable


def save_from_both_policies(policy_1: Callable[..., Any], policy_2: Callable[..., Any]
                            ) -> Callable[..., bool]:
    """A value is saved when either policy saves it (both must answer with a bool)."""
    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        out1 = policy_1(prim, *avals, **params)
        out2 = policy_2(prim, *avals, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError("The return value of the policies should be a boolean. Got: "
                             f"{out1} and {out2}. Please write a custom policy function "
                             "directly, rather than using this helper function.")
        return out1 or out2
    return policy
