"""lax's convolutions and windowed reductions: conv_general_dilated, conv,
conv_with_general_padding, conv_transpose, reduce_window, padtype_to_pads,
conv_dimension_numbers, conv_general_permutations.

Input: arrays and JAX's arguments (padding as 'VALID'/'SAME'/'SAME_LOWER' or (lo, hi)
pairs; dimension numbers as None, a ConvDimensionNumbers, or three strings such as
('NHWC', 'HWIO', 'NHWC')). Output: arrays, through the primitives of prims/convolution.py
and prims/windowed.py. Invariants: JAX's defaults, padding arithmetic and error texts;
reduce_window picks the sum/max/min primitive when the computation is lax.add/max/min with
its identity as the init value (JAX's monoid detection), and otherwise (any computation,
a pytree of several operands) folds the computation over the window's taps (strided
slices of the padded operands), which any transformation then sees as ordinary
primitives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.lax._base import aval_of, to_common_dtype
from ember.lax._linalg import _canonical_precision
from ember.prims.convolution import ConvDimensionNumbers, conv_general_dilated_p
from ember.prims.windowed import (
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_sum_p,
    window_patches,
)


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """(lo, hi) per dimension for 'VALID' (none), 'SAME' (output ceil(n / stride), the
    odd extra element high) or 'SAME_LOWER' (the odd extra element low)."""
    if not isinstance(padding, str):
        raise TypeError(f"padding must be a string, got {padding!r}")
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got "
                           f"{padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        lo = total // 2 if mode == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return pads


def conv_general_permutations(dimension_numbers: Sequence[str]
                              ) -> tuple[tuple[int, ...], ...]:
    """Three spec strings -> (lhs, rhs, out) permutations; spatial dims in rhs's order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}.")
    spatial = [c for c in rhs_spec if c not in ("O", "I")]

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        return (spec.index(pair[0]), spec.index(pair[1]), *(spec.index(c) for c in spatial))

    return (perm(lhs_spec, pairs[0]), perm(rhs_spec, pairs[1]), perm(out_spec, pairs[2]))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """None (the canonical NCHW/OIHW layouts), a ConvDimensionNumbers, or spec strings."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if not all(isinstance(e, str) for e in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, e in enumerate(dimension_numbers):
        if len(e) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(e)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """General n-d convolution with strides, padding, dilations and groups (XLA's
    ConvGeneralDilated)."""
    lhs, rhs = to_common_dtype(lhs, rhs)
    la, ra = aval_of(lhs), aval_of(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * nsp
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * nsp
    if isinstance(padding, str):
        kernel = [ra.shape[d] for d in dn.rhs_spec[2:]]
        effective = [(k - 1) * r + 1 if k else 0 for k, r in zip(kernel, rhs_dilation)]
        padding = padtype_to_pads([la.shape[d] for d in dn.lhs_spec[2:]], effective,
                                  window_strides, padding)
    else:
        try:
            padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or "
                             f"a sequence of (low, high) pairs, got {padding}") from e
    pet = None if preferred_element_type is None else dtypes.canonicalize(
        preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides),
        padding=tuple(tuple(p) for p in padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation), dimension_numbers=dn,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=_canonical_precision(precision),
        preferred_element_type=pet, out_sharding=None)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Convolution in the NCHW/OIHW layouts, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """Convolution in the NCHW/OIHW layouts with padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The (lo, hi) padding of the dilated input for a transposed convolution with kernel
    extent k and stride s: 'SAME' gives n * s outputs, 'VALID' (n - 1) * s + k; a forward
    pair (lo, hi) gives k - 1 - lo, k - 1 - hi."""
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        lo, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return lo, total - lo


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """A fractionally strided convolution (the input dilated by `strides`), with Keras's
    output-size conventions; `transpose_kernel` flips the kernel's spatial axes and swaps
    its in/out features (the gradient of a forward convolution)."""
    la, ra = aval_of(lhs), aval_of(rhs)
    ndim = la.ndim
    if ndim != ra.ndim or ndim < 2:
        raise ValueError(f"conv_transpose needs lhs and rhs of one rank >= 2, got {la.shape} "
                         f"and {ra.shape}")
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if ndim not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    ksz = [ra.shape[d] for d in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads = tuple(_conv_transpose_padding((k - 1) * r + 1, s, tuple(p) if not
                                             isinstance(p, str) else p)
                     for k, r, s, p in zip(ksz, rhs_dilation, strides, per_dim))
    else:
        pads = padding
    if transpose_kernel:
        from ember.lax._ops import rev, transpose
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# ---------------------------------------------------------------------------------------------
# reduce_window
# ---------------------------------------------------------------------------------------------

def _monoid(computation: Callable, init: Any, dtype: np.dtype) -> Any:
    """The sum/max/min primitive when (computation, init) is that monoid with its
    identity (a concrete scalar init value), else None."""
    from ember import lax
    from ember.core.trace import get_aval
    from ember.core.traceback_util import unwrap
    computation = unwrap(computation)  # (a public entry's function: lax.add's is _ops.add)
    try:
        value = np.asarray(init)
    except Exception:  # a tracer: not a known constant
        return None
    if get_aval(init).shape != ():
        return None
    if computation is unwrap(lax.add) and value == 0:
        return reduce_window_sum_p
    if dtypes.kind(dtype) == "f":
        lowest, highest = -np.inf, np.inf
    elif dtypes.kind(dtype) == "b":
        lowest, highest = False, True
    else:
        lowest, highest = np.iinfo(dtype).min, np.iinfo(dtype).max
    if computation is unwrap(lax.max) and value == lowest:
        return reduce_window_max_p
    if computation is unwrap(lax.min) and value == highest:
        return reduce_window_min_p
    return None


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce each (padded, dilated) window of `operand` with `computation`, starting
    from `init_value` (XLA's ReduceWindow)."""
    from ember import lax
    from ember.lax._user_reductions import flatten_operands_and_inits
    from ember.tree_util import tree_flatten, tree_unflatten

    flat, flat_init, tree = flatten_operands_and_inits(operand, init_value)
    if not flat:
        raise ValueError("reduce_window must have at least one operand.")
    pairs = [to_common_dtype(x, i) for x, i in zip(flat, flat_init)]
    xs, inits = [p[0] for p in pairs], [p[1] for p in pairs]
    aval = aval_of(xs[0])
    n = len(window_dimensions)
    if isinstance(padding, str):
        dil = window_dilation or (1,) * n
        eff = [(w - 1) * d + 1 if w else 0 for w, d in zip(window_dimensions, dil)]
        padding = padtype_to_pads(aval.shape, eff, window_strides or (1,) * n, padding)
    params = dict(window_dimensions=tuple(int(w) for w in window_dimensions),
                  window_strides=tuple(int(s) for s in (window_strides or (1,) * n)),
                  padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                  base_dilation=tuple(int(d) for d in (base_dilation or (1,) * n)),
                  window_dilation=tuple(int(d) for d in (window_dilation or (1,) * n)))
    prim = _monoid(computation, inits[0], aval.dtype) if len(xs) == 1 else None
    if prim is not None:
        return tree_unflatten(tree, [prim.bind(xs[0], **params)])
    # A general computation: fold it over the taps, starting from the init values.
    inits = [lax.convert_element_type(i, aval_of(x).dtype) for x, i in zip(xs, inits)]
    out_shape = reduce_window_sum_p.abstract_eval(aval, **params).shape
    acc = [lax.broadcast_in_dim(i, out_shape, ()) for i in inits]
    if all(params["window_dimensions"]):
        patches = [window_patches(x, i, params) for x, i in zip(xs, inits)]
        for t in range(aval_of(patches[0]).shape[-1]):
            taps = [lax.index_in_dim(p, t, axis=len(out_shape), keepdims=False)
                    for p in patches]
            out = computation(tree_unflatten(tree, acc), tree_unflatten(tree, taps))
            flat_out, out_tree = tree_flatten(out)
            if out_tree != tree:
                raise ValueError("reduce_window output must have the same tree structure "
                                 f"as the operands {tree} vs. {out_tree}")
            acc = flat_out
    return tree_unflatten(tree, acc)


__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "conv_dimension_numbers", "conv_general_permutations", "ConvDimensionNumbers",
           "padtype_to_pads", "reduce_window"]
