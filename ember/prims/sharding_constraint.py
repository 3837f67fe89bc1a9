"""The `sharding_constraint` primitive (`lax.with_sharding_constraint`): the identity on
values that records the layout a value should have over the devices.

Input: one array; param `sharding` (a NamedSharding or SingleDeviceSharding object, which
this module reads through its `mesh`/`spec` attributes only). Output: the same array.
Semantics: values are unchanged (eagerly, `lax.with_sharding_constraint` lays a concrete
array out with `device_put` instead of binding this). Lowering: the identity (no HLO
instruction); the sharding rides on the value's instruction as metadata, which the SPMD
partitioner reads (passes/spmd_partitioner.py) when the program is partitioned.
Autodiff: linear; the tangent and the cotangent carry the same constraint (JAX's rules).
vmap: the batch axis is not split (a None inserted into the spec at the batch axis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.hlo.sharding import CONSTRAINT_KEY, HloSharding
from ember.prims import _lower as L

sharding_constraint_p = Primitive("sharding_constraint")


@sharding_constraint_p.def_abstract_eval
def _abstract(x: ShapedArray, *, sharding: Any) -> ShapedArray:
    spec = getattr(sharding, "spec", None)
    if spec is not None and len(spec) > x.ndim:
        raise ValueError(f"One of with_sharding_constraint arguments is incompatible with "
                         f"its sharding annotation {sharding!r}: Sharding {sharding!r} is "
                         f"only valid for values of rank at least {len(spec)}, but was "
                         f"applied to a value of rank {x.ndim}")
    if spec is not None:
        sharding.shard_shape(x.shape)  # (an uneven split: NamedSharding's error)
    return x


@sharding_constraint_p.def_impl
def _impl(x: np.ndarray, *, sharding: Any) -> np.ndarray:
    return x


def _lower(ctx: Any, x: Any, *, sharding: Any) -> Any:
    """The identity, the sharding kept on the value's instruction for the partitioner
    (metadata CONSTRAINT_KEY; a program that is not partitioned ignores it)."""
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is not None and spec is not None and mesh.size > 1:
        axes = tuple((str(a), int(n)) for a, n in mesh.shape.items())
        x.metadata[CONSTRAINT_KEY] = HloSharding(axes, spec._normalized(ctx.avals_in[0].ndim))
    return L.identity(ctx, x)


sharding_constraint_p.def_lowering(_lower)


def _transpose(ct: Any, x: Any, *, sharding: Any) -> list:
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    return [sharding_constraint_p.bind(ct, sharding=sharding)]


ad.deflinear(sharding_constraint_p)
sharding_constraint_p.def_transpose(_transpose)


def _batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
           sharding: Any) -> tuple[Any, int | None]:
    (x,), (d,) = args, dims
    spec = getattr(sharding, "spec", None)
    if spec is not None:
        ndim = len(x.aval.shape if hasattr(x, "aval") else np.shape(x)) - 1
        parts = list(spec) + [None] * (ndim - len(spec))
        parts.insert(d, None)
        sharding = type(sharding)(sharding.mesh, type(spec)(*parts))
    return sharding_constraint_p.bind(x, sharding=sharding), d


sharding_constraint_p.def_batch(_batch)
