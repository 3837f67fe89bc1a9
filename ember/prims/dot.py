"""dot_general: the one product primitive (matmul, dot, einsum and tensordot lower to it).

Input: lhs and rhs arrays of one dtype; params
  dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
    (tuples of tuples of ints, so the params stay hashable),
  precision (None or a lax.Precision pair; accepted and ignored on CPU),
  preferred_element_type (a dtype or None: the accumulation and result dtype),
  out_sharding (always None here).
Output: shape = batch dims, then lhs free dims, then rhs free dims (each in operand order);
dtype = preferred_element_type or the operands' dtype.

Semantics (JAX/XLA): integer products accumulate in the result integer type and wrap;
bool products are the logical or of ands; float products accumulate in the result type.
Printed as JAX 0.10.2 prints it: contracting and batch dims as lists,
`dimension_numbers=(([1], [0]), ([], []))`, with precision, preferred_element_type and
out_sharding shown only when they are not None.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData, not_mapped
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.evaluator.core import dot_general
from ember.prims import _ad, _batching, _eager_native
from ember.prims import _lower as L
from ember.prims import _rules as R

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]

dot_general_p = Primitive("dot_general")
dot_general_p.hlo_opcode = "dot"  # type: ignore[attr-defined]


def _check_dims(name: str, dims: tuple[int, ...], ndim: int, what: str) -> None:
    if any(not 0 <= d < ndim for d in dims):
        raise TypeError(f"dot_general requires {what} dimension numbers to be in range "
                        f"[0, {ndim}), got {name} {dims}.")
    if len(set(dims)) != len(dims):
        raise TypeError(f"dot_general requires {what} dimension numbers to be unique, got "
                        f"{name} {dims}.")


def _free_dims(ndim: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


def dot_general_shape(lhs: tuple[int, ...], rhs: tuple[int, ...],
                      dimension_numbers: DimensionNumbers) -> tuple[int, ...]:
    """The result shape; raises TypeError on inconsistent dimension numbers."""
    (lc, rc), (lb, rb) = dimension_numbers
    _check_dims("lhs_contracting_dimensions", lc, len(lhs), "contracting")
    _check_dims("rhs_contracting_dimensions", rc, len(rhs), "contracting")
    _check_dims("lhs_batch_dimensions", lb, len(lhs), "batch")
    _check_dims("rhs_batch_dimensions", rb, len(rhs), "batch")
    if set(lc) & set(lb) or set(rc) & set(rb):
        raise TypeError("dot_general requires contracting and batch dimensions to be "
                        f"disjoint, got {dimension_numbers}.")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs and rhs batch dimensions, "
                        f"got lhs_batch_dimensions {lb} and rhs_batch_dimensions {rb}.")
    if len(lc) != len(rc):
        raise TypeError("dot_general requires equal numbers of lhs and rhs contracting "
                        f"dimensions, got lhs_contracting_dimensions {lc} and "
                        f"rhs_contracting_dimensions {rc}.")
    lbs, rbs = tuple(lhs[d] for d in lb), tuple(rhs[d] for d in rb)
    if lbs != rbs:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {lbs} and {rbs}.")
    lcs, rcs = tuple(lhs[d] for d in lc), tuple(rhs[d] for d in rc)
    if lcs != rcs:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lcs} and {rcs}.")
    return (lbs + tuple(lhs[d] for d in _free_dims(len(lhs), lc, lb))
            + tuple(rhs[d] for d in _free_dims(len(rhs), rc, rb)))


@dot_general_p.def_abstract_eval
def _dot_general_abstract(lhs: ShapedArray, rhs: ShapedArray, *,
                          dimension_numbers: DimensionNumbers, precision: object = None,
                          preferred_element_type: np.dtype | None = None,
                          out_sharding: None = None) -> ShapedArray:
    if lhs.dtype != rhs.dtype:
        raise TypeError("dot_general requires operands of the same dtype, got "
                        f"{lhs.dtype.name} and {rhs.dtype.name}.")
    R.check_dtype_kinds("dot_general", lhs, R.ANY)
    shape = dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
    if preferred_element_type is None:
        return ShapedArray(shape, lhs.dtype, R.all_weak(lhs, rhs))
    out = np.dtype(preferred_element_type)
    # XLA accumulates in the preferred type: it may widen within a kind (int8 -> int32,
    # float16 -> float32) or turn ints into floats, but never narrow floats into ints.
    if dtypes.kind(lhs.dtype) == "f" and dtypes.kind(out) != "f":
        raise TypeError("dot_general: preferred_element_type must be a floating type for "
                        f"floating inputs, got {out.name} for {lhs.dtype.name} inputs.")
    return ShapedArray(shape, out, False)


@dot_general_p.def_impl
def _dot_general_impl(lhs: np.ndarray, rhs: np.ndarray, *,
                      dimension_numbers: DimensionNumbers, precision: object = None,
                      preferred_element_type: np.dtype | None = None,
                      out_sharding: None = None) -> np.ndarray:
    out = _eager_native.compiled(dot_general_p, [lhs, rhs], {
        "dimension_numbers": dimension_numbers, "precision": precision,
        "preferred_element_type": preferred_element_type, "out_sharding": out_sharding})
    if out is not None:  # (float products: jit's compiled product, ember/eager_native.py)
        return out
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    # the evaluator's dot: one definition of wrapping, bool and low-precision accumulation
    return dot_general(np.asarray(lhs), np.asarray(rhs), list(lc), list(rc), list(lb),
                       list(rb), out_dtype)


@dot_general_p.def_pp_params
def _pp_dot_general(params: dict) -> dict:
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown: dict = {"dimension_numbers": ((list(lc), list(rc)), (list(lb), list(rb)))}
    for k in ("precision", "preferred_element_type", "out_sharding"):
        if params.get(k) is not None:
            shown[k] = params[k]
    return shown


@dot_general_p.def_lowering
def _dot_general_lowering(ctx: Any, lhs: Any, rhs: Any, *, dimension_numbers: DimensionNumbers,
                          precision: object = None,
                          preferred_element_type: np.dtype | None = None,
                          out_sharding: None = None) -> Any:
    """An HLO dot; operands are first converted to the result type (as the NumPy rule
    accumulates in it)."""
    (lc, rc), (lb, rb) = dimension_numbers
    out = ctx.aval_out.dtype
    if ctx.avals_in[0].dtype != out:
        lhs = ctx.b.convert(lhs, L.et(out))
    if ctx.avals_in[1].dtype != out:
        rhs = ctx.b.convert(rhs, L.et(out))
    return ctx.b.dot(lhs, rhs, lc, rc, lb, rb, element_type=L.et(out))


# -- autodiff rules ------------------------------------------------------------------------------
# dot_general is bilinear: d(x.y) = tx.y + x.ty, and transposing with respect to one operand
# is another dot_general of the cotangent with the other operand, contracting the
# cotangent's dimensions that came from the other operand, followed by a transpose that puts
# the result's dimensions back in the operand's order.

def _operand_cotangent(ct: Any, other: Any, dims: DimensionNumbers, operand: ShapedArray,
                       operand_is_lhs: bool, precision: object = None,
                       preferred_element_type: Any = None) -> Any:
    """The cotangent of one operand (`operand`) of out = dot_general(lhs, rhs, dims).

    The cotangent's dimensions are [batch | lhs free | rhs free]. Contracting its `other`
    free block with `other`'s free dimensions (batching over the batch dims) gives
    [batch | operand free | operand contracting, in the order `other`'s contracting
    dimensions sort], which a transpose returns to the operand's order; or, with the
    product's operands swapped, [batch | operand contracting | operand free], taken when
    that is the operand's order and the first is not (no transpose then). The first is
    JAX's form (its text); the second is Ember's, kept because under vmap JAX's leaves
    transposes that the compiled per-example gradients would run. The product keeps the
    forward's preferred_element_type, as JAX's does.
    """
    (lc, rc), (lb, rb) = dims
    mine_c, other_c, mine_b, other_b = (lc, rc, lb, rb) if operand_is_lhs else (rc, lc, rb, lb)
    other_ndim = get_aval(other).ndim
    mine_free = _free_dims(operand.ndim, mine_c, mine_b)
    other_free = _free_dims(other_ndim, other_c, other_b)
    nb = len(mine_b)
    lhs_free = len(mine_free) if operand_is_lhs else len(other_free)
    # where the other operand's free dims sit in the cotangent
    start = nb + lhs_free if operand_is_lhs else nb
    ct_other = tuple(range(start, start + len(other_free)))
    # the contracted dims come out ordered like the other operand's contracting dims, sorted
    mine_c_sorted = [mine_c[i] for i in np.argsort(other_c)]
    ct_first = [*mine_b, *mine_free, *mine_c_sorted]     # dot(ct, other)'s layout
    other_first = [*mine_b, *mine_c_sorted, *mine_free]  # dot(other, ct)'s layout
    batch = tuple(range(nb))
    if other_first == sorted(other_first) and ct_first != sorted(ct_first):
        # dot(other, ct) already lays the result out in the operand's order: no transpose
        # (e.g. the weight of x @ W, whose cotangent is the outer product x ct)
        res = dot_general_p.bind(other, ct,
                                 dimension_numbers=((tuple(other_free), ct_other),
                                                    (tuple(other_b), batch)),
                                 precision=precision,
                                 preferred_element_type=preferred_element_type,
                                 out_sharding=None)
        layout = other_first
    else:
        res = dot_general_p.bind(ct, other,
                                 dimension_numbers=((ct_other, tuple(other_free)),
                                                    (batch, tuple(other_b))),
                                 precision=precision,
                                 preferred_element_type=preferred_element_type,
                                 out_sharding=None)
        layout = ct_first
    out = _ad.transpose(res, tuple(int(i) for i in np.argsort(layout)))
    return _ad.convert(out, operand.dtype)


def _dot_general_transpose(ct: Any, lhs: Any, rhs: Any, *, dimension_numbers: DimensionNumbers,
                           precision: object = None, preferred_element_type: Any = None,
                           out_sharding: None = None) -> list:
    if ad.is_undefined_primal(lhs):
        if ad.is_undefined_primal(rhs):
            raise ValueError("dot_general is not linear in both operands at once")
        # (the precision carries over, as JAX's rule: a solve's vecmat keeps HIGHEST)
        return [_operand_cotangent(ct, rhs, dimension_numbers, lhs.aval, True, precision,
                                   preferred_element_type), None]
    return [None, _operand_cotangent(ct, lhs, dimension_numbers, rhs.aval, False, precision,
                                     preferred_element_type)]


ad.defjvp(dot_general_p,
          lambda t, ans, x, y, **params: dot_general_p.bind(t, y, **params),
          lambda t, ans, x, y, **params: dot_general_p.bind(x, t, **params))
dot_general_p.def_transpose(_dot_general_transpose)


# -- batching rule -------------------------------------------------------------------------------
# No transposes: with both operands mapped, their batch axes become one more pair of dot
# batch dimensions, placed first, so the result's batch axis is 0 (the output lists batch
# dims first). With one operand mapped, its batch axis is one more free dimension of that
# operand, and the output (batch dims | lhs free | rhs free, each in operand order) has it
# at the position of that free dimension among its operand's free dims.

def _dot_general_batch(axis: AxisData, args: list, dims: list, *,
                       dimension_numbers: DimensionNumbers, **params: Any) -> tuple[Any, int]:
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if ld is not not_mapped:
        lc, lb = _batching.shift_axes(lc, ld), _batching.shift_axes(lb, ld)
    if rd is not not_mapped:
        rc, rb = _batching.shift_axes(rc, rd), _batching.shift_axes(rb, rd)
    if ld is not not_mapped and rd is not not_mapped:
        dn = ((lc, rc), ((ld, *lb), (rd, *rb)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
    dn = ((lc, rc), (lb, rb))
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params)
    if ld is not not_mapped:
        lhs_free = _free_dims(get_aval(lhs).ndim, lc, lb)
        return out, len(lb) + lhs_free.index(ld)
    lhs_free = _free_dims(get_aval(lhs).ndim, lc, lb)
    rhs_free = _free_dims(get_aval(rhs).ndim, rc, rb)
    return out, len(lb) + len(lhs_free) + rhs_free.index(rd)


dot_general_p.def_batch(_dot_general_batch)
