"""Jacobians and Hessians, as JAX's: `jacfwd`, `jacrev`, `jacobian`, `hessian`.

Input: a function over pytrees of arrays, `argnums` (an int or a tuple), `has_aux`.
Output: a function returning the Jacobian at its arguments with JAX's structure: the outer
structure is the function's output, the inner one the differentiated arguments' (the
argument's tree for an int argnums, a tuple of them for a tuple), and each leaf has shape
`out.shape + in.shape`.
How (JAX's algorithm, so the programs print as JAX's): the standard basis of the
differentiated space is built in the program (`eye` by iota/eq/convert, split per leaf,
each converted to its leaf's dtype), and pushed through `vmap` in one go: forward
(`jacfwd`: vmap of jvp over the basis, the Jacobian's columns batched on the last axis) or
backward (`jacrev`: vjp once, then vmap of its pullback over the outputs' basis, the rows).
The batched result is split back into one block per (output leaf, input leaf). So the
Jacobian is traced once under `jit` whatever its size, and Jacobians nest (grad of
jacfwd, jacrev of jacrev, hessian).
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
    check_holomorphic,
    float0_zeros,
    jvp,
    vjp,
)
from ember.core import ad, dtypes, traceback_util
from ember.core.trace import get_aval
from ember.prims.conversion import convert_element_type_p
from ember.tree_util import tree_flatten, tree_unflatten
from ember.vmap_api import vmap

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]


def _size(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _std_basis(leaves: Sequence[Any]) -> list[Any]:
    """The standard basis of the flattened space of `leaves`, built in the program as JAX
    builds it: eye(total size) in the leaves' common dtype, split along axis 1 into one
    block per leaf, reshaped to (total size, *leaf.shape) and converted to the leaf's dtype
    and weak type (the conversion staged even when it changes nothing, as JAX's is)."""
    sizes = [_size(np.shape(leaf)) for leaf in leaves]
    total = sum(sizes)
    eye = jnp.eye(total, dtype=jnp.result_type(*leaves))
    parts = jnp.split(eye, np.cumsum(sizes[:-1]), 1)
    out = []
    for part, leaf in zip(parts, leaves):
        aval = get_aval(leaf)
        part = jnp.reshape(part, (total, *aval.shape))
        if dtypes.kind(get_aval(part).dtype) == "c" and dtypes.kind(aval.dtype) != "c":
            part = jnp.real(part)
        out.append(convert_element_type_p.bind(part, new_dtype=aval.dtype,
                                               weak_type=aval.weak_type))
    return out


def _unravel(arr: Any, axis: int, leaves: Sequence[Any], like: Any) -> list[Any]:
    """arr split along `axis` into one block per leaf of the flattened tree `leaves`, each
    with the leaf's shape in place of that axis, in `like`'s dtype (JAX's
    _unravel_array_into_pytree: a conversion only where the dtype differs)."""
    aval = get_aval(arr)
    sizes = [_size(np.shape(leaf)) for leaf in leaves]
    want = get_aval(like)
    out = []
    for part, leaf in zip(jnp.split(arr, np.cumsum(sizes[:-1]), axis), leaves):
        shape = (*aval.shape[:axis], *np.shape(leaf), *aval.shape[axis + 1:])
        part = jnp.reshape(part, shape)
        if dtypes.kind(get_aval(part).dtype) == "c" and dtypes.kind(want.dtype) != "c":
            part = jnp.real(part)
        have = get_aval(part)
        if have.dtype != want.dtype or have.weak_type != want.weak_type:
            part = convert_element_type_p.bind(part, new_dtype=want.dtype,
                                               weak_type=want.weak_type)
        out.append(part)
    return out


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
        f_partial = _partial(fun, args, kwargs, nums)
        in_leaves, in_tree = tree_flatten(tuple(picked))
        store: list = []  # [out_tree, [differentiable?] per output leaf]

        def pushfwd(basis: tuple) -> tuple:
            # (outputs, tangents of the differentiable ones[, aux]) for one basis vector
            res = jvp(f_partial, tuple(picked), basis, has_aux=has_aux)
            y, t = res[0], res[1]
            y_leaves, out_tree = tree_flatten(y)
            diff = [ad.is_differentiable(get_aval(v)) for v in y_leaves]
            store[:] = [out_tree, diff]
            ts = [v for v, d in zip(tree_flatten(t)[0], diff) if d]
            return (y, ts, res[2]) if has_aux else (y, ts)

        basis = tree_unflatten(in_tree, _std_basis(in_leaves))
        out_axes = (None, -1, None) if has_aux else (None, -1)
        res = vmap(pushfwd, out_axes=out_axes)(basis)
        y, cols = res[0], iter(res[1])
        out_tree, diff = store
        y_leaves = tree_flatten(y)[0]
        if holomorphic:
            for v in y_leaves:
                check_holomorphic("jacfwd", get_aval(v).dtype, "outputs")
        blocks = []
        for v, d in zip(y_leaves, diff):
            a = get_aval(v)
            if not d:
                blocks.append([float0_zeros((*a.shape, *np.shape(leaf))) for leaf in in_leaves])
                continue
            col = next(cols)  # (*out.shape, inputs' total size)
            blocks.append(_unravel(col, a.ndim, in_leaves, v))
        jac = _assemble(argnums, picked, out_tree, blocks)
        if has_aux:
            return jac, res[2]
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
        res = vjp(_partial(fun, args, kwargs, nums), *picked, has_aux=has_aux)
        y, pullback = res[0], res[1]
        y_leaves, out_tree = tree_flatten(y)
        for v in y_leaves:
            dtype = get_aval(v).dtype
            if holomorphic:
                check_holomorphic("jacrev", dtype, "outputs")
            elif dtypes.kind(dtype) != "f":
                raise TypeError("jacrev requires real-valued outputs (output dtype that is a "
                                f"sub-dtype of np.floating), but got {dtype.name}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving "
                                "complex outputs, or function with integer outputs, use "
                                "jax.vjp directly.")
        in_leaves, _ = tree_flatten(tuple(picked))
        diff = [ad.is_differentiable(get_aval(v)) for v in in_leaves]

        def pull(basis: Any) -> list:
            cts = tree_flatten(pullback(basis))[0]
            return [c for c, d in zip(cts, diff) if d]

        rows_iter = iter(vmap(pull)(tree_unflatten(out_tree, _std_basis(y_leaves))))
        # (outputs' total size, *in.shape) per differentiable input leaf
        cols = [_unravel(next(rows_iter), 0, y_leaves, x) if d else None
                for x, d in zip(in_leaves, diff)]
        blocks = [[c[j] if c is not None else float0_zeros((*get_aval(v).shape,
                                                            *get_aval(x).shape))
                   for c, x in zip(cols, in_leaves)] for j, v in enumerate(y_leaves)]
        jac = _assemble(argnums, picked, out_tree, blocks)
        if has_aux:
            return jac, res[2]
        return jac

    return jacfun


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian of the scalar-valued `fun` with respect to the arguments `argnums`:
    `jacfwd(jacrev(fun))`, each leaf of shape out.shape + in.shape + in.shape."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
