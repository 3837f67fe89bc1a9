"""vmap's API (ember/vmap_api.py): in_axes/out_axes pytrees, sizes, JAX's error texts.

The batching rules themselves are checked per primitive elsewhere (tests/ops); here the
functions are elementwise so only the API's own logic is under test.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp


def _x(*shape: int) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7


def test_in_axes_and_out_axes_move_the_batch_axis() -> None:
    x, y = _x(3, 4), _x(3)
    out = ember.vmap(lambda a, b: a * b + 1.0, in_axes=(1, None), out_axes=1)(x, y)
    want = np.stack([x[:, i] * y + 1 for i in range(4)], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_negative_axes_count_from_the_end() -> None:
    x = _x(2, 3, 5)
    out = ember.vmap(jnp.sin, in_axes=-1, out_axes=-1)(x)
    np.testing.assert_allclose(out, np.sin(x), rtol=1e-6)


def test_in_axes_pytree_prefix_and_kwargs() -> None:
    tree = {"a": _x(3, 2), "b": (_x(2, 3), _x(2))}

    def f(t, scale):
        return t["a"] * scale + t["b"][0] + t["b"][1]

    got = ember.vmap(f, in_axes=({"a": 0, "b": (1, None)}, None))(tree, 2.0)
    want = np.stack([tree["a"][i] * 2 + tree["b"][0][:, i] + tree["b"][1] for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # keyword arguments are mapped along their axis 0
    got = ember.vmap(lambda x, *, y: x - y)(_x(3), y=_x(3) * 2)
    np.testing.assert_allclose(got, -_x(3), rtol=1e-6)


def test_out_axes_pytree_and_unmapped_outputs_are_broadcast() -> None:
    x = _x(4, 2)
    a, b = ember.vmap(lambda v: (v * 2, 3.0), out_axes=(1, 0))(x)
    np.testing.assert_allclose(a, (x * 2).T)
    np.testing.assert_allclose(b, np.full(4, 3.0))
    c = ember.vmap(lambda v: 5.0, out_axes=None)(x)
    assert float(c) == 5.0


def test_nested_vmap_and_jit_in_both_orders() -> None:
    x, y = _x(3), _x(5)
    outer = ember.vmap(ember.vmap(lambda a, b: a * b, (None, 0)), (0, None))
    np.testing.assert_allclose(outer(x, y), np.outer(x, y), rtol=1e-6)
    np.testing.assert_allclose(ember.jit(outer)(x, y), np.outer(x, y), rtol=1e-6)
    inner_jit = ember.vmap(ember.jit(lambda a: jnp.exp(a) - 1))
    np.testing.assert_allclose(inner_jit(_x(2, 3)), np.expm1(_x(2, 3)), rtol=1e-5)


def test_axis_size_without_mapped_arguments() -> None:
    out = ember.vmap(lambda a: a + 1.0, in_axes=None, axis_size=4)(np.float32(2))
    np.testing.assert_allclose(out, np.full(4, 3.0))


def test_errors_name_the_arguments() -> None:
    f = ember.vmap(lambda x, y: x + y)
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes.*axis 0 of argument x of "
                       r"type float32\[3\].*argument y of type float32\[4\]"):
        f(_x(3), _x(4))
    with pytest.raises(ValueError, match="at least 3, but is only 1"):
        ember.vmap(jnp.sin, in_axes=2)(_x(3))
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        ember.vmap(jnp.sin, in_axes=None)(_x(3))
    with pytest.raises(ValueError, match="mapped output but out_axes is None"):
        ember.vmap(jnp.sin, out_axes=None)(_x(3))
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        ember.vmap(jnp.sin, in_axes="0")
    with pytest.raises(ValueError, match="tree prefix"):
        ember.vmap(lambda t: t[0], in_axes=((0, 0, 0),))((_x(3), _x(3)))
