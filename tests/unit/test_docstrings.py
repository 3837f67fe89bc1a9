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


def test_generated_scalar_type_docstrings_and_aliases() -> None:
    import ember.numpy as jnp
    assert "0-d Array" in jnp.float32.__doc__
    # An alias is the function it names, docstring included.
    assert jnp.invert.__doc__ == jnp.bitwise_not.__doc__
    assert jnp.atan2.__doc__ == jnp.arctan2.__doc__


def test_numpy_docstrings_are_in_jax_layout() -> None:
    # The functions documented for issue 22 (the last one-liners) keep the full layout.
    import ember.numpy as jnp
    for name in ["subtract", "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor",
                 "bitwise_not", "left_shift", "right_shift", "pad", "unique", "unique_all",
                 "unique_counts", "unique_inverse", "unique_values", "append", "concat",
                 "ravel", "empty_like", "frombuffer", "fromiter", "diag", "tri", "sinc",
                 "divmod", "ldexp", "frexp", "gcd", "lcm"]:
        doc = getattr(jnp, name).__doc__
        assert "Args:" in doc and "Returns:" in doc and ">>>" in doc, name
    for doc in (jnp.linalg.norm.__doc__, jnp.linalg.trace.__doc__):
        assert "Args:" in doc and ">>>" in doc
