"""The `copy` primitive: a value-preserving copy, as JAX's `copy_p`.

Input: one array. Output: an array of the same aval (weak type kept) holding the same
values. JAX stages it for `jnp.array(tracer, dtype)` (copy, then convert), which is what
`jnp.piecewise`'s constant entries print as; Ember emits it there so the jaxprs match.
Arrays are immutable, so lowering it is the identity (no HLO instruction) and its NumPy
rule returns a fresh copy (never a view of a user buffer).
"""

from __future__ import annotations

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.prims import _batching
from ember.prims import _lower as L

copy_p = Primitive("copy")
copy_p.def_lowering(L.identity)


@copy_p.def_abstract_eval
def _copy_abstract(x: ShapedArray) -> ShapedArray:
    return x


@copy_p.def_impl
def _copy_impl(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)

ad.deflinear(copy_p)
copy_p.def_transpose(lambda ct, x: [ct])
_batching.elementwise_rule(copy_p)  # (an elementwise identity)
