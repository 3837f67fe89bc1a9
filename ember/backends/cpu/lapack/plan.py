"""Which instructions the CPU serves through LAPACK, and the scratch each kernel needs.

Input: an HLO instruction. Output: `routine(inst)` ("potrf", "trsm", "getrf", "geqrf",
"orgqr", "syevd", "gesdd", "gtsv", "geev"; the complex targets' ungqr and heevd are orgqr and
syevd here) or None; `work_shapes(inst)`: the work buffers its kernel takes,
in order (a column-major copy of the matrix where the routine needs one, LAPACK's optimal
workspace, asked once per shape at compile time, and its integer workspace);
`compilable(inst)`: False for matrices with a zero dimension, which the interpreter runs.
Invariant: the buffers are reused across the batch (the kernel handles one matrix at a
time), so their sizes are per matrix.
"""

from __future__ import annotations

from functools import lru_cache

from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape, complex_component, is_complex, numpy_dtype

_ROUTINES = ("getrf", "geqrf", "orgqr", "syevd", "gesdd", "gtsv", "geev")
_COMPLEX_NAME = {"syevd": "heevd", "orgqr": "ungqr"}
_CUSTOM = {**{f"lapack_{p}{r}_ffi": r for p in "sd" for r in _ROUTINES},
           **{f"lapack_{p}{_COMPLEX_NAME.get(r, r)}_ffi": r for p in "cz" for r in _ROUTINES}}
CUSTOM_CALL_TARGETS: frozenset[str] = frozenset(_CUSTOM)


def routine(inst: Instruction) -> str | None:
    if inst.opcode == "cholesky":
        return "potrf"
    if inst.opcode == "triangular-solve":
        return "trsm"
    if inst.opcode == "custom-call":
        return _CUSTOM.get(inst.attrs.get("custom_call_target", ""))
    return None


def matrix_dims(inst: Instruction) -> tuple[int, int]:
    """(rows, cols) of the first operand's matrices."""
    d = inst.operands[0].shape.dimensions
    return d[-2], d[-1]


def compilable(inst: Instruction) -> bool:
    dims = [d for o in inst.operands for d in o.shape.dimensions[-2:]]
    return all(dims)


def gesdd_job(inst: Instruction) -> int:
    """0 'N' (values only), 1 'S' (reduced), 2 'A' (full), from the backend_config."""
    mode = (inst.attrs.get("backend_config") or "mode=A").split("mode=")[-1][:1]
    return "NSA".index(mode)


def geev_jobs(inst: Instruction) -> tuple[bool, bool]:
    """(left, right): which eigenvectors geev computes, from the backend_config."""
    config = inst.attrs.get("backend_config") or ""
    return "jobvl=V" in config, "jobvr=V" in config


@lru_cache(maxsize=256)
def _workspace(name: str, dtype: str, dims: tuple[int, ...]) -> tuple[int, ...]:
    from ember.backends.cpu.lapack import find
    return find.workspace(name, numpy_dtype(dtype), *dims)


def work_shapes(inst: Instruction) -> list[Shape]:
    r = routine(inst)
    et = inst.operands[0].shape.element_type
    part = complex_component(et) if is_complex(et) else et
    if r == "gtsv":  # copies of the three diagonals (gtsv overwrites them) and of b,
        m, n = inst.operands[3].shape.dimensions[-2:]  # column-major
        return [Shape(et, (m,))] * 3 + [Shape(et, (m * n,))]
    m, n = matrix_dims(inst)
    if r == "getrf":
        return [Shape(et, (m * n,))]
    if r == "geqrf":
        return [Shape(et, (m * n,)), Shape(et, (_workspace("geqrf", et, (m, n))[0],))]
    if r == "orgqr":
        k = inst.operands[1].shape.dimensions[-1]
        return [Shape(et, (m * n,)), Shape(et, (_workspace("orgqr", et, (m, n, k))[0],))]
    if r == "syevd":
        if is_complex(et):  # heevd: work, rwork, iwork
            lwork, lrwork, liwork = _workspace("syevd", et, (n,))
            return [Shape(et, (lwork,)), Shape(part, (lrwork,)), Shape("s32", (liwork,))]
        lwork, liwork = _workspace("syevd", et, (n,))
        return [Shape(et, (lwork,)), Shape("s32", (liwork,))]
    if r == "gesdd":  # on the column-major view of the row-major matrix: n x m
        job = gesdd_job(inst)
        lwork = _workspace("gesdd", et, (n, m, job))[0]
        shapes = [Shape(et, (m * n,)), Shape(et, (lwork,))]
        if is_complex(et):  # rwork, as LAPACK 3.x documents its size
            mn, mx = min(m, n), max(m, n)
            lrwork = 7 * mn if job == 0 else max(5 * mn * mn + 5 * mn,
                                                 2 * mx * mn + 2 * mn * mn + mn)
            shapes.append(Shape(part, (max(lrwork, 1),)))
        return shapes + [Shape("s32", (8 * min(m, n),))]
    if r == "geev":
        left, right = geev_jobs(inst)
        lwork = _workspace("geev", et, (n, int(left), int(right)))[0]
        if is_complex(et):  # the column-major copy, work, rwork
            return [Shape(et, (n * n,)), Shape(et, (lwork,)), Shape(part, (2 * n,))]
        # the copy, wr, wi, vl and vr (column-major, unpacked into complex outputs), work
        return [Shape(et, (n * n,)), Shape(et, (n,)), Shape(et, (n,)),
                Shape(et, (n * n if left else 1,)), Shape(et, (n * n if right else 1,)),
                Shape(et, (lwork,))]
    return []
