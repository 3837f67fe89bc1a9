"""Registry coverage: every primitive has every rule, every opcode every implementation.

A primitive without a lowering rule, or an opcode without a shape rule or evaluator case,
fails here in CI rather than in a user's traceback. Opcodes the CPU backend does not compile
yet are an explicit list (issue "Control flow" must empty it).
"""

from __future__ import annotations

import ember  # noqa: F401  (registers every primitive)
from ember.backends.cpu.support import UNSUPPORTED_OPCODES
from ember.core.primitive import PRIMITIVES
from ember.hlo.evaluator.core import missing_opcodes
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape_inference import RULES as SHAPE_RULES

# Opcodes the CPU backend does not compile (while and conditional are native loops and
# branches now: backends/cpu/loops_native.py).
CPU_EXCEPTIONS: set[str] = set()


def test_every_primitive_has_abstract_eval_impl_and_lowering():
    missing = []
    for name, prim in sorted(PRIMITIVES.items()):
        if prim.is_call:
            continue  # jit: inlined by the lowering driver, run by the dispatcher
        if prim._abstract_eval is None:
            missing.append(f"{name}: abstract eval")
        if prim._impl is None:
            missing.append(f"{name}: NumPy rule")
        if prim.lowering is None:
            missing.append(f"{name}: lowering")
    assert not missing, missing


def test_every_opcode_has_a_shape_rule_and_an_evaluator_case():
    assert not [op for op in OPCODES if op not in SHAPE_RULES]
    assert missing_opcodes() == []


def test_cpu_backend_exception_list_is_explicit():
    assert set(UNSUPPORTED_OPCODES) == CPU_EXCEPTIONS
