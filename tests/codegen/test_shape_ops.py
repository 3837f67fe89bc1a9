"""Index-remapping and type ops compiled (fused and alone) against the interpreter."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from codegen_util import check, edge_array

from ember.hlo import Builder, Shape


def _param_module(name, et, dims, make):
    b = Builder(name)
    x = b.parameter(Shape(et, dims))
    return b.build(make(b, x))


CASES = {
    "broadcast": ((3, 4), lambda b, x: b.broadcast(x, (2, 4, 3), (2, 1))),
    "broadcast_scalar": ((), lambda b, x: b.broadcast(x, (5, 7), ())),
    "reshape": ((6, 4), lambda b, x: b.reshape(x, (2, 3, 4))),
    "transpose": ((2, 3, 5), lambda b, x: b.transpose(x, (2, 0, 1))),
    "slice": ((9, 10), lambda b, x: b.slice(x, (1, 2), (8, 10), (3, 2))),
    "pad": ((3, 4), lambda b, x: b.pad(x, b.scalar(7, x.shape.element_type),
                                      [(1, 2, 1), (-1, 3, 0)])),
    "pad_empty": ((0, 4), lambda b, x: b.pad(x, b.scalar(7, x.shape.element_type),
                                            [(1, 1, 0), (0, 0, 0)])),
    "concatenate": ((3, 4), lambda b, x: b.concatenate(
        [x, b.negate(x) if x.shape.element_type != "u32" else x,
         b.slice(x, (0, 0), (3, 0))], 1)),
    "reverse": ((4, 5), lambda b, x: b.reverse(x, (0, 1))),
    "copy": ((7,), lambda b, x: b.copy(x)),
    "iota_plus": ((4, 6), lambda b, x: b.add(x, b.convert(b.iota(Shape("s32", (4, 6)), 1),
                                                          x.shape.element_type))),
    "dynamic_slice": ((6, 7), lambda b, x: b.dynamic_slice(
        x, [b.scalar(2, "s32"), b.scalar(100, "s32")], (3, 4))),
    "dynamic_update_slice": ((6, 7), lambda b, x: b.dynamic_update_slice(
        x, b.slice(x, (0, 0), (2, 3)), [b.scalar(-5, "s32"), b.scalar(3, "s32")])),
    "chain": ((4, 6), lambda b, x: b.multiply(
        b.transpose(b.reshape(b.slice(x, (0, 0), (4, 6)), (6, 4)), (1, 0)),
        b.reverse(x, (1,)))),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("et", ["f32", "s32", "u32"])
def test_shape_op(name, et):
    dims, make = CASES[name]
    m = _param_module(name, et, dims, make)
    check(m, edge_array(Shape(et, ()).dtype, dims, seed=5), what=f"{name} {et}")


TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u32", "u64", "f16", "f32", "f64"]


@pytest.mark.parametrize("src", TYPES)
def test_convert_all_pairs(src):
    b = Builder(f"convert_{src}")
    x = b.parameter(Shape(src, (40,)))
    m = b.build(b.tuple([b.convert(x, dst) for dst in TYPES]))
    xs = edge_array(Shape(src, ()).dtype, (40,), seed=7)
    if src.startswith("f"):
        big = np.array([3e9, -3e9, 1e20, -1e20, 2.0**31, -(2.0**31), 2.0**63, 255.9, -0.7,
                        np.nan, np.inf, -np.inf])
        with np.errstate(over="ignore"):
            xs[:12] = big.astype(xs.dtype)
    check(m, xs, what=f"convert from {src}")


@pytest.mark.parametrize("src,dst", [("f32", "s32"), ("s32", "f32"), ("f64", "u64"),
                                     ("u16", "f16"), ("s8", "u8")])
def test_bitcast_convert(src, dst):
    b = Builder("bitcast")
    x = b.parameter(Shape(src, (33,)))
    m = b.build(b.bitcast_convert(x, dst))
    check(m, edge_array(Shape(src, ()).dtype, (33,), seed=3))


@pytest.mark.parametrize("et,e,mant", [("f32", 8, 7), ("f32", 5, 10), ("f64", 8, 23)])
def test_reduce_precision(et, e, mant):
    b = Builder("rp")
    x = b.parameter(Shape(et, (33,)))
    m = b.build(b.reduce_precision(x, e, mant))
    check(m, edge_array(Shape(et, ()).dtype, (33,), seed=4))


def test_map_call_tuple_gte_constant():
    sb = Builder("scalar_fn")
    p, q = sb.parameter(Shape("f32", ())), sb.parameter(Shape("f32", ()))
    fn = sb.build_computation(sb.add(sb.multiply(p, q), sb.scalar(1.0, "f32")))
    cb = Builder("callee")
    cx = cb.parameter(Shape("f32", (5,)))
    callee = cb.build_computation(cb.negate(cx))
    b = Builder("misc")
    x = b.parameter(Shape("f32", (5,)))
    c = b.constant(np.arange(5, dtype=np.float32) / 3)
    mapped = b.map([x, c], fn)
    called = b.call(callee, [mapped])
    t = b.tuple([called, x, c, called])
    m = b.build(b.tuple([b.get_tuple_element(t, 0), b.get_tuple_element(t, 1),
                         b.get_tuple_element(t, 2), t]))
    check(m, edge_array(np.float32, (5,), seed=9))


def test_outputs_are_fresh():
    b = Builder("identity")
    x = b.parameter(Shape("f32", (4,)))
    m = b.build(b.tuple([x, x]))
    from ember.backends import cpu

    xs = np.arange(4, dtype=np.float32)
    r0, r1 = cpu.compile(m)(xs)
    r0[0] = 100
    assert xs[0] == 0 and r1[0] == 0


def test_noncontiguous_and_python_scalar_inputs():
    b = Builder("mix")
    x = b.parameter(Shape("f32", (3, 4)))
    s = b.parameter(Shape("f32", ()))
    m = b.build(b.add(x, b.broadcast(s, (3, 4), ())))
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    xs = base[:3, ::2][:, :4] if base[:3, ::2].shape[1] >= 4 else base.T[:3, :4]
    check(m, np.asarray(xs), np.float32(2.5))
    from ember.backends import cpu

    got = cpu.compile(m)(xs, 2.5)
    np.testing.assert_array_equal(got, xs + np.float32(2.5))


def test_shapes_product():
    # every loop-nest rank from 0 to 4 with a broadcast that forces the nested path
    for rank in range(5):
        dims = tuple(itertools.islice(itertools.cycle([3, 1, 4, 2]), rank))
        b = Builder(f"rank{rank}")
        x = b.parameter(Shape("f32", dims))
        y = b.parameter(Shape("f32", dims[:1]))
        yb = b.broadcast(y, dims, (0,)) if rank else y
        m = b.build(b.subtract(x, yb))
        check(m, edge_array(np.float32, dims, 1), edge_array(np.float32, dims[:1], 2))
