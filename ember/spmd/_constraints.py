"""Which meshes a traced program's `with_sharding_constraint`s name: a plain `jit` whose
program constrains a value to a mesh of several devices is partitioned (ember/api.py asks
at each call that missed the fast path, so the answer is kept per trace).

Input: a ClosedJaxpr. Output: `constrained_over_devices(closed)`, the distinct meshes of
more than one device its constraints name, bodies of calls, loops and branches included.
Imports only the jaxpr types: asking costs a plain jit's first call no import.
"""

from __future__ import annotations

import weakref
from typing import Any

from ember.core.jaxpr import ClosedJaxpr, Jaxpr

_CONSTRAINED: weakref.WeakKeyDictionary[ClosedJaxpr, tuple[Any, ...]] = (
    weakref.WeakKeyDictionary())


def _constraint_meshes(jaxpr: Jaxpr) -> list[Any]:
    """The meshes of the with_sharding_constraints in `jaxpr`, bodies included."""
    out: list[Any] = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "sharding_constraint":
            mesh = getattr(eqn.params["sharding"], "mesh", None)
            out += [mesh] if mesh is not None else []
        for v in eqn.params.values():
            for sub in v if isinstance(v, (tuple, list)) else (v,):
                inner = getattr(sub, "jaxpr", sub)
                if isinstance(inner, Jaxpr):
                    out += _constraint_meshes(inner)
    return out


def constrained_over_devices(closed: ClosedJaxpr) -> tuple[Any, ...]:
    """The meshes of several devices `closed`'s with_sharding_constraints name (cached: a
    plain jit asks at each call that did not take the fast path)."""
    got = _CONSTRAINED.get(closed)
    if got is None:
        got = _CONSTRAINED[closed] = tuple(
            dict.fromkeys(m for m in _constraint_meshes(closed.jaxpr) if m.size > 1))
    return got
