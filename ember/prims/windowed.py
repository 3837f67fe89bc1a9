"""Windowed reductions (pooling): reduce_window_sum, reduce_window_max, reduce_window_min.

Input: one operand; params as JAX 0.10.2 names them:
    reduce_window_max[window_dimensions=(2, 2) window_strides=(2, 2)
                      padding=((0, 0), (0, 0)) base_dilation=(1, 1) window_dilation=(1, 1)]
Output: per window position, the sum / maximum / minimum of the window's elements of the
operand dilated by base_dilation and padded (negative pads crop), windows window_strides
apart, taps window_dilation apart (hlo/window.py has the arithmetic); padding and holes
hold the reduction's identity (0, the lowest and the highest value of the dtype). Lowered
to HLO `reduce-window` with a scalar add/maximum/minimum computation; the NumPy rule is the
evaluator's (hlo/evaluator/windows.py).
Rules: sum is linear; its transpose is another windowed sum of the cotangent (the
cotangent dilated by the strides, windows stepping by the base dilation, the padding
mirrored). max/min's JVP gathers each window's tangent at the window's first extremum:
the operand's and the tangent's window "patches" (one strided slice per tap, stacked on a
last axis), the argmax/argmin over the taps, and a select of the tangent patch there; all
linear in the tangent, so reverse mode follows. vmap gives the batch axis a window of 1.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.builder import Builder
from ember.hlo.evaluator.elementwise import ELEMENTWISE
from ember.hlo.evaluator.windows import reduce_window as np_reduce_window
from ember.hlo.window import dilated, make_window, window_output_size
from ember.prims import _ad
from ember.prims import _lower as L

_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
           "window_dilation")


def _window(p: dict) -> tuple:
    return make_window(p["window_dimensions"], p["window_strides"], p["padding"],
                       p["base_dilation"], p["window_dilation"])


def _identity(opcode: str, dtype: np.dtype) -> Any:
    if opcode == "add":
        return np.zeros((), dtype)[()]
    return L._worst(np.dtype(dtype), "GT" if opcode == "maximum" else "LT")


def _define(name: str, opcode: str) -> Primitive:
    prim = Primitive(name)
    prim.hlo_opcode = "reduce-window"  # type: ignore[attr-defined]

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, **p: Any) -> ShapedArray:
        for key in _PARAMS:
            if len(p[key]) != x.ndim:
                raise TypeError(f"reduce_window {key} must have the same length as the "
                                f"operand's rank {x.ndim}, got {p[key]}.")
        if any(d < 0 for d in p["window_dimensions"]):
            raise TypeError("reduce_window window_dimensions must be nonnegative, got "
                            f"{p['window_dimensions']}.")
        for key in ("window_strides", "base_dilation", "window_dilation"):
            if any(v < 1 for v in p[key]):
                raise TypeError(f"reduce_window {key} must be positive, got {p[key]}.")
        w = _window(p)
        for n, wd in zip(x.shape, w):
            if dilated(n, wd.lhs_dilate) + wd.pad_lo + wd.pad_hi < 0:
                raise ValueError(f"reduce_window padding {p['padding']} crops more than the "
                                 f"operand of shape {x.shape} holds.")
        return ShapedArray(tuple(window_output_size(n, wd) for n, wd in zip(x.shape, w)),
                           x.dtype, x.weak_type)

    @prim.def_impl
    def _impl(x: np.ndarray, **p: Any) -> np.ndarray:
        x = np.asarray(x)
        return np_reduce_window(x, np.asarray(_identity(opcode, x.dtype), x.dtype),
                                _window(p), ELEMENTWISE[opcode])

    @prim.def_lowering
    def _lowering(ctx: Any, x: Any, **p: Any) -> Any:
        dtype = ctx.avals_in[0].dtype
        comp = Builder.scalar_computation(opcode, L.et(dtype))
        init = L.scalar_const(ctx, _identity(opcode, dtype), dtype)
        return ctx.b.op("reduce-window", (x, init), {"window": _window(p)}, called=[comp])

    def _batch(axis: AxisData, args: list, dims: list, **p: Any) -> tuple[Any, int]:
        (x,), (bd,) = args, dims
        q = {k: list(p[k]) for k in _PARAMS}
        for key, unit in (("window_dimensions", 1), ("window_strides", 1),
                          ("padding", (0, 0)), ("base_dilation", 1), ("window_dilation", 1)):
            q[key].insert(bd, unit)
        return prim.bind(x, **{k: tuple(v) for k, v in q.items()}), bd

    prim.def_batch(_batch)
    return prim


reduce_window_sum_p = _define("reduce_window_sum", "add")
reduce_window_max_p = _define("reduce_window_max", "maximum")
reduce_window_min_p = _define("reduce_window_min", "minimum")


# ---------------------------------------------------------------------------------------------
# sum: linear. Per dimension y[i] = sum_k xp[i*s + k*wd] (xp: x dilated by bd, padded lo/hi),
# so ct_xp[p] = sum over i*s + k*wd = p of ct[i]: a windowed sum of ct dilated by s, read at
# x's places p = lo + j*bd (windows bd apart, padding (K' - 1 - lo) below, K' the window's
# extent, and above whatever makes n outputs).
# ---------------------------------------------------------------------------------------------

def _sum_transpose(ct: Any, x: Any, **p: Any) -> list:
    shape = x.aval.shape
    m = get_aval(ct).shape
    pads = []
    for n, mi, wd in zip(shape, m, _window(p)):
        before = dilated(wd.size, wd.rhs_dilate) - 1 - wd.pad_lo
        after = (n - 1) * wd.lhs_dilate + 1 - dilated(mi, wd.stride) + wd.pad_lo
        pads.append((before, after))
    out = reduce_window_sum_p.bind(
        ct, window_dimensions=tuple(p["window_dimensions"]),
        window_strides=tuple(p["base_dilation"]), padding=tuple(pads),
        base_dilation=tuple(p["window_strides"]), window_dilation=tuple(p["window_dilation"]))
    return [out]


ad.deflinear(reduce_window_sum_p)
reduce_window_sum_p.def_transpose(_sum_transpose)


# ---------------------------------------------------------------------------------------------
# max/min: the tangent at each window's first extremum.
# ---------------------------------------------------------------------------------------------

def window_patches(x: Any, fill: Any, p: dict) -> Any:
    """[out..., T]: for each of the window's T taps (row-major), the operand element it
    reads at every window position (`fill` in the padding and holes)."""
    from ember.prims.slicing import concatenate_p, pad_p, slice_p

    w = _window(p)
    cfg = tuple((wd.pad_lo, wd.pad_hi, wd.lhs_dilate - 1) for wd in w)
    xp = pad_p.bind(x, fill, padding_config=cfg)
    out = tuple(window_output_size(n, wd) for n, wd in zip(get_aval(x).shape, w))
    taps = []
    for tap in itertools.product(*(range(wd.size) for wd in w)):
        starts, limits = [], []
        for t, wd, n in zip(tap, w, out):
            start = t * wd.rhs_dilate if n else 0
            starts.append(start)
            limits.append(start + (n - 1) * wd.stride + 1 if n else 0)
        piece = slice_p.bind(xp, start_indices=tuple(starts), limit_indices=tuple(limits),
                             strides=tuple(wd.stride for wd in w))
        # (a trailing unit axis as a broadcast: cheaper to generate than a reshape's)
        taps.append(_ad.broadcast_in_dim(piece, out + (1,), tuple(range(len(out)))))
    if len(taps) == 1:
        return taps[0]
    return concatenate_p.bind(*taps, dimension=len(out))


def _extremum_jvp(prim: Primitive, opcode: str) -> None:
    from ember.prims.reductions import argmax_p, argmin_p

    arg = argmax_p if opcode == "maximum" else argmin_p

    def rule(primals: list, tangents: list, **p: Any) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, **p)
        if isinstance(t, ad.Zero):
            return ans, ad.Zero(get_aval(ans))
        aval = get_aval(ans)
        if 0 in p["window_dimensions"] or 0 in aval.shape:  # no element: no tangent
            return ans, _ad.zeros(ShapedArray(aval.shape, get_aval(t).dtype))
        xs = window_patches(x, _ad.const(_identity(opcode, aval.dtype), x), p)
        ts = window_patches(t, _ad.const(0, t), p)
        nd = len(aval.shape)
        idx = arg.bind(xs, axes=(nd,), index_dtype=np.dtype(np.int32))
        taps = get_aval(xs).shape[nd]
        from ember.prims.shape_ops import iota_p
        iota = iota_p.bind(dtype=np.dtype(np.int32), shape=(*aval.shape, taps), dimension=nd,
                           sharding=None)
        hit = _ad.compare("eq", iota, _ad.broadcast_in_dim(idx, (*aval.shape, taps),
                                                           tuple(range(nd))))
        picked = _ad.select(hit, ts, _ad.zeros(get_aval(ts)))
        return ans, _ad.reduce_sum(picked, (nd,))

    prim.def_jvp(rule)


_extremum_jvp(reduce_window_max_p, "maximum")
_extremum_jvp(reduce_window_min_p, "minimum")
