"""Shape inference: one rule per opcode, computing an instruction's result shape.

Input: the opcode, operand shapes, attrs, called computations, and for opcodes whose result
is not determined by their operands (parameter, constant, iota, broadcast, reshape,
convert, bitcast-convert, custom-call, and the element type of dot) a `hint` shape.
Output: the result Shape (without layout). Raises `ShapeError` with a message naming the
opcode and the offending shapes on any mismatch. Layouts are ignored throughout.
Elementwise opcodes share one rule driven by their opcode row (arity, and the `types`
column for the operands' element type), so a new elementwise opcode needs no rule here;
only those with a result type of their own (compare, is-finite, convert, ...) have one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod
from typing import TYPE_CHECKING, Any

from ember.hlo.opcodes import COMPARISON_DIRECTIONS, OPCODES, info
from ember.hlo.shape import (
    Shape,
    bit_width,
    complex_component,
    is_complex,
    is_float,
    is_integral,
)

if TYPE_CHECKING:
    from ember.hlo.ir import Computation


class ShapeError(ValueError):
    """An HLO instruction whose operands, attributes and result do not fit together."""


Rule = Callable[[str, list[Shape], dict[str, Any], list["Computation"], Shape | None], Shape]
RULES: dict[str, Rule] = {}


def _fail(opcode: str, msg: str, shapes: Sequence[Shape] = ()) -> ShapeError:
    args = ", ".join(str(s) for s in shapes)
    return ShapeError(f"{opcode}({args}): {msg}")


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
        return fn

    return register


def _array(opcode: str, s: Shape, shapes: list[Shape]) -> None:
    if s.is_tuple:
        raise _fail(opcode, "expected an array operand, got a tuple", shapes)


def _need_hint(opcode: str, hint: Shape | None) -> Shape:
    if hint is None:
        raise _fail(opcode, "needs an explicit result shape")
    return hint.without_layout()


def _check_type(opcode: str, et: str, shapes: list[Shape]) -> None:
    """The operands' element type against the opcode row's `types` class."""
    types = info(opcode).types
    if types == "int" and not is_integral(et):
        raise _fail(opcode, f"needs an integer element type, got {et}", shapes)
    if types == "bits" and not (is_integral(et) or et == "pred"):
        raise _fail(opcode, f"needs pred or integer operands, got {et}", shapes)
    if types == "float" and not is_float(et):
        raise _fail(opcode, f"needs a floating-point element type, got {et}", shapes)
    if types == "inexact" and not (is_float(et) or is_complex(et)):
        raise _fail(opcode, f"needs a floating-point or complex element type, got {et}",
                    shapes)
    if types == "complex" and not is_complex(et):
        raise _fail(opcode, f"needs a complex element type, got {et}", shapes)
    if types == "numeric" and et == "pred":
        raise _fail(opcode, "is not defined on pred", shapes)


def _same_arrays(opcode: str, shapes: list[Shape]) -> Shape:
    for s in shapes:
        _array(opcode, s, shapes)
    first = shapes[0].without_layout()
    for s in shapes[1:]:
        if s.without_layout() != first:
            raise _fail(opcode, "operands must have equal shapes (broadcasts are explicit)",
                        shapes)
    return first


@_rule(*[n for n, r in OPCODES.items() if r.elementwise and n not in (
    "compare", "select", "clamp", "convert", "bitcast-convert", "is-finite", "abs", "real",
    "imag", "complex")])
def _elementwise(opcode, shapes, attrs, called, hint):
    row = info(opcode)
    if len(shapes) != row.arity:
        raise _fail(opcode, f"takes {row.arity} operands, got {len(shapes)}", shapes)
    s = _same_arrays(opcode, shapes)
    _check_type(opcode, s.element_type, shapes)
    return s


@_rule("is-finite")
def _is_finite(opcode, shapes, attrs, called, hint):
    s = _elementwise(opcode, shapes, attrs, called, hint)
    return s.with_element_type("pred")


@_rule("abs", "real", "imag")
def _complex_to_real(opcode, shapes, attrs, called, hint):
    """abs, real, imag: a complex operand gives its component type (|c64| is f32)."""
    s = _elementwise(opcode, shapes, attrs, called, hint)
    et = s.element_type
    return s.with_element_type(complex_component(et)) if is_complex(et) else s


@_rule("complex")
def _complex(opcode, shapes, attrs, called, hint):
    """complex(f32, f32) -> c64, complex(f64, f64) -> c128."""
    s = _elementwise(opcode, shapes, attrs, called, hint)
    pairs = {"f32": "c64", "f64": "c128"}
    if s.element_type not in pairs:
        raise _fail(opcode, f"needs f32 or f64 operands, got {s.element_type}", shapes)
    return s.with_element_type(pairs[s.element_type])


@_rule("compare")
def _compare(opcode, shapes, attrs, called, hint):
    if len(shapes) != 2:
        raise _fail(opcode, "takes 2 operands", shapes)
    s = _same_arrays(opcode, shapes)
    if attrs.get("direction") not in COMPARISON_DIRECTIONS:
        raise _fail(opcode, f"needs direction in {COMPARISON_DIRECTIONS}, "
                    f"got {attrs.get('direction')!r}", shapes)
    return s.with_element_type("pred")


@_rule("select")
def _select(opcode, shapes, attrs, called, hint):
    if len(shapes) != 3:
        raise _fail(opcode, "takes 3 operands", shapes)
    p, t, f = shapes
    out = _same_arrays(opcode, [t, f])
    if p.element_type != "pred":
        raise _fail(opcode, "predicate must be pred", shapes)
    if p.dimensions not in ((), out.dimensions):
        raise _fail(opcode, "predicate must be a scalar or match the operands", shapes)
    return out


@_rule("clamp")
def _clamp(opcode, shapes, attrs, called, hint):
    if len(shapes) != 3:
        raise _fail(opcode, "takes 3 operands", shapes)
    lo, x, hi = shapes
    for b in (lo, hi):
        _array(opcode, b, shapes)
        if b.element_type != x.element_type or b.dimensions not in ((), x.dimensions):
            raise _fail(opcode, "bounds must be scalars or match the operand", shapes)
    return x.without_layout()


@_rule("convert")
def _convert(opcode, shapes, attrs, called, hint):
    out = _need_hint(opcode, hint)
    (x,) = shapes
    _array(opcode, x, shapes)
    if x.dimensions != out.dimensions:
        raise _fail(opcode, f"result {out} must keep the operand's dimensions", shapes)
    return out


def bitcast_convert_dimensions(dims: tuple[int, ...], from_type: str,
                               to_type: str) -> tuple[int, ...]:
    """Result dimensions of bitcast-convert, as XLA defines it.

    Equal widths keep the dimensions. To a type k times narrower appends a minor dimension
    of size k; to a type k times wider drops the minor dimension, which must be k.
    Raises ValueError otherwise (pred only converts to and from 8-bit types).
    """
    a, b = bit_width(from_type), bit_width(to_type)
    if a == b:
        return dims
    if "pred" in (from_type, to_type):
        raise ValueError("pred bitcasts only to types of its own width")
    if a > b:
        return dims + (a // b,)
    if not dims or dims[-1] != b // a:
        raise ValueError(f"widening {from_type} -> {to_type} needs a minor dimension of "
                         f"size {b // a}")
    return dims[:-1]


@_rule("bitcast-convert")
def _bitcast_convert(opcode, shapes, attrs, called, hint):
    out = _need_hint(opcode, hint)
    (x,) = shapes
    _array(opcode, x, shapes)
    try:
        dims = bitcast_convert_dimensions(x.dimensions, x.element_type, out.element_type)
    except ValueError as e:
        raise _fail(opcode, str(e), shapes) from None
    if dims != out.dimensions:
        raise _fail(opcode, f"result {out} should be "
                    f"{Shape(out.element_type, dims)}", shapes)
    return out


@_rule("map")
def _map(opcode, shapes, attrs, called, hint):
    s = _same_arrays(opcode, shapes)
    (comp,) = called
    root = comp.root.shape
    return Shape(root.element_type, s.dimensions)


@_rule("broadcast")
def _broadcast(opcode, shapes, attrs, called, hint):
    out = _need_hint(opcode, hint)
    (x,) = shapes
    dims = tuple(attrs.get("dimensions", ()))
    if len(dims) != x.rank:
        raise _fail(opcode, f"dimensions={list(dims)} must have one entry per operand dim",
                    shapes)
    if x.element_type != out.element_type:
        raise _fail(opcode, f"result {out} must keep the element type", shapes)
    for i, d in enumerate(dims):
        if not 0 <= d < out.rank or out.dimensions[d] != x.dimensions[i]:
            raise _fail(opcode, f"operand dim {i} does not map onto result {out} dim {d}",
                        shapes)
    if len(set(dims)) != len(dims):
        raise _fail(opcode, "dimensions must be distinct", shapes)
    return out


@_rule("reshape")
def _reshape(opcode, shapes, attrs, called, hint):
    out = _need_hint(opcode, hint)
    (x,) = shapes
    if x.size != out.size or x.element_type != out.element_type:
        raise _fail(opcode, f"cannot reshape to {out}", shapes)
    return out


@_rule("transpose")
def _transpose(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    perm = tuple(attrs.get("dimensions", ()))
    if sorted(perm) != list(range(x.rank)):
        raise _fail(opcode, f"dimensions={list(perm)} is not a permutation", shapes)
    return Shape(x.element_type, tuple(x.dimensions[p] for p in perm))


@_rule("reverse")
def _reverse(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    dims = attrs.get("dimensions", ())
    if any(not 0 <= d < x.rank for d in dims) or len(set(dims)) != len(dims):
        raise _fail(opcode, f"bad dimensions={list(dims)}", shapes)
    return x.without_layout()


@_rule("slice")
def _slice(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    spec = attrs.get("slice", ())
    if len(spec) != x.rank:
        raise _fail(opcode, "slice needs one [start:limit:stride] per dimension", shapes)
    dims = []
    for (start, limit, stride), d in zip(spec, x.dimensions):
        if not (0 <= start <= limit <= d and stride >= 1):
            raise _fail(opcode, f"bad slice [{start}:{limit}:{stride}] of a dim of {d}",
                        shapes)
        dims.append(-(-(limit - start) // stride))
    return Shape(x.element_type, tuple(dims))


def _scalar_indices(opcode: str, idx: list[Shape], rank: int, shapes: list[Shape]) -> None:
    if len(idx) != rank:
        raise _fail(opcode, f"needs {rank} scalar start indices, got {len(idx)}", shapes)
    for s in idx:
        if s.dimensions or not is_integral(s.element_type):
            raise _fail(opcode, "start indices must be integer scalars", shapes)


@_rule("dynamic-slice")
def _dynamic_slice(opcode, shapes, attrs, called, hint):
    x, *idx = shapes
    sizes = tuple(attrs.get("dynamic_slice_sizes", ()))
    _scalar_indices(opcode, idx, x.rank, shapes)
    if len(sizes) != x.rank or any(not 0 <= s <= d for s, d in zip(sizes, x.dimensions)):
        raise _fail(opcode, f"bad dynamic_slice_sizes={list(sizes)}", shapes)
    return Shape(x.element_type, sizes)


@_rule("dynamic-update-slice")
def _dynamic_update_slice(opcode, shapes, attrs, called, hint):
    x, upd, *idx = shapes
    _scalar_indices(opcode, idx, x.rank, shapes)
    if upd.element_type != x.element_type or upd.rank != x.rank or any(
            u > d for u, d in zip(upd.dimensions, x.dimensions)):
        raise _fail(opcode, "update must fit inside the operand", shapes)
    return x.without_layout()


@_rule("gather")
def _gather(opcode, shapes, attrs, called, hint):
    x, idx = shapes
    if not is_integral(idx.element_type):
        raise _fail(opcode, "indices must be integers", shapes)
    ivd = attrs["index_vector_dim"]
    sizes = tuple(attrs["slice_sizes"])
    offset_dims = tuple(attrs["offset_dims"])
    collapsed = tuple(attrs["collapsed_slice_dims"])
    start_map = tuple(attrs["start_index_map"])
    if len(sizes) != x.rank or any(s > d for s, d in zip(sizes, x.dimensions)):
        raise _fail(opcode, f"bad slice_sizes={list(sizes)}", shapes)
    if any(sizes[d] != 1 for d in collapsed):
        raise _fail(opcode, "collapsed_slice_dims must have slice size 1", shapes)
    batch = [d for i, d in enumerate(idx.dimensions) if i != ivd]
    nvec = idx.dimensions[ivd] if ivd < idx.rank else 1
    if nvec != len(start_map):
        raise _fail(opcode, "start_index_map must have one entry per index component",
                    shapes)
    offsets = [sizes[d] for d in range(x.rank) if d not in collapsed]
    if len(offsets) != len(offset_dims):
        raise _fail(opcode, "offset_dims must list every non-collapsed dimension", shapes)
    rank = len(batch) + len(offsets)
    dims: list[int] = []
    bi = oi = 0
    for i in range(rank):
        if i in offset_dims:
            dims.append(offsets[oi])
            oi += 1
        else:
            dims.append(batch[bi])
            bi += 1
    return Shape(x.element_type, tuple(dims))


@_rule("scatter")
def _scatter(opcode, shapes, attrs, called, hint):
    x, idx, upd = shapes
    if not is_integral(idx.element_type) or upd.element_type != x.element_type:
        raise _fail(opcode, "indices must be integers and updates match the operand", shapes)
    window = tuple(attrs["update_window_dims"])
    inserted = tuple(attrs["inserted_window_dims"])
    if len(window) + len(inserted) != x.rank:
        raise _fail(opcode, "update_window_dims + inserted_window_dims must cover the "
                    "operand's dimensions", shapes)
    return x.without_layout()


@_rule("pad")
def _pad(opcode, shapes, attrs, called, hint):
    x, v = shapes
    cfg = attrs.get("padding", ())
    if v.dimensions or v.element_type != x.element_type:
        raise _fail(opcode, "padding value must be a scalar of the operand's type", shapes)
    if len(cfg) != x.rank:
        raise _fail(opcode, "padding needs one lo_hi_interior per dimension", shapes)
    dims = []
    for (lo, hi, interior), d in zip(cfg, x.dimensions):
        n = lo + hi + d + max(d - 1, 0) * interior
        if interior < 0 or n < 0:
            raise _fail(opcode, f"bad padding {lo}_{hi}_{interior}", shapes)
        dims.append(n)
    return Shape(x.element_type, tuple(dims))


@_rule("concatenate")
def _concatenate(opcode, shapes, attrs, called, hint):
    if not shapes:
        raise _fail(opcode, "needs at least one operand")
    dim = attrs.get("dimension")
    x = shapes[0]
    if dim is None or not 0 <= dim < x.rank:
        raise _fail(opcode, f"bad dimension {dim}", shapes)
    total = 0
    for s in shapes:
        if s.element_type != x.element_type or s.rank != x.rank or any(
                a != b for i, (a, b) in enumerate(zip(s.dimensions, x.dimensions))
                if i != dim):
            raise _fail(opcode, "operands must agree except along the dimension", shapes)
        total += s.dimensions[dim]
    dims = list(x.dimensions)
    dims[dim] = total
    return Shape(x.element_type, tuple(dims))


@_rule("iota")
def _iota(opcode, shapes, attrs, called, hint):
    out = _need_hint(opcode, hint)
    if not 0 <= attrs.get("iota_dimension", -1) < out.rank:
        raise _fail(opcode, f"bad iota_dimension for {out}")
    return out


@_rule("constant")
def _constant(opcode, shapes, attrs, called, hint):
    from ember.hlo.shape import element_type_from_numpy

    v = attrs["value"]
    return Shape(element_type_from_numpy(v.dtype), tuple(v.shape))


@_rule("parameter", "custom-call")
def _given(opcode, shapes, attrs, called, hint):
    if hint is None:
        raise _fail(opcode, "needs an explicit result shape")
    return hint


def _check_params(opcode: str, comp: Computation, want: list[Shape], shapes) -> None:
    got = [p.shape.without_layout() for p in comp.parameters]
    if got != [w.without_layout() for w in want]:
        raise _fail(opcode, f"computation %{comp.name} takes "
                    f"({', '.join(map(str, got))}), given ({', '.join(map(str, want))})",
                    shapes)


@_rule("reduce")
def _reduce(opcode, shapes, attrs, called, hint):
    if len(shapes) % 2 or not shapes:
        raise _fail(opcode, "takes N inputs and N init values", shapes)
    n = len(shapes) // 2
    inputs, inits = shapes[:n], shapes[n:]
    dims = tuple(attrs.get("dimensions", ()))
    x = inputs[0]
    for s in inputs:
        if s.dimensions != x.dimensions:
            raise _fail(opcode, "inputs must have equal dimensions", shapes)
    for s, i in zip(inputs, inits):
        if i.dimensions or i.element_type != s.element_type:
            raise _fail(opcode, "init values must be scalars of the inputs' types", shapes)
    if any(not 0 <= d < x.rank for d in dims) or len(set(dims)) != len(dims):
        raise _fail(opcode, f"bad dimensions={list(dims)}", shapes)
    (comp,) = called
    scalars = [Shape(s.element_type, ()) for s in inits]
    _check_params(opcode, comp, scalars + scalars, shapes)
    root = comp.root.shape.without_layout()
    want = scalars[0] if n == 1 else Shape.tuple_of(scalars)
    if root != want:
        raise _fail(opcode, f"to_apply must return {want}, returns {root}", shapes)
    kept = tuple(d for i, d in enumerate(x.dimensions) if i not in dims)
    outs = [Shape(s.element_type, kept) for s in inputs]
    return outs[0] if n == 1 else Shape.tuple_of(outs)


@_rule("sort")
def _sort(opcode, shapes, attrs, called, hint):
    if not shapes:
        raise _fail(opcode, "needs operands")
    x = shapes[0]
    for s in shapes:
        if s.dimensions != x.dimensions:
            raise _fail(opcode, "operands must have equal dimensions", shapes)
    dim = attrs.get("dimension", -1)
    if not 0 <= dim < max(x.rank, 1):
        raise _fail(opcode, f"bad dimension {dim}", shapes)
    (comp,) = called
    params = []
    for s in shapes:
        params += [Shape(s.element_type, ())] * 2
    _check_params(opcode, comp, params, shapes)
    if comp.root.shape.without_layout() != Shape("pred", ()):
        raise _fail(opcode, "comparator must return pred[]", shapes)
    outs = [s.without_layout() for s in shapes]
    return outs[0] if len(outs) == 1 else Shape.tuple_of(outs)


@_rule("dot")
def _dot(opcode, shapes, attrs, called, hint):
    lhs, rhs = shapes
    lc, rc = tuple(attrs.get("lhs_contracting_dims", ())), tuple(
        attrs.get("rhs_contracting_dims", ()))
    lb, rb = tuple(attrs.get("lhs_batch_dims", ())), tuple(attrs.get("rhs_batch_dims", ()))
    if lhs.element_type != rhs.element_type:
        raise _fail(opcode, "operands must have one element type", shapes)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise _fail(opcode, "contracting/batch dimension lists must pair up", shapes)
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if not (0 <= a < lhs.rank and 0 <= b < rhs.rank):
            raise _fail(opcode, "dimension number out of range", shapes)
        if lhs.dimensions[a] != rhs.dimensions[b]:
            raise _fail(opcode, f"lhs dim {a} ({lhs.dimensions[a]}) != rhs dim {b} "
                        f"({rhs.dimensions[b]})", shapes)
    if len(set(lc + lb)) != len(lc + lb) or len(set(rc + rb)) != len(rc + rb):
        raise _fail(opcode, "a dimension is listed twice", shapes)
    dims = [lhs.dimensions[d] for d in lb]
    dims += [d for i, d in enumerate(lhs.dimensions) if i not in lc + lb]
    dims += [d for i, d in enumerate(rhs.dimensions) if i not in rc + rb]
    et = hint.element_type if hint is not None else lhs.element_type
    return Shape(et, tuple(dims))


@_rule("convolution")
def _convolution(opcode, shapes, attrs, called, hint):
    from ember.hlo.window import parse_dim_labels, window_output_size

    lhs, rhs = shapes
    if lhs.element_type != rhs.element_type:
        raise _fail(opcode, "operands must have one element type", shapes)
    try:
        d = parse_dim_labels(attrs.get("dim_labels", ""))
    except ValueError as e:
        raise _fail(opcode, str(e), shapes) from None
    window = tuple(attrs.get("window", ()))
    nsp = len(d.lhs_spatial)
    if lhs.rank != nsp + 2 or rhs.rank != nsp + 2 or len(window) != nsp:
        raise _fail(opcode, f"dim_labels {attrs['dim_labels']} and a window of {len(window)} "
                    "dimensions do not fit the operands' ranks", shapes)
    fg = attrs.get("feature_group_count", 1)
    bg = attrs.get("batch_group_count", 1)
    lb, lf = lhs.dimensions[d.lhs_batch], lhs.dimensions[d.lhs_feature]
    ki, ko = rhs.dimensions[d.rhs_in], rhs.dimensions[d.rhs_out]
    if fg < 1 or bg < 1 or (fg > 1 and bg > 1):
        raise _fail(opcode, f"bad group counts {fg}, {bg}", shapes)
    if lf % fg or lf // fg != ki or ko % fg:
        raise _fail(opcode, f"input features {lf} / feature_group_count {fg} must equal the "
                    f"kernel's input features {ki}, and {fg} divide its output features", shapes)
    if lb % bg or ko % bg:
        raise _fail(opcode, f"batch_group_count {bg} must divide the batch {lb} and the "
                    f"kernel's output features {ko}", shapes)
    for w, k in zip(window, d.rhs_spatial):
        if w.size != rhs.dimensions[k] or w.stride < 1 or w.lhs_dilate < 1 or w.rhs_dilate < 1:
            raise _fail(opcode, f"window {w} does not fit the kernel", shapes)
    out = [0] * (nsp + 2)
    out[d.out_batch] = lb // bg
    out[d.out_feature] = ko
    for w, li, oi in zip(window, d.lhs_spatial, d.out_spatial):
        out[oi] = window_output_size(lhs.dimensions[li], w)
    et = hint.element_type if hint is not None else lhs.element_type
    return Shape(et, tuple(out))


@_rule("reduce-window")
def _reduce_window(opcode, shapes, attrs, called, hint):
    from ember.hlo.window import window_output_size

    x, init = shapes
    if init.dimensions or init.element_type != x.element_type:
        raise _fail(opcode, "init value must be a scalar of the operand's type", shapes)
    window = tuple(attrs.get("window", ()))
    if len(window) != x.rank:
        raise _fail(opcode, "window needs one dimension per operand dimension", shapes)
    if any(w.stride < 1 or w.lhs_dilate < 1 or w.rhs_dilate < 1 or w.size < 0
           for w in window):
        raise _fail(opcode, "window strides and dilations must be positive", shapes)
    (comp,) = called
    s = Shape(x.element_type, ())
    _check_params(opcode, comp, [s, s], shapes)
    return Shape(x.element_type, tuple(window_output_size(n, w)
                                       for n, w in zip(x.dimensions, window)))


@_rule("tuple")
def _tuple(opcode, shapes, attrs, called, hint):
    return Shape.tuple_of([s.without_layout() for s in shapes])


@_rule("opt-barrier")
def _opt_barrier(opcode, shapes, attrs, called, hint):
    (t,) = shapes
    return t.without_layout()


@_rule("get-tuple-element")
def _gte(opcode, shapes, attrs, called, hint):
    (t,) = shapes
    i = attrs.get("index", -1)
    if not t.is_tuple or not 0 <= i < len(t.tuple_shapes):
        raise _fail(opcode, f"index {i} is not an element of the operand", shapes)
    return t.tuple_shapes[i].without_layout()


@_rule("while")
def _while(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    cond, body = called
    _check_params(opcode, cond, [x], shapes)
    _check_params(opcode, body, [x], shapes)
    if cond.root.shape.without_layout() != Shape("pred", ()):
        raise _fail(opcode, "condition must return pred[]", shapes)
    if body.root.shape.without_layout() != x.without_layout():
        raise _fail(opcode, f"body must return the loop state {x}", shapes)
    return x.without_layout()


@_rule("conditional")
def _conditional(opcode, shapes, attrs, called, hint):
    sel, *args = shapes
    if sel.dimensions or sel.element_type not in ("pred", "s32"):
        raise _fail(opcode, "selector must be pred[] or s32[]", shapes)
    if sel.element_type == "pred" and len(called) != 2:
        raise _fail(opcode, "a pred selector needs exactly 2 branches", shapes)
    if len(args) != len(called) or not called:
        raise _fail(opcode, "needs one operand per branch", shapes)
    out = called[0].root.shape.without_layout()
    for comp, a in zip(called, args):
        _check_params(opcode, comp, [a], shapes)
        if comp.root.shape.without_layout() != out:
            raise _fail(opcode, "branches must return one shape", shapes)
    return out


@_rule("call", "fusion")
def _call(opcode, shapes, attrs, called, hint):
    (comp,) = called
    _check_params(opcode, comp, list(shapes), shapes)
    return comp.root.shape.without_layout()


def infer_shape(opcode: str, operand_shapes: Sequence[Shape], attrs: dict[str, Any] | None = None,
                called: Sequence[Computation] = (), hint: Shape | None = None) -> Shape:
    """The result shape of `opcode` applied to operands of `operand_shapes`."""
    info(opcode)  # unknown opcode -> ValueError
    rule = RULES.get(opcode)
    if rule is None:
        raise _fail(opcode, "has no shape rule")
    row = OPCODES[opcode]
    if row.arity is not None and len(operand_shapes) != row.arity:
        raise _fail(opcode, f"takes {row.arity} operands, got {len(operand_shapes)}",
                    operand_shapes)
    return rule(opcode, list(operand_shapes), dict(attrs or {}), list(called), hint)


def element_count(shape: Shape) -> int:
    return prod(shape.dimensions)


def _square_matrices(opcode: str, a: Shape, shapes: list[Shape]) -> None:
    _array(opcode, a, shapes)
    if a.element_type not in ("f32", "f64", "c64", "c128"):
        raise _fail(opcode, f"needs an f32, f64, c64 or c128 operand, got {a.element_type}",
                    shapes)
    if a.rank < 2 or a.dimensions[-1] != a.dimensions[-2]:
        raise _fail(opcode, "needs square matrices in the last two dimensions", shapes)


@_rule("cholesky")
def _cholesky(opcode, shapes, attrs, called, hint):
    (a,) = shapes
    _square_matrices(opcode, a, shapes)
    return a.without_layout()


@_rule("triangular-solve")
def _triangular_solve(opcode, shapes, attrs, called, hint):
    a, b = shapes
    _square_matrices(opcode, a, shapes)
    _array(opcode, b, shapes)
    if b.element_type != a.element_type or b.rank != a.rank:
        raise _fail(opcode, "operands must have one element type and rank", shapes)
    if b.dimensions[:-2] != a.dimensions[:-2]:
        raise _fail(opcode, "operands must have equal batch dimensions", shapes)
    m = a.dimensions[-1]
    side = b.dimensions[-2] if attrs.get("left_side") else b.dimensions[-1]
    if side != m:
        raise _fail(opcode, "b's solved dimension must match a's", shapes)
    if attrs.get("transpose_a", "NO_TRANSPOSE") not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise _fail(opcode, f"bad transpose_a {attrs.get('transpose_a')}", shapes)
    return b.without_layout()


# fft: the transform over the operand's minor len(fft_length) dimensions (1 to 3, as XLA)
_FFT_INPUT = {"FFT": ("c64", "c128"), "IFFT": ("c64", "c128"), "RFFT": ("f32", "f64"),
              "IRFFT": ("c64", "c128")}
_FFT_RESULT = {"f32": "c64", "f64": "c128", "c64": "f32", "c128": "f64"}


@_rule("fft")
def _fft(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    _array(opcode, x, shapes)
    kind = attrs.get("fft_type")
    if kind not in _FFT_INPUT:
        raise _fail(opcode, f"bad fft_type {kind}", shapes)
    lengths = tuple(int(n) for n in attrs.get("fft_length", ()))
    k = len(lengths)
    if not 1 <= k <= 3 or k > x.rank:
        raise _fail(opcode, f"fft_length {lengths} must name 1 to 3 of the operand's "
                    "dimensions", shapes)
    if x.element_type not in _FFT_INPUT[kind]:
        raise _fail(opcode, f"{kind} does not take {x.element_type}", shapes)
    dims = tuple(x.dimensions)
    minor = dims[-k:]
    if kind == "IRFFT":
        want = lengths[:-1] + (lengths[-1] // 2 + 1,)
        out = Shape(_FFT_RESULT[x.element_type], dims[:-k] + lengths)
    elif kind == "RFFT":
        want = lengths
        out = Shape(_FFT_RESULT[x.element_type], dims[:-k] + lengths[:-1]
                    + (lengths[-1] // 2 + 1,))
    else:
        want = lengths
        out = Shape(x.element_type, dims)
    if minor != want:
        raise _fail(opcode, f"minor dimensions {minor} do not fit {kind} of fft_length "
                    f"{lengths} (expected {want})", shapes)
    return out


def _group_size(opcode: str, attrs: dict[str, Any], shapes: list[Shape]) -> int:
    groups = tuple(tuple(g) for g in attrs.get("replica_groups", ()))
    sizes = {len(g) for g in groups}
    if len(sizes) != 1 or 0 in sizes:
        raise _fail(opcode, f"replica_groups={groups} must be groups of one size", shapes)
    ids = [i for g in groups for i in g]
    if len(set(ids)) != len(ids) or any(i < 0 for i in ids):
        raise _fail(opcode, f"replica_groups={groups} repeat or misname a partition",
                    shapes)
    return sizes.pop()


def _collective_dim(opcode: str, attrs: dict[str, Any], x: Shape, shapes: list[Shape]) -> int:
    dims = tuple(attrs.get("dimensions", ()))
    if len(dims) != 1 or not 0 <= dims[0] < x.rank:
        raise _fail(opcode, f"dimensions={list(dims)} must name one operand dimension",
                    shapes)
    return int(dims[0])


def _scalar_combiner(opcode: str, x: Shape, called: list, shapes: list[Shape]) -> None:
    (comp,) = called
    scalar = Shape(x.element_type, ())
    _check_params(opcode, comp, [scalar, scalar], shapes)
    if comp.root.shape.without_layout() != scalar:
        raise _fail(opcode, f"to_apply must return {scalar}", shapes)


@_rule("all-reduce")
def _all_reduce(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    _array(opcode, x, shapes)
    _group_size(opcode, attrs, shapes)
    _scalar_combiner(opcode, x, called, shapes)
    return x.without_layout()


@_rule("all-gather")
def _all_gather(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    _array(opcode, x, shapes)
    n = _group_size(opcode, attrs, shapes)
    d = _collective_dim(opcode, attrs, x, shapes)
    dims = list(x.dimensions)
    dims[d] *= n
    return Shape(x.element_type, tuple(dims))


def _splits(opcode, x, d, n, shapes):
    """Dimension d of x cuts into n equal blocks (all-to-all, reduce-scatter)."""
    if x.dimensions[d] % n:
        raise _fail(opcode, f"dimension {d} of size {x.dimensions[d]} does not split into "
                    f"{n} equal blocks", shapes)


@_rule("all-to-all")
def _all_to_all(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    _array(opcode, x, shapes)
    n = _group_size(opcode, attrs, shapes)
    d = _collective_dim(opcode, attrs, x, shapes)
    _splits(opcode, x, d, n, shapes)
    return x.without_layout()


@_rule("collective-permute")
def _collective_permute(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    _array(opcode, x, shapes)
    pairs = tuple(tuple(p) for p in attrs.get("source_target_pairs", ()))
    if any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise _fail(opcode, f"source_target_pairs={pairs} must be pairs of partition ids",
                    shapes)
    for k, what in ((0, "sources"), (1, "targets")):
        ids = [p[k] for p in pairs]
        if len(set(ids)) != len(ids):
            raise _fail(opcode, f"source_target_pairs={pairs} repeat one of their {what}",
                        shapes)
    return x.without_layout()


@_rule("reduce-scatter")
def _reduce_scatter(opcode, shapes, attrs, called, hint):
    (x,) = shapes
    _array(opcode, x, shapes)
    n = _group_size(opcode, attrs, shapes)
    d = _collective_dim(opcode, attrs, x, shapes)
    _scalar_combiner(opcode, x, called, shapes)
    _splits(opcode, x, d, n, shapes)
    dims = list(x.dimensions)
    dims[d] //= n
    return Shape(x.element_type, tuple(dims))
