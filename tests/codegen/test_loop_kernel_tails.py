"""A small flat kernel runs its last partial vector masked (tail folding: less code to
compile) unless it is a loop body's kernel, which runs once per iteration: there the plain
vector loop and remainder are faster (kernels.TAIL_FOLD_MAX_ELEMENTS)."""

from __future__ import annotations

import numpy as np

import ember


def _kernel_irs(f, x):
    return {k.name: k.llvm_ir for k in ember.jit(f).lower(x).compile().kernels()}


def test_loop_body_kernels_are_not_tail_folded():
    x = np.arange(1000, dtype=np.float32)
    alone = _kernel_irs(lambda x: x + 1.0, x)
    looped = _kernel_irs(lambda x: ember.lax.fori_loop(0, 7, lambda i, x: x + 1.0, x), x)
    body = [ir for ir in looped.values() if "<" in ir and "x float>" in ir]  # the vector one
    assert len(body) == 1
    assert "llvm.masked." not in body[0]
    # (where the host has masked loads and stores, the same kernel alone is folded)
    (one,) = alone.values()
    assert "llvm.masked." in one or "vector.body" in one
    f = ember.jit(lambda x: ember.lax.fori_loop(0, 7, lambda i, x: x + 1.0, x))
    np.testing.assert_array_equal(np.asarray(f(x)), x + 7)
