"""Finding BLAS in the running process: the OpenBLAS NumPy loaded, else SciPy's capsules.

Input: the process (its loaded shared objects, read from /proc/self/maps) and the
environment variable `EMBER_BLAS`:
  auto (default)  NumPy's already loaded BLAS, else SciPy's `cython_blas` capsules;
  numpy / scipy   only that source; none / off   no BLAS (the adapter's loops run).
Output: `find()` returns a `BlasFunctions` record or None: the addresses of sgemm, dgemm,
sgemv, dgemv, cgemm and zgemm, the ABI they follow, and optionally the library's
thread-count getter and setter. Nothing is loaded that was not loaded already (NumPy's
OpenBLAS is opened with RTLD_NOLOAD), and SciPy is imported only here, i.e. when the first
product is linked.

ABIs:
  "cblas"    cblas_?gemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
             ldc) with CBLAS enums as C ints and dimensions as `int_bits`-wide integers;
  "fortran"  ?gemm_(&transa, &transb, &m, &n, &k, &alpha, a, &lda, ...) column-major, every
             scalar by reference (SciPy's `cython_blas`: 32-bit ints).
Symbol names vary with the build: `cblas_sgemm`, `scipy_cblas_sgemm64_` (NumPy 2's ILP64
OpenBLAS), `cblas_sgemm64_`, ...; a `64_`/`_64` suffix means 64-bit integers, otherwise the
library's `openblas_get_config()` says USE64BITINT or not.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field

from ember.config import config

_PREFIXES = ("", "scipy_")
_SUFFIXES = ("64_", "_64", "")  # ILP64 first: NumPy 2 ships its OpenBLAS that way
_ROUTINES = ("sgemm", "dgemm", "sgemv", "dgemv", "cgemm", "zgemm")


@dataclass
class BlasFunctions:
    abi: str  # "cblas" | "fortran"
    int_bits: int  # 32 or 64
    routines: dict[str, int]  # "sgemm" -> address, for every name in _ROUTINES
    get_threads: int = 0  # int (*)(void), 0 when unknown
    set_threads: int = 0  # void (*)(int), 0 when unknown
    source: str = ""  # where the functions came from, for messages and tests
    names: dict[str, str] = field(default_factory=dict)  # routine -> symbol name


def mode() -> str:
    m = config.ember_blas
    return "none" if m in ("off", "0", "no") else m


def find() -> BlasFunctions | None:
    m = mode()
    if m == "none":
        return None
    if m in ("auto", "numpy"):
        found = _from_loaded_libraries()
        if found is not None or m == "numpy":
            return found
    return _from_scipy()


# -- NumPy's OpenBLAS (any BLAS already mapped into the process) ------------------------------


def _loaded_blas_paths() -> list[str]:
    """Shared objects mapped into this process whose file name says BLAS (or MKL)."""
    import numpy  # noqa: F401  (NumPy loads its BLAS when it is imported)

    paths: list[str] = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                name = os.path.basename(path).lower()
                if ("blas" in name or "mkl_rt" in name) and ".so" in name and path not in paths:
                    paths.append(path)
    except OSError:  # not Linux: nothing to scan
        return []
    return paths


def _open_loaded(path: str) -> ctypes.CDLL | None:
    flags = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0) | os.RTLD_NOW
    try:
        return ctypes.CDLL(path, mode=flags)
    except OSError:
        return None


def _address(lib: ctypes.CDLL, name: str) -> int:
    try:
        return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0
    except AttributeError:
        return 0


def _lookup(lib: ctypes.CDLL, base: str, suffixes: tuple[str, ...] = _SUFFIXES
            ) -> tuple[str, int] | None:
    for prefix in _PREFIXES:
        for suffix in suffixes:
            name = f"{prefix}{base}{suffix}"
            addr = _address(lib, name)
            if addr:
                return name, addr
    return None


def _uses_64bit_ints(lib: ctypes.CDLL, symbol: str) -> bool:
    if symbol.endswith(("64_", "_64")):
        return True
    found = _lookup(lib, "openblas_get_config")
    if found is None:
        return False
    get_config = ctypes.CFUNCTYPE(ctypes.c_char_p)(found[1])
    return b"USE64BITINT" in (get_config() or b"")


def _thread_control(lib: ctypes.CDLL) -> tuple[int, int]:
    get = _lookup(lib, "openblas_get_num_threads")
    put = _lookup(lib, "openblas_set_num_threads") or _lookup(lib, "goto_set_num_threads")
    if get is None or put is None:
        return 0, 0
    return get[1], put[1]


def _from_library(lib: ctypes.CDLL, source: str) -> BlasFunctions | None:
    routines: dict[str, int] = {}
    names: dict[str, str] = {}
    for r in _ROUTINES:
        found = _lookup(lib, f"cblas_{r}")
        if found is None:
            return None
        names[r], routines[r] = found
    bits = 64 if _uses_64bit_ints(lib, names["sgemm"]) else 32
    get, put = _thread_control(lib)
    return BlasFunctions("cblas", bits, routines, get, put, source, names)


def _from_loaded_libraries() -> BlasFunctions | None:
    for path in _loaded_blas_paths():
        lib = _open_loaded(path)
        if lib is not None:
            found = _from_library(lib, path)
            if found is not None:
                return found
    return None


# -- SciPy's cython_blas capsules ------------------------------------------------------------


def capsule_pointer(capsule: object) -> int:
    """The C function pointer a Cython `__pyx_capi__` capsule holds (0 if none)."""
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule)) or 0


def _library_containing(address: int) -> str | None:
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if lo <= address < hi and len(parts) == 6:
                    return parts[5].strip()
    except OSError:
        return None
    return None


def _from_scipy() -> BlasFunctions | None:
    try:
        from scipy.linalg import cython_blas
    except ImportError:
        return None
    capi = cython_blas.__pyx_capi__
    routines = {r: capsule_pointer(capi[r]) for r in _ROUTINES}
    if not all(routines.values()):
        return None
    get = put = 0
    path = _library_containing(routines["sgemm"])
    if path is not None:
        lib = _open_loaded(path)
        if lib is not None:
            get, put = _thread_control(lib)
    # cython_blas declares every integer argument `int *`: 32-bit
    return BlasFunctions("fortran", 32, routines, get, put, f"scipy.linalg.cython_blas "
                         f"({path or 'unknown library'})", {r: r for r in _ROUTINES})
