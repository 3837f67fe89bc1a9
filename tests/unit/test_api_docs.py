"""The API reference (issue 22, item 2): tools/api_docs.py's pages document every public name
of every public module, list JAX's names each lacks as not implemented yet, and Sphinx
builds them with warnings as errors.

Input: the installed package and Sphinx (in the `test` extra, so this runs in CI; without
it the build tests fail, never skip). Output: pass/fail. The full build uses Sphinx's
`dummy` builder (every page read and every docstring parsed, no HTML written): about 10 s
in a subprocess of its own.
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_tool() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("api_docs", ROOT / "tools" / "api_docs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("api_docs", module)
    spec.loader.exec_module(module)
    return module


api_docs = _load_tool()


def test_every_public_name_is_documented_and_every_missing_one_listed() -> None:
    assert api_docs.problems() == []


def test_the_pages_cover_the_modules_a_user_imports() -> None:
    pages = api_docs.pages()
    for module in ("ember", "ember.numpy", "ember.numpy.linalg", "ember.lax", "ember.lax.linalg",
                   "ember.checkpoint_policies", "ember.nn",
                   "ember.nn.initializers", "ember.random", "ember.scipy.special",
                   "ember.scipy.stats", "ember.scipy.stats.norm", "ember.tree_util",
                   "ember.tree", "ember.ops", "ember.debug", "ember.errors"):
        assert f"{module}.rst" in pages, module
        assert f"   {module}\n" in pages["index.rst"], module
    numpy_page = pages["ember.numpy.rst"]
    assert ".. autofunction:: ember.numpy.sin\n" in numpy_page
    assert ".. py:data:: pi\n" in numpy_page
    assert ".. autoclass:: ember.api.Lowered\n" in pages["stages.rst"]
    # a JAX module Ember lacks is named on the index
    assert "``jax.numpy.fft``" in pages["index.rst"] or _has("ember.numpy.fft")


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_a_missing_name_is_listed_as_not_implemented_yet() -> None:
    import ember.lax
    from ember._jax_names import NAMES
    absent = next(n for n in NAMES["jax.lax"] if not hasattr(ember.lax, n))
    page = api_docs.pages()["ember.lax.rst"]
    head, _, tail = page.partition("Not implemented yet\n")
    assert f"``{absent}``" in tail and f"ember.lax.{absent}\n" not in head


def test_problems_finds_a_missing_docstring(monkeypatch: pytest.MonkeyPatch) -> None:
    import ember.numpy as jnp
    monkeypatch.setattr(jnp.hypot, "__doc__", "")
    assert api_docs.problems(["ember.numpy"]) == ["ember.numpy.hypot: no docstring"]


def test_problems_finds_an_undocumented_method(monkeypatch: pytest.MonkeyPatch) -> None:
    import ember.api
    monkeypatch.setattr(ember.api.Lowered.compile, "__doc__", None)
    monkeypatch.setattr(ember.ShapeDtypeStruct.ndim, "__doc__", None)
    assert set(api_docs.problems()) == {"ember.api.Lowered.compile: no docstring",
                                        "ember.ShapeDtypeStruct.ndim: no docstring"}


def _in_subprocess(call: str, *args: pathlib.Path) -> subprocess.CompletedProcess:
    """Run `api_docs.<call>` with `args` in a child Python (Sphinx's global state, its
    logging and the autodoc imports stay out of the test process)."""
    code = ("import sys, pathlib; sys.path.insert(0, sys.argv[1]); import api_docs; "
            f"sys.exit(api_docs.{call}(*map(pathlib.Path, sys.argv[2:]), 'dummy'))")
    return subprocess.run([sys.executable, "-c", code, str(ROOT / "tools"), *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_the_build_fails_on_a_warning(tmp_path: pathlib.Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.rst").write_text("Title\n=====\n\nthe norm |x| of x\n")
    out = _in_subprocess("run_sphinx", tmp_path / "src", tmp_path / "out")
    assert out.returncode != 0 and "Undefined substitution" in out.stderr, out.stderr


def test_the_reference_builds_without_a_warning(tmp_path: pathlib.Path) -> None:
    out = _in_subprocess("build", tmp_path / "src", tmp_path / "out")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "src" / "ember.numpy.rst").exists()


def test_the_readme_names_the_build_command() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[docs]' && "
            ".venv/bin/python tools/api_docs.py # docs") in lines
