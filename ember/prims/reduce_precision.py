"""reduce_precision: round floats to a narrower format's precision and range, keeping the
type (as `jax.lax.reduce_precision`).

Input: a float array (f16, bf16, f32, f64); params exponent_bits >= 1, mantissa_bits >= 0.
Output: the same shape, dtype and weak type, each value as the format with that many
exponent and mantissa bits would hold it: the mantissa rounded to nearest even, values
beyond the format's largest finite exponent +-inf, values at or below its smallest normal
exponent +-0 (no subnormals, as XLA), NaN kept. A format at least as wide as the input's
changes nothing.
HLO: XLA's `reduce-precision` opcode (its semantics: hlo/evaluator/elementwise.py, which is
also the eager rule; CPU code: codegen/convert.py).
Autodiff and batching as JAX's: treated as linear (the tangent and cotangent are rounded
the same way), elementwise under vmap.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.hlo.evaluator import elementwise as ew
from ember.prims import _batching
from ember.prims import _rules as R

reduce_precision_p = Primitive("reduce_precision")
reduce_precision_p.hlo_opcode = "reduce-precision"  # type: ignore[attr-defined]


def check_bits(exponent_bits: Any, mantissa_bits: Any) -> tuple[int, int]:
    """The two widths as ints, with JAX's errors for non-integers and bad values."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got "
                         f"{exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    return exponent_bits, mantissa_bits


@reduce_precision_p.def_abstract_eval
def _abstract(x: ShapedArray, *, exponent_bits: int, mantissa_bits: int) -> ShapedArray:
    R.check_dtype_kinds("reduce_precision", x, "f")
    check_bits(exponent_bits, mantissa_bits)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


@reduce_precision_p.def_impl
def _impl(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    return ew.reduce_precision(np.asarray(x), exponent_bits, mantissa_bits)


@reduce_precision_p.def_lowering
def _lowering(ctx: Any, x: Any, *, exponent_bits: int, mantissa_bits: int) -> Any:
    return ctx.b.reduce_precision(x, exponent_bits, mantissa_bits)


ad.deflinear(reduce_precision_p)
reduce_precision_p.def_transpose(
    lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])
_batching.elementwise_rule(reduce_precision_p)

__all__ = ["check_bits", "reduce_precision_p"]
