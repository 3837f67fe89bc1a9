"""Eager math kernels called through the fast-call trampoline (eager_math.apply's
one-operand path): the same bits as the kernel's ctypes entry and as jit, for lengths
below and above the thread split, 0-d and empty arrays, and the strided or non-native
operands that take the general path."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends.cpu.runtime import eager_math


def _ctypes_call(opcode: str, x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    if x.size:
        k = eager_math.kernel(opcode, eager_math.element_type(x.dtype))
        k.fn(x.__array_interface__["data"][0], out.__array_interface__["data"][0], x.size,
             1)
    return out


@pytest.mark.parametrize("n", [0, 1, 7, 1000, 200_003])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trampoline_equals_the_kernel_entry_and_jit(n, dtype):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype) * 10
    k = eager_math.kernel("sine", eager_math.element_type(np.dtype(dtype)))
    assert k.tramp is not None  # (this host's layouts are the probed ones)
    got = eager_math.apply("sine", x)
    assert got.dtype == dtype and got.shape == x.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got.view(np.uint8), _ctypes_call("sine", x).view(np.uint8))
    if dtype == np.float32:
        jitted = np.asarray(ember.jit(jnp.sin)(x))
        np.testing.assert_array_equal(np.asarray(jnp.sin(jnp.asarray(x))), jitted)


def test_zero_d_strided_and_byte_swapped_operands():
    x = np.linspace(-4, 4, 21, dtype=np.float32)
    np.testing.assert_array_equal(eager_math.apply("exponential", x[::2]),
                                  _ctypes_call("exponential", x[::2].copy()))
    np.testing.assert_array_equal(eager_math.apply("exponential", np.float32(0.5)),
                                  _ctypes_call("exponential", np.array([0.5], np.float32))[0])
    swapped = x.astype(x.dtype.newbyteorder())
    got = eager_math.apply("exponential", swapped)
    assert got.dtype == swapped.dtype
    np.testing.assert_array_equal(got.astype(np.float32), _ctypes_call("exponential", x))
