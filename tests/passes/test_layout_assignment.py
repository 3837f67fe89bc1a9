"""Layout assignment goldens: HLO text in -> LayoutAssignment -> checks on the text out
(constraints, copies inserted where consumers disagree, redundant copies removed, transposes
folded into layouts), values unchanged under the interpreter, the printed result parses back
to the same text; "no change" cases; and the CPU pipeline compiled against NumPy with
layouts that are not row-major inside (fusion on and off)."""

from __future__ import annotations

import numpy as np
import pytest

from ember.backends import cpu
from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator import evaluate
from ember.hlo.shape import Shape, layout_strides, row_major, transpose_operand_layout
from ember.passes.layout_assignment import LayoutAssignment, is_bitcast_transpose


def module(params: str, body: str, out: str) -> str:
    lines = body.strip().splitlines()
    lines[-1] = "ROOT " + lines[-1]
    return f"HloModule m\n\nENTRY %main ({params}) -> {out} {{\n" + "\n".join(
        "  " + x for x in lines) + "\n}\n"


def run_pass(text: str, seed: int = 0):
    """Parse, run the pass, verify, check values and the text round trip; the module."""
    m = parse_module(text)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(p.shape.dimensions).astype(p.shape.dtype)
            for p in m.entry.parameters]
    before = evaluate(m, *args)
    changed = LayoutAssignment().run(m)
    verify(m)
    after = evaluate(m, *args)
    for x, y in zip(before if isinstance(before, tuple) else (before,),
                    after if isinstance(after, tuple) else (after,)):
        np.testing.assert_array_equal(x, y)
    out = print_module(m)
    assert print_module(parse_module(out)) == out
    return m, changed, out


def inst(m, name):
    return next(i for i in m.entry.instructions if i.name == name)


# -- shape helpers ----------------------------------------------------------------------------


def test_layout_helpers():
    assert row_major(3) == (2, 1, 0)
    assert layout_strides((4, 8), (1, 0)) == (8, 1)
    assert layout_strides((4, 8), (0, 1)) == (1, 4)
    assert layout_strides((2, 3, 5), (1, 2, 0)) == (15, 1, 3)
    assert transpose_operand_layout((1, 0), (1, 0)) == (0, 1)
    assert Shape("f32", (2, 3)).is_row_major and Shape("f32", (2, 3), (1, 0)).is_row_major
    assert not Shape("f32", (2, 3), (0, 1)).is_row_major
    s = Shape.tuple_of([Shape("f32", (2, 3)), Shape("s32", ())])
    assert str(s.with_row_major_layout()) == "(f32[2,3]{1,0}, s32[])"


def test_layouts_print_only_after_the_pass():
    text = module("x: f32[4,8]", "%x = f32[4,8] parameter(0)\n%n = f32[4,8] negate(%x)",
                  "f32[4,8]")
    assert "{1,0}" not in print_module(parse_module(text))
    m, changed, out = run_pass(text)
    assert changed
    assert "%x = f32[4,8]{1,0} parameter(0)" in out
    assert "ROOT %n = f32[4,8]{1,0} negate(%x)" in out
    assert "-> f32[4,8]{1,0}" in out


# -- constraints --------------------------------------------------------------------------------


def test_boundaries_are_row_major_and_elementwise_propagates():
    text = module("x: f32[3,4,5], y: f32[5]",
                  "%x = f32[3,4,5] parameter(0)\n%y = f32[5] parameter(1)\n"
                  "%e = f32[3,4,5] exponential(%x)\n"
                  "%b = f32[3,4,5] broadcast(%y), dimensions={2}\n"
                  "%a = f32[3,4,5] add(%e, %b)", "f32[3,4,5]")
    m, _, out = run_pass(text)
    for name in ("x", "e", "b", "a"):
        assert inst(m, name).shape.layout == (2, 1, 0), name
    assert inst(m, "y").shape.layout == (0,)
    assert " copy(" not in out


def test_transpose_of_a_parameter_is_a_bitcast_for_a_reduction():
    # column sum written as a row sum of x.T: the transpose takes layout {0,1}, so it is a
    # bitcast of the row-major x and the reduce reads x's memory as it lies
    text = module("x: f32[6,4]",
                  "%x = f32[6,4] parameter(0)\n%z = f32[] constant(0)\n"
                  "%t = f32[4,6] transpose(%x), dimensions={1,0}\n"
                  "%r = f32[4] reduce(%t, %z), dimensions={1}, to_apply=%add",
                  "f32[4]")
    text = text.replace("ENTRY", "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] "
                        "parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, "
                        "%b)\n}\n\nENTRY")
    m, _, out = run_pass(text)
    assert "%t = f32[4,6]{0,1} transpose(%x), dimensions={1,0}" in out
    assert is_bitcast_transpose(inst(m, "t"))
    assert "f32[4]{0} reduce(%t, %z)" in out
    assert " copy(" not in out


def test_transpose_folds_into_the_layout_of_its_producer():
    # exp(x).T @ y without transpose folding: exp takes {0,1}, the transpose is a bitcast,
    # and the data movement happens once, in the copy fused into exp's kernel
    text = module("x: f32[6,4], y: f32[6,3]",
                  "%x = f32[6,4] parameter(0)\n%y = f32[6,3] parameter(1)\n"
                  "%e = f32[6,4] exponential(%x)\n"
                  "%t = f32[4,6] transpose(%e), dimensions={1,0}\n"
                  "%n = f32[4,6] negate(%t)",
                  "f32[4,6]")
    m, _, out = run_pass(text)
    assert "%e = f32[6,4]{0,1} exponential(%copy" in out
    assert "%t = f32[4,6]{1,0} transpose(%e), dimensions={1,0}" in out
    assert is_bitcast_transpose(inst(m, "t"))
    assert out.count(" copy(") == 1
    assert "f32[6,4]{0,1} copy(%x)" in out


def test_dot_operands_are_row_major_the_trans_flag_does_the_rest():
    text = module("x: f32[5,3], y: f32[5,4]",
                  "%x = f32[5,3] parameter(0)\n%y = f32[5,4] parameter(1)\n"
                  "%d = f32[3,4] dot(%x, %y), lhs_contracting_dims={0}, "
                  "rhs_contracting_dims={0}", "f32[3,4]")
    m, _, out = run_pass(text)
    assert "ROOT %d = f32[3,4]{1,0} dot(%x, %y)" in out
    assert " copy(" not in out


# -- copies -------------------------------------------------------------------------------------


def test_hard_requests_beat_a_transposes_wish():
    # t = e.T wishes e laid out {0,1} (then it is a bitcast); two elementwise users ask for
    # e row-major (hard): e stays row-major and the transpose moves the data, no copy
    text = module("x: f32[4,4]",
                  "%x = f32[4,4] parameter(0)\n%e = f32[4,4] exponential(%x)\n"
                  "%t = f32[4,4] transpose(%e), dimensions={1,0}\n"
                  "%u = f32[4,4] tanh(%t)\n"
                  "%a = f32[4,4] multiply(%e, %u)\n"
                  "%s = f32[4,4] subtract(%a, %e)", "f32[4,4]")
    m, _, out = run_pass(text)
    assert inst(m, "e").shape.layout == (1, 0)
    assert "%t = f32[4,4]{1,0} transpose(%e), dimensions={1,0}" in out
    assert not is_bitcast_transpose(inst(m, "t"))
    assert " copy(" not in out


def test_result_pins_the_producer_and_the_transpose_moves_data():
    # n feeds the result (row-major) and, transposed, an elementwise op whose operand must
    # share its layout; the tuple forces both results row-major, so the elementwise op on
    # the transpose wants the transpose row-major, the transpose wishes n {0,1}, n is
    # pinned row-major by the result: exactly one place moves data
    text = module("x: f32[3,5]",
                  "%x = f32[3,5] parameter(0)\n%n = f32[3,5] negate(%x)\n"
                  "%e = f32[3,5] exponential(%n)\n"
                  "%t = f32[5,3] transpose(%e), dimensions={1,0}\n"
                  "%s = f32[5,3] sine(%t)\n"
                  "%r = (f32[3,5], f32[5,3]) tuple(%e, %s)", "(f32[3,5], f32[5,3])")
    m, _, out = run_pass(text)
    assert "ROOT %r = (f32[3,5]{1,0}, f32[5,3]{1,0}) tuple(%e, %s)" in out
    assert inst(m, "e").shape.layout == (1, 0)
    assert not is_bitcast_transpose(inst(m, "t"))  # the one data movement
    assert " copy(" not in out


def test_elementwise_disagreement_inserts_exactly_one_copy():
    # a = e + 1 wants e row-major (root); t = transpose(e) feeds b = exp(t) which the
    # tuple pins row-major, so t is row-major and wishes e {0,1}; the tie-break goes to
    # the hard request. With e2 = e * e pinned {0,1} through a second transpose chain two
    # elementwise consumers disagree hard: one copy of e is inserted for the loser.
    text = module("x: f32[3,5]",
                  "%x = f32[3,5] parameter(0)\n%e = f32[3,5] exponential(%x)\n"
                  "%a = f32[3,5] negate(%e)\n"
                  "%m = f32[3,5] multiply(%e, %e)\n"
                  "%t = f32[5,3] transpose(%m), dimensions={1,0}\n"
                  "%c = f32[5,3] cosine(%t)\n"
                  "%r = (f32[3,5], f32[5,3]) tuple(%a, %c)", "(f32[3,5], f32[5,3])")
    m, _, out = run_pass(text)
    # m takes {0,1} from the transpose's wish; its operand e is pinned row-major by a
    assert inst(m, "m").shape.layout == (0, 1)
    assert is_bitcast_transpose(inst(m, "t"))
    assert inst(m, "e").shape.layout == (1, 0)
    assert out.count(" copy(") == 1
    assert "f32[3,5]{0,1} copy(%e)" in out
    cp = next(i for i in m.entry.instructions if i.opcode == "copy")
    assert [u.name for u in cp.users] == ["m"]


def test_redundant_copies_are_removed():
    text = module("x: f32[3,5]",
                  "%x = f32[3,5] parameter(0)\n%c = f32[3,5] copy(%x)\n"
                  "%c2 = f32[3,5] copy(%c)\n%n = f32[3,5] negate(%c2)", "f32[3,5]")
    m, _, out = run_pass(text)
    assert " copy(" not in out
    assert "ROOT %n = f32[3,5]{1,0} negate(%x)" in out


def test_a_copy_that_changes_layout_stays():
    # the transpose wishes its operand {0,1}: the copy takes it and the transpose is free
    text = module("x: f32[3,5]",
                  "%x = f32[3,5] parameter(0)\n%c = f32[3,5] copy(%x)\n"
                  "%t = f32[5,3] transpose(%c), dimensions={1,0}", "f32[5,3]")
    m, _, out = run_pass(text)
    assert "%c = f32[3,5]{0,1} copy(%x)" in out
    assert is_bitcast_transpose(inst(m, "t"))


# -- no change ------------------------------------------------------------------------------------


def test_no_change_when_layouts_are_already_set():
    text = module("x: f32[3,5]", "%x = f32[3,5]{1,0} parameter(0)\n"
                  "%n = f32[3,5]{0,1} negate(%x)", "f32[3,5]")
    m = parse_module(text)
    before = print_module(m)
    assert not LayoutAssignment().run(m)
    assert print_module(m) == before


def test_other_computations_keep_no_layout():
    text = module("x: f32[3,5]",
                  "%x = f32[3,5] parameter(0)\n%z = f32[] constant(0)\n"
                  "%r = f32[3] reduce(%x, %z), dimensions={1}, to_apply=%add", "f32[3]")
    text = text.replace("ENTRY", "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] "
                        "parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, "
                        "%b)\n}\n\nENTRY")
    m, _, out = run_pass(text)
    add = m.computation("add")
    assert all(i.shape.layout is None for i in add.instructions)
    assert "ROOT %r = f32[3]{0} reduce(%x, %z)" in out


# -- compiled through the CPU pipeline (layouts reach the kernels) --------------------------------


def _compile_check(text: str, monkeypatch, fusion: bool):
    if not fusion:
        monkeypatch.setenv("EMBER_DISABLE_PASSES", "fusion")
    m = parse_module(text)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(p.shape.dimensions).astype(p.shape.dtype)
            for p in m.entry.parameters]
    exe = cpu.compile(m, use_cache=False)
    got, want = exe(*args), evaluate(m, *args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)
    return exe


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("dims", [(3, 5), (33, 7), (1, 9), (16, 16)])
def test_compiled_with_transposed_layouts(monkeypatch, fusion, dims):
    r, c = dims
    text = module(f"x: f32[{r},{c}]",
                  f"%x = f32[{r},{c}] parameter(0)\n%e = f32[{r},{c}] exponential(%x)\n"
                  f"%a = f32[{r},{c}] negate(%e)\n"
                  f"%m = f32[{r},{c}] multiply(%e, %e)\n"
                  f"%t = f32[{c},{r}] transpose(%m), dimensions={{1,0}}\n"
                  f"%k = f32[{c},{r}] cosine(%t)\n"
                  f"%r = (f32[{r},{c}], f32[{c},{r}]) tuple(%a, %k)",
                  f"(f32[{r},{c}], f32[{c},{r}])")
    exe = _compile_check(text, monkeypatch, fusion)
    if not fusion:  # buffers laid out {0,1} exist between the kernels
        assert "{0,1}" in exe.as_text()


@pytest.mark.parametrize("fusion", [True, False])
@pytest.mark.parametrize("rdim", [0, 1, 2])
def test_compiled_reductions_of_transposed_3d(monkeypatch, fusion, rdim):
    text = module("x: f32[5,7,3]",
                  "%x = f32[5,7,3] parameter(0)\n%z = f32[] constant(0)\n"
                  "%e = f32[5,7,3] exponential(%x)\n"
                  "%t = f32[7,3,5] transpose(%e), dimensions={1,2,0}\n"
                  f"%r = reduce(%t, %z), dimensions={{{rdim}}}, to_apply=%add", "f32[]")
    out_dims = [d for i, d in enumerate((7, 3, 5)) if i != rdim]
    shape = f"f32[{','.join(map(str, out_dims))}]"
    text = text.replace("%r = reduce", f"%r = {shape} reduce").replace("-> f32[]", f"-> {shape}")
    text = text.replace("ENTRY", "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] "
                        "parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, "
                        "%b)\n}\n\nENTRY")
    _compile_check(text, monkeypatch, fusion)


def test_a_layout_changing_kernel_never_writes_in_place():
    # copy {1,0} -> {0,1} reads element i at another offset than it writes it
    from ember.backends.cpu.plan.in_place import in_place_operands

    text = module("x: f32[3,5]",
                  "%x = f32[3,5] parameter(0)\n%n = f32[3,5] negate(%x)\n"
                  "%c = f32[3,5] copy(%n)\n%t = f32[5,3] transpose(%c), dimensions={1,0}",
                  "f32[5,3]")
    m, _, out = run_pass(text)
    c = inst(m, "c")
    assert c.shape.layout == (0, 1) and inst(m, "n").shape.layout == (1, 0)
    assert in_place_operands(c) == []
    assert in_place_operands(inst(m, "n")) == [0]
