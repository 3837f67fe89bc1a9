"""The runtime object: one compiled HLO module callable on NumPy arrays.

Input: the loaded code (its engine and entry address), the RuntimeSpec, the optimized HLO
module (or a function recomputing it) and the IR text.
Output: `exe(*arrays)` returns fresh NumPy arrays (a tuple for a tuple-shaped root) after
exactly one foreign call into the entry point with a table of buffer pointers. Data
pointers are read through `__array_interface__` (cheaper than `arr.ctypes`). ctypes
releases the GIL during the call, and all per-call state (table, outputs, scratch) is
local, so an executable may be called from several threads at once. Outputs and the scratch
block come from the caching allocator (`allocator.py`), so large results recycle memory the
user dropped instead of faulting fresh pages in.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.backends.cpu.allocator import ALLOCATOR
from ember.backends.cpu.runtime_spec import RuntimeSpec, dtype_of
from ember.backends.cpu.threads import NUM_THREADS_ADDRESS
from ember.hlo.ir import Module
from ember.hlo.printer import print_module

_ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _ptr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class Executable:
    """A compiled module. Attributes: `module` (optimized HLO; recomputed on first access
    for executables loaded from the disk cache), `kernel_names`, `parallel_kernels`,
    `llvm_ir` (optimized IR text), `unoptimized_ir`, `math_functions` (ember.* math helpers
    used; they are inlined away in `llvm_ir`), `libm_calls` (C library functions still
    called per element), `from_disk`."""

    def __init__(self, spec: RuntimeSpec, engine: Any, address: int, kernel_names: list[str],
                 llvm_ir: str, unoptimized_ir: str = "", *,
                 module: Module | Callable[[], Module], parallel_kernels: list[str] = (),
                 from_disk: bool = False) -> None:
        self._module = module
        self.kernel_names = list(kernel_names)
        self.parallel_kernels = list(parallel_kernels)
        self.llvm_ir = llvm_ir
        self.unoptimized_ir = unoptimized_ir
        self.from_disk = from_disk
        self._engine = engine  # owns the code: disposed (code freed) with this executable
        self._fn = _ENTRY_TYPE(address)
        self._spec = spec
        self._param_dtypes = [dtype_of(p) for p in spec.params]
        self._param_dims = [p[1] for p in spec.params]
        self._out_specs = [(o[1], dtype_of(o)) for o in spec.outputs]
        self._const_ptrs = [_ptr(c) for c in spec.constants]
        # [params..., outputs..., scratch, constants..., &thread count]
        self._table_type = ctypes.c_void_p * (spec.slot_count + 1)
        self._copy_outs = spec.copy_outs

    @property
    def module(self) -> Module:
        if callable(self._module):
            self._module = self._module()
        return self._module

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
        outs = [ALLOCATOR.empty(dims, dt) for dims, dt in self._out_specs]
        nscratch = self._spec.scratch_bytes
        block = ALLOCATOR.take(nscratch) if nscratch else None
        if block is not None:
            scratch = np.ndarray((nscratch,), np.uint8, buffer=block.arr, offset=block.off)
        else:
            scratch = np.empty(nscratch, np.uint8) if nscratch else None
        table = self._table_type(*[_ptr(a) for a in arrays], *[_ptr(o) for o in outs],
                                 _ptr(scratch) if scratch is not None else None,
                                 *self._const_ptrs, NUM_THREADS_ADDRESS)
        self._fn(table)
        for pos, kind, index, shape in self._copy_outs:
            np.copyto(outs[pos], self._slot_array(kind, index, shape, arrays, outs, scratch))
        if block is not None:
            del scratch
            ALLOCATOR.give_back(block)
        root = self._spec.root
        if root is None:
            return outs[0]
        return _unflatten(root, iter(outs))

    def _slot_array(self, kind: str, index: int, shape: tuple[str, tuple[int, ...]],
                    arrays: list[np.ndarray], outs: list[np.ndarray],
                    scratch: np.ndarray | None) -> np.ndarray:
        if kind == "param":
            return arrays[index]
        if kind == "out":
            return outs[index]
        dims = shape[1]
        if kind == "const":
            return self._spec.constants[index].reshape(dims)
        dt = dtype_of(shape)
        n = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
        assert scratch is not None
        return scratch[index:index + n].view(dt).reshape(dims)

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


def _unflatten(tree: Any, it: Any) -> Any:
    if tree is not None:
        return tuple(_unflatten(t, it) for t in tree)
    return next(it)
