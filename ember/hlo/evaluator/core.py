"""The HLO evaluator: executes any HLO module with NumPy. The executable specification.

Input: a Module (or Computation) and NumPy arguments matching the entry parameters.
Output: a NumPy array, or a tuple for a tuple-shaped root. Fresh arrays: results never
alias the arguments or the module's constants.
Semantics follow XLA (see `elementwise.py` and `indexing.py`). Reductions use NumPy's
ufunc.reduce when to_apply is a plain add/multiply/maximum/minimum/and/or/xor (with the
init value and IEEE max/min zeros: `reductions.py`) and a left-to-right fold otherwise;
sort uses a stable argsort for a plain `lhs0 < rhs0` comparator and a stable comparison
sort driven by the comparator otherwise.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from ember.hlo.accumulation import accumulation_dtype
from ember.hlo.evaluator import collectives, fft, indexing, linalg, windows
from ember.hlo.evaluator.custom_calls import CUSTOM_CALLS, register_custom_call
from ember.hlo.evaluator.elementwise import (
    ELEMENTWISE,
    bitcast_convert_any_width,
    compare,
    convert_array,
    reduce_precision,
)
from ember.hlo.evaluator.reductions import REDUCE_UFUNCS, plain_reduce
from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape
from ember.hlo.window import parse_dim_labels

Value = np.ndarray | tuple
Handler = Callable[[Instruction, list[Value]], Value]
HANDLERS: dict[str, Handler] = {}

register_custom_call("ember.identity", lambda *xs, shape, backend_config=None: (
    np.array(xs[0], copy=True) if len(xs) == 1 else tuple(np.array(x) for x in xs)))


class EvaluationError(RuntimeError):
    pass


def _handles(*opcodes: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for op in opcodes:
            HANDLERS[op] = fn
        return fn

    return register


# ---------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------


def evaluate(module: Module | Computation, *args: Any) -> Value:
    """Run `module`'s entry computation on `args`; returns fresh arrays."""
    comp = module.entry if isinstance(module, Module) else module
    if len(args) != len(comp.parameters):
        raise EvaluationError(f"{comp.name} takes {len(comp.parameters)} arguments, "
                              f"got {len(args)}")
    vals = [_check_arg(p, a) for p, a in zip(comp.parameters, args)]
    return _fresh(evaluate_computation(comp, vals))


def _check_arg(param: Instruction, arg: Any) -> Value:
    if param.shape.is_tuple:
        return tuple(arg)
    want = param.shape
    a = np.asarray(arg)
    if a.dtype != want.dtype:
        if a.ndim == 0 and not isinstance(arg, np.ndarray | np.generic):
            a = a.astype(want.dtype)  # a Python scalar
        else:
            raise EvaluationError(f"parameter {param.parameter_number} wants {want}, "
                                  f"got {a.dtype}{list(a.shape)}")
    if tuple(a.shape) != want.dimensions:
        raise EvaluationError(f"parameter {param.parameter_number} wants {want}, "
                              f"got shape {a.shape}")
    return a


def _fresh(v: Value) -> Value:
    if isinstance(v, tuple):
        return tuple(_fresh(x) for x in v)
    return np.array(v, copy=True)


def evaluate_computation(comp: Computation, args: Sequence[Value],
                         order: list[Instruction] | None = None) -> Value:
    """Evaluate `comp` on already-checked argument values (arrays may broadcast); `order`
    is comp's post order when the caller already has it (a loop body run many times)."""
    env: dict[Instruction, Value] = {}
    for inst in comp.post_order() if order is None else order:
        if inst.opcode == "parameter":
            env[inst] = args[inst.parameter_number]
            continue
        handler = HANDLERS.get(inst.opcode)
        if handler is None:
            raise EvaluationError(f"no evaluator rule for opcode {inst.opcode}")
        env[inst] = handler(inst, [env[o] for o in inst.operands])
    return env[comp.root]


# ---------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------


def _elementwise(inst: Instruction, vals: list[Value]) -> Value:
    return ELEMENTWISE[inst.opcode](*vals)


for _name in ELEMENTWISE:
    HANDLERS[_name] = _elementwise


@_handles("compare")
def _compare(inst, vals):
    return compare(vals[0], vals[1], inst.attrs["direction"])


@_handles("convert")
def _convert(inst, vals):
    return convert_array(vals[0], inst.shape.dtype)


@_handles("bitcast-convert")
def _bitcast(inst, vals):
    return bitcast_convert_any_width(vals[0], inst.shape.dtype)


@_handles("reduce-precision")
def _reduce_precision(inst, vals):
    return reduce_precision(vals[0], inst.attrs["exponent_bits"], inst.attrs["mantissa_bits"])


@_handles("map")
def _map(inst, vals):
    out = apply_pointwise(inst.to_apply, [np.asarray(v) for v in vals])
    return np.asarray(out).astype(inst.shape.dtype)


# ---------------------------------------------------------------------------------------
# Applying scalar computations (to_apply of reduce/map/scatter, sort comparators)
# ---------------------------------------------------------------------------------------

_POINTWISE_OK = {"parameter", "constant", "tuple", "get-tuple-element", "compare", "convert",
                 "bitcast-convert"} | set(ELEMENTWISE)


def is_pointwise(comp: Computation) -> bool:
    """True when every instruction works elementwise, so arrays can stand in for scalars."""
    return all(i.opcode in _POINTWISE_OK and (i.opcode != "constant" or i.value.ndim == 0)
               and (i.opcode != "bitcast-convert" or i.is_elementwise())
               for i in comp.instructions)


def apply_pointwise(comp: Computation, args: list[np.ndarray]) -> Value:
    """Evaluate a scalar computation over equal-shape arrays, element by element."""
    if is_pointwise(comp):
        return evaluate_computation(comp, args)
    shape = np.broadcast_shapes(*(a.shape for a in args))
    args = [np.broadcast_to(a, shape) for a in args]
    results = [evaluate_computation(comp, [a[idx] for a in args]) for idx in np.ndindex(shape)]
    if results and isinstance(results[0], tuple):
        return tuple(np.array([r[k] for r in results]).reshape(shape)
                     for k in range(len(results[0])))
    dtype = comp.root.shape.dtype
    return np.array(results, dtype=dtype).reshape(shape)


_REDUCE_UFUNCS = REDUCE_UFUNCS


def plain_binary_opcode(comp: Computation) -> str | None:
    """'add' etc. when comp is `(p0, p1) -> op(p0, p1)` (either order) of a commutative op;
    'overwrite' when it returns p1 (scatter's replace); else None."""
    root = comp.root
    if len(comp.parameters) != 2 or root is None:
        return None
    p0, p1 = comp.parameters
    if root is p1:
        return "overwrite"
    if root.opcode in _REDUCE_UFUNCS and len(root.operands) == 2 and {
            id(root.operands[0]), id(root.operands[1])} == {id(p0), id(p1)}:
        return root.opcode
    return None


# ---------------------------------------------------------------------------------------
# Reduce and sort
# ---------------------------------------------------------------------------------------


@_handles("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
def _collective(inst, vals):
    """Through the device runner of this thread (collectives.py): reduce-scatter and
    all-reduce name their combiner ('add', 'maximum', ...), all-gather, reduce-scatter and
    all-to-all their dimension; collective-permute its pairs where the others their
    groups."""
    reducer = (plain_binary_opcode(inst.to_apply) if inst.called_computations else None)
    if inst.called_computations and reducer in (None, "overwrite"):
        raise EvaluationError(f"{inst.opcode} combines with a computation that is not a "
                              "plain add/multiply/maximum/minimum/and/or/xor")
    dims = inst.attrs.get("dimensions")
    try:
        out = collectives.run(inst.opcode, reducer, collectives.partners(inst.attrs),
                              int(dims[0]) if dims else None, np.asarray(vals[0]))
    except collectives.NoDeviceRunner as e:
        raise EvaluationError(str(e)) from None
    return np.asarray(out, dtype=inst.shape.dtype).reshape(inst.shape.dimensions)


@_handles("reduce")
def _reduce(inst, vals):
    n = len(vals) // 2
    xs = [np.asarray(v) for v in vals[:n]]
    inits = [np.asarray(v) for v in vals[n:]]
    dims = tuple(inst.attrs["dimensions"])
    comp = inst.to_apply
    fast = plain_binary_opcode(comp) if n == 1 else None
    if fast in _REDUCE_UFUNCS and dims:
        return plain_reduce(fast, xs[0], dims, inits[0])  # (eager reductions share it)
    # Left fold along the reduced dims, vectorized over the kept ones.
    kept = [d for d in range(xs[0].ndim) if d not in dims]
    outer = tuple(xs[0].shape[d] for d in kept)
    count = int(np.prod([xs[0].shape[d] for d in dims], dtype=np.int64))
    flat = [np.transpose(x, kept + list(dims)).reshape(outer + (count,)) for x in xs]
    acc: list[np.ndarray] = [np.broadcast_to(i, outer).copy() for i in inits]
    for k in range(flat[0].shape[-1]):
        r = apply_pointwise(comp, [np.asarray(a) for a in acc] + [f[..., k] for f in flat])
        acc = list(r) if isinstance(r, tuple) else [r]
    acc = [np.asarray(a).reshape(outer).astype(x.dtype) for a, x in zip(acc, xs)]
    return acc[0] if n == 1 else tuple(acc)


def _is_plain_lt(comp: Computation) -> bool:
    root = comp.root
    if root.opcode != "compare" or len(comp.parameters) < 2:
        return False
    p0, p1 = comp.parameters[0], comp.parameters[1]
    a, b = root.operands
    d = root.attrs["direction"]
    return (d == "LT" and a is p0 and b is p1) or (d == "GT" and a is p1 and b is p0)


def comparator_sort_permutation(comp: Computation, rows: list[np.ndarray]) -> np.ndarray:
    """The stable sorting permutation of each row under a comparator computation.

    A bottom-up merge sort, vectorized over rows and over all runs of one level: merging
    two sorted runs places each element at (its offset in its run) + (its rank in the other
    run), where the rank is found by binary search. For a left-run element a the rank counts
    right-run elements b with less(b, a); for a right-run element b it counts left-run
    elements a with not less(b, a), so equal elements keep their order (stability). Each
    search step evaluates the comparator once over all elements: O(n log^2 n) work in
    O(log^2 n) NumPy passes.
    """
    nrows, n = rows[0].shape
    perm = np.tile(np.arange(n), (nrows, 1))
    if n < 2 or nrows == 0:
        return perm
    r = np.arange(nrows)[:, None]
    pos = np.arange(n)

    def less(a: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
        args = []
        for x, y in zip(a, b):
            args += [x, y]
        return np.asarray(apply_pointwise(comp, args), dtype=bool)

    width = 1
    while width < n:
        block, half, off = pos // (2 * width), (pos // width) % 2, pos % width
        other = block * 2 * width + (1 - half) * width
        other_len = np.clip(np.minimum(other + width, n) - other, 0, None)
        cur = [x[r, perm] for x in rows]
        lo = np.zeros((nrows, n), dtype=np.int64)
        hi = np.broadcast_to(other_len, (nrows, n)).copy()
        active = lo < hi
        while active.any():
            mid = (lo + hi) // 2
            cand_pos = np.minimum(other + mid, n - 1)
            cand = [x[r, perm[r, cand_pos]] for x in rows]
            # Left elements count candidates strictly before them; right elements count
            # candidates not after them.
            p_left = less(cand, cur)
            p_right = ~less(cur, cand)
            pred = np.where(half == 0, p_left, p_right)
            lo = np.where(active & pred, mid + 1, lo)
            hi = np.where(active & ~pred, mid, hi)
            active = lo < hi
        new_perm = np.empty_like(perm)
        new_perm[r, block * 2 * width + off + lo] = perm
        perm = new_perm
        width *= 2
    return perm


@_handles("sort")
def _sort(inst, vals):
    xs = [np.asarray(v) for v in vals]
    dim = inst.attrs["dimension"]
    comp = inst.to_apply
    if xs[0].ndim == 0:
        out = [x.copy() for x in xs]
    elif _is_plain_lt(comp):
        order = np.argsort(xs[0], axis=dim, kind="stable")
        out = [np.take_along_axis(x, order, axis=dim) for x in xs]
    else:
        moved = [np.moveaxis(x, dim, -1) for x in xs]
        n = moved[0].shape[-1]
        rows = [m.reshape(-1, n) if m.size else m.reshape(0, n) for m in moved]
        perm = comparator_sort_permutation(comp, rows)
        r = np.arange(rows[0].shape[0])[:, None]
        out = [np.moveaxis(x[r, perm].reshape(m.shape), -1, dim) for x, m in zip(rows, moved)]
    return out[0] if len(out) == 1 else tuple(out)


# ---------------------------------------------------------------------------------------
# Shape manipulation and indexing
# ---------------------------------------------------------------------------------------


@_handles("constant")
def _constant(inst, vals):
    return inst.value


@_handles("iota")
def _iota(inst, vals):
    s = inst.shape
    d = inst.attrs["iota_dimension"]
    line = np.arange(s.dimensions[d]).astype(s.dtype)
    shape = [1] * s.rank
    shape[d] = s.dimensions[d]
    return np.broadcast_to(line.reshape(shape), s.dimensions).copy()


@_handles("broadcast")
def _broadcast(inst, vals):
    x = np.asarray(vals[0])
    dims = inst.attrs["dimensions"]
    out = inst.shape.dimensions
    # Put operand dims where `dimensions` says (in increasing order), size-1 elsewhere.
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    xt = np.transpose(x, order) if x.ndim else x
    shape = [1] * len(out)
    for i in order:
        shape[dims[i]] = x.shape[i]
    return np.broadcast_to(xt.reshape(shape), out).copy()


@_handles("reshape")
def _reshape(inst, vals):
    return np.asarray(vals[0]).reshape(inst.shape.dimensions)


@_handles("transpose")
def _transpose(inst, vals):
    return np.asarray(np.transpose(vals[0], inst.attrs["dimensions"]), order="C")


@_handles("reverse")
def _reverse(inst, vals):
    return np.flip(vals[0], axis=tuple(inst.attrs["dimensions"])).copy()


@_handles("slice")
def _slice(inst, vals):
    return vals[0][tuple(slice(a, b, c) for a, b, c in inst.attrs["slice"])].copy()


@_handles("dynamic-slice")
def _dynamic_slice(inst, vals):
    return indexing.dynamic_slice(vals[0], vals[1:], tuple(inst.attrs["dynamic_slice_sizes"]))


@_handles("dynamic-update-slice")
def _dynamic_update_slice(inst, vals):
    return indexing.dynamic_update_slice(vals[0], vals[1], vals[2:])


@_handles("gather")
def _gather(inst, vals):
    return indexing.gather(vals[0], vals[1], inst.attrs)


@_handles("scatter")
def _scatter(inst, vals):
    comp = inst.to_apply

    def apply(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        return evaluate_computation(comp, [np.asarray(old), np.asarray(new)])

    return indexing.scatter(vals[0], vals[1], vals[2], inst.attrs, plain_binary_opcode(comp),
                            apply)


@_handles("pad")
def _pad(inst, vals):
    return indexing.pad(vals[0], vals[1], inst.attrs["padding"])


@_handles("concatenate")
def _concatenate(inst, vals):
    return np.concatenate(vals, axis=inst.attrs["dimension"])


# ---------------------------------------------------------------------------------------
# Dot
# ---------------------------------------------------------------------------------------


def dot_general(lhs: np.ndarray, rhs: np.ndarray, lc: list[int], rc: list[int],
                lb: list[int], rb: list[int], dtype: np.dtype) -> np.ndarray:
    """dot with XLA's semantics, result of `dtype`: [batch..., lhs free..., rhs free...].
    The evaluator's `dot` and the eager rule of `dot_general` (prims/dot.py) both run it.
    Integers wrap (two's complement), bool is or-of-ands (NumPy's bool matmul), float16
    and bfloat16 accumulate in float32 (hlo/accumulation.py), other floats in their own
    type (BLAS)."""
    lf = [d for d in range(lhs.ndim) if d not in lc + lb]
    rf = [d for d in range(rhs.ndim) if d not in rc + rb]
    out_shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lf]
                 + [rhs.shape[d] for d in rf])
    # (math.prod of Python ints: np.prod of a list costs ~2 us, a tenth of a small eager dot)
    m = math.prod(lhs.shape[d] for d in lf)
    n = math.prod(rhs.shape[d] for d in rf)
    k = math.prod(lhs.shape[d] for d in lc)
    bsz = math.prod(lhs.shape[d] for d in lb)
    # (batch, M, K) @ (batch, K, N): BLAS for floats, wrapping loops for integers.
    lm = np.transpose(lhs, lb + lf + lc).reshape(bsz, m, k)
    rm = np.transpose(rhs, rb + rc + rf).reshape(bsz, k, n)
    if dtype == np.bool_:
        r = np.matmul(lm.astype(np.bool_, copy=False), rm.astype(np.bool_, copy=False))
    else:
        acc = accumulation_dtype(dtype)
        with np.errstate(all="ignore"):
            r = np.matmul(lm.astype(acc, copy=False), rm.astype(acc, copy=False))
    return np.asarray(r).reshape(out_shape).astype(dtype, copy=False)


@_handles("dot")
def _dot(inst, vals):
    lhs, rhs = (np.asarray(v) for v in vals)
    a = inst.attrs
    return dot_general(lhs, rhs, list(a["lhs_contracting_dims"]),
                       list(a["rhs_contracting_dims"]), list(a["lhs_batch_dims"]),
                       list(a["rhs_batch_dims"]), inst.shape.dtype)


@_handles("convolution")
def _convolution(inst, vals):
    a = inst.attrs
    return windows.convolution(np.asarray(vals[0]), np.asarray(vals[1]), a["window"],
                               parse_dim_labels(a["dim_labels"]),
                               a.get("feature_group_count", 1), a.get("batch_group_count", 1),
                               inst.shape.dtype)


@_handles("reduce-window")
def _reduce_window(inst, vals):
    comp = inst.to_apply
    op = plain_binary_opcode(comp)
    if op in ELEMENTWISE:  # (maximum/minimum keep IEEE's NaN and signed-zero rules)
        fn = ELEMENTWISE[op]
    else:
        def fn(acc: np.ndarray, x: np.ndarray) -> np.ndarray:
            return np.asarray(apply_pointwise(comp, [acc, np.ascontiguousarray(x)]))
    return windows.reduce_window(np.asarray(vals[0]), np.asarray(vals[1]),
                                 inst.attrs["window"], fn)


# ---------------------------------------------------------------------------------------
# Tuples, control flow, calls
# ---------------------------------------------------------------------------------------


@_handles("tuple")
def _tuple(inst, vals):
    return tuple(vals)


@_handles("opt-barrier")
def _opt_barrier(inst, vals):
    return vals[0]


@_handles("get-tuple-element")
def _gte(inst, vals):
    return vals[0][inst.attrs["index"]]


@_handles("copy")
def _copy(inst, vals):
    return _fresh(vals[0])


_WHILE_LIMIT: ContextVar[int | None] = ContextVar("while_limit", default=None)


@contextlib.contextmanager
def while_iteration_limit(limit: int | None) -> Iterator[None]:
    """Within the block, a while loop running more than `limit` iterations raises
    EvaluationError (used by checks that evaluate modules on random inputs)."""
    token = _WHILE_LIMIT.set(limit)
    try:
        yield
    finally:
        _WHILE_LIMIT.reset(token)


@_handles("while")
def _while(inst, vals):
    """Run the body while the condition holds; the state is never copied (no handler
    writes to its operands), and each computation's order is found once per loop."""
    state = vals[0]
    cond, body = inst.while_condition, inst.while_body
    cond_order, body_order = cond.post_order(), body.post_order()
    limit = _WHILE_LIMIT.get()
    n = 0
    while bool(evaluate_computation(cond, [state], cond_order)):
        n += 1
        if limit is not None and n > limit:
            raise EvaluationError(f"while %{inst.name} ran past {limit} iterations")
        state = evaluate_computation(body, [state], body_order)
    return state


def branch_index(selector: np.ndarray, count: int) -> int:
    """XLA's choice of branch: a pred runs branch 0 when true and 1 when false; an s32
    index out of [0, count) runs the last branch."""
    sel = np.asarray(selector)
    if sel.dtype == np.bool_:
        return 0 if bool(sel) else 1
    k = int(sel)
    return k if 0 <= k < count else count - 1


@_handles("conditional")
def _conditional(inst, vals):
    k = branch_index(vals[0], len(inst.branch_computations))
    return evaluate_computation(inst.branch_computations[k], [vals[1 + k]])


@_handles("call", "fusion")
def _call(inst, vals):
    return evaluate_computation(inst.called_computations[0], vals)


@_handles("cholesky")
def _cholesky(inst, vals):
    return linalg.cholesky(vals[0], bool(inst.attrs.get("lower", False)))


@_handles("triangular-solve")
def _triangular_solve(inst, vals):
    return linalg.triangular_solve(
        vals[0], vals[1], left_side=bool(inst.attrs.get("left_side", False)),
        lower=bool(inst.attrs.get("lower", False)),
        transpose_a=inst.attrs.get("transpose_a", "NO_TRANSPOSE") != "NO_TRANSPOSE",
        conjugate_a=inst.attrs.get("transpose_a") == "ADJOINT",
        unit_diagonal=bool(inst.attrs.get("unit_diagonal", False)))


@_handles("fft")
def _fft(inst, vals):
    return fft.fft(vals[0], inst.attrs["fft_type"], tuple(inst.attrs["fft_length"]))


@_handles("custom-call")
def _custom_call(inst, vals):
    target = inst.attrs["custom_call_target"]
    fn = CUSTOM_CALLS.get(target)
    if fn is None:
        raise EvaluationError(f"no evaluator for custom-call target {target!r}")
    return fn(*vals, shape=inst.shape, backend_config=inst.attrs.get("backend_config"))


def missing_opcodes() -> list[str]:
    """Opcodes in the table without an evaluator rule (parameter is handled inline)."""
    return sorted(op for op in OPCODES if op not in HANDLERS and op != "parameter")


def result_shape_matches(shape: Shape, value: Value) -> bool:
    if shape.is_tuple:
        return isinstance(value, tuple) and len(value) == len(shape.tuple_shapes) and all(
            result_shape_matches(s, v) for s, v in zip(shape.tuple_shapes, value))
    v = np.asarray(value)
    return v.dtype == shape.dtype and tuple(v.shape) == shape.dimensions
