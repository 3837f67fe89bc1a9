"""The batched checkers themselves (tests/ops/batched_checks.py): a broken batch must not
hide failures. Each mismatch the single-case helpers catch is caught by the batch too, the
cases really run compiled (one program for all), and a lambda reading a loop variable late
keeps the value it had when its case was added."""

# The late-binding test reads its loop variable late on purpose.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from batched_checks import LaxBatch, NumpyBatch

import ember
import ember.numpy as jnp
from ember import lax
from ember.backends.cpu import compiler


def test_one_compile_for_all_cases_and_late_bound_lambdas(monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")  # a disk hit would compile nothing
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    batch = NumpyBatch()
    for k in (1.0, 2.0, 3.0):
        batch.check(lambda a: jnp.multiply(a, k), lambda a: a * k, x)  # k read late
    before = compiler.STATS["compiles"]
    batch.run()
    assert compiler.STATS["compiles"] - before == 1
    assert batch.cases == []


def test_numpy_batch_detects_mismatches():
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    with pytest.raises(AssertionError):
        NumpyBatch().check(jnp.sin, np.cos, x)
    batch = NumpyBatch()
    batch.check(jnp.sin, np.sin, x)
    batch.cases[0].eager = jnp.cos(x)  # jit's sin must then disagree with "eager"
    with pytest.raises(AssertionError):
        batch.run()
    with pytest.raises(AssertionError):
        NumpyBatch().check_eager(jnp.sin, np.cos, x)


def test_lax_batch_detects_mismatches():
    x = np.arange(7, dtype=np.int32)
    batch = LaxBatch()
    batch.add(lax.neg, lambda v: v, x)  # wrong reference: caught against jit's result
    with pytest.raises(AssertionError):
        batch.run()
    batch = LaxBatch()
    batch.add(lax.neg, np.negative, x)
    batch.cases[0].eager = ember.numpy.asarray(x)
    with pytest.raises(AssertionError):
        batch.run()
    with pytest.raises(AssertionError):
        LaxBatch().add_eager(lax.neg, lambda v: v, x)


def test_lax_batch_tuple_results_and_float_reductions():
    x = np.linspace(-3, 3, 33, dtype=np.float32)
    batch = LaxBatch()
    batch.add(lambda v: lax.top_k(v, 3), None, x)
    batch.add(lambda v: (lax.cumsum(v),), lambda v: (np.cumsum(v, dtype=np.float32),), x,
              rtol=1e-5, atol=1e-5, ignore_zero_sign=True)
    batch.add(lambda v: lax.reduce_sum(v, (0,)), lambda v: np.sum(v), x, rtol=1e-5, atol=1e-5)
    assert [c.float_reduction for c in batch.cases] == [False, True, True]
    batch.run()
