"""Context managers of the top-level API that change how code in their block is traced.

`ensure_compile_time_eval()`: operations on concrete values inside the block compute at
once (at trace time) instead of being staged into the jaxpr of the jit being traced, so
their results are concrete Arrays usable in Python control flow; operations that involve a
traced value are staged as usual (JAX's semantics).

`default_matmul_precision(value)`: sets the `jax_default_matmul_precision` flag for the
block and restores the previous value after it, even when the block raises. The flag is
part of every jit cache key, so a jitted product traced under one value is not reused
under another. Ember's config is process-wide: the setting is seen by every thread while
the block runs (JAX's is per thread).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ember.config import config
from ember.core import trace as _trace


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Compute operations on concrete values at trace time (as jax.ensure_compile_time_eval).

    Example::

        @ember.jit
        def f(x):
            with ember.ensure_compile_time_eval():
                y = jnp.sin(3.0)      # a concrete Array, computed now
            if y > 0:                 # usable in Python control flow
                return x + y
            return x - y
    """
    with _trace.eval_context():
        yield


@contextlib.contextmanager
def default_matmul_precision(new_val: Any) -> Iterator[None]:
    """Set `jax_default_matmul_precision` within the block (as jax.default_matmul_precision).

    Args:
      new_val: None or one of JAX's names ('default', 'high', 'highest', 'bfloat16',
        'tensorfloat32', 'float32', or a dot algorithm preset name, which products
        refuse in Ember). A product whose `precision` is None records this one.

    Raises:
      ValueError: for a name JAX does not have.
    """
    previous = config.jax_default_matmul_precision
    config.update("jax_default_matmul_precision", new_val)
    try:
        yield
    finally:
        config.update("jax_default_matmul_precision", previous)
