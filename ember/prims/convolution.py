"""The convolution primitive `conv_general_dilated`, with JAX 0.10.2's params:

    conv_general_dilated[window_strides=(1, 1) padding=((0, 0), (0, 0))
        lhs_dilation=(1, 1) rhs_dilation=(1, 1)
        dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=..., out_spec=...)
        feature_group_count=1 batch_group_count=1 precision=None preferred_element_type=None
        out_sharding=None]

Input: lhs (batch, feature, spatial...) and rhs (out feature, in feature, spatial...) in the
layouts the specs name: `lhs_spec = (batch dim, feature dim, spatial dims...)`, `rhs_spec =
(out feature dim, in feature dim, spatial dims...)`, `out_spec` like lhs_spec.
Output: one array (preferred_element_type, else the operands' dtype), lowered to HLO
`convolution` (window and dim_labels from the params; hlo/window.py). The NumPy rule is the
evaluator's (hlo/evaluator/windows.py), so eager and compiled code share one definition.
Rules: bilinear, so the JVP is conv(t_lhs, rhs) + conv(lhs, t_rhs); each transpose is
itself a convolution (see `_lhs_cotangent`, `_rhs_cotangent` for the index algebra); vmap
folds the batch axis into the batch dimension (lhs mapped), the output features (rhs
mapped) or the feature groups (both mapped). The rules work in the canonical layout
(specs (0, 1, 2, ...)): transposes in, the convolution, a transpose out, which the
passes fold.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ember.core import ad
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.evaluator.windows import convolution as np_convolution
from ember.hlo.shape import Shape
from ember.hlo.window import DimLabels, dilated, format_dim_labels, make_window
from ember.hlo.window import window_output_size as _out_size
from ember.prims import _ad, _eager_native
from ember.prims import _lower as L


class ConvDimensionNumbers(NamedTuple):
    """Positions of (batch, feature, spatial...) in lhs and out, (out feature, in
    feature, spatial...) in rhs."""
    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.hlo_opcode = "convolution"  # type: ignore[attr-defined]


def _labels(dn: ConvDimensionNumbers) -> DimLabels:
    return DimLabels(dn.lhs_spec[0], dn.lhs_spec[1], tuple(dn.lhs_spec[2:]),
                     dn.rhs_spec[1], dn.rhs_spec[0], tuple(dn.rhs_spec[2:]),
                     dn.out_spec[0], dn.out_spec[1], tuple(dn.out_spec[2:]))


def _window(rhs_shape: tuple[int, ...], dn: ConvDimensionNumbers, p: dict) -> tuple:
    return make_window([rhs_shape[d] for d in dn.rhs_spec[2:]], p["window_strides"],
                       p["padding"], p["lhs_dilation"], p["rhs_dilation"])


def conv_shape(lhs: tuple[int, ...], rhs: tuple[int, ...], *, window_strides: Any,
               padding: Any, lhs_dilation: Any, rhs_dilation: Any,
               dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
               batch_group_count: int, **_: Any) -> tuple[int, ...]:
    """The output shape, with JAX's errors for operands that do not fit."""
    dn = dimension_numbers
    if len(lhs) != len(rhs):
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs} and {rhs}.")
    fg, bg = feature_group_count, batch_group_count
    if not fg > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {fg}.")
    cin = lhs[dn.lhs_spec[1]]
    if cin % fg:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {fg} does not divide {cin}.")
    if cin // fg != rhs[dn.rhs_spec[1]]:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension "
                         f"size, but {cin} // {fg} != {rhs[dn.rhs_spec[1]]}.")
    cout = rhs[dn.rhs_spec[0]]
    if cout % fg:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {cout} is not a multiple of "
                         f"{fg}.")
    if not bg > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive "
                         f"integer, got {bg}.")
    nb = lhs[dn.lhs_spec[0]]
    if bg > 1 and nb % bg:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {bg} does not divide {nb}.")
    if cout % bg:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {cout} is not a multiple of "
                         f"{bg}.")
    if bg > 1 and fg > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > "
                         f"1, got batch_group_count={bg} and feature_group_count={fg}")
    nsp = len(dn.rhs_spec) - 2
    if nsp != len(window_strides):
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {nsp} and {len(window_strides)}")
    if len(padding) != nsp:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{nsp}, got {len(padding)}.")
    out = [0] * len(lhs)
    out[dn.out_spec[0]] = nb // bg
    out[dn.out_spec[1]] = cout
    w = make_window([rhs[d] for d in dn.rhs_spec[2:]], window_strides, padding, lhs_dilation,
                    rhs_dilation)
    for k, wd in enumerate(w):
        n = lhs[dn.lhs_spec[2 + k]]
        if dilated(n, wd.lhs_dilate) + wd.pad_lo + wd.pad_hi < 0:
            raise ValueError("Negative padding is larger than the size of the corresponding "
                             f"dimension: got padding={tuple(padding)} for lhs_shape[2:]="
                             f"{tuple(lhs[d] for d in dn.lhs_spec[2:])}")
        out[dn.out_spec[2 + k]] = _out_size(n, wd)
    return tuple(out)


@conv_general_dilated_p.def_abstract_eval
def _conv_abstract(lhs: ShapedArray, rhs: ShapedArray, **params: Any) -> ShapedArray:
    if lhs.dtype != rhs.dtype:
        raise TypeError("conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {lhs.dtype.name}, {rhs.dtype.name}.")
    shape = conv_shape(lhs.shape, rhs.shape, **params)
    pref = params.get("preferred_element_type")
    if pref is None:
        return ShapedArray(shape, lhs.dtype, lhs.weak_type and rhs.weak_type)
    return ShapedArray(shape, np.dtype(pref), False)


@conv_general_dilated_p.def_impl
def _conv_impl(lhs: np.ndarray, rhs: np.ndarray, **params: Any) -> np.ndarray:
    out = _eager_native.compiled(conv_general_dilated_p, [lhs, rhs], params)
    if out is not None:  # (float operands: jit's bits, ember/eager_native.py)
        return out
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    dn = params["dimension_numbers"]
    dtype = np.dtype(params.get("preferred_element_type") or lhs.dtype)
    return np_convolution(lhs, rhs, _window(rhs.shape, dn, params), _labels(dn),
                          params["feature_group_count"], params["batch_group_count"], dtype)


@conv_general_dilated_p.def_lowering
def _conv_lowering(ctx: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
    dn = params["dimension_numbers"]
    attrs = {"window": _window(ctx.avals_in[1].shape, dn, params),
             "dim_labels": format_dim_labels(_labels(dn)),
             "feature_group_count": params["feature_group_count"],
             "batch_group_count": params["batch_group_count"]}
    hint = Shape(L.et(ctx.avals_out[0].dtype), ())
    return ctx.b.op("convolution", (lhs, rhs), attrs, hint)


# ---------------------------------------------------------------------------------------------
# Canonical-layout helpers: rules move operands to (batch|out, feature|in, spatial...), bind,
# and move the result to the output's layout.
# ---------------------------------------------------------------------------------------------

def _canonical(ndim: int) -> ConvDimensionNumbers:
    iota = tuple(range(ndim))
    return ConvDimensionNumbers(iota, iota, iota)


def _conv_canonical(lhs: Any, rhs: Any, params: dict, **changes: Any) -> Any:
    p = dict(params)
    p.update(changes)
    p["dimension_numbers"] = _canonical(get_aval(lhs).ndim)
    return conv_general_dilated_p.bind(lhs, rhs, **p)


def _to_layout(x: Any, spec: tuple[int, ...]) -> Any:
    """A canonical array (dims in spec order) in the layout `spec` names."""
    return _ad.transpose(x, tuple(int(i) for i in np.argsort(spec)))


def _split(x: Any, axis: int, parts: int) -> Any:
    """Axis `axis` of size n as two axes (parts, n // parts), major first."""
    shape = list(get_aval(x).shape)
    shape[axis:axis + 1] = [parts, shape[axis] // parts]
    return _ad.reshape(x, tuple(shape))


def _merge(x: Any, axis: int) -> Any:
    """Axes axis and axis+1 as one (axis major)."""
    shape = list(get_aval(x).shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return _ad.reshape(x, tuple(shape))


def _swap_groups(rhs_c: Any, groups: int) -> Any:
    """A canonical kernel [O = G*Og, I, sp...] as [G*I, Og, sp...]: each group's in and out
    features swapped, groups kept in order (the kernel of a transposed convolution)."""
    k = _split(rhs_c, 0, groups)  # [G, Og, I, sp]
    nd = get_aval(k).ndim
    k = _ad.transpose(k, (0, 2, 1, *range(3, nd)))
    return _merge(k, 0)


# ---------------------------------------------------------------------------------------------
# Transposes. Per spatial dimension, with xp the lhs dilated by ld and padded (lo, hi), the
# forward is y[i] = sum_k xp[i*s + k*rd] w[k].
# lhs: ct_xp[p] = sum_{i*s + k*rd = p} ct[i] w[k], a convolution of ct dilated by s with
#   the flipped kernel (taps rd apart), reading x's positions p = lo + j*ld: window stride
#   ld, padding ((K'-1) - lo, ...) with K' = (K-1)*rd + 1, and the high side making n outputs.
# rhs: ct_w[k] = sum_i xp[k*rd + i*s] ct[i], a convolution of xp (channels as the batch,
#   batch as features) with ct as the kernel: window stride rd, taps s apart, K outputs.
# Feature groups become batch groups in the rhs cotangent and vice versa.
# ---------------------------------------------------------------------------------------------

def _lhs_cotangent(ct: Any, rhs: Any, lhs_aval: ShapedArray, params: dict) -> Any:
    dn = params["dimension_numbers"]
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    ct_c = _ad.transpose(ct, dn.out_spec)
    rhs_c = _ad.convert(_ad.transpose(rhs, dn.rhs_spec), get_aval(ct).dtype)
    groups = fg * bg
    kernel = _swap_groups(rhs_c, groups) if groups > 1 else _ad.transpose(
        rhs_c, (1, 0, *range(2, get_aval(rhs_c).ndim)))
    nsp = get_aval(rhs_c).ndim - 2
    from ember.prims.shape_ops import rev_p
    kernel = rev_p.bind(kernel, dimensions=tuple(range(2, 2 + nsp))) if nsp else kernel
    lhs_shape = [lhs_aval.shape[d] for d in dn.lhs_spec]
    ksz = get_aval(rhs_c).shape[2:]
    m = get_aval(ct_c).shape[2:]
    pads = []
    for k in range(nsp):
        s, (lo, _), ld, rd = (params["window_strides"][k], params["padding"][k],
                              params["lhs_dilation"][k], params["rhs_dilation"][k])
        n = lhs_shape[2 + k]
        before = dilated(ksz[k], rd) - 1 - lo
        # n outputs ld apart: (L + before + after - K') = (n - 1) * ld, L = dilated(m, s)
        after = (n - 1) * ld + 1 - dilated(m[k], s) + lo
        pads.append((before, after))
    out = _conv_canonical(ct_c, kernel, params, window_strides=tuple(params["lhs_dilation"]),
                          padding=tuple(pads), lhs_dilation=tuple(params["window_strides"]),
                          feature_group_count=groups, batch_group_count=1)
    if bg > 1:  # [Nb, B*C, sp] -> [B*Nb, C, sp]: group b's features are batch group b
        out = _split(out, 1, bg)
        nd = get_aval(out).ndim
        out = _merge(_ad.transpose(out, (1, 0, *range(2, nd))), 0)
    return _ad.convert(_to_layout(out, dn.lhs_spec), lhs_aval.dtype)


def _rhs_cotangent(ct: Any, lhs: Any, rhs_aval: ShapedArray, params: dict) -> Any:
    dn = params["dimension_numbers"]
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    ct_c = _ad.transpose(ct, dn.out_spec)
    lhs_c = _ad.convert(_ad.transpose(lhs, dn.lhs_spec), get_aval(ct).dtype)
    nd = get_aval(lhs_c).ndim
    swap = (1, 0, *range(2, nd))
    x = _ad.transpose(lhs_c, swap)  # [C, N, sp]: channels as the batch
    kernel = _ad.transpose(ct_c, swap)  # [O, Nb, sp]
    ksz = [rhs_aval.shape[d] for d in dn.rhs_spec[2:]]
    pads = []
    for k in range(nd - 2):
        s, (lo, _), ld, rd = (params["window_strides"][k], params["padding"][k],
                              params["lhs_dilation"][k], params["rhs_dilation"][k])
        n, m = get_aval(lhs_c).shape[2 + k], get_aval(ct_c).shape[2 + k]
        hi = dilated(ksz[k], rd) + dilated(m, s) - 1 - dilated(n, ld) - lo
        pads.append((lo, hi))
    out = _conv_canonical(x, kernel, params, window_strides=tuple(params["rhs_dilation"]),
                          padding=tuple(pads), rhs_dilation=tuple(params["window_strides"]),
                          feature_group_count=bg, batch_group_count=fg)
    out = _ad.transpose(out, swap)  # [I, O, sp] -> [O, I, sp]
    return _ad.convert(_to_layout(out, dn.rhs_spec), rhs_aval.dtype)


def _conv_transpose_rule(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list:
    if ad.is_undefined_primal(lhs):
        if ad.is_undefined_primal(rhs):
            raise ValueError("conv_general_dilated is not linear in both operands at once")
        return [_lhs_cotangent(ct, rhs, lhs.aval, params), None]
    return [None, _rhs_cotangent(ct, lhs, rhs.aval, params)]


ad.defjvp(conv_general_dilated_p,
          lambda t, ans, x, y, **params: conv_general_dilated_p.bind(t, y, **params),
          lambda t, ans, x, y, **params: conv_general_dilated_p.bind(x, t, **params))
conv_general_dilated_p.def_transpose(_conv_transpose_rule)


# ---------------------------------------------------------------------------------------------
# Batching (canonical layout, V the vmapped size, G = feature groups, B = batch groups):
# lhs mapped: [V, B*Nb] batch -> [B, V*Nb] (groups stay major); out batch V*Nb -> (V, Nb).
# rhs mapped: out features [V, G*Og] -> [G, V*Og] (groups stay major); out (G, V, Og).
# both mapped: V more feature groups (or batch groups when B > 1): lhs features [V, C],
#   kernel out features [V, O]; out features (V, O).
# ---------------------------------------------------------------------------------------------

def _conv_batch(axis: AxisData, args: list, dims: list, **params: Any) -> tuple[Any, int]:
    (lhs, rhs), (ld, rd) = args, dims
    dn = params["dimension_numbers"]
    fg, bg = params["feature_group_count"], params["batch_group_count"]
    v = axis.size
    if ld is not not_mapped:
        lhs = _ad.moveaxis(lhs, ld, 0)
        nd = get_aval(lhs).ndim
        lhs = _ad.transpose(lhs, (0, *(1 + d for d in dn.lhs_spec)))  # [V, N, C, sp]
    else:
        nd = get_aval(lhs).ndim + 1
        lhs = _ad.transpose(lhs, dn.lhs_spec)
    if rd is not not_mapped:
        rhs = _ad.moveaxis(rhs, rd, 0)
        rhs = _ad.transpose(rhs, (0, *(1 + d for d in dn.rhs_spec)))  # [V, O, I, sp]
    else:
        rhs = _ad.transpose(rhs, dn.rhs_spec)
    sp = tuple(range(3, nd))
    if ld is not not_mapped and rd is not not_mapped:
        if bg > 1:  # lhs batch [V, B*Nb] -> V*B batch groups; kernel features [V, O]
            out = _conv_canonical(_merge(lhs, 0), _merge(rhs, 0), params,
                                  batch_group_count=bg * v)
        else:  # lhs features [V, C]: V*G feature groups
            x = _merge(_ad.transpose(lhs, (1, 0, 2, *sp)), 1)
            out = _conv_canonical(x, _merge(rhs, 0), params, feature_group_count=fg * v)
        out = _split(out, 1, v)  # [Nb, V, O, sp]
        out = _ad.transpose(out, (1, 0, 2, *sp))
    elif ld is not not_mapped:
        x = _split(lhs, 1, bg)  # [V, B, Nb, C, sp]
        x = _merge(_merge(_ad.transpose(x, (1, 0, *range(2, nd + 1))), 0), 0)
        out = _conv_canonical(x, rhs, params)  # [V*Nb, O, sp]
        out = _split(out, 0, v)
    else:
        groups = fg * bg
        k = _split(rhs, 1, groups)  # [V, G, Og, I, sp]
        k = _ad.transpose(k, (1, 0, *range(2, nd + 1)))
        out = _conv_canonical(lhs, _merge(_merge(k, 0), 0), params)  # [N, G*V*Og, sp]
        out = _split(_split(out, 1, groups), 2, v)  # [N, G, V, Og, sp]
        out = _ad.transpose(out, (2, 0, 1, 3, *range(4, nd + 1)))
        out = _merge(out, 2)  # [V, N, O, sp]
    # [V, N, O, sp] -> the output's layout, batch axis first
    out = _ad.transpose(out, (0, *(1 + int(i) for i in np.argsort(dn.out_spec))))
    return out, 0


conv_general_dilated_p.def_batch(_conv_batch)
