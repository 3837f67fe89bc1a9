"""Traceback filtering: an error raised under an Ember API call shows the user's frames only.

Input: an exception caught at an API boundary (`jit(f)(...)`, `make_jaxpr(f)(...)`,
`eval_shape`, `.trace`/`.lower`, a compiled call), and the `jax_traceback_filtering` flag
(JAX's values):

- "off": the traceback is left as it is.
- "quiet_remove_frames": every frame whose file is inside the ember package is removed
  from the exception's traceback, and a note says so and names the flag.
- "remove_frames": the same removal; the full traceback (and the call stack above the
  boundary) goes to an `UnfilteredStackTrace` set as the exception's `__cause__`, so it
  is printed before the filtered one.
- "tracebackhide": nothing is removed; Ember's frames get a `__tracebackhide__` local,
  which IPython's and pytest's printers honour.
- "auto" (the default): "tracebackhide" under IPython 7.17 or newer, else
  "quiet_remove_frames".

Output: the same exception object, re-raised by the boundary with `raise` (its type,
message and attributes are untouched; only `__traceback__`, `__notes__` and, for
"remove_frames", `__cause__` change).
Public functions called directly (eager `jnp.add`, `lax.reshape`, `x[idx]`, `x + y`) are
boundaries too: `public_entry` wraps one, and `wrap_public(namespace)` every plain public
function a package defines (ember, ember.numpy, ember.lax, ember.nn, ember.random,
ember.scipy...), so an eager error shows the user's frames as a jitted one does. Such an
entry filters only when its caller is the user's code: called from inside Ember it leaves
the exception to the boundary the user called (an exception Ember catches and handles is
never touched).
Invariants: only the outermost boundary on the stack filters (a boundary checks the frames
above it for another one), so nested jits filter once. Frames above the boundary (the
caller's) are added by Python as the exception propagates, as for any exception; a
boundary is therefore the outermost Ember frame of a public call. Files count as Ember's
when they are under the package directory, except `ember/__main__.py` (it runs the user's
script), the same rule as source_info's user frames. Filtering costs nothing until an
exception passes a boundary (a `try` block is free in Python 3.11).
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
import types
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ember.config import config

F = TypeVar("F", bound=Callable[..., Any])

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_BOUNDARIES: set[types.CodeType] = set()

NOTE = ("--------------------\n"
        "Ember removed its internal frames from the traceback of this exception, leaving "
        "your code's. Set JAX_TRACEBACK_FILTERING=off (or "
        "ember.config.update('jax_traceback_filtering', 'off')) to see every frame.")


class UnfilteredStackTrace(Exception):
    """The full traceback of an exception filtered in "remove_frames" mode (its cause)."""


def is_internal(filename: str) -> bool:
    """True for a file of the ember package (its frames are hidden), except __main__.py."""
    return filename.startswith(_EMBER_DIR) and not filename.endswith("__main__.py")


def mode() -> str:
    """The filtering mode in effect: the flag's value, with "auto" resolved."""
    value = config.jax_traceback_filtering
    if value == "auto":
        return "tracebackhide" if _ipython_hides_frames() else "quiet_remove_frames"
    return value


def _ipython_hides_frames() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None or getattr(ipython, "get_ipython", lambda: None)() is None:
        return False
    return tuple(getattr(ipython, "version_info", (0, 0))[:2]) >= (7, 17)


def register_boundary(fun: Callable[..., Any]) -> None:
    """Make a function that filters inline (`except Exception as e: filter_exception(e);
    raise`) known as a boundary, so boundaries under it leave the filtering to it."""
    _BOUNDARIES.add(fun.__code__)


def _under_another_boundary(tb: types.TracebackType) -> bool:
    frame = tb.tb_frame.f_back
    while frame is not None:
        if frame.f_code in _BOUNDARIES:
            return True
        frame = frame.f_back
    return False


def _filtered(tb: types.TracebackType | None) -> types.TracebackType | None:
    """A new traceback chain with the user's frames of `tb` only, in the same order."""
    entries = [(f, lineno, f.f_lasti) for f, lineno in traceback.walk_tb(tb)
               if not is_internal(f.f_code.co_filename)]
    out = None
    for frame, lineno, lasti in reversed(entries):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


def _with_callers(tb: types.TracebackType) -> types.TracebackType:
    """`tb` preceded by the frames that called the boundary (for the unfiltered copy), up
    to the first run of module-level frames (a script's, or the REPL's input): what lies
    above that is the interpreter's or a tool's, not the program's."""
    out = tb
    at_module = False
    for frame, lineno in traceback.walk_stack(tb.tb_frame.f_back):
        is_module = frame.f_code.co_name == "<module>"
        if at_module and not is_module:
            break
        at_module = at_module or is_module
        out = types.TracebackType(out, frame, frame.f_lasti, lineno)
    return out


def filter_exception(e: BaseException) -> None:
    """Filter `e`'s traceback in place as the flag says, unless a boundary further up the
    stack will. Call it from a boundary's `except` clause, then `raise`."""
    tb = e.__traceback__
    how = mode()
    if tb is None or how == "off" or _under_another_boundary(tb):
        return
    if how == "tracebackhide":
        for frame, _ in traceback.walk_tb(tb):
            if is_internal(frame.f_code.co_filename):
                frame.f_locals["__tracebackhide__"] = True
        return
    e.with_traceback(_filtered(tb))
    if how == "quiet_remove_frames":
        if NOTE not in getattr(e, "__notes__", ()):
            e.add_note(NOTE)
        return
    # remove_frames: the unfiltered traceback becomes the cause, printed first
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    full = UnfilteredStackTrace(
        f"{text}\n\nThe stack trace below is the original one, with Ember's frames; the "
        "traceback that follows it shows only your code's.\n\n--------------------")
    full.with_traceback(_with_callers(tb))
    full.__cause__, full.__context__ = e.__cause__, e.__context__
    full.__suppress_context__ = e.__suppress_context__
    e.__cause__ = full
    e.__context__ = None


_PUBLIC: dict[Callable[..., Any], Callable[..., Any]] = {}  # function -> its entry


def public_entry(fun: F) -> F:
    """`fun` as a public entry point: a boundary (see the module docstring) that filters
    only an exception leaving it into a caller outside Ember. One wrapper per function, so
    aliases stay the same object (`jnp.abs is jnp.absolute`); `unwrap` gives `fun` back."""
    entry = _PUBLIC.get(fun)
    if entry is not None:
        return entry  # type: ignore[return-value]

    @functools.wraps(fun)
    def public(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            if not is_internal(sys._getframe(1).f_code.co_filename):  # the caller's file
                filter_exception(e)
            raise

    _BOUNDARIES.add(public.__code__)
    _PUBLIC[fun] = _PUBLIC[public] = public
    return public  # type: ignore[return-value]


def unwrap(fun: Any) -> Any:
    """The function a public entry wraps (any other object as it is): for the identity
    tests that pick a primitive from a user's computation (`computation is lax.add`)."""
    try:
        entry = _PUBLIC.get(fun)
    except TypeError:  # (an unhashable object)
        return fun
    return fun.__wrapped__ if entry is fun else fun


def wrap_public(namespace: dict[str, Any]) -> None:
    """Replace each public plain function of a module's namespace that Ember defines by its
    `public_entry` (call it at the end of a public package's __init__, after any docstring
    is installed: the wrapper copies it). Other callables (ufuncs, jitted functions,
    classes) and functions that are boundaries already are left as they are."""
    for name, obj in list(namespace.items()):
        if (not name.startswith("_") and isinstance(obj, types.FunctionType)
                and obj.__code__ not in _BOUNDARIES
                and is_internal(obj.__code__.co_filename)):
            namespace[name] = public_entry(obj)


def wrap_methods(cls: type, names: Iterable[str] = ()) -> None:
    """Make the public methods (and properties) `cls` defines, and those in `names`
    (operators: `__add__`, `__getitem__`...), public entries, as `wrap_public` does for a
    module's functions: `x + y`, `x.reshape(...)`, `x.at[i].set(v)` are the user's calls."""
    extra = set(names)
    for name, value in list(vars(cls).items()):
        if name.startswith("_") and name not in extra:
            continue
        if isinstance(value, types.FunctionType) and value.__code__ not in _BOUNDARIES:
            setattr(cls, name, public_entry(value))
        elif isinstance(value, property) and isinstance(value.fget, types.FunctionType):
            setattr(cls, name, property(public_entry(value.fget), value.fset, value.fdel,
                                        value.__doc__))


def api_boundary(fun: F) -> F:
    """Decorate a public entry point: an exception raised under it leaves with Ember's
    frames filtered out (see the module docstring)."""

    @functools.wraps(fun)
    def boundary(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    _BOUNDARIES.add(boundary.__code__)
    return boundary  # type: ignore[return-value]
