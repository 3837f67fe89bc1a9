"""The jaxpr: Ember's first IR, immutable and close to the user's program.

Input: built by the staging trace (core/staging.py). Output: `Jaxpr(constvars, invars,
outvars, eqns)` and `ClosedJaxpr(jaxpr, consts)`, printed by core/jaxpr_printer.py.
Invariants: every Var is bound once (as a constvar, invar or equation output) before use;
Literals are scalars; equations are in a valid topological order; an equation's outvars'
avals are what its primitive's abstract-eval rule gives for its inputs.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.source_info import UNKNOWN, SourceInfo

_var_ids = itertools.count()


class Var:
    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var({self.id}:{self.aval.str_short()})"


# A weakly typed scalar Array made from a Python float of its own dtype (`s * 0.1` with a
# weak float32 `s`: the 0.1 becomes a weak float32 Array before it meets the trace) keeps
# the float's text for its Literal, as JAX prints `0.1:f32[]` there, not the float32
# value's `0.10000000149011612`. Keyed by id, checked by a weak reference (Arrays are
# unhashable); an entry leaves when its Array dies.
_PYTHON_TEXT: dict[int, tuple[weakref.ref, Any]] = {}


def remember_python_text(array: Any, value: Any) -> None:
    """Print `array`, when it becomes a Literal, as the Python scalar `value`."""
    key = id(array)
    _PYTHON_TEXT[key] = (weakref.ref(array, lambda _: _PYTHON_TEXT.pop(key, None)), value)


def python_text(x: Any) -> Any:
    """The Python scalar `x` was made from (remember_python_text), or None."""
    entry = _PYTHON_TEXT.get(id(x))
    return entry[1] if entry is not None and entry[0]() is x else None


class Literal:
    """A scalar constant written inline in the jaxpr, e.g. `2.0:f32[]`.

    `shown` is the value to print when it is not `val`: a Python float passed as an
    argument to a nested jit prints as the user wrote it (`0.1:f32[]`), as JAX prints it,
    while `val` holds it in the aval's dtype.
    """

    __slots__ = ("val", "aval", "shown")

    def __init__(self, val: np.ndarray, aval: ShapedArray, shown: Any = None):
        self.val = val
        self.aval = aval
        self.shown = shown

    def __repr__(self) -> str:
        if self.shown is not None:
            value = self.shown
        else:
            value = self.val.item() if hasattr(self.val, "item") else self.val
        return f"{value!r}:{self.aval.str_short()}"


Atom = Var | Literal


class JaxprEqn:
    __slots__ = ("invars", "outvars", "primitive", "params", "source_info")

    def __init__(self, invars: list[Atom], outvars: list[Var], primitive: Any,
                 params: dict[str, Any], source_info: SourceInfo = UNKNOWN):
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params
        self.source_info = source_info

    def __repr__(self) -> str:
        return f"JaxprEqn({self.primitive.name}, {self.invars} -> {self.outvars})"


class Jaxpr:
    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info")

    def __init__(self, constvars: list[Var], invars: list[Var], outvars: list[Atom],
                 eqns: list[JaxprEqn], debug_info: Any = None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.debug_info = debug_info

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        from ember.core.jaxpr_printer import pp_toplevel
        return pp_toplevel(self)

    __repr__ = __str__


class ClosedJaxpr:
    """A jaxpr with concrete values for its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: list[Any]):
        assert len(jaxpr.constvars) == len(consts)
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[JaxprEqn]:
        return self.jaxpr.eqns

    def __str__(self) -> str:
        from ember.core.jaxpr_printer import pp_toplevel
        return pp_toplevel(self.jaxpr)

    __repr__ = __str__
