"""The windowed opcodes in NumPy: `convolution` and `reduce-window`, with XLA's semantics.

Input: NumPy operands and the instruction's attributes (hlo/window.py's `WindowDim`s and
`DimLabels`). Output: a fresh array. Eager `conv_general_dilated` and the reduce_window
primitives run these too, so eager mode and the interpreter share every edge case.
Semantics (XLA's operation semantics):
- a window dimension reads the base dilated by lhs_dilate (zeros, or the init value for
  reduce-window, in the holes), padded by pad_lo/pad_hi (negative crops), its taps
  rhs_dilate apart; output element i starts at i * stride (hlo/window.py).
- convolution: out[b, o, p] = sum over taps t and input features c of
  lhs'[b, c, p * stride + t * rhs_dilate] * rhs[o, c, t], where with feature_group_count G
  the input features split into G contiguous groups, group g feeding output features
  g * (O / G) ...; with batch_group_count B the lhs batch splits into B contiguous groups
  (lhs batch index = g * (N / B) + n), group g feeding output features g * (O / B) ...
  Float16 accumulates in float32 (hlo/accumulation.py); integers wrap.
- reduce-window: init (op) every element of the window, in a left fold over the taps in
  row-major order (a plain monoid uses its NumPy ufunc).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from math import prod

import numpy as np

from ember.hlo.accumulation import accumulation_dtype
from ember.hlo.evaluator.indexing import pad
from ember.hlo.window import DimLabels, WindowDim, dilated, window_output_size


def _taps(x: np.ndarray, window: Sequence[WindowDim], first: int, out: Sequence[int]
          ) -> list[np.ndarray]:
    """For each tap of the window (row-major), the strided view of the padded, dilated
    `x` whose dimensions first, first+1, ... are the window's: each of shape out there."""
    views = []
    for tap in itertools.product(*(range(w.size) for w in window)):
        idx: list[slice] = [slice(None)] * x.ndim
        for k, (t, w, n) in enumerate(zip(tap, window, out)):
            start = t * w.rhs_dilate
            idx[first + k] = slice(start, start + (n - 1) * w.stride + 1 if n else start,
                                   w.stride)
        views.append(x[tuple(idx)])
    return views


def _dilate_and_pad(x: np.ndarray, window: Sequence[WindowDim], first: int,
                    fill: np.ndarray) -> np.ndarray:
    cfg = [(0, 0, 0)] * first + [(w.pad_lo, w.pad_hi, w.lhs_dilate - 1) for w in window]
    cfg += [(0, 0, 0)] * (x.ndim - len(cfg))
    return pad(x, np.asarray(fill, dtype=x.dtype), cfg)


def convolution(lhs: np.ndarray, rhs: np.ndarray, window: Sequence[WindowDim],
                d: DimLabels, feature_group_count: int, batch_group_count: int,
                dtype: np.dtype) -> np.ndarray:
    """XLA's convolution, result of `dtype` (the shape rule's; see the module doc)."""
    dtype = np.dtype(dtype)
    acc = accumulation_dtype(dtype) if dtype.kind == "f" or dtype.name == "bfloat16" else (
        np.dtype(np.int32) if dtype == np.bool_ else dtype)
    nsp = len(d.lhs_spatial)
    x = np.transpose(lhs, (d.lhs_batch, d.lhs_feature, *d.lhs_spatial)).astype(acc)
    k = np.transpose(rhs, (d.rhs_out, d.rhs_in, *d.rhs_spatial)).astype(acc)
    out_sp = [window_output_size(n, w) for n, w in zip(x.shape[2:], window)]
    x = _dilate_and_pad(x, window, 2, np.zeros((), acc))
    nb, c = x.shape[:2]
    o, cg = k.shape[:2]
    g, b = feature_group_count, batch_group_count
    taps = prod(w.size for w in window)
    npos = prod(out_sp)
    if taps and npos and nb and o:
        patches = np.stack(_taps(x, window, 2, out_sp), axis=2)  # [N, C, T, out...]
        patches = patches.reshape(b, nb // b, g, cg, taps, npos)
        kk = k.reshape(b, g, o // (b * g), cg, taps)
        with np.errstate(all="ignore"):
            r = np.einsum("bngctp,bgkct->nbgkp", patches, kk, optimize=True)
        r = r.reshape(nb // b, o, *out_sp)
    else:  # an empty window sums nothing
        r = np.zeros((nb // b, o, *out_sp), acc)
    # [batch, feature, spatial...] -> the output's labels
    perm = [0] * (nsp + 2)
    for src, dst in enumerate((d.out_batch, d.out_feature, *d.out_spatial)):
        perm[dst] = src
    return np.ascontiguousarray(np.transpose(r, perm)).astype(dtype, copy=False)


def reduce_window(x: np.ndarray, init: np.ndarray, window: Sequence[WindowDim],
                  combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """reduce-window with the vectorized scalar combiner `combine(acc, x)`."""
    out = [window_output_size(n, w) for n, w in zip(x.shape, window)]
    init = np.asarray(init, dtype=x.dtype)
    acc = np.broadcast_to(init, out).copy()
    if not all(dilated(n, w.lhs_dilate) + w.pad_lo + w.pad_hi >= 0
               for n, w in zip(x.shape, window)):
        return acc
    xp = _dilate_and_pad(x, window, 0, init)
    if not acc.size:
        return acc
    with np.errstate(all="ignore"):
        for view in _taps(xp, window, 0, out):
            acc = np.asarray(combine(acc, view), dtype=x.dtype)
    return acc
