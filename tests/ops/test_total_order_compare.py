"""The total-order comparisons eq_to, le_to and lt_to (JAX's sort comparator primitives).

Input: floats with every special value (-NaN, -inf, -0.0, +0.0, inf, NaN), integers and
bools, 0-d and n-d. Output: eager (NumPy rule), jit (the lowering) and vmap agree with the
order XLA's TOTALORDER defines: -NaN < -inf < ... < -0.0 < +0.0 < ... < inf < NaN.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_tables import use_dtype

import ember
from ember.prims.elementwise import eq_to_p, le_to_p, lt_to_p

_PRIMS = {"EQ": eq_to_p, "LE": le_to_p, "LT": lt_to_p}
_WANT = {"EQ": np.equal, "LE": np.less_equal, "LT": np.less}


def _ordered(dtype: np.dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return np.array([-np.nan, -np.inf, -1.5, -0.0, 0.0, 2.0, np.inf, np.nan], dtype)
    if np.dtype(dtype).kind == "b":
        return np.array([False, True])
    return np.array([np.iinfo(dtype).min, -1, 0, 3, np.iinfo(dtype).max], dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("direction", ["EQ", "LE", "LT"])
def test_total_order_matches_positions_in_the_order(request: pytest.FixtureRequest, dtype: type,
                                                    direction: str) -> None:
    use_dtype(request, dtype)
    x = _ordered(dtype)
    i, j = np.indices((x.size, x.size))
    want = _WANT[direction](i, j)
    prim = _PRIMS[direction]
    X, Y = x[i], x[j]
    eager = np.asarray(prim.bind(X, Y))
    jitted = np.asarray(ember.jit(lambda a, b: prim.bind(a, b))(X, Y))
    mapped = np.asarray(ember.vmap(lambda a, b: prim.bind(a, b), in_axes=(0, None))(x, x))
    np.testing.assert_array_equal(eager, want)
    np.testing.assert_array_equal(jitted, want)
    np.testing.assert_array_equal(mapped, want)
    # 0-d operands stay 0-d
    assert np.asarray(prim.bind(x[0], x[-1])).shape == ()


def test_the_jaxpr_names_the_primitive() -> None:
    x = np.zeros(3, np.float32)
    text = str(ember.make_jaxpr(lambda a, b: lt_to_p.bind(a, b))(x, x))
    assert "c:bool[3] = lt_to a b" in text
    grads = ember.grad(lambda a: ember.numpy.sum(ember.numpy.where(le_to_p.bind(a, a), a, 0.0)))
    np.testing.assert_array_equal(np.asarray(grads(x + 1)), [1.0, 1.0, 1.0])
