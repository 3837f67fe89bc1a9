"""Which HLO opcodes and element types the CPU backend compiles: the one place to look.

Input: a Module. Output: `check_supported(module)` raises `UnsupportedOnCpu` listing every
opcode in `UNSUPPORTED_OPCODES` (and unsupported element types) the module uses, every
custom-call whose target is not in `SUPPORTED_CUSTOM_CALLS` (only host callbacks,
`ember.python_callback`, have a CPU kernel: callbacks.py), and every instruction on complex
values (c64, c128: an operand or result) that has no complex code: the refusal is per
opcode (`complex_compiles`), so a module whose complex work is elementwise arithmetic and
math, data movement, loops, sums and products (dots: BLAS cgemm/zgemm, or four real ones:
passes/complex_dot_expansion.py), and linear algebra (LAPACK's c/z routines) compiles
natively, while e.g. a complex sort sends its
module to the interpreter.
`UNSUPPORTED_OPCODES` is owned by the "Control flow" issue, which must empty it; a coverage
test asserts every other opcode of the table has an emitter.
"""

from __future__ import annotations

from ember.backends.cpu.errors import UnsupportedOnCpu
from ember.backends.cpu.lapack.plan import CUSTOM_CALL_TARGETS as _LAPACK_TARGETS
from ember.hlo.ir import Module
from ember.hlo.shape import Shape, is_complex

UNSUPPORTED_OPCODES: frozenset[str] = frozenset()  # while/conditional: loops_native.py
# custom-call targets with a CPU kernel (host callbacks: callbacks.py; XLA's LAPACK names:
# lapack/); others are unsupported
SUPPORTED_CUSTOM_CALLS: frozenset[str] = frozenset({"ember.python_callback"}) | _LAPACK_TARGETS
_LAPACK_OPCODES = ("cholesky", "triangular-solve", "custom-call")
# (bf16 compiles: its arithmetic in f32, passes/bf16_expansion.py; its 16 bits kept in
# registers and memory, codegen/convert.py converting them. Complex: per opcode, below.)
UNSUPPORTED_ELEMENT_TYPES: frozenset[str] = frozenset()
_COMPLEX = ("c64", "c128")
# Opcodes that move, pick or carry complex values without computing with them: the element
# generators, the loop plans and the buffer copies treat an element as its bytes' struct.
COMPLEX_STRUCTURAL: frozenset[str] = frozenset({
    "parameter", "constant", "tuple", "get-tuple-element", "broadcast", "reshape",
    "transpose", "slice", "pad", "concatenate", "reverse", "dynamic-slice",
    "dynamic-update-slice", "gather", "copy", "while", "conditional", "call", "fusion"})
# Reductions whose combiner is one of these (sums and products) compile on complex values.
COMPLEX_REDUCTIONS: frozenset[str] = frozenset({"add", "multiply"})


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


def _touches_complex(inst) -> bool:
    # (an array's element type read directly, no list of leaves: every instruction of
    # every computation is asked this)
    for s in (inst.shape, *[o.shape for o in inst.operands]):
        if s.element_type in _COMPLEX or (
                s.is_tuple and any(t in _COMPLEX for t in _leaf_types(s))):
            return True
    return False


def complex_compiles(inst) -> bool:
    """Whether the CPU backend has code for `inst` on the complex values it touches."""
    from ember.codegen.complex_math import OPCODES as MATH
    from ember.codegen.complex_ops import OPCODES as ARITHMETIC
    from ember.hlo.evaluator.core import plain_binary_opcode

    op = inst.opcode
    if op in COMPLEX_STRUCTURAL or op == "fft":  # (fft: its own kernel kind, emit/fft.py)
        return True
    if op == "custom-call" and inst.attrs.get("custom_call_target") == "ember.python_callback":
        return True  # (a host callback hands NumPy its buffers' bytes: collectives.py)
    if op in ("cholesky", "triangular-solve") or (  # the c/z LAPACK routines: lapack/
            op == "custom-call" and inst.attrs.get("custom_call_target") in _LAPACK_TARGETS):
        return True
    if op == "compare":
        return inst.attrs.get("direction") in ("EQ", "NE")
    if op == "dot":  # cgemm/zgemm or four real dots (passes/complex_dot_expansion.py)
        return is_complex(inst.shape.element_type)
    if op == "reduce":
        return (len(inst.operands) == 2
                and plain_binary_opcode(inst.to_apply) in COMPLEX_REDUCTIONS)
    return op in ARITHMETIC or op in MATH


def check_supported(module: Module) -> None:
    bad: set[str] = set()
    types: set[str] = set()
    for comp in module.computations:
        for inst in comp.instructions:
            if _touches_complex(inst) and not complex_compiles(inst):
                bad.add(f"{inst.opcode} on complex values")
            if inst.opcode in UNSUPPORTED_OPCODES:
                bad.add(inst.opcode)
            elif (inst.opcode == "custom-call"
                  and inst.attrs.get("custom_call_target") not in SUPPORTED_CUSTOM_CALLS):
                bad.add(f"custom-call {inst.attrs.get('custom_call_target')}")
            if inst.opcode in _LAPACK_OPCODES and not _lapack_compilable(inst):
                bad.add(f"{inst.opcode} on an empty matrix")
            s = inst.shape
            if s.is_tuple:
                types.update(t for t in _leaf_types(s) if t in UNSUPPORTED_ELEMENT_TYPES)
            elif s.element_type in UNSUPPORTED_ELEMENT_TYPES:
                types.add(s.element_type)
    if bad or types:
        detail = f"element types {sorted(types)}" if types else ""
        raise UnsupportedOnCpu(bad or {"(element type)"}, detail)
