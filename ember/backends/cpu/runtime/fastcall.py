"""A native trampoline that passes NumPy arrays to an executable's entry point in one call.

Why: an entry point takes a table of buffer pointers. Building that table from Python costs
a ctypes array (~1 us) plus one data-pointer read per array (`__array_interface__`, ~1-2 us
each on this host), and every ctypes argument costs a conversion object of its own.
Instead, Python makes one tuple `(desc, a_0, ..., a_{n-1})` and passes it to a builtin
function: the trampoline is a METH_O C function of CPython's own calling convention (a
`PyCFunction` made from the JIT's code, ~40 ns a call; a ctypes call with one argument
costs ~230 ns here, a fifth of a tiny jitted call). It reads the tuple's items and each
array's data pointer out of the objects themselves, fills the table on its own stack,
releases the GIL around the entry (as ctypes did: long kernels must not hold it, and
kernels may call back into Python from pool threads), and marks the outputs read-only:

    PyObject *ember_fastcall(PyObject *self, PyTupleObject *t):
        d = data(t[0])                                   # the descriptor (a uint64 array)
        table[k]        = data(t[1 + k])                  k < n       (params, outputs, ...)
        table[n + j]    = d[4 + j]                        j < d[1]    (constant slots)
        s = PyEval_SaveThread(); d[0](table); PyEval_RestoreThread(s)   # the entry point
        flags(t[1 + k]) &= ~NPY_ARRAY_WRITEABLE           d[2] <= k < d[3] (fresh outputs)
        return Py_NewRef(Py_None)

`desc` is a per-executable, read-only uint64 array `[entry, ntail, ro_begin, ro_end,
tail...]`; its tail holds the slots after the arrays (scratch when none is passed, constant
buffers, the thread-count address). One trampoline serves every executable and arity; it is
compiled once per process, or loaded from the disk cache like any executable.

Input: nothing (`trampoline()`), or an entry address and tail (`descriptor`). Output: a
builtin function `tramp(tuple)`, or None where the object layouts are not the ones probed
below or CPython's C API cannot be bound (callers then build the table in Python).
Invariants:
- The layouts read are CPython's `PyTupleObject` (`ob_size` after the object header, items
  after it) and NumPy's `PyArrayObject_fields` (`data` right after the header, `flags` six
  pointer-sized fields later): what `PyTuple_GET_ITEM`, `PyArray_DATA` and
  `PyArray_CLEARFLAGS` compile into every extension, so part of both ABIs. They are checked
  once on live objects (`layout_ok`), writing flags included, before any trampoline is made.
- The call holds a reference to the tuple (so to every array) while it runs; only data
  pointers are read while the GIL is released. Flags are cleared, the GIL held again, only
  on arrays made for this call, which no other thread can see yet.
- The C API functions it calls (PyEval_SaveThread, PyEval_RestoreThread, Py_IncRef) and
  Py_None are bound by name for the JIT linker in each process (`_bind_python_api`), so
  the disk-cached object code stays valid in a new process.
- Nothing else in an object is written; the table lives on the calling thread's stack, so
  one trampoline serves any number of threads at once.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from ember.backends.cpu.jit import disk_cache, llvm_target

ENTRY = "ember_fastcall"
HEADER = object.__basicsize__  # PyObject_HEAD: reference count + type pointer (16 bytes)
TUPLE_SIZE = HEADER  # PyTupleObject.ob_size
TUPLE_ITEMS = HEADER + 8  # PyTupleObject.ob_item[0]
DATA_OFFSET = HEADER  # PyArrayObject_fields.data
FLAGS_OFFSET = HEADER + 6 * 8  # .flags, after data, nd (padded), dimensions, strides, base, descr
WRITEABLE = 0x0400  # NPY_ARRAY_WRITEABLE
DESC_HEAD = 4  # entry, ntail, ro_begin, ro_end
NONE_SYMBOL = "ember_py_none"  # Py_None's address, bound per process
PYTHON_API = ("PyEval_SaveThread", "PyEval_RestoreThread", "Py_IncRef")
METH_O = 0x0008  # PyMethodDef.ml_flags: one positional argument, passed as is


class _MethodDef(ctypes.Structure):
    """CPython's PyMethodDef (stable ABI)."""

    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]

_LOCK = threading.Lock()
_TRAMPOLINE: list[Any] = []  # [builtin, engine, method def]: made once, kept for the process
_LAYOUT_OK: bool | None = None
STATS = {"trampolines_compiled": 0, "trampolines_loaded": 0}


def layout_ok() -> bool:
    """Whether tuples and NumPy arrays are laid out here as the trampoline reads them."""
    global _LAYOUT_OK
    if _LAYOUT_OK is None:
        _LAYOUT_OK = _probe()
    return _LAYOUT_OK


def _probe() -> bool:
    def word(addr: int) -> int | None:
        return ctypes.c_void_p.from_address(addr).value

    arrays = [np.empty(5, np.float32), np.zeros((2, 3), np.int64)[1:],
              np.ones(7, np.uint8)[::2], np.arange(3.0)]
    arrays[3].setflags(write=False)
    t = tuple(arrays)
    if ctypes.c_ssize_t.from_address(id(t) + TUPLE_SIZE).value != len(t):
        return False
    if any(word(id(t) + TUPLE_ITEMS + 8 * k) != id(a) for k, a in enumerate(arrays)):
        return False
    for a in arrays:
        if word(id(a) + DATA_OFFSET) != a.__array_interface__["data"][0]:
            return False
        if ctypes.c_int32.from_address(id(a) + FLAGS_OFFSET).value != a.flags.num:
            return False
    fresh = np.empty(3)
    flags = ctypes.c_int32.from_address(id(fresh) + FLAGS_OFFSET)
    if not fresh.flags.writeable or not flags.value & WRITEABLE:
        return False
    flags.value &= ~WRITEABLE
    return not fresh.flags.writeable and fresh.flags.c_contiguous


def _ir() -> str:
    """The trampoline as LLVM IR text (opaque pointers); see the module docstring."""
    return f"""declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare ptr @PyEval_SaveThread()
declare void @PyEval_RestoreThread(ptr)
declare void @Py_IncRef(ptr)
@{NONE_SYMBOL} = external global i8

define ptr @{ENTRY}(ptr %self, ptr %t) {{
entry:
  %size.p = getelementptr i8, ptr %t, i64 {TUPLE_SIZE}
  %size = load i64, ptr %size.p
  %items = getelementptr i8, ptr %t, i64 {TUPLE_ITEMS}
  %desc.obj = load ptr, ptr %items
  %desc.p = getelementptr i8, ptr %desc.obj, i64 {DATA_OFFSET}
  %desc = load ptr, ptr %desc.p
  %callee = load ptr, ptr %desc
  %ntail.p = getelementptr i64, ptr %desc, i64 1
  %ntail = load i64, ptr %ntail.p
  %ro.begin.p = getelementptr i64, ptr %desc, i64 2
  %ro.begin = load i64, ptr %ro.begin.p
  %ro.end.p = getelementptr i64, ptr %desc, i64 3
  %ro.end = load i64, ptr %ro.end.p
  %n = sub i64 %size, 1
  %nslots = add i64 %n, %ntail
  %table = alloca ptr, i64 %nslots, align 16
  %objs = getelementptr ptr, ptr %items, i64 1
  br label %fill.cond

fill.cond:                          ; table[k] = data(objs[k])
  %k = phi i64 [ 0, %entry ], [ %k.next, %fill.body ]
  %fill.more = icmp ult i64 %k, %n
  br i1 %fill.more, label %fill.body, label %call

fill.body:
  %obj.p = getelementptr ptr, ptr %objs, i64 %k
  %obj = load ptr, ptr %obj.p
  %data.p = getelementptr i8, ptr %obj, i64 {DATA_OFFSET}
  %data = load ptr, ptr %data.p
  %slot = getelementptr ptr, ptr %table, i64 %k
  store ptr %data, ptr %slot
  %k.next = add i64 %k, 1
  br label %fill.cond

call:                               ; table[n:] = desc tail; entry(table)
  %tail.src = getelementptr i64, ptr %desc, i64 {DESC_HEAD}
  %tail.dst = getelementptr ptr, ptr %table, i64 %n
  %tail.bytes = shl i64 %ntail, 3
  call void @llvm.memcpy.p0.p0.i64(ptr %tail.dst, ptr %tail.src, i64 %tail.bytes, i1 false)
  %thread = call ptr @PyEval_SaveThread()
  call void %callee(ptr %table)
  call void @PyEval_RestoreThread(ptr %thread)
  br label %ro.cond

ro.cond:                            ; flags(objs[j]) &= ~WRITEABLE for fresh outputs
  %j = phi i64 [ %ro.begin, %call ], [ %j.next, %ro.body ]
  %ro.more = icmp ult i64 %j, %ro.end
  br i1 %ro.more, label %ro.body, label %done

ro.body:
  %out.p = getelementptr ptr, ptr %objs, i64 %j
  %out = load ptr, ptr %out.p
  %flags.p = getelementptr i8, ptr %out, i64 {FLAGS_OFFSET}
  %flags = load i32, ptr %flags.p
  %flags.ro = and i32 %flags, {~WRITEABLE}
  store i32 %flags.ro, ptr %flags.p
  %j.next = add i64 %j, 1
  br label %ro.cond

done:
  call void @Py_IncRef(ptr @{NONE_SYMBOL})
  ret ptr @{NONE_SYMBOL}
}}
"""


def trampoline(build: bool = True) -> Any | None:
    """The builtin function `tramp(tuple)` (loaded or compiled on first use), or None
    where the object layouts differ from the probed ones (or, with `build=False`, while
    no call has made it yet)."""
    global _LAYOUT_OK
    if _TRAMPOLINE:
        return _TRAMPOLINE[0]
    if not build or not layout_ok():
        return None
    with _LOCK:
        if not _TRAMPOLINE:
            try:
                _bind_python_api()
                engine, address = _load_or_compile()
                tramp, method = _builtin(address)
            except (RuntimeError, AttributeError, OSError, llvm_target.CpuCompileError):
                _LAYOUT_OK = False  # no trampoline on this host: callers use the table path
                return None
            _TRAMPOLINE.extend([tramp, engine, method])  # the engine owns the code
    return _TRAMPOLINE[0]


def _bind_python_api() -> None:
    """Give the JIT linker the addresses of the C API functions the trampoline calls and
    of Py_None (this process's: the object code names them only by symbol)."""
    llvm = llvm_target.target().llvm
    for name in PYTHON_API:
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
    llvm.add_symbol(NONE_SYMBOL, id(None))


def _builtin(address: int) -> tuple[Any, _MethodDef]:
    """A builtin function object calling the METH_O C function at `address`, and the
    method definition it points to (which must live as long as the function)."""
    method = _MethodDef(b"ember_fastcall", address, METH_O, None)
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p)(("PyCFunction_NewEx", ctypes.pythonapi))
    return new(ctypes.addressof(method), None, None), method


def _load_or_compile() -> tuple[Any, int]:
    """(engine, address) of the trampoline: from the disk cache when a valid entry is there
    (a warm process generates no code), else compiled and stored. The IR is already minimal,
    so it goes straight to code generation without the O3 pipeline."""
    target = llvm_target.target()
    text = _ir()
    key = disk_cache.make_key(text, "fastcall", target.key)
    engine, address, from_disk = llvm_target.cached_entry(
        key, ENTRY, {"entry": ENTRY, "kind": "fastcall"},
        lambda: llvm_target.emit_object(llvm_target.parse_and_verify(text)))
    STATS["trampolines_loaded" if from_disk else "trampolines_compiled"] += 1
    return engine, address


def descriptor(entry: int, tail: list[int | None], ro_begin: int = 0, ro_end: int = 0
               ) -> np.ndarray:
    """The read-only descriptor `[entry, ntail, ro_begin, ro_end, tail...]` (uint64): the
    first item of every call's tuple. Objects `ro_begin <= k < ro_end` (0 = the first after
    the descriptor) are made read-only after the call."""
    desc = np.array([entry, len(tail), ro_begin, ro_end, *(p or 0 for p in tail)],
                    dtype=np.uint64)
    desc.setflags(write=False)
    return desc
