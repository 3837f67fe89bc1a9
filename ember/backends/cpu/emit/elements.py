"""The CPU's element generator: ember/codegen's, with the CPU's vector math plugged in.

Input/output as `ember.codegen.elemental.ElementGenerator`; transcendental opcodes emit the
CPU math library's polynomial code (mathlib.CPU_MATH), with fast sin/cos/tan raising
"rerun precisely" flags. Every CPU kernel builds its element values through this class.
"""

from __future__ import annotations

from ember.backends.cpu.mathlib import CPU_MATH
from ember.codegen.elemental import ElementGenerator


class CpuElements(ElementGenerator):
    math = CPU_MATH
