"""NumPy-style argument handling for ember.numpy: dtype promotion and rank promotion.

Input: user arguments (arrays, tracers, NumPy values, Python scalars). Output: operands with
one common dtype (JAX's lattice, weak types included) and equal rank (lower-rank, non-scalar
operands get leading size-1 dimensions through broadcast_in_dim; scalars stay scalars, and
size-1 dimensions are left for the primitive to broadcast, as JAX does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember import lax
from ember.config import config
from ember.core import dtypes
from ember.core.trace import Tracer, get_aval

# Helpers for the other ember.numpy modules; nothing here is public jnp API.
__all__: list[str] = []


def is_array(x: Any) -> bool:
    """An ember.Array or a tracer (as opposed to a NumPy value or Python scalar)."""
    return isinstance(x, Tracer) or hasattr(x, "_ember_aval")


def ensure_array(x: Any) -> Any:
    """x as an ember value: Arrays and tracers pass through; NumPy values and Python scalars
    become Arrays of their canonical dtype (Python scalars stay weakly typed)."""
    if is_array(x):
        return x
    check_arraylike("asarray", x)
    aval = get_aval(x)
    return lax.convert_element_type(x, aval.dtype, aval.weak_type)


def check_arraylike(fname: str, *args: Any) -> None:
    """JAX rejects lists and tuples where arrays are expected (`jnp.sum([1, 2])`)."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"{fname} requires ndarray or scalar arguments, got "
                            f"{type(a).__name__} at position {i}.")


def result_type_of(*args: Any) -> tuple[np.dtype, bool]:
    return dtypes.promote(*[(a.dtype, a.weak_type) for a in map(get_aval, args)])


def promote_dtypes(*args: Any) -> list[Any]:
    """Cast every argument to the join of their (dtype, weak_type) in JAX's lattice."""
    if len(args) < 2:
        return [ensure_array(a) for a in args]
    dtype, weak = result_type_of(*args)
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def _to_inexact(dtype: np.dtype) -> np.dtype:
    if dtypes.kind(dtype) in "fc":
        return dtype
    return dtypes.default_float()


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    dtype, weak = result_type_of(*args)
    dtype = _to_inexact(dtype)
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    dtype, weak = result_type_of(*args)
    if dtypes.kind(dtype) == "b":
        dtype = dtypes.default_int()
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_shapes(fname: str, *args: Any) -> list[Any]:
    if len(args) < 2:
        return list(args)
    ranks = [get_aval(a).ndim for a in args]
    rank = max(ranks)
    if all(r == rank or r == 0 for r in ranks):
        return list(args)
    mode = config.jax_numpy_rank_promotion
    if mode == "raise":
        raise ValueError(f"Operands could not be broadcast together for {fname} with shapes "
                         + " ".join(str(get_aval(a).shape) for a in args)
                         + " and with the config option jax_numpy_rank_promotion='raise'.")
    return [lax.broadcast_to_rank(a, rank) if 0 < r < rank else a for a, r in zip(args, ranks)]


def _already_promoted(args: tuple[Any, ...]) -> bool:
    """Whether promotion would hand `args` back unchanged, decided cheaply for the common
    eager case: Arrays or tracers of one strong, canonical dtype whose ranks are equal
    (or scalar). Weak operands are left to the full path: their join is the default type,
    which depends on x64."""
    first = None
    rank = 0
    for a in args:
        if not is_array(a):
            return False
        aval = get_aval(a)
        if aval.weak_type:
            return False
        if first is None:
            first = aval.dtype
            if dtypes.canonicalize(first) != first:
                return False
        elif aval.dtype != first:
            return False
        if aval.ndim and rank and aval.ndim != rank:
            return False
        rank = rank or aval.ndim
    return first is not None


def promote_args(fname: str, *args: Any) -> list[Any]:
    if _already_promoted(args):
        return list(args)
    check_arraylike(fname, *args)
    return promote_shapes(fname, *promote_dtypes(*args))


def promote_args_inexact(fname: str, *args: Any) -> list[Any]:
    check_arraylike(fname, *args)
    return promote_shapes(fname, *promote_dtypes_inexact(*args))


def promote_args_numeric(fname: str, *args: Any) -> list[Any]:
    check_arraylike(fname, *args)
    return promote_shapes(fname, *promote_dtypes_numeric(*args))
