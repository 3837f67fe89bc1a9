"""`ember.debug`: print and call Python from inside jit, also inside loop bodies.

Input: `debug.print("x = {x}", x=x)` or `debug.callback(fn, *args, **kwargs)` with traced
or concrete arrays. Output: nothing; the text is printed (the function called) with the
concrete values when the compiled code runs, or at once in eager mode.
Invariants: the equations are side effects (ember/prims/callback.py): never removed by DCE
or merged by CSE, run in program order, once per loop iteration; `ordered=True` is accepted
and recorded as JAX records it (Ember runs every side effect in order anyway). In a while
loop the condition's prints come before the body's in each iteration and once more before
the loop exits, as JAX prints them eagerly or with `ordered=True` (JAX 0.10.2's jit drops
unordered prints of a condition; tests/unit/test_debug_loops.py).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.prims.callback import (
    DEBUG,
    ORDERED_DEBUG,
    DebugCallback,
    debug_callback_p,
    debug_print_p,
    has_placeholders,
)
from ember.tree_util import tree_flatten

__all__ = ["print", "callback", "visualize_array_sharding", "visualize_sharding"]

def _printoptions() -> tuple:
    """NumPy's current print options as JAX records them: sorted pairs, JAX's key order."""
    opts = np.get_printoptions()
    keys = ("edgeitems", "threshold", "floatmode", "precision", "suppress", "linewidth",
            "nanstr", "infstr", "sign", "formatter", "legacy", "override_repr")
    return tuple((k, opts.get(k)) for k in keys if k in opts)


def print(fmt: str | None = None, *args: Any, ordered: bool = False,
          partitioned: bool = False, skip_format_check: bool = False,
          _use_logging: bool = False, **kwargs: Any) -> None:
    """Print `fmt.format(*args, **kwargs)` with the arrays' concrete values, from inside
    jit too (JAX's `jax.debug.print`)."""
    if fmt is None:
        raise TypeError("debug.print() missing required argument: 'fmt'")
    flat, in_tree = tree_flatten((args, kwargs))
    debug_print_p.bind(*flat, fmt=fmt, has_placeholders=has_placeholders(fmt),
                       in_tree=in_tree, logging_record=None, np_printoptions=_printoptions(),
                       ordered=ordered, partitioned=partitioned, static_args=())


def callback(callback: Callable[..., None], *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> None:
    """Call `callback(*args, **kwargs)` on concrete NumPy arrays, from inside jit too; its
    return value is ignored (JAX's `jax.debug.callback`)."""
    flat, in_tree = tree_flatten((args, kwargs))
    debug_callback_p.bind(*flat, callback=DebugCallback(callback, in_tree),
                          effect=ORDERED_DEBUG if ordered else DEBUG,
                          partitioned=partitioned)

# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402
from ember.core import traceback_util as _traceback_util  # noqa: E402


def visualize_sharding(shape: Any, sharding: Any, **kwargs: Any) -> None:
    """Print a plain-text table of how an array of `shape` (rank 1 or 2) is laid out by
    `sharding`: one box per shard, labelled with the devices that hold it."""
    from ember.sharding._visualize import sharding_text
    builtins.print(sharding_text(tuple(shape), sharding))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print the layout of the Array `arr` over its devices (see `visualize_sharding`)."""
    visualize_sharding(arr.shape, arr.sharding, **kwargs)


_traceback_util.wrap_public(globals())  # eager errors show the user's frames only
__getattr__ = _module_getattr(__name__)
