"""A JAX name Ember lacks raises an AttributeError saying it is not implemented yet (issue
22, item 4), from the list in ember/_jax_names.py, checked against each module's `dir()`.

Nothing here names which JAX names are missing: the list of missing names is computed from
the modules as they are, so work that adds a name only shrinks it. The coverage counts are
printed (`pytest -s`), and by `python tools/jax_names.py --coverage`.
"""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys

import pytest

from ember import _jax_names, _missing

ROOT = pathlib.Path(__file__).resolve().parents[2]
COVERAGE = _missing.coverage()


def test_the_modules_ember_has_are_covered() -> None:
    covered = {m for m, _, _ in COVERAGE}
    assert {"ember", "ember.numpy", "ember.numpy.linalg", "ember.lax", "ember.tree_util",
            "ember.tree", "ember.ops", "ember.debug", "ember.errors"} <= covered
    for module, names, missing in COVERAGE:
        print(f"{module}: {len(names) - len(missing)} of JAX's {len(names)} names")


@pytest.mark.parametrize("module_name", [m for m, _, _ in COVERAGE])
def test_missing_jax_names_say_not_implemented_yet(module_name: str) -> None:
    module = importlib.import_module(module_name)
    names = dict((m, n) for m, n, _ in COVERAGE)[module_name]
    for name in names:
        try:
            getattr(module, name)  # a name the module has is never reported missing
            continue
        except AttributeError as e:
            error = e
        with pytest.raises(AttributeError) as info:
            raise error
        text = str(info.value)
        assert text.startswith(f"{module_name}.{name} is not implemented yet in Ember"), text
        assert f"{_missing.jax_module_of(module_name)}.{name} in JAX 0.10.2" in text
        assert info.value.name == name and info.value.obj is module
        assert not hasattr(module, name)


@pytest.mark.parametrize("module_name", [m for m, _, _ in COVERAGE])
def test_other_names_get_the_ordinary_error(module_name: str) -> None:
    module = importlib.import_module(module_name)
    with pytest.raises(AttributeError) as info:
        module.surely_not_a_jax_name  # noqa: B018
    assert str(info.value) == f"module {module_name!r} has no attribute 'surely_not_a_jax_name'"


def test_a_submodule_not_imported_yet_is_imported_on_access() -> None:
    code = ("import sys, ember; assert 'ember.memory_stats' not in sys.modules; "
            "print(ember.memory_stats.__name__, hasattr(ember, 'surely_not_a_module'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["ember.memory_stats", "False"]


def test_the_hook_never_hides_what_exists() -> None:
    # `from package import submodule` still imports a submodule not yet loaded (the import
    # system asks the package's __getattr__ first and imports on its AttributeError)
    code = ("import sys, ember; assert 'ember.memory_stats' not in sys.modules; "
            "from ember import memory_stats; print(memory_stats.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "ember.memory_stats"


def test_the_list_is_jax_0_10_2s() -> None:
    jax = pytest.importorskip("jax")
    if jax.__version__ != _jax_names.JAX_VERSION:
        pytest.skip(f"installed JAX is {jax.__version__}")
    # In a fresh process, as the file was made: dir(jax) also lists the submodules some
    # earlier test imported (jax.extend, ...), which a fresh import does not.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import jax_names as t; "
            "print(t.render(*t.collect()), end='')")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "tools")],
                         capture_output=True, text=True, check=True)
    assert out.stdout == (ROOT / "ember" / "_jax_names.py").read_text()
