"""HLO shapes: an element type, dimensions, an optional layout; or a tuple of shapes.

Input: XLA element type names (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128) and
sizes (c64 is a pair of f32: real part, imaginary part; c128 a pair of f64).
Output: immutable, hashable `Shape` values that print as XLA does (`f32[8,3]`, `pred[]`,
`(f32[3], s32[])`, `f32[8,3]{1,0}` once a layout is set).
Invariants: dimensions are non-negative ints; a layout, when set, is a permutation of
range(rank) listed minor-to-major; tuple shapes have element_type "tuple" and no dims.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np

ELEMENT_TYPES: tuple[str, ...] = (
    "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
    "c64", "c128",
)

_TO_NUMPY: dict[str, str] = {
    "pred": "bool", "s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
}
_FROM_NUMPY: dict[str, str] = {v: k for k, v in _TO_NUMPY.items()}


def numpy_dtype(element_type: str) -> np.dtype:
    """NumPy dtype of an XLA element type; bf16 needs the optional ml_dtypes package."""
    dt = _DTYPES.get(element_type)  # (made once per type: shapes ask for it often)
    if dt is None:
        dt = _DTYPES[element_type] = _make_numpy_dtype(element_type)
    return dt


_DTYPES: dict[str, np.dtype] = {}


def _make_numpy_dtype(element_type: str) -> np.dtype:
    if element_type == "bf16":
        try:
            import ml_dtypes  # optional dependency
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise TypeError("bf16 needs the ml_dtypes package") from e
        return np.dtype(ml_dtypes.bfloat16)
    try:
        return np.dtype(_TO_NUMPY[element_type])
    except KeyError:
        raise TypeError(f"no NumPy dtype for element type {element_type!r}") from None


_FROM_DTYPE: dict[np.dtype, str] = {}  # (dtype.name is Python code in NumPy: slow)


def element_type_from_numpy(dtype: np.dtype | type | str) -> str:
    """XLA element type name of a NumPy dtype (np.float32 -> 'f32')."""
    dt = np.dtype(dtype)
    et = _FROM_DTYPE.get(dt)
    if et is not None:
        return et
    if dt.name == "bfloat16":
        et = "bf16"
    else:
        try:
            et = _FROM_NUMPY[dt.name]
        except KeyError:
            raise TypeError(f"dtype {dt} has no HLO element type") from None
    _FROM_DTYPE[dt] = et
    return et


def is_float(element_type: str) -> bool:
    return element_type in ("f16", "bf16", "f32", "f64")


def is_complex(element_type: str) -> bool:
    return element_type in ("c64", "c128")


def complex_component(element_type: str) -> str:
    """The element type of a complex type's real and imaginary parts (c64 -> f32)."""
    return {"c64": "f32", "c128": "f64"}[element_type]


def is_signed_int(element_type: str) -> bool:
    return element_type in ("s8", "s16", "s32", "s64")


def is_unsigned_int(element_type: str) -> bool:
    return element_type in ("u8", "u16", "u32", "u64")


def is_integral(element_type: str) -> bool:
    return is_signed_int(element_type) or is_unsigned_int(element_type)


def bit_width(element_type: str) -> int:
    if element_type == "pred":
        return 8
    # (bf16: 16, not the "f16" after its "b"; c64/c128: both parts, 64/128)
    return int(element_type.lstrip("bfsuc"))


_ELEMENT_TYPES = frozenset(ELEMENT_TYPES)


class _computed_once:  # noqa: N801 (used as a decorator, like `property`)
    """A read-only property of a Shape computed on first use and kept in the instance
    dict, where later reads find it without a call (passes ask `size` and `is_tuple` of
    the same shapes many times). Shapes are immutable, so the value never goes stale."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


@dataclass(frozen=True, init=False)
class Shape:
    """An array shape (`Shape("f32", (8, 3))`) or a tuple shape (`Shape.tuple_of([...])`)."""

    element_type: str
    dimensions: tuple[int, ...] = ()
    layout: tuple[int, ...] | None = None
    tuple_shapes: tuple[Shape, ...] = ()

    def __init__(self, element_type: str, dimensions: tuple[int, ...] = (),
                 layout: tuple[int, ...] | None = None,
                 tuple_shapes: tuple[Shape, ...] = ()) -> None:
        # (fields written into the instance dict: a compile builds tens of thousands of
        # shapes, and the frozen dataclass's object.__setattr__ per field was most of it)
        d = self.__dict__
        d["element_type"] = element_type
        d["dimensions"] = dims = tuple(map(int, dimensions))
        d["layout"] = None if layout is None else tuple(map(int, layout))
        d["tuple_shapes"] = tuple(tuple_shapes)
        if element_type == "tuple":
            if dims:
                raise ValueError("tuple shapes have no dimensions")
            return
        if element_type not in _ELEMENT_TYPES:
            raise ValueError(f"unknown element type {element_type!r}")
        if dims and min(dims) < 0:
            raise ValueError(f"negative dimension in {dims}")
        layout = d["layout"]
        if layout is not None and sorted(layout) != list(range(len(dims))):
            raise ValueError(f"layout {layout} is not a permutation of the dimensions")

    def __hash__(self) -> int:
        # (computed once: shapes key many dicts; the cached value stays out of pickles,
        # whose process may hash strings differently: __reduce__)
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash(
                (self.element_type, self.dimensions, self.layout, self.tuple_shapes))
        return h

    def __reduce__(self) -> tuple:
        return (Shape, (self.element_type, self.dimensions, self.layout, self.tuple_shapes))

    @staticmethod
    def tuple_of(shapes: list[Shape] | tuple[Shape, ...]) -> Shape:
        return Shape("tuple", (), None, tuple(shapes))

    @staticmethod
    def scalar(element_type: str) -> Shape:
        return Shape(element_type, ())

    @staticmethod
    def from_numpy(x: np.ndarray) -> Shape:
        return Shape(element_type_from_numpy(x.dtype), tuple(x.shape))

    @_computed_once
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    @_computed_once
    def size(self) -> int:
        """Number of elements (1 for a scalar); the sum over leaves for a tuple."""
        if self.is_tuple:
            return sum(s.size for s in self.tuple_shapes)
        return prod(self.dimensions)

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.element_type)

    def with_layout(self, layout: tuple[int, ...] | None) -> Shape:
        if layout is None and self.layout is None:
            return self  # (shapes are immutable: the same value, not built again)
        return Shape(self.element_type, self.dimensions, layout, self.tuple_shapes)

    def without_layout(self) -> Shape:
        if self.layout is None and not self.tuple_shapes:
            return self  # (shape inference asks this of every operand of every op)
        if self.is_tuple:
            return Shape.tuple_of([s.without_layout() for s in self.tuple_shapes])
        return Shape(self.element_type, self.dimensions)

    def with_row_major_layout(self) -> Shape:
        """This shape with the default layout {rank-1,...,0} (on every leaf of a tuple)."""
        if self.is_tuple:
            return Shape.tuple_of([s.with_row_major_layout() for s in self.tuple_shapes])
        return self.with_layout(row_major(self.rank))

    @property
    def is_row_major(self) -> bool:
        """True when no layout is set (row-major is the default) or the layout is it."""
        return self.layout is None or self.layout == row_major(self.rank)

    def with_element_type(self, element_type: str) -> Shape:
        return Shape(element_type, self.dimensions, self.layout)

    def compatible(self, other: Shape) -> bool:
        """Equal up to layout."""
        return self.without_layout() == other.without_layout()

    def __str__(self) -> str:
        text = self.__dict__.get("_text")  # (printed once: printers and keys ask often)
        if text is not None:
            return text
        if self.is_tuple:
            text = "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        else:
            text = f"{self.element_type}[{','.join(map(str, self.dimensions))}]"
            if self.layout is not None and self.dimensions:
                text += "{" + ",".join(map(str, self.layout)) + "}"
        self.__dict__["_text"] = text
        return text

    def __repr__(self) -> str:
        return f"Shape({self})"


# -- layouts (minor-to-major lists of dimension numbers) ----------------------------------------


def row_major(rank: int) -> tuple[int, ...]:
    """The default (C order) layout: the last dimension is minor, {rank-1, ..., 0}."""
    lay = _ROW_MAJOR.get(rank)  # (one tuple per rank: layouts are asked for constantly)
    if lay is None:
        lay = _ROW_MAJOR[rank] = tuple(range(rank - 1, -1, -1))
    return lay


def memory_order(shape: Shape) -> tuple[int, ...]:
    """`shape`'s layout (minor to major), row-major when it has none."""
    return shape.layout if shape.layout is not None else row_major(shape.rank)


_ROW_MAJOR: dict[int, tuple[int, ...]] = {}


def layout_strides(dims: tuple[int, ...], layout: tuple[int, ...] | None) -> tuple[int, ...]:
    """Element stride of each dimension under `layout` (None: row-major): the minor dim
    has stride 1 and each next one the product of the extents of those more minor.
    f32[4,8]{0,1}: strides (1, 4); f32[4,8]{1,0}: strides (8, 1)."""
    lay = row_major(len(dims)) if layout is None else layout
    strides = [0] * len(dims)
    step = 1
    for d in lay:
        strides[d] = step
        step *= dims[d]
    return tuple(strides)


def transpose_operand_layout(perm: tuple[int, ...], layout: tuple[int, ...]) -> tuple[int, ...]:
    """The operand layout under which transpose(operand, perm) with result `layout` moves no
    data. Result dim i is operand dim perm[i], so the result's minor-to-major list maps to
    the operand's through perm: {l0, l1, ...} -> {perm[l0], perm[l1], ...}."""
    return tuple(perm[d] for d in layout)


def transpose_result_layout(perm: tuple[int, ...], operand_layout: tuple[int, ...]
                            ) -> tuple[int, ...]:
    """The inverse of `transpose_operand_layout`: the result layout that makes the
    transpose of an operand laid out as `operand_layout` a bitcast."""
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse[d] for d in operand_layout)
