"""Complex dot expansion: HLO text in -> ComplexDotExpansion -> real dots out, with the
interpreter's values before and after; a real dot is left alone."""

from __future__ import annotations

import numpy as np

from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator import evaluate
from ember.passes.complex_dot_expansion import ComplexDotExpansion


def _module(lhs: str, rhs: str, out: str, dims: str) -> str:
    return (f"HloModule t\n\nENTRY %t (x: {lhs}, y: {rhs}) -> {out} {{\n"
            f"  %x = {lhs} parameter(0)\n  %y = {rhs} parameter(1)\n"
            f"  ROOT %d = {out} dot(%x, %y), {dims}\n}}\n")


def _random(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def test_complex_dots_become_four_real_dots_with_the_same_values():
    rng = np.random.default_rng(0)
    cases = [
        ("c64[3,5]", "c64[5,2]", "c64[3,2]", "lhs_contracting_dims={1}, "
         "rhs_contracting_dims={0}", (3, 5), (5, 2), "complex64", "complex64", 4),
        ("c128[2,3,4]", "c128[2,4,5]", "c128[2,3,5]", "lhs_batch_dims={0}, "
         "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
         (2, 3, 4), (2, 4, 5), "complex128", "complex128", 4),
        # a real operand has no imaginary part: two real dots
        ("f64[3,4]", "c128[4,2]", "c128[3,2]", "lhs_contracting_dims={1}, "
         "rhs_contracting_dims={0}", (3, 4), (4, 2), "float64", "complex128", 2),
    ]
    for lhs, rhs, out, dims, ls, rs, ldt, rdt, n_dots in cases:
        m = parse_module(_module(lhs, rhs, out, dims))
        x, y = _random(ls, ldt, rng), _random(rs, rdt, rng)
        before = evaluate(m, x, y)
        assert ComplexDotExpansion().run(m)
        verify(m)
        text = print_module(m)
        part = "f32" if out.startswith("c64") else "f64"
        assert text.count(" dot(") == n_dots, text
        assert all(f"= {part}[" in line for line in text.splitlines() if " dot(" in line)
        assert "ROOT" in text and "complex(" in text
        np.testing.assert_allclose(evaluate(m, x, y), before, rtol=1e-5)


def test_real_dots_are_left_alone():
    m = parse_module(_module("f32[3,5]", "f32[5,2]", "f32[3,2]",
                             "lhs_contracting_dims={1}, rhs_contracting_dims={0}"))
    text = print_module(m)
    assert not ComplexDotExpansion().run(m)
    assert print_module(m) == text


def test_the_cpu_keeps_the_products_its_blas_runs():
    from ember.backends.cpu.dot.complex_expansion import CpuComplexDotExpansion

    dims = "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
    big = parse_module(_module("c64[40,40]", "c64[40,40]", "c64[40,40]", dims))
    text = print_module(big)
    assert not CpuComplexDotExpansion().run(big)  # cgemm: 40^3 >= 32^3
    assert print_module(big) == text
    assert ComplexDotExpansion().run(big)  # the plain pass keeps nothing
    # small, or an operand of another type: four (two) real dots as before
    for lhs, rhs, out in (("c64[4,4]", "c64[4,4]", "c64[4,4]"),
                          ("f64[40,40]", "c128[40,40]", "c128[40,40]")):
        m = parse_module(_module(lhs, rhs, out, dims))
        assert CpuComplexDotExpansion().run(m)
        assert "complex(" in print_module(m)
