"""The compile path sits below the layer that reports on it.

ember/compiler.py, ember/api.py and the event registry they notify
(ember/compile_events.py) import nothing from ember.explain, at module level or inside
functions, and name no explain module in a string (as importlib would take it); explain
subscribes to their events instead (ember/explain/observers.py, installed by
ember/__init__.py). Parsed with `ast`, so an import in any function or branch counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ember

ROOT = Path(ember.__file__).parent
BELOW_EXPLAIN = ["compiler.py", "api.py", "compile_events.py"]


def _explain_references(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            # `from ember import explain` names the package in the imported name
            names = [f"{mod}.{a.name}" for a in node.names] if mod == "ember" else [mod]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a module name handed to importlib (docstrings and messages are prose:
            # only a string that is exactly a dotted explain module name counts)
            if node.value.strip().split(":")[0].startswith("ember.explain") and \
                    " " not in node.value.strip():
                names = [node.value.strip()]
        found += [f"line {node.lineno}: {n}" for n in names
                  if n == "ember.explain" or n.startswith("ember.explain.")]
    return found


@pytest.mark.parametrize("name", BELOW_EXPLAIN)
def test_compile_path_imports_nothing_from_explain(name):
    assert _explain_references(ROOT / name) == []


def test_the_check_sees_function_level_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    if True:\n        from ember.explain.kernels import asm_of\n"
                   "    import ember.explain\n    from ember import explain\n"
                   "    __import__('importlib').import_module('ember.explain.compile_log')\n")
    assert sorted(r.split(": ")[1] for r in _explain_references(src)) == [
        "ember.explain", "ember.explain", "ember.explain.compile_log",
        "ember.explain.kernels"]
