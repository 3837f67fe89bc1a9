"""bitcast-convert between element types of different widths, as XLA defines it."""

import numpy as np
import pytest
from hlo_corpus import bit_equal

from ember.hlo import Builder, Shape, ShapeError, infer_shape, parse_module, print_module, verify
from ember.hlo.evaluator.core import evaluate


def test_shape_inference():
    def out(src: Shape, et: str, dims: tuple) -> Shape:
        return infer_shape("bitcast-convert", [src], hint=Shape(et, dims))

    assert out(Shape("f32", (3,)), "u8", (3, 4)) == Shape("u8", (3, 4))
    assert out(Shape("f64", ()), "s16", (4,)) == Shape("s16", (4,))
    assert out(Shape("u8", (2, 4)), "f32", (2,)) == Shape("f32", (2,))
    assert out(Shape("s32", (2,)), "f32", (2,)) == Shape("f32", (2,))
    with pytest.raises(ShapeError, match="minor dimension of size 4"):
        out(Shape("u8", (2, 3)), "f32", (2,))
    with pytest.raises(ShapeError, match="should be u8"):
        out(Shape("f32", (3,)), "u8", (3,))
    with pytest.raises(ShapeError, match="pred"):
        out(Shape("pred", (2,)), "s16", ())
    b = Builder("bad")
    with pytest.raises(ShapeError):
        b.bitcast_convert(b.parameter(Shape("s8", (3,))), "s32")


def _module() -> tuple:
    b = Builder("bc")
    x = b.parameter(Shape("f32", (2, 3)))
    narrow = b.bitcast_convert(x, "u8")  # u8[2,3,4]
    back = b.bitcast_convert(narrow, "f32")  # f32[2,3]
    wide = b.bitcast_convert(b.reshape(x, (3, 2)), "f64")  # f64[3]
    s16 = b.bitcast_convert(b.bitcast_convert(b.scalar(1.5, "f64"), "s16"), "f64")
    m = b.build(b.tuple([narrow, back, wide, s16, b.bitcast_convert(x, "s32")]))
    return m, narrow


def test_evaluator_matches_numpy_views():
    m, narrow = _module()
    verify(m)
    assert narrow.shape == Shape("u8", (2, 3, 4)) and not narrow.is_elementwise()
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    narrow_v, back, wide, s16, same = evaluate(m, x)
    assert narrow_v.shape == (2, 3, 4)
    assert narrow_v.tobytes() == x.tobytes()  # host (little-endian) byte order
    assert bit_equal(back, x)
    assert wide.dtype == np.float64 and wide.tobytes() == x.tobytes()
    assert s16 == np.float64(1.5)
    assert bit_equal(same, x.view(np.int32))


def test_print_parse_round_trip():
    m, _ = _module()
    text = print_module(m)
    assert "u8[2,3,4] bitcast-convert(" in text and "f64[3] bitcast-convert(" in text
    m2 = parse_module(text)
    verify(m2)
    assert print_module(m2) == text
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    assert bit_equal(evaluate(m, x), evaluate(m2, x))
