"""ppermute over a mesh axis in the one-program form of `jit(shard_map(...))`: the members'
blocks stacked along one axis of a value, moved between positions of that axis.

Input: `mesh_permute[axis perm] x`: `x` has one position per member of a mesh axis along
dimension `axis`; `perm` is ppermute's (source, target) pairs of members. Output: the
value whose position t holds x's position s for each pair (s, t), zeros where no pair
targets t (ppermute's semantics, all members at once).
Why a primitive of its own: ppermute's batching rule (collectives_scatter.py) gives JAX's
form, a gather of rows and a select, which the SPMD partitioner can only compute whole.
While shard_map's one-program form pins mesh axes to positions (`pinned_axes`, set by
ember/spmd/_emulate.py under jit), the batching rule binds this instead; its lowering is the
same gather and select, both marked (metadata PERMUTE_KEY: the axis and the pairs),
so that the partitioner (passes/spmd_indexing.py), finding that axis split one position
per device over the mesh axis, makes it one `collective-permute` of the device's block
(which leaves zeros where no pair targets: the select is dropped); anywhere else they are
an ordinary gather and select.
Autodiff: linear; transposed by the inverse pairs. vmap: elementwise in the batch axis
(`axis` moves past it).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.hlo.ir import Instruction
from ember.hlo.sharding import PERMUTE_KEY
from ember.prims import _lower as L

mesh_permute_p = Primitive("mesh_permute")

# the mesh axis names whose vmaps are shard_map's pinned one-program form (_emulate.py)
_PINNED: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "ember_pinned_mesh_axes", default=frozenset())


@contextlib.contextmanager
def pinned_axes(names: Sequence[str]) -> Iterator[None]:
    """While tracing shard_map's one-program form with its mesh axes pinned to devices:
    ppermute over those axes binds `mesh_permute`."""
    token = _PINNED.set(_PINNED.get() | frozenset(names))
    try:
        yield
    finally:
        _PINNED.reset(token)


def is_pinned(name: Any) -> bool:
    return name in _PINNED.get()


def _sources(perm: tuple, n: int) -> list[int | None]:
    """Per target position, its source position (None: no pair targets it)."""
    src: list[int | None] = [None] * n
    for s, t in perm:
        src[t] = s
    return src


@mesh_permute_p.def_abstract_eval
def _abstract(x: ShapedArray, *, axis: int, perm: tuple) -> ShapedArray:
    n = x.shape[axis]
    if any(not (0 <= s < n and 0 <= t < n) for s, t in perm):
        raise ValueError(f"mesh_permute pairs {perm} out of range for {n} members")
    return x


@mesh_permute_p.def_impl
def _impl(x: np.ndarray, *, axis: int, perm: tuple) -> np.ndarray:
    x = np.asarray(x)
    out = np.zeros_like(x)
    for s, t in perm:
        out[(slice(None),) * axis + (t,)] = x[(slice(None),) * axis + (s,)]
    return out


def _lower(ctx: Any, x: Instruction, *, axis: int, perm: tuple) -> Instruction:
    """Position t of `axis` gathered from its source (any position where none: then
    zeros selected), the gather marked for the partitioner."""
    b = ctx.b
    aval = ctx.avals_in[0]
    shape, n = aval.shape, aval.shape[axis]
    src = _sources(perm, n)
    rows = b.constant(np.array([[0 if s is None else s] for s in src], np.int32))
    out = b.gather(x, rows, offset_dims=tuple(d for d in range(len(shape)) if d != axis),
                   collapsed_slice_dims=(axis,), start_index_map=(axis,),
                   index_vector_dim=1,
                   slice_sizes=tuple(1 if d == axis else k for d, k in enumerate(shape)))
    out.metadata[PERMUTE_KEY] = (axis, tuple(tuple(p) for p in perm))
    if all(s is not None for s in src):
        return out
    keep = b.broadcast(b.constant(np.array([s is not None for s in src])), shape, (axis,))
    out = b.select(keep, out, L.full_like(ctx, 0, aval))
    # (marked too: where the gather becomes a collective-permute, its zeros are these)
    out.metadata[PERMUTE_KEY] = (axis, tuple(tuple(p) for p in perm))
    return out


mesh_permute_p.def_lowering(_lower)


def _transpose(ct: Any, x: Any, *, axis: int, perm: tuple) -> list:
    if isinstance(ct, ad.Zero):
        return [ad.Zero(x.aval)]
    return [mesh_permute_p.bind(ct, axis=axis, perm=tuple((t, s) for s, t in perm))]


ad.deflinear(mesh_permute_p)
mesh_permute_p.def_transpose(_transpose)


def _batch(axis_data: AxisData, args: Sequence[Any], dims: Sequence[int | None], *,
           axis: int, perm: tuple) -> tuple[Any, int | None]:
    (x,), (d,) = args, dims
    if d is not_mapped:
        return mesh_permute_p.bind(x, axis=axis, perm=perm), d
    # (the batch axis sits at d of the batched value: the permuted axis moves past it)
    return mesh_permute_p.bind(x, axis=axis + 1 if d <= axis else axis, perm=perm), d


mesh_permute_p.def_batch(_batch)
