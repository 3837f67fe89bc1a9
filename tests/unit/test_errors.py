"""Errors that help: Python control flow and conversions on traced values raise JAX's error
classes, naming the argument the value depends on and the user's file:line; shape and
dtype mismatches raise at trace time with the user's line; `ember.errors` mirrors
`jax.errors`.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ember
import ember.errors
import ember.numpy as jnp
from ember.errors import (
    ConcretizationTypeError,
    JAXTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

F32 = np.float32
HERE = __file__


def _line_of(fn, needle: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if needle in text:
            return start + i
    raise AssertionError(needle)


def test_error_module_mirrors_jax_errors():
    assert ember.errors is not None
    for name in ["ConcretizationTypeError", "TracerBoolConversionError",
                 "TracerIntegerConversionError", "TracerArrayConversionError",
                 "NonConcreteBooleanIndexError", "UnexpectedTracerError", "JAXTypeError",
                 "JAXIndexError", "KeyReuseError", "JaxRuntimeError"]:
        assert name in ember.errors.__all__ and hasattr(ember.errors, name)
    # the class hierarchy JAX code relies on in `except` clauses
    assert issubclass(TracerBoolConversionError, ConcretizationTypeError)
    assert issubclass(ConcretizationTypeError, TypeError)
    assert issubclass(TracerIntegerConversionError, TypeError)
    assert issubclass(TracerArrayConversionError, JAXTypeError)
    assert issubclass(UnexpectedTracerError, JAXTypeError)
    assert issubclass(NonConcreteBooleanIndexError, IndexError)
    assert ember.ConcretizationTypeError is ConcretizationTypeError


def _if_positive(x):
    if x > 0:  # <- the offending line
        return x
    return -x


def _check(err, arg: str, line: int) -> None:
    msg = str(err.value)
    assert f"`{arg}`" in msg, msg
    assert f"{HERE}:{line}" in msg, msg


def test_if_on_traced_value():
    with pytest.raises(TracerBoolConversionError) as err:
        ember.jit(_if_positive)(F32(1))
    _check(err, "x", _line_of(_if_positive, "the offending line"))
    assert isinstance(err.value, ConcretizationTypeError)


@pytest.mark.parametrize("conv,cls", [
    (lambda v: int(v), TracerIntegerConversionError),
    (lambda v: float(v), ConcretizationTypeError),
    (lambda v: bool(v), TracerBoolConversionError),
    (lambda v: v.item(), ConcretizationTypeError),
    (lambda v: np.asarray(v), TracerArrayConversionError),
    (lambda v: range(v), TracerIntegerConversionError),
    (lambda v: [0, 1, 2][v], TracerIntegerConversionError),
], ids=["int", "float", "bool", "item", "np.asarray", "range", "index"])
def test_conversions_raise_jax_error_classes(conv, cls):
    def f(count, unused):
        return conv(count + 1)

    with pytest.raises(cls) as err:
        ember.jit(f)(np.int32(2), F32(0))
    msg = str(err.value)
    assert "`count`" in msg and "`unused`" not in msg
    assert HERE in msg


def test_error_names_pytree_argument_path():
    def loss(params, x):
        if jnp.sum(params["w"] * x) > 0:
            return x
        return -x

    with pytest.raises(TracerBoolConversionError) as err:
        ember.jit(loss)({"w": np.ones(3, F32), "b": np.zeros(3, F32)}, np.ones(3, F32))
    msg = str(err.value)
    assert "params['w']" in msg and "`x`" in msg and "params['b']" not in msg


def test_static_argument_avoids_the_error():
    f = ember.jit(_if_positive, static_argnums=0)
    assert f(3.0) == 3.0


def test_shape_mismatch_at_trace_time_names_user_line():
    def f(x, y):
        return x + y  # <- mismatch

    with pytest.raises(TypeError, match="incompatible shapes") as err:
        ember.jit(f)(np.ones(3, F32), np.ones(4, F32))
    assert f"{HERE}:{_line_of(f, '<- mismatch')}" in str(err.value)


def test_dtype_error_at_trace_time_names_user_line():
    def f(x):
        return x & 1  # <- float and

    with pytest.raises(TypeError) as err:
        ember.jit(f)(np.ones(3, F32))
    assert f"{HERE}:{_line_of(f, '<- float and')}" in str(err.value)


def test_escaped_tracer_is_unexpected_tracer_error():
    box = []
    ember.jit(lambda x: box.append(x) or x)(F32(1))
    with pytest.raises(UnexpectedTracerError, match="escaped"):
        jnp.exp(box[0])


def test_eager_concrete_values_convert_fine():
    x = jnp.asarray(np.float32(2.5))
    assert float(x) == 2.5 and int(x) == 2 and bool(x)
    assert x.item() == 2.5
    assert list(range(jnp.asarray(np.int32(3)))) == [0, 1, 2]


# -- errors that point the way, in JAX's words --------------------------------------------------

def test_traced_shape_names_the_argument_and_suggests_static_argnums():
    @ember.jit
    def f(x, n):
        return x + jnp.zeros(n)

    with pytest.raises(TypeError) as e:     # JAX: a TypeError; Ember's subclass of it
        f(1.0, 3)
    assert isinstance(e.value, ConcretizationTypeError)
    msg = str(e.value)
    assert msg.startswith("Shapes must be 1D sequences of concrete values of integer type, "
                          "got (Traced<i32[]>")
    assert ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
            "subfunctions.\n") in msg
    assert "It depends on the argument `n`." in msg
    line = inspect.getsourcelines(f.fun)[1] + 2
    assert f"{HERE}:{line}" in msg
    g = ember.jit(f.fun, static_argnums=1)     # the hint works
    np.testing.assert_array_equal(np.asarray(g(1.0, 3)), np.ones(3, F32))


@pytest.mark.parametrize("under_jit", [False, True])
def test_item_assignment_points_to_at_set(under_jit):
    def f(x):
        x[0] = 1
        return x

    fn = ember.jit(f) if under_jit else f
    with pytest.raises(TypeError) as e:
        fn(jnp.arange(3))
    cls = "ember.core.staging.JaxprTracer" if under_jit else "ember.array.ArrayImpl"
    assert str(e.value).startswith(
        f"'<class '{cls}'>' object does not support item assignment. Ember arrays are "
        "immutable (as JAX arrays). Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` "
        "or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def test_non_array_result_names_the_function_and_its_line():
    def returns_string(x):
        return "s"

    def returns_tree(x):
        return {"a": x, "b": [x, "oops"]}

    line = inspect.getsourcelines(returns_string)[1]
    with pytest.raises(TypeError) as e:
        ember.jit(returns_string)(1.0)
    assert str(e.value).startswith(
        f"function returns_string at {HERE}:{line} traced for jit returned a value of type "
        "<class 'str'>, which is not a valid JAX type")
    with pytest.raises(TypeError, match=r"returns_tree at .* traced for make_jaxpr returned a "
                       r"value of type <class 'str'> at output component \['b'\]\[1\], which "
                       "is not a valid JAX type"):
        ember.make_jaxpr(returns_tree)(1.0)
