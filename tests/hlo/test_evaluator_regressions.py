"""Evaluator regressions: 0-d operands keep their rank, comparator sorts of any size."""

from __future__ import annotations

import numpy as np
import pytest

from ember.hlo import Builder, Shape
from ember.hlo.evaluator import evaluate
from ember.prims.sort import comparator


def test_bitcast_convert_of_a_scalar_stays_a_scalar():
    b = Builder("f")
    x = b.parameter(Shape("f32", ()))
    m = b.build(b.bitcast_convert(x, "s32"))
    out = evaluate(m, np.array(0.5, np.float32))
    assert out.shape == ()
    assert out == np.array(0.5, np.float32).view(np.int32)


def test_transpose_of_a_scalar_stays_a_scalar():
    b = Builder("f")
    x = b.parameter(Shape("f32", ()))
    m = b.build(b.transpose(x, ()))
    assert evaluate(m, np.array(2.0, np.float32)).shape == ()


@pytest.mark.parametrize("shape", [(0,), (1,), (2,), (7,), (33,), (4, 9), (3, 0), (64,)])
@pytest.mark.parametrize("descending", [False, True])
def test_comparator_sort_matches_a_stable_numpy_sort(shape, descending):
    rng = np.random.default_rng(0)
    keys = rng.integers(-3, 4, size=shape).astype(np.float32)
    if keys.size:
        keys.reshape(-1)[::5] = np.nan
        keys.reshape(-1)[1::7] = -0.0
    payload = np.arange(keys.size, dtype=np.int32).reshape(shape)
    b = Builder("f")
    k = b.parameter(Shape("f32", shape))
    p = b.parameter(Shape("s32", shape))
    comp = comparator(["f32", "s32"], 1, descending=descending)
    out = b.sort([k, p], len(shape) - 1, comp, is_stable=True)
    m = b.build(b.get_tuple_element(out, 1))
    got = evaluate(m, keys, payload)
    canon = np.where(np.isnan(keys), np.inf, keys + 0)  # NaN orders past +inf
    if descending:
        canon = np.where(np.isnan(keys), -np.inf, -(keys + 0))
    want = np.take_along_axis(payload, np.argsort(canon, axis=-1, kind="stable"), axis=-1)
    np.testing.assert_array_equal(got, want)


def test_bool_dot_is_or_of_ands_for_any_contraction_length():
    """256 true products: a sum in uint8 wraps to 0, or-of-ands stays True; the eager rule
    of dot_general runs the same function (hlo/evaluator/core.dot_general)."""
    import ember.numpy as jnp
    from ember.hlo.parser import parse_module

    module = parse_module("""HloModule booldot
ENTRY %main (a: pred[1,256], b: pred[256,1]) -> pred[1,1] {
  %a = pred[1,256] parameter(0)
  %b = pred[256,1] parameter(1)
  ROOT %d = pred[1,1] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""")
    a, b = np.ones((1, 256), bool), np.ones((256, 1), bool)
    assert evaluate(module, a, b).tolist() == [[True]]
    assert np.asarray(jnp.matmul(a, b)).tolist() == [[True]]
