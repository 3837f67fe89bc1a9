"""Random HLO programs of the ops whose borders split a loop nest (pad with negative and
interior padding, concatenate, dynamic-update-slice and dynamic-slice with constant starts,
clamped ones included) mixed with the index maps between them (strided slice, reverse,
transpose, 5-point-style stencils of shifted slices) and elementwise ops, over ranks 1-3,
odd sizes and several dtypes. Input: a NumPy Generator. Output: (module, arguments)."""

from __future__ import annotations

import numpy as np
from codegen_util import edge_array

from ember.hlo import Builder, Shape
from ember.hlo.ir import Instruction, Module

DTYPES = ["f32", "f64", "s32", "u8", "pred", "f16", "s64", "c64"]
SIZES = [1, 2, 3, 5, 7, 8, 16, 17, 33]
MAX_DIM = 40


def _double(b: Builder, v: Instruction) -> Instruction:
    """An elementwise op every dtype has (so the program computes, not only moves)."""
    return b.not_(v) if v.shape.element_type == "pred" else b.add(v, v)


def _pad_value(b: Builder, et: str, rng: np.random.Generator) -> Instruction:
    if et == "pred":
        return b.scalar(bool(rng.integers(2)), et)
    return b.scalar(int(rng.integers(1, 9)), et)


def _pad(b: Builder, v: Instruction, rng: np.random.Generator,
         dims_to_pad: list[int] | None = None) -> Instruction:
    cfg = []
    for d, n in enumerate(v.shape.dimensions):
        if dims_to_pad is not None and d not in dims_to_pad:
            cfg.append((0, 0, 0))
            continue
        for _ in range(20):
            lo, hi = (int(t) for t in rng.integers(-2, 4, 2))
            interior = int(rng.choice([0, 0, 0, 1, 2]))
            out = lo + hi + n + max(n - 1, 0) * interior
            if 1 <= out <= MAX_DIM:
                break
        else:
            lo, hi, interior = 1, 1, 0
        cfg.append((lo, hi, interior))
    return b.pad(v, _pad_value(b, v.shape.element_type, rng), cfg)


def _slice(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    starts, limits, strides = [], [], []
    for n in v.shape.dimensions:
        s = int(rng.integers(0, n))
        e = int(rng.integers(s + 1, n + 1))
        starts.append(s)
        limits.append(e)
        strides.append(int(rng.choice([1, 1, 2, 3])))
    return b.slice(v, starts, limits, strides)


def _reverse(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    rank = v.shape.rank
    dims = [d for d in range(rank) if rng.integers(2)] or [int(rng.integers(rank))]
    return b.reverse(v, dims)


def _transpose(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    return b.transpose(v, [int(p) for p in rng.permutation(v.shape.rank)])


def _mix(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    """v combined with a reversed copy of itself (two reads at different indices)."""
    r = _reverse(b, v, rng)
    if v.shape.element_type == "pred":
        return b.xor(v, r)
    return b.maximum(v, r) if v.shape.element_type != "c64" else b.add(v, r)


def _concatenate(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    d = int(rng.integers(v.shape.rank))
    n = v.shape.dimensions[d]
    pieces = [v, _double(b, v), _pad(b, v, rng, [d])]
    lo = int(rng.integers(0, n))
    hi = int(rng.integers(lo + 1, n + 1))
    starts = [0] * v.shape.rank
    limits = list(v.shape.dimensions)
    starts[d], limits[d] = lo, hi
    pieces.append(b.slice(_double(b, v), starts, limits))
    order = rng.permutation(len(pieces))[:int(rng.integers(2, 5))]
    chosen = [pieces[k] for k in order]
    if sum(p.shape.dimensions[d] for p in chosen) > MAX_DIM:
        chosen = chosen[:2]
    return b.concatenate(chosen, d)


def _starts(b: Builder, dims: tuple[int, ...], rng: np.random.Generator) -> list[Instruction]:
    """Constant starts, some beyond the range (XLA clamps them)."""
    return [b.scalar(int(rng.integers(-2, n + 3)), "s32") for n in dims]


def _update(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    sizes = [int(rng.integers(1, n + 1)) for n in v.shape.dimensions]
    upd = _double(b, b.slice(_reverse(b, v, rng), [0] * len(sizes), sizes))
    return b.dynamic_update_slice(v, upd, _starts(b, v.shape.dimensions, rng))


def _dynamic_slice(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    sizes = [int(rng.integers(1, n + 1)) for n in v.shape.dimensions]
    return b.dynamic_slice(v, _starts(b, v.shape.dimensions, rng), sizes)


def _stencil(b: Builder, v: Instruction, rng: np.random.Generator) -> Instruction:
    """Neighbours summed along every dimension at least 3 long, padded back to v's shape."""
    dims = v.shape.dimensions
    inner = [d for d, n in enumerate(dims) if n >= 3]
    if not inner:
        return _pad(b, v, rng)

    def shifted(shift: dict[int, int]) -> Instruction:
        starts = [1 + shift.get(d, 0) if d in inner else 0 for d in range(len(dims))]
        limits = [n - 1 + shift.get(d, 0) if d in inner else n for d, n in enumerate(dims)]
        return b.slice(v, starts, limits)

    acc = shifted({})
    for d in inner:
        for s in (-1, 1):
            nb = shifted({d: s})
            acc = b.or_(acc, nb) if v.shape.element_type == "pred" else b.add(acc, nb)
    cfg = [(1, 1, 0) if d in inner else (0, 0, 0) for d in range(len(dims))]
    return b.pad(acc, _pad_value(b, v.shape.element_type, rng), cfg)


OPS = [_pad, _pad, _stencil, _concatenate, _update, _dynamic_slice, _slice, _reverse, _mix,
       _transpose]


def random_program(rng: np.random.Generator, min_outer: int = 1
                   ) -> tuple[Module, list[np.ndarray]]:
    rank = int(rng.integers(1, 4))
    sizes = SIZES if rank < 3 else SIZES[:6]
    dims = [int(rng.choice(sizes)) for _ in range(rank)]
    dims[0] = max(dims[0], min_outer)
    et = DTYPES[int(rng.integers(len(DTYPES)))]
    b = Builder("regions")
    x = b.parameter(Shape(et, tuple(dims)))
    v = x
    for _ in range(int(rng.integers(2, 5))):
        op = OPS[int(rng.integers(len(OPS)))]
        if op is _transpose and v.shape.rank < 2:
            op = _mix
        v = op(b, v, rng)
    v = _mix(b, v, rng)  # the root computes
    return b.build(v), [edge_array(Shape(et, ()).dtype, tuple(dims), seed=int(rng.integers(99)))]
