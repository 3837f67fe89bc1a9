"""Shared shape and dtype rules for primitive definitions.

`broadcasting_shape` is JAX's rule for n-ary elementwise primitives: operands have equal
rank (rank-0 operands excepted, which broadcast) and each dimension is equal or 1.
`check_same_dtypes` and `check_dtype_kinds` raise JAX-style TypeErrors.
"""

from __future__ import annotations

import numpy as np

from ember.core.aval import ShapedArray

FLOAT = "f"
INT = "iu"
SIGNED = "i"
UNSIGNED = "u"
BOOL = "b"
NUMBER = "iuf"
INT_OR_BOOL = "iub"
ANY = "iufb"

_KIND_NAMES = {"f": "floating", "i": "signedinteger", "u": "unsignedinteger", "b": "bool"}


def broadcasting_shape(name: str, *avals: ShapedArray) -> tuple[int, ...]:
    shapes = [a.shape for a in avals if a.shape != ()]
    if not shapes:
        return ()
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise TypeError(f"{name}: arrays must have same number of dimensions, got "
                        + ", ".join(str(a.shape) for a in avals) + ".")
    out = []
    for dims in zip(*shapes):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            + ", ".join(str(a.shape) for a in avals) + ".")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_same_dtypes(name: str, *avals: ShapedArray) -> np.dtype:
    dtypes = {a.dtype for a in avals}
    if len(dtypes) > 1:
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        + ", ".join(a.dtype.name for a in avals) + ".")
    return avals[0].dtype


def check_dtype_kinds(name: str, aval: ShapedArray, kinds: str) -> None:
    if aval.dtype.kind not in kinds:
        accepted = ", ".join(_KIND_NAMES[k] for k in kinds if k in _KIND_NAMES)
        raise TypeError(f"{name} does not accept dtype {aval.dtype.name}. Accepted dtypes are "
                        f"subtypes of {accepted}.")


def all_weak(*avals: ShapedArray) -> bool:
    return all(a.weak_type for a in avals)
