"""Eager (and interpreter) float math through the CPU backend's own vector kernels.

Input: an HLO math opcode (`covers(opcode, dtype)` says which) and NumPy arrays of one
float dtype (f16, f32 or f64, any byte order, any strides, broadcastable shapes, 0-d and
empty included). Output: a fresh C-contiguous array of the (broadcast) shape and the input
dtype, holding exactly the bits a jitted CPU kernel computes for the same elements, because
both run the same element code (see eager_kernels.py).
Compilation: lazily, once per (opcode, dtype), on its first call: the kernel's module
(`eager_kernels.emit_module`; the length is a runtime argument) is optimized at O3 for the
host and loaded into an MCJIT engine that lives as long as the process; its object code is
stored in the CPU backend's disk cache (`disk_cache`: same key scheme - compiler source
hash, LLVM version, target triple, CPU name and features; `EMBER_CACHE_DIR`), so a fresh
process only links it. `STATS` counts kernels compiled and loaded from disk, and seconds.
Importing this module imports neither llvmlite nor the math library.
Threads: kernels take the thread count `threads.get_num_threads()` at each call; large
arrays are split into chunks for the thread pool (pool.py), which cannot change any
element's bits.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.backends.cpu.runtime.threads import NUM_THREADS, NUM_THREADS_ADDRESS
from ember.hlo.opcodes import MATH_OPCODES

_ELEMENT_TYPES = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                  np.dtype(np.float64): "f64"}
# The math opcodes of the opcode table (its `math` column), not mathlib.VECTORIZED, so that
# `covers` does not import the math library (or llvmlite); the coverage test checks that
# mathlib.VECTORIZED has every one (tests/unit/test_coverage.py).
OPCODES: frozenset[str] = MATH_OPCODES
STATS: dict[str, float] = {"kernels_compiled": 0, "kernels_from_disk": 0, "compile_s": 0.0,
                           "load_s": 0.0, "calls": 0}
# the disk entry's "HLO text" part of the key (v2: the modules hold a table entry too)
_CACHE_TAG = "ember-eager-math-v2"

_UNARY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                          ctypes.c_int32)
_BINARY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_int64, ctypes.c_int32)


class _Kernel:
    """One (opcode, dtype) kernel: the engine that owns its code, the callable entry, and
    the fast-call trampoline (runtime/fastcall.py; None where it cannot be made) with the
    kernel's table entry, reached through one descriptor per length (`descriptor`)."""

    def __init__(self, engine: Any, fn: Callable[..., None], table: int = 0,
                 tramp: Any = None) -> None:
        self.engine = engine  # keeps the code alive as long as the process
        self.fn = fn
        self.table = table
        self.tramp = tramp if table else None
        self._descs: dict[int, np.ndarray] = {}

    def descriptor(self, n: int) -> np.ndarray:
        """The trampoline's descriptor of a call on `n` elements: [table entry, 2, 0, 0,
        n, &thread count] (no result made read-only: the caller wraps it)."""
        desc = self._descs.get(n)
        if desc is None:
            from ember.backends.cpu.runtime import fastcall

            if len(self._descs) >= 256:  # (lengths seen: bounded)
                self._descs.clear()
            desc = self._descs[n] = fastcall.descriptor(self.table, [n, NUM_THREADS_ADDRESS])
        return desc


_KERNELS: dict[tuple[str, str], _Kernel] = {}
_LOCK = threading.Lock()


def element_type(dtype: np.dtype) -> str | None:
    """"f16", "f32" or "f64" for a float dtype the kernels cover (any byte order), else None."""
    et = _ELEMENT_TYPES.get(dtype)
    if et is None and dtype.kind == "f" and not dtype.isnative:
        et = _ELEMENT_TYPES.get(dtype.newbyteorder("="))
    return et


def covers(opcode: str, dtype: np.dtype) -> bool:
    """True when `opcode` on `dtype` runs through a CPU math kernel."""
    return opcode in OPCODES and element_type(np.dtype(dtype)) is not None


def apply(opcode: str, *args: np.ndarray) -> np.ndarray:
    """`opcode` elementwise on `args` (one float dtype; shapes broadcast), as jit computes
    it. The result has the first argument's dtype (byte order included)."""
    if len(args) == 1:  # the common eager case, with no broadcasting to do
        a = args[0]
        et = _ELEMENT_TYPES.get(a.dtype) if type(a) is np.ndarray else None
        if et is not None and a.flags.c_contiguous and opcode in OPCODES:
            out = np.empty(a.shape, a.dtype)  # (a native dtype: _ELEMENT_TYPES' keys are)
            n = out.size
            if n:
                k = kernel(opcode, et)
                if k.tramp is not None:  # one builtin call: pointers read natively
                    k.tramp((k.descriptor(n), a, out))
                else:
                    k.fn(a.__array_interface__["data"][0], out.__array_interface__["data"][0],
                         n, NUM_THREADS.value)
                STATS["calls"] += 1
            return out
    arrays = [np.asarray(a) for a in args]
    dtype = arrays[0].dtype
    et = element_type(dtype)
    if et is None or opcode not in OPCODES or any(a.dtype != dtype for a in arrays[1:]):
        raise TypeError(f"no eager math kernel for {opcode} on "
                        f"{[str(a.dtype) for a in arrays]}")
    native = dtype if dtype.isnative else dtype.newbyteorder("=")
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays[1:]):
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    out = np.empty(shape, native)
    n = out.size
    if n:
        fn = kernel(opcode, et).fn
        flat = [_contiguous(a, shape, native) for a in arrays]  # alive through the call
        fn(*[a.__array_interface__["data"][0] for a in flat],
           out.__array_interface__["data"][0], n, NUM_THREADS.value)
        STATS["calls"] += 1
    return out if native is dtype else out.astype(dtype)


def _contiguous(a: np.ndarray, shape: tuple[int, ...], native: np.dtype) -> np.ndarray:
    """`a` as a C-contiguous native-order array of `shape`: a copy (materializing
    broadcasts, reordering bytes) only when `a` is not one already."""
    if a.shape == shape and a.dtype == native and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(np.broadcast_to(a, shape), dtype=native)


def kernel(opcode: str, et: str) -> _Kernel:
    """The loaded kernel of `opcode` on element type `et` (compiled, or loaded from the
    disk cache, on first use)."""
    k = _KERNELS.get((opcode, et))
    if k is None:
        with _LOCK:
            k = _KERNELS.get((opcode, et))
            if k is None:
                k = _load_or_compile(opcode, et)
                _KERNELS[(opcode, et)] = k
    return k


def _load_or_compile(opcode: str, et: str) -> _Kernel:
    from ember.backends.cpu.emit.eager_kernels import arity, entry_name, table_name
    from ember.backends.cpu.jit import disk_cache, llvm_target

    target = llvm_target.target()
    name = entry_name(opcode, et)
    key = disk_cache.make_key(f"{_CACHE_TAG}|{opcode}|{et}", "eager", target.key)
    t0 = time.perf_counter()

    def build() -> bytes:
        from ember.backends.cpu.emit.eager_kernels import emit_module

        llmod = llvm_target.parse_and_verify(emit_module(opcode, et, target.gomp))
        llvm_target.optimize(llmod)
        return llvm_target.emit_object(llmod)

    engine, addr, from_disk = llvm_target.cached_entry(
        key, name, {"opcode": opcode, "element_type": et}, build)
    STATS["kernels_from_disk" if from_disk else "kernels_compiled"] += 1
    STATS["load_s" if from_disk else "compile_s"] += time.perf_counter() - t0
    from ember.backends.cpu.runtime import fastcall

    return _Kernel(engine, (_BINARY if arity(opcode) == 2 else _UNARY)(addr),
                   engine.get_function_address(table_name(opcode, et)), fastcall.trampoline())


def warm(opcodes: Sequence[str] = tuple(sorted(OPCODES)),
         element_types: Sequence[str] = ("f32", "f64")) -> None:
    """Compile (or load) kernels now rather than on first use."""
    for et in element_types:
        for op in opcodes:
            kernel(op, et)


__all__ = ["OPCODES", "STATS", "apply", "covers", "element_type", "kernel", "warm"]
