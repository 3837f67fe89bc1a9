"""The `optimization_barrier` primitive: values the compiler may not look through.

Input: any number of arrays. Output: the same arrays. It computes nothing; it stops the
passes from treating what comes after it as the same computation as what comes before
it, which `ember.checkpoint` needs (prevent_cse): the backward pass's recomputation reads
its inputs through a barrier, so common-subexpression elimination cannot merge it with
the forward pass (which would keep every intermediate alive until the backward pass,
undoing the checkpoint). Lowered to HLO `opt-barrier` on a tuple, as XLA has it; the CPU
pipeline removes the barriers after its simplification passes (passes/barrier_removal.py),
so no code is generated for it.
Its JVP puts the primals and the nonzero tangents through barriers of their own (the
tangent one is linear; its transpose is a barrier on the cotangents); vmap keeps axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive

optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)


@optimization_barrier_p.def_abstract_eval
def _barrier_abstract(*args: ShapedArray) -> list[ShapedArray]:
    return list(args)


@optimization_barrier_p.def_impl
def _barrier_impl(*args: np.ndarray) -> list[np.ndarray]:
    return list(args)


def _barrier_lowering(ctx: Any, *args: Any) -> list[Any]:
    if not args:
        return []
    b = ctx.b
    fenced = b.op("opt-barrier", (b.tuple(list(args)),))
    return [b.get_tuple_element(fenced, i) for i in range(len(args))]


optimization_barrier_p.def_lowering(_barrier_lowering)


@optimization_barrier_p.def_jvp
def _barrier_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
    outs = optimization_barrier_p.bind(*primals)
    live = [i for i, t in enumerate(tangents) if not isinstance(t, ad.Zero)]
    fenced = optimization_barrier_p.bind(*[tangents[i] for i in live]) if live else []
    t_out: list[Any] = list(tangents)
    for i, t in zip(live, fenced):
        t_out[i] = t
    return list(outs), t_out


def _barrier_transpose(cts: Sequence[Any], *args: Any) -> list[Any]:
    live = [i for i, c in enumerate(cts) if not isinstance(c, ad.Zero)]
    fenced = optimization_barrier_p.bind(*[cts[i] for i in live]) if live else []
    out: list[Any] = [ad.Zero(a.aval) if ad.is_undefined_primal(a) else None for a in args]
    for i, c in zip(live, fenced):
        out[i] = c
    return out


optimization_barrier_p.is_linear = True  # (as a tangent equation: the identity)
optimization_barrier_p.def_transpose(_barrier_transpose)


@optimization_barrier_p.def_batch
def _barrier_batch(axis: AxisData, args: Sequence[Any], dims: Sequence[Any]
                   ) -> tuple[list, list]:
    return list(optimization_barrier_p.bind(*args)), list(dims)
