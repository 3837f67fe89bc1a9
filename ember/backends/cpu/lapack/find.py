"""LAPACK for generated code: SciPy's `cython_lapack` / `cython_blas` capsules by symbol.

Input: the routines Ember's kernels call (`ROUTINES`: potrf, getrf, geqrf, orgqr, syevd,
gesdd, gtsv, geev in s/d; potrf, getrf, geqrf, ungqr, heevd, gesdd, gtsv, geev in c/z; and
BLAS's ?trsm). Output: `register_symbols(llvm)` binds each
`ember_lapack_<routine>` symbol to the capsule's function address (once per process; the
JIT linker calls it before loading object code that names the prefix: jit/llvm_target.py's
SYMBOL_PROVIDERS); `address(routine)` for compile-time workspace queries (`query`).
ABI: SciPy's C wrappers of the Fortran routines: column-major, every argument by pointer,
32-bit integers, CHARACTER arguments as `char *` (no hidden lengths).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np

from ember.backends.cpu.dot.blas_find import capsule_pointer
from ember.backends.cpu.jit.host_symbol import HostSymbol

SYMBOL_PREFIX = "ember_lapack_"
LAPACK = ("potrf", "getrf", "geqrf", "orgqr", "syevd", "gesdd", "gtsv", "geev")
BLAS = ("trsm",)
# the complex routines' names where they differ from the real ones
COMPLEX_NAME = {"syevd": "heevd", "orgqr": "ungqr"}
ROUTINES = tuple([p + r for r in LAPACK + BLAS for p in "sd"]
                 + [p + COMPLEX_NAME.get(r, r) for r in LAPACK + BLAS for p in "cz"])

_LOCK = threading.Lock()
_ADDRESSES: dict[str, int] = {}


def address(routine: str) -> int:
    """The function address of `routine` ('dgetrf', 'strsm'), looked up once."""
    with _LOCK:
        if not _ADDRESSES:
            from scipy.linalg import cython_blas, cython_lapack
            for r in ROUTINES:
                capi = (cython_blas if r[1:] in BLAS else cython_lapack).__pyx_capi__
                _ADDRESSES[r] = capsule_pointer(capi[r])
        return _ADDRESSES[routine]


# binds every `ember_lapack_<routine>` for the JIT linker (once per process)
register_symbols = HostSymbol.addresses(
    lambda: {SYMBOL_PREFIX + r: address(r) for r in ROUTINES}).register


def query(routine: str, *args: Any) -> None:
    """Call `routine` from Python with `args` (ctypes objects passed by pointer): for the
    workspace queries (lwork = -1), which touch no matrix."""
    fn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * len(args)))(address(routine))
    fn(*[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) if not isinstance(a, ctypes.Array)
         else ctypes.cast(a, ctypes.c_void_p) for a in args])


_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def workspace(routine: str, dtype: Any, *dims: int) -> tuple[int, ...]:
    """(lwork, liwork) LAPACK asks for: geqrf (m, n), orgqr (m, n, k), syevd (n),
    gesdd (m, n, jobz as 0 'N' / 1 'S' / 2 'A'), geev (n, jobvl, jobvr as 0/1); liwork 0
    where the routine has none. Complex heevd: (lwork, lrwork, liwork)."""
    i32, c = ctypes.c_int32, ctypes.c_char
    dt = np.dtype(dtype)
    real = ctypes.c_float if dt in (np.float32, np.complex64) else ctypes.c_double
    cplx = dt.kind == "c"
    name = _PREFIX[dt] + (COMPLEX_NAME.get(routine, routine) if cplx else routine)
    work = (real * 4)()  # (a complex workspace size comes back in work[0]'s real part)
    rwork = (real * 2)()
    iwork = (i32 * 2)()
    dummy = (real * 8)()
    info = i32(0)
    minus1 = i32(-1)
    if routine == "syevd" and cplx:
        (n,) = dims
        query(name, c(b"V"), c(b"L"), i32(n), dummy, i32(max(n, 1)), dummy, work, minus1,
              rwork, minus1, iwork, minus1, info)
        if info.value != 0:
            raise RuntimeError(f"LAPACK {name} workspace query failed (info={info.value})")
        return max(int(work[0]), 1), max(int(rwork[0]), 1), max(int(iwork[0]), 1)
    if routine == "geev":
        n, jobvl, jobvr = dims
        jl, jr = (c(b"V" if j else b"N") for j in (jobvl, jobvr))
        ld = i32(max(n, 1))
        if cplx:
            query(name, jl, jr, i32(n), dummy, ld, dummy, dummy, ld, dummy, ld, work, minus1,
                  rwork, info)
        else:
            query(name, jl, jr, i32(n), dummy, ld, dummy, dummy, dummy, ld, dummy, ld, work,
                  minus1, info)
    elif routine == "geqrf":
        m, n = dims
        query(name, i32(m), i32(n), dummy, i32(max(m, 1)), dummy, work, minus1, info)
    elif routine == "orgqr":
        m, n, k = dims
        query(name, i32(m), i32(n), i32(k), dummy, i32(max(m, 1)), dummy, work, minus1, info)
    elif routine == "syevd":
        (n,) = dims
        query(name, c(b"V"), c(b"L"), i32(n), dummy, i32(max(n, 1)), dummy, work, minus1,
              iwork, minus1, info)
        return max(int(work[0]), 1), max(int(iwork[0]), 1)
    elif routine == "gesdd":
        m, n, job = dims
        jobz = b"NSA"[job:job + 1]
        extra = [rwork] if cplx else []  # (rwork is not read by the query)
        query(name, c(jobz), i32(m), i32(n), dummy, i32(max(m, 1)), dummy, dummy,
              i32(max(m, 1)), dummy, i32(max(n, 1)), work, minus1, *extra, iwork, info)
    else:  # pragma: no cover - caller's bug
        raise ValueError(f"no workspace query for {routine}")
    if info.value != 0:
        raise RuntimeError(f"LAPACK {name} workspace query failed (info={info.value})")
    return max(int(work[0]), 1), 0
