"""Control-flow primitives: `cond`, `while`, `scan`, each with closed sub-jaxprs.

Operands and params, as JAX 0.10.2 binds and prints them:
  cond(index, *consts, *args; branches=(jaxpr_0, ..., jaxpr_{n-1}))
      index is an int32 scalar (out of [0, n) it runs the last branch, as XLA's
      conditional does; lax.switch clamps before binding); every branch takes
      (*consts, *args) and all branches return the same types. `lax.cond` passes
      branches=(false_fun, true_fun) and index = int32(pred).
  while(*cond_consts, *body_consts, *init; cond_nconsts, cond_jaxpr, body_nconsts, body_jaxpr)
      cond_jaxpr: (*cond_consts, *carry) -> bool[]; body_jaxpr: (*body_consts, *carry) ->
      carry. Results: the final carry.
  scan(*consts, *init, *xs; reverse, length, jaxpr, num_consts, num_carry, unroll)
      jaxpr: (*consts, *carry, *x) -> (*carry, *y), where x is one leading-axis slice of
      each xs; results: (*final carry, *ys stacked along a new leading axis of `length`),
      iterating from the end when `reverse`. `unroll` only shapes the generated loop.
Invariants: sub-jaxprs are ClosedJaxprs without consts (closed-over values are operands);
types match up to weak types (JAX's typematch). Eagerly each primitive runs its bodies
through ember.core.eval with the NumPy rules, op by op, one iteration at a time; the HLO
lowering is in `_control_flow_lower.py`, the autodiff rules in `_control_flow_ad.py`, the
batching rules in `_control_flow_batching.py`.
"""

from __future__ import annotations

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.eval import eval_closed_numpy
from ember.core.jaxpr import ClosedJaxpr
from ember.core.primitive import Primitive
from ember.prims import _control_flow_lower as lower

cond_p = Primitive("cond", multiple_results=True)
while_p = Primitive("while", multiple_results=True)
scan_p = Primitive("scan", multiple_results=True)


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal shapes and dtypes; weak types do not matter (JAX's core.typematch)."""
    return a.shape == b.shape and a.dtype == b.dtype


def check_inputs(what: str, jaxpr: ClosedJaxpr, avals: list[ShapedArray]) -> None:
    """TypeError unless `avals` match `jaxpr`'s inputs (up to weak types): the abstract
    eval check of every primitive that carries a body (control flow, checkpoint, custom
    derivatives)."""
    want = jaxpr.in_avals
    if len(want) != len(avals) or not all(map(typematch, want, avals)):
        got = ", ".join(a.str_short() for a in avals)
        exp = ", ".join(a.str_short() for a in want)
        raise TypeError(f"{what} takes ({exp}) but is given ({got})")


# -- cond ---------------------------------------------------------------------------------------

@cond_p.def_abstract_eval
def _cond_abstract(index: ShapedArray, *args: ShapedArray,
                   branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    if not branches:
        raise TypeError("cond needs at least one branch")
    out = branches[0].out_avals
    for i, br in enumerate(branches):
        check_inputs(f"cond branch {i}", br, list(args))
        if len(br.out_avals) != len(out) or not all(map(typematch, br.out_avals, out)):
            raise TypeError(f"cond branch {i} returns different types than branch 0")
    return list(out)


@cond_p.def_impl
def _cond_impl(index: np.ndarray, *args: np.ndarray,
               branches: tuple[ClosedJaxpr, ...]) -> list[np.ndarray]:
    k = int(index)
    k = k if 0 <= k < len(branches) else len(branches) - 1
    return eval_closed_numpy(branches[k], list(args))


# -- while --------------------------------------------------------------------------------------

@while_p.def_abstract_eval
def _while_abstract(*args: ShapedArray, cond_nconsts: int, cond_jaxpr: ClosedJaxpr,
                    body_nconsts: int, body_jaxpr: ClosedJaxpr) -> list[ShapedArray]:
    cconsts, bconsts = list(args[:cond_nconsts]), list(args[cond_nconsts:][:body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    check_inputs("while cond_jaxpr", cond_jaxpr, cconsts + carry)
    check_inputs("while body_jaxpr", body_jaxpr, bconsts + carry)
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError("while cond_jaxpr must return one bool[]")
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(map(typematch, outs, carry)):
        raise TypeError("while body_jaxpr must return the carry's types")
    return list(outs)


@while_p.def_impl
def _while_impl(*args: np.ndarray, cond_nconsts: int, cond_jaxpr: ClosedJaxpr,
                body_nconsts: int, body_jaxpr: ClosedJaxpr) -> list[np.ndarray]:
    cconsts, bconsts = list(args[:cond_nconsts]), list(args[cond_nconsts:][:body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(eval_closed_numpy(cond_jaxpr, cconsts + carry)[0]):
        carry = eval_closed_numpy(body_jaxpr, bconsts + carry)
    return carry


# -- scan ---------------------------------------------------------------------------------------

def _split_scan(args: tuple, num_consts: int, num_carry: int) -> tuple[list, list, list]:
    return (list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]),
            list(args[num_consts + num_carry:]))


@scan_p.def_abstract_eval
def _scan_abstract(*args: ShapedArray, reverse: bool, length: int, jaxpr: ClosedJaxpr,
                   num_consts: int, num_carry: int, unroll: int) -> list[ShapedArray]:
    consts, carry, xs = _split_scan(args, num_consts, num_carry)
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan xs of type {x.str_short()} does not have a leading axis "
                            f"of length {length}")
    x_avals = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    check_inputs("scan jaxpr", jaxpr, consts + carry + x_avals)
    outs = jaxpr.out_avals
    if len(outs) < num_carry or not all(map(typematch, outs[:num_carry], carry)):
        raise TypeError("scan jaxpr must return the carry's types first")
    ys = [ShapedArray((length, *y.shape), y.dtype, y.weak_type) for y in outs[num_carry:]]
    return list(outs[:num_carry]) + ys


@scan_p.def_impl
def _scan_impl(*args: np.ndarray, reverse: bool, length: int, jaxpr: ClosedJaxpr,
               num_consts: int, num_carry: int, unroll: int) -> list[np.ndarray]:
    consts, carry, xs = _split_scan(args, num_consts, num_carry)
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length, *a.shape), a.dtype) for a in y_avals]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        outs = eval_closed_numpy(jaxpr, consts + carry + [x[i] for x in xs])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return carry + ys


cond_p.def_lowering(lower.cond_lowering)
while_p.def_lowering(lower.while_lowering)
scan_p.def_lowering(lower.scan_lowering)


# The autodiff rules (JVP, cond's transpose) trace sub-jaxprs with core's transforms;
# vmap's rules batch them with core's batching.batch_jaxpr.
from ember.prims import (  # noqa: E402
    _control_flow_ad,  # noqa: F401
    _control_flow_batching,  # noqa: F401
)
