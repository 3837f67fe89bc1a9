"""shard_map as one program on one device: every device's block side by side, the mesh
axes as nested vmaps whose `axis_name`s are the mesh axis names.

Input: the user's function on flat per-device arguments, the mesh, the flat in/out specs,
the flat global arguments (arrays or tracers of any trace). Output: the flat global
outputs. Used wherever shard_map's arguments are traced (under jit, grad, vmap): there the
collectives' batching rules (ember/prims/collectives*.py) give them their meaning, and the
result equals the per-device program's (the runtime's, ember/spmd/_runtime.py).
Layout: an argument split over mesh axes gets one leading axis per such axis, in mesh
order (a dimension split over (a, b) is reshaped to (size(a), size(b), block) first); the
vmap of mesh axis a maps the arguments that have its axis and broadcasts the others. An
output comes back with every mesh axis in front; the axes its spec names are merged into
their dimensions, the others are read at coordinate 0 (the replicas agree).
Under a staging trace (inside `jit`) with a mesh of several devices, each argument's
leading mesh-axis dims are constrained to be split over their mesh axes and each output to
its out spec (`with_sharding_constraint`s): the jit is then partitioned
(passes/spmd_partitioner.py), each device running the body on its own block, and the
collectives' vmapped forms become the per-device collectives (a sum over a split mesh dim:
an all-reduce, or a reduce-scatter for psum_scatter; an all_gather: an all-gather; an
all_to_all: an all-to-all; axis_index: a local iota; ppermute: a collective-permute, its
one-program form there being `mesh_permute` (prims/collectives_permute.py), a gather the
partitioner recognizes, rather than the plain gather vmap gives it).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any

from ember.core.trace import current_dynamic
from ember.lax import _ops
from ember.lax._base import aval_of
from ember.lax._slicing import index_in_dim
from ember.prims.collectives_permute import pinned_axes
from ember.prims.sharding_constraint import sharding_constraint_p
from ember.sharding._mesh import Mesh, PartitionSpec
from ember.sharding._shardings import NamedSharding
from ember.spmd._specs import parts
from ember.vmap_api import vmap


def _to_front(x: Any, mesh: Mesh, spec: PartitionSpec) -> tuple[Any, set[str]]:
    """x with one leading axis per mesh axis splitting it (mesh order); those axes."""
    shape = aval_of(x).shape
    sizes = mesh.shape
    new_shape: list[int] = []
    owner: list[str | None] = []  # the mesh axis of each axis of the reshaped value
    for n, axes in zip(shape, parts(spec, len(shape))):
        k = math.prod(sizes[a] for a in axes)
        for a in axes:
            new_shape.append(sizes[a])
            owner.append(a)
        new_shape.append(n // k)
        owner.append(None)
    y = _ops.reshape(x, tuple(new_shape)) if tuple(new_shape) != shape else x
    present = [a for a in mesh.axis_names if a in owner]
    order = [owner.index(a) for a in present] + [i for i, o in enumerate(owner) if o is None]
    if order != list(range(len(order))):
        y = _ops.transpose(y, tuple(order))
    return y, set(present)


def _from_front(y: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    """The global output from y = (every mesh axis in mesh order, *block)."""
    names = list(mesh.axis_names)
    m = len(names)
    shape = aval_of(y).shape
    block = shape[m:]
    dims = parts(spec, len(block))
    used = {a for axes in dims for a in axes}
    # replicas along the axes the spec does not name: coordinate 0
    for i in reversed(range(m)):
        if names[i] not in used:
            y = index_in_dim(y, 0, i, keepdims=False)
            names.pop(i)
    # bring each dimension's mesh axes (spec order) just before it, then merge
    order: list[int] = []
    new_shape: list[int] = []
    k = len(names)
    sizes = mesh.shape
    for d, axes in enumerate(dims):
        for a in axes:
            order.append(names.index(a))
        order.append(k + d)
        new_shape.append(block[d] * math.prod(sizes[a] for a in axes))
    if order != list(range(len(order))):
        y = _ops.transpose(y, tuple(order))
    if tuple(new_shape) != aval_of(y).shape:
        y = _ops.reshape(y, tuple(new_shape))
    return y


def emulate(fun: Callable[..., Sequence[Any]], mesh: Mesh, in_specs: Sequence[PartitionSpec],
            out_specs: Sequence[PartitionSpec], args: Sequence[Any]) -> list[Any]:
    """`fun` (flat per-device args -> flat per-device outputs, one per out spec) run as
    shard_map runs it."""
    fronts = [_to_front(x, mesh, s) for x, s in zip(args, in_specs)]
    staged = current_dynamic().level > 0 and mesh.size > 1
    if staged:
        fronts = [(_pin(y, mesh, [a for a in mesh.axis_names if a in present]), present)
                  for y, present in fronts]
    def level(i: int) -> Callable[..., Any]:
        if i == len(mesh.axis_names):
            def body(*xs: Any) -> tuple:
                return tuple(fun(*xs))
            return body
        name = mesh.axis_names[i]
        in_axes = tuple(0 if name in present else None for _, present in fronts)
        # (an argument's mapped axes are consumed outermost first: mesh order)
        return vmap(level(i + 1), in_axes=in_axes, out_axes=0, axis_name=name,
                    axis_size=mesh.shape[name])

    with pinned_axes(mesh.axis_names) if staged else contextlib.nullcontext():
        outs = level(0)(*[y for y, _ in fronts])
    outs = [_from_front(o, mesh, s) for o, s in zip(outs, out_specs)]
    if staged:
        outs = [sharding_constraint_p.bind(o, sharding=NamedSharding(mesh, s))
                for o, s in zip(outs, out_specs)]
    return outs


def _pin(y: Any, mesh: Mesh, axes: list[str]) -> Any:
    """y (its leading dims one per mesh axis in `axes`) constrained to have each of
    those dims split over its axis: every device holds its own block."""
    if not axes:
        return y
    return sharding_constraint_p.bind(y, sharding=NamedSharding(mesh, PartitionSpec(*axes)))
