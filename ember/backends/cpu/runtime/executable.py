"""The runtime object: one compiled HLO module callable on NumPy arrays.

Input: the loaded code (its engine and entry address), the RuntimeSpec, the optimized HLO
module (or a function recomputing it) and the IR texts (or functions decoding them: a disk-
cache hit decodes neither the module nor the IR until someone looks).
Output: `exe(*arrays)` returns fresh NumPy arrays (a tuple for a tuple-shaped root) after
exactly one foreign call into the entry point with a table of buffer pointers. Data
pointers are read through `__array_interface__` (cheaper than `arr.ctypes`).
`exe.fast_runner(bound)` is the path `ember.jit` takes on a cached call: a `FastRunner`
`run(vals) -> [outputs]` for arguments the caller has already checked, which allocates the
outputs and makes one call through a native trampoline (`fastcall.py`) that reads each
array's data pointer itself, so no pointer table or data pointer is built in Python.
Both calls release the GIL while the entry runs (ctypes; the trampoline itself), and all
per-call state (table, outputs, scratch) is local, so an executable may be called from
several threads at once. Outputs and the scratch block come from the caching allocator
(`allocator.py`), so large results recycle memory the user dropped instead of faulting
fresh pages in; small ones are plain `np.empty`.
"""

from __future__ import annotations

import ctypes
import math
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ember.backends.cpu.plan.runtime_spec import RuntimeSpec, dtype_of
from ember.backends.cpu.runtime.allocator import ALLOCATOR, MIN_BYTES
from ember.backends.cpu.runtime.threads import NUM_THREADS_ADDRESS
from ember.hlo.ir import Module
from ember.hlo.printer import print_module

if TYPE_CHECKING:  # (imported on use: ~1 ms of a warm process's first call otherwise)
    from ember.memory_stats import CompiledMemoryStats

# The trampoline's module, imported by the first fast_runner that may build one: until
# then no trampoline exists, so a first call (ready_only) need not import it.
_FASTCALL = "ember.backends.cpu.runtime.fastcall"

_ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _ptr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class Executable:
    """A compiled module. Attributes: `module` (optimized HLO; recomputed on first access
    for executables loaded from the disk cache), `kernel_names`, `parallel_kernels`,
    `shared_kernels` (kernel -> the kernel whose LLVM function it runs, for kernels with
    one body: emitter.py), `llvm_ir` (optimized IR text), `unoptimized_ir`,
    `math_functions` (ember.* math helpers
    used; they are inlined away in `llvm_ir`), `libm_calls` (C library functions still
    called per element), `from_disk`."""

    def __init__(self, spec: RuntimeSpec, engine: Any, address: int, kernel_names: list[str],
                 llvm_ir: str | Callable[[], str], unoptimized_ir: str | Callable[[], str] = "",
                 *, module: Module | Callable[[], Module], parallel_kernels: list[str] = (),
                 from_disk: bool = False, precise: Any = None,
                 shared_kernels: dict[str, str] | None = None) -> None:
        self._module = module
        # kernels' precise copies, compiled on first use (lazy_precise.LazyPrecise): held
        # here, as the engine is, for as long as the code may call them
        self._precise = precise
        self.kernel_names = list(kernel_names)
        self.parallel_kernels = list(parallel_kernels)
        self.shared_kernels = dict(shared_kernels or {})
        self._llvm_ir = llvm_ir
        self._unoptimized_ir = unoptimized_ir
        self.from_disk = from_disk
        self._engine = engine  # owns the code: disposed (code freed) with this executable
        self._address = address
        self._fn = _ENTRY_TYPE(address)
        self._spec = spec
        self._param_dtypes = [dtype_of(p) for p in spec.params]
        self._param_dims = [p[1] for p in spec.params]
        self._out_specs = [(o[1], dtype_of(o)) for o in spec.outputs]
        self._const_ptrs = [_ptr(c) for c in spec.constants]
        # [params..., outputs..., scratch, constants..., &thread count]
        self._table_type = ctypes.c_void_p * (spec.slot_count + 1)
        self._copy_outs = spec.copy_outs
        self._aliases = dict(spec.aliases)  # output position -> donated parameter

    @property
    def module(self) -> Module:
        if callable(self._module):
            self._module = self._module()
        return self._module

    @property
    def llvm_ir(self) -> str:
        if callable(self._llvm_ir):
            self._llvm_ir = self._llvm_ir()
        return self._llvm_ir

    @property
    def unoptimized_ir(self) -> str:
        if callable(self._unoptimized_ir):
            self._unoptimized_ir = self._unoptimized_ir()
        return self._unoptimized_ir

    # -- calling ------------------------------------------------------------------------------

    def __call__(self, *args: Any, owned: frozenset[int] | tuple = ()) -> np.ndarray | tuple:
        """`owned`: positions of arguments whose memory the caller gives up (donated
        arrays nothing else references); an output aliased to such a parameter is written
        into it. Other aliased parameters are copied first, so a caller's array is never
        written."""
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
        outs = _outputs_and_aliases(self, arrays, owned, ALLOCATOR.empty)
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
        if self._precise is not None:
            self._precise.raise_if_failed()
        for pos, kind, index, shape in self._copy_outs:
            np.copyto(outs[pos], self._slot_array(kind, index, shape, arrays, outs, scratch))
        if block is not None:
            del scratch
            ALLOCATOR.give_back(block)
        root = self._spec.root
        if root is None:
            return outs[0]
        return _unflatten(root, iter(outs))

    def fast_runner(self, bound: Sequence[np.ndarray] = (), *, ready_only: bool = False
                    ) -> FastRunner | None:
        """The call path for pre-checked arguments (see FastRunner), or None where there is
        no trampoline (unexpected object layouts; with `ready_only`, none made yet in this
        process) or the root is a nested tuple. `bound` are the values of the last
        parameters (a jitted function's hidden constants), fixed for every call."""
        ndyn = len(self._param_dtypes) - len(bound)
        if ndyn < 0 or (self._spec.root is not None
                        and any(t is not None for t in self._spec.root)):
            return None
        fixed = []
        for a, dt, dims in zip(bound, self._param_dtypes[ndyn:], self._param_dims[ndyn:]):
            a = np.ascontiguousarray(a, dtype=dt)
            if a.shape != dims:
                return None
            fixed.append(a)
        if ready_only and _FASTCALL not in sys.modules:
            return None
        from ember.backends.cpu.runtime import fastcall

        tramp = fastcall.trampoline(build=not ready_only)
        if tramp is None:
            return None
        runner = FastRunner(self, tramp, fixed)
        # the descriptor must describe this executable's whole table (+1: &thread count)
        return runner if runner.nslots == self._spec.slot_count + 1 else None

    def _slot_array(self, kind: str, index: int, shape: tuple[str, tuple[int, ...]],
                    arrays: list[np.ndarray], outs: list[np.ndarray],
                    scratch: np.ndarray | None) -> np.ndarray:
        dims = shape[1]
        if kind == "param":  # (a view may see it with other dimensions: schedule.is_view)
            return arrays[index].reshape(dims)
        if kind == "out":
            return outs[index].reshape(dims)
        if kind == "const":
            return self._spec.constants[index].reshape(dims)
        dt = dtype_of(shape)
        n = int(np.prod(dims, dtype=np.int64)) * dt.itemsize
        if n == 0:
            return np.empty(dims, dt)  # an empty temp: there may be no scratch block at all
        assert scratch is not None
        return scratch[index:index + n].view(dt).reshape(dims)

    # -- looking inside ---------------------------------------------------------------------------

    def as_text(self) -> str:
        """The optimized HLO, fusions as XLA prints them."""
        return print_module(self.module, mode="display")

    def memory_analysis(self) -> CompiledMemoryStats:
        """Bytes of arguments, outputs, scratch temporaries, aliases and object code."""
        from ember.memory_stats import CompiledMemoryStats

        spec = self._spec

        def nbytes(s: tuple[str, tuple[int, ...]]) -> int:
            return int(np.prod(s[1], dtype=np.int64)) * dtype_of(s).itemsize

        return CompiledMemoryStats(
            generated_code_size_in_bytes=spec.code_bytes,
            argument_size_in_bytes=sum(nbytes(p) for p in spec.params),
            output_size_in_bytes=sum(nbytes(o) for o in spec.outputs),
            temp_size_in_bytes=spec.scratch_bytes,
            alias_size_in_bytes=sum(nbytes(spec.outputs[pos]) for pos, _ in spec.aliases),
            buffer_assignment=spec.buffer_assignment)

    def assembly(self) -> str:
        from ember.backends.cpu.jit.llvm_target import assembly

        return assembly(self.llvm_ir)

    def kernels(self, module: Module | None = None) -> list[Any]:
        """The kernels in the order the entry point runs them, one `KernelInfo` each
        (kernel_records.py: HLO, source lines, cost, LLVM IR, assembly on first look).
        `module`: the optimized module whose names and source lines to report (default this
        executable's own, which after a compile-cache hit is another program's)."""
        from ember.backends.cpu.kernel_records import kernels

        return kernels(self, module)

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


def _outputs_and_aliases(exe: Executable, params: list[np.ndarray], owned: Any,
                         make: Callable) -> list[np.ndarray]:
    """Fresh output arrays, except outputs aliased to a donated parameter (RuntimeSpec
    `aliases`): those are the parameter's buffer, which `params` then holds too: the
    caller's own array where `owned` says it was given up, else a private copy of it."""
    aliased = exe._aliases
    if not aliased:
        return [make(dims, dt) for dims, dt in exe._out_specs]
    outs = []
    for pos, (dims, dt) in enumerate(exe._out_specs):
        p = aliased.get(pos)
        if p is None:
            outs.append(make(dims, dt))
            continue
        buf = params[p]
        if p not in owned or not buf.flags.c_contiguous:
            buf = ALLOCATOR.empty(dims, dt)
            np.copyto(buf, params[p])
            params[p] = buf
        outs.append(buf)
    return outs


def _unflatten(tree: Any, it: Any) -> Any:
    if tree is not None:
        return tuple(_unflatten(t, it) for t in tree)
    return next(it)


class FastRunner:
    """`runner(vals) -> [outputs]`: one call through the trampoline for arguments the caller
    has already checked: `vals` are exactly the dynamic parameters, each a C-contiguous
    ndarray of the parameter's dtype and shape (`ember.jit`'s fast path checks that).
    Outputs come back fresh and read-only, in the root's flattened order.

    `direct` says a whole call is just
        outs = [make(dims, dtype) for make, dims, dtype in runner.outputs]
        runner.tramp((runner.desc, *vals, *runner.fixed, *outs))
        if runner.precise is not None: runner.precise.raise_if_failed()
    (no scratch block, no copies after the call; the trampoline makes the outputs
    read-only), so a caller may inline it, keeping the tuple and this runner alive across
    the call.
    """

    __slots__ = ("exe", "tramp", "desc", "fixed", "outputs", "nscratch", "direct", "nslots",
                 "precise")

    def __init__(self, exe: Executable, tramp: Any, fixed: list[np.ndarray]):
        self.exe = exe  # its engine owns the code the descriptor points to
        self.tramp = tramp
        self.precise = exe._precise  # lazily compiled precise copies (None: no such kernel)
        self.fixed = tuple(fixed)
        # small outputs straight from np.empty (no pool below MIN_BYTES: see allocator.py)
        self.outputs = [(np.empty if math.prod(dims) * dt.itemsize < MIN_BYTES
                         else ALLOCATOR.empty, dims, dt)
                        for dims, dt in exe._out_specs]
        self.nscratch = nscratch = exe._spec.scratch_bytes
        self.direct = not nscratch and not exe._copy_outs and not exe._spec.aliases
        # table: [params..., outputs..., scratch, constants..., &thread count]; the arrays
        # passed cover params and outputs (and the scratch block when there is one)
        nparams, nout = len(exe._param_dtypes), len(self.outputs)
        tail = ([] if nscratch else [None]) + exe._const_ptrs + [NUM_THREADS_ADDRESS]
        ro = (nparams, nparams + nout) if self.direct else (0, 0)
        from ember.backends.cpu.runtime import fastcall  # (loaded: fast_runner made the trampoline)

        self.desc = fastcall.descriptor(exe._address, tail, *ro)
        self.nslots = nparams + nout + (1 if nscratch else 0) + len(tail)

    def __call__(self, vals: list[np.ndarray], owned: Any = ()) -> list[np.ndarray]:
        """`owned`: as Executable's (donated arguments the caller gives up)."""
        if self.exe._aliases:
            vals = list(vals)
            outs = _outputs_and_aliases(self.exe, vals, owned, ALLOCATOR.empty)
        else:
            outs = [make(dims, dt) for make, dims, dt in self.outputs]
        nscratch = self.nscratch
        block = scratch = None
        if nscratch:
            block = ALLOCATOR.take(nscratch)
            scratch = (np.ndarray((nscratch,), np.uint8, buffer=block.arr, offset=block.off)
                       if block is not None else np.empty(nscratch, np.uint8))
            objs = (self.desc, *vals, *self.fixed, *outs, scratch)
        else:
            objs = (self.desc, *vals, *self.fixed, *outs)
        self.tramp(objs)
        if self.precise is not None:
            self.precise.raise_if_failed()
        exe = self.exe
        if exe._copy_outs:
            arrays = [*vals, *self.fixed]
            for pos, kind, index, shape in exe._copy_outs:
                np.copyto(outs[pos], exe._slot_array(kind, index, shape, arrays, outs, scratch))
        if not self.direct:
            for o in outs:
                o.setflags(write=False)
        del objs
        if block is not None:
            del scratch
            ALLOCATOR.give_back(block)
        return outs
