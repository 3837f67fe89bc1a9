"""lax.while_loop and lax.fori_loop: loops whose bodies are traced once.

Input: body functions over pytrees and initial values. Output: the final carry, staged as
one `while` equation (or, for fori_loop with static bounds, a `scan`; see _scan.py).
Semantics as JAX 0.10.2:
- Carries: the body is traced at the initial values' types; a weakly typed initial value
  (a Python scalar such as the 0 in `(v, 0)`) whose type differs from the body's output
  is converted to the output's type and the body traced again; any remaining structure,
  shape or dtype difference raises JAX's TypeError naming the carry component's path.
- Values the bodies close over become operands (cond_nconsts/body_nconsts); a carry the
  body passes through unchanged and the condition does not read becomes a body const.
- fori_loop with concrete bounds is a scan over (i, x) of length upper - lower (so it may
  be unrolled); with a traced bound it is a while_loop over (i, upper, x).
- With `jax_disable_jit`, while_loop runs as a Python loop.
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
from ember.lax._base import convert_element_type
from ember.lax._cf_errors import aval_repr, check_carry
from ember.lax._cf_trace import (
    Body,
    as_array,
    dce,
    forwarding,
    move_to_front,
    prune_outputs,
    trace_body,
)
from ember.lax._scan import promote_weak, scan
from ember.prims import elementwise as E
from ember.prims.control_flow import while_p
from ember.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten

__all__ = ["while_loop", "fori_loop"]


# -- while_loop ---------------------------------------------------------------------------------

@traceback_util.api_boundary
def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)`` is true.

    The staged form of a Python ``while`` loop whose condition depends on traced values::

        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val

    Args:
        cond_fun: maps the loop value to a scalar bool.
        body_fun: maps the loop value to the next one, with the same pytree structure,
            shapes and dtypes (a ``TypeError`` names any difference).
        init_val: the first loop value (a pytree of arrays).

    Returns:
        The loop value once ``cond_fun`` is false. As in JAX, a ``while_loop`` can be
        differentiated in forward mode (``jvp``) but not in reverse mode (``grad``): its
        trip count is not known ahead; use ``fori_loop`` with static bounds or ``scan``.

    Example:
        >>> lax.while_loop(lambda v: v < 100, lambda v: v * 3, 1)
        Array(243, dtype=int32, weak_type=True)
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.jax_disable_jit:
        try:
            val = tree_map(as_array, init_val)
            while cond_fun(val):
                val = tree_map(as_array, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass  # a traced predicate: stage the loop after all
    leaves, tree = tree_flatten(init_val)
    arg_tree = tree_flatten((init_val,))[1]
    avals = [get_aval(x) for x in leaves]
    cond_b, body_b = _trace_while(cond_fun, body_fun, arg_tree, avals)
    if len(body_b.out_avals) != len(avals):
        check_carry("while_loop body", body_fun, tree, avals, body_b.out_tree,
                    body_b.out_avals)
    leaves, changed = promote_weak(leaves, avals, body_b.out_avals)
    if changed:
        avals = [get_aval(x) for x in leaves]
        cond_b, body_b = _trace_while(cond_fun, body_fun, arg_tree, avals)
    check_carry("while_loop body", body_fun, tree, avals, body_b.out_tree, body_b.out_avals)
    cond_j, body_j = cond_b.jaxpr, body_b.jaxpr
    cconsts, bconsts = cond_b.consts, list(body_b.consts)
    # A carry the body passes through and the condition ignores becomes a body const.
    fwd = forwarding(body_j.jaxpr)
    nofwd = [len(bconsts) + i != f for i, f in enumerate(fwd)]
    small_cond, kept = dce(cond_j, [True] * len(cconsts) + nofwd)
    move = [not k for k in kept[len(cconsts):]]
    init = list(leaves)
    moved: list[Any] = []
    if any(move):
        cond_j = small_cond
        body_j = prune_outputs(body_j, [not m for m in move])
        body_j = move_to_front(body_j, [False] * len(bconsts) + move)
        moved = [v for v, m in zip(init, move) if m]
        init = [v for v, m in zip(init, move) if not m]
        bconsts = moved + bconsts
    outs = iter(while_p.bind(*cconsts, *bconsts, *init, cond_nconsts=len(cconsts),
                             cond_jaxpr=cond_j, body_nconsts=len(bconsts),
                             body_jaxpr=body_j))
    kept_vals = iter(moved)
    flat = [as_array(next(kept_vals)) if m else next(outs) for m in move]
    return tree_unflatten(body_b.out_tree, flat)


def _trace_while(cond_fun: Callable, body_fun: Callable, arg_tree: PyTreeDef,
                 avals: list[ShapedArray]) -> tuple[Body, Body]:
    cond_b = trace_body(cond_fun, arg_tree, avals)
    body_b = trace_body(body_fun, arg_tree, avals)
    if cond_b.out_tree.num_leaves != 1 or cond_b.out_tree.num_nodes != 1:
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree "
                        f"{cond_b.out_tree}.")
    pred = cond_b.out_avals[0]
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{aval_repr(pred)}].")
    return cond_b, body_b


# -- fori_loop ----------------------------------------------------------------------------------

@traceback_util.api_boundary
def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any,
              *, unroll: int | bool | None = None) -> Any:
    """Run ``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper`` (excluded).

    Args:
        lower: the first index (an int or a scalar integer array).
        upper: the end index, excluded.
        body_fun: maps ``(i, val)`` to the next value, with the same pytree structure,
            shapes and dtypes.
        init_val: the first loop value (a pytree of arrays).
        unroll: how many iterations one step of the compiled loop runs (static bounds only).

    Returns:
        The last loop value. With concrete bounds the loop is a ``scan`` (so it can be
        differentiated in reverse mode); with traced bounds it is a ``while_loop``, as in
        JAX.

    Example:
        >>> lax.fori_loop(0, 5, lambda i, total: total + i, 0)
        Array(10, dtype=int32, weak_type=True)
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    la, ua = get_aval(lower), get_aval(upper)
    dtype = la.dtype if la.dtype == ua.dtype else None
    if dtype is None and dtypes.kind(la.dtype) == "i" and dtypes.kind(ua.dtype) == "i":
        if la.weak_type and not ua.weak_type:
            dtype = ua.dtype
        elif ua.weak_type and not la.weak_type:
            dtype = la.dtype
    if dtype is None:
        raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                        f"{la.dtype.name} and {ua.dtype.name}")
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo, hi = int(lower), int(upper)
        length = max(hi - lo, 0)
        if config.jax_disable_jit and length == 0:
            return init_val

        def scanned(loop_carry: Any, _: Any) -> Any:
            i, x = loop_carry
            return (i + 1, body_fun(i, x)), None

        (_, result), _ = scan(scanned, (lo, init_val), None, length=length,
                              unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    if la.dtype != dtype:
        lower = convert_element_type(lower, dtype)
    if ua.dtype != dtype:
        upper = convert_element_type(upper, dtype)

    def while_cond(loop_carry: Any) -> Any:
        i, hi, _ = loop_carry
        return E.lt_p.bind(i, hi)

    def while_body(loop_carry: Any) -> Any:
        i, hi, x = loop_carry
        # add_p directly, as JAX's lax.add: a weak i is not converted first.
        return E.add_p.bind(i, np.ones((), get_aval(i).dtype)), hi, body_fun(i, x)

    _, _, result = while_loop(while_cond, while_body, (lower, upper, init_val))
    return result
