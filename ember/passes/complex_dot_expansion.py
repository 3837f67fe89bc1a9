"""Complex dot expansion: a complex dot as four real dots over the operands' parts.

Input: a Module (every computation). Output: the module where each dot with a complex
result (c64 or c128) that the backend does not `keep`
  dot(x, y) => complex(dot(re x, re y) - dot(im x, im y), dot(re x, im y) + dot(im x, re y))
with the same dimension numbers, each real dot of the component type (f32 or f64), so a
backend whose products are real (the CPU's BLAS sgemm/dgemm and its own GEMM) runs complex
products as real ones. A real operand has no imaginary part: its two terms drop out (a
real x gives complex(dot(x, re y), dot(x, im y))). Operands of another type than the result
are converted first, as the dot would.
Invariant: each part is the sum of products that zgemm/cgemm sums (ac - bd, ad + bc),
computed by real dots, so the values agree with NumPy's complex products within the
summation order's rounding. Four real dots (not Gauss's three, which loses accuracy in
the imaginary part when the parts differ in scale).
A backend with a complex GEMM passes `keep`, the dots it runs as they are (the CPU:
BLAS's cgemm/zgemm, backends/cpu/dot/plan.py's complex_gemm_runs); by default none.
"""

from __future__ import annotations

from collections.abc import Callable

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.shape import Shape, complex_component, is_complex
from ember.passes.base import HloPass


def _parts(comp: Computation, x: Instruction, et: str) -> tuple[Instruction, Instruction | None]:
    """(re, im) of operand x as arrays of the result's component type (im None: real x)."""
    part = complex_component(et)
    src = x.shape.element_type
    if not is_complex(src):
        if src != part:
            x = comp.add_instruction(Instruction("convert", Shape(part, x.shape.dimensions),
                                                 [x], {}, name="convert"))
        return x, None
    if src != et:
        x = comp.add_instruction(Instruction("convert", Shape(et, x.shape.dimensions), [x],
                                             {}, name="convert"))
    shape = Shape(part, x.shape.dimensions)
    return (comp.add_instruction(Instruction("real", shape, [x], {}, name="real")),
            comp.add_instruction(Instruction("imag", shape, [x], {}, name="imag")))


def expand(comp: Computation, dot: Instruction) -> Instruction:
    """The four-real-dot form of complex `dot` in `comp` (added to comp, not yet used)."""
    et = dot.shape.element_type
    shape = Shape(complex_component(et), dot.shape.dimensions)
    (a, b), (c, d) = _parts(comp, dot.operands[0], et), _parts(comp, dot.operands[1], et)

    def product(x: Instruction, y: Instruction) -> Instruction:
        return comp.add_instruction(Instruction("dot", shape, [x, y], dict(dot.attrs),
                                                name="dot"))

    def combine(op: str, x: Instruction | None, y: Instruction | None) -> Instruction:
        if y is None:
            assert x is not None
            return x
        if x is None:
            return y if op == "add" else comp.add_instruction(
                Instruction("negate", shape, [y], {}, name="negate"))
        return comp.add_instruction(Instruction(op, shape, [x, y], {}, name=op))

    re = combine("subtract", product(a, c), product(b, d) if b is not None and d is not None
                 else None)
    ac_im = product(a, d) if d is not None else None
    bc_re = product(b, c) if b is not None else None
    im = combine("add", ac_im, bc_re)
    if ac_im is None and bc_re is None:  # both real: the dot was not complex at all
        raise ValueError("complex dot of two real operands")
    return comp.add_instruction(Instruction("complex", dot.shape, [re, im], {},
                                            name="complex"))


class ComplexDotExpansion(HloPass):
    """Rewrites complex dots as real ones (see the module docstring), but those `keep`
    says the backend runs as they are."""

    name = "complex-dot-expansion"

    def __init__(self, keep: Callable[[Instruction], bool] | None = None) -> None:
        self.keep = keep

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            dots = [i for i in comp.instructions
                    if i.opcode == "dot" and is_complex(i.shape.element_type)
                    and not (self.keep is not None and self.keep(i))]
            for dot in dots:
                dot.replace_all_uses_with(expand(comp, dot))
                changed = True
            if dots:
                comp.remove_dead()
        return changed
