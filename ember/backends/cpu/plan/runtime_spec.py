"""What an executable needs at call time, apart from its code: a plain, serializable record.

Input: a Schedule (after emission, which may add constants) and the entry root's shape.
Output: `RuntimeSpec` with the pointer-table layout (parameters, outputs, scratch size,
constants, copies into outputs after the call), the root's tuple structure, the printed
buffer assignment and the object code's size (for memory_analysis). It is what
the disk cache stores beside the object code (as JSON plus raw constant bytes: no pickle,
so a cache file is data, never code).
A plain class, not a dataclass: a warm disk-cache hit imports this module in a fresh
process, and the dataclass decorator costs ~1 ms there (it generates and compiles code).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ember.hlo.shape import Shape, numpy_dtype

if TYPE_CHECKING:  # (the scheduler is imported only when compiling, not on a cache hit)
    from ember.backends.cpu.plan.schedule import Schedule

ShapeSpec = tuple[str, tuple[int, ...]]  # (element type, dims)


def _tree(shape: Shape) -> Any:
    """Root structure: None for an array leaf, a list for a tuple."""
    return [_tree(s) for s in shape.tuple_shapes] if shape.is_tuple else None


class RuntimeSpec:
    """The call-time record of one executable (fields as the constructor's arguments)."""

    __slots__ = ("params", "outputs", "constants", "scratch_bytes", "copy_outs", "root",
                 "buffer_assignment", "code_bytes", "aliases")

    def __init__(self, params: list[ShapeSpec], outputs: list[ShapeSpec],
                 constants: list[np.ndarray], scratch_bytes: int,
                 copy_outs: list[tuple[int, str, int, ShapeSpec]], root: Any,
                 buffer_assignment: str = "", code_bytes: int = 0,
                 aliases: list[tuple[int, int]] | None = None) -> None:
        self.params = params
        self.outputs = outputs
        self.constants = constants
        self.scratch_bytes = scratch_bytes
        # (output position, slot kind, index, shape): slots copied into outputs after a call
        self.copy_outs = copy_outs
        self.root = root  # None for an array root, else the tuple structure (see _tree)
        self.buffer_assignment = buffer_assignment  # scratch_plan.describe: who shares what
        self.code_bytes = code_bytes  # size of the object code (set once it is emitted)
        # (output position, parameter): the output is written into that donated parameter
        self.aliases = [] if aliases is None else aliases

    def __repr__(self) -> str:
        return (f"RuntimeSpec(params={self.params}, outputs={self.outputs}, "
                f"constants={len(self.constants)}, scratch_bytes={self.scratch_bytes}, "
                f"copy_outs={self.copy_outs}, root={self.root}, code_bytes={self.code_bytes}, "
                f"aliases={self.aliases})")

    @property
    def slot_count(self) -> int:
        return len(self.params) + len(self.outputs) + 1 + len(self.constants)

    @staticmethod
    def from_schedule(sched: Schedule, root_shape: Shape) -> RuntimeSpec:
        from ember.backends.cpu.plan.scratch_plan import describe

        def spec(s: Shape) -> ShapeSpec:
            return (s.element_type, tuple(s.dimensions))

        return RuntimeSpec([spec(s) for s in sched.params], [spec(s) for s in sched.outputs],
                           list(sched.constants), sched.scratch_bytes,
                           [(pos, s.kind, s.index, spec(s.shape)) for pos, s in sched.copy_outs],
                           _tree(root_shape), describe(sched), 0, list(sched.aliases))

    def to_bytes(self) -> tuple[dict[str, Any], bytes]:
        """(JSON-able metadata, concatenated constant bytes)."""
        import json  # (only a compile writes entries)

        consts = [np.ascontiguousarray(c) for c in self.constants]
        meta = {"params": self.params, "outputs": self.outputs,
                "scratch_bytes": self.scratch_bytes, "copy_outs": self.copy_outs,
                "root": self.root, "buffer_assignment": self.buffer_assignment,
                "code_bytes": self.code_bytes, "aliases": self.aliases,
                "constants": [(_dtype_text(c.dtype), list(c.shape), c.nbytes)
                              for c in consts]}
        return json.loads(json.dumps(meta)), b"".join(c.tobytes() for c in consts)

    @staticmethod
    def from_bytes(meta: dict[str, Any], data: bytes) -> RuntimeSpec:
        consts = []
        off = 0
        for dt, shape, nbytes in meta["constants"]:
            consts.append(np.frombuffer(data, _dtype_from_text(dt), math.prod(shape),
                                        off).reshape(shape).copy())
            off += nbytes
        if off != len(data):
            raise ValueError("constant bytes do not match their metadata")

        def spec(s: Any) -> ShapeSpec:
            return (str(s[0]), tuple(int(d) for d in s[1]))

        return RuntimeSpec([spec(s) for s in meta["params"]], [spec(s) for s in meta["outputs"]],
                           consts, int(meta["scratch_bytes"]),
                           [(int(p), str(k), int(i), spec(s)) for p, k, i, s in meta["copy_outs"]],
                           meta["root"], str(meta["buffer_assignment"]),
                           int(meta["code_bytes"]),
                           [(int(a), int(b)) for a, b in meta["aliases"]])


def _dtype_text(dt: np.dtype) -> str:
    """A constant's dtype in the metadata: NumPy's `dtype.str` ('<f4'), except bfloat16,
    whose `str` is '<V2' (a void type that would come back as raw bytes): its name."""
    return "bfloat16" if dt.name == "bfloat16" else dt.str


def _dtype_from_text(text: str) -> np.dtype:
    return numpy_dtype("bf16") if text == "bfloat16" else np.dtype(text)


def dtype_of(spec: ShapeSpec) -> np.dtype:
    return numpy_dtype(spec[0])
