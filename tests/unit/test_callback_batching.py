"""vmap of pure_callback (each `vmap_method`), debug.callback and debug.print
(ember/prims/_callback_batching.py), against JAX 0.10.2's behaviour.

Input: callbacks that record the shapes they are called with. Output: the batched results
equal stacking the per-example results, the callback sees the shapes JAX passes it for each
method (eager and under jit), the debug callbacks run once per example in JAX's order
(inner index as the outer loop for nested vmaps), and JAX's errors for a missing or unknown
vmap_method.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember


def _add_cb(seen: list):
    def cb(x, y):
        seen.append((np.shape(x), np.shape(y)))
        # y's axes line up with x's leading ones (a batch axis in front, for some methods)
        y = np.reshape(y, np.shape(y) + (1,) * (np.ndim(x) - np.ndim(y)))
        return np.asarray(x + y, np.float32)
    return cb


def _fun(cb, method):
    def f(x, y):
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        return ember.pure_callback(cb, ember.ShapeDtypeStruct(shape, np.float32), x, y,
                                   vmap_method=method)
    return f


X = np.arange(12, dtype=np.float32).reshape(3, 4) / 3  # 3 examples of shape (4,)
Y = np.float32(1.5)

# the shapes the callback sees for x mapped (batch 3), y unmapped: JAX 0.10.2's
SEEN = {"sequential": [((4,), ())] * 3, "sequential_unrolled": [((4,), ())] * 3,
        "expand_dims": [((3, 4), (1,))], "broadcast_all": [((3, 4), (3,))],
        "legacy_vectorized": [((3, 4), ())]}


@pytest.mark.parametrize("method", sorted(SEEN))
def test_vmap_methods_call_the_callback_as_jax_does(method) -> None:
    for wrap in (lambda f: f, ember.jit):
        seen: list = []
        # x mapped along its axis 1 and the result along axis 1: moved to the front for the
        # callback, moved back after
        out = wrap(ember.vmap(_fun(_add_cb(seen), method), in_axes=(1, None), out_axes=1))(
            X.T, Y)
        np.testing.assert_array_equal(out, (X + Y).T)
        assert seen == SEEN[method], (method, seen)


def test_sequential_with_both_mapped_nested_and_empty() -> None:
    seen: list = []
    f = _fun(_add_cb(seen), "sequential")
    ys = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(ember.vmap(f)(X, ys), X + ys[:, None])
    assert seen == [((4,), ())] * 3
    seen.clear()
    # nested: each call sees one example of both vmaps
    out = ember.jit(ember.vmap(ember.vmap(f, in_axes=(0, None)), in_axes=(None, 0)))(X[0], ys)
    np.testing.assert_array_equal(out, X[0][None, :] + ys[:, None])
    assert seen == [((), ())] * 12
    seen.clear()
    out = ember.vmap(f)(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))
    assert out.shape == (0, 4) and seen == []


def test_pytree_results_and_wrong_result_shape() -> None:
    def cb(x, total=False):
        s = np.sum(x) if total else np.sum(x, axis=-1)
        return {"s": np.asarray(s, np.float32), "d": (x * 2).astype(np.float32)}

    def f(x, method, total=False):
        out = {"s": ember.ShapeDtypeStruct((), np.float32),
               "d": ember.ShapeDtypeStruct((4,), np.float32)}
        return ember.pure_callback(cb, out, x, vmap_method=method, total=total)

    for method in ("sequential", "legacy_vectorized", "expand_dims"):
        got = ember.vmap(lambda x, m=method: f(x, m))(X)
        np.testing.assert_array_equal(got["d"], X * 2)
        np.testing.assert_allclose(got["s"], X.sum(1), rtol=1e-6)
    # a vectorized callback must return the batched shapes: (3,) declared, () returned
    with pytest.raises(RuntimeError, match=r"Incorrect output shape for return value #1: "
                       r"Expected: \(3,\), Actual: \(\)"):
        ember.vmap(lambda x: f(x, "legacy_vectorized", total=True))(X)
    # a sequential one the per-example shapes
    with pytest.raises(RuntimeError, match=r"Expected: \(4,\), Actual: \(3, 4\)"):
        ember.vmap(lambda x: ember.pure_callback(lambda _: X, X[0], x,
                                                 vmap_method="sequential"))(X)


def test_vmap_method_errors() -> None:
    f = _fun(_add_cb([]), None)
    msg = ("vmap is only supported for the pure_callback primitive when vmap_method is one of "
           "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
           "'legacy_vectorized'. Got vmap_method=None.")
    for wrap in (lambda g: g, ember.jit):
        with pytest.raises(NotImplementedError) as e:
            wrap(ember.vmap(f, in_axes=(0, None)))(X, Y)
        assert str(e.value) == msg
    # without vmap the default is fine
    np.testing.assert_array_equal(f(X[0], Y), X[0] + Y)
    with pytest.raises(ValueError) as e:
        ember.pure_callback(_add_cb([]), X[0], X[0], Y, vmap_method="vectorized")
    assert str(e.value) == ("vmap_method must be on of the allowed methods ['sequential', "
                            "'sequential_unrolled', 'expand_dims', 'broadcast_all', "
                            "'legacy_vectorized', None], but got: vectorized")


def test_debug_print_once_per_example_in_jax_order(capsys) -> None:
    f = ember.vmap(ember.vmap(lambda v, w: ember.debug.print("v={v} w={w}", v=v, w=w),
                              in_axes=(0, None)), in_axes=(0, None))
    xs = np.arange(6, dtype=np.int32).reshape(2, 3)
    # JAX 0.10.2 prints the inner vmap's index as the outer loop: 0 3 1 4 2 5
    want = "".join(f"v={v} w=7\n" for v in (0, 3, 1, 4, 2, 5))
    f(xs, 7)
    assert capsys.readouterr().out == want
    ember.jit(f)(xs, 7)
    assert capsys.readouterr().out == want


def test_debug_callback_once_per_example() -> None:
    calls: list = []

    def g(v, w):
        ember.debug.callback(lambda a, b: calls.append((a.tolist(), int(b))), v, w)
        return v * 2

    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    for wrap in (lambda h: h, ember.jit):
        calls.clear()
        out = wrap(ember.vmap(g, in_axes=(1, None)))(xs, 4)
        np.testing.assert_array_equal(out, xs.T * 2)
        assert calls == [([0.0, 2.0, 4.0], 4), ([1.0, 3.0, 5.0], 4)]


def test_vectorized_is_no_longer_a_parameter() -> None:
    # JAX 0.10.2 removed pure_callback's `vectorized`: it is one of the callback's kwargs,
    # and under vmap the missing vmap_method is the error
    def cb(x, vectorized):
        return np.asarray(x * 2 if vectorized else x)

    out = ember.pure_callback(cb, ember.ShapeDtypeStruct((2,), np.float32), X[0, :2],
                              vectorized=True)
    np.testing.assert_array_equal(out, X[0, :2] * 2)
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        ember.vmap(lambda x: ember.pure_callback(cb, ember.ShapeDtypeStruct((), np.float32), x,
                                                 vectorized=True))(X[0])
