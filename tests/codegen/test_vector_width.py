"""Kernels use the host's full vector width: on x86 hosts with AVX-512, the target's feature
string turns off LLVM's "prefer-256-bit" tuning (Intel server cores have it), which would
otherwise make the vectorizer and the legalizer split every kernel into ymm halves."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ember.backends import cpu
from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.kernel_records import split_asm_functions
from ember.hlo import Builder, Shape

AVX512 = "+avx,+avx2,+avx512f,+avx512vl,+fma"


@pytest.mark.parametrize("triple,features,added", [
    ("x86_64-unknown-linux-gnu", AVX512, True),
    ("x86_64-pc-windows-msvc", AVX512, True),
    ("x86_64-unknown-linux-gnu", "+avx,+avx2,-avx512f,+fma", False),  # AVX2 only
    ("x86_64-unknown-linux-gnu", "+avx,+avx2,+avx512vl,+fma", False),  # no avx512f
    ("aarch64-unknown-linux-gnu", "+neon,+avx512f", False),  # never outside x86
])
def test_prefer_256_bit_is_turned_off_only_on_avx512_x86(triple, features, added):
    got = llvm_target.host_features(triple, features)
    assert got.startswith(features)
    assert got.endswith(",-prefer-256-bit") is added
    assert got == features or added


@pytest.mark.skipif(not llvm_target.host_has("+avx512f"), reason="host has no AVX-512")
@pytest.mark.parametrize("op", ["exponential", "tanh", "add"])
def test_avx512_host_kernels_use_zmm_registers(op):
    b = Builder("f")
    x = b.parameter(Shape("f32", (4099,)))
    exe = cpu.compile(b.build(b.add(x, x) if op == "add" else getattr(b, op)(x)),
                      use_cache=False)
    # the math helpers' narrower vector variants (`ember.exp.v8f32`: mathlib/vec.py, for
    # loops the vectorizer gives fewer lanes, padded onto the 16-lane body) are not the kernel
    fns = split_asm_functions(exe.assembly())
    asm = "\n".join(t for name, t in fns.items()
                     if not re.fullmatch(r"ember\.\w+\.v[48]f32", name))
    assert "%zmm" in asm and "%ymm" not in asm.replace("vzeroupper", "")
    v = np.linspace(-3, 3, 4099, dtype=np.float32)
    want = {"exponential": np.exp, "tanh": np.tanh, "add": lambda t: t + t}[op](v)
    np.testing.assert_allclose(exe(v), want, rtol=3e-7)
