"""Lowering-rule makers shared by the primitive families (see ember/lowering.py).

Each maker returns a rule `rule(ctx, *operands, **params) -> Instruction(s)`; a primitive
file attaches one with `prim.def_lowering(...)` beside the primitive's other rules.
Rules make the jaxpr's implicit broadcasts explicit (`ctx.elementwise_operands`), since HLO
elementwise ops take operands of exactly the result shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.hlo.builder import Builder
from ember.hlo.ir import Computation, Instruction
from ember.hlo.shape import Shape, element_type_from_numpy

Rule = Callable[..., Any]


def et(dtype: Any) -> str:
    """The HLO element type of a NumPy dtype (f32, s32, pred, ...)."""
    return element_type_from_numpy(np.dtype(dtype))


def elementwise(opcode: str) -> Rule:
    """`opcode` applied to the operands, broadcast to the result shape."""
    def rule(ctx: Any, *xs: Instruction, **params: Any) -> Instruction:
        return ctx.b.op(opcode, ctx.elementwise_operands(*xs))
    return rule


def compare(direction: str) -> Rule:
    def rule(ctx: Any, x: Instruction, y: Instruction) -> Instruction:
        x, y = ctx.elementwise_operands(x, y)
        return ctx.b.compare(x, y, direction)
    return rule


def identity(ctx: Any, x: Instruction, **params: Any) -> Instruction:
    return x


def scalar_const(ctx: Any, value: Any, dtype: Any) -> Instruction:
    return ctx.b.constant(np.asarray(value, dtype=dtype))


def full_like(ctx: Any, value: Any, aval: Any) -> Instruction:
    """A broadcast of a scalar constant to `aval`'s shape (never a large literal)."""
    c = scalar_const(ctx, value, aval.dtype)
    return c if not aval.shape else ctx.b.broadcast(c, aval.shape, ())


def reducer(opcode: str, init: Callable[[np.dtype], Any]) -> Rule:
    """A reduce over `axes` with a scalar `opcode` computation and identity `init(dtype)`."""
    def rule(ctx: Any, x: Instruction, *, axes: tuple[int, ...], **params: Any) -> Instruction:
        dtype = ctx.avals_in[0].dtype
        comp = Builder.scalar_computation(opcode, et(dtype))
        return ctx.b.reduce(x, scalar_const(ctx, init(dtype), dtype), axes, comp)
    return rule


def arg_reducer(direction: str) -> Rule:
    """argmax (direction GT) / argmin (LT) as a variadic reduce over (value, index).

    The combiner keeps the left pair unless the right value is strictly better, or the
    right value is NaN and the left is not, or the values tie and the right index is
    smaller: so the first extremum (and the first NaN) wins, in any reduction order.
    """
    def rule(ctx: Any, x: Instruction, *, axes: tuple[int, ...], index_dtype: Any
             ) -> Instruction:
        aval = ctx.avals_in[0]
        axis = axes[0]
        vt, it = et(aval.dtype), et(index_dtype)
        idx = ctx.b.iota(Shape(it, aval.shape), axis)
        comp = _arg_combiner(vt, it, direction, dtypes.kind(aval.dtype) == "f")
        init_v = scalar_const(ctx, _worst(aval.dtype, direction), aval.dtype)
        init_i = scalar_const(ctx, 0, index_dtype)
        both = ctx.b.reduce([x, idx], [init_v, init_i], axes, comp)
        return ctx.b.get_tuple_element(both, 1)
    return rule


def _worst(dtype: np.dtype, direction: str) -> Any:
    if dtypes.kind(dtype) == "f":
        return -np.inf if direction == "GT" else np.inf
    if dtypes.kind(dtype) == "b":
        return direction != "GT"
    info = np.iinfo(dtype)
    return info.min if direction == "GT" else info.max


def _arg_combiner(vt: str, it: str, direction: str, is_float: bool) -> Computation:
    sb = Builder(f"arg{'max' if direction == 'GT' else 'min'}_{vt}")
    sv, si = Shape(vt, ()), Shape(it, ())
    av, ai = sb.parameter(sv, "a_value"), sb.parameter(si, "a_index")
    bv, bi = sb.parameter(sv, "b_value"), sb.parameter(si, "b_index")
    better = sb.compare(bv, av, direction)
    tie = sb.and_(sb.compare(bv, av, "EQ"), sb.compare(bi, ai, "LT"))
    take_b = sb.or_(better, tie)
    if is_float:
        a_nan = sb.compare(av, av, "NE")
        b_nan = sb.compare(bv, bv, "NE")
        # NaN beats numbers; between two NaNs the smaller index wins.
        nan_rule = sb.or_(sb.and_(b_nan, sb.not_(a_nan)),
                          sb.and_(sb.and_(b_nan, a_nan), sb.compare(bi, ai, "LT")))
        take_b = sb.select(a_nan, nan_rule, sb.or_(take_b, b_nan))
    value = sb.select(take_b, bv, av)
    index = sb.select(take_b, bi, ai)
    return sb.build_computation(sb.tuple([value, index]))
