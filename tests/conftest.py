"""Fixtures shared by every test directory, and the checks every test runs under.

EMBER_ENABLE_CHECKS=1 makes every module the suite compiles go through the verifier around
each pass, the print -> parse -> print round trip, and an evaluation before and after
every pass on random inputs (see ember/compiler.py and ember/passes/base.py).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("EMBER_ENABLE_CHECKS", "1")


@pytest.fixture
def x64():
    """Run a test with jax_enable_x64 on, restoring the previous value after."""
    from ember.config import config
    prev = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        config.update("jax_enable_x64", prev)

# Compiled code goes to a per-session temporary disk cache, never the user's ~/.cache.
if "EMBER_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["EMBER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ember-test-cache-")


def pytest_terminal_summary(terminalreporter):
    """Print the lines tests recorded as their `summary` property (the Array API suite's
    pass count), after the run's own summary; they travel from xdist workers in the
    reports' user properties."""
    for key in ("passed", "failed"):
        for rep in terminalreporter.stats.get(key, []):
            for name, value in getattr(rep, "user_properties", ()):
                if name == "summary":
                    terminalreporter.write_line(str(value))
