"""Test setup shared by every test directory: the shared goldens path and fixtures."""

from __future__ import annotations

import os
import sys

import pytest

SHARED = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "shared"))


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


def load_golden_cases() -> list[dict]:
    path = os.path.join(SHARED, "goldens")
    if path not in sys.path:
        sys.path.insert(0, path)
    import jaxpr_cases  # type: ignore[import-not-found]
    return jaxpr_cases.CASES
