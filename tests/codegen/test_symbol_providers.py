"""The JIT linker's table of native helper libraries (jit/llvm_target.SYMBOL_PROVIDERS):
each prefix is the one its library names its symbols with, and each provider resolves."""

from __future__ import annotations

from ember.backends.cpu.dot import blas, gemm
from ember.backends.cpu.emit import callbacks
from ember.backends.cpu.emit import fft as fft_kernel
from ember.backends.cpu.jit import llvm_target
from ember.backends.cpu.lapack import find as lapack


def test_prefixes_are_the_libraries_own():
    table = llvm_target.SYMBOL_PROVIDERS
    expected = {blas.SYMBOL_PREFIX: blas.register_symbols,
                callbacks.SYMBOL: callbacks.register_symbols,
                fft_kernel.SYMBOL: fft_kernel.register_symbols,
                gemm.PREFIX: gemm.register_symbols,
                lapack.SYMBOL_PREFIX: lapack.register_symbols,
                llvm_target.PRECISE_SYMBOL: llvm_target.register_precise_symbol}
    assert set(table) == {p.encode() for p in expected}
    for prefix, fn in expected.items():
        assert llvm_target.provider(table[prefix.encode()]) is fn
