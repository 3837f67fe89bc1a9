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

from ember.core.trace import Tracer, current_dynamic

F = TypeVar("F", bound=Callable[..., Any])


def _tracing(args: tuple, kwargs: dict) -> bool:
    if current_dynamic().level > 0:
        return True
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
