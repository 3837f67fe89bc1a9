"""Shape and dtype errors of the lax primitives, in JAX 0.10.2's words, and weak-type rules.

Each bad call raises TypeError or ValueError with JAX's message, eagerly and under jit;
the message also names the user's source line (core/primitive.py appends it), which is
checked against this file and the line of the failing call.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import ember
from ember import lax
from ember.core.trace import get_aval

f32 = np.ones(3, np.float32)
f32s = np.float32(1.0)
i32 = np.ones(3, np.int32)
u8 = np.ones(3, np.uint8)
b = np.ones(3, np.bool_)
NUM = "integer, floating, complexfloating"

# (id, function, args, exception type, message prefix)
BAD: list[tuple[str, Any, tuple, type, str]] = [
    ("add_shapes", lax.add, (f32, np.ones(4, np.float32)), TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,)."),
    ("mul_shapes_2d", lax.mul, (np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)),
     TypeError, "mul got incompatible shapes for broadcasting: (2, 3), (3, 2)."),
    ("add_ranks", lax.add, (f32, np.ones((2, 3), np.float32)), TypeError,
     "add: arrays must have the same number of dimensions, got {1, 2}"),
    ("add_dtypes", lax.add, (f32, i32), TypeError,
     "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add "
     "is a similar function that does automatic type promotion on inputs)."),
    ("max_dtypes", lax.max, (u8, i32), TypeError,
     "lax.max requires arguments to have the same dtypes, got uint8, int32. (Tip: "
     "jnp.maximum is a similar function that does automatic type promotion on inputs)."),
    ("sin_int", lax.sin, (i32,), TypeError,
     "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, "
     "complexfloating."),
    ("exp_bool", lax.exp, (b,), TypeError, "exp does not accept dtype bool."),
    ("erf_int", lax.erf, (i32,), TypeError,
     "erf does not accept dtype int32. Accepted dtypes are subtypes of floating."),
    ("floor_int", lax.floor, (i32,), TypeError,
     "floor does not accept dtype int32. Accepted dtypes are subtypes of floating."),
    ("round_int", lax.round, (i32,), TypeError, "round does not accept dtype int32."),
    ("is_finite_int", lax.is_finite, (i32,), TypeError,
     "is_finite does not accept dtype int32."),
    ("add_bool", lax.add, (b, b), TypeError,
     f"add does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
     f"subtypes of {NUM}."),
    ("sub_bool", lax.sub, (b, b), TypeError, "sub does not accept dtype bool at position 0."),
    ("mul_bool", lax.mul, (b, b), TypeError, "mul does not accept dtype bool at position 0."),
    ("div_bool", lax.div, (b, b), TypeError, "div does not accept dtype bool at position 0."),
    ("rem_bool", lax.rem, (b, b), TypeError,
     "rem does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating."),
    ("neg_bool", lax.neg, (b,), TypeError,
     f"neg does not accept dtype bool. Accepted dtypes are subtypes of {NUM}."),
    ("abs_uint", lax.abs, (u8,), TypeError,
     "abs does not accept dtype uint8. Accepted dtypes are subtypes of signedinteger, "
     "floating, complexfloating."),
    ("sign_bool", lax.sign, (b,), TypeError, "sign does not accept dtype bool."),
    ("square_bool", lax.square, (b,), TypeError, "square does not accept dtype bool."),
    ("shift_float", lax.shift_left, (f32, f32), TypeError,
     "shift_left does not accept dtype float32 at position 0. Accepted dtypes at position 0 "
     "are subtypes of integer."),
    ("shift_bool", lax.shift_right_logical, (b, b), TypeError,
     "shift_right_logical does not accept dtype bool at position 0."),
    ("and_float", lax.bitwise_and, (f32, f32), TypeError,
     "and does not accept dtype float32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, bool."),
    ("not_float", lax.bitwise_not, (f32,), TypeError,
     "not does not accept dtype float32. Accepted dtypes are subtypes of integer, bool."),
    ("popcnt_float", lax.population_count, (f32,), TypeError,
     "population_count does not accept dtype float32. Accepted dtypes are subtypes of "
     "integer."),
    ("clz_bool", lax.clz, (b,), TypeError, "clz does not accept dtype bool."),
    ("atan2_int", lax.atan2, (i32, i32), TypeError,
     "atan2 does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of floating."),
    ("pow_int_base", lax.pow, (i32, i32), TypeError,
     "pow does not accept dtype int32 at position 0."),
    ("integer_pow_negative_int", lambda x: lax.integer_pow(x, -2), (i32,), TypeError,
     "Integers cannot be raised to negative powers, got integer_pow(i32[3], -2)"),
    ("integer_pow_bool", lambda x: lax.integer_pow(x, 2), (b,), TypeError,
     "integer_pow does not accept dtype bool."),
    ("select_n_float_which", lax.select_n, (f32, f32, f32), TypeError,
     "select `which` must be boolean or integer type, got float32."),
    ("select_n_bool_3_cases", lax.select_n, (b, f32, f32, f32), TypeError,
     "select with boolean `which` cannot have > 2 cases."),
    ("select_n_case_shapes", lax.select_n, (b, f32, np.ones(4, np.float32)), TypeError,
     "select cases must have the same shapes, got [(3,), (4,)]."),
    ("select_n_which_shape", lax.select_n, (np.ones(4, bool), f32, f32), TypeError,
     "select `which` must be scalar or have the same shape as cases, got `which` shape (4,) "
     "but case shape (3,)."),
    ("select_n_dtypes", lax.select_n, (b, f32, i32), TypeError,
     "lax.select_n requires arguments to have the same dtypes, got float32, int32."),
    ("clamp_shape", lax.clamp, (np.zeros(2, np.float32), f32, f32s), TypeError,
     "clamp requires min.shape == operand.shape or min.shape == (), got (2,)."),
    ("clamp_dtypes", lax.clamp, (np.int32(0), f32, f32s), TypeError,
     "lax.clamp requires arguments to have the same dtypes, got int32, float32, float32."),
    ("reduce_sum_bool", lambda x: lax.reduce_sum(x, (0,)), (b,), TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    ("reduce_prod_bool", lambda x: lax.reduce_prod(x, (0,)), (b,), TypeError,
     "reduce_prod does not accept dtype bool."),
    ("reduce_and_float", lambda x: lax.reduce_and(x, (0,)), (f32,), TypeError,
     "logical reduction requires operand dtype bool or int, got float32."),
    ("reduce_axes", lambda x: lax.reduce_max(x, (1,)), (f32,), ValueError,
     "reduction axes (1,) contains out-of-bounds indices for f32[3]."),
    ("reduce_dup_axes", lambda x: lax.reduce_min(x, (0, 0)), (np.ones((2, 2)),), ValueError,
     "duplicate value in 'axes' of reduction: (0, 0)"),
    ("argmax_empty", lambda x: lax.argmax(x, 0, np.int32), (np.ones(0, np.float32),),
     ValueError, "argmin and argmax require non-empty reduced dimension. "
     "operand.shape=(0,) axis=0"),
    ("argmin_axis", lambda x: lax.argmin(x, 1, np.int32), (f32,), ValueError,
     "Invalid axis 1 for operand shape (3,)"),
    ("argmax_index_dtype", lambda x: lax.argmax(x, 0, np.float32), (f32,), TypeError,
     "index_dtype must be an integer type, but got float32"),
    ("reshape_size", lambda x: lax.reshape(x, (2, 2)), (f32,), TypeError,
     "reshape total size must be unchanged"),
    ("transpose_perm", lambda x: lax.transpose(x, (0, 0)), (np.ones((2, 2)),), TypeError,
     "transpose permutation isn't a permutation of operand dimensions"),
    ("squeeze_non_one", lambda x: lax.squeeze(x, (0,)), (f32,), ValueError,
     "cannot select an axis to squeeze out which has size not equal to one, got shape=(3,) "
     "and dimensions=(0,)"),
    ("broadcast_in_dim_size", lambda x: lax.broadcast_in_dim(x, (4,), (0,)), (f32,), TypeError,
     "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
     "corresponding dimensions in the target broadcast shape"),
    ("broadcast_in_dim_rank", lambda x: lax.broadcast_in_dim(x, (2, 3), ()), (f32,), TypeError,
     "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim"),
    ("rev_dims", lambda x: lax.rev(x, (1,)), (f32,), TypeError, "rev dimensions"),
    ("bitcast_widen", lambda x: lax.bitcast_convert_type(x, np.int32), (u8,), ValueError,
     "Attempting to convert array of shape (3,) from uint8 of size 8 bits to int32 of size "
     "32, bits but 3 * 8 != 32"),
    ("bitcast_bool", lambda x: lax.bitcast_convert_type(x, np.uint8), (b,), TypeError,
     "`bitcast_convert_type` for operand type (bool) cannot be performed."),
]


@pytest.mark.parametrize("fn,args,exc,msg", [pytest.param(*r[1:], id=r[0]) for r in BAD])
def test_bad_inputs(fn: Any, args: tuple, exc: type, msg: str) -> None:
    with pytest.raises(exc) as eager:
        fn(*args)
    assert str(eager.value).startswith(msg), str(eager.value)
    with pytest.raises(exc) as jitted:
        ember.jit(fn)(*args)
    assert str(jitted.value).startswith(msg), str(jitted.value)


def test_pow_mixed_floats(x64: None) -> None:
    with pytest.raises(TypeError, match="two inexact dtypes must match, but got float32 and "
                                        "float64 respectively"):
        lax.pow(f32, np.ones(3, np.float64))


def test_error_names_user_line() -> None:
    def f(x: Any, y: Any) -> Any:
        return lax.add(x, y)  # the failing line

    line = inspect.getsourcelines(f)[1] + 1
    for run in (f, ember.jit(f)):
        with pytest.raises(TypeError) as e:
            run(f32, i32)
        assert f"{__file__}:{line}" in str(e.value), str(e.value)
    g = ember.jit(lambda x: lax.sin(x))
    with pytest.raises(TypeError) as e:
        g(i32)
    assert "test_lax_errors.py" in str(e.value) and "sin" in str(e.value)


# -- accepted dtypes that NumPy habits might miss ---------------------------------------------
@pytest.mark.parametrize("fn", [lax.max, lax.min, lax.eq, lax.ne, lax.lt, lax.ge,
                                lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor],
                         ids=lambda f: f.__name__)
def test_bool_operands_accepted(fn: Any) -> None:
    out = fn(b, ~b)
    assert out.dtype == np.bool_
    assert ember.jit(fn)(b, ~b).dtype == np.bool_


def test_bool_reductions_accepted() -> None:
    for fn in (lax.reduce_max, lax.reduce_min, lax.reduce_and, lax.reduce_or, lax.reduce_xor):
        assert fn(b, (0,)).dtype == np.bool_


# -- weak types -------------------------------------------------------------------------------
def weak(x: Any) -> bool:
    return get_aval(x).weak_type


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_weak_type_rules(jit: bool) -> None:
    def run(fn: Any, *args: Any) -> Any:
        return ember.jit(fn)(*args) if jit else fn(*args)

    # n-ary results are weak only when every operand is weak
    assert weak(run(lax.add, 2.0, 3.0))
    assert not weak(run(lax.add, 2.0, f32s))
    assert not weak(run(lax.add, f32s, f32s))
    assert run(lax.add, 2.0, f32s).dtype == np.float32
    assert weak(run(lax.sin, 2.0)) and not weak(run(lax.sin, f32s))
    assert weak(run(lambda x: lax.integer_pow(x, 2), 3.0))
    assert weak(run(lax.round, 2.5))
    assert weak(run(lax.pow, 2.0, 3))
    # comparisons and is_finite follow the same rule on their bool result (JAX's naryop
    # weak-type rule), so only all-weak operands give a weak bool
    assert not weak(run(lax.lt, f32s, 2.0))
    assert not weak(run(lax.eq, i32, i32))
    assert weak(run(lax.lt, 1.0, 2.0))
    assert not weak(run(lax.is_finite, f32s))
    # select_n and clamp: weak when every value operand is
    assert weak(run(lax.select_n, True, 1.0, 2.0))
    assert not weak(run(lax.select_n, True, f32s, 2.0))
    assert weak(run(lax.clamp, 0.0, 2.0, 1.0))
    assert not weak(run(lax.clamp, 0.0, f32s, 1.0))
    # convert_element_type's result carries its weak_type param
    assert weak(run(lambda x: lax.convert_element_type(x, np.float32, True), i32))
    assert not weak(run(lambda x: lax.convert_element_type(x, np.float32), 2.0))
    # argmax / bitcast are never weak
    assert not weak(run(lambda x: lax.argmax(lax.broadcast_in_dim(x, (2,), ()), 0, np.int32),
                        2.0))
    assert not weak(run(lambda x: lax.bitcast_convert_type(x, np.int32), 2.0))
    # unary and shape ops keep the operand's weak type
    assert weak(run(lax.neg, 2)) and run(lax.neg, 2).dtype == np.int32
    assert weak(run(lambda x: lax.reduce_sum(lax.broadcast_in_dim(x, (3,), ()), (0,)), 2.0))


def test_mixed_dtypes_error_has_jaxs_tip() -> None:
    """JAX 0.10.2's full text for lax.add(int32, float32), and every tip names a real jnp
    function."""
    from ember import numpy as jnp
    from ember.prims._rules import JNP_EQUIVALENTS
    with pytest.raises(TypeError) as e:
        lax.add(np.int32(1), np.float32(2))
    assert str(e.value).splitlines()[0] == (
        "lax.add requires arguments to have the same dtypes, got int32, float32. (Tip: "
        "jnp.add is a similar function that does automatic type promotion on inputs).")
    assert all(hasattr(jnp, name) for name in JNP_EQUIVALENTS.values())
    with pytest.raises(TypeError, match=r"Tip: jnp\.where is"):
        lax.select_n(b, f32, i32)
