"""Code generation tests write their disk cache entries to a temporary folder, never to the
user's cache (tests of the cache itself set EMBER_CACHE_DIR again). Fixtures for the two
routes of float matrix products (BLAS, Ember's own GEMM)."""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ["EMBER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ember-test-cache-")


def _with_matmul_backend(value: str):
    import ember

    old = ember.config.ember_matmul_backend
    ember.config.update("ember_matmul_backend", value)
    try:
        yield value
    finally:
        ember.config.update("ember_matmul_backend", old)


@pytest.fixture(params=["blas", "ember"])
def matmul_backend(request):
    """Run the test on both routes of a float product: BLAS and Ember's own GEMM (forced:
    "ember" takes every product it can, whatever its size)."""
    yield from _with_matmul_backend(request.param)


@pytest.fixture
def blas_backend():
    """Float products through the BLAS library (tests of its partition and calls)."""
    yield from _with_matmul_backend("blas")

