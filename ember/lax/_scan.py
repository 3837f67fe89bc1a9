"""lax.scan and lax.map: loops over the leading axis of arrays, traced once.

Input: a body `f(carry, x) -> (carry, y)` over pytrees, an initial carry, and xs (a
pytree of arrays with one leading length, or None with `length`). Output: the final
carry and the ys stacked along a new leading axis, staged as one `scan` equation
(prims/control_flow.py).
Semantics as JAX 0.10.2:
- The body is traced at the carry's types and one row of each xs; a weakly typed
  initial carry value whose type differs from the body's output is converted to it and
  the body traced again; any remaining structure, shape or dtype difference raises JAX's
  TypeError naming the carry component's path.
- Values the body closes over become operands (num_consts); a carry the body passes
  through unchanged becomes a const, and a stacked output that is just its input slice
  is the input itself (not an output of the equation).
- `reverse` runs from the last row (ys keep their positions); `unroll` (an int, or True
  for all of `length`) only shapes the generated loop.
- map(f, xs) is scan with no carry; map(f, xs, batch_size=k) scans `vmap(f)` over chunks
  of k rows and maps the last length % k rows with one more `vmap(f)`, concatenated.
  With `jax_disable_jit`, scan runs as a Python loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.config import config
from ember.core import dtypes, traceback_util
from ember.core.aval import ShapedArray
from ember.core.errors import ConcretizationTypeError
from ember.core.trace import Tracer, get_aval
from ember.lax import _ops, _slicing
from ember.lax._base import convert_element_type
from ember.lax._cf_errors import check_carry
from ember.lax._cf_trace import Body, as_array, forwarding, move_to_front, prune_outputs, trace_body
from ember.prims.control_flow import scan_p
from ember.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten

__all__ = ["scan", "map"]


def promote_weak(vals: list[Any], in_avals: list[ShapedArray],
                 out_avals: list[ShapedArray]) -> tuple[list[Any], bool]:
    """Give each weakly typed initial value whose type the body changes the body's type."""
    changed = False
    out = []
    for v, a, o in zip(vals, in_avals, out_avals):
        if a.weak_type and (a.shape != o.shape or a.dtype != o.dtype):
            dtype, _ = dtypes.promote((a.dtype, True), (o.dtype, o.weak_type))
            v = convert_element_type(v, dtype)
            changed = True
        out.append(v)
    return out, changed


# -- scan ---------------------------------------------------------------------------------------

@traceback_util.api_boundary
def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """Loop a function over the leading axis of its inputs, carrying a state.

    The staged form of::

        def scan(f, init, xs, length=None):
            carry, ys = init, []
            for x in xs:  # or x = None, length times, when xs is None
                carry, y = f(carry, x)
                ys.append(y)
            return carry, stack(ys)

    Args:
        f: maps ``(carry, x)`` to ``(new_carry, y)``; ``new_carry`` must keep the
            structure, shapes and dtypes of ``carry``.
        init: the first carry (a pytree of arrays).
        xs: a pytree of arrays scanned along their leading axis (all of one length), or
            None.
        length: the number of iterations; needed when ``xs`` is None, else checked.
        reverse: scan from the end to the start (``ys`` keep their positions).
        unroll: how many iterations one step of the compiled loop runs (True: all).
        _split_transpose: JAX's experimental flag; accepted and ignored.

    Returns:
        ``(final_carry, ys)`` where ``ys`` stacks the per-iteration ``y`` along a new leading
        axis.

    Example:
        >>> carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(1.0, 5.0))
        >>> carry, ys
        (Array(10., dtype=float32), Array([ 0.,  2.,  9., 24.], dtype=float32))
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be callable.")
    init_leaves, init_tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, length)
    if config.jax_disable_jit:
        return _scan_python(f, init, xs_leaves, xs_tree, length, reverse)
    x_avals = [_row_aval(get_aval(x)) for x in xs_leaves]
    init_avals = [get_aval(x) for x in init_leaves]
    arg_tree = tree_flatten((init, xs))[1]
    body = _trace_scan(f, arg_tree, init_avals, x_avals)
    carry_tree, carry_avals = body.out_tree.children()[0], body.out_avals[:len(init_avals)]
    if carry_tree.num_leaves != len(init_avals):
        check_carry("scan body", f, init_tree, init_avals, carry_tree,
                    body.out_avals[:carry_tree.num_leaves])
    init_leaves, changed = promote_weak(init_leaves, init_avals, carry_avals)
    if changed:
        init_avals = [get_aval(x) for x in init_leaves]
        body = _trace_scan(f, arg_tree, init_avals, x_avals)
        carry_tree = body.out_tree.children()[0]
    check_carry("scan body", f, init_tree, init_avals, carry_tree,
                body.out_avals[:carry_tree.num_leaves])
    if isinstance(unroll, bool):
        unroll = max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return _bind_scan(body, list(init_leaves), list(xs_leaves), length, reverse, unroll)


def _bind_scan(body: Body, init: list[Any], xs: list[Any], length: int, reverse: bool,
               unroll: int) -> tuple[Any, Any]:
    jaxpr, consts = body.jaxpr, list(body.consts)
    num_carry, num_ys = len(init), len(body.out_avals) - len(init)
    args = init + xs
    # A carry the body passes through unchanged becomes a const.
    fwd = forwarding(jaxpr.jaxpr)
    move = [len(consts) + i == f for i, f in enumerate(fwd[:num_carry])]
    moved: list[Any] = []
    if any(move):
        jaxpr = prune_outputs(jaxpr, [not m for m in move] + [True] * num_ys)
        jaxpr = move_to_front(jaxpr, [False] * len(consts) + move + [False] * len(xs))
        moved = [v for v, m in zip(init, move) if m]
        args = [v for v, m in zip(init, move) if not m] + xs
        consts = moved + consts
        num_carry -= len(moved)
    # A stacked output that is just an input slice is that input.
    ext_fwd = [f - len(consts) if f is not None and f >= num_carry + len(consts) else None
               for f in forwarding(jaxpr.jaxpr)[num_carry:]]
    jaxpr = prune_outputs(jaxpr, [True] * num_carry + [f is None for f in ext_fwd])
    outs = scan_p.bind(*consts, *args, reverse=bool(reverse), length=length, jaxpr=jaxpr,
                       num_consts=len(consts), num_carry=num_carry, unroll=unroll)
    carry_out, ys_it = outs[:num_carry], iter(outs[num_carry:])
    ys = [next(ys_it) if f is None else as_array(args[f]) for f in ext_fwd]
    carry_it, moved_it = iter(carry_out), iter(moved)
    carry = [as_array(next(moved_it)) if m else next(carry_it) for m in move]
    carry_tree, ys_tree = body.out_tree.children()
    return tree_unflatten(carry_tree, carry), tree_unflatten(ys_tree, ys)


def _row_aval(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def _trace_scan(f: Callable, arg_tree: PyTreeDef, init_avals: list[ShapedArray],
                x_avals: list[ShapedArray]) -> Body:
    body = trace_body(f, arg_tree, [*init_avals, *x_avals])
    kids = body.out_tree.children()
    if body.out_tree.node_data is None or body.out_tree.node_data[0] not in (tuple, list) \
            or len(kids) != 2:
        out = tree_unflatten(body.out_tree, [_AvalStr(a) for a in body.out_avals])
        raise TypeError(f"scan body output must be a pair, got {out}.")
    return body


class _AvalStr:
    """Prints as JAX prints an aval in a message: `float32[3]`, `~float32[]` if weak."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        a = self.aval
        return ("~" if a.weak_type else "") + f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _scan_length(xs: list[Any], length: Any) -> int:
    if any(not np.shape(x) for x in xs):
        bad = ", ".join(str(x) for x in xs if not np.shape(x))
        raise ValueError(f"scan got value with no leading axis to scan over: {bad}.")
    lengths = [int(np.shape(x)[0]) for x in xs]
    if length is not None:
        if isinstance(length, Tracer):
            raise ConcretizationTypeError(
                "The `length` argument to `scan` expects a concrete `int` value. For "
                "scan-like iteration with a dynamic length, use `while_loop` or `fori_loop`.")
        length = int(length)
        if not all(length == n for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if len(set(lengths)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(str(n) for n in lengths) + ".")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def _scan_python(f: Callable, init: Any, xs: list[Any], xs_tree: PyTreeDef, length: int,
                 reverse: bool) -> tuple[Any, Any]:
    """scan under disable_jit: a Python loop over index_in_dim slices, ys stacked."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = tree_unflatten(xs_tree, [_slicing.index_in_dim(v, i, keepdims=False) for v in xs])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_map(lambda *rows: _slicing.concatenate(
        [_ops.expand_dims(r, (0,)) for r in rows], 0), *ys)
    return carry, stacked


# -- map ----------------------------------------------------------------------------------------

@traceback_util.api_boundary
def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """`stack([f(x) for x in xs])` over the leading axis of (pytree) xs, as one scan; with
    `batch_size` k, a scan over chunks of k rows each mapped by `vmap(f)`, the remaining
    rows (length % k) by one more `vmap(f)` (k = 0: one vmap over every row)."""
    if batch_size is not None:
        return _map_batched(f, xs, batch_size)
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys


def _map_batched(f: Callable[[Any], Any], xs: Any, batch_size: Any) -> Any:
    """lax.map with `batch_size` (JAX's semantics: the length is the first leaf's)."""
    from ember.vmap_api import vmap
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 0:
        raise ValueError(f"lax.map batch_size must be a non-negative int, got {batch_size!r}.")
    batch_size = int(batch_size)
    leaves, tree = tree_flatten(xs)
    if not leaves:
        _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), xs)   # scan's error: nothing to scan
        return ys
    n = _scan_length(leaves[:1], None)   # the first leaf's length, or scan's error
    chunks, rest = divmod(n, batch_size) if batch_size else (0, n)
    head = chunks * batch_size

    def chunked(leaf: Any) -> Any:
        shape = get_aval(leaf).shape
        if head != shape[0]:
            leaf = _slicing.slice_in_dim(leaf, 0, head)
        return _ops.reshape(leaf, (chunks, batch_size, *shape[1:]))

    def flat(y: Any) -> Any:
        return _ops.reshape(y, (head, *get_aval(y).shape[2:]))

    def tail(leaf: Any) -> Any:
        return leaf if head == 0 else _slicing.slice_in_dim(leaf, head, n)

    # Every leaf's slices first, then the scan, then the remainder's vmap (JAX's order).
    if not chunks:
        return vmap(f)(tree_unflatten(tree, [tail(x) for x in leaves]))
    scan_xs = tree_unflatten(tree, [chunked(x) for x in leaves])
    rest_xs = tree_unflatten(tree, [tail(x) for x in leaves]) if rest else None
    _, scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)
    if rest_xs is None:
        return tree_map(flat, scan_ys)
    rest_ys = vmap(f)(rest_xs)
    return tree_map(lambda a, b: _slicing.concatenate([flat(a), b], 0), scan_ys, rest_ys)
