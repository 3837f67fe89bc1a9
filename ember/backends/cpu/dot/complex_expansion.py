"""The CPU's complex-dot-expansion: the complex products BLAS runs stay complex.

Input: a Module. Output: passes/complex_dot_expansion.py's rewrite (a complex dot as four
real ones) of every complex dot but those plan.py's `complex_gemm_runs` keeps, which the
dot kernels then run as one cgemm/zgemm call each (blas.py).
"""

from __future__ import annotations

from ember.backends.cpu.dot.plan import complex_gemm_runs
from ember.passes.complex_dot_expansion import ComplexDotExpansion


class CpuComplexDotExpansion(ComplexDotExpansion):
    """complex-dot-expansion keeping the products BLAS's cgemm/zgemm run."""

    def __init__(self) -> None:
        super().__init__(keep=complex_gemm_runs)


__all__ = ["CpuComplexDotExpansion"]
