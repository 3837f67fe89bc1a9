"""A precise rerun (sin/cos/tan of a huge argument) never makes results depend on the thread
count: row kernels and row-scheme reductions rerun a row / an output alone
(kernels.rerun_per_unit), so the other rows and outputs keep their fast-path bits whatever
chunk they shared with the huge lane."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.runtime import threads

CASES = {
    "row sums": (lambda v: jnp.sum(jnp.sin(v), axis=1),
                 lambda v: np.sin(v).sum(1)),
    "full sum": (lambda v: jnp.sum(jnp.sin(v)), lambda v: np.sin(v).sum()),
    "column sums": (lambda v: jnp.sum(jnp.cos(v), axis=0), lambda v: np.cos(v).sum(0)),
    "normalized rows": (lambda v: jnp.sin(v) / jnp.sum(jnp.sin(v) * jnp.sin(v), axis=1,
                                                       keepdims=True),
                        lambda v: np.sin(v) / (np.sin(v) ** 2).sum(1, keepdims=True)),
    "softmax of sin": (lambda v: jnp.exp(jnp.sin(v)) / jnp.sum(jnp.exp(jnp.sin(v)), axis=1,
                                                                keepdims=True),
                       lambda v: np.exp(np.sin(v)) / np.exp(np.sin(v)).sum(1, keepdims=True)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_bits_on_any_thread_count_with_huge_arguments(name):
    f, ref = CASES[name]
    x = np.random.default_rng(7).standard_normal((256, 2048)).astype(np.float32)
    x[37, 5] = 1e30  # beyond the fast range reduction: this lane's kernel reruns
    x[200, 2047] = -3e25
    before = threads.get_num_threads()
    outs = []
    try:
        for t in (1, 2, 3):
            threads.set_num_threads(t)
            cpu.clear_cache()  # (the split is chosen at compile time)
            outs.append(np.asarray(ember.jit(f)(x)))
    finally:
        threads.set_num_threads(before)
        cpu.clear_cache()
    for t, o in zip((2, 3), outs[1:]):
        assert np.array_equal(outs[0], o, equal_nan=True), f"{name}: 1 vs {t} threads"
    want = ref(x.astype(np.float64))
    np.testing.assert_allclose(outs[0], want, rtol=2e-5, atol=2e-4 * np.abs(want).max())
