"""How each dtype and reduction becomes an MPI reduction.

Input: a NumPy dtype and one of `topology.REDUCTIONS`. Output: `plan(mpi, dtype, op)`, a
`ReducePlan`: the dtype the buffers travel in (`wire`), the MPI datatype and operation for
it, and whether NaNs need the separate pass below.

The choices (the MPI standard has no 16-bit float reductions, and MPI's MAX/MIN are C's
comparisons, which drop NaNs):
- bool: sum and max are logical or, prod and min logical and (`MPI_LOR`/`MPI_LAND` on
  C bools), which is what the sum of bools is once cast back to bool.
- float16 and bfloat16 travel as float32 and are rounded once at the end: the sum of n
  values is their float32 sum rounded to 16 bits once (for 2 processes the
  correctly rounded sum: float32's 24 bits are at least 2p + 2 for p = 11 or 8, so
  rounding twice equals rounding once); the same on every
  MPI, at twice the bytes of a native 16-bit reduction.
- other ints, floats and complex numbers reduce natively (`MPI_SUM`, `MPI_PROD`,
  `MPI_MAX`, `MPI_MIN` on the matching MPI datatype).
- float max/min: NaN wins, as in `lax.max`/`lax.min`; MPI's comparison would drop it, so
  after the native reduction a one-number or-reduction asks whether any process had a
  NaN, and only then the or of the NaN masks marks the results that are NaN.
- complex max/min (lexicographic, as NumPy and XLA order complex numbers) have no MPI
  operation: the communicator gathers the buffers and reduces them with NumPy.
Invariant: every plan reduces without Python code per element.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from ember.distributed.topology import REDUCTIONS


@dataclass(frozen=True)
class ReducePlan:
    """`wire`: the dtype sent (None: gather and reduce with NumPy); `datatype`/`mpi_op`:
    MPI's; `nan_pass`: float max/min, which the NaN pass completes."""

    wire: np.dtype | None
    datatype: Any = None
    mpi_op: Any = None
    nan_pass: bool = False


# MPI's predefined datatypes, the ones its reduction operations are defined on (mpi4py's
# dtlib may answer a duplicate of one, on which MPI_SUM is not defined)
_MPI_TYPES = {np.dtype(k): v for k, v in (
    (np.int8, "INT8_T"), (np.int16, "INT16_T"), (np.int32, "INT32_T"), (np.int64, "INT64_T"),
    (np.uint8, "UINT8_T"), (np.uint16, "UINT16_T"), (np.uint32, "UINT32_T"),
    (np.uint64, "UINT64_T"), (np.float32, "FLOAT"), (np.float64, "DOUBLE"),
    (np.complex64, "C_FLOAT_COMPLEX"), (np.complex128, "C_DOUBLE_COMPLEX"))}


def is_half_float(dtype: np.dtype) -> bool:
    """float16 and bfloat16 (ml_dtypes' bfloat16 has NumPy kind 'V')."""
    return dtype == np.float16 or dtype.name == "bfloat16"


@lru_cache(maxsize=256)  # (a few microseconds of lookups per call otherwise)
def plan(mpi: ModuleType, dtype: np.dtype, op: str) -> ReducePlan:
    """The plan for reducing buffers of `dtype` with `op` (see the module docstring)."""
    if op not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {op!r}")
    if dtype == np.bool_:
        return ReducePlan(dtype, mpi.C_BOOL, mpi.LOR if op in ("sum", "max") else mpi.LAND)
    wire = np.dtype(np.float32) if is_half_float(dtype) else dtype
    if wire.kind == "c" and op in ("max", "min"):
        return ReducePlan(None)
    if wire not in _MPI_TYPES:
        raise TypeError(f"cannot reduce buffers of dtype {dtype} between processes")
    mpi_op = {"sum": mpi.SUM, "prod": mpi.PROD, "max": mpi.MAX, "min": mpi.MIN}[op]
    return ReducePlan(wire, getattr(mpi, _MPI_TYPES[wire]), mpi_op,
                      nan_pass=wire.kind == "f" and op in ("max", "min"))


def numpy_reduce(stacked: np.ndarray, op: str) -> np.ndarray:
    """Reduce the gathered buffers (axis 0, in rank order) with NumPy (complex max/min:
    NumPy's maximum/minimum order complex numbers lexicographically and propagate NaN)."""
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
    return ufunc.reduce(stacked, axis=0)
