"""Abstract values: what a tracer knows about an array (shape, dtype, weak type).

Input: shapes and dtypes. Output: `ShapedArray`, hashable, used as jit cache keys and as
the types printed in jaxprs (`f32[3,4]`; weak types print like strong ones, as in JAX).
Invariant: `dtype` is always canonical (see dtypes.canonicalize); `shape` a tuple of ints.
"""

from __future__ import annotations

import math

import numpy as np

from ember.core import dtypes


class ShapedArray:
    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool = False):
        self.shape = tuple(map(int, shape))
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self) -> ShapedArray:
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self) -> str:
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    __str__ = str_short
