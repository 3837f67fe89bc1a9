"""A fused elementwise chain thousands of ops deep compiles: the element generator builds
the operand graph bottom-up with an explicit stack instead of one Python call level per op
(a Threefry hash is ~100 ops deep, and a loop body chaining several hashes several hundred,
which overflowed Python's recursion limit)."""

from __future__ import annotations

import numpy as np

import ember
import ember.lax as lax


def test_a_3000_op_chain_fuses_and_compiles():
    def chain(x):
        for i in range(1000):  # 3 ops per step: 3000 deep
            x = lax.bitwise_xor(lax.add(x, np.uint32(i)), lax.shift_right_logical(x, np.uint32(3)))
        return x

    x = np.arange(10, dtype=np.uint32)
    want = x.copy()
    for i in range(1000):
        want = (want + np.uint32(i)) ^ (want >> np.uint32(3))
    compiled = ember.jit(chain).lower(x).compile()
    assert len(compiled.kernels()) == 1
    np.testing.assert_array_equal(compiled(x), want)
