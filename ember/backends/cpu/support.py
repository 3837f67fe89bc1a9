"""Which HLO opcodes and element types the CPU backend compiles: the one place to look.

Input: a Module. Output: `check_supported(module)` raises `UnsupportedOnCpu` listing every
opcode in `UNSUPPORTED_OPCODES` (and unsupported element types) the module uses, and every
custom-call whose target is not in `SUPPORTED_CUSTOM_CALLS` (only host callbacks,
`ember.python_callback`, have a CPU kernel: callbacks.py).
`UNSUPPORTED_OPCODES` is owned by the "Control flow" issue, which must empty it; a coverage
test asserts every other opcode of the table has an emitter.
"""

from __future__ import annotations

from ember.backends.cpu.errors import UnsupportedOnCpu
from ember.hlo.ir import Module
from ember.hlo.shape import Shape

UNSUPPORTED_OPCODES: frozenset[str] = frozenset()  # while/conditional: loops_native.py
# custom-call targets with a CPU kernel (host callbacks: callbacks.py; XLA's LAPACK names:
# lapack/); others are unsupported
SUPPORTED_CUSTOM_CALLS: frozenset[str] = frozenset({"ember.python_callback"}) | frozenset(
    f"lapack_{p}{r}_ffi" for p in "sd"
    for r in ("getrf", "geqrf", "orgqr", "syevd", "gesdd", "gtsv"))
_LAPACK_OPCODES = ("cholesky", "triangular-solve", "custom-call")
# Complex values (c64, c128) have no LLVM codegen yet: their modules run on the interpreter.
# (bf16 compiles: its arithmetic in f32, passes/bf16_expansion.py; its 16 bits kept in
# registers and memory, codegen/convert.py converting them.)
UNSUPPORTED_ELEMENT_TYPES: frozenset[str] = frozenset({"c64", "c128"})


def _leaf_types(shape: Shape) -> list[str]:
    if shape.is_tuple:
        return [t for s in shape.tuple_shapes for t in _leaf_types(s)]
    return [shape.element_type]


def _lapack_compilable(inst) -> bool:
    """LAPACK kernels take non-empty matrices (the interpreter runs empty ones)."""
    if inst.opcode == "custom-call" and not str(
            inst.attrs.get("custom_call_target", "")).startswith("lapack_"):
        return True
    return all(o.shape.size > 0 for o in inst.operands)


def check_supported(module: Module) -> None:
    bad: set[str] = set()
    types: set[str] = set()
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in UNSUPPORTED_OPCODES:
                bad.add(inst.opcode)
            elif (inst.opcode == "custom-call"
                  and inst.attrs.get("custom_call_target") not in SUPPORTED_CUSTOM_CALLS):
                bad.add(f"custom-call {inst.attrs.get('custom_call_target')}")
            if inst.opcode in _LAPACK_OPCODES and not _lapack_compilable(inst):
                bad.add(f"{inst.opcode} on an empty matrix")
            types.update(t for t in _leaf_types(inst.shape) if t in UNSUPPORTED_ELEMENT_TYPES)
    if bad or types:
        detail = f"element types {sorted(types)}" if types else ""
        if types & {"c64", "c128"}:
            detail += ": complex values have no native code yet, the interpreter runs them"
        raise UnsupportedOnCpu(bad or {"(element type)"}, detail)
