"""Direct steps for the eager dispatch cache: an elementwise equation whose operand types
say, when its plan is made, which native code its rule ends in, calls that code itself.

Input: an elementwise primitive (prims/elementwise.py), its operands' shapes and dtypes as
a plan passes them, its result's aval. Output: `direct_step(...)`, a function of the operands'
NumPy values returning the result as the generic step would (an ndarray of the result's
dtype and shape), or None when the equation keeps the generic step (`_eager_cache._one`).

Why: the generic step goes through five Python layers (the rule's broadcasting, bfloat16
and math-kernel dispatch, warning silencing, the result cast) that decide, on every call,
what the operand types already decided; an eager `jnp.sin(x)` on 1000 f32 spent most of
its time there. Two kinds of equation are taken:
- a math opcode (sin, exp, tanh, ...: `MATH_OPCODES`) of one operand of f16, f32 or f64
  whose rule is the evaluator's, while the CPU backend's math kernels serve those opcodes
  (`ew.use_math_kernels`): the step calls the (opcode, dtype) kernel of
  cpu/runtime/eager_math.py through its trampoline, the call the rule itself ends in;
- add, sub, mul and div of two float or complex operands of the result's shape and dtype
  (not bfloat16: its rule computes in f32): the step runs the NumPy ufunc the rule runs
  (`x + y`, `np.subtract`, `x * y`, `np.true_divide`) with warnings silenced as the rule
  silences them; comparisons (eq, lt, ...) of two bool, integer or float operands of the
  result's shape and one dtype likewise run `ew.compare`'s ufunc.
Invariants: the same bits as the generic step, since the same native code runs on the same
values; an operand that is not a C-contiguous ndarray of the planned dtype and shape at
run time (a strided view an earlier rule returned) takes the generic rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.hlo.evaluator import elementwise as ew

# The binary rules taken, by HLO opcode: the ufunc each rule applies to float operands.
_UFUNCS: dict[str, Callable[..., np.ndarray]] = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.true_divide}


def direct_step(prim: Any, ins: list[tuple[tuple[int, ...], np.dtype]], out: Any,
                generic: Callable[..., np.ndarray]) -> Callable[..., np.ndarray] | None:
    """A direct step (see the module doc), or None. `ins`: each operand's (shape, dtype) at
    run time (a constant's, already stretched by the plan, or the traced aval's); `out`:
    the result's aval; `generic`: the generic step, which the direct one calls for
    operands it does not take."""
    opcode = getattr(prim, "hlo_opcode", None)
    compare = getattr(prim, "compare_ufunc", None)
    if compare is not None:
        return _compare_step(compare, ins, out, generic)
    rule = getattr(prim, "numpy_rule", None)
    if opcode is None or rule is None or rule is not ew.ELEMENTWISE.get(opcode):
        return None  # (a primitive of its own rule)
    if any(shape != out.shape or dtype != out.dtype for shape, dtype in ins):
        return None  # (broadcasting or mixed types: the rule's business)
    if len(ins) == 1 and opcode in ew.MATH_OPCODES:
        return _math_step(opcode, out.dtype, out.shape, generic)
    ufunc = _UFUNCS.get(opcode)
    # (0-d excluded: a ufunc of 0-d arrays gives a NumPy scalar, which the rule wraps)
    if ufunc is not None and len(ins) == 2 and out.dtype.kind in "fc" and out.shape:
        return _ufunc_step(ufunc, out.dtype, out.shape, generic)
    return None


def _math_step(opcode: str, dtype: np.dtype, shape: tuple[int, ...],
               generic: Callable[..., np.ndarray]) -> Callable[..., np.ndarray] | None:
    # (the math provider `import ember` installs: the CPU backend's vector kernels, reached
    # through the evaluator, so nothing below the backends imports one)
    eager_math = ew._math_kernels
    if eager_math is None or not all(hasattr(eager_math, a) for a in
                                     ("covers", "kernel", "element_type")) \
            or not eager_math.covers(opcode, dtype):
        return None
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return None
    kernel = eager_math.kernel(opcode, eager_math.element_type(dtype))
    if kernel.tramp is None:
        return None
    tramp, desc = kernel.tramp, kernel.descriptor(n)

    def step(a: np.ndarray) -> np.ndarray:
        # (the provider is read again: a test may swap it after the plan was made)
        if (type(a) is np.ndarray and a.dtype is dtype and a.flags.c_contiguous
                and ew._math_kernels is eager_math):
            out = np.empty(shape, dtype)
            tramp((desc, a, out))  # (eager_math.apply's own call)
            return out
        return generic(a)

    return step


def _compare_step(ufunc: Callable[..., np.ndarray],
                  ins: list[tuple[tuple[int, ...], np.dtype]], out: Any,
                  generic: Callable[..., np.ndarray]) -> Callable[..., np.ndarray] | None:
    """A comparison of two operands of the result's shape and one dtype (bool, integer or
    float; not bfloat16, whose NumPy type is ml_dtypes'): the ufunc `ew.compare` runs."""
    (sa, da), (sb, db) = ins
    if sa != out.shape or sb != out.shape or da != db or da.kind not in "biuf" or not (
            out.shape):
        return None
    return _ufunc_step(ufunc, da, out.shape, generic)


def _ufunc_step(ufunc: Callable[..., np.ndarray], dtype: np.dtype, shape: tuple[int, ...],
                generic: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    def step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is dtype and (
                b.dtype is dtype) and a.shape == shape and b.shape == shape:
            with np.errstate(all="ignore"):
                return ufunc(a, b)
        return generic(a, b)

    return step


__all__ = ["direct_step"]
