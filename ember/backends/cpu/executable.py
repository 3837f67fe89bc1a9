"""The runtime object: one compiled HLO module callable on NumPy arrays.

Input: the JIT'ed entry address, the Schedule, the optimized HLO module and the IR text.
Output: `exe(*arrays)` returns fresh NumPy arrays (a tuple for a tuple-shaped root) after
exactly one foreign call into the entry point with a table of buffer pointers. Data
pointers are read through `__array_interface__` (cheaper than `arr.ctypes`). ctypes
releases the GIL during the call, and all per-call state (table, outputs, scratch) is
local, so an executable may be called from several threads at once.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ember.backends.cpu.schedule import Schedule, Slot
from ember.hlo.ir import Module
from ember.hlo.printer import print_module
from ember.hlo.shape import Shape

_ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _ptr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class Executable:
    """A compiled module. Attributes: `module` (optimized HLO), `kernel_names`, `llvm_ir`
    (optimized IR text), `unoptimized_ir`, `math_functions` (ember.* math helpers used; they
    are inlined away in `llvm_ir`), `libm_calls`
    (C library functions still called per element)."""

    def __init__(self, module: Module, sched: Schedule, address: int, kernel_names: list[str],
                 llvm_ir: str, llvm_module: Any, unoptimized_ir: str = "") -> None:
        self.module = module
        self.kernel_names = list(kernel_names)
        self.llvm_ir = llvm_ir
        self.unoptimized_ir = unoptimized_ir
        self._llvm_module = llvm_module  # owned by the JIT engine; kept for eviction
        self._fn = _ENTRY_TYPE(address)
        self._sched = sched
        self._param_dtypes = [s.dtype for s in sched.params]
        self._param_dims = [s.dimensions for s in sched.params]
        self._out_specs = [(s.dimensions, s.dtype) for s in sched.outputs]
        self._const_ptrs = [_ptr(c) for c in sched.constants]
        self._nslots = sched.slot_count()
        self._table_type = ctypes.c_void_p * self._nslots
        self._root_shape = module.entry.root.shape
        self._copy_outs = sched.copy_outs

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any) -> np.ndarray | tuple:
        if len(args) != len(self._param_dtypes):
            raise TypeError(f"expected {len(self._param_dtypes)} arguments, got {len(args)}")
        arrays = []
        for k, (a, dt, dims) in enumerate(zip(args, self._param_dtypes, self._param_dims)):
            if not isinstance(a, np.ndarray):
                a = np.asarray(a, dtype=dt) if not isinstance(a, np.generic) else np.asarray(a)
            if a.dtype != dt or a.shape != dims:
                raise TypeError(f"argument {k} must be {dt}{list(dims)}, "
                                f"got {a.dtype}{list(a.shape)}")
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            arrays.append(a)
        outs = [np.empty(dims, dt) for dims, dt in self._out_specs]
        scratch = np.empty(self._sched.scratch_bytes, np.uint8) if self._sched.scratch_bytes \
            else None
        table = self._table_type(*[_ptr(a) for a in arrays], *[_ptr(o) for o in outs],
                                 _ptr(scratch) if scratch is not None else None,
                                 *self._const_ptrs)
        self._fn(table)
        for pos, src in self._copy_outs:
            np.copyto(outs[pos], self._slot_array(src, arrays, outs, scratch))
        if not self._root_shape.is_tuple:
            return outs[0]
        it = iter(outs)
        return _unflatten(self._root_shape, it)

    def _slot_array(self, s: Slot, arrays: list[np.ndarray], outs: list[np.ndarray],
                    scratch: np.ndarray | None) -> np.ndarray:
        if s.kind == "param":
            return arrays[s.index]
        if s.kind == "out":
            return outs[s.index]
        if s.kind == "const":
            return self._sched.constants[s.index].reshape(s.shape.dimensions)
        n = s.shape.size * s.shape.dtype.itemsize
        assert scratch is not None
        return scratch[s.index:s.index + n].view(s.shape.dtype).reshape(s.shape.dimensions)

    # -- looking inside ---------------------------------------------------------------------------

    def as_text(self) -> str:
        """The optimized HLO, fusions as XLA prints them."""
        return print_module(self.module, mode="display")

    def assembly(self) -> str:
        from ember.backends.cpu.llvm_target import assembly

        return assembly(self.llvm_ir)

    @property
    def math_functions(self) -> list[str]:
        import re

        return sorted(set(re.findall(r"@\"?(ember\.[a-z0-9]+(?:\.precise)?\.f(?:32|64))",
                                     self.unoptimized_ir)))

    @property
    def libm_calls(self) -> list[str]:
        import re

        from ember.backends.cpu.mathlib.libm import LIBM_BINARY, LIBM_UNARY

        names = set(LIBM_UNARY.values()) | set(LIBM_BINARY.values()) | {"sin", "cos", "exp",
                                                                         "log", "erf"}
        found = set(re.findall(r"call[^@]*@\"?([a-z0-9]+)\"?\(", self.llvm_ir))
        return sorted(found & names)

    def __repr__(self) -> str:
        return f"<cpu.Executable {self.module.name}: {len(self.kernel_names)} kernels>"


def _unflatten(shape: Shape, it: Any) -> Any:
    if shape.is_tuple:
        return tuple(_unflatten(s, it) for s in shape.tuple_shapes)
    return next(it)
