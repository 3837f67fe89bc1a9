"""README.md's first example runs as pasted, and its Quickstart keeps the command lines
`.ci/run` relies on (it runs the line ending in `# tests`)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)


def test_first_example_runs_as_pasted() -> None:
    code = _python_blocks()[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    assert "{ lambda ; a:f32[1000000] b:f32[] c:f32[]. let" in out.getvalue()


def test_readme_says_what_is_missing() -> None:
    text = README.read_text()
    for name in ("grad", "vmap", "jax.random", "complex", "linalg", "fft", "TPU"):
        assert name in text, name


def test_quickstart_command_lines_are_unchanged() -> None:
    lines = README.read_text().splitlines()
    assert ("python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/python -m "
            "ember demo # demo") in lines
    assert ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
            ".venv/bin/python -m pytest # tests") in lines
