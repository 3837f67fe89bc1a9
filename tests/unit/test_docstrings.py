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


def _layout_gaps(module: types.ModuleType) -> list[str]:
    """The public functions of `module` (Ember's own; classes and scalar types excluded)
    whose docstring lacks a part of JAX's layout: "Args:" (when the function takes
    arguments), "Returns:" and a ``>>>`` example (run by test_docstring_examples.py)."""
    import inspect
    gaps = []
    for name in sorted(dir(module)):
        obj = getattr(module, name)
        if (name.startswith("_") or isinstance(obj, type) or not callable(obj)
                or not _owner(obj).startswith("ember")):
            continue
        doc = getattr(obj, "__doc__", None) or ""
        try:
            takes_args = bool(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            takes_args = True
        missing = [part for part, need in (("Args:", takes_args), ("Returns:", True),
                                           (">>>", True)) if need and part not in doc]
        if missing:
            gaps.append(f"{name}: {', '.join(missing)}")
    return gaps


@pytest.mark.parametrize("modname", ["ember.numpy", "ember.numpy.linalg", "ember.numpy.fft"])
def test_numpy_functions_have_the_full_layout(modname: str) -> None:
    # Every public function of ember.numpy and its linalg/fft has Args, Returns and an
    # example (issue 22, item 1); no allow-list: a new function comes with its docstring.
    assert _layout_gaps(importlib.import_module(modname)) == []


def test_layout_check_finds_a_missing_part(monkeypatch: pytest.MonkeyPatch) -> None:
    import ember.numpy as jnp
    monkeypatch.setattr(jnp.histogram, "__doc__", "Count values.\n\n    Args:\n    x: a.\n")
    assert _layout_gaps(jnp) == ["histogram: Returns:, >>>"]
