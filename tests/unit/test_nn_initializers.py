"""ember.nn.initializers against jax.nn.initializers 0.10.2 for the same keys: the values
(ember.random's draws are JAX's; the scaling is applied as JAX applies it), shapes, dtypes,
fans over conv-kernel shapes and batch axes, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.random as er
from ember.nn import initializers as init

jax = pytest.importorskip("jax")
jinit = jax.nn.initializers

CASES = [
    ("zeros", (), (3, 4)), ("ones", (), (2, 5)),
    ("constant", (0.25,), (3,)), ("uniform", (0.5,), (4, 3)), ("normal", (2.0,), (7,)),
    ("truncated_normal", (1.5,), (5, 5)),
    ("glorot_uniform", (), (6, 4)), ("glorot_normal", (), (3, 3, 2, 8)),
    ("lecun_uniform", (), (5, 7)), ("lecun_normal", (), (9, 4)),
    ("he_uniform", (), (3, 3, 4, 6)), ("he_normal", (), (8, 3)),
    ("xavier_uniform", (), (4, 4)), ("kaiming_normal", (), (2, 6)),
    ("orthogonal", (), (5, 3)), ("orthogonal", (2.0,), (3, 5)),
    ("delta_orthogonal", (), (3, 4, 4)),
]
_FACTORIES_WITHOUT_ARGS = {"zeros", "ones"}


def _make(mod, name, args):
    fn = getattr(mod, name)
    return fn if name in _FACTORIES_WITHOUT_ARGS else fn(*args)


@pytest.mark.parametrize("name,args,shape", CASES,
                         ids=[f"{c[0]}{c[2]}" for c in CASES])
def test_values_match_jax(name, args, shape):
    ours = _make(init, name, args)(er.key(3), shape)
    theirs = _make(jinit, name, args)(jax.random.key(3), shape)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype == np.float32
    # uniform-based and constant draws are bit-identical; normal-based ones go through
    # erf_inv (and orthogonal through a factorization), whose last bits may differ
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=3e-5, atol=2e-6)


@pytest.fixture
def jax_x64(x64):
    """64-bit types in JAX as well as in Ember, for the test only."""
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)


def test_variance_scaling_modes_axes_and_dtypes(jax_x64):
    for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        for dist in ("uniform", "normal", "truncated_normal"):
            kw = dict(in_axis=(0, 1), out_axis=-1, batch_axis=(2,))
            ours = init.variance_scaling(0.7, mode, dist, **kw)(er.key(1), (2, 3, 4, 5),
                                                                 np.float64)
            theirs = jinit.variance_scaling(0.7, mode, dist, **kw)(jax.random.key(1),
                                                                   (2, 3, 4, 5), np.float64)
            assert ours.dtype == np.float64
            np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12)


def test_initializers_trace_under_jit():
    f = ember.jit(lambda k: init.he_normal()(k, (16, 8)), )
    np.testing.assert_array_equal(np.asarray(f(er.key(0))),
                                  np.asarray(init.he_normal()(er.key(0), (16, 8))))


def test_errors_are_jaxs():
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a "
                       "1-dimensional weights tensor with default in_axis"):
        init.glorot_uniform()(er.key(0), (5,))
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer"):
        init.variance_scaling(1.0, "fan_max", "normal")(er.key(0), (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")(er.key(0), (2, 2))
    with pytest.raises(ValueError, match="requires at least a 2D shape"):
        init.orthogonal()(er.key(0), (4,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(er.key(0), (4, 4))
