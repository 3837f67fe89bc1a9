"""Run a jitted function's jaxpr on concrete arguments.

Input: a ClosedJaxpr and the flat concrete arguments of a top-level call. Output: flat
ember.Arrays. The jaxpr is compiled once (trace -> HLO -> passes -> backend, see
ember/compiler.py) and the result cached on the jaxpr object.
Invariants: arguments are converted to the jaxpr's input dtypes; outputs never alias memory
the user can write; donated ember.Arrays are deleted after the call.
"""

from __future__ import annotations

import weakref
from typing import Any

from ember.array import ArrayImpl
from ember.compiler import CompiledModule
from ember.compiler import compile_jaxpr as _compile
from ember.core.jaxpr import ClosedJaxpr
from ember.core.trace import to_numpy, wrap_results
from ember.prims.call import jit_p

_compiled: weakref.WeakKeyDictionary[ClosedJaxpr, CompiledModule] = weakref.WeakKeyDictionary()


def compile_jaxpr(closed: ClosedJaxpr, name: str = "main") -> CompiledModule:
    """The compiled module of a traced function (compiled on first use, then cached)."""
    compiled = _compiled.get(closed)
    if compiled is None:
        compiled = _compile(closed, name)
        _compiled[closed] = compiled
    return compiled


@jit_p.def_call_impl
def _jit_call_impl(args: list, params: dict) -> list:
    closed: ClosedJaxpr = params["jaxpr"]
    in_avals = closed.in_avals
    vals = [to_numpy(x, a) for x, a in zip(args, in_avals)]
    outs = compile_jaxpr(closed, params.get("name", "main"))(vals)
    results = wrap_results(outs, closed.out_avals, args, vals)
    donated = params.get("donated_invars")
    if donated:
        for x, d in zip(args, donated):
            if d and isinstance(x, ArrayImpl):
                x.delete()
    return results


def run(closed: ClosedJaxpr, args: list[Any], name: str = "main") -> list:
    return _jit_call_impl(args, {"jaxpr": closed, "name": name})
