"""tests/backends: backends checked against Ember's CPU backend with the op tables of
tests/ops, whose helper modules (op_tables.py, test_lax_elementwise.py's records) are
imported by name, as tests/ops' own files do (the test folders are not packages)."""

from __future__ import annotations

import pathlib
import sys

_OPS = str(pathlib.Path(__file__).resolve().parents[1] / "ops")
if _OPS not in sys.path:
    sys.path.insert(0, _OPS)
