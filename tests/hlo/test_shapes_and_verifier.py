"""Shape inference errors, Shape printing, and the verifier catching broken modules."""

import numpy as np
import pytest

from ember.hlo import Builder, Instruction, Shape, ShapeError, VerificationError, verify
from ember.hlo.shape import element_type_from_numpy, numpy_dtype


def test_shape_str_and_conversions():
    assert str(Shape("f32", (8, 3))) == "f32[8,3]"
    assert str(Shape("pred", ())) == "pred[]"
    assert str(Shape.tuple_of([Shape("f32", (3,)), Shape("s32", ())])) == "(f32[3], s32[])"
    assert str(Shape("f32", (8, 3), (1, 0))) == "f32[8,3]{1,0}"
    assert hash(Shape("f32", (2,))) == hash(Shape("f32", [2]))
    assert element_type_from_numpy(np.float32) == "f32"
    assert numpy_dtype("u16") == np.uint16
    with pytest.raises(ValueError):
        Shape("f31", (2,))


@pytest.mark.parametrize("make, msg", [
    (lambda b, x, y: b.add(x, y), "equal shapes"),
    (lambda b, x, y: b.op("compare", (x, x)), "direction"),
    (lambda b, x, y: b.shift_left(x, x), "integer"),
    (lambda b, x, y: b.sine(b.convert(x, "s32")), "floating"),
    (lambda b, x, y: b.transpose(y, (0, 0)), "permutation"),
    (lambda b, x, y: b.slice(x, (0,), (9,)), "bad slice"),
    (lambda b, x, y: b.reshape(x, (4,)), "reshape"),
    (lambda b, x, y: b.broadcast(x, (3, 2), (1,)), "does not map"),
    (lambda b, x, y: b.dot(y, y, (0,), (1,)), "rhs dim"),
    (lambda b, x, y: b.concatenate([x, y], 0), "agree"),
])
def test_shape_inference_errors(make, msg):
    b = Builder("f")
    x = b.parameter(Shape("f32", (3,)))
    y = b.parameter(Shape("f32", (3, 2)))
    with pytest.raises(ShapeError, match=msg):
        make(b, x, y)


def _good():
    b = Builder("f")
    x = b.parameter(Shape("f32", (3,)))
    y = b.negate(x)
    return b.build(b.add(x, y)), x, y


def test_verifier_accepts_good_module():
    verify(_good()[0])


def test_verifier_catches_wrong_shape():
    m, x, y = _good()
    y.shape = Shape("f32", (4,))
    with pytest.raises(VerificationError, match="inference"):
        verify(m)


def test_verifier_catches_users_mismatch():
    m, x, y = _good()
    x.users.remove(y)
    with pytest.raises(VerificationError, match="users"):
        verify(m)


def test_verifier_catches_operand_count_and_params():
    m, x, y = _good()
    y.operands.append(x)
    with pytest.raises(VerificationError, match="operands"):
        verify(m)
    m, x, y = _good()
    x.attrs["parameter_number"] = 3
    with pytest.raises(VerificationError, match="numbered"):
        verify(m)


def test_verifier_catches_foreign_operand_and_bad_subcomputation():
    m, x, y = _good()
    stray = Instruction("negate", x.shape, [x])  # never added to the computation
    y.replace_operand(0, stray)
    with pytest.raises(VerificationError):
        verify(m)
    b = Builder("g")
    p = b.parameter(Shape("f32", (3,)))
    add = Builder.scalar_computation("add", "f32")
    r = b.reduce(p, b.scalar(0, "f32"), [0], add)
    m = b.build(r)
    add.root.shape = Shape("f32", (2,))
    with pytest.raises(VerificationError):
        verify(m)


def test_bit_width_of_every_element_type() -> None:
    from ember.hlo.shape import bit_width

    widths = {"pred": 8, "s8": 8, "u16": 16, "s32": 32, "u64": 64, "f16": 16, "bf16": 16,
              "f32": 32, "f64": 64}
    assert {t: bit_width(t) for t in widths} == widths
