"""The `name` primitive: `checkpoint_name(x, name)`, a value tagged for checkpoint policies.

Input: one array and a string `name`. Output: the same array (same aval). It does nothing
to values; it exists so that a policy such as `save_only_these_names("h")` can see, among
the equations `ember.checkpoint` linearizes, which ones produce the values the user named
(`policy(name_p, aval, name="h")`). Its tangent is the operand's tangent, not named (only
primal values are saved or recomputed); lowering and vmap pass the value through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.prims import _lower as L

name_p = Primitive("name")
name_p.def_lowering(L.identity)


@name_p.def_abstract_eval
def _name_abstract(x: ShapedArray, *, name: str) -> ShapedArray:
    return x


@name_p.def_impl
def _name_impl(x: np.ndarray, *, name: str) -> np.ndarray:
    return x


@name_p.def_jvp
def _name_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, name: str
              ) -> tuple[Any, Any]:
    return name_p.bind(primals[0], name=name), tangents[0]


@name_p.def_batch
def _name_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[Any], *, name: str
                ) -> tuple[Any, Any]:
    return name_p.bind(args[0], name=name), dims[0]
