"""Drawing DOT text with Graphviz's `dot` program.

Input: DOT text and an output path (`.svg`, `.png`, or any format `dot -T` knows; the
format defaults to the path's suffix). Output: the file, and its path.
Invariants: `dot` is looked up on PATH at each call; when it is missing, `GraphvizMissing`
(a RuntimeError) says how to install it (Debian/Ubuntu: the `graphviz` package) and the
DOT text is still written next to the requested path (`<path>.dot`) so nothing is lost.
"""

from __future__ import annotations

import os
import shutil
import subprocess

INSTALL_HINT = ("Graphviz's `dot` program is not installed; install it to draw diagrams "
                "(Debian/Ubuntu: `sudo apt-get install graphviz`, macOS: `brew install "
                "graphviz`).")


class GraphvizMissing(RuntimeError):
    pass


def dot_program() -> str | None:
    """The path of `dot`, or None."""
    return shutil.which("dot")


def render(dot_text: str, path: str, format: str | None = None, timeout: float = 120.0
           ) -> str:
    """Draw `dot_text` into `path` (format from its suffix unless given); returns `path`."""
    fmt = (format or os.path.splitext(path)[1].lstrip(".") or "svg").lower()
    exe = dot_program()
    if exe is None:
        stem = os.path.splitext(path)[0]
        with open(stem + ".dot", "w") as f:
            f.write(dot_text)
        raise GraphvizMissing(f"{INSTALL_HINT} The DOT text was written to {stem}.dot.")
    proc = subprocess.run([exe, f"-T{fmt}", "-o", path], input=dot_text.encode(),
                          capture_output=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"dot -T{fmt} failed: {proc.stderr.decode(errors='replace')}")
    return path
