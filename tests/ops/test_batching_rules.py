"""Every structural batching rule, checked as issue 21 asks: vmap(f) equals stacking f.

One record per rule (and per interesting case of it): a per-example function and its
operands' per-example specs (shape, dtype, value range; one table repeats rules on float16,
small integer and bool types). Each record runs under several drawn configurations (batch
size 1, 2 or 5; every operand mapped along a random axis, negative ones included, or not
mapped, at least one mapped; a random `out_axes`), and `vmap(f, in_axes, out_axes)(*xs)`
must equal the NumPy stack, along `out_axes`, of the eager `f` of each example: eagerly,
and under `ember.jit` (all of a table's configurations compiled as ONE program, so the file
pays a few compiles, not one per case); a batch of 0 gives the right empty shapes. The
vmapped jaxprs of these loop-free functions hold no loop. Then whole programs: a vmapped
matmul layer and per-example MLP gradients compile to the kernels of the hand-batched
programs, and per-example gradients (vmap of grad) and grad of vmap equal loops of grads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax


class Spec(NamedTuple):
    """One operand: its per-example shape, dtype, and the interval values come from."""

    shape: tuple[int, ...]
    dtype: Any = np.float32
    lo: float = -3.0
    hi: float = 3.0


class Rec(NamedTuple):
    name: str
    fn: Callable[..., Any]
    specs: tuple[Spec, ...]
    rtol: float = 0.0  # float results within rtol (scans and sums may associate differently)


F = np.float32
I32 = np.int32
S = (3, 4)


def f(*shape: int) -> Spec:
    return Spec(tuple(shape))


def idx(hi: int) -> Spec:
    """A scalar start index, sometimes out of range (dynamic slices clamp it)."""
    return Spec((), I32, -2, hi + 2)


_GD = lax.dot_general
SHAPES = [
    Rec("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (f(*S),)),
    Rec("broadcast_size1", lambda x: lax.broadcast_in_dim(x, (3, 5, 4), (0, 2)), (f(1, 4),)),
    Rec("broadcast_scalar", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), (f(),)),
    Rec("broadcast_last", lambda x: lax.broadcast_in_dim(x, (3, 2), (0,)), (f(3),)),
    Rec("reshape", lambda x: lax.reshape(x, (2, 6)), (f(*S),)),
    Rec("reshape_flat", lambda x: jnp.ravel(x), (f(2, 3, 1),)),
    Rec("reshape_scalar", lambda x: lax.reshape(x, (1, 1)), (f(),)),
    Rec("squeeze", lambda x: lax.squeeze(x, (1,)), (f(3, 1, 4),)),
    Rec("squeeze_to_scalar", lambda x: lax.squeeze(x, (0, 1)), (f(1, 1),)),
    Rec("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), (f(*S),)),
    Rec("transpose", lambda x: lax.transpose(x, (2, 0, 1)), (f(2, 3, 4),)),
    Rec("transpose_2d", lambda x: x.T, (f(*S),)),
    Rec("rev", lambda x: lax.rev(x, (1,)), (f(*S),)),
    Rec("rev_all", lambda x: lax.rev(x, (0, 1)), (f(3, 5),)),
    # iota has no operands, so vmap never batches it: it meets mapped values as a constant
    Rec("iota_inside", lambda x: x + lax.broadcasted_iota(F, (3, 4), 1), (f(*S),)),
]
CONVERSIONS = [
    Rec("convert_f32_i32", lambda x: lax.convert_element_type(x, I32), (f(*S),)),
    Rec("convert_i32_f32", lambda x: lax.convert_element_type(x, F), (Spec(S, I32, -9, 9),)),
    Rec("convert_to_bool", lambda x: lax.convert_element_type(x, np.bool_),
        (Spec(S, I32, -1, 2),)),
    Rec("bitcast_same_width", lambda x: lax.bitcast_convert_type(x, I32), (f(*S),)),
    Rec("bitcast_narrowing", lambda x: lax.bitcast_convert_type(x, np.uint8), (f(3),)),
    Rec("bitcast_widening", lambda x: lax.bitcast_convert_type(x, F),
        (Spec((3, 4), np.uint8, 0, 255),)),
    Rec("bitcast_widening_to_scalar", lambda x: lax.bitcast_convert_type(x, F),
        (Spec((4,), np.uint8, 0, 63),)),
    Rec("select", lambda p, x, y: lax.select(p, x, y), (Spec(S, np.bool_), f(*S), f(*S))),
    Rec("select_scalar_pred", lambda p, x, y: lax.select(p, x, y),
        (Spec((), np.bool_), f(*S), f(*S))),
    Rec("select_n_int", lambda w, x, y, z: lax.select_n(w, x, y, z),
        (Spec(S, I32, -1, 4), f(*S), f(*S), f(*S))),
    Rec("select_n_scalar_int", lambda w, x, y, z: lax.select_n(w, x, y, z),
        (Spec((), I32, 0, 3), f(3), f(3), f(3))),
    Rec("select_scalar_cases", lambda p, x, y: lax.select(p, x, y),
        (Spec((), np.bool_), f(), f())),
    Rec("clamp_scalar_bounds", lambda lo, x, hi: lax.clamp(lo - 1, x, hi + 1),
        (f(), f(*S), f())),
    Rec("clamp_full_bounds", lambda lo, x, hi: lax.clamp(lo - 1, x, hi + 1),
        (f(*S), f(*S), f(*S))),
    Rec("clamp_mixed_bounds", lambda lo, x, hi: lax.clamp(lo - 1, x, hi + 1),
        (f(), f(3), f(3))),
    Rec("stop_gradient", lax.stop_gradient, (f(*S),)),
]
REDUCTIONS = [
    Rec("reduce_sum", lambda x: lax.reduce_sum(x, (1,)), (f(3, 4, 2),), 1e-6),
    Rec("reduce_sum_two", lambda x: lax.reduce_sum(x, (0, 2)), (f(3, 4, 2),), 1e-6),
    Rec("reduce_sum_all", lambda x: lax.reduce_sum(x, (0, 1)), (f(*S),), 1e-6),
    Rec("reduce_max", lambda x: lax.reduce_max(x, (0,)), (f(*S),)),
    Rec("reduce_min", lambda x: lax.reduce_min(x, (1,)), (f(*S),)),
    Rec("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), (f(3, 5),), 1e-6),
    Rec("reduce_and", lambda x: lax.reduce_and(x, (0,)), (Spec(S, np.bool_),)),
    Rec("reduce_or", lambda x: lax.reduce_or(x, (1,)), (Spec(S, np.bool_),)),
    Rec("reduce_xor", lambda x: lax.reduce_xor(x, (0, 1)), (Spec(S, I32, -99, 99),)),
    Rec("argmax", lambda x: lax.argmax(x, 1, I32), (f(3, 5),)),
    Rec("argmin", lambda x: lax.argmin(x, 0, I32), (f(3, 5),)),
    Rec("cumsum", lambda x: lax.cumsum(x, 1), (f(3, 5),), 1e-6),
    Rec("cumsum_reverse", lambda x: lax.cumsum(x, 0, reverse=True), (f(*S),), 1e-6),
    Rec("cumprod", lambda x: lax.cumprod(x, 1), (f(3, 5),), 1e-6),
    Rec("cummax", lambda x: lax.cummax(x, 0), (f(*S),)),
    Rec("cummin_reverse", lambda x: lax.cummin(x, 1, reverse=True), (f(3, 5),)),
    Rec("cumlogsumexp", lambda x: lax.cumlogsumexp(x, 1), (f(3, 5),), 1e-6),
]
DOTS = [
    Rec("matmul", lambda x, y: x @ y, (f(3, 4), f(4, 5)), 1e-6),
    Rec("vector_dot", lambda x, y: jnp.dot(x, y), (f(4), f(4)), 1e-6),
    Rec("matvec", lambda x, y: jnp.dot(x, y), (f(3, 4), f(4)), 1e-6),
    Rec("vecmat", lambda x, y: jnp.dot(x, y), (f(4), f(4, 3)), 1e-6),
    Rec("dot_batched", lambda x, y: _GD(x, y, (((2,), (1,)), ((0,), (0,)))),
        (f(2, 3, 4), f(2, 4, 5)), 1e-6),
    Rec("dot_contract_first", lambda x, y: _GD(x, y, (((0,), (1,)), ((), ()))),
        (f(4, 3), f(5, 4)), 1e-6),
    Rec("dot_two_contractions", lambda x, y: _GD(x, y, (((0, 2), (2, 0)), ((1,), (1,)))),
        (f(2, 3, 4), f(4, 3, 2)), 1e-6),
    Rec("dot_outer", lambda x, y: _GD(x, y, (((), ()), ((), ()))), (f(3), f(2)), 1e-6),
    Rec("dot_int", lambda x, y: x @ y, (Spec((3, 4), I32, -9, 9), Spec((4, 2), I32, -9, 9))),
]
SLICING = [
    Rec("slice", lambda x: lax.slice(x, (1, 0), (3, 4), (1, 2)), (f(4, 5),)),
    Rec("slice_plain", lambda x: lax.slice(x, (0, 1), (2, 3)), (f(*S),)),
    Rec("index_and_slice", lambda x: x[1, ::2] + x[-1, 1:3].sum(), (f(3, 5),), 1e-6),
    Rec("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))), (f(*S), f())),
    Rec("pad_interior", lambda x, v: lax.pad(x, v, ((0, -2, 2),)), (f(4), f())),
    Rec("concatenate", lambda x, y, z: lax.concatenate([x, y, z], 1),
        (f(*S), f(3, 2), f(3, 1))),
    Rec("concatenate_dim0", lambda x, y: lax.concatenate([x, y, x], 0), (f(2), f(3))),
    Rec("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
        (f(4, 5), idx(4), idx(5))),
    Rec("dynamic_slice_1d", lambda x, i: lax.dynamic_slice(x, (i,), (3,)), (f(6), idx(6))),
    Rec("dynamic_slice_full", lambda x, i: lax.dynamic_slice_in_dim(x, i, 3, 1),
        (f(2, 3), idx(3))),
    Rec("dynamic_update_slice", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
        (f(4, 5), f(2, 3), idx(4), idx(5))),
    Rec("dynamic_update_slice_1d", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
        (f(5), f(2), idx(5))),
    Rec("dynamic_update_slice_int", lambda x, u, i: lax.dynamic_update_slice(x, u, (0, i)),
        (Spec(S, I32, -9, 9), Spec((3, 2), I32, -9, 9), idx(4))),
]
SORTING = [
    Rec("sort", lambda x: lax.sort(x, dimension=1), (f(3, 5),)),
    Rec("sort_dim0", lambda x: lax.sort(x, dimension=0), (f(3, 5),)),
    Rec("sort_1d", lambda x: jnp.sort(x), (f(7),)),
    Rec("sort_key_val", lambda k, v: lax.sort((k, v), dimension=1, num_keys=1),
        (Spec((3, 5), I32, 0, 3), f(3, 5))),
    Rec("sort_two_keys", lambda k, v: lax.sort((k, v), dimension=0, num_keys=2),
        (Spec((4, 3), I32, 0, 2), Spec((4, 3), I32, 0, 2))),
    Rec("top_k", lambda x: lax.top_k(x, 3), (f(3, 5),)),
    Rec("top_k_axis0", lambda x: lax.top_k(x, 2, axis=0), (f(3, 5),)),
    Rec("top_k_1d", lambda x: lax.top_k(x, 4), (f(6),)),
]
_EYE3 = np.eye(3, dtype=F) * 6
LINALG = [  # LAPACK per matrix: float results within rounding, eigenvector signs left out
    Rec("cholesky", lambda x: lax.linalg.cholesky(x @ x.T + _EYE3), (f(3, 3),), 1e-4),
    Rec("triangular_solve", lambda a, b: lax.linalg.triangular_solve(
        a + _EYE3, b, left_side=True, lower=True), (f(3, 3), f(3, 2)), 1e-4),
    Rec("triangular_solve_right_t", lambda a, b: lax.linalg.triangular_solve(
        a + _EYE3, b, transpose_a=True, unit_diagonal=True), (f(3, 3), f(2, 3)), 1e-4),
    Rec("lu", lambda x: lax.linalg.lu(x), (f(3, 4),), 1e-4),
    Rec("qr", lambda x: lax.linalg.qr(x, full_matrices=False), (f(4, 3),), 1e-4),
    Rec("eigh", lambda x: (lambda v, w: (v * v, w))(*lax.linalg.eigh(x + x.T)), (f(3, 3),),
        1e-4),
    Rec("svd", lambda x: (lambda u, s, vt: (u * u, s, vt * vt))(
        *lax.linalg.svd(x, full_matrices=False)), (f(3, 4),), 1e-4),
    Rec("tridiagonal_solve", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d + 9, du, b),
        (f(4), f(4), f(4), f(4, 2)), 1e-4),
]
C = np.complex64
FFT = [  # the transform acts on the minor dimensions: the batch axis goes in front
    Rec("fft", lambda z: lax.fft(z, "fft", (5,)), (Spec((3, 5), C),), 1e-5),
    Rec("ifft_2d", lambda z: lax.fft(z, "ifft", (3, 4)), (Spec((3, 4), C),), 1e-5),
    Rec("rfft", lambda x: lax.fft(x, "rfft", (6,)), (f(2, 6),), 1e-5),
    Rec("irfft_2d", lambda z: lax.fft(z, "irfft", (2, 5)), (Spec((2, 3), C),), 1e-5),
    Rec("jnp_fftn_axes", lambda x: jnp.fft.fftn(x, axes=(0,)), (f(4, 3),), 1e-5),
]
H = np.float16
DTYPES = [  # the same rules on other element types (float16 sums within float16 rounding)
    Rec("f16_pad_transpose", lambda x, v: lax.transpose(lax.pad(x, v, ((1, 0, 1), (0, 1, 0))),
                                                        (1, 0)), (Spec(S, H), Spec((), H))),
    Rec("f16_reduce_sum", lambda x: lax.reduce_sum(x, (0,)), (Spec(S, H),), 2e-3),
    Rec("f16_cummax", lambda x: lax.cummax(x, 1), (Spec(S, H),)),
    Rec("i8_sort", lambda x: lax.sort(x, dimension=0), (Spec((5, 2), np.int8, -99, 99),)),
    Rec("u16_dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)),
        (Spec((4, 2), np.uint16, 0, 999), idx(4))),
    Rec("u32_select_n", lambda w, x, y: lax.select_n(w, x, y),
        (Spec((), np.bool_), Spec((3,), np.uint32, 0, 9), Spec((3,), np.uint32, 0, 9))),
    Rec("i16_dot", lambda x, y: x @ y, (Spec((2, 3), np.int16, -9, 9),
                                        Spec((3, 2), np.int16, -9, 9))),
    Rec("bool_concatenate_rev", lambda x, y: lax.rev(lax.concatenate([x, y], 0), (0,)),
        (Spec((2, 3), np.bool_), Spec((1, 3), np.bool_))),
    Rec("f16_to_i8_convert", lambda x: lax.convert_element_type(x, np.int8), (Spec(S, H),)),
]
TABLES = {"shapes": SHAPES, "dtypes": DTYPES, "conversions": CONVERSIONS, "reductions": REDUCTIONS,
          "dots": DOTS, "slicing": SLICING, "sorting": SORTING, "linalg": LINALG, "fft": FFT}

# ---------------------------------------------------------------------------------------------
# Drawing configurations and the reference.
# ---------------------------------------------------------------------------------------------

BATCH_SIZES = (1, 2, 5)
CONFIGS = 6  # per record, two per batch size


def _values(rng: np.random.Generator, spec: Spec, shape: tuple[int, ...]) -> np.ndarray:
    dt = np.dtype(spec.dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(int(spec.lo), int(spec.hi), shape, endpoint=True).astype(dt)
    return rng.uniform(spec.lo, spec.hi, shape).astype(dt)


class Case(NamedTuple):
    label: str
    batched: Callable[..., Any]  # vmap(f, in_axes, out_axes)
    axes: tuple[tuple[int | None, ...], int]  # (in_axes, out_axes)
    args: list[np.ndarray]
    expected: list[np.ndarray]  # one per output
    rtol: float


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def draw(rec: Rec, seed: int, size: int) -> Case:
    """A random configuration of `rec` with batch size `size`: in_axes (at least one
    operand mapped, negative axes half the time), out_axes, the operands, and the stack of
    eager per-example results as the reference."""
    rng = np.random.default_rng(seed)
    n = len(rec.specs)
    mapped = rng.random(n) < 0.7
    mapped[rng.integers(n)] = True
    in_axes, args = [], []
    for spec, m in zip(rec.specs, mapped):
        rank = len(spec.shape)
        if not m:
            in_axes.append(None)
            args.append(_values(rng, spec, spec.shape))
            continue
        ax = int(rng.integers(rank + 1))
        shape = spec.shape[:ax] + (size,) + spec.shape[ax:]
        in_axes.append(ax - (rank + 1) if rng.random() < 0.5 else ax)
        args.append(_values(rng, spec, shape))
    examples = []
    for i in range(size):
        ex = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        examples.append([np.asarray(o) for o in _leaves(rec.fn(*ex))])
    out_rank = min(o.ndim for o in examples[0])
    out_axis = int(rng.integers(-(out_rank + 1), out_rank + 1))
    expected = [np.stack([ex[k] for ex in examples], axis=out_axis)
                for k in range(len(examples[0]))]
    label = f"{rec.name}[B={size} in_axes={tuple(in_axes)} out_axes={out_axis}]"
    batched = ember.vmap(rec.fn, in_axes=tuple(in_axes), out_axes=out_axis)
    return Case(label, batched, (tuple(in_axes), out_axis), args, expected, rec.rtol)


def _in_axes(case: Case) -> tuple[int | None, ...]:
    return case.axes[0]


def _out_axis(case: Case) -> int:
    return case.axes[1]


def assert_case(case: Case, got: Any, how: str) -> None:
    outs = _leaves(got)
    assert len(outs) == len(case.expected), f"{case.label} {how}: number of outputs"
    for o, want in zip(outs, case.expected):
        o = np.asarray(o)
        what = f"{case.label} {how}"
        assert o.shape == want.shape and o.dtype == want.dtype, (
            f"{what}: got {o.dtype}{o.shape}, want {want.dtype}{want.shape}")
        if case.rtol and o.dtype.kind == "f":
            np.testing.assert_allclose(o, want, rtol=case.rtol, atol=1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(o, want, err_msg=what)


def _primitive_names(jaxpr: Any) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for v in eqn.params.values():
            inner = getattr(v, "jaxpr", v)
            if hasattr(inner, "eqns"):
                names |= _primitive_names(inner)
    return names


def _cases(table: list[Rec]) -> list[Case]:
    return [draw(rec, seed=1000 * r + k, size=BATCH_SIZES[k % len(BATCH_SIZES)])
            for r, rec in enumerate(table) for k in range(CONFIGS)]


# ---------------------------------------------------------------------------------------------
# The record tests: eagerly, one jit per table, and the loop-free jaxprs.
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table", TABLES, ids=str)
def test_vmap_equals_stacked_examples(table):
    cases = _cases(TABLES[table])
    for case in cases:
        assert_case(case, case.batched(*case.args), "eager")
        names = _primitive_names(ember.make_jaxpr(case.batched)(*case.args).jaxpr)
        assert not names & {"while", "scan"}, f"{case.label}: a loop in {sorted(names)}"
    # every case of the table in one compiled program (vmap traced under jit)
    jitted = ember.jit(lambda arg_sets: tuple(c.batched(*a) for c, a in zip(cases, arg_sets)))
    for case, got in zip(cases, jitted(tuple(c.args for c in cases))):
        assert_case(case, got, "jit")


@pytest.mark.parametrize("table", TABLES, ids=str)
def test_empty_batch(table):
    """A batch of 0 examples: the shapes and dtypes of a batch of 1, with 0 at the batch
    axis (eagerly: nothing to compare but the shapes, and no rule may divide by B)."""
    for r, rec in enumerate(TABLES[table]):
        one = draw(rec, seed=r, size=1)
        args = [np.take(a, np.arange(0), axis=ax) if ax is not None else a
                for a, ax in zip(one.args, _in_axes(one))]
        outs = _leaves(one.batched(*args))
        for o, want in zip(outs, one.expected):
            axis = _out_axis(one) % want.ndim
            shape = want.shape[:axis] + (0,) + want.shape[axis + 1:]
            assert (np.shape(o), np.asarray(o).dtype) == (shape, want.dtype), one.label


def test_vmap_of_jit_and_nested_vmap():
    """jit inside vmap (its body batched equation by equation) and vmap of vmap, on a
    mixture of the rules above."""
    def per_example(x, w):
        y = jnp.tanh(x @ w)
        z = lax.cumsum(lax.rev(y, (0,)), 0) + lax.reduce_max(y, (1,))[:, None]
        return lax.sort(lax.concatenate([z, y[:, :1]], 1), dimension=1)

    rng = np.random.default_rng(7)
    xs = rng.standard_normal((3, 5, 2, 4)).astype(F)
    w = rng.standard_normal((4, 3)).astype(F)
    want = np.stack([np.stack([np.asarray(per_example(xs[i, j], w)) for j in range(5)])
                     for i in range(3)])
    inner = ember.vmap(ember.jit(per_example), in_axes=(0, None))
    outer = ember.vmap(inner, in_axes=(0, None))
    np.testing.assert_allclose(outer(xs, w), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ember.jit(outer)(xs, w), want, rtol=1e-5, atol=1e-6)
    # the batch axis anywhere: in_axes 2 of the inner vmap, out_axes last
    moved = ember.vmap(ember.vmap(per_example, (1, None), -1), (0, None))
    np.testing.assert_allclose(moved(np.moveaxis(xs, 1, 2), w), np.moveaxis(want, 1, -1),
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Whole programs: kernels of a vmapped layer, per-example gradients.
# ---------------------------------------------------------------------------------------------

def _kernel_kinds(fn: Callable[..., Any], *args: Any) -> list[str]:
    return sorted(k.kind for k in ember.jit(fn).lower(*args).compile().kernels())


def _transposes(fn: Callable[..., Any], *args: Any) -> int:
    return [e.primitive.name for e in ember.make_jaxpr(fn)(*args).jaxpr.eqns].count("transpose")


def test_vmapped_layer_compiles_to_the_hand_batched_kernels():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((16, 8)).astype(F)
    W = rng.standard_normal((8, 5)).astype(F)
    b = rng.standard_normal(5).astype(F)
    want = np.tanh(X @ W + b)
    for in_axes, arg, by_hand in ((0, X, lambda X: jnp.tanh(X @ W + b)),
                                  (1, X.T, lambda XT: jnp.tanh(XT.T @ W + b))):
        layer = ember.vmap(lambda x: jnp.tanh(x @ W + b), in_axes=in_axes)
        np.testing.assert_allclose(layer(arg), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ember.jit(layer)(arg), want, rtol=1e-5, atol=1e-6)
        assert _kernel_kinds(layer, arg) == _kernel_kinds(by_hand, arg)
        assert _transposes(layer, arg) == 0  # the mapped axis is a free dim of the dot


def _mlp_loss(p, x):
    h = jnp.tanh(x @ p[0] + p[1])
    y = h @ p[2] + p[3]
    return jnp.sum(y * y)


def _mlp_grads_by_hand(p, X):
    """Per-example gradients of _mlp_loss written batched: outer products per example."""
    def outer(a, b):
        return lax.dot_general(a, b, (((), ()), ((0,), (0,))))
    H = jnp.tanh(X @ p[0] + p[1])
    dY = 2 * (H @ p[2] + p[3])
    dH = (dY @ p[2].T) * (1 - H * H)
    return [outer(X, dH), dH, outer(H, dY), dY]


def test_per_example_mlp_gradients_compile_to_the_hand_batched_kernels():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((64, 8)).astype(F)
    p = [rng.standard_normal(s).astype(F) for s in ((8, 16), (16,), (16, 4), (4,))]
    per_example = ember.vmap(ember.grad(_mlp_loss), in_axes=(None, 0))
    got = ember.jit(per_example)(p, X)
    for g, h in zip(got, _mlp_grads_by_hand(p, X)):
        np.testing.assert_allclose(g, h, rtol=1e-4, atol=1e-4)
    assert _kernel_kinds(per_example, p, X) == _kernel_kinds(_mlp_grads_by_hand, p, X)
    assert _transposes(per_example, p, X) == 0


def _loss(w, x):
    """A scalar of one example built from the rules above (and their JVP/transpose rules)."""
    h = jnp.tanh(x @ w["W"] + w["b"])                              # dot, broadcast
    h = lax.concatenate([h, lax.rev(h, (0,))[:2]], 0)               # concatenate, rev, slice
    z = lax.cumsum(h, 0) * lax.reduce_max(h, (0,))                  # cumsum, reduce_max
    z = lax.pad(z, 0.5, ((1, 0, 0), (0, 1, 0)))                     # pad
    z = lax.dynamic_slice(z, (1, 0), (3, 2))                        # dynamic_slice
    z = lax.clamp(-2.0, lax.reshape(z, (6,)), 2.0)                  # clamp, reshape
    return jnp.sum(lax.select(z > 0, z * z, jnp.sin(z))) + jnp.prod(lax.transpose(h, (1, 0))[0])


def test_per_example_gradients_equal_a_loop_of_grads():
    rng = np.random.default_rng(11)
    w = {"W": rng.standard_normal((4, 3)).astype(F), "b": rng.standard_normal(3).astype(F)}
    xs = rng.standard_normal((5, 3, 4)).astype(F)
    grad = ember.grad(_loss)
    want = [grad(w, x) for x in xs]
    per_example = ember.vmap(grad, in_axes=(None, 0))
    for run in (per_example, ember.jit(per_example)):
        got = run(w, xs)
        for k in ("W", "b"):
            np.testing.assert_allclose(got[k], np.stack([g[k] for g in want]), rtol=2e-5,
                                       atol=1e-5)
    # both arguments mapped, along different axes: per-example weights too
    ws = {"W": rng.standard_normal((4, 3, 5)).astype(F), "b": rng.standard_normal((5, 3)).astype(F)}
    got = ember.vmap(grad, in_axes=({"W": 2, "b": 0}, 1))(ws, np.moveaxis(xs, 0, 1))
    for i in range(5):
        g = grad({"W": ws["W"][..., i], "b": ws["b"][i]}, xs[i])
        np.testing.assert_allclose(got["W"][i], g["W"], rtol=2e-5, atol=1e-5)
        np.testing.assert_allclose(got["b"][i], g["b"], rtol=2e-5, atol=1e-5)


def _window_loss(x, i, u):
    """Per-example windows at per-example places: under vmap the dynamic slices' indices
    are mapped, so the rules emit a gather and a scatter, which grad then differentiates."""
    y = lax.dynamic_update_slice(x, u * 2.0, (i, 0))
    return jnp.sum(lax.dynamic_slice(y, (i + 1, 1), (2, 2)) ** 2) + jnp.sum(jnp.tanh(y))


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_gradients_through_mapped_dynamic_indices(use_jit):
    rng = np.random.default_rng(13)
    xs = rng.standard_normal((5, 4, 3)).astype(F)
    us = rng.standard_normal((5, 2, 3)).astype(F)
    idxs = np.array([0, 2, 3, -1, 1], np.int32)
    grad = ember.grad(_window_loss, argnums=(0, 2))
    want = [grad(xs[k], idxs[k], us[k]) for k in range(5)]
    per_example = ember.vmap(grad, in_axes=(0, 0, 0))
    gx, gu = (ember.jit(per_example) if use_jit else per_example)(xs, idxs, us)
    np.testing.assert_allclose(gx, np.stack([w[0] for w in want]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gu, np.stack([w[1] for w in want]), rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_differentiates_the_batched_program():
    """The other order: grad of a sum over a vmap differentiates what the rules emitted
    (gather, scatter, a select of a padded mask, broadcasts), against a loop of grads."""
    rng = np.random.default_rng(17)
    xs = rng.standard_normal((5, 4, 3)).astype(F)
    us = rng.standard_normal((5, 2, 3)).astype(F)
    vs = rng.standard_normal(5).astype(F)
    idxs = np.array([0, 2, 3, -1, 1], np.int32)

    def total(xs, us, vs):
        windows = ember.vmap(_window_loss)(xs, idxs, us)
        padded = ember.vmap(lambda x, v: lax.pad(x, v, ((1, 1, 1), (0, -1, 0))))(xs, vs)
        return jnp.sum(windows) + jnp.sum(jnp.sin(padded))

    def one(x, u, v, i):
        pad = lax.pad(x, v, ((1, 1, 1), (0, -1, 0)))
        return _window_loss(x, i, u) + jnp.sum(jnp.sin(pad))

    want = [ember.grad(one, argnums=(0, 1, 2))(xs[k], us[k], vs[k], idxs[k]) for k in range(5)]
    for run in (ember.grad(total, argnums=(0, 1, 2)),
                ember.jit(ember.grad(total, argnums=(0, 1, 2)))):
        got = run(xs, us, vs)
        for g, k in zip(got, range(3)):
            np.testing.assert_allclose(g, np.stack([w[k] for w in want]), rtol=1e-5,
                                       atol=1e-5)
