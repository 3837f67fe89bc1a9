"""lax.cond and lax.switch: pick one of several functions by a traced value.

Input: a predicate (bool or number scalar) or an integer index, the branch functions and
their operands (pytrees). Output: the chosen branch's result (a pytree), staged as one
`cond` equation (prims/control_flow.py) whose branches are the traced functions.
Semantics as JAX 0.10.2:
- cond: a numeric predicate means `pred != 0`; it becomes index = int32(pred) and the
  branches are (false_fun, true_fun). The legacy forms `cond(pred, true_operand, true_fun,
  false_operand, false_fun)` and `operand=` are accepted.
- switch: the index is converted to int32 and clamped to [0, len(branches) - 1]; one
  branch is just called.
- Every branch is traced at the operands' types; values they close over become operands
  (each once); outputs that every branch returns unchanged from the same input are not
  outputs of the equation but that input itself; the branches' outputs must agree in
  structure and types (weak types aside), else JAX's TypeError.
- With `jax_disable_jit` and a concrete predicate the chosen function runs as Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.config import config
from ember.core import dtypes, traceback_util
from ember.core.trace import Tracer, get_aval
from ember.lax import _ops
from ember.lax._base import convert_element_type
from ember.lax._cf_errors import check_branch_outputs
from ember.lax._cf_trace import (
    Body,
    as_array,
    forwarding,
    merge_consts,
    prune_outputs,
    trace_bodies,
)
from ember.prims.control_flow import cond_p
from ember.tree_util import tree_flatten, tree_unflatten

__all__ = ["cond", "switch"]

_NO_OPERAND = object()


def _operands(operands: tuple, operand: Any) -> tuple:
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand!r} and positional operands {operands!r}")
    return (operand,)


@traceback_util.api_boundary
def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = _NO_OPERAND) -> Any:
    """Apply ``true_fun`` or ``false_fun`` to the operands, chosen by a traced predicate.

    The staged form of ``true_fun(*operands) if pred else false_fun(*operands)``: where a
    Python ``if`` on a traced value raises a ``TracerBoolConversionError``, ``cond`` stages
    both branches into one ``cond`` equation. Both are traced (so both must accept the
    operands) and only the chosen one runs; under ``vmap`` with a batched predicate both run
    and the results are selected, as in JAX.

    Args:
        pred: a scalar bool, or a number (compared with 0).
        true_fun: the function applied when ``pred`` is true.
        false_fun: the function applied when ``pred`` is false.
        *operands: the arguments of the branches (pytrees of arrays).
        operand: the older single-operand keyword form.

    Returns:
        The chosen branch's output. Both branches must return the same pytree structure with
        the same shapes and dtypes, else a ``TypeError`` names the difference.

    Example:
        >>> f = ember.jit(lambda x: lax.cond(x > 0, lambda v: v * 2, lambda v: -v, x))
        >>> f(3.0), f(-1.0)
        (Array(6., dtype=float32, weak_type=True), Array(1., dtype=float32, weak_type=True))
    """
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            # The legacy form cond(pred, true_operand, true_fun, false_operand, false_fun).
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operands(operands, operand)
    pred = _predicate(pred)
    if config.jax_disable_jit and not isinstance(pred, Tracer):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    leaves, in_tree = tree_flatten(operands)
    avals = [get_aval(x) for x in leaves]
    true_body, false_body = trace_bodies([true_fun, false_fun], in_tree, avals)
    (true_j, false_j), consts = merge_consts([true_body, false_body])
    check_branch_outputs("cond", "true_fun", "false_fun", true_fun, false_fun,
                         true_body.out_tree, true_body.out_avals, false_body.out_tree,
                         false_body.out_avals)
    index = convert_element_type(pred, np.int32)
    return _bind_cond(index, [false_j, true_j], consts, leaves, true_body)


def _predicate(pred: Any) -> Any:
    """pred as a bool scalar (numbers compare != 0), or JAX's TypeError."""
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of "
                        + (f"type {type(pred)}" if isinstance(pred, Sequence)
                           else f"shape {np.shape(pred)}."))
    try:
        dtype = get_aval(pred).dtype
    except TypeError:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from None
    if dtypes.kind(dtype) == "b":
        return pred
    if dtypes.kind(dtype) in "iuf":
        return pred != 0
    raise TypeError(f"Pred type must be either boolean or number, got {dtype.name}.")


@traceback_util.api_boundary
def switch(index: Any, branches: Sequence[Callable], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """Apply the branch selected by a traced integer index to the operands.

    Args:
        index: a scalar integer; out-of-range values are clamped to ``[0, len(branches) - 1]``
            (no error can be raised from inside a compiled program).
        branches: a sequence of functions, all traced; only the selected one runs.
        *operands: the arguments of the branches (pytrees of arrays).
        operand: the older single-operand keyword form.

    Returns:
        The selected branch's output; every branch must return the same pytree structure,
        shapes and dtypes.

    Example:
        >>> lax.switch(1, [lambda v: v + 1, lambda v: v * 10, lambda v: -v], 2.0)
        Array(20., dtype=float32, weak_type=True)
    """
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operands(operands, operand)
    if len(np.shape(index)) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        dtype = get_aval(index).dtype
    except TypeError:
        raise TypeError(f"Index type must be an integer, got {index}.") from None
    if dtypes.kind(dtype) not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {dtype.name}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = _ops.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.jax_disable_jit and not isinstance(index, Tracer):
        return branches[int(index)](*operands)
    leaves, in_tree = tree_flatten(operands)
    avals = [get_aval(x) for x in leaves]
    bodies = trace_bodies(branches, in_tree, avals)
    jaxprs, consts = merge_consts(bodies)
    first = bodies[0]
    for k, body in enumerate(bodies[1:], start=1):
        check_branch_outputs("switch", "branch 0", f"branch{k}", branches[0], branches[k],
                             first.out_tree, first.out_avals, body.out_tree, body.out_avals)
    return _bind_cond(index, jaxprs, consts, leaves, first)


def _bind_cond(index: Any, jaxprs: list, consts: list, leaves: list, like: Body) -> Any:
    """Bind `cond`, with outputs every branch forwards from one input taken from it."""
    fwds = [forwarding(j.jaxpr) for j in jaxprs]
    in_fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*fwds)]
    keep = [f is None for f in in_fwd]
    pruned: dict[int, Any] = {}
    jaxprs = [pruned.setdefault(id(j), prune_outputs(j, keep)) for j in jaxprs]
    outs = iter(cond_p.bind(index, *consts, *leaves, branches=tuple(jaxprs)))
    inputs = [*consts, *leaves]
    flat = [next(outs) if f is None else as_array(inputs[f]) for f in in_fwd]
    return tree_unflatten(like.out_tree, flat)
