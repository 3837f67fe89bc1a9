"""The in-place rule (backends/cpu/plan/in_place.py): which operands a kernel may overwrite."""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.backends.cpu.plan.in_place import RERUN_OPCODES, in_place_operands
from ember.hlo.ir import Instruction
from ember.lowering import lower_jaxpr


def _kernels(fn, *args, disable: str = "") -> list[Instruction]:
    import os

    old = os.environ.get("EMBER_DISABLE_PASSES")
    os.environ["EMBER_DISABLE_PASSES"] = disable
    try:
        m = lower_jaxpr(ember.make_jaxpr(fn)(*args), "f").module.clone()
        cpu.pipeline().run(m)
    finally:
        if old is None:
            os.environ.pop("EMBER_DISABLE_PASSES")
        else:
            os.environ["EMBER_DISABLE_PASSES"] = old
    return [i for i in m.entry.post_order()
            if i.opcode not in ("parameter", "constant", "tuple", "get-tuple-element")]


def test_rerun_opcodes_match_the_math_library():
    from ember.backends.cpu import mathlib

    assert set(mathlib._REDUCED) == RERUN_OPCODES


def test_elementwise_fusion_may_overwrite_same_width_operands():
    x = np.ones((8, 3), np.float32)
    (k,) = _kernels(lambda a, b: jnp.exp(a) * 2 + b, x, x)
    assert k.opcode == "fusion"
    assert sorted(in_place_operands(k)) == [0, 1]


def test_broadcast_operand_is_not_overwritten():
    x = np.ones((8, 3), np.float32)
    row = np.ones((3,), np.float32)
    (k,) = _kernels(lambda a, r: a * r, x, row)
    ops = in_place_operands(k)
    names = [k.operands[i].shape.dimensions for i in ops]
    assert names == [(8, 3)]


def test_transpose_and_wider_results_are_not_in_place():
    x = np.ones((4, 4), np.float32)
    (k,) = _kernels(lambda a: a.T + 1, x)
    assert in_place_operands(k) == []
    (k,) = _kernels(lambda a: a.astype(np.int16) + 1, x)
    assert in_place_operands(k) == []  # f32 -> i16: the element widths differ


def test_same_width_conversion_is_in_place():
    x = np.ones((5,), np.float32)
    (k,) = _kernels(lambda a: (a * 2).astype(np.int32), x)
    assert in_place_operands(k) == [0]


def test_kernels_that_may_rerun_are_never_in_place():
    x = np.ones((5,), np.float32)
    (k,) = _kernels(lambda a: jnp.sin(a) + 1, x)
    assert in_place_operands(k) == []


def test_reductions_and_multi_output_are_not_in_place():
    x = np.ones((5, 7), np.float32)
    ks = _kernels(lambda a: (a.sum(axis=1), a.max(axis=1)), x)
    assert all(in_place_operands(k) == [] for k in ks)


def test_lone_elementwise_ops_with_fusion_disabled():
    x = np.ones((6,), np.float32)
    ks = [k for k in _kernels(lambda a: jnp.exp(a + 1) * 3, x, disable="fusion")
          if k.opcode != "broadcast"]  # the scalar constants, materialized without fusion
    assert [k.opcode for k in ks] == ["add", "exponential", "multiply"]
    # add reads a parameter (never overwritten: buffer assignment only reuses temporaries),
    # the rule itself allows the same-shape operands.
    assert in_place_operands(ks[1]) == [0]
    assert in_place_operands(ks[2]) == [0, 1]  # exp(...) and the broadcast 3


def test_a_read_at_another_index_anywhere_down_the_chain_refuses():
    # a reaches the root elementwise (exp, *, +) and through a reverse; b only elementwise
    x = np.ones(16, np.float32)
    (k,) = _kernels(lambda a, b: jnp.exp(a) * b + jnp.flip(a * 2.0), x, x)
    assert k.opcode == "fusion" and len(k.operands) == 2
    assert in_place_operands(k) == [1 - _index_of_a(k)]


def _index_of_a(k: Instruction) -> int:
    """The operand of the fusion the reverse reads (through the multiply)."""
    comp = k.fused_computation
    rev = next(i for i in comp.instructions if i.opcode == "reverse")
    params = [p for p in comp.parameters if _reaches(p, rev)]
    (p,) = params
    return p.parameter_number


def _reaches(src: Instruction, dst: Instruction) -> bool:
    stack, seen = [src], set()
    while stack:
        i = stack.pop()
        if i is dst:
            return True
        if id(i) not in seen:
            seen.add(id(i))
            stack.extend(i.users)
    return False


def test_every_parameter_of_a_long_elementwise_chain_is_in_place():
    x = np.ones(16, np.float32)
    n = 40

    def chain(*ps):
        s = ps[0]
        for p in ps[1:]:
            s = s * 0.5 + p
        return s

    (k,) = _kernels(chain, *([x] * n))
    assert sorted(in_place_operands(k)) == list(range(n))
