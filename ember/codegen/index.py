"""Element indices inside a loop body: a multi-dimensional index and/or a linear one.

Input: loop induction variables (i64). Output: whichever form a consumer asks for, computed
on first use at the builder's current position (every use is in the same straight-line
loop body, so the value dominates all of them). Row-major: linear = sum_d i_d * stride_d.
`linear` is always the logical (row-major) element number; `offset(layout)` is the memory
offset of the element in a buffer laid out as `layout` (minor-to-major): the same sum with
the layout's strides (`layout_strides`), equal to `linear` for a row-major buffer.
`ranges` are static bounds the index is known to lie in, [lo, hi) per dimension (the whole
dimension unless the loop that made the index walks less of it: one region of a loop nest
split at a pad's or a concatenate's borders, regions.py); element generators read them to
decide at compile time what a select would decide per element. They must hold for every
value the index takes: a generator may drop a clamp or a read on their word.
"""

from __future__ import annotations

from collections.abc import Sequence

import llvmlite.ir as ir

from ember.codegen.irtypes import i64
from ember.hlo.shape import layout_strides, row_major


class Index:
    def __init__(self, b: ir.IRBuilder, dims: Sequence[int],
                 multi: list[ir.Value] | None = None, linear: ir.Value | None = None,
                 ranges: Sequence[tuple[int, int]] | None = None) -> None:
        self.b = b
        self.dims = tuple(dims)
        self._multi = multi
        self._linear = linear
        if ranges is not None and len(ranges) != len(self.dims):
            raise ValueError(f"ranges {ranges} do not match dims {self.dims}")
        self._ranges = None if ranges is None else tuple(ranges)
        if multi is None and linear is None:
            if self.dims and any(d != 1 for d in self.dims):
                raise ValueError("an index needs a multi or a linear form")
            self._linear = i64(0)

    @property
    def multi(self) -> list[ir.Value]:
        if self._multi is None:
            out: list[ir.Value] = []
            rest = self._linear
            stride = 1
            strides = []
            for d in reversed(self.dims):
                strides.append(stride)
                stride *= d
            strides.reverse()
            for d, s in zip(self.dims, strides):
                if d == 1:
                    out.append(i64(0))
                    continue
                q = self.b.udiv(rest, i64(s)) if s != 1 else rest
                out.append(self.b.urem(q, i64(d)) if s * d != stride else q)
            self._multi = out
        return self._multi

    @property
    def has_multi(self) -> bool:
        """Whether the multi-index is at hand (asking for it otherwise divides)."""
        return self._multi is not None

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:
        """[lo, hi) per dimension that every value of the index lies in."""
        if self._ranges is None:
            return tuple((0, d) for d in self.dims)
        return self._ranges

    @property
    def linear(self) -> ir.Value:
        if self._linear is None:
            assert self._multi is not None
            terms = []
            stride = 1
            for d, i in zip(reversed(self.dims), reversed(self._multi)):
                if d != 1:
                    terms.append(i if stride == 1 else self.b.mul(i, i64(stride)))
                stride *= d
            acc: ir.Value = terms[0] if terms else i64(0)
            for t in terms[1:]:
                acc = self.b.add(acc, t)
            self._linear = acc
        return self._linear

    def offset(self, layout: Sequence[int] | None) -> ir.Value:
        """Memory offset of this element in a buffer laid out as `layout` (None:
        row-major); f32[4,8]{0,1}: offset = i0 + 4 * i1."""
        if layout is None or tuple(layout) == row_major(len(self.dims)):
            return self.linear
        terms = [i if s == 1 else self.b.mul(i, i64(s))
                 for i, s, d in zip(self.multi, layout_strides(self.dims, tuple(layout)),
                                    self.dims) if d != 1]
        acc: ir.Value = terms[0] if terms else i64(0)
        for t in terms[1:]:
            acc = self.b.add(acc, t)
        return acc

    @staticmethod
    def scalar(b: ir.IRBuilder) -> Index:
        return Index(b, (), linear=i64(0))
