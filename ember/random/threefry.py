"""The Threefry-2x32 block cipher (20 rounds) and the counters it hashes, as elementwise
uint32 operations.

Input: two key words `k1`, `k2` and two counter words `x1`, `x2` (uint32 arrays that
broadcast together). Output: the two cipher words, uint32, of the broadcast shape.
Invariants: every step is an ordinary `ember.lax` elementwise op (add with wraparound,
xor, shifts, or), so under `jit` the whole cipher fuses into the kernel that consumes its
bits; values are those of Salmon et al.'s Threefry-2x32 with 20 rounds, which is what
JAX's `threefry2x32` computes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember import numpy as jnp

# Rotation constants of the two alternating groups of four rounds.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The key-schedule parity word: k3 = k1 ^ k2 ^ C240.
_PARITY = np.uint32(0x1BD11BDA)


def _u32(value: int) -> Any:
    return np.uint32(value)


def _rotl(v: Any, r: int) -> Any:
    """rotl(v, r) = (v << r) | (v >> (32 - r)), for 0 < r < 32."""
    return lax.bitwise_or(lax.shift_left(v, _u32(r)), lax.shift_right_logical(v, _u32(32 - r)))


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Hash the counter pair (x1, x2) under the key (k1, k2); all uint32, broadcastable.

    Per round: x1 <- x1 + x2; x2 <- rotl(x2, r) ^ x1. Every four rounds the key schedule
    injects ks[(i+1) % 3] into x1 and ks[(i+2) % 3] + (i+1) into x2, with
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)."""
    args = [jnp.asarray(a) for a in (k1, k2, x1, x2)]
    for a in args:
        if a.dtype != np.uint32:
            raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got {a.dtype}")
    shape = np.broadcast_shapes(*(a.shape for a in args))
    k1, k2, x1, x2 = (a if a.shape == shape else jnp.broadcast_to(a, shape) for a in args)
    ks = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _PARITY))
    x1 = lax.add(x1, ks[0])
    x2 = lax.add(x2, ks[1])
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(_rotl(x2, r), x1)
        x1 = lax.add(x1, ks[(i + 1) % 3])
        x2 = lax.add(lax.add(x2, ks[(i + 2) % 3]), _u32(i + 1))
    return x1, x2


def iota_2x32(shape: Sequence[int]) -> tuple[Any, Any]:
    """The row-major flat index of every element of `shape`, as a 64-bit counter split into
    (high word, low word) uint32 arrays of that shape.

    The low word is sum_d iota_d * stride_d in uint32 arithmetic (exact mod 2^32), built
    from broadcasted iotas so it fuses into its consumer; the high word is zero while the
    size stays below 2^32."""
    shape = tuple(shape)
    size = math.prod(shape)
    if size > 2 ** 32:
        raise NotImplementedError("random bits array of size exceeding 2 ** 32")
    hi = jnp.zeros(shape, np.uint32)
    if not shape:
        return hi, jnp.zeros((), np.uint32)
    lo = None
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        term = lax.broadcasted_iota(np.uint32, shape, d)
        if stride != 1:
            term = lax.mul(term, _u32(stride % 2 ** 32))
        lo = term if lo is None else lax.add(lo, term)
        stride *= shape[d]
    return hi, lo
