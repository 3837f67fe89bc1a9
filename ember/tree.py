"""`ember.tree`: the short names of the pytree utilities, as `jax.tree`.

Input and output as in :mod:`ember.tree_util`, whose functions these are under JAX's short
names: ``ember.tree.map`` is ``tree_util.tree_map``, ``ember.tree.leaves`` is
``tree_util.tree_leaves``, and so on for ``all``, ``broadcast``, ``flatten``,
``flatten_with_path``, ``leaves_with_path``, ``map_with_path``, ``reduce``,
``reduce_associative``, ``structure``, ``transpose`` and ``unflatten``. ``static`` is the
dataclass field marker that :func:`ember.tree_util.register_dataclass` reads.

Invariant: every name here is the same function object as its ``tree_util`` counterpart
(or a thin keyword-for-keyword wrapper), so the two spellings never disagree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ember import tree_util as _tu

all = _tu.tree_all  # noqa: A001 (jax.tree's name)
broadcast = _tu.tree_broadcast
flatten = _tu.tree_flatten
flatten_with_path = _tu.tree_flatten_with_path
leaves = _tu.tree_leaves
leaves_with_path = _tu.tree_leaves_with_path
map = _tu.tree_map  # noqa: A001 (jax.tree's name)
map_with_path = _tu.tree_map_with_path
reduce = _tu.tree_reduce
reduce_associative = _tu.tree_reduce_associative
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field(**kwargs)`` marked static (``metadata={"static": True}``).

    :func:`ember.tree_util.register_dataclass` makes such a field auxiliary data: part of
    the treedef, hence a static argument under ``jit``. Other metadata given in ``kwargs``
    is kept.
    """
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
