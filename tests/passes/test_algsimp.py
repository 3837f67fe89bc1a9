"""Algebraic simplifier goldens: HLO text in -> algsimp + DCE -> checks on the text out.

Each rewrite has a positive case and a "no change" case.
"""

import numpy as np
import pytest

from ember.hlo import parse_module, print_module, verify
from ember.hlo.evaluator.core import evaluate
from ember.passes import AlgebraicSimplifier, DeadCodeElimination
from ember.passes.algsimp import ALL_REWRITES

F = "%p = f32[4] parameter(0)\n%q = f32[4] parameter(1)\n"
I = "%p = s32[4] parameter(0)\n%q = s32[4] parameter(1)\n"


def bcast(name, et, value):
    return (f"%{name}c = {et}[] constant({value})\n"
            f"%{name} = {et}[4] broadcast(%{name}c), dimensions={{}}\n")


def module(body: str) -> str:
    lines = body.strip().splitlines()
    lines[-1] = "ROOT " + lines[-1]
    return "HloModule t\n\nENTRY %t () -> f32[] {\n" + "\n".join(
        "  " + x for x in lines) + "\n}\n"


def _scatter(index: str, ishape: str, to_operand: str, combiner: str, rows: int = 4) -> str:
    """A scatter of a [rows, 3] window into f32[6, 5] at the constant index vector."""
    return (f"%p = f32[6,5] parameter(0)\n%u = f32[{rows},3] parameter(1)\n"
            f"%i = {ishape} constant({index})\n"
            f"%r = f32[6,5] scatter(%p, %i, %u), update_window_dims={{0,1}}, "
            f"inserted_window_dims={{}}, scatter_dims_to_operand_dims={to_operand}, "
            f"index_vector_dim=0, to_apply=%{combiner}")


def _row_scatter(index: str) -> str:
    """x.at[i].set(row) on f32[6, 5]: the scatter an integer index traces to."""
    return ("%p = f32[6,5] parameter(0)\n%u = f32[5] parameter(1)\n"
            f"%i = s32[1] constant({index})\n"
            "%r = f32[6,5] scatter(%p, %i, %u), update_window_dims={0}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=0, to_apply=%set")


# rewrite name, body, unsafe, expected root (None: no change expected)
CASES = [
    ("mul_one", F + bcast("one", "f32", 1) + "%r = f32[4] multiply(%p, %one)", False,
     "parameter()"),
    ("mul_one", F + bcast("two", "f32", 2) + "%r = f32[4] multiply(%p, %two)", False, None),
    ("int_mul_zero", I + bcast("z", "s32", 0) + "%r = s32[4] multiply(%z, %p)", False,
     "broadcast"),
    ("int_mul_zero", F + bcast("z", "f32", 0) + "%r = f32[4] multiply(%p, %z)", False, None),
    ("float_mul_zero", F + bcast("z", "f32", 0) + "%r = f32[4] multiply(%p, %z)", True,
     "broadcast"),
    ("div_one", F + bcast("one", "f32", 1) + "%r = f32[4] divide(%p, %one)", False,
     "parameter()"),
    ("div_one", F + bcast("one", "f32", 1) + "%r = f32[4] divide(%one, %p)", False, None),
    ("add_neg_zero", F + bcast("z", "f32", "-0") + "%r = f32[4] add(%p, %z)", False,
     "parameter()"),
    ("add_neg_zero", F + bcast("z", "f32", 0) + "%r = f32[4] add(%p, %z)", False, None),
    ("int_add_zero", I + bcast("z", "s32", 0) + "%r = s32[4] add(%p, %z)", False,
     "parameter()"),
    ("float_add_zero", F + bcast("z", "f32", 0) + "%r = f32[4] add(%p, %z)", True,
     "parameter()"),
    ("sub_zero", F + bcast("z", "f32", 0) + "%r = f32[4] subtract(%p, %z)", False,
     "parameter()"),
    ("sub_zero", F + bcast("z", "f32", "-0") + "%r = f32[4] subtract(%p, %z)", False, None),
    ("add_sub_cancel", F + "%s = f32[4] add(%p, %q)\n%r = f32[4] subtract(%s, %p)", True,
     "parameter()"),
    ("add_sub_cancel", F + "%s = f32[4] add(%p, %q)\n%r = f32[4] subtract(%s, %p)", False,
     None),
    ("neg_neg", F + "%n = f32[4] negate(%p)\n%r = f32[4] negate(%n)", False, "parameter()"),
    ("neg_neg", F + "%n = f32[4] abs(%p)\n%r = f32[4] negate(%n)", False, None),
    ("pow_two", F + bcast("two", "f32", 2) + "%r = f32[4] power(%p, %two)", False,
     "multiply(p, p)"),
    ("odd_of_negation", F + "%n = f32[4] negate(%p)\n%r = f32[4] erf(%n)", False,
     "negate(erf)"),
    ("odd_of_negation", F + bcast("c", "f32", 0.7) + "%n = f32[4] negate(%p)\n"
     "%m = f32[4] multiply(%c, %n)\n%r = f32[4] erf(%m)", False, "negate(erf)"),
    ("odd_of_negation", F + bcast("c", "f32", -3) + "%n = f32[4] negate(%p)\n"
     "%m = f32[4] divide(%n, %c)\n%r = f32[4] erf(%m)", False, "negate(erf)"),
    ("odd_of_negation", F + bcast("c", "f32", 2) + "%n = f32[4] negate(%p)\n"
     "%m = f32[4] divide(%c, %n)\n%r = f32[4] erf(%m)", False, "negate(erf)"),
    # a NaN made by 0 * inf has the sign the hardware picks: not through a variable
    ("odd_of_negation", F + "%n = f32[4] negate(%p)\n%m = f32[4] multiply(%q, %n)\n"
     "%r = f32[4] erf(%m)", False, None),
    ("odd_of_negation", F + bcast("c", "f32", "inf") + "%n = f32[4] negate(%p)\n"
     "%m = f32[4] multiply(%n, %c)\n%r = f32[4] erf(%m)", False, None),
    ("odd_of_negation", F + "%n = f32[4] negate(%p)\n%r = f32[4] erfc(%n)", False, None),
    ("odd_of_negation", F + "%n = f32[4] negate(%p)\n%m = f32[4] add(%q, %n)\n"
     "%r = f32[4] erf(%m)", False, None),
    ("pow_two", F + bcast("three", "f32", 3) + "%r = f32[4] power(%p, %three)", False, None),
    ("pow_one", F + bcast("one", "f32", 1) + "%r = f32[4] power(%p, %one)", False,
     "parameter()"),
    ("pow_half", F + bcast("h", "f32", 0.5) + "%r = f32[4] power(%p, %h)", True, "sqrt(p)"),
    ("pow_half", F + bcast("h", "f32", 0.5) + "%r = f32[4] power(%p, %h)", False, None),
    ("reassociate_constants", F + bcast("a", "f32", 2) + bcast("b", "f32", 3)
     + "%s = f32[4] add(%p, %a)\n%r = f32[4] add(%s, %b)", True, "add(p, add"),
    ("reassociate_constants", F + bcast("a", "f32", 2) + bcast("b", "f32", 3)
     + "%s = f32[4] add(%p, %a)\n%r = f32[4] add(%s, %b)", False, None),
    ("reshape_reshape", F + "%a = f32[2,2] reshape(%p)\n%r = f32[1,4] reshape(%a)", False,
     "reshape(p)"),
    ("reshape_noop", F + "%r = f32[4] reshape(%p)", False, "parameter()"),
    ("reshape_noop", F + "%r = f32[2,2] reshape(%p)", False, None),
    ("transpose_identity", "%p = f32[2,3] parameter(0)\n%r = f32[2,3] transpose(%p), "
     "dimensions={0,1}", False, "parameter()"),
    ("transpose_transpose", "%p = f32[2,3,4] parameter(0)\n%a = f32[3,4,2] transpose(%p), "
     "dimensions={1,2,0}\n%r = f32[4,3,2] transpose(%a), dimensions={1,0,2}", False,
     "transpose(p)"),
    ("transpose_transpose", "%p = f32[2,3] parameter(0)\n%r = f32[3,2] transpose(%p), "
     "dimensions={1,0}", False, None),
    # vmap's per-row broadcast: [8,256] from a row value, transposed to [256,8]
    ("transpose_of_broadcast", "%p = f32[256] parameter(0)\n%b = f32[8,256] broadcast(%p), "
     "dimensions={1}\n%r = f32[256,8] transpose(%b), dimensions={1,0}", False,
     "broadcast(p)"),
    ("transpose_of_broadcast", "%p = f32[2,3] parameter(0)\n%b = f32[2,3,4] broadcast(%p), "
     "dimensions={0,1}\n%r = f32[4,2,3] transpose(%b), dimensions={2,0,1}", False,
     "broadcast(p)"),
    # A's dims would come out swapped: kept
    ("transpose_of_broadcast", "%p = f32[2,3] parameter(0)\n%b = f32[2,3,4] broadcast(%p), "
     "dimensions={0,1}\n%r = f32[3,2,4] transpose(%b), dimensions={1,0,2}", False, None),
    ("broadcast_broadcast", "%p = f32[] parameter(0)\n%a = f32[3] broadcast(%p), "
     "dimensions={}\n%r = f32[2,3] broadcast(%a), dimensions={1}", False, "broadcast(p)"),
    ("broadcast_noop", F + "%r = f32[4] broadcast(%p), dimensions={0}", False, "parameter()"),
    ("slice_full", F + "%r = f32[4] slice(%p), slice={[0:4:1]}", False, "parameter()"),
    ("slice_full", F + "%r = f32[3] slice(%p), slice={[1:4:1]}", False, None),
    ("slice_slice", "%p = f32[20] parameter(0)\n%a = f32[9] slice(%p), slice={[2:19:2]}\n"
     "%r = f32[3] slice(%a), slice={[1:8:3]}", False, "slice(p)"),
    ("pad_noop", "%p = f32[2,3] parameter(0)\n%z = f32[] constant(0)\n"
     "%r = f32[2,3] pad(%p, %z), padding=0_0_0x0_0_0", False, "parameter()"),
    ("pad_noop", "%p = f32[2,3] parameter(0)\n%z = f32[] constant(0)\n"
     "%r = f32[2,5] pad(%p, %z), padding=0_0_0x0_0_1", False, None),
    ("convert_same_type", F + "%r = f32[4] convert(%p)", False, "parameter()"),
    ("convert_same_type", F + "%r = s32[4] convert(%p)", False, None),
    ("select_constant_pred", F + bcast("t", "pred", "true") + "%r = f32[4] select(%t, %p, %q)",
     False, "parameter()"),
    ("select_constant_pred", F + "%c = pred[4] compare(%p, %q), direction=LT\n"
     "%r = f32[4] select(%c, %p, %q)", False, None),
    ("select_same", F + "%c = pred[4] compare(%p, %q), direction=LT\n"
     "%r = f32[4] select(%c, %p, %p)", False, "parameter()"),
    ("int_compare_self", I + "%r = pred[4] compare(%p, %p), direction=LE", False, "broadcast"),
    ("int_compare_self", F + "%r = pred[4] compare(%p, %p), direction=LE", False, None),
    ("reduce_idempotent_broadcast", "%p = f32[] parameter(0)\n%b = f32[4,3] broadcast(%p), "
     "dimensions={}\n%i = f32[] constant(-inf)\n%r = f32[3] reduce(%b, %i), dimensions={0}, "
     "to_apply=%max", False, "broadcast(maximum"),
    ("reduce_sum_broadcast", "%p = f32[] parameter(0)\n%b = f32[4,3] broadcast(%p), "
     "dimensions={}\n%i = f32[] constant(0)\n%r = f32[3] reduce(%b, %i), dimensions={0}, "
     "to_apply=%add", True, "broadcast(add"),
    ("reduce_sum_broadcast", "%p = f32[] parameter(0)\n%b = f32[4,3] broadcast(%p), "
     "dimensions={}\n%i = f32[] constant(0)\n%r = f32[3] reduce(%b, %i), dimensions={0}, "
     "to_apply=%add", False, None),
    # sum(x.T, axis=1) reads x's rows: reduce(x, {0}); kept dims in order => no transpose
    ("reduce_of_transpose", "%p = f32[4,3] parameter(0)\n%t = f32[3,4] transpose(%p), "
     "dimensions={1,0}\n%i = f32[] constant(0)\n%r = f32[3] reduce(%t, %i), dimensions={1}, "
     "to_apply=%add", False, "reduce(p, constant)"),
    # kept dims come out swapped: the (smaller) reduced result is transposed back
    ("reduce_of_transpose", "%p = f32[2,3,4] parameter(0)\n%t = f32[4,2,3] transpose(%p), "
     "dimensions={2,0,1}\n%i = f32[] constant(0)\n%r = f32[4,3] reduce(%t, %i), "
     "dimensions={1}, to_apply=%add", False, "transpose(reduce)"),
    ("reduce_of_transpose", "%p = f32[4,3] parameter(0)\n%i = f32[] constant(0)\n"
     "%r = f32[4] reduce(%p, %i), dimensions={1}, to_apply=%add", False, None),
    # a unit dimension summed away: one element per output, init kept (-0.0 + 0.0 is +0.0)
    ("reduce_unit_dims", "%p = f32[4,1] parameter(0)\n%i = f32[] constant(0)\n"
     "%r = f32[4] reduce(%p, %i), dimensions={1}, to_apply=%add", False,
     "add(reshape, broadcast)"),
    ("reduce_unit_dims", "%p = f32[1] parameter(0)\n%i = f32[] constant(-inf)\n"
     "%r = f32[] reduce(%p, %i), dimensions={0}, to_apply=%max", False,
     "maximum(reshape, constant)"),
    ("reduce_unit_dims", "%p = f32[4,2] parameter(0)\n%i = f32[] constant(0)\n"
     "%r = f32[4] reduce(%p, %i), dimensions={1}, to_apply=%add", False, None),
    ("reduce_of_reduce", "%p = f32[4,3,2] parameter(0)\n%i = f32[] constant(0)\n"
     "%a = f32[4,2] reduce(%p, %i), dimensions={1}, to_apply=%add\n"
     "%r = f32[2] reduce(%a, %i), dimensions={0}, to_apply=%add", False, "reduce(p, constant)"),
    ("reduce_of_reduce", "%p = f32[4,3,2] parameter(0)\n%i = f32[] constant(2)\n"
     "%a = f32[4,2] reduce(%p, %i), dimensions={1}, to_apply=%max\n"
     "%r = f32[2] reduce(%a, %i), dimensions={0}, to_apply=%max", False, "reduce(p, constant)"),
    # a sum from 1.0 counts its init once per inner output: not one reduction
    ("reduce_of_reduce", "%p = f32[4,3,2] parameter(0)\n%i = f32[] constant(1)\n"
     "%a = f32[4,2] reduce(%p, %i), dimensions={1}, to_apply=%add\n"
     "%r = f32[2] reduce(%a, %i), dimensions={0}, to_apply=%add", False, None),
    ("reduce_of_reduce", "%p = f32[4,3,2] parameter(0)\n%i = f32[] constant(0)\n"
     "%a = f32[4,2] reduce(%p, %i), dimensions={1}, to_apply=%add\n"
     "%r = f32[2] reduce(%a, %i), dimensions={0}, to_apply=%max", False, None),
    ("add_zero_to_sum", "%p = f32[4,3] parameter(0)\n%i = f32[] constant(0)\n"
     "%s = f32[4] reduce(%p, %i), dimensions={1}, to_apply=%add\n" + bcast("z", "f32", 0)
     + "%r = f32[4] add(%s, %z)", False, "reduce(p, constant)"),
    # a sum from -0.0 may be -0.0
    ("add_zero_to_sum", "%p = f32[4,3] parameter(0)\n%i = f32[] constant(-0)\n"
     "%s = f32[4] reduce(%p, %i), dimensions={1}, to_apply=%add\n" + bcast("z", "f32", 0)
     + "%r = f32[4] add(%s, %z)", False, None),
    ("add_zero_to_sum", F + bcast("z", "f32", 0) + "%r = f32[4] add(%p, %z)", False, None),
    ("extremum_identity", F + bcast("m", "f32", "-inf") + "%r = f32[4] maximum(%m, %p)", False,
     "parameter()"),
    ("extremum_identity", F + bcast("m", "f32", "inf") + "%r = f32[4] minimum(%p, %m)", False,
     "parameter()"),
    ("extremum_identity", F + bcast("m", "f32", "inf") + "%r = f32[4] maximum(%p, %m)", False,
     None),
    # transpose(dz^T h) => h^T dz: [3,5] x [3,7] contracting 0 gives [5,7]; transposed [7,5]
    ("transpose_of_dot", "%a = f32[3,5] parameter(0)\n%b = f32[3,7] parameter(1)\n"
     "%d = f32[5,7] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
     "%r = f32[7,5] transpose(%d), dimensions={1,0}", False, "dot(b, a)"),
    ("transpose_of_dot", "%a = f32[2,3,5] parameter(0)\n%b = f32[2,3,7] parameter(1)\n"
     "%d = f32[2,5,7] dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={1}, "
     "rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
     "%r = f32[2,7,5] transpose(%d), dimensions={0,2,1}", False, "dot(b, a)"),
    # the batch dimension moves: not a swap of the operands
    ("transpose_of_dot", "%a = f32[2,3,5] parameter(0)\n%b = f32[2,3,7] parameter(1)\n"
     "%d = f32[2,5,7] dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={1}, "
     "rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
     "%r = f32[5,2,7] transpose(%d), dimensions={1,0,2}", False, None),
    # the product has another user: swapping would compute it twice
    ("transpose_of_dot", "%a = f32[3,5] parameter(0)\n%b = f32[3,7] parameter(1)\n"
     "%d = f32[5,7] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
     "%t = f32[7,5] transpose(%d), dimensions={1,0}\n%n = f32[5,7] negate(%d)\n"
     "%u = f32[5,7] transpose(%t), dimensions={1,0}\n%r = f32[5,7] add(%u, %n)", False, None),
    # x.at[1:5, 2:5].set(u): one window at constant starts that fits
    ("scatter_to_update_slice", _scatter("{1, 2}", "s32[2]", "{0,1}", "set"), False,
     "dynamic-update-slice(p, u, constant, constant)"),
    # x.at[:, 2:5].set(u): the index names one dimension, the other starts at 0
    ("scatter_to_update_slice", _scatter("{2}", "s32[1]", "{1}", "set", rows=6), False,
     "dynamic-update-slice(p, u, constant, constant)"),
    # the window does not fit at row 3 (3 + 4 > 6): the scatter skips it, an update clamps
    ("scatter_to_update_slice", _scatter("{3, 2}", "s32[2]", "{0,1}", "set"), False, None),
    ("scatter_to_update_slice", _scatter("{-1, 2}", "s32[2]", "{0,1}", "set"), False, None),
    # a combining scatter (x.at[...].add) is not an overwrite
    ("scatter_to_update_slice", _scatter("{1, 2}", "s32[2]", "{0,1}", "add"), False, None),
    # x.at[:4, :3].set(u): an index vector of no components, the window at the origin
    ("scatter_to_update_slice", _scatter("{}", "s32[0]", "{}", "set"), False,
     "dynamic-update-slice(p, u, constant, constant)"),
    # x.at[2].set(row): the row's dimension is inserted, the update reshaped to [1, 5]
    ("scatter_to_update_slice", _row_scatter("{2}"), False,
     "dynamic-update-slice(p, reshape, constant, constant)"),
    # x.at[6].set(row) is out of range: the scatter skips it
    ("scatter_to_update_slice", _row_scatter("{6}"), False, None),
]

REDUCERS = """%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}

%add (x.1: f32[], y.1: f32[]) -> f32[] {
  %x.1 = f32[] parameter(0)
  %y.1 = f32[] parameter(1)
  ROOT %a = f32[] add(%x.1, %y.1)
}

%set (x.2: f32[], y.2: f32[]) -> f32[] {
  %x.2 = f32[] parameter(0)
  ROOT %y.2 = f32[] parameter(1)
}

"""


def _module_with_reducers(body: str) -> str:
    return module(body).replace("HloModule t\n\n", "HloModule t\n\n" + REDUCERS)


@pytest.mark.parametrize("name, body, unsafe, expect", CASES,
                         ids=[f"{c[0]}-{'yes' if c[3] else 'no'}" for c in CASES])
def test_rewrite(name, body, unsafe, expect):
    text = _module_with_reducers(body) if "to_apply" in body else module(body)
    m = parse_module(text)
    before = print_module(m)
    p = AlgebraicSimplifier(unsafe_math=unsafe)
    changed = p.run(m)
    verify(m)
    if expect is None:
        assert name not in p.applied
        assert changed or print_module(m) == before
        return
    assert name in p.applied, p.applied
    DeadCodeElimination().run(m)
    verify(m)
    assert _render(m.entry.root).startswith(expect), _render(m.entry.root)


def _render(inst) -> str:
    """`opcode(args)`, naming parameters by name and everything else by opcode."""
    if inst.opcode == "parameter":
        return "parameter()"
    args = [o.name if o.opcode == "parameter" else o.opcode for o in inst.operands]
    return f"{inst.opcode}({', '.join(args)})"


def test_every_rewrite_has_a_golden_and_a_doc():
    from test_algsimp_control_flow import CASES as CONTROL_FLOW_CASES  # multi-computation

    tested = {c[0] for c in CASES} | {c[0] for c in CONTROL_FLOW_CASES}
    for rw in ALL_REWRITES:
        assert "=>" in rw.doc, rw.name
    missing = {rw.name for rw in ALL_REWRITES} - tested
    assert not missing, missing


_SPECIAL = np.array([-0.0, 0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 3.0, -0.0, 4.0])


def _special_args(m, seed: int) -> list[np.ndarray]:
    """Arguments of every parameter drawn from signed zeros, infinities, NaN and small exact
    values (so sums in any order are exact and every edge case reaches the rewrite)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in m.entry.parameters:
        dt, dims = p.shape.dtype, p.shape.dimensions
        pool = _SPECIAL if dt.kind == "f" else np.arange(-3, 4)
        out.append(rng.choice(pool, size=dims).astype(dt))
    return out


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "f":
        return a.dtype == b.dtype and np.array_equal(a, b)
    return (a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
            and np.array_equal(np.signbit(a), np.signbit(b)))


EXACT = [c for c in CASES if c[3] is not None and not c[2]]


@pytest.mark.parametrize("name, body, unsafe, expect", EXACT, ids=[c[0] for c in EXACT])
def test_exact_rewrite_keeps_values(name, body, unsafe, expect):
    """Every exact rewrite gives the NumPy evaluator's values bit for bit (NaN, inf and the
    sign of zero included) on inputs full of edge values."""
    text = _module_with_reducers(body) if "to_apply" in body else module(body)
    before, after = parse_module(text), parse_module(text)
    p = AlgebraicSimplifier()
    p.run(after)
    assert name in p.applied
    for seed in range(8):
        args = _special_args(before, seed)
        want, got = evaluate(before, *args), evaluate(after, *args)
        assert _same_bits(want, got), (seed, args, want, got)
