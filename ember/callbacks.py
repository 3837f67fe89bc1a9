"""Host callbacks: compiled code calling back into Python (`ember.pure_callback`).

Input: `pure_callback(callback, result_shape_dtypes, *args, **kwargs)` from user code,
and, at run time, calls from compiled code by callback id. Output: the callback's results,
checked against the declared shapes and dtypes.

The process-wide registry maps a small integer id to a `HostCallback` (the flat function,
its input and output avals, whether it has side effects). Lowering registers one entry per
callback equation and writes the id into the custom-call's `backend_config`; the evaluator
and the CPU backend's trampoline (ember/backends/cpu/emit/callbacks.py) look the id up when the
compiled code runs. Object code names only the id and the trampoline's symbol, never an
address, so a disk-cached executable stays valid in a new process (the id is resolved in
the process that runs it).
Invariants:
- A callback runs only while a compiled function is being executed (`executing()`): the
  compile-time checks that evaluate modules on random inputs must not print or call user
  code, so there the evaluator refuses (EvaluationError) and the check is skipped.
- An exception raised by a callback called from native code cannot unwind through it: it is
  kept (`pending`), later callbacks of the same call are skipped, and the guard around the
  executable re-raises it once the native call returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.core.aval import ShapedArray
from ember.hlo.evaluator.custom_calls import register_custom_call

TARGET = "ember.python_callback"


@dataclass(frozen=True)
class HostCallback:
    fn: Callable[[list[np.ndarray]], list[np.ndarray]]  # flat arrays in -> flat arrays out
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    side_effect: bool
    name: str
    # reads its arguments in place, during the call only, and keeps no reference to them
    # (the collectives, backends/cpu/collectives.py): they are handed over as read-only
    # views of the kernel's buffers instead of copies (a 32 MB all-reduce copied its
    # operand twice), and it is called as fn(args, outs) with views of the output
    # buffers (None from the evaluator), into which it may write its results and return
    # them (then nothing is copied)
    borrows: bool = False


_REGISTRY: list[HostCallback] = []
_LOCK = threading.Lock()


class _CallState(threading.local):
    def __init__(self) -> None:
        self.depth = 0
        self.pending: BaseException | None = None


_state = _CallState()


def register(cb: HostCallback) -> int:
    """The id of a new registry entry (kept for the life of the process)."""
    with _LOCK:
        _REGISTRY.append(cb)
        return len(_REGISTRY) - 1


def lookup(callback_id: int) -> HostCallback:
    return _REGISTRY[callback_id]


def executing() -> bool:
    return _state.depth > 0


def run_callback(callback_id: int, args: Sequence[np.ndarray],
                 outs: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Run entry `callback_id` on its (flat) arguments; results as the declared avals.
    Called by the evaluator and by the CPU trampoline (on the caller's thread); `outs`:
    the output buffers a borrowing callback may write into."""
    cb = lookup(callback_id)
    if cb.borrows:
        return cb.fn(list(args[:len(cb.in_avals)]), outs)  # type: ignore[call-arg]
    return cb.fn([np.array(a, copy=True) for a in args[:len(cb.in_avals)]])


def record_error(e: BaseException) -> None:
    if _state.pending is None:
        _state.pending = e


def has_pending_error() -> bool:
    return _state.pending is not None


def uses_callbacks(module: Any) -> bool:
    """Whether `module` calls Python: a host callback, an `fft` (whose CPU kernel calls
    NumPy's FFT through a trampoline that records its errors here: emit/fft.py), or a
    collective."""
    return any((i.opcode == "custom-call" and i.attrs.get("custom_call_target") == TARGET)
               or i.opcode in _CALLS_PYTHON for c in module.computations
               for i in c.instructions)


# opcodes whose CPU code calls Python: fft (NumPy's FFT), the collectives (host callbacks
# into the runtime's rendezvous: backends/cpu/collectives.py)
_CALLS_PYTHON = frozenset({"fft", "all-reduce", "all-gather", "reduce-scatter",
                           "all-to-all", "collective-permute"})


def run_guarded(fn: Callable[..., Any], *args: Any, **options: Any) -> Any:
    """`fn(*args, **options)`, a call of compiled code that calls Python: marked as
    executing, and a callback's exception re-raised once it returns."""
    _state.depth += 1
    if _state.depth == 1:
        _state.pending = None
    try:
        out = fn(*args, **options)
    finally:
        _state.depth -= 1
    err = _state.pending
    if err is not None and _state.depth == 0:
        _state.pending = None
        raise err
    return out


class CallbackExecutable:
    """Wraps a backend executable whose module calls Python: marks the call as executing,
    and re-raises a callback's exception after the native call. Has no fast path (the
    fast runner would bypass this guard; a caller may take the wrapped executable's own,
    `unguarded_fast_runner`, and call it through `run_guarded`)."""

    fast_runner = None

    def __init__(self, exe: Any) -> None:
        self._exe = exe

    def __getattr__(self, name: str) -> Any:
        return getattr(self._exe, name)

    def unguarded_fast_runner(self, bound: Any = ()) -> Any:
        make = getattr(self._exe, "fast_runner", None)
        return make(bound) if make is not None else None

    def __call__(self, *args: Any, **options: Any) -> Any:
        return run_guarded(self._exe, *args, **options)


def guard(compiled: Any, closed: Any = None) -> Any:
    """`compiled` (a CompiledModule) with its executable wrapped when it calls Python, and
    (with `jax_debug_nans`) checked for NaN outputs (ember/debug_nans.py)."""
    from ember.config import config

    # (the lowered module: every callback the optimized one calls is there already, and
    # looking at it does not make the optimized module of a disk-cache hit)
    if uses_callbacks(compiled.lowered.module) and not isinstance(compiled.executable,
                                                             CallbackExecutable):
        compiled.executable = CallbackExecutable(compiled.executable)
    if closed is not None and config.jax_debug_nans:
        from ember.debug_nans import NanCheckExecutable

        compiled.executable = NanCheckExecutable(compiled.executable, closed)
    return compiled


def evaluate_custom_call(*vals: np.ndarray, shape: Any, backend_config: str | None = None
                         ) -> Any:
    """The evaluator's rule for the custom-call target `ember.python_callback`."""
    from ember.hlo.evaluator.core import EvaluationError

    if not executing():
        raise EvaluationError("a host callback runs only when the compiled function is "
                              "called (not in compile-time checks)")
    callback_id = int(backend_config or 0)
    cb = lookup(callback_id)
    outs = run_callback(callback_id, list(vals))
    if cb.side_effect:
        return np.zeros((), np.bool_)  # the ordering token
    if shape.is_tuple:
        return tuple(outs)
    return outs[0]


register_custom_call("ember.python_callback", evaluate_custom_call)


# ---------------------------------------------------------------------------------------------
# The user-facing function.
# ---------------------------------------------------------------------------------------------

def _result_avals(result_shape_dtypes: Any) -> tuple[list[ShapedArray], Any]:
    from ember.tree_util import tree_flatten

    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError("pure_callback: result_shape_dtypes must be a pytree of objects "
                            f"with .shape and .dtype (e.g. ember.ShapeDtypeStruct), got {leaf!r}")
        avals.append(ShapedArray(tuple(leaf.shape), dtypes.canonicalize(np.dtype(leaf.dtype)),
                                 False))
    return avals, tree


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Call the Python function `callback(*args, **kwargs)` on concrete NumPy arrays, eagerly
    or from compiled code, returning arrays of the declared `result_shape_dtypes` (a pytree
    of ShapeDtypeStructs). The callback must be pure: jit may skip or merge calls whose
    results are unused or equal."""
    from ember.prims.callback import FlatCallback, ResultAvals, pure_callback_p
    from ember.tree_util import tree_flatten, tree_unflatten

    allowed = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
               "legacy_vectorized", None]
    if vmap_method not in allowed:
        # JAX's text, its "on of" included
        raise ValueError(f"vmap_method must be on of the allowed methods {allowed}, but got: "
                         f"{vmap_method}")
    flat_args, in_tree = tree_flatten((args, kwargs))
    avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                                result_avals=ResultAvals(avals), sharding=sharding,
                                vmap_method=vmap_method)
    return tree_unflatten(out_tree, list(outs))
