"""`jit_like_jax` (ember/numpy/_jit_wrap.py): a jnp / nn function JAX jits is staged as one
`jit[name=...]` equation under a trace and runs op by op eagerly; the check for a trace
looks inside pytree arguments (a tracer in a list or dict counts), with a fast path for a
flat list of arrays and scalars."""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember.numpy._jit_wrap import _tracing, jit_like_jax


@jit_like_jax("_pair_sum")
def _pair_sum(pair: list, scale: float = 1.0) -> object:
    return (pair[0] + pair[1]) * scale


def test_eager_flat_arguments_are_not_traced() -> None:
    assert not _tracing((np.ones(3), jnp.ones(2), 2.0, None, np.float32(1)), {"k": 3})
    assert not _tracing(([np.ones(2), 1.0],), {"d": {"a": jnp.ones(1)}})


def test_a_tracer_inside_a_pytree_argument_is_found() -> None:
    seen = []

    def f(x):
        seen.append((_tracing(([x, 1.0],), {}), _tracing((), {"d": {"a": x}})))
        return x * 2.0

    ember.grad(f)(np.float32(3.0))  # (a JVP tracer, with no staging trace around it)
    assert seen == [(True, True)]


def test_wrapped_function_eager_staged_and_differentiated() -> None:
    x, y = np.float32(1.5), np.float32(-2.0)
    assert float(_pair_sum([x, y], scale=2.0)) == -1.0
    text = str(ember.make_jaxpr(lambda a, b: _pair_sum([a, b]))(x, y))
    assert "jit[" in text and "name=_pair_sum" in text
    assert float(ember.grad(lambda a: _pair_sum([a, a], scale=3.0))(x)) == 6.0
