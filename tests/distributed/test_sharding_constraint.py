"""lax.with_sharding_constraint (eager placement; under jit an identity equation with
JVP, transpose and batching rules) and jit's in_shardings/out_shardings, over 4 devices."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.sharding import NamedSharding, P, SingleDeviceSharding

X = (np.arange(24, dtype=np.float32).reshape(4, 6) % 5) - 2


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("x", "y"))


def test_eager_places_the_value(mesh):
    s = NamedSharding(mesh, P("x", "y"))
    a = lax.with_sharding_constraint(X, s)
    assert a.sharding == s
    np.testing.assert_array_equal(np.asarray(a), X)
    tree = lax.with_sharding_constraint({"a": X, "b": (X[0], X)},
                                        {"a": s, "b": NamedSharding(mesh, P())})
    assert tree["b"][1].sharding == NamedSharding(mesh, P())
    with mesh:
        assert lax.with_sharding_constraint(X, P("y")).sharding == NamedSharding(mesh, P("y"))
    with pytest.raises(ValueError, match="only valid for values of rank at least 2"):
        lax.with_sharding_constraint(X[0], s)
    with pytest.raises(ValueError, match="partitioned 2 times, but the dimension size is 3"):
        lax.with_sharding_constraint(np.ones((3, 2)), s)


@pytest.mark.parametrize("shape,spec", [((4, 6), P("x", "y")), ((6,), P(None)),
                                        ((2, 0), P("y")), ((), P())])
def test_under_jit_grad_vmap(mesh, shape, spec):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2).astype(np.float32)
    s = NamedSharding(mesh, spec)

    def f(v):
        return lax.with_sharding_constraint(v * 2.0, s) + 1.0

    jaxpr = str(ember.make_jaxpr(f)(x))
    assert "sharding_constraint[" in jaxpr and repr(spec) in jaxpr
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x)), x * 2 + 1)
    np.testing.assert_array_equal(np.asarray(ember.grad(lambda v: f(v).sum())(x)),
                                  np.full(shape, 2.0, np.float32))
    t = ember.linear_transpose(lambda v: lax.with_sharding_constraint(v, s), x)(x)[0]
    np.testing.assert_array_equal(np.asarray(t), x)
    xs = np.stack([x, x + 1])
    np.testing.assert_array_equal(np.asarray(ember.vmap(f)(xs)), xs * 2 + 1)


def test_vmap_leaves_the_batch_axis_unsplit(mesh):
    s = NamedSharding(mesh, P("x"))
    f = ember.vmap(lambda v: lax.with_sharding_constraint(v, s), in_axes=1)
    assert "spec=P('x', None)" in str(ember.make_jaxpr(f)(X))  # (batch axis 1)
    g = ember.vmap(lambda v: lax.with_sharding_constraint(v, s))
    assert "spec=P(None, 'x')" in str(ember.make_jaxpr(g)(X))


def test_jit_in_and_out_shardings(mesh):
    sx = NamedSharding(mesh, P("x"))
    g = ember.jit(lambda a, b: (a @ b, jnp.sum(a)), in_shardings=(sx, None),
                  out_shardings=(NamedSharding(mesh, P("x", "y")), NamedSharding(mesh, P())))
    b = np.ones((6, 2), np.float32)
    prod, total = g(X, b)
    assert prod.sharding == NamedSharding(mesh, P("x", "y"))
    assert total.sharding == NamedSharding(mesh, P())
    np.testing.assert_array_equal(np.asarray(prod), X @ b)
    assert float(total) == float(X.sum())
    with pytest.raises(ValueError, match="partitioned 2 times, but the dimension size is 3"):
        g(np.ones((3, 6), np.float32), b)
    one = SingleDeviceSharding(ember.devices()[3])
    h = ember.jit(lambda a: a + 1, out_shardings=one)
    assert h(X).sharding == one
    with mesh:
        k = ember.jit(lambda a: a * 3, out_shardings=P(None, "y"))
        assert k(X).sharding == NamedSharding(mesh, P(None, "y"))
