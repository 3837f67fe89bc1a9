"""`jax.experimental.shard_map.shard_map`: the older spelling of `ember.shard_map`, with
the mesh and specs as positional arguments and `check_rep` for `check_vma`.

Input: f, mesh, in_specs, out_specs, check_rep. Output: `ember.shard_map`'s function.
Invariant: it is exactly `ember.shard_map(f, mesh=..., in_specs=..., out_specs=...)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember._missing import module_getattr as _module_getattr
from ember.spmd import shard_map as _shard_map


def shard_map(f: Callable, mesh: Any, in_specs: Any, out_specs: Any, check_rep: bool = True,
              auto: Any = frozenset()) -> Callable:
    """Map `f` over the blocks of its arguments on `mesh` (see `ember.shard_map`)."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)


__getattr__ = _module_getattr(__name__)
