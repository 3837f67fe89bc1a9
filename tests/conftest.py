"""Fixtures shared by every test directory."""

from __future__ import annotations

import pytest


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
