"""`vmap`, as JAX's: map a function over an axis of its arguments, without a loop.

Input: a Python function over pytrees of arrays; `in_axes` (an int, None, or a tuple with
one entry per positional argument, each a pytree prefix of its argument), `out_axes` (the
same over the outputs), `axis_size` (needed only when no argument is mapped), `axis_name`
(for collectives: `lax.psum(x, name)` and friends inside).
Output: a function whose outputs are the function's outputs for every example, stacked
along `out_axes`. The function runs once, on a `BatchTrace` (core/batching.py): each
primitive's batching rule turns its per-example operation into one on the whole batch, so
a vmapped program is the hand-batched program (no loop), and vmap composes with `jit`,
`grad` and itself in any order.
Invariants: keyword arguments are mapped along their axis 0 (as in JAX); negative axes
count from the end (`in_axes` of the argument's rank, `out_axes` of the output's rank with
the batch axis); bad axes and inconsistent sizes get JAX's errors, naming the argument.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ember.core import batching, traceback_util
from ember.core.trace import get_aval
from ember.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
)

__all__ = ["vmap"]


def _is_none(x: Any) -> bool:
    return x is None


def _check_axes_spec(spec: Any, what: str) -> None:
    """in_axes/out_axes leaves must be ints or None."""
    leaves, _ = tree_flatten(spec, is_leaf=_is_none)
    for leaf in leaves:
        if leaf is not None and (isinstance(leaf, bool) or not isinstance(leaf, int)):
            raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                            f"those types as leaves, but got {spec}.")


def _broadcast_prefix(spec: Any, tree: Any, what: str) -> list[Any]:
    """One entry of `spec` per leaf of `tree`: spec is a pytree prefix of tree, and each of
    its leaves (an int or None) applies to every leaf of the subtree it covers."""
    prefix = tree_structure(spec, is_leaf=_is_none)
    spec_leaves = tree_flatten(spec, is_leaf=_is_none)[0]
    try:
        subtrees = prefix.flatten_up_to(tree)
    except ValueError as e:
        value_tree = tree_structure(tree)
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {spec} for value tree "
                         f"{value_tree}.") from e
    out: list[Any] = []
    for axis, sub in zip(spec_leaves, subtrees):
        out.extend([axis] * len(tree_flatten(sub)[0]))
    return out


def _arg_names(fun: Callable, args: tuple, kwargs: dict) -> list[str]:
    """A name per leaf of (args, kwargs): the parameter's name and the leaf's key path."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    names: list[str] = []
    for i, a in enumerate(args):
        if i < len(positional):
            base = positional[i]
        elif star is not None:
            base = f"{star}[{i - len(positional)}]"
        else:
            base = f"args[{i}]"
        names.extend(base + keystr(path) for path, _ in tree_flatten_with_path(a)[0])
    for k, v in kwargs.items():
        names.extend(k + keystr(path) for path, _ in tree_flatten_with_path(v)[0])
    return names


def _axis_size(leaves: Sequence[Any], dims: Sequence[int | None], names: Sequence[str]
               ) -> int:
    """The common size of the mapped axes, or JAX's error listing every size found."""
    sizes = [get_aval(x).shape[d] for x, d in zip(leaves, dims) if d is not None]
    if len(set(sizes)) == 1:
        return sizes[0]
    entries = [(get_aval(x).shape[d], d, n, get_aval(x))
               for x, d, n in zip(leaves, dims, names) if d is not None]
    by_size: dict[int, list] = {}
    for e in entries:
        by_size.setdefault(e[0], []).append(e)
    lines = []
    ordered = sorted(by_size.items(), key=lambda kv: -len(kv[1]))
    for i, (size, group) in enumerate(ordered):
        _, d, n, aval = group[0]
        type_str = f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"
        what = f"axis {d} of argument {n} of type {type_str}"
        sep = ";" if i < len(ordered) - 1 else ""
        if len(group) == 1:
            lines.append(f"  * one axis had size {size}: {what}{sep}")
        else:
            lines.append(f"  * most axes ({len(group)} of them) had size {size}, e.g. "
                         f"{what}{sep}")
    raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                     + "\n".join(lines))


def _normalize_in_dims(leaves: Sequence[Any], dims: Sequence[int | None]) -> list[int | None]:
    out: list[int | None] = []
    for x, d in zip(leaves, dims):
        if d is None:
            out.append(None)
            continue
        shape = get_aval(x).shape
        nd = d + len(shape) if d < 0 else d
        if not 0 <= nd < len(shape):
            raise ValueError(f"vmap was requested to map its argument along axis {d}, which "
                             f"implies that its rank should be at least "
                             f"{(d if d >= 0 else -d - 1) + 1}, but is only {len(shape)} "
                             f"(its shape is {shape})")
        out.append(nd)
    return out


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None) -> Callable:
    """Vectorize `fun` over the axes `in_axes` of its arguments (JAX's `vmap`).

    `vmap(f)(xs)` equals stacking `f(x)` for every `x` along xs's leading axis, computed as
    one batched program. `in_axes`: an int, None (not mapped) or a tuple with one entry per
    positional argument (each a pytree prefix of its argument); `out_axes`: the same for the
    outputs; `axis_size`: the batch size when no argument is mapped; `axis_name`: a name
    for collectives (`lax.psum(x, axis_name)`) inside `fun`.
    """
    if not callable(fun):
        raise TypeError(f"vmap expects a callable as its first argument, got {fun!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # JAX accepts a list for the positional arguments
    if not (in_axes is None or type(in_axes) is int or isinstance(in_axes, tuple)):
        raise TypeError("vmap in_axes must be an int, None, or a tuple of entries "
                        "corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    del spmd_axis_name  # one device: no sharding of the batch axis

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                             "corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        arg_dims = _broadcast_prefix(in_axes, args, "in_axes")
        kw_dims = [0] * len(tree_flatten(kwargs)[0])
        leaves, in_tree = tree_flatten((args, kwargs))
        dims = _normalize_in_dims(leaves, arg_dims + kw_dims)
        if all(d is None for d in dims):
            if axis_size is None:
                raise ValueError("vmap must have at least one non-None value in in_axes")
            size = axis_size
        else:
            size = _axis_size(leaves, dims, _arg_names(fun, args, kwargs))
            if axis_size is not None and axis_size != size:
                raise ValueError(f"vmap got axis_size={axis_size} but the mapped axes have "
                                 f"size {size}")
        out_tree: list[PyTreeDef] = []
        out_value: list[Any] = []

        def flat_fun(*flat: Any) -> list[Any]:
            a, kw = tree_unflatten(in_tree, list(flat))
            out = fun(*a, **kw)
            out_leaves, tree = tree_flatten(out)
            out_tree[:], out_value[:] = [tree], [out]
            return out_leaves

        def out_dims(n: int) -> list[int | None]:
            return _broadcast_prefix(out_axes, out_value[0], "out_axes")

        outs = batching.vmap_flat(flat_fun, leaves, dims, out_dims,
                                  batching.AxisData(size, axis_name))
        return tree_unflatten(out_tree[0], outs)

    return batched

