"""Jacobians and Hessians, as JAX's: `jacfwd`, `jacrev`, `jacobian`, `hessian`.

Input: a function over pytrees of arrays, `argnums` (an int or a tuple), `has_aux`.
Output: a function returning the Jacobian at its arguments with JAX's structure: the outer
structure is the function's output, the inner one the differentiated arguments' (the
argument's tree for an int argnums, a tuple of them for a tuple), and each leaf has shape
`out.shape + in.shape`.
How: the function is linearized once at the point (core/transpose.py), then its linear
part is pushed along every standard basis vector: forward (`jacfwd`: one JVP per input
element, the Jacobian's columns) or backward (`jacrev`: one VJP per output element, its
rows). As in JAX, the basis vectors go through `vmap`: the linear part runs once on the
whole basis as a batched program (no loop; a product of the Jacobian with the identity is
what the batching rules make of it), so the Jacobian is traced once under `jit` whatever
its size, and Jacobians nest (grad of jacfwd, jacrev of jacrev, hessian).
Invariants: `holomorphic=True` needs complex inputs and outputs (JAX's errors otherwise);
integer inputs are refused
as JAX does, except by `jacrev(allow_int=True)`, which gives float0 blocks for them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import numpy as jnp
from ember.ad_api import (
    _argnums_tuple,
    _linearize,
    check_holomorphic,
    float0_zeros,
)
from ember.core import ad, dtypes, traceback_util
from ember.core.aval import ShapedArray
from ember.core.trace import get_aval
from ember.tree_util import tree_flatten, tree_unflatten
from ember.vmap_api import vmap

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]


def _size(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _std_basis(avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """The standard basis of the flattened space of `avals`: for each aval an array of
    shape (total size, *aval.shape) whose rows, read across all arrays, are unit vectors."""
    total = sum(_size(a.shape) for a in avals)
    out, offset = [], 0
    for a in avals:
        size = _size(a.shape)
        block = np.zeros((total, size), dtype=a.dtype)
        block[offset:offset + size] = np.eye(size, dtype=a.dtype)
        out.append(block.reshape((total, *a.shape)))
        offset += size
    return out


def _map_basis(body: Callable[[list], list], basis: list[np.ndarray],
               row_avals: Sequence[ShapedArray]) -> list[Any]:
    """[stack([body(row)[k] for row in basis])] for each output k of body (whose rows have
    `row_avals`), as one vmap of body over the basis rows."""
    n = basis[0].shape[0] if basis else 0
    if n == 0:
        return [np.zeros((0, *a.shape), a.dtype) for a in row_avals]
    return list(vmap(lambda *bs: list(body(list(bs))))(*basis))


def _check_argnums(nums: tuple[int, ...], argnums: Any, args: tuple) -> None:
    if nums and max(nums) >= len(args):
        raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                        f"least {max(nums) + 1} positional arguments to be passed by the "
                        f"caller, but got only {len(args)} positional arguments.")


def _partial(fun: Callable, args: tuple, kwargs: dict, nums: tuple[int, ...]) -> Callable:
    def partial_fun(*diff_args: Any) -> Any:
        full = list(args)
        for i, a in zip(nums, diff_args):
            full[i] = a
        return fun(*full, **kwargs)
    return partial_fun


def _assemble(argnums: Any, picked: list, out_tree: Any, blocks: list[list[Any]]) -> Any:
    """JAX's Jacobian structure from blocks[j][i], the block of output leaf j and input
    leaf i: the output tree outside, the differentiated arguments' tree inside."""
    target = picked[0] if isinstance(argnums, (int, np.integer)) else tuple(picked)
    _, target_tree = tree_flatten(target)
    return tree_unflatten(out_tree, [tree_unflatten(target_tree, row) for row in blocks])


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of `fun` with respect to the arguments `argnums`, by forward mode.

    Returns a function of fun's arguments giving the Jacobian (and fun's aux output with
    `has_aux`): for each output leaf, a tree like the differentiated arguments whose leaves
    have shape out.shape + in.shape. One JVP per input element, pushed through one vmap.
    With `holomorphic`, inputs and outputs must be complex: the result is the complex
    derivative.
    """
    nums = _argnums_tuple(argnums)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        _check_argnums(nums, argnums, args)
        picked = [args[i] for i in nums]
        for leaf in tree_flatten(picked)[0]:
            dtype = get_aval(leaf).dtype
            if holomorphic:
                check_holomorphic("jacfwd", dtype, "inputs")
            elif dtypes.kind(dtype) != "f":
                raise TypeError("jacfwd requires real-valued inputs (input dtype that is a "
                                f"sub-dtype of np.floating), but got {dtype.name}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving "
                                "complex inputs or integer inputs, use jax.jvp directly.")
        outs, lin, (out_tree, aux_tree, n), _ = _linearize(
            _partial(fun, args, kwargs, nums), picked, has_aux)
        out_avals = lin.out_avals[:n]
        if holomorphic:
            for a in out_avals:
                check_holomorphic("jacfwd", a.dtype, "outputs")
        diff = [ad.is_differentiable(a) for a in out_avals]

        def push(tangents: list) -> list:
            ts = lin.jvp(tangents)[:n]
            return [t for t, d in zip(ts, diff) if d]

        cols = iter(_map_basis(push, _std_basis(lin.in_avals),
                               [a for a, d in zip(out_avals, diff) if d]))
        blocks = []
        for a, d in zip(out_avals, diff):
            if not d:
                blocks.append([float0_zeros((*a.shape, *ia.shape)) for ia in lin.in_avals])
                continue
            col = next(cols)  # (inputs' total size, *a.shape)
            row, offset = [], 0
            for ia in lin.in_avals:
                size = _size(ia.shape)
                piece = jnp.reshape(col[offset:offset + size], (*ia.shape, *a.shape))
                # (*in, *out) -> (*out, *in)
                perm = (*range(ia.ndim, ia.ndim + a.ndim), *range(ia.ndim))
                row.append(jnp.transpose(piece, perm))
                offset += size
            blocks.append(row)
        jac = _assemble(argnums, picked, out_tree, blocks)
        if has_aux:
            return jac, tree_unflatten(aux_tree, outs[n:])
        return jac

    return jacfun


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """The Jacobian of `fun` with respect to the arguments `argnums`, by reverse mode.

    Returns a function of fun's arguments giving the Jacobian (and fun's aux output with
    `has_aux`): for each output leaf, a tree like the differentiated arguments whose leaves
    have shape out.shape + in.shape. One VJP per output element, pushed through one vmap.
    With `allow_int`, an integer or bool input's blocks are float0 arrays. With
    `holomorphic`, inputs and outputs must be complex: the result is the complex
    derivative.
    """
    nums = _argnums_tuple(argnums)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        _check_argnums(nums, argnums, args)
        picked = [args[i] for i in nums]
        for leaf in tree_flatten(picked)[0]:
            dtype = get_aval(leaf).dtype
            if holomorphic:
                check_holomorphic("jacrev", dtype, "inputs")
            if not allow_int:
                if dtypes.kind(dtype) not in "fc":
                    raise TypeError("jacrev requires real-valued inputs (input dtype that is "
                                    f"a sub-dtype of np.inexact), but got {dtype.name}. If you "
                                    "want to use Boolean- or integer-valued inputs, use vjp "
                                    "or set allow_int to True.")
        outs, lin, (out_tree, aux_tree, n), _ = _linearize(
            _partial(fun, args, kwargs, nums), picked, has_aux)
        out_avals = lin.out_avals[:n]
        for a in out_avals:
            if holomorphic:
                check_holomorphic("jacrev", a.dtype, "outputs")
            elif dtypes.kind(a.dtype) != "f":
                raise TypeError("jacrev requires real-valued outputs (output dtype that is a "
                                f"sub-dtype of np.floating), but got {a.dtype.name}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving "
                                "complex outputs, or function with integer outputs, use "
                                "jax.vjp directly.")
        in_avals = lin.in_avals
        diff = [ad.is_differentiable(a) for a in in_avals]
        aux_zeros = [ad.Zero(a) for a in lin.out_avals[n:]]

        def pull(cotangents: list) -> list:
            cts = lin.vjp([*cotangents, *aux_zeros])
            return [ad.instantiate_zeros(c) for c, d in zip(cts, diff) if d]

        rows_iter = iter(_map_basis(pull, _std_basis(out_avals),
                                    [a for a, d in zip(in_avals, diff) if d]))
        rows = [next(rows_iter) if d else None for d in diff]  # (outputs' size, *in.shape)
        blocks, offset = [], 0
        for a in out_avals:
            size = _size(a.shape)
            blocks.append([
                jnp.reshape(r[offset:offset + size], (*a.shape, *ia.shape)) if r is not None
                else float0_zeros((*a.shape, *ia.shape)) for r, ia in zip(rows, in_avals)])
            offset += size
        jac = _assemble(argnums, picked, out_tree, blocks)
        if has_aux:
            return jac, tree_unflatten(aux_tree, outs[n:])
        return jac

    return jacfun


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian of the scalar-valued `fun` with respect to the arguments `argnums`:
    `jacfwd(jacrev(fun))`, each leaf of shape out.shape + in.shape + in.shape."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
