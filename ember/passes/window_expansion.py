"""Window expansion: `convolution` and `reduce-window` rewritten into pads, strided slices,
concatenates, dots and elementwise ops, for backends (the CPU) that compile those well.

Input: a Module. Output: the same values with no convolution or reduce-window left.
Rewrites (per spatial dimension: dilate by lhs_dilate and pad, both one `pad`; tap t of the
window is the strided slice starting at t * rhs_dilate, one element per output position):
  convolution(lhs, rhs) => one dot over window "patches", in the form that touches the
      fewest values (no groups):
      - im2col, taps outermost: patches [T, C, N, out...] (one strided slice of the padded
        lhs per tap, stacked along a leading axis, so building them reads each tap's
        slice in order), kernel [O, T, C], dot -> [O, N, out...];
      - position-major, when there are fewer output positions than taps (a kernel's
        gradient): one slice per output position holding its whole window, patches
        [P, N, C, taps...], kernel [O, C, taps...], dot -> [O, P, N];
      - tap sum, when O * (input + output positions) < C * output positions (an input's
        gradient): Y = lhs [N, sp..., C] . kernel [C, T*O] first, then the sum over taps
        of tap t's slice of the padded, dilated Y[..., t*O:(t+1)*O];
      with G feature groups: patches [M, G, T*Cg] and a dot batched over the groups; with
      B batch groups: lhs rows split [B, Nb*P], a dot batched over them. Then a transpose
      to the output's dim_labels. Operands are converted to the result type first
      (preferred_element_type).
  reduce-window(x, init) with a plain add/multiply/maximum/minimum/and/or/xor combiner
      => init (op) tap_0 (op) tap_1 ... over the pad(x, init)'s slices (init dropped when it
      is maximum's/minimum's identity); with any other combiner => the taps stacked on a
      last axis and one `reduce` with the same computation.
  A window with no taps or a result with no elements => the init value (0) broadcast.
Invariants: the result equals the evaluator's (hlo/evaluator/windows.py); float sums may
associate differently (dot order), as XLA's do.
"""

from __future__ import annotations

import itertools
from math import prod
from typing import Any

import numpy as np

from ember.hlo.evaluator.core import plain_binary_opcode
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape
from ember.hlo.shape_inference import infer_shape
from ember.hlo.window import WindowDim, parse_dim_labels, window_output_size
from ember.passes.base import HloPass

_PLAIN = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"}


class _Emit:
    """Adds instructions before a rewritten one, shapes by inference."""

    def __init__(self, comp: Computation, like: Instruction) -> None:
        self.comp = comp
        self.md = dict(like.metadata)

    def op(self, opcode: str, operands: list[Instruction], attrs: dict | None = None,
           hint: Shape | None = None, called: list[Computation] | None = None) -> Instruction:
        attrs = attrs or {}
        shape = infer_shape(opcode, [o.shape for o in operands], attrs, called or [], hint)
        return self.comp.add_instruction(Instruction(opcode, shape, operands, attrs,
                                                     called or [], dict(self.md)))

    def reshape(self, x: Instruction, dims: tuple[int, ...]) -> Instruction:
        if tuple(x.shape.dimensions) == tuple(dims):
            return x
        return self.op("reshape", [x], hint=Shape(x.shape.element_type, tuple(dims)))

    def transpose(self, x: Instruction, perm: tuple[int, ...]) -> Instruction:
        if tuple(perm) == tuple(range(len(perm))):
            return x
        return self.op("transpose", [x], {"dimensions": tuple(perm)})

    def scalar(self, value: Any, et: str) -> Instruction:
        v = np.asarray(value, dtype=Shape(et, ()).dtype)
        return self.op("constant", [], {"value": v})

    def broadcast(self, x: Instruction, dims: tuple[int, ...]) -> Instruction:
        return self.op("broadcast", [x], {"dimensions": ()},
                       hint=Shape(x.shape.element_type, tuple(dims)))

    def convert(self, x: Instruction, et: str) -> Instruction:
        if x.shape.element_type == et:
            return x
        return self.op("convert", [x], hint=Shape(et, tuple(x.shape.dimensions)))

    def taps(self, xp: Instruction, window: tuple[WindowDim, ...], first: int,
             out: list[int]) -> list[Instruction]:
        """Each tap's strided slice of xp (window dims from `first`), row-major taps."""
        dims = xp.shape.dimensions
        views = []
        for tap in itertools.product(*(range(w.size) for w in window)):
            spec = [(0, d, 1) for d in dims]
            for k, (t, w, n) in enumerate(zip(tap, window, out)):
                start = t * w.rhs_dilate
                spec[first + k] = (start, start + (n - 1) * w.stride + 1, w.stride)
            views.append(self.op("slice", [xp], {"slice": tuple(spec)}))
        return views


def _pad_config(window: tuple[WindowDim, ...], first: int, rank: int) -> tuple:
    cfg = [(0, 0, 0)] * rank
    for k, w in enumerate(window):
        cfg[first + k] = (w.pad_lo, w.pad_hi, w.lhs_dilate - 1)
    return tuple(cfg)


def _expand_convolution(comp: Computation, inst: Instruction) -> Instruction:
    e = _Emit(comp, inst)
    lhs, rhs = inst.operands
    et = inst.shape.element_type
    d = parse_dim_labels(inst.attrs["dim_labels"])
    window = tuple(inst.attrs["window"])
    fg = inst.attrs.get("feature_group_count", 1)
    bg = inst.attrs.get("batch_group_count", 1)
    nsp = len(window)
    out_dims = inst.shape.dimensions
    taps = prod(w.size for w in window)
    # to [N, spatial..., C] and [O, spatial..., I]
    x = e.transpose(e.convert(lhs, et), (d.lhs_batch, *d.lhs_spatial, d.lhs_feature))
    k = e.transpose(e.convert(rhs, et), (d.rhs_out, *d.rhs_spatial, d.rhs_in))
    n = x.shape.dimensions[0]
    o, ci = k.shape.dimensions[0], k.shape.dimensions[-1]
    out_sp = [window_output_size(x.shape.dimensions[1 + i], w) for i, w in enumerate(window)]
    npos = prod(out_sp)
    nb = n // bg
    canon = (nb, *out_sp, o)
    if fg == 1 and bg == 1 and 0 not in out_dims and taps and ci:
        return _plain_convolution(e, inst, d, window, et, out_sp)
    if 0 in out_dims or taps == 0 or ci == 0:
        res = e.broadcast(e.scalar(0, et), canon)
    else:
        xp = e.op("pad", [x, e.scalar(0, et)], {"padding": _pad_config(window, 1, nsp + 2)})
        views = e.taps(xp, window, 1, out_sp)  # each [N, out..., C]
        kk = taps * ci
        if fg > 1:
            g = fg
            parts = [e.reshape(v, (n * npos, g, 1, ci)) for v in views]
            pat = parts[0] if len(parts) == 1 else e.op("concatenate", parts,
                                                        {"dimension": 2})
            pat = e.reshape(pat, (n * npos, g, kk))
            # kernel [G*Og, sp..., Cg] -> [G, Og, T*Cg]
            kern = e.reshape(k, (g, o // g, kk))
            prodt = e.op("dot", [pat, kern], {"lhs_batch_dims": (1,), "rhs_batch_dims": (0,),
                                              "lhs_contracting_dims": (2,),
                                              "rhs_contracting_dims": (2,)},
                         hint=Shape(et, ()))  # [G, M, Og]
            res = e.reshape(e.transpose(prodt, (1, 0, 2)), canon)
        else:
            pat = views[0] if len(views) == 1 else e.op("concatenate", views,
                                                        {"dimension": nsp + 1})
            kern = e.reshape(k, (bg, o // bg, kk))
            pat = e.reshape(pat, (bg, nb * npos, kk))
            prodt = e.op("dot", [pat, kern], {"lhs_batch_dims": (0,), "rhs_batch_dims": (0,),
                                              "lhs_contracting_dims": (2,),
                                              "rhs_contracting_dims": (2,)},
                         hint=Shape(et, ()))  # [B, Nb*P, Ob]
            res = e.reshape(prodt, (bg, nb, *out_sp, o // bg))
            res = e.transpose(res, (*range(1, nsp + 2), 0, nsp + 2))
            res = e.reshape(res, canon)
    perm = [0] * (nsp + 2)
    perm[d.out_batch] = 0
    for i, s in enumerate(d.out_spatial):
        perm[s] = 1 + i
    perm[d.out_feature] = nsp + 1
    return e.transpose(res, tuple(perm))


def _plain_convolution(e: _Emit, inst: Instruction, d: Any, window: tuple[WindowDim, ...],
                       et: str, out_sp: list[int]) -> Instruction:
    """No groups: channels-first patches [T, C, N, out...] (taps outermost, so building
    them reads each tap's slice in order) and kernel [O, T, C]; one dot gives
    [O, N, out...], transposed to the output's labels."""
    lhs, rhs = inst.operands
    nsp = len(window)
    if prod(out_sp) < prod(w.size for w in window):
        return _position_major_convolution(e, inst, d, window, et, out_sp)
    c, o = lhs.shape.dimensions[d.lhs_feature], rhs.shape.dimensions[d.rhs_out]
    m_in = lhs.shape.size // max(c, 1)
    m_out = inst.shape.size // max(o, 1)
    if o * (m_in + m_out) < c * m_out:  # (fewer output than input features: a gradient)
        return _tap_sum_convolution(e, inst, d, window, et)
    x = e.transpose(e.convert(lhs, et), (d.lhs_feature, d.lhs_batch, *d.lhs_spatial))
    k = e.transpose(e.convert(rhs, et), (d.rhs_out, *d.rhs_spatial, d.rhs_in))
    o, ci = k.shape.dimensions[0], k.shape.dimensions[-1]
    taps = prod(w.size for w in window)
    xp = e.op("pad", [x, e.scalar(0, et)], {"padding": _pad_config(window, 2, nsp + 2)})
    # (a leading unit dimension as a broadcast: its element generator only drops an index,
    # where a reshape's would linearize and divide)
    views = [e.op("broadcast", [v], {"dimensions": tuple(range(1, nsp + 3))},
                  hint=Shape(et, (1, *v.shape.dimensions)))
             for v in e.taps(xp, window, 2, out_sp)]
    pat = views[0] if len(views) == 1 else e.op("concatenate", views, {"dimension": 0})
    kern = e.reshape(k, (o, taps, ci))
    res = e.op("dot", [kern, pat], {"lhs_batch_dims": (), "rhs_batch_dims": (),
                                    "lhs_contracting_dims": (1, 2),
                                    "rhs_contracting_dims": (0, 1)},
               hint=Shape(et, ()))  # [O, N, out...]
    perm = [0] * (nsp + 2)
    perm[d.out_feature] = 0
    perm[d.out_batch] = 1
    for i, s in enumerate(d.out_spatial):
        perm[s] = 2 + i
    return e.transpose(res, tuple(perm))


def _tap_sum_convolution(e: _Emit, inst: Instruction, d: Any,
                         window: tuple[WindowDim, ...], et: str) -> Instruction:
    """No groups, more input than output features (an input gradient): one dot first,
    Y = x [N, sp..., C] . W [C, T*O], then out = sum over taps t of tap t's slice of the
    padded, dilated Y[..., t*O:(t+1)*O] (each input pixel's contribution to every output
    position its taps reach): the fused loop reads T*O values per output position where
    im2col's would write T*C."""
    lhs, rhs = inst.operands
    nsp = len(window)
    x = e.transpose(e.convert(lhs, et), (d.lhs_batch, *d.lhs_spatial, d.lhs_feature))
    k = e.transpose(e.convert(rhs, et), (d.rhs_in, *d.rhs_spatial, d.rhs_out))
    ci, o = k.shape.dimensions[0], k.shape.dimensions[-1]
    taps = prod(w.size for w in window)
    y = e.op("dot", [x, e.reshape(k, (ci, taps * o))],
             {"lhs_batch_dims": (), "rhs_batch_dims": (),
              "lhs_contracting_dims": (nsp + 1,), "rhs_contracting_dims": (0,)},
             hint=Shape(et, ()))  # [N, sp..., T*O]
    zero = e.scalar(0, et)
    out_sp = [window_output_size(n, w) for n, w in zip(x.shape.dimensions[1:-1], window)]
    acc = None
    for t, tap in enumerate(itertools.product(*(range(w.size) for w in window))):
        dims = y.shape.dimensions
        part = e.op("slice", [y], {"slice": tuple([(0, n, 1) for n in dims[:-1]]
                                                  + [(t * o, (t + 1) * o, 1)])})
        yp = e.op("pad", [part, zero], {"padding": _pad_config(window, 1, nsp + 2)})
        spec = [(0, n, 1) for n in yp.shape.dimensions]
        for k_, (tt, w, n) in enumerate(zip(tap, window, out_sp)):
            start = tt * w.rhs_dilate
            spec[1 + k_] = (start, start + (n - 1) * w.stride + 1, w.stride)
        v = e.op("slice", [yp], {"slice": tuple(spec)})  # [N, out..., O]
        acc = v if acc is None else e.op("add", [acc, v])
    assert acc is not None
    perm = [0] * (nsp + 2)
    perm[d.out_batch] = 0
    for i, s_ in enumerate(d.out_spatial):
        perm[s_] = 1 + i
    perm[d.out_feature] = nsp + 1
    return e.transpose(acc, tuple(perm))


def _position_major_convolution(e: _Emit, inst: Instruction, d: Any,
                                window: tuple[WindowDim, ...], et: str,
                                out_sp: list[int]) -> Instruction:
    """No groups, fewer output positions than taps (a kernel's gradient: the "kernel" is
    a whole cotangent image): one slice per output position holding its whole window,
    patches [P, N, C, taps...], kernel [O, C, taps...]; one dot gives [O, P, N]."""
    lhs, rhs = inst.operands
    nsp = len(window)
    x = e.transpose(e.convert(lhs, et), (d.lhs_batch, d.lhs_feature, *d.lhs_spatial))
    k = e.transpose(e.convert(rhs, et), (d.rhs_out, d.rhs_in, *d.rhs_spatial))
    o = k.shape.dimensions[0]
    xp = e.op("pad", [x, e.scalar(0, et)], {"padding": _pad_config(window, 2, nsp + 2)})
    dims = xp.shape.dimensions
    views = []
    for pos in itertools.product(*(range(n) for n in out_sp)):
        spec = [(0, dims[0], 1), (0, dims[1], 1)]
        for p, w in zip(pos, window):
            start = p * w.stride
            spec.append((start, start + (w.size - 1) * w.rhs_dilate + 1, w.rhs_dilate))
        v = e.op("slice", [xp], {"slice": tuple(spec)})  # [N, C, taps...]
        views.append(e.op("broadcast", [v], {"dimensions": tuple(range(1, nsp + 3))},
                          hint=Shape(et, (1, *v.shape.dimensions))))
    pat = views[0] if len(views) == 1 else e.op("concatenate", views, {"dimension": 0})
    contract = tuple(range(1, nsp + 2))
    res = e.op("dot", [k, pat], {"lhs_batch_dims": (), "rhs_batch_dims": (),
                                 "lhs_contracting_dims": contract,
                                 "rhs_contracting_dims": tuple(c + 1 for c in contract)},
               hint=Shape(et, ()))  # [O, P, N]
    res = e.reshape(res, (o, *out_sp, x.shape.dimensions[0]))
    perm = [0] * (nsp + 2)
    perm[d.out_feature] = 0
    perm[d.out_batch] = nsp + 1
    for i, s in enumerate(d.out_spatial):
        perm[s] = 1 + i
    return e.transpose(res, tuple(perm))


def _is_identity(op: str, init: Instruction) -> bool:
    """Whether init is the exact identity of maximum/minimum (so it may be dropped)."""
    if init.opcode != "constant" or op not in ("maximum", "minimum"):
        return False
    v = np.asarray(init.value).reshape(())
    if v.dtype.kind == "f":
        return bool(v == (-np.inf if op == "maximum" else np.inf))
    if v.dtype.kind == "b":
        return bool(v == (op == "minimum"))
    info = np.iinfo(v.dtype)
    return bool(v == (info.min if op == "maximum" else info.max))


def _expand_reduce_window(comp: Computation, inst: Instruction) -> Instruction:
    e = _Emit(comp, inst)
    x, init = inst.operands
    window = tuple(inst.attrs["window"])
    out = list(inst.shape.dimensions)
    if 0 in out or any(w.size == 0 for w in window):
        return e.broadcast(init, tuple(out))
    xp = e.op("pad", [x, init], {"padding": _pad_config(window, 0, len(window))})
    views = e.taps(xp, window, 0, out)
    fn = inst.to_apply
    op = plain_binary_opcode(fn)
    if op in _PLAIN:
        acc = views[0] if _is_identity(op, init) else e.op(
            op, [e.broadcast(init, tuple(out)), views[0]])
        for v in views[1:]:
            acc = e.op(op, [acc, v])
        return acc
    rank = len(out)
    stacked = [e.reshape(v, (*out, 1)) for v in views]
    cat = stacked[0] if len(stacked) == 1 else e.op("concatenate", stacked,
                                                    {"dimension": rank})
    return e.op("reduce", [cat, init], {"dimensions": (rank,)}, called=[fn])


class WindowExpansion(HloPass):
    """Expands convolution and reduce-window into simpler ops (module docstring)."""

    name = "window-expansion"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            for inst in comp.post_order():
                if inst.opcode == "convolution":
                    new = _expand_convolution(comp, inst)
                elif inst.opcode == "reduce-window":
                    new = _expand_reduce_window(comp, inst)
                else:
                    continue
                comp.replace_instruction(inst, new)
                changed = True
        return changed


__all__ = ["WindowExpansion"]
