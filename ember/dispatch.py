"""Run a jitted function's jaxpr on concrete arguments.

Input: a ClosedJaxpr and the flat concrete arguments of a top-level call. Output: flat
ember.Arrays. The executable for a jaxpr is built once and cached on the jaxpr object; until
the HLO backends land it evaluates the jaxpr with the primitives' NumPy rules.
Invariants: arguments are converted to the jaxpr's input dtypes; outputs never alias memory
the user can write; donated ember.Arrays are deleted after the call.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.array import ArrayImpl
from ember.core.eval import eval_jaxpr_numpy
from ember.core.jaxpr import ClosedJaxpr
from ember.core.trace import to_numpy, wrap_results
from ember.prims.call import jit_p

Executable = Callable[[list[np.ndarray]], list[np.ndarray]]

_executables: weakref.WeakKeyDictionary[ClosedJaxpr, Executable] = weakref.WeakKeyDictionary()


def _const_values(closed: ClosedJaxpr) -> list[np.ndarray]:
    return [to_numpy(c) for c in closed.consts]


def compile_jaxpr(closed: ClosedJaxpr) -> Executable:
    exe = _executables.get(closed)
    if exe is None:
        jaxpr = closed.jaxpr
        consts = _const_values(closed)

        def exe(args: list[np.ndarray]) -> list[np.ndarray]:
            return eval_jaxpr_numpy(jaxpr, consts, args)

        _executables[closed] = exe
    return exe


@jit_p.def_call_impl
def _jit_call_impl(args: list, params: dict) -> list:
    closed: ClosedJaxpr = params["jaxpr"]
    in_avals = closed.in_avals
    vals = [to_numpy(x, a) for x, a in zip(args, in_avals)]
    outs = compile_jaxpr(closed)(vals)
    results = wrap_results(outs, closed.out_avals, args, vals)
    donated = params.get("donated_invars")
    if donated:
        for x, d in zip(args, donated):
            if d and isinstance(x, ArrayImpl):
                x.delete()
    return results


def run(closed: ClosedJaxpr, args: list[Any]) -> list:
    return _jit_call_impl(args, {"jaxpr": closed})
