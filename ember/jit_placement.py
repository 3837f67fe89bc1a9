"""`jit(in_shardings=..., out_shardings=...)`: the placement of a jitted function's
arguments and results over the devices.

Input: the shardings (pytree prefixes of the positional arguments and of the results:
`NamedSharding`s, `SingleDeviceSharding`s, devices, `PartitionSpec`s under `with mesh:`,
or None for "no constraint"). Output: `PlacedJitFunction`, a `JitFunction` that checks each
argument against its in-sharding (JAX's error for a shape the sharding does not divide)
and returns each result laid out by its out-sharding (a `ShardedArray`). Over a mesh of
several devices the call runs partitioned, each device computing its blocks
(ember/spmd/_jit.py); otherwise on one device. The values are those of the unconstrained
program.
"""

from __future__ import annotations

from typing import Any

from ember.api import JitFunction
from ember.array import device_put
from ember.device_state import CpuDevice
from ember.sharding._mesh import PartitionSpec
from ember.sharding._shardings import Sharding, as_sharding
from ember.tree_util import tree_flatten, tree_structure


def _is_leaf(v: Any) -> bool:
    return v is None or isinstance(v, (Sharding, PartitionSpec, CpuDevice))


def check(shardings: Any, what: str) -> None:
    """TypeError (naming the keyword) unless every leaf is a sharding, a device, a
    PartitionSpec or None."""
    for leaf in tree_flatten(shardings, is_leaf=_is_leaf)[0]:
        if not _is_leaf(leaf):
            raise TypeError(f"jit {what} leaves must be Shardings, devices, PartitionSpecs "
                            f"or None, got {leaf!r}")


def has_placement(shardings: Any) -> bool:
    """Whether a jit sharding argument constrains anything (not None, nor a tree of Nones)."""
    return any(s is not None for s in tree_flatten(shardings, is_leaf=_is_leaf)[0])


def _per_leaf(prefix: Any, tree: Any, what: str) -> list[Any]:
    spec_def = tree_structure(prefix, is_leaf=_is_leaf)
    specs = tree_flatten(prefix, is_leaf=_is_leaf)[0]
    try:
        subtrees = spec_def.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"jit {what} must be a pytree prefix of the "
                         f"{'positional arguments' if what == 'in_shardings' else 'outputs'}"
                         f": got {prefix!r} for a value of structure "
                         f"{tree_structure(tree)}") from e
    out: list[Any] = []
    for s, sub in zip(specs, subtrees):
        out.extend([s] * len(tree_flatten(sub)[0]))
    return out


class PlacedJitFunction(JitFunction):
    """A JitFunction whose arguments are checked against, and whose results are laid out
    by, the jit's in_shardings and out_shardings."""

    def __init__(self, fun: Any, in_shardings: Any, out_shardings: Any, *args: Any) -> None:
        super().__init__(fun, *args)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from ember.spmd._jit import call_partitioned

        out = call_partitioned(self, args, kwargs)  # (over a mesh: every device its part)
        if out is not None:
            return out
        if has_placement(self._in_shardings):
            prefix = self._in_shardings
            if isinstance(prefix, list):
                prefix = tuple(prefix)
            if not isinstance(prefix, tuple) or isinstance(prefix, PartitionSpec):
                prefix = (prefix,) * len(args)
            for leaf, s in zip(tree_flatten(args)[0], _per_leaf(prefix, args, "in_shardings")):
                if s is not None and hasattr(leaf, "shape"):
                    sharding = as_sharding(s, "jit in_shardings")
                    if len(getattr(sharding, "spec", ())) > len(leaf.shape):
                        raise ValueError(
                            f"One of pjit arguments was given the sharding of {sharding!r}, "
                            f"which implies that it has a rank of at least "
                            f"{len(sharding.spec)}, but it is {len(leaf.shape)}")
                    sharding.shard_shape(tuple(leaf.shape))
        out = super().__call__(*args, **kwargs)
        if not has_placement(self._out_shardings):
            return out
        return device_put(out, self._out_shardings)
