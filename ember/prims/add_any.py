"""add_any: the sum of two tangents or cotangents (JAX's `add_any`, ad_util.add_jaxvals_p).

Input: two values of one shape and dtype. Output: their elementwise sum, typed as the
first operand (JAX's rule: no broadcasting, no promotion).
Where it appears: autodiff adds tangents with it (core/ad.py `add_tangents`: the terms of a
JVP rule, a value that fans out to several uses and so receives several cotangents in the
backward pass), so a differentiated program prints `add_any` where JAX's does; user code
and `lax.add` keep `add`. JAX's lax exports no function for it: it is only bound by the
autodiff machinery.
Invariants: it lowers to the same HLO `add` as `add` (and its NumPy rule is the evaluator's
`add`), so compiled code, eager values and the eager cache's direct step are those of `add`.
It is linear in both operands: its JVP is itself on the tangents, its transpose hands the
cotangent to each operand, and under vmap the operands are lined up on one batch axis
(an unmapped one broadcast to the batch size, as JAX's add_batched does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.hlo.evaluator import elementwise as ew
from ember.prims import _lower as L

add_any_p = Primitive("add_any")
add_any_p.hlo_opcode = "add"  # type: ignore[attr-defined]
_ADD = ew.ELEMENTWISE["add"]
# (the evaluator's add: the eager cache's direct step recognizes it, as it does add_p's)
add_any_p.numpy_rule = _ADD  # type: ignore[attr-defined]
add_any_p.def_lowering(L.elementwise("add"))


@add_any_p.def_abstract_eval
def _abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(f"add_any takes two values of one type, got {x.str_short()} and "
                        f"{y.str_short()}")
    return x


@add_any_p.def_impl
def _impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return _ADD(x, y)


def _transpose(ct: Any, x: Any, y: Any) -> list:
    return [ct if ad.is_undefined_primal(v) else None for v in (x, y)]


def _batch(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None]
           ) -> tuple[Any, int | None]:
    x, y = args
    dx, dy = dims
    if dx == dy:  # (both unmapped, or both mapped at one axis)
        return add_any_p.bind(x, y), dx
    if dx is not_mapped:
        return add_any_p.bind(batching.bdim_at(x, dx, axis.size, dy), y), dy
    if dy is not_mapped:
        return add_any_p.bind(x, batching.bdim_at(y, dy, axis.size, dx)), dx
    return add_any_p.bind(batching.moveaxis(x, dx, dy), y), dy


def add_any(x: Any, y: Any) -> Any:
    """x + y for two tangents (or cotangents) of one type."""
    return add_any_p.bind(x, y)


ad.deflinear(add_any_p)
add_any_p.def_transpose(_transpose)
add_any_p.def_batch(_batch)
