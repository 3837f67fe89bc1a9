"""Collectives over named axes (vmap's `axis_name`, shard_map's mesh axes), as `jax.lax`:
psum, pmean, pmax, pmin, all_gather, axis_index, axis_size (primitives in
ember/prims/collectives.py), psum_scatter, ppermute, pshuffle, all_to_all
(ember/prims/collectives_scatter.py).

Input: a pytree `x` (each leaf reduced or gathered on its own) and an axis name or a
tuple of names, each the `axis_name` of an enclosing `ember.vmap`. Output: the pytree of
results. As JAX: bool leaves are summed as int32; a psum of leaves that are all concrete
(not traced) is computed at once as size * leaf; pmean is psum(x) / psum(1) in true division
(integers give floats); axis_index of a tuple of names is the row-major index over them.
Errors are JAX's: NameError("unbound axis name: i") here, and the primitives' own text
when a traced operand names an axis no vmap defines.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.trace import Tracer
from ember.lax._base import aval_of, convert_element_type
from ember.lax._ops import add, div, expand_dims, mul, squeeze
from ember.prims import collectives as P
from ember.prims import collectives_scatter as S
from ember.tree_util import tree_map

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size",
           "psum_scatter", "ppermute", "pshuffle", "all_to_all"]


def _leaf_bool_to_int(leaf: Any) -> Any:
    return convert_element_type(leaf, np.int32) if aval_of(leaf).dtype == np.bool_ else leaf


def _reduce(prim: Any, x: Any, axis_name: Any, axis_index_groups: Any,
            concrete: Any = None) -> Any:
    axes = P.as_axes(axis_name)
    if not axes:
        return x
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups is not supported yet")

    def one(leaf: Any) -> Any:
        if concrete is not None and not isinstance(leaf, Tracer):
            return concrete(leaf, axes)
        return prim.bind(leaf, axes=axes, axis_index_groups=None)
    return tree_map(one, x)


def _concrete_psum(leaf: Any, axes: tuple) -> Any:
    # JAX computes a psum of untraced values at once: size * x
    size = math.prod(P.axis_size(a) for a in axes)
    if isinstance(leaf, (int, float, complex)):
        return leaf * size
    return mul(leaf, size)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of x over every example of the vmap axis (or axes) `axis_name`, in each."""
    x = tree_map(_leaf_bool_to_int, x)
    return _reduce(P.psum_p, x, axis_name, axis_index_groups, _concrete_psum)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of x over the examples of `axis_name`: psum(x) / axis size (true division:
    integer leaves give floats)."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = psum(1, axis_name, axis_index_groups=axis_index_groups)

    def mean(leaf: Any) -> Any:
        if dtypes.kind(aval_of(leaf).dtype) not in "fc":
            leaf = convert_element_type(leaf, dtypes.default_float())
        return div(leaf, float(n))
    return tree_map(mean, total)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of x over the examples of `axis_name`, in each."""
    return _reduce(P.pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of x over the examples of `axis_name`, in each."""
    return _reduce(P.pmin_p, x, axis_name, axis_index_groups)


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every example's x, stacked along a new axis `axis` (tiled: concatenated along the
    existing axis `axis`), in each example."""
    names = P.as_axes(axis_name)
    if not names:
        return x
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups is not supported yet")
    size = math.prod(P.axis_size(a) for a in names)

    def one(leaf: Any) -> Any:
        ndim = len(aval_of(leaf).shape)
        bound = ndim if tiled else ndim + 1
        if not -bound <= axis < bound:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {bound}")
        return P.all_gather_p.bind(leaf, all_gather_dimension=axis % bound, axis_name=names,
                                   axis_index_groups=None, axis_size=size, tiled=bool(tiled))
    return tree_map(one, x)


def axis_index(axis_name: Any) -> Any:
    """The index of the current example along the vmap axis `axis_name` (int32); for a
    tuple of names, the row-major index over all of them."""
    if not isinstance(axis_name, (tuple, list)):
        return P.axis_index_p.bind(axis_name=axis_name)
    index: Any = None
    inner = 1
    for name in reversed(tuple(axis_name)):
        term = mul(P.axis_index_p.bind(axis_name=name), np.int32(inner))
        index = term if index is None else add(term, index)
        inner *= P.axis_size(name)
    return np.int32(0) if index is None else index


def axis_size(axis_name: Any) -> int:
    """The size of the vmap axis `axis_name` (the product, for a tuple of names)."""
    return math.prod(P.axis_size(a) for a in P.as_axes(axis_name))


def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Sum x over the members of `axis_name` and give member i block i of the sum along
    `scatter_dimension` (tiled: n equal blocks of the dimension; untiled: the dimension has
    size n and is dropped)."""
    names = _names(axis_name)
    if not names:
        return x
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups is not supported yet")
    size = math.prod(P.axis_size(a) for a in names)

    def one(leaf: Any) -> Any:
        return S.reduce_scatter_p.bind(leaf, axis_name=names,
                                       scatter_dimension=scatter_dimension,
                                       axis_index_groups=None, axis_size=size,
                                       tiled=bool(tiled))
    return tree_map(one, x)


def ppermute(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member t of `axis_name` gets member s's x for each pair (s, t) of `perm`, and zeros
    when no pair sends to it."""
    names = _names(axis_name)
    perm = tuple((int(s), int(t)) for s, t in perm)
    size = math.prod(P.axis_size(a) for a in names)
    srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError("ppermute sources and destinations must be unique, got "
                         f"{list(perm)}.")
    for i in srcs + dsts:
        if not 0 <= i < size:
            raise ValueError(f"ppermute perm indices must be in [0, {size}), got {list(perm)}")
    return tree_map(lambda leaf: S.ppermute_p.bind(leaf, axis_name=names, perm=perm), x)


def pshuffle(x: Any, axis_name: Any, perm: Any) -> Any:
    """Member i gets member perm[i]'s x (a ppermute whose pairs are (perm[i], i))."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Member i gets block i (along `split_axis`) of every member's x, concatenated along
    `concat_axis` in member order; untiled, `split_axis` has size n and is removed and the
    members' blocks form a new axis at `concat_axis`."""
    names = _names(axis_name)
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups is not supported yet")
    size = math.prod(P.axis_size(a) for a in names)

    def one(leaf: Any, split: int = split_axis, concat: int = concat_axis) -> Any:
        shape = aval_of(leaf).shape
        if tiled:
            if shape[split] % size:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split]}) has "
                                 "to be divisible by the size of the named axis "
                                 f"{axis_name} ({size})")
        else:
            if shape[split] != size:
                raise ValueError("all_to_all requires the size of the mapped axis axis_name "
                                 "to equal x.shape[split_axis], but they are "
                                 f"{size} and {shape[split]} respectively.")
            if split < concat:
                concat += 1  # (a position after the split axis is removed)
                leaf = expand_dims(leaf, (concat,))
            elif concat < split:
                leaf = expand_dims(leaf, (concat,))
                split += 1
        out = S.all_to_all_p.bind(leaf, axis_name=names, split_axis=split,
                                  concat_axis=concat, axis_index_groups=None,
                                  tiled=bool(tiled))
        if not tiled and split != concat:
            out = squeeze(out, (split,))
        return out
    return tree_map(one, x)
