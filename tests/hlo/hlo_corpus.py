"""A corpus of HLO modules touching every opcode, with random-input generators.

Used by the round-trip, verifier and pass differential tests. Each entry is
(name, module, make_inputs(rng) -> list of arrays).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ember.hlo.builder import Builder
from ember.hlo.ir import Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape

Entry = tuple[str, Module, Callable[[np.random.Generator], list[np.ndarray]]]

FLOAT_UNARY = [n for n, r in OPCODES.items() if r.elementwise and r.arity == 1 and n not in (
    "convert", "bitcast-convert", "reduce-precision", "not", "popcnt", "clz", "copy",
    "is-finite", "real", "imag")]  # (real, imag: complex operands only)
FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum",
                "minimum", "atan2"]
INT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum",
              "minimum", "and", "or", "xor", "shift-left", "shift-right-logical",
              "shift-right-arithmetic"]


def random_array(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    dt = shape.dtype
    dims = shape.dimensions
    if dt == np.bool_:
        return rng.random(dims) < 0.5
    if dt.kind == "f":
        x = rng.standard_normal(dims) * 3
        return x.astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -40), min(info.max, 40)
    return rng.integers(lo, hi + 1, size=dims).astype(dt)


def _inputs(module: Module) -> Callable[[np.random.Generator], list[np.ndarray]]:
    shapes = [p.shape for p in module.entry.parameters]
    return lambda rng: [random_array(rng, s) for s in shapes]


def elementwise_float(et: str) -> Module:
    b = Builder(f"elementwise_{et}")
    s = Shape(et, (7,))
    x, y = b.parameter(s), b.parameter(s)
    outs = [b.unary(op, x) for op in FLOAT_UNARY]
    outs += [b.binary(op, x, y) for op in FLOAT_BINARY]
    outs += [b.compare(x, y, d) for d in ("EQ", "NE", "LT", "LE", "GT", "GE")]
    outs.append(b.is_finite(b.divide(x, y)))
    outs.append(b.select(b.compare(x, y, "LT"), x, y))
    outs.append(b.clamp(b.negate(b.abs_(y)), x, b.abs_(y)))
    outs.append(b.convert(x, "s32"))
    outs.append(b.convert(x, "u8"))
    outs.append(b.convert(x, "pred"))
    outs.append(b.bitcast_convert(x, "s32" if et == "f32" else "s64"))
    outs.append(b.reduce_precision(x, 5, 10))
    outs.append(b.copy(x))
    return b.build(b.tuple(outs))


def elementwise_int(et: str) -> Module:
    b = Builder(f"elementwise_{et}")
    s = Shape(et, (9,))
    x, y = b.parameter(s), b.parameter(s)
    outs = [b.binary(op, x, y) for op in INT_BINARY]
    outs += [b.unary(op, x) for op in ("negate", "abs", "sign", "not", "popcnt", "clz")]
    outs.append(b.convert(x, "f32"))
    outs.append(b.convert(x, "s8"))
    outs.append(b.compare(x, y, "LE"))
    return b.build(b.tuple(outs))


def constants() -> Module:
    b = Builder("constants")
    x = b.parameter(Shape("f32", (6,)))
    c32 = b.constant(np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 0.1], np.float32))
    c64 = b.constant(np.array([[np.nan, 5e-324], [-0.0, 0.1]], np.float64))
    big = b.constant(np.arange(20, dtype=np.float32) / 7)
    cb = b.constant(np.array([True, False]))
    cu = b.constant(np.array([2**64 - 1, 0], np.uint64))
    ci = b.constant(np.int8(-128))
    return b.build(b.tuple([b.add(x, c32), c64, big, cb, cu, ci]))


def shapes() -> Module:
    b = Builder("shapes")
    x = b.parameter(Shape("f32", (2, 3, 4)))
    i = b.parameter(Shape("s32", ()))
    outs = [
        b.broadcast(b.slice(x, (0, 0, 0), (1, 1, 4)), (5, 1, 1, 4), (1, 2, 3)),
        b.reshape(x, (6, 4)),
        b.transpose(x, (2, 0, 1)),
        b.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 2)),
        b.dynamic_slice(x, [i, i, b.scalar(1, "s32")], (1, 2, 2)),
        b.dynamic_update_slice(x, b.broadcast(b.scalar(7.0, "f32"), (1, 2, 2)), [i, i, i]),
        b.pad(x, b.scalar(-1.5, "f32"), [(1, 0, 0), (0, 2, 1), (-1, 1, 0)]),
        b.concatenate([x, x, b.negate(x)], 1),
        b.reverse(x, (0, 2)),
        b.iota(Shape("s32", (3, 5)), 1),
        b.iota(Shape("f32", (4,)), 0),
    ]
    return b.build(b.tuple(outs))


def reductions() -> Module:
    b = Builder("reductions")
    x = b.parameter(Shape("f32", (4, 5)))
    k = b.parameter(Shape("s32", (4, 5)))
    add = Builder.scalar_computation("add", "f32")
    mx = Builder.scalar_computation("maximum", "f32")
    # argmax as a variadic reduce with a generic to_apply
    ab = Builder("argmax")
    s, si = Shape("f32", ()), Shape("s32", ())
    av, ai, bv, bi = ab.parameter(s), ab.parameter(si), ab.parameter(s), ab.parameter(si)
    take_a = ab.compare(av, bv, "GE")
    argmax = ab.build_computation(ab.tuple([ab.select(take_a, av, bv),
                                            ab.select(take_a, ai, bi)]))
    iota = b.iota(Shape("s32", (4, 5)), 1)
    outs = [
        b.reduce(x, b.scalar(0, "f32"), [1], add),
        b.reduce(x, b.scalar(-np.inf, "f32"), [0, 1], mx),
        b.reduce([x, iota], [b.scalar(-np.inf, "f32"), b.scalar(0, "s32")], [1], argmax),
        b.reduce(k, b.scalar(1, "s32"), [0], Builder.scalar_computation("multiply", "s32")),
        b.map([x, x], Builder.scalar_computation("subtract", "f32")),
    ]
    # a reducer that is not a plain binary op: sum of squares of the new element
    sq = Builder("sumsq")
    acc, v = sq.parameter(s), sq.parameter(s)
    sumsq = sq.build_computation(sq.add(acc, sq.multiply(v, v)))
    outs.append(b.reduce(x, b.scalar(0, "f32"), [0], sumsq))
    return b.build(b.tuple(outs))


def sorting() -> Module:
    b = Builder("sorting")
    x = b.parameter(Shape("f32", (3, 6)))
    k = b.parameter(Shape("s32", (3, 6)))
    lt = Builder.comparator(["f32", "s32"], "LT")
    # descending on the int key, ties broken by the float ascending
    cb = Builder("by_key_desc")
    a0, b0 = cb.parameter(Shape("f32", ())), cb.parameter(Shape("f32", ()))
    a1, b1 = cb.parameter(Shape("s32", ())), cb.parameter(Shape("s32", ()))
    gt = cb.compare(a1, b1, "GT")
    eq = cb.compare(a1, b1, "EQ")
    cmp = cb.build_computation(cb.or_(gt, cb.and_(eq, cb.compare(a0, b0, "LT"))))
    s1 = b.sort([x, k], 1, lt, is_stable=True)
    s2 = b.sort([x, k], 1, cmp)
    s3 = b.sort(k, 0, Builder.comparator("s32", "GT"))
    return b.build(b.tuple([b.get_tuple_element(s1, 0), b.get_tuple_element(s2, 1), s3]))


def control_flow() -> Module:
    st = Shape.tuple_of([Shape("s32", ()), Shape("f32", (4,))])
    cb = Builder("cond")
    p = cb.parameter(st)
    cond = cb.build_computation(cb.compare(cb.get_tuple_element(p, 0), cb.scalar(5, "s32"),
                                           "LT"))
    bb = Builder("body")
    p = bb.parameter(st)
    i, v = bb.get_tuple_element(p, 0), bb.get_tuple_element(p, 1)
    v2 = bb.add(bb.multiply(v, bb.broadcast(bb.scalar(0.99, "f32"), (4,))), bb.sine(v))
    body = bb.build_computation(bb.tuple([bb.add(i, bb.scalar(1, "s32")), v2]))
    branches = []
    for k, op in enumerate(("exponential", "negate", "tanh")):
        br = Builder(f"branch{k}")
        branches.append(br.build_computation(br.unary(op, br.parameter(Shape("f32", (4,))))))
    fb = Builder("fused_computation")
    fp0, fp1 = fb.parameter(Shape("f32", (4,))), fb.parameter(Shape("f32", (4,)))
    fused = fb.build_computation(fb.add(fb.multiply(fb.sine(fp0), fp1), fp1))
    callee = Builder("callee")
    cp = callee.parameter(Shape("f32", (4,)))
    called = callee.build_computation(callee.multiply(cp, cp))

    b = Builder("control_flow")
    x = b.parameter(Shape("f32", (4,)))
    sel = b.parameter(Shape("s32", ()))
    w = b.while_loop(cond, body, b.tuple([b.scalar(0, "s32"), x]))
    c = b.conditional(sel, branches, [x, x, x])
    pr = b.conditional(b.compare(sel, b.scalar(1, "s32"), "GT"), branches[:2], [x, x])
    f = b.fusion(fused, [x, b.get_tuple_element(w, 1)])
    cl = b.call(called, [f])
    cc = b.custom_call("ember.identity", [cl], Shape("f32", (4,)))
    return b.build(b.tuple([w, c, pr, cc]))


def indexing() -> Module:
    b = Builder("indexing")
    x = b.parameter(Shape("f32", (5, 4)))
    idx = b.parameter(Shape("s32", (3,)))
    upd = b.parameter(Shape("f32", (3, 4)))
    rows = b.gather(x, idx, offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                    index_vector_dim=1, slice_sizes=(1, 4))
    add = Builder.scalar_computation("add", "f32")
    sc = b.scatter(x, idx, upd, add, update_window_dims=(1,), inserted_window_dims=(0,),
                   scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    ow = Builder("overwrite")
    ow.parameter(Shape("f32", ()))
    over = ow.build_computation(ow.parameter(Shape("f32", ())))
    sc2 = b.scatter(x, idx, upd, over, update_window_dims=(1,), inserted_window_dims=(0,),
                    scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    dt = b.dot(x, upd, (1,), (1,))
    bd = b.dot(b.reshape(x, (5, 2, 2)), b.reshape(x, (5, 2, 2)), (2,), (1,), (0,), (0,))
    return b.build(b.tuple([rows, sc, sc2, dt, bd]))


def corpus() -> list[Entry]:
    mods = [elementwise_float("f32"), elementwise_float("f64"), elementwise_int("s32"),
            elementwise_int("u8"), constants(), shapes(), reductions(), sorting(),
            control_flow()]
    out: list[Entry] = []
    for m in mods:
        out.append((m.name, m, _inputs(m)))
    ix = indexing()

    def ix_inputs(rng: np.random.Generator) -> list[np.ndarray]:
        return [random_array(rng, Shape("f32", (5, 4))), rng.integers(-1, 6, 3).astype(np.int32),
                random_array(rng, Shape("f32", (3, 4)))]

    out.append((ix.name, ix, ix_inputs))
    return out


def bit_equal(a, b) -> bool:
    """Bit-identical values (NaN payloads included); tuples compared leafwise."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(bit_equal(x, y) for x, y in zip(a, b)))
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tobytes() == b.tobytes()
