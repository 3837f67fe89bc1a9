"""The package's layering, checked over its imports (module level and inside functions),
parsed with `ast`, so no import has to run.

Rules (the architecture in README's "Where things are"):
- Below the backends nothing imports one: `core/`, `hlo/` (the evaluator included),
  `prims/`, `passes/`, `lax/`, `numpy/`, `codegen/` and `callbacks.py` never import
  `ember.backends`.
- The compile path reports through observers: `compiler.py`, `api.py` and the event
  registry they notify (`compile_events.py`) import nothing from `ember.explain`, nor name
  one of its modules in a string; explain subscribes (`explain/observers.py`).
- No import circle among module-level imports, except among modules of one folder.
- `backends/cpu/` is grouped by phase: a dozen modules at most beside its subfolders, each
  subfolder at most 15 modules and an `__init__.py` with a docstring.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "ember"


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: pathlib.Path) -> list[tuple[str, int, bool]]:
    """(imported ember module, line, at module level) for every import in the file; a
    `from package import name` names the submodule when `name` is one."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    top = {id(node) for node in tree.body}
    top |= {id(n) for node in tree.body if isinstance(node, (ast.If, ast.Try))
            for n in ast.walk(node)}
    type_checking = {id(n) for node in tree.body if isinstance(node, ast.If)
                     and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in type_checking:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: None if is_package else -1]
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix
                       for a in node.names]
        for t in targets:
            if t == "ember" or t.startswith("ember."):
                found.append((t, node.lineno, id(node) in top))
    return found


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}

BELOW_BACKENDS = ("ember.core", "ember.hlo", "ember.prims", "ember.passes", "ember.lax",
                  "ember.numpy", "ember.codegen", "ember.callbacks")


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_nothing_below_the_backends_imports_one():
    bad = [f"{MODULES[m].relative_to(PACKAGE.parent)}:{line} imports {t}"
           for m, imports in IMPORTS.items() if any(_under(m, p) for p in BELOW_BACKENDS)
           for t, line, _ in imports if _under(t, "ember.backends")]
    assert not bad, "\n".join(bad)


BELOW_EXPLAIN = ["ember.compiler", "ember.api", "ember.compile_events"]


def _explain_references(path: pathlib.Path) -> list[str]:
    """Every import of ember.explain in the file, at any depth, and every string that is
    exactly a dotted explain module name (as importlib would take it)."""
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
            # docstrings and messages are prose: only a bare dotted name counts
            text = node.value.strip()
            if text.split(":")[0].startswith("ember.explain") and " " not in text:
                names = [text]
        found += [f"line {node.lineno}: {n}" for n in names
                  if n == "ember.explain" or n.startswith("ember.explain.")]
    return found


@pytest.mark.parametrize("module", BELOW_EXPLAIN)
def test_the_compile_path_imports_nothing_from_explain(module):
    assert _explain_references(MODULES[module]) == []


def test_the_explain_check_sees_function_level_imports(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    if True:\n        from ember.explain.kernels import asm_of\n"
                   "    import ember.explain\n    from ember import explain\n"
                   "    __import__('importlib').import_module('ember.explain.compile_log')\n")
    assert sorted(r.split(": ")[1] for r in _explain_references(src)) == [
        "ember.explain", "ember.explain", "ember.explain.compile_log",
        "ember.explain.kernels"]


def _folder(name: str) -> str:
    return str(MODULES[name].parent)  # (a package's __init__ belongs to its folder)


def test_no_import_circle_across_folders():
    """Tarjan's strongly connected components over module-level imports; a component
    that spans two folders is a circle through layers."""
    graph = {m: sorted({t for t, _, top in IMPORTS[m] if top and t in MODULES and t != m})
             for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            components.append(comp)

    for m in graph:
        if m not in index:
            visit(m)
    crossing = [sorted(c) for c in components
                if len(c) > 1 and len({_folder(m) for m in c}) > 1]
    assert not crossing, "\n".join(" <-> ".join(c) for c in crossing)


def test_the_cpu_backend_is_grouped_by_phase():
    cpu = PACKAGE / "backends" / "cpu"
    beside = [p.name for p in cpu.glob("*.py")]
    assert len(beside) <= 12, beside
    folders = [p.parent for p in cpu.rglob("__init__.py") if p.parent != cpu]
    assert {"plan", "emit", "dot", "jit", "runtime", "mathlib"} <= {p.name for p in folders}
    for folder in folders:
        modules = list(folder.glob("*.py"))
        assert len(modules) <= 16, (folder, len(modules))
        init = folder / "__init__.py"
        assert init.exists(), folder
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring"


def test_codegen_and_the_evaluator_exist_and_import_no_backend():
    for package in ("ember.codegen", "ember.hlo.evaluator"):
        assert package in MODULES
        assert ast.get_docstring(ast.parse(MODULES[package].read_text()))


def test_the_architecture_notes_name_every_folder():
    """docs/architecture.md has a word for every package folder (a new folder without one
    fails here)."""
    notes = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    folders = sorted({p.parent.relative_to(PACKAGE) for p in PACKAGE.rglob("__init__.py")}
                     - {pathlib.Path(".")})
    missing = [str(f) for f in folders if f"{f.name}/" not in notes]
    assert not missing, f"docs/architecture.md does not mention: {missing}"


def _third_party_imports(path: pathlib.Path) -> list[tuple[str, int]]:
    """(top-level package, line) of every import of a package outside ember in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.module.split(".")[0], node.lineno))
    return found


def test_only_the_xla_backends_import_jax():
    """jax/jaxlib (the optional XLA runtime) is imported by `ember/backends/xla*` alone, so
    `import ember` and the CPU path run without it (pip install 'ember[xla]' adds it)."""
    allowed = ("ember.backends.xla", "ember.backends.xla_cpu", "ember.backends.tpu")
    bad = [f"{name}:{line} imports {pkg}" for name, path in MODULES.items()
           if not any(_under(name, a) for a in allowed)
           for pkg, line in _third_party_imports(path) if pkg in ("jax", "jaxlib")]
    assert not bad, bad
    assert "ember.backends.xla" in MODULES and "ember.backends.xla_cpu" in MODULES
