"""vmap of gather and of every scatter kind (ember/prims/_gather_scatter_batching.py).

Input: per-example functions calling `lax.gather` / `lax.scatter*` directly (so no other
primitive's batching rule is involved), per-example arguments, and in_axes/out_axes.
Output: `vmap(f)(batched args)` equals stacking `f(example args)` over the examples,
eagerly and under one `ember.jit` of every case together (one compile for the file), for
operand-only, indices-only and both mapped (and each scatter operand mix), batch axes
anywhere, out-of-bounds modes, duplicate targets, gathers that already batch, batch sizes
1 and 0; and the batched jaxpr is a single gather/scatter, not a loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import ember
from ember import lax

GD = lax.GatherDimensionNumbers
SD = lax.ScatterDimensionNumbers
RNG = np.random.default_rng(21)


@dataclass
class Case:
    name: str
    fn: Callable[..., Any]
    make: Callable[[], tuple[np.ndarray, ...]]  # one example's arguments (fresh values)
    in_axes: tuple[int | None, ...]
    out_axes: int = 0
    size: int = 3

    def batched_args(self) -> tuple[list[tuple[np.ndarray, ...]], list[np.ndarray]]:
        """Each example's arguments (an unmapped argument is shared) and the vmap inputs."""
        shared = self.make()
        per = [self.make() for _ in range(self.size)]
        examples = [tuple(p if ax is not None else s for p, s, ax in zip(ex, shared,
                                                                       self.in_axes))
                    for ex in per]
        ins = []
        for k, ax in enumerate(self.in_axes):
            if ax is None:
                ins.append(shared[k])
            elif self.size:
                ins.append(np.stack([ex[k] for ex in examples], axis=ax))
            else:
                one = shared[k]
                ins.append(np.empty(one.shape[:ax] + (0,) + one.shape[ax:], one.dtype))
        return examples, ins

    def expected(self, examples: list[tuple[np.ndarray, ...]], ins: list[np.ndarray]
                 ) -> np.ndarray:
        if self.size:
            return np.stack([np.asarray(self.fn(*ex)) for ex in examples], axis=self.out_axes)
        # an empty batch: the shape of one example's result with a 0-size axis
        one = ember.eval_shape(self.fn, *[
            a if ax is None else np.take(a, 0, axis=ax) if a.shape[ax] else
            np.empty(a.shape[:ax] + a.shape[ax + 1:], a.dtype)
            for a, ax in zip(ins, self.in_axes)])
        shape = list(one.shape)
        shape.insert(self.out_axes if self.out_axes >= 0 else len(shape) + 1 + self.out_axes,
                     0)
        return np.empty(shape, one.dtype)

    def vmapped(self) -> Callable[..., Any]:
        return ember.vmap(self.fn, in_axes=self.in_axes, out_axes=self.out_axes)


def _f32(*shape: int) -> Callable[[], np.ndarray]:
    return lambda: RNG.standard_normal(shape).astype(np.float32)


def _i32(lo: int, hi: int, *shape: int) -> Callable[[], np.ndarray]:
    return lambda: RNG.integers(lo, hi, shape).astype(np.int32)


def _args(*makers: Callable[[], np.ndarray]) -> Callable[[], tuple[np.ndarray, ...]]:
    return lambda: tuple(m() for m in makers)


# -- gathers --------------------------------------------------------------------------------

def g_rows(x, i):  # x[i[:, 0]] : (5, 4), (3, 1) -> (3, 4)
    return lax.gather(x, i, GD(offset_dims=(1,), collapsed_slice_dims=(0,),
                               start_index_map=(0,)), (1, 4))


def g_elements(x, i):  # x[i[:, 0], i[:, 1]] : (4, 3), (2, 2) -> (2,)
    return lax.gather(x, i, GD(offset_dims=(), collapsed_slice_dims=(0, 1),
                               start_index_map=(0, 1)), (1, 1))


def g_windows(x, i):  # windows (3, 2) at column i, batch in the middle: (6, 5), (2, 1)
    return lax.gather(x, i, GD(offset_dims=(0, 2), collapsed_slice_dims=(),
                               start_index_map=(1,)), (3, 2))


def g_fill(x, i):  # out-of-bounds windows read NaN
    return lax.gather(x, i, GD(offset_dims=(1,), collapsed_slice_dims=(),
                               start_index_map=(0,)), (2,), mode="fill")


def g_fill_int(x, i):
    return lax.gather(x, i, GD(offset_dims=(), collapsed_slice_dims=(0,),
                               start_index_map=(0,)), (1,), mode="fill", fill_value=-7)


def g_clip(x, i):
    return lax.gather(x, i, GD(offset_dims=(1,), collapsed_slice_dims=(),
                               start_index_map=(0,)), (2,), mode="clip")


def g_batched(x, i):  # already batching: row b reads x[b, i[b]]: (3, 4), (3, 1) -> (3,)
    return lax.gather(x, i, GD(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                               operand_batching_dims=(0,), start_indices_batching_dims=(0,)),
                      (1, 1))


def g_scalar(x, i):  # rank-1 indices (no batch dims) into an int vector: a scalar
    return lax.gather(x, i, GD(offset_dims=(), collapsed_slice_dims=(0,),
                               start_index_map=(0,)), (1,))


def g_empty_index_vector(x, i):  # index vectors of length 0: whole-array windows
    return lax.gather(x, i, GD(offset_dims=(1, 2), collapsed_slice_dims=(),
                               start_index_map=()), (2, 3))


GATHERS = [
    ("rows", g_rows, _args(_f32(5, 4), _i32(0, 5, 3, 1))),
    ("elements", g_elements, _args(_f32(4, 3), _i32(0, 3, 2, 2))),
    ("windows", g_windows, _args(_f32(6, 5), _i32(0, 4, 2, 1))),
    ("fill", g_fill, _args(_f32(5), _i32(-2, 7, 4, 1))),
    ("fill_int", g_fill_int, _args(_i32(-9, 9, 4), _i32(-2, 6, 5, 1))),
    ("clip", g_clip, _args(_f32(5), _i32(-3, 8, 4, 1))),
    ("batched", g_batched, _args(_f32(3, 4), _i32(0, 4, 3, 1))),
    ("scalar", g_scalar, _args(_i32(-9, 9, 4), _i32(0, 4, 1))),
    ("empty_vector", g_empty_index_vector, _args(_f32(2, 3), lambda: np.zeros((2, 0), np.int32))),
]

# (in_axes, out_axes, size): operand only, indices only, both; batch axes not at the front
GATHER_AXES = [((0, None), 0, 3), ((None, 0), 0, 3), ((0, 0), 0, 3), ((1, 1), -1, 2),
               ((None, 1), 1, 4), ((1, None), 1, 1), ((0, 0), 0, 0)]


def _gather_cases() -> list[Case]:
    out = []
    for name, fn, make in GATHERS:
        for in_axes, out_axes, size in GATHER_AXES:
            if name == "scalar" and (1 in in_axes or out_axes == 1):
                continue  # rank-1 indices, rank-1 operand, rank-0 result
            out.append(Case(f"gather_{name}_{in_axes}_{out_axes}_{size}", fn, make, in_axes,
                            out_axes, size))
    return out


# -- scatters -------------------------------------------------------------------------------

ROWS = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
ELEMS = SD(update_window_dims=(), inserted_window_dims=(0, 1),
           scatter_dims_to_operand_dims=(0, 1))
WINDOW = SD(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
BATCHED = SD(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
             operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))


def _scatter(kind: str, dn: Any, mode: str | None = None) -> Callable[..., Any]:
    fn = getattr(lax, kind)

    def f(x, i, u):
        return fn(x, i, u, dn, mode=mode)
    f.__name__ = kind
    return f


def s_apply(x, i, u):  # the update function runs once per (duplicate) target, u unused
    del u
    return lax.scatter_apply(x, i, lambda v: v * 2 + 1, ROWS, update_shape=(4, 3))


# Duplicate targets (indices drawn from a small range) in every kind.
SCATTERS = [(kind, _scatter(kind, ROWS), _args(_f32(3, 3), _i32(0, 3, 4, 1), _f32(4, 3)))
            for kind in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")]
SCATTERS += [
    ("add_int_elements", _scatter("scatter_add", ELEMS),
     _args(_i32(-5, 5, 3, 4), _i32(0, 3, 5, 2), _i32(-5, 5, 5))),
    ("set_drop", _scatter("scatter", WINDOW, None),
     _args(_f32(6), _i32(-2, 7, 3, 1), _f32(3, 2))),
    ("max_clip", _scatter("scatter_max", WINDOW, "clip"),
     _args(_f32(6), _i32(-3, 9, 3, 1), _f32(3, 2))),
    ("add_batched", _scatter("scatter_add", BATCHED),
     _args(_f32(3, 4), _i32(0, 4, 3, 1), _f32(3))),
    ("apply", s_apply, _args(_f32(3, 3), _i32(0, 3, 4, 1), _f32(4, 3))),
]

# every mix of mapped operand / indices / updates, some along later axes
SCATTER_AXES = [((0, None, None), 0, 3), ((None, 0, None), 0, 3), ((None, None, 0), 0, 3),
                ((0, 0, None), 0, 3), ((0, None, 0), 1, 2), ((None, 0, 0), 0, 3),
                ((1, 1, 1), -1, 3), ((0, 0, 0), 0, 0)]


def _scatter_cases() -> list[Case]:
    out = []
    for name, fn, make in SCATTERS:
        for in_axes, out_axes, size in SCATTER_AXES:
            out.append(Case(f"{name}_{in_axes}_{out_axes}_{size}", fn, make, in_axes, out_axes,
                            size))
    return out


def _dtype_cases() -> list[Case]:
    """Other element types (bool, uint8, float16, int64 indices) on three operand mixes."""
    def make(dtype: Any, idx: Any = np.int32) -> Callable[[], tuple[np.ndarray, ...]]:
        def f() -> tuple[np.ndarray, ...]:
            x = RNG.integers(0, 7, (5, 4)).astype(dtype)
            return x, RNG.integers(0, 5, (3, 1)).astype(idx)
        return f

    def make_s(dtype: Any) -> Callable[[], tuple[np.ndarray, ...]]:
        def f() -> tuple[np.ndarray, ...]:
            return (RNG.integers(0, 9, (3, 3)).astype(dtype),
                    RNG.integers(0, 3, (4, 1)).astype(np.int32),
                    RNG.integers(0, 9, (4, 3)).astype(dtype))
        return f

    out = []
    for axes in [(0, None), (None, 0), (0, 0)]:
        for dtype in (np.bool_, np.uint8, np.float16):
            out.append(Case(f"gather_rows_{np.dtype(dtype).name}_{axes}", g_rows, make(dtype),
                            axes))
        out.append(Case(f"gather_rows_int16_idx_{axes}", g_rows, make(np.float32, np.int16),
                        axes))
    for axes in [(0, None, 0), (None, 0, None), (0, 0, 0)]:
        out.append(Case(f"scatter_max_uint8_{axes}", _scatter("scatter_max", ROWS),
                        make_s(np.uint8), axes))
        out.append(Case(f"scatter_bool_{axes}", _scatter("scatter", ROWS), make_s(np.bool_),
                        axes))
    return out


CASES = _gather_cases() + _scatter_cases() + _dtype_cases()


def _check(got: Any, want: np.ndarray, name: str) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.shape, want.shape)
    # scatter-add and -mul accumulate duplicates in the same order per example, so even
    # floats agree exactly; NaN (fill) compares equal to NaN
    np.testing.assert_array_equal(got, want, err_msg=name)


def test_vmap_equals_stacking_examples_eager_and_jit() -> None:
    prepared = []
    for case in CASES:
        examples, ins = case.batched_args()
        want = case.expected(examples, ins)
        _check(case.vmapped()(*ins), want, case.name + " (eager)")
        prepared.append((case, ins, want))

    # one compile for every case: the batched args are parameters, not constants
    def all_cases(arg_lists):
        return tuple(c.vmapped()(*a) for (c, _, _), a in zip(prepared, arg_lists))

    jitted = ember.jit(all_cases)([ins for _, ins, _ in prepared])
    for (case, _, want), got in zip(prepared, jitted):
        _check(got, want, case.name + " (jit)")


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_one_gather_no_loop(in_axes) -> None:
    x, i = np.ones((3, 5, 4), np.float32), np.zeros((3, 3, 1), np.int32)
    args = [x if in_axes[0] == 0 else x[0], i if in_axes[1] == 0 else i[0]]
    jaxpr = ember.make_jaxpr(ember.vmap(g_rows, in_axes=in_axes))(*args)
    prims = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert prims.count("gather") == 1 and not {"while", "scan"} & set(prims), prims


def test_one_scatter_no_loop() -> None:
    x, i, u = np.ones((2, 3, 3), np.float32), np.zeros((2, 4, 1), np.int32), np.ones(
        (2, 4, 3), np.float32)
    for in_axes in [(0, None, 0), (0, 0, 0), (None, 0, None)]:
        args = [a if ax == 0 else a[0] for a, ax in zip((x, i, u), in_axes)]
        jaxpr = ember.make_jaxpr(ember.vmap(_scatter("scatter_add", ROWS), in_axes=in_axes))(
            *args)
        prims = [e.primitive.name for e in jaxpr.jaxpr.eqns]
        assert prims.count("scatter-add") == 1 and not {"while", "scan"} & set(prims), prims


def test_per_example_gradient_of_a_gather() -> None:
    # vmap of grad: the gather's transpose is a scatter-add, batched over mapped indices
    def read(x, i):
        return lax.gather(x, i, GD(offset_dims=(), collapsed_slice_dims=(0,),
                                   start_index_map=(0,)), (1,)) * 3.0

    x = RNG.standard_normal((4, 5)).astype(np.float32)
    i = np.array([[1], [4], [0], [1]], np.int32)
    want = np.zeros((4, 5), np.float32)
    want[np.arange(4), i[:, 0]] = 3.0
    for in_axes in [(0, 0), (None, 0)]:
        xs = x if in_axes[0] == 0 else x[0]
        got = ember.vmap(ember.grad(read), in_axes=in_axes)(xs, i)
        np.testing.assert_array_equal(got, want)
        got = ember.jit(ember.vmap(ember.grad(read), in_axes=in_axes))(xs, i)
        np.testing.assert_array_equal(got, want)


def test_eager_scatter_into_a_transposed_operand() -> None:
    # regression: the NumPy rule wrote into a copy of a non-C-ordered operand and returned
    # it unchanged (found through vmap, whose moved batch axes make such operands)
    x = np.zeros((5, 4), np.float32).T
    got = lax.scatter_add(x, np.array([[1]], np.int32), np.ones((1, 5), np.float32), ROWS)
    want = np.zeros((4, 5), np.float32)
    want[1] = 1
    np.testing.assert_array_equal(got, want)
