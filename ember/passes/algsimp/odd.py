"""Rewrites of odd functions: the negation moves out of the argument, so f(x) and f(-x)
become one value and its negation (CSE then computes f once: Black-Scholes' cdf(d) and
cdf(-d) share their erf).

Exact only where the implementations are odd bit for bit, which ODD lists: erf is computed
on |x| with the sign put back by copysign on the CPU (mathlib special.py, f32/special.py;
the small-|x| branch x + x*P(x*x) is odd under round-to-nearest), and SciPy's erf (the HLO
evaluator's) is odd too; tests/codegen/test_odd_functions.py checks both bit for bit. A
product or quotient with a negated operand is the negated product or quotient exactly
(IEEE rounding is symmetric), so the negation is found through one with a constant too
(cdf(-d) = erf(-d * 0.7071...)).
"""

from __future__ import annotations

import numpy as np

from ember.hlo.ir import Instruction
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import add, is_float_inst, scalar_constant_value

ODD: frozenset[str] = frozenset({"erf"})


def _finite_nonzero_constant(x: Instruction) -> bool:
    v = scalar_constant_value(x)
    return v is not None and bool(np.isfinite(v)) and v != 0


def _without_negation(x: Instruction) -> Instruction | None:
    """y with x == -y bit for bit, built from x's operands; None when x has no negation.
    Through a product or quotient only with a finite nonzero constant: a NaN then comes
    only from the negated operand and keeps its sign either way (0 * inf makes a NaN whose
    sign the hardware picks, which the negation outside would flip)."""
    if x.opcode == "negate":
        return x.operand
    if x.opcode in ("multiply", "divide"):
        a, b = x.operands
        if a.opcode == "negate" and _finite_nonzero_constant(b):
            return add(x, x.opcode, [a.operand, b])
        if b.opcode == "negate" and _finite_nonzero_constant(a):
            return add(x, x.opcode, [a, b.operand])
    return None


@rewrite(*sorted(ODD))
def odd_of_negation(inst: Instruction) -> Instruction | None:
    """erf(-A) => -erf(A);  erf(-A * C), erf(-A / C), erf(C / -A) => -erf(A op C) (C a
    finite nonzero constant)"""
    if not is_float_inst(inst) or not is_float_inst(inst.operand):
        return None
    x = inst.operand
    if x.opcode not in ("negate", "multiply", "divide"):
        return None
    y = _without_negation(x)
    if y is None:
        return None
    return add(inst, "negate", [add(inst, inst.opcode, [y], dict(inst.attrs))])
