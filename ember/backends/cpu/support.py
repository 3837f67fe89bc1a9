"""Which HLO opcodes and element types the CPU backend compiles: the one place to look.

Input: a Module. Output: `check_supported(module)` raises `UnsupportedOnCpu` listing every
opcode in `UNSUPPORTED_OPCODES` (and unsupported element types) the module uses.
`UNSUPPORTED_OPCODES` is owned by the "Control flow" issue, which must empty it; a coverage
test asserts every other opcode of the table has an emitter.
"""

from __future__ import annotations

from ember.backends.cpu.errors import UnsupportedOnCpu
from ember.hlo.ir import Module
from ember.hlo.shape import Shape

UNSUPPORTED_OPCODES: frozenset[str] = frozenset(
    {"sort", "gather", "scatter", "while", "conditional", "custom-call"}
)
# bf16 needs the optional ml_dtypes package on the NumPy side; not compiled yet.
UNSUPPORTED_ELEMENT_TYPES: frozenset[str] = frozenset({"bf16"})


def _leaf_types(shape: Shape) -> list[str]:
    if shape.is_tuple:
        return [t for s in shape.tuple_shapes for t in _leaf_types(s)]
    return [shape.element_type]


def check_supported(module: Module) -> None:
    bad: set[str] = set()
    types: set[str] = set()
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in UNSUPPORTED_OPCODES:
                bad.add(inst.opcode)
            types.update(t for t in _leaf_types(inst.shape) if t in UNSUPPORTED_ELEMENT_TYPES)
    if bad or types:
        detail = f"element types {sorted(types)}" if types else ""
        raise UnsupportedOnCpu(bad or {"(element type)"}, detail)
