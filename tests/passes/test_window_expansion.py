"""Window expansion (ember/passes/window_expansion.py): convolution and reduce-window become
pads, slices, concatenates, dots and elementwise ops with the evaluator's values; modules
without either are left alone; with the pass disabled the CPU refuses (the interpreter
runs the program)."""
# ruff: noqa: E501  (HLO lines as XLA prints them)

from __future__ import annotations

import numpy as np

from ember.hlo.evaluator.core import evaluate
from ember.hlo.parser import parse_module
from ember.passes.window_expansion import WindowExpansion

CONV = """HloModule conv

ENTRY %main (x: f32[2,7,6,4], w: f32[3,2,2,6]) -> f32[2,4,5,6] {
  %x = f32[2,7,6,4]{3,2,1,0} parameter(0)
  %w = f32[3,2,2,6]{3,2,1,0} parameter(1)
  ROOT %c = f32[2,4,5,6]{3,2,1,0} convolution(%x, %w), window={size=3x2 stride=2x1 pad=1_1x0_0 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
"""

BATCH_GROUPS = """HloModule conv

ENTRY %main (x: f32[4,3,5], w: f32[4,3,2]) -> f32[2,4,8] {
  %x = f32[4,3,5]{2,1,0} parameter(0)
  %w = f32[4,3,2]{2,1,0} parameter(1)
  ROOT %c = f32[2,4,8]{2,1,0} convolution(%x, %w), window={size=2 pad=1_2 lhs_dilate=2}, dim_labels=bf0_oi0->bf0, batch_group_count=2
}
"""

# more taps (4x5) than output positions (2x2): one slice per position, windows whole
BIG_KERNEL = """HloModule conv

ENTRY %main (x: f32[3,2,6,7], w: f32[4,2,4,5]) -> f32[3,4,2,2] {
  %x = f32[3,2,6,7]{3,2,1,0} parameter(0)
  %w = f32[4,2,4,5]{3,2,1,0} parameter(1)
  ROOT %c = f32[3,4,2,2]{3,2,1,0} convolution(%x, %w), window={size=4x5 stride=2x2 pad=1_0x0_0 rhs_dilate=1x1}, dim_labels=bf01_oi01->bf01
}
"""

# more input than output features (an input gradient): one dot, then a sum over the taps
FEW_OUTPUTS = """HloModule conv

ENTRY %main (x: f32[2,5,6,8], w: f32[3,3,8,2]) -> f32[2,9,6,2] {
  %x = f32[2,5,6,8]{3,2,1,0} parameter(0)
  %w = f32[3,3,8,2]{3,2,1,0} parameter(1)
  ROOT %c = f32[2,9,6,2]{3,2,1,0} convolution(%x, %w), window={size=3x3 stride=1x2 pad=2_2x1_2 lhs_dilate=2x1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f
}
"""

POOL = """HloModule pool

%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}

%weird (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %s = f32[] subtract(%a, %b)
  ROOT %m = f32[] multiply(%s, %b)
}

ENTRY %main (x: f32[6,5]) -> (f32[3,5], f32[5,4]) {
  %x = f32[6,5]{1,0} parameter(0)
  %lo = f32[] constant(-inf)
  %one = f32[] constant(0.5)
  %p = f32[3,5]{1,0} reduce-window(%x, %lo), window={size=2x2 stride=2x1 pad=0_0x1_0}, to_apply=%max
  %q = f32[5,4]{1,0} reduce-window(%x, %one), window={size=2x2}, to_apply=%weird
  ROOT %t = (f32[3,5]{1,0}, f32[5,4]{1,0}) tuple(%p, %q)
}
"""


def _expand_and_compare(text: str, *shapes: tuple[int, ...]) -> list[str]:
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    module = parse_module(text)
    before = evaluate(module, *args)
    assert WindowExpansion().run(module)
    after = evaluate(module, *args)
    for b, a in zip(before if isinstance(before, tuple) else [before],
                    after if isinstance(after, tuple) else [after]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    return [i.opcode for c in module.computations for i in c.instructions]


def test_convolution_becomes_im2col_and_a_dot():
    ops = _expand_and_compare(CONV, (2, 7, 6, 4), (3, 2, 2, 6))
    assert "convolution" not in ops and "dot" in ops and "pad" in ops
    assert ops.count("slice") == 6  # one per tap
    ops = _expand_and_compare(BATCH_GROUPS, (4, 3, 5), (4, 3, 2))
    assert "convolution" not in ops and ops.count("dot") == 1
    ops = _expand_and_compare(BIG_KERNEL, (3, 2, 6, 7), (4, 2, 4, 5))
    assert "convolution" not in ops and ops.count("slice") == 4  # one per position
    ops = _expand_and_compare(FEW_OUTPUTS, (2, 5, 6, 8), (3, 3, 8, 2))
    assert "convolution" not in ops and ops.count("dot") == 1 and ops.count("add") == 8


def test_reduce_window_becomes_slices():
    ops = _expand_and_compare(POOL, (6, 5))
    assert "reduce-window" not in ops
    assert ops.count("maximum") >= 3  # (the -inf init, max's identity, is dropped)
    assert "reduce" in ops  # the general combiner folds with a reduce over the taps


def test_no_change_without_windows():
    module = parse_module("""HloModule m

ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  ROOT %y = f32[3]{0} add(%x, %x)
}
""")
    assert not WindowExpansion().run(module)


def test_cpu_refuses_when_the_pass_is_disabled(monkeypatch):
    from ember.backends.cpu.compiler import optimize
    from ember.backends.cpu.errors import UnsupportedOnCpu

    monkeypatch.setenv("EMBER_DISABLE_PASSES", "window-expansion")
    module = parse_module(CONV)
    try:
        optimize(module)
    except UnsupportedOnCpu as e:
        assert "convolution" in str(e)
    else:
        raise AssertionError("expected UnsupportedOnCpu")
    # without the pipeline the expansion still runs (the code generator needs it)
    m = optimize(parse_module(CONV), run_passes=False)
    assert all(i.opcode != "convolution" for i in m.entry.instructions)
