"""Host-callback primitives: `pure_callback`, `debug_callback` and `debug_print`.

Input: flat array operands and params as JAX 0.10.2 records them (so the jaxpr prints the
same: `pure_callback[callback=_FlatCallback(...) result_avals=(...) sharding=None
vmap_method=None]`, `debug_callback[callback=<function ...> effect=Debug
partitioned=False]`, `debug_print[fmt=... has_placeholders=... in_tree=... ...]`).
Output: pure_callback's declared results; the debug primitives have no outputs.
Invariants:
- `has_effects` marks the debug primitives: their equations stay in every jaxpr although
  nothing reads them, and their lowering is a custom-call with
  `custom_call_has_side_effect=true` whose extra last operand is the previous side effect's
  token (pred[]), so passes keep them and their program order (see ember/hlo/ir.py's
  `has_side_effect` and ember/lowering.py's token).
- Results of a pure callback are checked against the declared shapes (RuntimeError naming
  the callback); a dtype that canonicalizes to the declared one (float64 with x64 off) is
  cast, any other dtype is an error.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

import numpy as np

from ember import callbacks
from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.core.primitive import Primitive
from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape
from ember.prims._lower import et

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


def _fn_repr(fn: Any) -> str:
    """A function's repr with its address masked as JAX's jaxpr printer masks it."""
    return _ADDRESS.sub(" at 0xXXXXXXXXXXXX>", repr(fn))


def _callback_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


class FlatCallback:
    """The user's callback and the pytree of its (args, kwargs)."""

    def __init__(self, callback_func: Callable[..., Any], in_tree: Any) -> None:
        self.callback_func = callback_func
        self.in_tree = in_tree

    def __call__(self, *flat_args: Any) -> Any:
        from ember.tree_util import tree_unflatten

        args, kwargs = tree_unflatten(self.in_tree, list(flat_args))
        return self.callback_func(*args, **kwargs)

    def __repr__(self) -> str:
        return (f"_FlatCallback(callback_func={_fn_repr(self.callback_func)}, "
                f"in_tree={self.in_tree!r})")


class DebugCallback:
    """debug.callback's flat function; prints as JAX's nested `_flat_callback`."""

    def __init__(self, callback: Callable[..., Any], in_tree: Any) -> None:
        self.callback = callback
        self.in_tree = in_tree

    def __call__(self, *flat_args: Any) -> None:
        from ember.tree_util import tree_unflatten

        args, kwargs = tree_unflatten(self.in_tree, list(flat_args))
        self.callback(*args, **kwargs)

    def __repr__(self) -> str:
        return ("<function debug_callback.<locals>._debug_callback.<locals>._flat_callback "
                "at 0xXXXXXXXXXXXX>")


class Effect:
    """JAX's `Debug` / `OrderedDebug` effect, as the jaxpr prints it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Effect) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


DEBUG = Effect("Debug")
ORDERED_DEBUG = Effect("OrderedDebug")

class ResultAvals(tuple):
    """pure_callback's declared result avals; print as JAX's `(ShapedArray(float32[3]),)`."""

    def __repr__(self) -> str:
        items = [f"ShapedArray({a.dtype.name}[{','.join(str(d) for d in a.shape)}])"
                 for a in self]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    __str__ = __repr__


pure_callback_p = Primitive("pure_callback", multiple_results=True)
debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_print_p = Primitive("debug_print", multiple_results=True)
for _p in (debug_callback_p, debug_print_p):
    _p.has_effects = True  # type: ignore[attr-defined]


# -- pure_callback -------------------------------------------------------------------------

def check_results(name: str, outs: Any, avals: tuple[ShapedArray, ...]) -> list[np.ndarray]:
    """The callback's results as arrays of the declared avals, or a RuntimeError naming it."""
    from ember.tree_util import tree_leaves

    leaves = tree_leaves(outs)
    if len(leaves) != len(avals):
        raise RuntimeError(f"pure_callback {name}: the callback returned {len(leaves)} "
                           f"values, but result_shape_dtypes declares {len(avals)}")
    checked = []
    for i, (leaf, aval) in enumerate(zip(leaves, avals)):
        arr = np.asarray(leaf)
        if tuple(arr.shape) != aval.shape:
            raise RuntimeError(f"pure_callback {name}: Incorrect output shape for return "
                               f"value #{i}: Expected: {aval.shape}, Actual: {arr.shape}")
        if arr.dtype != aval.dtype:
            if dtypes.canonicalize(arr.dtype) != aval.dtype:
                raise RuntimeError(f"pure_callback {name}: Incorrect output dtype for return "
                                   f"value #{i}: Expected: {aval.dtype.name}, "
                                   f"Actual: {arr.dtype.name}")
            arr = arr.astype(aval.dtype)
        checked.append(np.array(arr, order="C"))  # ascontiguousarray would make 0-d 1-d
    return checked


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract(*avals: ShapedArray, callback: FlatCallback,
                            result_avals: tuple[ShapedArray, ...], **params: Any) -> list:
    return list(result_avals)


@pure_callback_p.def_impl
def _pure_callback_impl(*args: np.ndarray, callback: FlatCallback,
                        result_avals: tuple[ShapedArray, ...], **params: Any) -> list:
    outs = callback(*[np.asarray(a) for a in args])
    return check_results(_callback_name(callback.callback_func), outs, result_avals)


@pure_callback_p.def_lowering
def _pure_callback_lower(ctx: Any, *xs: Instruction, callback: FlatCallback,
                         result_avals: tuple[ShapedArray, ...], **params: Any) -> list:
    if not result_avals:
        return []  # a pure callback without results does nothing observable

    def run(arrays: list[np.ndarray]) -> list[np.ndarray]:
        return _pure_callback_impl(*arrays, callback=callback, result_avals=result_avals)

    cb_id = callbacks.register(callbacks.HostCallback(
        run, tuple(ctx.avals_in), tuple(result_avals), False,
        _callback_name(callback.callback_func)))
    shapes = [Shape(et(a.dtype), a.shape) for a in result_avals]
    shape = shapes[0] if len(shapes) == 1 else Shape.tuple_of(shapes)
    inst = ctx.b.custom_call(callbacks.TARGET, list(xs), shape, backend_config=str(cb_id))
    if len(shapes) == 1:
        return [inst]
    return [ctx.b.get_tuple_element(inst, k) for k in range(len(shapes))]


# -- debug_callback and debug_print ----------------------------------------------------------

def _no_outputs(*avals: ShapedArray, **params: Any) -> list:
    return []


debug_callback_p.def_abstract_eval(_no_outputs)
debug_print_p.def_abstract_eval(_no_outputs)


@debug_callback_p.def_impl
def _debug_callback_impl(*args: np.ndarray, callback: DebugCallback, **params: Any) -> list:
    callback(*[np.asarray(a) for a in args])
    return []


def format_print(args: list[np.ndarray], fmt: str, in_tree: Any,
                 np_printoptions: tuple) -> str:
    """`fmt.format(*args, **kwargs)` with the arrays printed under JAX's print options."""
    from ember.tree_util import tree_unflatten

    pos, kw = tree_unflatten(in_tree, [np.asarray(a) for a in args])
    with np.printoptions(**dict(np_printoptions)):
        return fmt.format(*pos, **kw)


@debug_print_p.def_impl
def _debug_print_impl(*args: np.ndarray, fmt: str, in_tree: Any, np_printoptions: tuple,
                      **params: Any) -> list:
    print(format_print(list(args), fmt, in_tree, np_printoptions), flush=True)
    return []


def has_placeholders(fmt: str) -> bool:
    return any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))


def _side_effect_lowering(name_of: Callable[[dict], str]) -> Callable[..., list]:
    """A custom-call with `custom_call_has_side_effect=true`, chained after the previous
    side effect of this computation by its token operand (ember/lowering.py)."""
    from ember.lowering import effect_token, set_effect_token

    def rule(ctx: Any, *xs: Instruction, **params: Any) -> list:
        prim = debug_print_p if "fmt" in params else debug_callback_p

        def run(arrays: list[np.ndarray]) -> list[np.ndarray]:
            prim.impl(*arrays, **params)
            return []

        cb_id = callbacks.register(callbacks.HostCallback(
            run, tuple(ctx.avals_in), (), True, name_of(params)))
        token = effect_token(ctx.b)
        operands = list(xs) + ([token] if token is not None else [])
        inst = ctx.b.custom_call(callbacks.TARGET, operands, Shape("pred", ()),
                                 backend_config=str(cb_id))
        inst.attrs["custom_call_has_side_effect"] = True
        set_effect_token(ctx.b, inst)
        return []

    return rule


debug_callback_p.def_lowering(_side_effect_lowering(
    lambda p: _callback_name(p["callback"].callback)))
debug_print_p.def_lowering(_side_effect_lowering(lambda p: f"debug_print({p['fmt']!r})"))


# -- autodiff ------------------------------------------------------------------------------
# A pure callback is opaque Python: it has no derivative unless the user gives one, by
# wrapping it in a custom_jvp/custom_vjp function (JAX's error text). The debug primitives
# have no outputs: differentiating through one prints (or calls back on) the primal values
# only, once, and contributes no tangents (JAX's rule).

@pure_callback_p.def_jvp
def _pure_callback_jvp(primals: Any, tangents: Any, **params: Any) -> Any:
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _debug_jvp(prim: Primitive) -> Callable[..., tuple[list, list]]:
    def rule(primals: Any, tangents: Any, **params: Any) -> tuple[list, list]:
        return prim.bind(*primals, **params), []
    return rule


debug_callback_p.def_jvp(_debug_jvp(debug_callback_p))
debug_print_p.def_jvp(_debug_jvp(debug_print_p))

from ember.prims import _callback_batching  # noqa: E402, F401  (vmap rules)
