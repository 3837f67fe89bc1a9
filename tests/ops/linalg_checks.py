"""Helpers shared by the linear algebra tests (test_linalg_lapack.py, test_linalg_complex.py,
test_linalg_eig.py): a function's results eagerly and under jit, closeness at a per-dtype
tolerance scaled by the problem, and JAX with 64-bit types on for a block."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import ember


def both(f: Callable[..., Any], *args: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """f's results eagerly and under jit, each as a list of NumPy arrays."""
    def np_tree(x: Any) -> list[np.ndarray]:
        return [np.asarray(v) for v in x] if isinstance(x, (tuple, list)) else [np.asarray(x)]
    return np_tree(f(*args)), np_tree(ember.jit(f)(*args))


def close(got: Any, want: Any, tol: float) -> None:
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@contextlib.contextmanager
def jax_x64() -> Iterator[Any]:
    """The jax module with jax_enable_x64 on inside the block (skips without JAX)."""
    jax = pytest.importorskip("jax")
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", prev)
