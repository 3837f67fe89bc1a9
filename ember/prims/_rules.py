"""Shared shape, dtype and weak-type rules for primitive definitions.

Input: the operands' ShapedArrays. Output: the result shape or dtype, or a TypeError worded
as JAX 0.10.2 words it, so a user can search for the message.

- `broadcasting_shape`: JAX's rule for n-ary elementwise primitives. Rank-0 operands are
  left out (they broadcast to anything); the rest must have one rank, and in each dimension
  every size is equal or 1 (the result takes the size that is not 1).
- Accepted dtypes are JAX's type sets, written here as strings of NumPy kind letters
  (`"iuf"` = integer or floating). Each set prints as JAX prints its abstract types
  (`integer, floating, complexfloating`); unary primitives say "does not accept dtype X",
  n-ary ones add "at position i", and both check kinds before checking that dtypes agree.
- Weak types: a result is weak only when every operand is (`all_weak`).
"""

from __future__ import annotations

import numpy as np

from ember.core import dtypes
from ember.core.aval import ShapedArray

# JAX's dtype sets (lax.py's _float, _int, _num, ...) as kind letters.
FLOAT = "f"               # {floating}
FLOAT_OR_COMPLEX = "fc"   # {floating, complexfloating}
INT = "iu"                # {integer}
SIGNED = "i"
UNSIGNED = "u"
BOOL = "b"
INT_OR_FLOAT = "iuf"      # {integer, floating}: rem
NUMBER = "iufc"           # _num = {integer, floating, complexfloating}
SIGNED_NUMBER = "ifc"     # {signedinteger, floating, complexfloating}: abs
INT_OR_BOOL = "iub"       # _bool_or_int
ORDERED = "iufb"          # _ordered: lt, le, gt, ge
ANY = "iufcb"             # _any

# How JAX prints each abstract type (`t.__name__`), in the order the messages list them.
_TYPE_NAMES: list[tuple[str, str]] = [
    ("iu", "integer"), ("i", "signedinteger"), ("u", "unsignedinteger"), ("f", "floating"),
    ("c", "complexfloating"), ("b", "bool"),
]


def type_names(kinds: str) -> str:
    """`"iufc"` -> `"integer, floating, complexfloating"` (JAX's spelling of the set)."""
    names = []
    left = set(kinds)
    for letters, name in _TYPE_NAMES:
        if set(letters) <= left:
            names.append(name)
            left -= set(letters)
    return ", ".join(names)


def broadcasting_shape(name: str, *avals: ShapedArray) -> tuple[int, ...]:
    shapes = [a.shape for a in avals if a.shape != ()]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{ranks}")
    out = []
    for dims in zip(*shapes):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            + ", ".join(str(s) for s in shapes) + ".")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# The ember.numpy function that does what lax.<primitive> does after promoting its inputs,
# named in the mixed-dtype error as JAX's tip (tests/ops/test_lax_errors.py checks that
# each exists).
JNP_EQUIVALENTS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder",
    "max": "maximum", "min": "minimum", "atan2": "arctan2",
    "nextafter": "nextafter", "and": "bitwise_and", "or": "bitwise_or",
    "xor": "bitwise_xor", "shift_left": "left_shift", "shift_right_arithmetic": "right_shift",
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
    "ge": "greater_equal", "select_n": "where", "clamp": "clip",
    "concatenate": "concatenate",
}


def check_same_dtypes(name: str, *avals: ShapedArray) -> np.dtype:
    """JAX's error for operands of different dtypes (lax never promotes), with its tip
    naming the jnp function that does."""
    dtypes = {a.dtype for a in avals}
    if len(dtypes) > 1:
        msg = (f"lax.{name} requires arguments to have the same dtypes, got "
               + ", ".join(a.dtype.name for a in avals) + ".")
        if name in JNP_EQUIVALENTS:
            msg += (f" (Tip: jnp.{JNP_EQUIVALENTS[name]} is a similar function that does "
                    "automatic type promotion on inputs).")
        raise TypeError(msg)
    return avals[0].dtype


def check_dtype_kinds(name: str, aval: ShapedArray, kinds: str,
                      position: int | None = None) -> None:
    """Raise JAX's TypeError unless aval's dtype is in the set `kinds`.

    `position` is given for n-ary primitives, whose message names the operand position.
    """
    if dtypes.kind(aval.dtype) in kinds:
        return
    accepted = type_names(kinds)
    if position is None:
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are "
                        f"subtypes of {accepted}.")
    raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position {position}. "
                    f"Accepted dtypes at position {position} are subtypes of {accepted}.")


def check_nary(name: str, avals: tuple[ShapedArray, ...], kinds: str) -> np.dtype:
    """JAX's naryop dtype rule: every operand's kind, then that all dtypes agree."""
    if len(avals) == 1:
        check_dtype_kinds(name, avals[0], kinds)
    else:
        for i, a in enumerate(avals):
            check_dtype_kinds(name, a, kinds, i)
    return check_same_dtypes(name, *avals)


def all_weak(*avals: ShapedArray) -> bool:
    return all(a.weak_type for a in avals)
