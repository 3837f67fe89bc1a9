"""Argmax splitting: an argmax (argmin) as two plain reductions that vectorize.

Input: a Module whose argmax/argmin are variadic reduces, as `jnp.argmax` lowers them
(prims/_lower.py `arg_reducer`):
    r = reduce((x, iota_d), (worst, 0), dimensions={d}, to_apply=argmax_combiner)
    i = get-tuple-element(r), index=1            (r's only users read the index)
Output, over the same dimension d (N = x's length along it):
    m   = reduce(x, worst, {d}, maximum)                      (minimum for argmin)
    hit = x == broadcast(m)  [or isnan(x) & isnan(m), floats]
    i   = reduce(select(hit, iota_d, N), N, {d}, minimum)     (the first hit)
Why: a variadic reduce carries a (value, index) pair through a compare-and-select chain
that LLVM does not vectorize (512x512 f32 rows: 1.3 ms, as XLA's; NumPy: 0.02 ms); the two
plain reductions vectorize, and as dependent reductions of one row they become one row
kernel (row_fusion.py).
Exact: the combiner is accepted only when it computes the first extremum (ties to the
smaller index, the first NaN beating every number, -0.0 and +0.0 tying), checked by
evaluating it on every pair of a set of edge values and indices; then "first index whose
value equals the maximum (NaN: is NaN)" is the same index in any order. An empty
dimension gives N = 0, the variadic reduce's init index. Floats and integers; bool is left
alone. The value result (index 0) must be unused: its sign of zero may differ.
"""

from __future__ import annotations

import itertools

import numpy as np

from ember.hlo.builder import Builder
from ember.hlo.evaluator.core import evaluate_computation
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape
from ember.passes.base import HloPass

_REDUCE = frozenset({"reduce"})


def _edge_values(dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        return np.array([-np.inf, -2.0, -0.0, 0.0, 1.0, 1.0, np.inf, np.nan], dtype)
    info = np.iinfo(dtype)
    return np.array([info.min, -2 if info.min < 0 else 0, 0, 1, 1, info.max], dtype)


def _reference(av, ai, bv, bi, direction: str):
    """The first-extremum rule on arrays of pairs: whether b is taken."""
    a_nan, b_nan = np.isnan(av), np.isnan(bv)
    better = bv > av if direction == "max" else bv < av
    tie = (bv == av) & (bi < ai)
    take = np.where(a_nan, b_nan & (bi < ai), b_nan | better | tie)
    return take


def combiner_direction(comp: Computation, value_type: np.dtype, index_type: np.dtype
                       ) -> str | None:
    """'max' or 'min' when `comp` picks the first extremum of (value, index) pairs (module
    docstring), else None."""
    if len(comp.parameters) != 4:
        return None
    vals = _edge_values(value_type)
    pairs = list(itertools.product(range(len(vals)), range(3), range(len(vals)), range(3)))
    av, ai, bv, bi = (np.array([p[k] for p in pairs]) for k in range(4))
    args = [vals[av], ai.astype(index_type), vals[bv], bi.astype(index_type)]
    try:
        out = evaluate_computation(comp, args)
    except Exception:  # (a combiner the evaluator cannot run is not ours to rewrite)
        return None
    if not isinstance(out, tuple | list) or len(out) != 2:
        return None
    value, index = (np.asarray(o) for o in out)
    for direction in ("max", "min"):
        take = _reference(args[0], args[1], args[2], args[3], direction)
        want_v = np.where(take, args[2], args[0])
        want_i = np.where(take, args[3], args[1])
        same_v = (value.view(np.uint8).reshape(len(pairs), -1)
                  == want_v.view(np.uint8).reshape(len(pairs), -1)).all(axis=1)
        if np.array_equal(index, want_i) and same_v.all():
            return direction
    return None


def _scalar_combiner(module: Module, opcode: str, et: str) -> Computation:
    b = Builder(f"{opcode}_{et}")
    x, y = b.parameter(Shape(et, ()), "x"), b.parameter(Shape(et, ()), "y")
    return module.add_computation(b.build_computation(b.binary(opcode, x, y)))


def _is_iota_along(inst: Instruction, shape: Shape, dim: int) -> bool:
    return (inst.opcode == "iota" and inst.attrs.get("iota_dimension") == dim
            and inst.shape.dimensions == shape.dimensions)


def _constant_value(inst: Instruction) -> np.ndarray | None:
    if inst.opcode != "constant" or inst.shape.size != 1:
        return None
    return np.asarray(inst.value).reshape(())


def _splittable(red: Instruction) -> tuple[str, int] | None:
    """(direction, dimension) for an argmax/argmin reduce this pass rewrites, else None."""
    if red.opcode != "reduce" or len(red.operands) != 4 or len(red.attrs["dimensions"]) != 1:
        return None
    x, idx, init_v, init_i = red.operands
    (d,) = red.attrs["dimensions"]
    vt, it = x.shape.dtype, idx.shape.dtype
    if vt.kind not in "fiu" or vt.itemsize < 2 or it.kind not in "iu" \
            or not _is_iota_along(idx, x.shape, d):
        return None
    if any(u.opcode != "get-tuple-element" or u.attrs["index"] != 1 for u in red.users):
        return None
    v0, i0 = _constant_value(init_v), _constant_value(init_i)
    if v0 is None or i0 is None or int(i0) != 0:
        return None
    direction = combiner_direction(red.to_apply, vt, it)
    if direction is None:
        return None
    worst = (-np.inf if direction == "max" else np.inf) if vt.kind == "f" else (
        np.iinfo(vt).min if direction == "max" else np.iinfo(vt).max)
    return (direction, d) if v0 == worst else None


def split(module: Module, comp: Computation, red: Instruction, direction: str,
          d: int) -> None:
    """Replace `red`'s index result by the two plain reductions (module docstring)."""
    x, idx, init_v, _ = red.operands
    md = dict(red.metadata)
    vt, it = x.shape.element_type, idx.shape.element_type
    kept = [k for k in range(x.shape.rank) if k != d]
    out_dims = tuple(x.shape.dimensions[k] for k in kept)
    n = x.shape.dimensions[d]

    def add(opcode, shape, operands, attrs=None, called=()):
        return comp.add_instruction(Instruction(opcode, shape, operands, attrs or {},
                                                list(called), metadata=md))

    pred = Shape("pred", x.shape.dimensions)
    extreme = add("reduce", Shape(vt, out_dims), [x, init_v], {"dimensions": (d,)},
                  [_scalar_combiner(module, "maximum" if direction == "max" else "minimum",
                                    vt)])
    spread = add("broadcast", x.shape, [extreme], {"dimensions": tuple(kept)})
    hit = add("compare", pred, [x, spread], {"direction": "EQ"})
    if x.shape.dtype.kind == "f":
        both_nan = add("and", pred, [add("compare", pred, [x, x], {"direction": "NE"}),
                                     add("compare", pred, [spread, spread],
                                         {"direction": "NE"})])
        hit = add("or", pred, [hit, both_nan])
    n_const = np.array(n, dtype=idx.shape.dtype)
    n_const.setflags(write=False)
    none = add("constant", Shape(it, ()), [], {"value": n_const})
    nones = add("broadcast", idx.shape, [none], {"dimensions": ()})
    candidates = add("select", idx.shape, [hit, idx, nones])
    first = add("reduce", Shape(it, out_dims), [candidates, none], {"dimensions": (d,)},
                [_scalar_combiner(module, "minimum", it)])
    for gte in list(red.users):
        comp.replace_instruction(gte, first)
    comp.remove_instruction(red)  # (the iota stays while the select reads it)


class ArgmaxSplitting(HloPass):
    """argmax/argmin reduces as a max and a first-hit min (module docstring)."""

    name = "argmax-splitting"

    def run(self, module: Module) -> bool:
        changed = False
        for comp in list(module.computations):
            if not comp.holds(_REDUCE):  # (what _splittable needs)
                continue
            for inst in comp.post_order():
                found = _splittable(inst)
                if found is not None:
                    split(module, comp, inst, *found)
                    changed = True
        if changed:
            module.remove_dead_computations()  # (the argmax combiners)
        return changed


__all__ = ["ArgmaxSplitting", "combiner_direction"]
