"""Run a jitted function's jaxpr on concrete arguments (the normal, general call path).

Input: a ClosedJaxpr and the flat concrete arguments of a top-level call. Output: flat
ember.Arrays. The jaxpr is compiled once (trace -> HLO -> passes -> backend, see
ember/compiler.py) and the result cached on the jaxpr object.
Invariants: arguments are converted to the jaxpr's input dtypes; outputs never alias memory
the user can write; donated ember.Arrays are deleted after the call.
Where the backend has a fast runner (CPU; on a module's first call only if the process
already has its trampoline), arguments are made C-contiguous and its fresh, read-only
outputs are wrapped as they are; otherwise (the interpreter, a process's first call)
`wrap_results` copies any result that aliases a user's NumPy array. Repeated calls of
the same signature skip this module through `ember/fastpath.py`, which keeps these same
invariants.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

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


def _c_value(x: Any, aval: Any) -> np.ndarray:
    """`x`'s value in the aval's dtype, C-contiguous (an Array caches its own)."""
    if type(x) is ArrayImpl:
        v = x._c_value()
        if v is not None:
            return v
    v = to_numpy(x, aval)  # raises for a deleted Array
    return v if v.flags.c_contiguous else np.ascontiguousarray(v)


@jit_p.def_call_impl
def _jit_call_impl(args: list, params: dict) -> list:
    closed: ClosedJaxpr = params["jaxpr"]
    compiled = compile_jaxpr(closed, params.get("name", "main"))
    # a first call makes no trampoline for the fast runner: one-shot functions never pay
    runner = compiled.fast_runner(ready_only=not compiled.called)
    compiled.called = True
    if runner is not None:
        vals = [_c_value(x, a) for x, a in zip(args, closed.in_avals)]
        results = [ArrayImpl(o, a, o) for o, a in zip(runner(vals), closed.out_avals)]
    else:
        vals = [to_numpy(x, a) for x, a in zip(args, closed.in_avals)]
        results = wrap_results(compiled(vals), closed.out_avals, args, vals)
    donated = params.get("donated_invars")
    if donated:
        for x, d in zip(args, donated):
            if d and isinstance(x, ArrayImpl):
                x.delete()
    return results


def run(closed: ClosedJaxpr, args: list[Any], name: str = "main") -> list:
    return _jit_call_impl(args, {"jaxpr": closed, "name": name})
