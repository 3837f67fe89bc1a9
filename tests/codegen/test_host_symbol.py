"""jit/host_symbol.py: symbols bound for the JIT linker once per process, and Python
trampolines native code calls by address (the fft, callback, precise-copy, LAPACK, BLAS,
GEMM, thread-pool and clock bindings are all made with it)."""

from __future__ import annotations

import ctypes
import threading

import llvmlite.ir as ir
import pytest

from ember.backends.cpu.jit.host_symbol import HostSymbol


class _Linker:
    """Records add_symbol calls as llvmlite's binding module would take them."""

    def __init__(self) -> None:
        self.symbols: list[tuple[str, int]] = []

    def add_symbol(self, name: str, address: int) -> None:
        self.symbols.append((name, address))


def test_bind_runs_once_and_its_result_is_kept() -> None:
    calls = []

    def bind(llvm: _Linker) -> str:
        calls.append(llvm)
        llvm.add_symbol("ember_test_a", 16)
        return "ready"

    sym = HostSymbol(bind)
    assert not sym.bound and sym.result is None
    linker = _Linker()
    threads = [threading.Thread(target=sym.register, args=(linker,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sym.register(linker) == "ready" and sym.bound and sym.result == "ready"
    assert len(calls) == 1 and linker.symbols == [("ember_test_a", 16)]


def test_a_failed_bind_binds_nothing_and_is_retried() -> None:
    attempts = []

    def bind(llvm: _Linker) -> bool:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("library not found")
        return True

    sym = HostSymbol(bind)
    with pytest.raises(OSError, match="library not found"):
        sym.register(_Linker())
    assert not sym.bound
    assert sym.register(_Linker()) is True and len(attempts) == 2


def test_addresses_are_looked_up_at_the_first_register() -> None:
    looked = []
    sym = HostSymbol.addresses(lambda: looked.append(1) or {"ember_x": 8, "ember_y": 24})
    assert not looked  # nothing is resolved before the linker needs it
    linker = _Linker()
    sym.register(linker)
    sym.register(linker)
    assert looked == [1] and linker.symbols == [("ember_x", 8), ("ember_y", 24)]


def test_trampoline_calls_the_python_function_and_declares_once() -> None:
    seen = []
    tramp = HostSymbol.trampoline("ember_test_tramp", lambda a, b: seen.append((a, b)),
                                  [ctypes.c_int64, ctypes.c_int64],
                                  ir.FunctionType(ir.VoidType(), [ir.IntType(64)] * 2))
    linker = _Linker()
    tramp.register(linker)
    assert linker.symbols == [("ember_test_tramp", tramp.address)] and tramp.address
    ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)(tramp.address)(3, -4)
    assert seen == [(3, -4)]
    module = ir.Module()
    fn = tramp.declare(module)
    assert tramp.declare(module) is fn and fn.name == "ember_test_tramp"
    assert str(fn.function_type) == "void (i64, i64)"
    bare = HostSymbol.trampoline("ember_test_bare", lambda: None, [])
    with pytest.raises(TypeError, match="ember_test_bare"):
        bare.declare(module)
