"""lax products: dot_general, dot, batch_matmul, and the Precision enum.

Input: arrays of one dtype (weakly typed operands take the other's dtype, as everywhere in
lax). Output: the `dot_general` primitive's result (see prims/dot.py for the shape rule:
batch dims, then lhs free dims, then rhs free dims). `precision` is accepted for JAX
compatibility and recorded in the equation, but the CPU computes at full precision anyway.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from ember.config import config
from ember.core import dtypes
from ember.lax._base import aval_of, to_common_dtype
from ember.prims.dot import dot_general_p

DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]


class Precision(enum.Enum):
    """XLA's operand precision for products; every value computes in full precision here."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:  # (how a jaxpr prints the pair: `Precision.HIGHEST`, as JAX)
        return f"Precision.{self.name}"


def _canonical_precision(precision: Any) -> Any:
    """None, or a pair of Precision values (JAX's canonical form), from the accepted forms:
    None, a Precision, a string name ('highest', 'float32', ...), or a pair of those.

    None takes `jax_default_matmul_precision` (`ember.default_matmul_precision`) when it is
    set, as in JAX; its algorithm preset names raise NotImplementedError (no
    DotAlgorithmPreset in Ember)."""
    if precision is None:
        default = config.jax_default_matmul_precision
        if default is None:
            return None
        if default not in _LEGACY_NAMES:
            raise NotImplementedError(
                f"jax_default_matmul_precision={default!r}: dot algorithm presets are not "
                f"implemented in Ember; use one of {list(_LEGACY_NAMES)} or None.")
        precision = default
    names = {"default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
             "high": Precision.HIGH, "tensorfloat32": Precision.HIGH,
             "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}

    def one(p: Any) -> Precision:
        if isinstance(p, Precision):
            return p
        if isinstance(p, str) and p.lower() in names:
            return names[p.lower()]
        raise ValueError(f"precision argument must be None, a string in {sorted(names)}, a "
                         f"lax.Precision value or a tuple of two lax.Precision values; "
                         f"got {p!r}.")

    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"precision must be a pair, got {precision!r}")
        return (one(precision[0]), one(precision[1]))
    p = one(precision)
    return (p, p)


_LEGACY_NAMES = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32")


def _dims(ds: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(int(d) % ndim if ndim and -ndim <= int(d) < 0 else int(d) for d in ds)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: DotDimensionNumbers,
                precision: Any = None, preferred_element_type: Any = None,
                out_sharding: Any = None) -> Any:
    """General tensor contraction: sum over the contracting dims, batch over batch dims."""
    lhs, rhs = to_common_dtype(lhs, rhs)
    ln, rn = aval_of(lhs).ndim, aval_of(rhs).ndim
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("dot_general dimension_numbers must be "
                        "((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), got "
                        f"{dimension_numbers!r}") from None
    dn = ((_dims(lc, ln), _dims(rc, rn)), (_dims(lb, ln), _dims(rb, rn)))
    pet = None if preferred_element_type is None else dtypes.canonicalize(
        preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                              precision=_canonical_precision(precision),
                              preferred_element_type=pet, out_sharding=None)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """Vector/vector, matrix/vector and matrix/matrix products: contracts lhs's last
    dimension with rhs's first."""
    ln, rn = aval_of(lhs).ndim, aval_of(rhs).ndim
    if not (1 <= ln <= 2 and 1 <= rn <= 2):
        raise TypeError(f"Incompatible shapes for dot: got {aval_of(lhs).shape} and "
                        f"{aval_of(rhs).shape}.")
    return dot_general(lhs, rhs, (((ln - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix product of arrays of equal rank >= 2: (..., m, k) @ (..., k, n)."""
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim < 2 or la.ndim != ra.ndim:
        raise ValueError(f"batch_matmul requires arguments of equal rank >= 2, got "
                         f"{la.shape} and {ra.shape}")
    if la.shape[:-2] != ra.shape[:-2]:
        raise ValueError(f"batch_matmul requires equal batch dimensions, got {la.shape} and "
                         f"{ra.shape}")
    batch = tuple(range(la.ndim - 2))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)),
                       precision)


__all__ = ["dot_general", "dot", "batch_matmul", "DotDimensionNumbers", "Precision"]
