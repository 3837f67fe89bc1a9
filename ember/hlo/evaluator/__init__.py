"""Ember's HLO semantics, as pure NumPy: the reference every backend meets.

Input: an HLO `Module` (or one instruction's operands) and NumPy arrays. Output: NumPy
arrays, as XLA defines each opcode (integer x / 0 = -1, saturating float -> int, NaN-
propagating max/min, ...). Modules:
  core.py         `evaluate(module, *args)`: walks a module instruction by instruction
                  (control flow, calls, custom calls through `register_custom_call`)
  elementwise.py  one NumPy rule per elementwise opcode (`ELEMENTWISE`), the math hook
                  (`use_math_kernels`) through which a backend's native math serves the
                  transcendental opcodes
  reductions.py   reduce / reduce-window / scatter combiners as NumPy ufuncs
  indexing.py     gather, scatter, dynamic slices
  fft.py          the fft opcode through NumPy's pocketfft (also the primitive's eager rule
                  and the CPU fft kernel's host call)
  differential.py `Reference`: a module's values on random inputs, compared before and
                  after a pass (the checker EMBER_ENABLE_CHECKS runs around every pass)
Invariant: nothing here imports a backend, a primitive or the tracing core; primitives'
eager rules, constant folding and the interpreter backend all call into it.
"""

from ember.hlo.evaluator.core import (
    EvaluationError,
    Value,
    evaluate,
    register_custom_call,
    while_iteration_limit,
)

__all__ = ["EvaluationError", "Value", "evaluate", "register_custom_call",
           "while_iteration_limit"]
