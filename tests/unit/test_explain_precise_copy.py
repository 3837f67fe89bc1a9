"""`Compiled.llvm_ir(kernel=)` / `.asm(kernel=)` show a kernel's out-of-line precise copy.

A kernel with fast sin/cos has a cold `@ember_<kernel>.precise` function
(backends/cpu/kernels.py, `with_precise_rerun`); it belongs to that kernel, as the
thread pool's `.chunk` entry does, and to no other.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.explain.kernels import kernel_functions, split_asm_functions, split_llvm_functions


def _two_kernels(x, a):
    # the sum ends one kernel; the sin of the sum's result is another, with a precise copy
    return jnp.sin(x) * a, jnp.exp(jnp.sum(x * x))


@pytest.mark.parametrize("n", [7, 1000, 1 << 16])
def test_precise_copy_is_shown_with_its_kernel(n):
    x = np.linspace(-3, 3, n).astype(np.float32)
    c = ember.jit(_two_kernels).lower(x, x).compile()
    whole = split_llvm_functions(c.llvm_ir())
    with_precise = [k.name for k in c.kernels()
                    if f"ember_{k.name}.precise" in whole]
    assert with_precise, sorted(whole)  # the sin kernel has one
    for name in with_precise:
        ir = split_llvm_functions(c.llvm_ir(kernel=name))
        assert f"ember_{name}.precise" in ir and f"ember_{name}" in ir
        assert "ember_entry" not in ir
        asm = split_asm_functions(c.asm(kernel=name))
        assert f"ember_{name}.precise" in asm and f"ember_{name}" in asm
    for k in c.kernels():  # each function shown under one kernel only
        shown = set(split_llvm_functions(c.llvm_ir(kernel=k.name)))
        assert shown <= set(kernel_functions(f"ember_{k.name}"))
    # the outputs are still right (the precise copy is what runs for large arguments)
    got = c(x, x)
    np.testing.assert_allclose(np.asarray(got[0]), np.sin(x) * x, rtol=2e-6, atol=1e-6)


def test_kernel_functions_names():
    assert kernel_functions("ember_fusion") == ("ember_fusion", "ember_fusion.chunk",
                                                "ember_fusion.precise")
