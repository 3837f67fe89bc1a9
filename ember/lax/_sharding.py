"""`lax.with_sharding_constraint`: say how a value should be laid out over the devices.

Input: a pytree `x` and `shardings` (a pytree prefix of x: `NamedSharding`s,
`SingleDeviceSharding`s, or `PartitionSpec`s under `with mesh:`). Output: x, laid out as
asked: a concrete array is placed with `device_put` (a ShardedArray); a traced one gets a
`sharding_constraint` equation (ember/prims/sharding_constraint.py), the identity when
compiled until the partitioner exists. Errors: JAX's for a spec longer than the value's
rank or one that does not divide its shape.
"""

from __future__ import annotations

from typing import Any

from ember.array import device_put
from ember.core.trace import Tracer
from ember.prims.sharding_constraint import sharding_constraint_p
from ember.sharding._mesh import PartitionSpec
from ember.sharding._shardings import Sharding, as_sharding
from ember.tree_util import tree_flatten, tree_structure, tree_unflatten

__all__ = ["with_sharding_constraint"]


def _is_sharding(v: Any) -> bool:
    return v is None or isinstance(v, (Sharding, PartitionSpec))


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """x with each leaf constrained to the sharding that `shardings` gives it."""
    leaves, treedef = tree_flatten(x)
    prefix = tree_structure(shardings, is_leaf=_is_sharding)
    specs = tree_flatten(shardings, is_leaf=_is_sharding)[0]
    try:
        subtrees = prefix.flatten_up_to(x)
    except ValueError as e:
        raise ValueError("with_sharding_constraint shardings must be a pytree prefix of x, "
                         f"got {shardings!r} for a value of structure {treedef}") from e
    per_leaf: list[Any] = []
    for s, sub in zip(specs, subtrees):
        per_leaf.extend([s] * len(tree_flatten(sub)[0]))
    out = []
    for leaf, s in zip(leaves, per_leaf):
        if s is None:
            out.append(leaf)
            continue
        sharding = as_sharding(s, "with_sharding_constraint")
        if isinstance(leaf, Tracer):
            out.append(sharding_constraint_p.bind(leaf, sharding=sharding))
        else:
            # (the bind checks the spec against the value, with JAX's errors)
            out.append(device_put(sharding_constraint_p.bind(leaf, sharding=sharding),
                                  sharding))
    return tree_unflatten(treedef, out)
