"""A JAX name that Ember lacks raises an AttributeError saying it is not implemented yet.

Input: the name of an Ember module (`ember.numpy`) and an attribute looked up on it that it
does not have. Output: `module_getattr(module_name)`, the module-level `__getattr__` each
public module installs (Python calls it only for names the module does not define): for a
name of the corresponding JAX module (`jax.numpy`, listed in ember/_jax_names.py, generated
from JAX 0.10.2 by tools/jax_names.py) it raises

    AttributeError: ember.numpy.foo is not implemented yet in Ember (it is part of JAX's
    API: jax.numpy.foo in JAX 0.10.2) ...

and for any other name the ordinary "module 'ember.numpy' has no attribute 'foo'".
Invariants: the hook never fires for a name the module has, and a package's submodule
that is not imported yet is imported and returned instead of reported (`ember.random`
works after `import ember`, as `jax.random` does), so modules that other work adds are
never reported missing; otherwise it never makes a name exist (hasattr stays False).
`coverage()` counts, per Ember module, JAX's names it has.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

from ember._jax_names import JAX_VERSION, NAMES


def jax_module_of(module_name: str) -> str:
    """`ember.numpy.linalg` -> `jax.numpy.linalg`."""
    return "jax" + module_name[len("ember"):]


_NAME_SETS: dict[str, frozenset[str]] = {}


def _names(module_name: str) -> frozenset[str]:
    names = _NAME_SETS.get(module_name)
    if names is None:  # (made on the first miss: lookups of absent names can be frequent)
        names = _NAME_SETS[module_name] = frozenset(NAMES.get(jax_module_of(module_name), ()))
    return names


def missing_error(module_name: str, name: str) -> AttributeError:
    """The AttributeError for `module_name.name`, which the module does not have."""
    if name in _names(module_name):
        jax_name = f"{jax_module_of(module_name)}.{name}"
        return AttributeError(
            f"{module_name}.{name} is not implemented yet in Ember (it is part of JAX's API: "
            f"{jax_name} in JAX {JAX_VERSION}). README.md lists what works; please open an "
            "issue if your program needs it.", name=name, obj=sys.modules.get(module_name))
    return AttributeError(f"module {module_name!r} has no attribute {name!r}", name=name,
                          obj=sys.modules.get(module_name))


def module_getattr(module_name: str) -> Callable[[str], Any]:
    """The `__getattr__` for the module named `module_name` (install it as
    `__getattr__ = module_getattr(__name__)`)."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):  # (the import system probes __path__ and the like)
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}",
                                 name=name, obj=sys.modules.get(module_name))
        module = sys.modules.get(module_name)
        if module is not None and "__path__" in vars(module):
            # a submodule not imported yet (`ember.random` before `import ember.random`):
            # import it, as `jax.random` works after `import jax`
            sub = f"{module_name}.{name}"
            try:
                found = importlib.util.find_spec(sub) is not None
            except (ImportError, ValueError):
                found = False
            if found:
                return importlib.import_module(sub)
        raise missing_error(module_name, name)

    __getattr__.__qualname__ = f"{module_name}.__getattr__"
    return __getattr__


def coverage() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(Ember module, JAX's names, the ones it lacks) for each JAX module in the list whose
    Ember counterpart can be imported."""
    out = []
    for jax_module, names in NAMES.items():
        module_name = "ember" + jax_module[len("jax"):]
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        # (hasattr, not dir(): a submodule not imported yet counts, it imports on access)
        out.append((module_name, names, tuple(n for n in names if not hasattr(module, n))))
    return out
