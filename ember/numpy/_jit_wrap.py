"""Wrap a jnp function in `jit` the way JAX 0.10.2 does, so traced code prints alike.

Input: a jnp implementation function, the name JAX's jitted function has (`cumsum`,
`_where`, ...) and its static argument names. Output: a function with the same signature
that, while a trace is active (a jit or make_jaxpr being traced, or a tracer among the
arguments), calls an `ember.jit` of the implementation named `name`, so the trace holds
one `jit[name=... jaxpr={...}]` equation as JAX's does; in eager mode it calls the
implementation directly.
Invariants: numerics are unchanged (the jit body is the same implementation, and eager
mode keeps running primitive by primitive, never compiling per shape as DESIGN.md asks);
static arguments must be hashable, as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from ember.array import ArrayImpl
from ember.core.trace import Tracer, current_dynamic

F = TypeVar("F", bound=Callable[..., Any])

# Values that are pytree leaves holding no tracer (Ember's own Array is one).
_LEAVES: tuple[type, ...] = (ArrayImpl, np.ndarray, np.generic, int, float, complex, bool,
                             str, type(None), np.dtype)


def _tracing(args: tuple, kwargs: dict) -> bool:
    if current_dynamic().level > 0:
        return True
    # (a flat argument list of arrays and scalars, the usual eager call, is checked without
    # flattening pytrees: tree_leaves costs microseconds per call)
    flat = True
    for v in (*args, *kwargs.values()):
        if isinstance(v, Tracer):
            return True
        if not isinstance(v, _LEAVES):
            flat = False
    if flat:
        return False
    from ember.tree_util import tree_leaves
    return any(isinstance(v, Tracer) for v in tree_leaves((args, kwargs)))


def jit_like_jax(name: str, static_argnames: Sequence[str] = ()) -> Callable[[F], F]:
    """Decorator: stage `fun` as `jit[name=<name>]` under a trace (see module docstring)."""

    def deco(fun: F) -> F:
        jitted: list[Any] = []

        def body(*args: Any, **kwargs: Any) -> Any:
            return fun(*args, **kwargs)

        functools.update_wrapper(body, fun)
        body.__name__ = body.__qualname__ = name

        @functools.wraps(fun)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not _tracing(args, kwargs):
                return fun(*args, **kwargs)
            if not jitted:
                from ember.api import jit
                jitted.append(jit(body, static_argnames=tuple(static_argnames)))
            return jitted[0](*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return deco
