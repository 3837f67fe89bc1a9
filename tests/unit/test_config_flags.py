"""The flag table in ember/config.py is the only reader of Ember's environment variables.

Input: the sources under ember/ (parsed with `ast`, never imported), README.md and
`config.flags()`. Checks: (a) no module but config.py reads an `EMBER_*` or `JAX_*` variable
(`os.environ.get/[]/in/pop/setdefault`, `os.getenv`, `from os import environ`), and no module
but config.py touches the environment with a key the scan cannot see (a variable, or the
whole mapping passed on), since that could read one; (b) README.md names exactly the table's
variables; (c) the table is well formed and live flags follow the environment at each read
while options keep the value read at import.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from ember.config import Flag, config

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ember"
CONFIG = PACKAGE / "config.py"
PREFIXES = ("EMBER_", "JAX_")
_ENV_NAMES = {"environ", "environb", "getenv", "getenvb"}
_KEYED_METHODS = {"get", "pop", "setdefault", "__getitem__", "__contains__"}


def _key_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.AST | None:
    """The expression naming the variable that the environment access `node` (`os.environ`,
    `os.getenv`, `environ`, ...) reads, or None when it is not read by one visible key."""
    parent = parents.get(node)
    if isinstance(parent, ast.Call) and parent.func is node:  # getenv(key)
        return parent.args[0] if parent.args else None
    if isinstance(parent, ast.Subscript) and parent.value is node:  # environ[key]
        return parent.slice
    if isinstance(parent, ast.Compare) and node in parent.comparators:  # key in environ
        return parent.left
    if isinstance(parent, ast.Attribute) and parent.attr in _KEYED_METHODS:
        call = parents.get(parent)
        if isinstance(call, ast.Call) and call.func is parent and call.args:
            return call.args[0]  # environ.get(key, ...)
    return None


def environment_reads(source: str, filename: str = "<string>") -> list[tuple[int, str]]:
    """(line, what) for each environment access in `source` that may read an EMBER_* or
    JAX_* variable: a constant key with that prefix, or a key the scan cannot see."""
    tree = ast.parse(source, filename)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, f"from os import {a.name}") for a in node.names
                      if a.name in _ENV_NAMES]
            continue
        is_access = ((isinstance(node, ast.Attribute) and node.attr in _ENV_NAMES)
                     or (isinstance(node, ast.Name) and node.id in _ENV_NAMES))
        if not is_access:
            continue
        key = _key_of(node, parents)
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            if key.value.startswith(PREFIXES):
                found.append((node.lineno, f"reads {key.value}"))
        else:
            found.append((node.lineno, "touches the environment with a key this test "
                                       "cannot see"))
    return sorted(found)


def test_the_scan_finds_every_kind_of_read():
    source = "\n".join([
        "import os",
        "a = os.environ.get('EMBER_X')",
        "b = os.environ['JAX_Y']",
        "c = 'EMBER_Z' in os.environ",
        "d = os.getenv('EMBER_W', '1')",
        "e = os.environ.get(name)",
        "f = dict(os.environ)",
        "from os import environ",
        "g = os.environ.get('XDG_CACHE_HOME')",  # not Ember's: allowed
        "h = os.environ.pop('JAX_V', None)",
    ])
    assert [line for line, _ in environment_reads(source)] == [2, 3, 4, 5, 6, 7, 8, 10]


def test_no_flag_is_read_outside_config():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == CONFIG:
            continue
        rel = path.relative_to(ROOT)
        problems += [f"{rel}:{line}: {what}"
                     for line, what in environment_reads(path.read_text(), str(rel))]
    assert not problems, ("read these through ember.config (add a row to its table):\n"
                          + "\n".join(problems))


def _table_variables() -> set[str]:
    return {f.env for f in config.flags() if f.env is not None}


def test_readme_names_exactly_the_tables_variables():
    text = (ROOT / "README.md").read_text()
    named = set(re.findall(r"\b(?:EMBER|JAX)_[A-Z0-9_]*[A-Z0-9]", text))
    table = _table_variables()
    assert not named - table, f"README.md names variables Ember does not read: {named - table}"
    assert not table - named, f"README.md does not document: {sorted(table - named)}"


def test_the_table_is_well_formed():
    flags = config.flags()
    assert all(isinstance(f, Flag) for f in flags)
    names = [f.name for f in flags]
    assert len(set(names)) == len(names)
    envs = [f.env for f in flags if f.env is not None]
    assert len(set(envs)) == len(envs)
    for f in flags:
        assert re.fullmatch(r"(ember|jax)_[a-z0-9_]+", f.name), f.name
        assert f.env is None or f.env.startswith(PREFIXES), f.env
        assert f.doc.strip() and f.type.strip(), f.name
        assert not (f.live and f.affects_tracing), f"{f.name}: a live flag cannot be in a key"
        assert f.env is not None or not f.live, f"{f.name}: live without a variable"
    traced = [f.name for f in flags if f.affects_tracing]
    assert len(config.trace_context()) == len(traced)
    described = config.describe().splitlines()
    assert [line.split(":")[0] for line in described] == names


LIVE_CASES = [  # (flag, text, value)
    ("ember_debug", "3", 3), ("ember_debug", "x", 0), ("ember_debug", "", 0),
    ("ember_dump_to", "/tmp/d", "/tmp/d"), ("ember_dump_to", "", None),
    ("ember_disable_passes", " cse, dce,,", frozenset({"cse", "dce"})),
    ("ember_enable_checks", "1", True), ("ember_enable_checks", "true", False),
    ("ember_backend", "interpreter", "interpreter"),
    ("ember_cache_dir", "off", "off"), ("ember_num_threads", "3", 3),
    ("ember_num_threads", "", None), ("ember_pool_spin_us", "7.5", 7.5),
    ("ember_allocator_bytes", "4096", 4096), ("ember_blas", " SciPy ", "scipy"),
    ("ember_blas", "", "auto"), ("ember_malloc_tuning", "0", False),
]


@pytest.mark.parametrize("name,text,value", LIVE_CASES)
def test_a_live_flag_follows_the_environment_at_each_read(monkeypatch, name, text, value):
    flag = next(f for f in config.flags() if f.name == name)
    monkeypatch.setenv(flag.env, text)
    assert getattr(config, name) == value
    assert config.read(name) == value
    monkeypatch.delenv(flag.env)
    assert getattr(config, name) == flag.default
    monkeypatch.setenv(flag.env, text)  # the same text again: the remembered value
    assert getattr(config, name) == value


def test_a_bad_backend_name_raises_at_each_read_until_fixed(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "gpu")
    for _ in range(2):
        with pytest.raises(ValueError, match="EMBER_BACKEND must be"):
            config.ember_backend  # noqa: B018
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    assert config.ember_backend == "cpu"


def test_update_changes_options_only(monkeypatch):
    with pytest.raises(ValueError, match="set EMBER_DUMP_TO"):
        config.update("ember_dump_to", "/tmp")
    with pytest.raises(AttributeError):
        config.update("no_such_flag", 1)
    with pytest.raises(AttributeError):
        config.read("update")
    # an option keeps the value read at import: a later change of its variable is not seen
    before = config.jax_enable_x64
    monkeypatch.setenv("JAX_ENABLE_X64", "0" if before else "1")
    assert config.jax_enable_x64 == before


def test_options_are_read_from_the_environment_at_import():
    import subprocess
    import sys

    env = dict(os.environ, JAX_ENABLE_X64="1", EMBER_MATMUL_BACKEND="blas")
    out = subprocess.run(
        [sys.executable, "-c", "from ember.config import config; "
         "print(config.jax_enable_x64, config.ember_matmul_backend)"],
        env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "blas"]
