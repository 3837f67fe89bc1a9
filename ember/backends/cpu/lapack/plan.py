"""Which instructions the CPU serves through LAPACK, and the scratch each kernel needs.

Input: an HLO instruction. Output: `routine(inst)` ("potrf", "trsm", "getrf", "geqrf",
"orgqr", "syevd", "gesdd", "gtsv") or None; `work_shapes(inst)`: the work buffers its kernel takes,
in order (a column-major copy of the matrix where the routine needs one, LAPACK's optimal
workspace, asked once per shape at compile time, and its integer workspace);
`compilable(inst)`: False for matrices with a zero dimension, which the interpreter runs.
Invariant: the buffers are reused across the batch (the kernel handles one matrix at a
time), so their sizes are per matrix.
"""

from __future__ import annotations

from functools import lru_cache

from ember.hlo.ir import Instruction
from ember.hlo.shape import Shape, numpy_dtype

_CUSTOM = {f"lapack_{p}{r}_ffi": r for p in "sd"
           for r in ("getrf", "geqrf", "orgqr", "syevd", "gesdd", "gtsv")}
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


@lru_cache(maxsize=256)
def _workspace(name: str, dtype: str, dims: tuple[int, ...]) -> tuple[int, int]:
    from ember.backends.cpu.lapack import find
    return find.workspace(name, numpy_dtype(dtype), *dims)


def work_shapes(inst: Instruction) -> list[Shape]:
    r = routine(inst)
    et = inst.operands[0].shape.element_type
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
        lwork, liwork = _workspace("syevd", et, (n,))
        return [Shape(et, (lwork,)), Shape("s32", (liwork,))]
    if r == "gesdd":  # on the column-major view of the row-major matrix: n x m
        lwork = _workspace("gesdd", et, (n, m, gesdd_job(inst)))[0]
        return [Shape(et, (m * n,)), Shape(et, (lwork,)), Shape("s32", (8 * min(m, n),))]
    return []
