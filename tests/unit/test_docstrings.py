"""Every public callable of Ember's JAX surfaces has a docstring (issue 22's first rule).

Input: `dir()` of each public module. A name is public when it does not start with `_`;
a callable counts when it is Ember's own (its module, or its class's module, is under
`ember`): re-exported NumPy types and `typing` names document themselves elsewhere.
"""

from __future__ import annotations

import importlib
import types

import pytest

import ember
import ember.lax
import ember.numpy
import ember.numpy.linalg
import ember.ops
import ember.tree
import ember.tree_util

MODULES = [ember, ember.numpy, ember.numpy.linalg, ember.lax, ember.tree_util, ember.tree,
           ember.ops]


def _owner(obj: object) -> str:
    module = getattr(obj, "__module__", None)
    return module if isinstance(module, str) else type(obj).__module__


def _undocumented(module: types.ModuleType) -> list[str]:
    missing = []
    for name in dir(module):
        obj = getattr(module, name)
        if (name.startswith("_") or isinstance(obj, types.ModuleType) or not callable(obj)
                or not _owner(obj).startswith("ember")):
            continue
        if not (getattr(obj, "__doc__", None) or "").strip():
            missing.append(name)
    return missing


# issue 23's surfaces (imported here, apart from the list above, which other work edits)
MODULES += [importlib.import_module(m) for m in (
    "ember.nn", "ember.scipy", "ember.scipy.special", "ember.scipy.stats",
    "ember.scipy.stats.norm", "ember.scipy.stats.uniform", "ember.scipy.stats.bernoulli",
    "ember.scipy.stats.gamma", "ember.scipy.stats.beta", "ember.scipy.stats.poisson")]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_public_callable_has_a_docstring(module: types.ModuleType) -> None:
    assert _undocumented(module) == [], (
        f"{module.__name__}: public callables without a docstring")


def test_generated_numpy_docstrings_name_numpy_and_jax() -> None:
    import ember.numpy as jnp
    assert jnp.subtract.__doc__ == ("Subtract two arrays element-wise (as numpy.subtract / "
                                    "jax.numpy.subtract).")
    assert jnp.vsplit.__doc__.endswith("(as numpy.vsplit / jax.numpy.vsplit).")
    assert "0-d Array" in jnp.float32.__doc__
    # An alias is documented under the name it was defined as.
    assert "numpy.bitwise_not" in jnp.invert.__doc__


def test_the_docstring_table_names_only_real_functions() -> None:
    from ember.numpy._docs import SUMMARIES
    assert [n for n in SUMMARIES if not callable(getattr(ember.numpy, n, None))] == []
