"""Collectives over vmap's named axes (ember/prims/collectives.py, ember/lax/_parallel.py).

Input: vmapped functions calling lax.psum / pmean / pmax / pmin / all_gather / axis_index.
Output: values against NumPy over dtypes and shapes (rank 0, odd sizes, batch size 1), mapped
and unmapped operands, batch axes not in front, pytrees, nested vmaps with different names and
tuples of names, eagerly and under one shared `ember.jit`; gradients in both orders (grad
of vmap, vmap of grad) against JAX 0.10.2's values; JAX's error texts for unbound names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ember
from ember import lax

RNG = np.random.default_rng(3)


def _data(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-20, 20, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def _bcast(v: np.ndarray, n: int) -> np.ndarray:
    return np.broadcast_to(v, (n, *v.shape))


# (name, per-example function of x (batch axis first in the data), NumPy reference of the
# batched result from xs with the batch first)
def _sum_ref(xs: np.ndarray) -> np.ndarray:
    s = xs.astype(np.int32) if xs.dtype == np.bool_ else xs
    return _bcast(s.sum(0, dtype=s.dtype), len(xs))


def _mean_ref(xs: np.ndarray) -> np.ndarray:
    s = xs.astype(np.int32) if xs.dtype == np.bool_ else xs
    m = s.sum(0, dtype=s.dtype) / np.float32(len(xs))
    return _bcast(m.astype(xs.dtype if xs.dtype.kind == "f" else np.float32), len(xs))


OPS: list[tuple[str, Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = [
    ("psum", lambda x: lax.psum(x, "i"), _sum_ref),
    ("pmean", lambda x: lax.pmean(x, "i"), _mean_ref),
    ("pmax", lambda x: lax.pmax(x, "i"), lambda xs: _bcast(xs.max(0), len(xs))),
    ("pmin", lambda x: lax.pmin(x, "i"), lambda xs: _bcast(xs.min(0), len(xs))),
    ("all_gather", lambda x: lax.all_gather(x, "i"), lambda xs: _bcast(xs, len(xs))),
    ("all_gather_last", lambda x: lax.all_gather(x, "i", axis=-1),
     lambda xs: _bcast(np.moveaxis(xs, 0, -1), len(xs))),
]
# all_gather tiled needs rank >= 1
TILED = ("all_gather_tiled", lambda x: lax.all_gather(x, "i", axis=0, tiled=True),
         lambda xs: _bcast(xs.reshape((-1,) + xs.shape[2:]), len(xs)))

SHAPES = [(3,), (5, 2), (1, 4), (4, 3, 2), (2,)]  # batch size first; (2,): rank-0 examples
DTYPES = [np.float32, np.int32, np.bool_]


def _cases() -> list[tuple[str, Callable, np.ndarray, np.ndarray, int]]:
    cases = []
    for shape in SHAPES:
        for dtype in DTYPES:
            ops = OPS + ([TILED] if len(shape) > 1 else [])
            for name, fn, ref in ops:
                if dtype == np.bool_ and name in ("psum", "pmean"):
                    continue  # (test_psum_of_bool_counts: the int32 convert is batched)
                xs = _data(shape, dtype)
                # batch axis moved to the back for some cases (in_axes=-1)
                axis = -1 if len(shape) > 1 and name in ("psum", "all_gather") else 0
                arg = np.moveaxis(xs, 0, -1) if axis == -1 else xs
                cases.append((f"{name}{shape}{np.dtype(dtype).name}", fn, arg, ref(xs), axis))
    return cases


def _check(got: Any, want: np.ndarray, name: str) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.dtype, want.dtype,
                                                                  got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=name)


def test_values_against_numpy_eager_and_jit() -> None:
    cases = _cases()
    for name, fn, arg, want, axis in cases:
        _check(ember.vmap(fn, in_axes=axis, axis_name="i")(arg), want, name + " eager")

    def everything(args):
        return [ember.vmap(fn, in_axes=axis, axis_name="i")(a)
                for (_, fn, _, _, axis), a in zip(cases, args)]

    outs = ember.jit(everything)([c[2] for c in cases])
    for (name, _, _, want, _), got in zip(cases, outs):
        _check(got, want, name + " jit")


def test_psum_of_bool_counts() -> None:
    from ember.prims.conversion import convert_element_type_p
    if convert_element_type_p.batch_rule is None:
        pytest.skip("needs convert_element_type's batching rule (issue 21, shape slice)")
    xs = np.array([[True, False], [True, True], [False, False]])
    for wrap in (lambda g: g, ember.jit):
        got = wrap(ember.vmap(lambda v: (lax.psum(v, "i"), lax.pmean(v, "i")), axis_name="i"))(
            xs)
        _check(got[0], _sum_ref(xs), "psum bool")
        _check(got[1], _mean_ref(xs), "pmean bool")


def test_unmapped_operands_and_pytrees() -> None:
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    c = np.array([1.5, -2.0], np.float32)

    def f(v):
        return (lax.psum(c, "i"), lax.pmax(c, "i"), lax.all_gather(c, "i", axis=1),
                lax.psum(2, "i"), lax.psum({"a": v, "b": (v * 2, True)}, "i"),
                lax.pmean(v, "i"), lax.axis_size("i"))

    for wrap in (lambda g: g, ember.jit):
        s, m, g, two, tree, mean, size = wrap(ember.vmap(f, axis_name="i"))(x)
        np.testing.assert_array_equal(s, _bcast(3 * c, 3))
        np.testing.assert_array_equal(m, _bcast(c, 3))
        np.testing.assert_array_equal(g, _bcast(np.stack([c] * 3, axis=1), 3))
        np.testing.assert_array_equal(two, [6, 6, 6])
        np.testing.assert_array_equal(tree["a"], _bcast(x.sum(0), 3))
        np.testing.assert_array_equal(tree["b"][0], _bcast(2 * x.sum(0), 3))
        np.testing.assert_array_equal(tree["b"][1], [3, 3, 3])
        np.testing.assert_allclose(mean, _bcast(x.mean(0), 3), rtol=1e-6)
        np.testing.assert_array_equal(size, [3, 3, 3])
    # the reduced value is the same in every example: out_axes=None takes it once
    out = ember.vmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(x)
    np.testing.assert_array_equal(out, x.sum(0))
    # no mapped input at all: axis_size names the vmap
    idx = ember.vmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=4)()
    np.testing.assert_array_equal(idx, np.arange(4, dtype=np.int32))


def test_nested_vmaps_with_different_names() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)  # axes (i, j, data)

    def f(v):
        return (lax.psum(v, "i"), lax.psum(v, "j"), lax.psum(v, ("i", "j")),
                lax.pmax(v, ("j", "i")), lax.axis_index(("i", "j")), lax.axis_index("i"),
                lax.all_gather(v, "i"), lax.all_gather(v, "j"))

    # results the same for every j leave the inner vmap unmapped (out_axes None)
    inner = ember.vmap(f, axis_name="j", out_axes=(0, None, None, None, 0, None, 0, None))
    nested = ember.vmap(inner, axis_name="i")
    for wrap in (lambda g: g, ember.jit):
        si, sj, sij, mx, ij, i, gi, gj = wrap(nested)(x)
        np.testing.assert_array_equal(si, np.broadcast_to(x.sum(0), x.shape))
        np.testing.assert_array_equal(sj, x.sum(1))
        np.testing.assert_array_equal(sij, np.broadcast_to(x.sum((0, 1)), (2, 4)))
        np.testing.assert_array_equal(mx, np.broadcast_to(x.max((0, 1)), (2, 4)))
        np.testing.assert_array_equal(ij, np.arange(6, dtype=np.int32).reshape(2, 3))
        np.testing.assert_array_equal(i, [0, 1])
        # example (i, j) gathers x[:, j] over i, and x[i] over j
        np.testing.assert_array_equal(gi, np.broadcast_to(np.swapaxes(x, 0, 1), (2, 3, 2, 4)))
        np.testing.assert_array_equal(gj, x)


def test_gradients_in_both_orders() -> None:
    # values as JAX 0.10.2 gives them (psum transposes to psum)
    xs = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    x2 = np.arange(8, dtype=np.float32).reshape(4, 2)
    w2 = np.arange(8, dtype=np.float32).reshape(2, 4)

    def psum_f(x):
        return lax.psum(x, "i") * x

    def pmean_f(x):
        return lax.pmean(x, "i") * x

    def gather_f(x):
        return (lax.all_gather(x, "i") * w).sum()

    def tiled_f(x):
        return (lax.all_gather(x, "i", tiled=True) ** 2).sum()

    def gather_axis1_f(x):
        return (lax.all_gather(x, "i", axis=1) * w2).sum()

    cases = [(psum_f, xs, np.full(4, 2 * xs.sum())), (pmean_f, xs, np.full(4, 1.25)),
             (gather_f, xs, 4 * w), (tiled_f, x2, 8 * x2),
             (gather_axis1_f, x2, 4 * w2.T)]
    for fn, x, want in cases:
        def total(v, fn=fn):
            return ember.vmap(fn, axis_name="i")(v).sum()
        for wrap in (lambda g: g, ember.jit):
            np.testing.assert_allclose(wrap(ember.grad(total))(x), want, rtol=1e-6,
                                       err_msg=fn.__name__)
            np.testing.assert_allclose(wrap(ember.vmap(ember.grad(fn), axis_name="i"))(x),
                                       want, rtol=1e-6, err_msg=fn.__name__)


def test_pmax_gradient_goes_to_the_maximum() -> None:
    # (JAX 0.10.2 has no pmax derivative; Ember's is reduce_max's: the mean of the tangents
    # of the examples holding the maximum)
    xs = np.array([1.0, -3.0, 3.0, 0.5], np.float32)

    def total(v):
        return ember.vmap(lambda x: lax.pmax(x * x, "i") + lax.pmin(x, "i"), axis_name="i")(
            v).sum()

    # 4 * d/dx max(x^2): ties at x = -3 and 3 share it; 4 * d/dx min(x) at x = -3
    want = np.array([0.0, 4 * -6 / 2 + 4, 4 * 6 / 2, 0.0], np.float32)
    np.testing.assert_allclose(ember.grad(total)(xs), want, rtol=1e-6)
    np.testing.assert_allclose(ember.jit(ember.grad(total))(xs), want, rtol=1e-6)


def _raises(fn: Callable[[], Any], kind: type, text: str) -> None:
    with pytest.raises(kind) as e:
        fn()
    assert str(e.value) == text


def test_unbound_axis_names_raise_jax_errors() -> None:
    one = np.float32(1)
    found = ("Found an unbound axis name: {}. To fix this, please call {} under "
             "`jax.shard_map`.")
    # concrete operands: JAX looks the size up at once
    _raises(lambda: lax.psum(one, "i"), NameError, "unbound axis name: i")
    _raises(lambda: lax.pmean(one, "i"), NameError, "unbound axis name: i")
    _raises(lambda: lax.psum(one, ("i", "j")), NameError, "unbound axis name: i")
    _raises(lambda: lax.all_gather(one, "i"), NameError, "unbound axis name: i")
    _raises(lambda: ember.jit(lambda x: lax.all_gather(x, "i"))(one), NameError,
            "unbound axis name: i")
    _raises(lambda: lax.pmax(one, "i"), NameError, found.format("i", "psum"))
    _raises(lambda: lax.axis_index("i"), NameError, found.format("i", "axis_index"))
    _raises(lambda: ember.jit(lambda x: lax.pmin(x, "i"))(one), NameError,
            found.format("i", "psum"))
    _raises(lambda: ember.jit(lambda x: lax.axis_index("i"))(one), NameError,
            found.format("i", "axis_index"))
    # a vmap with another name does not bind it
    _raises(lambda: ember.vmap(lambda x: lax.psum(x, "j"), axis_name="i")(np.ones(3)),
            NameError, found.format("j", "psum"))
    _raises(lambda: ember.vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="i")(np.ones(3)),
            NameError, found.format("j", "psum"))
    _raises(lambda: ember.vmap(lambda x: lax.all_gather(x, "i", tiled=True),
                               axis_name="i")(np.ones(3)),
            ValueError, "axis 0 is out of bounds for array of dimension 0")


def test_batched_jaxpr_is_one_reduction() -> None:
    x = np.ones((3, 2), np.float32)
    jaxpr = ember.make_jaxpr(ember.vmap(lambda v: lax.pmean(v, "i"), axis_name="i"))(x)
    text = str(jaxpr)
    assert "psum[axes=(0,) axis_index_groups=None] a" in text, text
    assert "div b 3.0:f32[]" in text, text
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns].count("psum") == 1


def test_jit_inside_the_vmap() -> None:
    x = np.arange(3, dtype=np.float32)
    c = np.float32(2)
    # a jitted body holding a collective, called with no mapped (or no) arguments, is
    # batched in place (JAX: [6 7 8] and [0 1 2])
    out = ember.vmap(lambda v: v + ember.jit(lambda y: lax.psum(y, "i"))(c), axis_name="i")(x)
    np.testing.assert_array_equal(out, [6, 7, 8])
    for _ in range(3):  # (no fast path that would skip the vmap on later calls)
        idx = ember.vmap(lambda v: ember.jit(lambda: lax.axis_index("i"))(), axis_name="i")(x)
        np.testing.assert_array_equal(idx, [0, 1, 2])
    # a trace depends on the axis sizes: pmean's divisor is the size it was traced at
    mean = ember.jit(lambda y: lax.pmean(y, "i"))
    for n in (3, 5, 3):
        xs = np.arange(n, dtype=np.float32)
        np.testing.assert_allclose(ember.vmap(mean, axis_name="i")(xs), np.full(n, xs.mean()))
    assert mean.trace_count == 2
