"""Loop kernels split at the borders of pads, concatenates and constant-start dynamic updates
(ember/codegen/regions.py): the planner's boxes and range rules, and compiled kernels of
random programs of those ops against the interpreter, over ranks 1-3, odd sizes, negative
and interior padding, strides, reverses and dtypes; with threads splitting the boxes too.
(test_region_bounds.py runs such kernels on inputs between guard pages.)"""

from __future__ import annotations

import numpy as np
import pytest
from codegen_util import assert_same, edge_array
from region_programs import random_program

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.codegen import regions
from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.lowering import lower_jaxpr


def check(module, *args, what: str = "", **options):
    """Compile, run, compare with the interpreter bit for bit (complex values part by part:
    NaN parts compare equal); returns the executable."""
    exe = cpu.compile(module, **options)
    got, want = np.asarray(exe(*args)), np.asarray(evaluate(module, *args))
    if got.dtype.kind == "c":
        assert got.dtype == want.dtype, what
        assert_same(got.real.copy(), want.real.copy(), what=what + " (real)")
        assert_same(got.imag.copy(), want.imag.copy(), what=what + " (imag)")
    else:
        assert_same(got, want, what=what)
    return exe

# -- the range rules -----------------------------------------------------------------------


@pytest.mark.parametrize("n,lo,interior", [(n, lo, it) for n in (1, 2, 5)
                                           for lo in (-4, -1, 0, 2) for it in (0, 1, 2)])
def test_pad_dim_agrees_with_enumeration(n, lo, interior):
    step = interior + 1
    out_n = max(lo + (n - 1) * step + 1 + 3, 1)  # 3 elements of high padding
    element = {lo + k * step: k for k in range(n)}  # output index -> operand index
    for a in range(out_n):
        for b in range(a + 1, out_n + 1):
            where, rng = regions.pad_dim((a, b), lo, interior, n)
            read = [element[i] for i in range(a, b) if i in element]
            if where == regions.OUT:
                assert not read, (a, b)
                continue
            assert read and rng == (min(read), max(read) + 1), (a, b, rng, read)
            assert (where == regions.IN) == (len(read) == b - a), (a, b, where)


def test_piece_range():
    assert regions.piece_range((0, 10), 3, 4) == (0, 4)
    assert regions.piece_range((4, 6), 3, 4) == (1, 3)
    assert regions.piece_range((7, 9), 3, 4) is None
    assert regions.piece_range((0, 3), 3, 4) is None


def test_unit_reshape():
    assert regions.unit_reshape((3, 1, 4), (3, 4)) == [0, 2]
    assert regions.unit_reshape((3, 4), (1, 3, 4, 1)) == [None, 0, 1, None]
    assert regions.unit_reshape((3, 4), (4, 3)) is None
    assert regions.unit_reshape((12,), (3, 4)) is None


# -- the planner -----------------------------------------------------------------------------


def _stencil_pad(n: int = 16) -> tuple[Builder, object]:
    b = Builder("stencil_pad")
    x = b.parameter(Shape("f32", (n, n)))
    c = b.slice(x, (1, 1), (n - 1, n - 1))
    s = b.add(b.add(b.slice(x, (0, 1), (n - 2, n - 1)), b.slice(x, (2, 1), (n, n - 1))), c)
    return b, b.pad(s, b.scalar(0, "f32"), [(1, 1, 0), (1, 1, 0)])


def _partition(boxes, dims):
    """Every index of `dims` lies in exactly one box."""
    count = np.zeros(dims, np.int64)
    for box in boxes:
        assert all(lo < hi for lo, hi in box), box
        count[tuple(slice(lo, hi) for lo, hi in box)] += 1
    assert (count == 1).all()


def test_boxes_of_a_padded_stencil():
    b, root = _stencil_pad(16)
    x = root.operands[0].operands[0].operands[0].operands[0]
    # the pad rows are padding whatever the column: one box each; the rows between are
    # cut at the columns, inside one loop over those rows
    assert regions.plan([root], [x]) == [
        ((0, 1), [((0, 16), [])]),
        ((1, 15), [((0, 1), []), ((1, 15), []), ((15, 16), [])]),
        ((15, 16), [((0, 16), [])])]
    assert regions.boxes([root], [x]) == [((0, 1), (0, 16)), ((1, 15), (0, 1)),
                                          ((1, 15), (1, 15)), ((1, 15), (15, 16)),
                                          ((15, 16), (0, 16))]
    # walked column-major (a transposed layout), the columns are cut first
    assert regions.boxes([root], [x], order=(1, 0))[:2] == [((0, 16), (0, 1)),
                                                            ((0, 1), (1, 15))]


def test_boxes_follow_reverse_strided_slice_and_concatenate():
    b = Builder("maps")
    x = b.parameter(Shape("f32", (7, 10)))
    p = b.pad(x, b.scalar(1, "f32"), [(0, 0, 0), (2, 1, 0)])  # dim 1: x at 2..11 of 13
    r = b.reverse(p, (1,))  # x at 1..10
    s = b.slice(r, (0, 1), (7, 13), (1, 3))  # r's 1, 4, 7, 10: all x
    cat = b.concatenate([s, b.slice(x, (0, 0), (7, 2))], 1)  # [7, 4 + 2]
    assert regions.boxes([cat], [x]) == [((0, 7), (0, 4)), ((0, 7), (4, 6))]
    s2 = b.slice(r, (0, 0), (7, 13), (1, 2))  # r's 0 (pad), 2, 4, .., 10 (x), 12 (pad)
    assert regions.boxes([s2], [x]) == [((0, 7), (0, 1)), ((0, 7), (1, 6)), ((0, 7), (6, 7))]
    # a concatenate of a pad and a plain operand: the pad's borders cut only its own piece
    c2 = b.concatenate([b.pad(x, b.scalar(0, "f32"), [(0, 0, 0), (1, 1, 0)]), x], 1)
    assert regions.boxes([c2], [x]) == [((0, 7), (0, 1)), ((0, 7), (1, 11)),
                                        ((0, 7), (11, 12)), ((0, 7), (12, 22))]


def test_no_split_without_borders():
    b = Builder("plain")
    x = b.parameter(Shape("f32", (5, 6)))
    root = b.add(b.reverse(x, (0,)), b.transpose(b.transpose(x, (1, 0)), (1, 0)))
    assert regions.boxes([root], [x]) == [((0, 5), (0, 6))]
    # a pad behind a reshape that regroups dimensions has no known map: no split
    p = b.pad(b.reshape(x, (30,)), b.scalar(0, "f32"), [(3, 3, 0)])
    assert regions.boxes([b.reshape(p, (6, 6))], [x]) == [((0, 6), (0, 6))]


def test_too_many_boxes_leave_major_dimensions_whole():
    b = Builder("many")
    x = b.parameter(Shape("f32", (9, 9, 9)))
    root = x
    for _ in range(3):  # three nested pads: 7 intervals per dimension
        root = b.pad(root, b.scalar(0, "f32"), [(1, 1, 0)] * 3)
    boxes = regions.boxes([root], [x])
    assert len(boxes) <= regions.MAX_BOXES
    assert {box[0] for box in boxes} == {(0, 15)}  # dimension 0 is not split
    ends = {e for box in boxes for e in box[2]}  # the minor one is, at every border
    assert ends == {0, 1, 2, 3, 12, 13, 14, 15}
    _partition(boxes, (15, 15, 15))
    two = b.pad(b.pad(x, b.scalar(0, "f32"), [(1, 1, 0)] * 3), b.scalar(0, "f32"),
                [(1, 1, 0)] * 3)
    boxes = regions.boxes([two], [x])  # 25 boxes: every dimension is split
    assert len(boxes) == 25 and len({box[0] for box in boxes}) == 5
    _partition(boxes, (13, 13, 13))


@pytest.mark.parametrize("seed", range(40))
def test_boxes_partition_random_programs(seed):
    m, _ = random_program(np.random.default_rng(seed))
    root = m.entry.root
    boxes = regions.boxes([root], m.entry.parameters)
    _partition(boxes, root.shape.dimensions)


# -- compiled kernels against the interpreter ------------------------------------------------


@pytest.mark.parametrize("seed", range(48))
def test_random_region_programs(seed):
    m, args = random_program(np.random.default_rng(1000 + seed))
    check(m, *args, what=f"seed {seed}")


@pytest.mark.parametrize("seed", range(6))
def test_random_region_programs_on_threads(seed, monkeypatch):
    """Every kernel split across threads: a thread's span of the outer loop cuts boxes."""
    from ember.backends.cpu.emit import kinds

    monkeypatch.setattr(kinds, "PARALLEL_MIN_ELEMENTS", 1)
    m, args = random_program(np.random.default_rng(2000 + seed), min_outer=9)
    check(m, *args, what=f"seed {seed}", use_cache=False)


@pytest.mark.parametrize("et", ["f32", "f64", "s32", "u8", "pred", "f16", "s64", "c64"])
def test_pad_concatenate_update_dtypes(et):
    b = Builder(f"mix_{et}")
    x = b.parameter(Shape(et, (7, 9)))
    pv = b.scalar(True if et == "pred" else 3, et)
    p = b.pad(x, pv, [(2, -1, 1), (-2, 3, 0)])  # [7*2-1+2-1, 9-2+3] = [14, 10]
    c = b.concatenate([b.slice(p, (0, 0), (14, 4)), b.reverse(p, (0,)),
                       b.pad(x, pv, [(3, 4, 0), (0, 0, 0)])], 1)  # [14, 4 + 10 + 9]
    u = b.dynamic_update_slice(c, b.slice(x, (1, 1), (5, 6)),
                               [b.scalar(6, "s32"), b.scalar(100, "s32")])
    m = b.build(u)
    check(m, edge_array(Shape(et, ()).dtype, (7, 9), seed=4), what=et)


@pytest.mark.parametrize("n", [3, 4, 17, 64])
def test_padded_stencil_kernel_has_no_select(n):
    """jnp.pad of a stencil is one kernel whose loops hold no select at all: the border
    regions store the pad value, the interior reads the stencil's operands."""
    def stencil(u):
        c = u[1:-1, 1:-1]
        return jnp.pad(c + 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                  - 4 * c), 1)

    u = np.random.default_rng(n).standard_normal((n, n)).astype(np.float32)
    m = lower_jaxpr(ember.make_jaxpr(stencil)(u)).module
    exe = check(m, u)
    assert exe.kernel_names == ["fusion"]
    assert " select " not in exe.unoptimized_ir
    c = u[1:-1, 1:-1]
    want = np.pad(c + np.float32(0.1) * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:]
                                         + u[1:-1, :-2] - 4 * c), 1)
    np.testing.assert_allclose(exe(u), want, rtol=1e-6, atol=1e-6)


def test_concatenated_border_kernel_has_no_select():
    def f(u):
        inner = u[1:-1, 1:-1] * 2.0
        inner = jnp.concatenate([u[1:-1, :1], inner, u[1:-1, -1:]], axis=1)
        return jnp.concatenate([u[:1], inner, u[-1:]], axis=0)

    u = np.random.default_rng(0).standard_normal((33, 35)).astype(np.float32)
    m = lower_jaxpr(ember.make_jaxpr(f)(u)).module
    exe = check(m, u)
    assert " select " not in exe.unoptimized_ir
    want = u.copy()
    want[1:-1, 1:-1] *= 2
    np.testing.assert_array_equal(exe(u), want)


def test_heat_equation_loop_matches_numpy():
    def step(i, u):
        c = u[1:-1, 1:-1]
        return jnp.pad(c + 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                  - 4 * c), 1)

    u = np.random.default_rng(3).standard_normal((37, 29)).astype(np.float32)
    got = ember.jit(lambda u: ember.lax.fori_loop(0, 7, step, u))(u)
    want = u
    for _ in range(7):
        c = want[1:-1, 1:-1]
        want = np.pad(c + np.float32(0.1) * (want[2:, 1:-1] + want[:-2, 1:-1]
                                             + want[1:-1, 2:] + want[1:-1, :-2]
                                             - np.float32(4) * c), 1)
    np.testing.assert_array_equal(np.asarray(got), want)

