"""Type conversions and value selection: convert_element_type, bitcast_convert_type,
select_n, clamp, stop_gradient.

convert_element_type follows XLA: float -> int saturates and NaN -> 0, anything -> bool is
x != 0. Its params are `new_dtype` and `weak_type` (JAX also carries a sharding, which it
does not print). select_n(which, *cases) picks cases[which]: `which` is bool (at most two
cases) or an integer, scalar or of the cases' shape; out-of-range integer `which` is clipped to the
first or last case. Weak types: convert_element_type's result carries its `weak_type`
param; select_n and clamp are weak only when all their value operands are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, batching, dtypes
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import Tracer, get_aval
from ember.hlo.evaluator import elementwise as ew
from ember.prims import _ad
from ember.prims import _lower as L
from ember.prims import _rules as R

convert_element_type_p = Primitive("convert_element_type")
convert_element_type_p.hlo_opcode = "convert"  # type: ignore[attr-defined]


@convert_element_type_p.def_abstract_eval
def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


@convert_element_type_p.def_impl
def _convert_impl(x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool) -> np.ndarray:
    return ew.convert_array(x, new_dtype)


@convert_element_type_p.def_lowering
def _convert_lowering(ctx: Any, x: Any, *, new_dtype: np.dtype, weak_type: bool,
                      sharding: Any = None) -> Any:
    if ctx.avals_in[0].dtype == np.dtype(new_dtype):
        return x
    if dtypes.kind(ctx.avals_in[0].dtype) == "c" and dtypes.kind(np.dtype(new_dtype)) != "c":
        x = ctx.b.op("real", (x,))  # (XLA converts complex only to complex: real part first)
        if L.et(new_dtype) == x.shape.element_type:
            return x
    return ctx.b.convert(x, L.et(new_dtype))


bitcast_convert_type_p = Primitive("bitcast_convert_type")
bitcast_convert_type_p.hlo_opcode = "bitcast-convert"  # type: ignore[attr-defined]


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    # Same width: same shape. Narrowing by k = old/new bits adds a trailing dim of k;
    # widening needs a trailing dim of exactly k = new/old bits and removes it. bool has no
    # defined bit layout in XLA, so it only "bitcasts" to itself. Never weakly typed.
    old, new = x.dtype, np.dtype(new_dtype)
    for dt in (old, new):
        if dtypes.kind(dt) == "b" and old != new:
            raise TypeError(f"`bitcast_convert_type` for operand type ({dt.name}) cannot be "
                            "performed.")
    old_bits, new_bits = 8 * old.itemsize, 8 * new.itemsize
    if old_bits == new_bits:
        return ShapedArray(x.shape, new)
    if old_bits > new_bits:
        return ShapedArray((*x.shape, old_bits // new_bits), new)
    dim = x.shape[-1] if x.shape else 1
    if dim * old_bits != new_bits:
        raise ValueError(f"Attempting to convert array of shape {x.shape} from {old.name} of "
                         f"size {old_bits} bits to {new.name} of size {new_bits}, bits but "
                         f"{dim} * {old_bits} != {new_bits}")
    return ShapedArray(x.shape[:-1], new)


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    new_dtype = np.dtype(new_dtype)
    # Copy into fresh C-ordered memory (the result must not alias a user's input), and view
    # it flat: NumPy cannot change the item size of a 0-d array in place.
    flat = np.array(x, order="C", copy=True).reshape(-1).view(new_dtype)
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old > new:
        return flat.reshape(*x.shape, old // new)
    if old < new:
        return flat.reshape(x.shape[:-1])
    return flat.reshape(x.shape)


@bitcast_convert_type_p.def_lowering
def _bitcast_lowering(ctx: Any, x: Any, *, new_dtype: np.dtype) -> Any:
    from ember.hlo.shape import Shape
    return ctx.b.op("bitcast-convert", (x,), shape=Shape(L.et(new_dtype), ctx.aval_out.shape))


select_n_p = Primitive("select_n")


@select_n_p.def_abstract_eval
def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select must have at least one case")
    if any(c.shape != cases[0].shape for c in cases[1:]):
        raise TypeError("select cases must have the same shapes, got ["
                        + ", ".join(str(c.shape) for c in cases) + "].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    R.check_same_dtypes("select_n", *cases)
    if dtypes.kind(which.dtype) not in "biu":
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{which.dtype.name}.")
    if dtypes.kind(which.dtype) == "b" and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return ShapedArray(cases[0].shape, cases[0].dtype, R.all_weak(*cases))


@select_n_p.def_impl
def _select_n_impl(which: np.ndarray, *cases: np.ndarray) -> np.ndarray:
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return ew.select(which, cases[1], cases[0])
    # XLA lowers integer `which` to a tree of `which < mid` selects, so an index below 0
    # takes case 0 and one past the end takes the last case: a clip.
    idx = np.clip(which.astype(np.int64), 0, len(cases) - 1)
    out = np.choose(np.broadcast_to(idx, cases[0].shape), cases)
    return np.asarray(out, dtype=cases[0].dtype)


@select_n_p.def_lowering
def _select_n_lowering(ctx: Any, which: Any, *cases: Any) -> Any:
    """cases[which] as a chain of selects: which < 1 ? c0 : (which < 2 ? c1 : ...)."""
    shape = ctx.aval_out.shape
    which = ctx.broadcast_to(which, ctx.avals_in[0], shape)
    if len(cases) == 1:
        return cases[0]
    wav = ctx.avals_in[0]
    if dtypes.kind(wav.dtype) == "b":
        return ctx.b.select(which, cases[1], cases[0])
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        bound = L.full_like(ctx, k + 1, wav.update(shape=shape))
        out = ctx.b.select(ctx.b.compare(which, bound, "LT"), cases[k], out)
    return out


clamp_p = Primitive("clamp")
clamp_p.hlo_opcode = "clamp"  # type: ignore[attr-defined]


@clamp_p.def_abstract_eval
def _clamp_abstract(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    for name, b in (("min", lo), ("max", hi)):
        if b.shape and b.shape != x.shape:
            raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == "
                            f"(), got {b.shape}.")
    R.check_nary("clamp", (lo, x, hi), R.ANY)
    return ShapedArray(x.shape, x.dtype, R.all_weak(lo, x, hi))


@clamp_p.def_impl
def _clamp_impl(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return ew.clamp(np.broadcast_to(lo, x.shape), x, np.broadcast_to(hi, x.shape))


@clamp_p.def_lowering
def _clamp_lowering(ctx: Any, lo: Any, x: Any, hi: Any) -> Any:
    lo, x, hi = ctx.elementwise_operands(lo, x, hi)
    return ctx.b.clamp(lo, x, hi)


stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_lowering(L.identity)


@stop_gradient_p.def_abstract_eval
def _stop_gradient_abstract(x: ShapedArray) -> ShapedArray:
    return x


@stop_gradient_p.def_impl
def _stop_gradient_impl(x: np.ndarray) -> np.ndarray:
    return x


# -- autodiff rules ------------------------------------------------------------------------------

def _convert_jvp(primals: list, tangents: list, *, new_dtype: np.dtype, weak_type: bool
                 ) -> tuple[Any, Any]:
    # Between float types the conversion is linear (d convert(x) = convert(t)); to or from
    # integers and bool the result is piecewise constant: a zero tangent.
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not ad.is_differentiable(get_aval(ans)) or isinstance(t, ad.Zero):
        return ans, ad.Zero(get_aval(ans))
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct: Any, x: Any, *, new_dtype: np.dtype, weak_type: bool) -> list:
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type)]


convert_element_type_p.def_jvp(_convert_jvp)
convert_element_type_p.def_transpose(_convert_transpose)
convert_element_type_p.is_linear = True


def _linearized(t: Any) -> bool:
    from ember.core.transpose import is_linearized_tangent  # (it imports the prims)
    return is_linearized_tangent(t)


def _select_n_jvp(primals: list, tangents: list) -> tuple[Any, Any]:
    # The tangent is selected like the value: d cases[which] = tangents[which]; `which` is
    # an integer or bool, with no tangent.
    # As JAX's rule, one zero array stands for every zero case tangent, and it is made
    # even when no case needs it if the tangents are being staged for a JVP (JAX's text
    # shows it there, unused); linearizing (JAX drops it from the linear part) and eagerly
    # it is made only when needed.
    ans = select_n_p.bind(*primals)
    case_tangents = tangents[1:]
    if all(isinstance(t, ad.Zero) for t in case_tangents):
        return ans, ad.Zero(get_aval(ans))
    some = next(t for t in case_tangents if not isinstance(t, ad.Zero))
    needed = any(isinstance(t, ad.Zero) for t in case_tangents)
    if needed or (isinstance(some, Tracer) and not _linearized(some)):
        zero = _ad.zeros(get_aval(some))
        case_tangents = [zero if isinstance(t, ad.Zero) else t for t in case_tangents]
    return ans, select_n_p.bind(primals[0], *case_tangents)


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list:
    # Case i receives the cotangent where `which` picks it and zero elsewhere.
    zeros = _ad.zeros(get_aval(ct))
    out: list = [None]
    for i, case in enumerate(cases):
        if not ad.is_undefined_primal(case):
            out.append(None)
            continue
        out.append(select_n_p.bind(which, *[ct if j == i else zeros
                                            for j in range(len(cases))]))
    return out


select_n_p.def_jvp(_select_n_jvp)
select_n_p.def_transpose(_select_n_transpose)


def _where_else_zero(pred: Any, t: Any, x: Any) -> Any:
    """select(pred, t, zeros like x), as JAX's clamp rule stages it (t stretched to pred's
    shape first where it is a scalar bound's tangent)."""
    aval = get_aval(x)
    shape = get_aval(pred).shape
    if get_aval(t).shape != shape:
        t = _ad.broadcast_to(t, aval.update(shape=shape))
    zeros = _ad.zeros(aval.update(shape=shape))
    return _ad.select(pred, t, zeros)


# clamp(lo, x, hi): the tangent of whichever operand is the result (x strictly inside,
# lo where lo > x and lo < hi, hi where x > hi), as JAX's rule: a select against zeros.
ad.defjvp(
    clamp_p,
    lambda t, ans, lo, x, hi: _where_else_zero(_ad.compare(
        "and", _ad.compare("gt", lo, x), _ad.compare("lt", lo, hi)), t, x),
    lambda t, ans, lo, x, hi: _where_else_zero(_ad.compare(
        "and", _ad.compare("gt", x, lo), _ad.compare("lt", x, hi)), t, x),
    lambda t, ans, lo, x, hi: _where_else_zero(_ad.compare("lt", hi, x), t, x),
    broadcast=_ad.broadcast_to)

# stop_gradient is the identity with a zero derivative; a bitcast has no derivative.
ad.defjvp_zero(stop_gradient_p)
ad.defjvp_zero(bitcast_convert_type_p)


# -- batching rules ------------------------------------------------------------------------------

def _convert_batch(axis: AxisData, args: list, dims: list, *, new_dtype: np.dtype,
                   weak_type: bool) -> tuple[Any, int]:
    return convert_element_type_p.bind(args[0], new_dtype=new_dtype, weak_type=weak_type), dims[0]


def _bitcast_batch(axis: AxisData, args: list, dims: list, *, new_dtype: np.dtype
                   ) -> tuple[Any, int]:
    # A narrowing bitcast appends a trailing dim and a widening one consumes the last dim:
    # both leave every other dim in place, so the batch axis stays where it is unless it is
    # the last dim of a widening bitcast's operand (the dim the bitcast consumes), where it
    # moves to the front first.
    (x,), (b,) = args, dims
    aval = get_aval(x)
    if np.dtype(new_dtype).itemsize > aval.dtype.itemsize and b == aval.ndim - 1:
        x, b = batching.moveaxis(x, b, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), b


def _per_example_shape(xs: list, dims: list) -> tuple[int, ...]:
    """The per-example shape of operands that share one (the first tells)."""
    shape = get_aval(xs[0]).shape
    d = dims[0]
    return shape if d is not_mapped else shape[:d] + shape[d + 1:]


def _scalar_or_full(x: Any, d: int | None, shape: tuple[int, ...], size: int) -> Any:
    """A scalar-or-full-shape operand (select_n's `which`, clamp's bounds) of an op whose
    other operands are batched at axis 0 with per-example shape `shape`: an unmapped scalar
    stays a scalar (it still broadcasts); a mapped scalar (one value per example) becomes a
    full (size, *shape) array; a full-shape operand gets its batch axis first."""
    rank = len(get_aval(x).shape) - (d is not not_mapped)
    if rank == 0 and d is not_mapped:
        return x
    if rank == 0 and shape:
        return _ad.broadcast_in_dim(x, (size, *shape), (0,))
    return batching.bdim_at_front(x, d, size)


def _select_n_batch(axis: AxisData, args: list, dims: list) -> tuple[Any, int]:
    # JAX's rule, case by case (so vmapped programs print its text): operands batched
    # alike select in place; an unbatched scalar `which` leaves the cases where they are;
    # otherwise `which` goes to the front first, then the cases.
    which, *cases = args
    wd, *cds = dims
    wshape, cshape = get_aval(which).shape, get_aval(cases[0]).shape
    if all(wd == d for d in cds):
        if wshape != cshape:  # (a scalar `which` per example)
            which = _ad.broadcast_in_dim(which, cshape, (wd,))
        return select_n_p.bind(which, *cases), wd
    if not wshape and all(d is not not_mapped for d in cds):
        if all(d == cds[0] for d in cds[1:]):
            return select_n_p.bind(which, *cases), cds[0]
        if all(get_aval(c).shape == cshape for c in cases):
            b = cds[0]
            rest = [batching.moveaxis(c, d, b) for c, d in zip(cases[1:], cds[1:])]
            return select_n_p.bind(which, cases[0], *rest), b
    if wshape:
        which = batching.bdim_at_front(which, wd, axis.size)
    if any(get_aval(c).shape for c in cases):
        cases = [batching.bdim_at_front(c, d, axis.size) for c, d in zip(cases, cds)]
    wshape, cshape = get_aval(which).shape, get_aval(cases[0]).shape
    if 0 < len(wshape) < len(cshape):  # (a scalar `which` per example)
        which = _ad.broadcast_in_dim(which, cshape, (0,))
    elif len(wshape) > len(cshape):  # (scalar cases, one `which` per element)
        cases = [_ad.broadcast_in_dim(c, wshape, tuple(range(len(get_aval(c).shape))))
                 for c in cases]
    return select_n_p.bind(which, *cases), 0


def _clamp_batch(axis: AxisData, args: list, dims: list) -> tuple[Any, int]:
    (lo, x, hi), (ld, xd, hd) = args, dims
    shape = _per_example_shape([x], [xd])
    x = batching.bdim_at_front(x, xd, axis.size)
    return clamp_p.bind(_scalar_or_full(lo, ld, shape, axis.size), x,
                        _scalar_or_full(hi, hd, shape, axis.size)), 0


def _identity_batch(axis: AxisData, args: list, dims: list) -> tuple[Any, int]:
    return stop_gradient_p.bind(args[0]), dims[0]


convert_element_type_p.def_batch(_convert_batch)
bitcast_convert_type_p.def_batch(_bitcast_batch)
select_n_p.def_batch(_select_n_batch)
clamp_p.def_batch(_clamp_batch)
stop_gradient_p.def_batch(_identity_batch)
