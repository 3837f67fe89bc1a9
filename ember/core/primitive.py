"""Primitive: the unit of the jaxpr, with every rule about it in one place.

A primitive has a name, an abstract-eval rule (avals + params -> out avals), a NumPy rule
(`impl`, used by eager mode and the interpreter), a lowering rule to HLO, and its autodiff
rules (core/ad.py): a JVP rule `(primals, tangents, **params) -> (primal_out, tangent_out)`
and, for a primitive linear in some operands, a transpose rule
`(cotangent, *args, **params) -> one cotangent (or None) per arg`; and its batching rule
for vmap (core/batching.py) `(axis, args, dims, **params) -> (out, out_dims)`. `bind`
hands it to the innermost trace (core/trace.py).
Invariant: every primitive is registered in `PRIMITIVES` by name, so coverage tests can
check that each one has every rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.core.aval import ShapedArray
from ember.core.source_info import user_frame
from ember.core.trace import bind

PRIMITIVES: dict[str, Primitive] = {}


class Primitive:
    multiple_results = False
    is_call = False
    pp_alias_call_vars = False

    def __init__(self, name: str, *, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        self._abstract_eval: Callable[..., Any] | None = None
        self._impl: Callable[..., Any] | None = None
        self.lowering: Callable[..., Any] | None = None
        self._pp_params: Callable[[dict], dict] | None = None
        self.jvp_rule: Callable[..., Any] | None = None
        self.transpose_rule: Callable[..., Any] | None = None
        self.batch_rule: Callable[..., Any] | None = None
        # the param naming the vmap axes a collective works over (psum's "axes"), or None
        self.axis_name_param: str | None = None
        self.is_linear = False  # linear in all its operands (core/ad.py deflinear)
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name} defined twice")
        PRIMITIVES[name] = self

    # -- rules ------------------------------------------------------------------------------
    def def_abstract_eval(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self._abstract_eval = fn
        return fn

    def def_impl(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self._impl = fn
        return fn

    def def_lowering(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        self.lowering = fn
        return fn

    def def_jvp(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn(primals, tangents, **params) -> (primal_out, tangent_out)`; a tangent may be
        a symbolic `ad.Zero` (see core/ad.py)."""
        self.jvp_rule = fn
        return fn

    def def_transpose(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn(cotangent, *args, **params)`: linear args arrive as `ad.UndefinedPrimal`;
        returns one cotangent per arg (None for an arg that is not linear)."""
        self.transpose_rule = fn
        return fn

    def def_batch(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn(axis, args, dims, **params) -> (out, out_dims)`: vmap's rule (see
        core/batching.py); a dim is the operand's batch axis or None (not mapped)."""
        self.batch_rule = fn
        return fn

    def def_pp_params(self, fn: Callable[[dict], dict]) -> Callable[[dict], dict]:
        """Which params the jaxpr printer shows (JAX 0.10.2 hides some)."""
        self._pp_params = fn
        return fn

    def impl(self, *args: Any, **params: Any) -> Any:
        if self._impl is None:
            raise NotImplementedError(f"{self.name} has no NumPy rule")
        return self._impl(*args, **params)

    def abstract_eval(self, *avals: ShapedArray, **params: Any) -> Any:
        if self._abstract_eval is None:
            raise NotImplementedError(f"{self.name} has no abstract eval rule")
        return self._abstract_eval(*avals, **params)

    def checked_abstract_eval(self, avals: list[ShapedArray], params: dict) -> Any:
        """abstract_eval, with the user's source line added to a shape or dtype error."""
        try:
            return self.abstract_eval(*avals, **params)
        except (TypeError, ValueError) as e:
            if type(e) not in (TypeError, ValueError) or getattr(e, "_ember_located", False):
                raise
            err = type(e)(f"{e}\n  (in {self.name}, called at {user_frame()})")
            err._ember_located = True  # type: ignore[attr-defined]
            raise err.with_traceback(e.__traceback__) from None

    def pp_params(self, params: dict) -> dict:
        return self._pp_params(params) if self._pp_params else params

    # -- use --------------------------------------------------------------------------------
    def bind(self, *args: Any, **params: Any) -> Any:
        return bind(self, args, params)

    def __repr__(self) -> str:
        return self.name


class CallPrimitive(Primitive):
    """A primitive whose `jaxpr` param is a function body (jit): traces stage or inline it."""

    is_call = True
    pp_alias_call_vars = True

    def __init__(self, name: str):
        super().__init__(name, multiple_results=True)
        self.call_impl: Callable[[list, dict], list] = self._no_impl

    def _no_impl(self, args: list, params: dict) -> list:
        raise NotImplementedError(f"{self.name} has no implementation")

    def def_call_impl(self, fn: Callable[[list, dict], list]) -> Callable[[list, dict], list]:
        self.call_impl = fn
        return fn
