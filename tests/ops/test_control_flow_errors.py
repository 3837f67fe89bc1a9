"""Error messages of cond, switch, while_loop, fori_loop and scan: the texts JAX 0.10.2
raises for the same mistakes (recorded by running JAX), so a user can search for them.
Carry mismatches name the carry component by its path; weak-typed initial values are not
mistakes (they take the body's type)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax


def _message(fn) -> str:
    with pytest.raises((TypeError, ValueError)) as info:
        fn()
    return str(info.value)


REVISE_TYPES = ("\n\nRevise the function so that all output types match the corresponding "
                "input types.")


def test_while_carry_dtype_mismatch_names_the_carry():
    msg = _message(lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.int32(0)))
    assert msg == ("while_loop body function carry input and carry output must have equal "
                   "types, but they differ:\n\nThe input carry c has type int32[] but the "
                   "corresponding output carry component has type float32[], so the dtypes "
                   "do not match." + REVISE_TYPES)


def test_while_carry_shape_mismatch_names_the_path():
    msg = _message(lambda: lax.while_loop(lambda c: c[0] < 3,
                                          lambda c: (c[0] + 1, c[1].sum()),
                                          (0, jnp.zeros(3))))
    assert msg == ("while_loop body function carry input and carry output must have equal "
                   "types, but they differ:\n\nThe input carry component c[1] has type "
                   "float32[3] but the corresponding output carry component has type "
                   "float32[], so the shapes do not match." + REVISE_TYPES)

    def body(carry):
        return {"a": carry["a"] + 1, "b": carry["b"][None]}

    msg = _message(lambda: lax.while_loop(lambda c: c["a"] < 3, body,
                                          {"a": 0, "b": jnp.zeros(3)}))
    assert "The input carry component carry['b'] has type float32[3] but the " \
           "corresponding output carry component has type float32[1,3]" in msg


def test_several_carry_mismatches_are_listed():
    def body2(c):
        return (c[0].astype(jnp.float32), c[1].sum(), c[2].astype(jnp.int32))

    msg = _message(lambda: lax.while_loop(lambda c: True, body2,
                                          (jnp.int32(0), jnp.zeros(3), jnp.float32(1))))
    assert msg == (
        "while_loop body function carry input and carry output must have equal types, but "
        "they differ:\n\n  * the input carry component c[0] has type int32[] but the "
        "corresponding output carry component has type float32[], so the dtypes do not "
        "match;\n\n  * the input carry component c[1] has type float32[3] but the "
        "corresponding output carry component has type float32[], so the shapes do not "
        "match;\n  * the input carry component c[2] has type float32[] but the corresponding "
        "output carry component has type int32[], so the dtypes do not match." + REVISE_TYPES)


def test_carry_structure_mismatch():
    msg = _message(lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1,), (0, 1)))
    assert msg == (
        "while_loop body function carry input and carry output must have the same pytree "
        "structure, but they differ:\n\nThe input carry c is a tuple of length 2 but the "
        "corresponding component of the carry output is a tuple of length 1, so the lengths "
        "do not match.\n\nRevise the function so that the carry output has the same pytree "
        "structure as the carry input.")
    msg = _message(lambda: lax.scan(lambda c, x: ({"a": c["a"]}, x), {"a": 0.0, "b": 1.0},
                                    jnp.arange(3.0)))
    assert ("The input carry c is a <class 'dict'> with 2 children but the corresponding "
            "component of the carry output is a <class 'dict'> with 1 child, so the numbers "
            "of children do not match, with the symmetric difference of key sets: {'b'}."
            in msg)


def test_weak_initial_carries_take_the_body_type():
    i, x = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + 0.5), (0, 0))
    assert i.dtype == np.int32 and i.weak_type
    assert x.dtype == np.float32 and not x.weak_type and float(x) == 1.5
    # power iteration's (v, 0): the 0 stays a (weak) int counter
    v, k = ember.jit(lambda v: lax.while_loop(lambda c: c[1] < 4,
                                              lambda c: (c[0] * 2.0, c[1] + 1),
                                              (v, 0)))(np.ones(2, np.float32))
    assert int(k) == 4 and np.asarray(v).tolist() == [16.0, 16.0]


def test_fori_and_scan_carry_errors():
    msg = _message(lambda: lax.fori_loop(0, 3, lambda i, c: jnp.zeros(2), 0.0))
    assert msg == ("scan body function carry input and carry output must have equal types, "
                   "but they differ:\n\nThe input carry component loop_carry[1] has type "
                   "float32[] but the corresponding output carry component has type "
                   "float32[2], so the shapes do not match." + REVISE_TYPES)
    msg = _message(lambda: lax.fori_loop(jnp.int32(0), jnp.int16(3), lambda i, c: c, 0.0))
    assert msg == ("lower and upper arguments to fori_loop must have equal types, got int32 "
                   "and int16")
    traced = ember.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 0.0, unroll=2))
    msg = _message(lambda: traced(3))
    assert msg.startswith("Can only use `unroll` in `fori_loop` if the loop bounds are "
                          "statically known.\n  (at ")    # under jit: the user's line too


def test_cond_fun_must_return_a_boolean_scalar():
    assert _message(lambda: lax.while_loop(lambda c: c, lambda c: c, jnp.zeros(3))) == \
        "cond_fun must return a boolean scalar, but got output type(s) " \
        "[ShapedArray(float32[3])]."
    assert _message(lambda: lax.while_loop(lambda c: 1, lambda c: c, jnp.zeros(3))) == \
        "cond_fun must return a boolean scalar, but got output type(s) " \
        "[ShapedArray(int32[], weak_type=True)]."
    assert _message(lambda: lax.while_loop(lambda c: (c > 0, c), lambda c: c, 1.0)) == \
        "cond_fun must return a boolean scalar, but got pytree PyTreeDef((*, *))."


@pytest.mark.parametrize("call, text", [
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, jnp.arange(3), length=4),
     "scan got `length` argument of 4 which disagrees with leading axis sizes [3]."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, (jnp.arange(3), jnp.arange(4))),
     "scan got values with different leading axis sizes: 3, 4."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, None),
     "scan got no values to scan over and `length` not provided."),
    (lambda: lax.scan(lambda c, x: c, 0.0, jnp.arange(3)),
     "scan body output must be a pair, got ~float32[]."),
    (lambda: lax.scan(lambda c, x: (c, x), 0.0, 1.0),
     "scan got value with no leading axis to scan over: 1.0."),
    (lambda: lax.cond(jnp.zeros(2), lambda: 1.0, lambda: 2.0),
     "Pred must be a scalar, got [0. 0.] of shape (2,)."),
    (lambda: lax.cond("a", lambda: 1.0, lambda: 2.0),
     "Pred must be a scalar, got a of type <class 'str'>"),
    (lambda: lax.cond(True, 1, 2), "lax.cond: true_fun and false_fun arguments should be "
     "callable."),
    (lambda: lax.cond(True, lambda x: x, lambda x: x, 1.0, operand=1.0),
     "if 'operand' keyword is passed then no positional operands can be passed, got "
     "operand=1.0 and positional operands (1.0,)"),
    (lambda: lax.switch(1.0, [lambda: 1.0, lambda: 2.0]),
     "Index type must be an integer, got 1.0 as float32"),
    (lambda: lax.switch(jnp.zeros(2, int), [lambda: 1.0, lambda: 2.0]),
     "Branch index must be scalar, got [0 0] of shape (2,)."),
    (lambda: lax.switch(0, []), "Empty branch sequence"),
], ids=["length", "lengths", "no-xs", "pair", "no-axis", "pred-shape", "pred-str",
        "not-callable", "operand-twice", "index-float", "index-shape", "no-branches"])
def test_messages(call, text):
    assert _message(call) == text


def _where(fn) -> str:
    return f"{fn.__name__} at {inspect.getsourcefile(fn)}:{fn.__code__.co_firstlineno}"


def test_branch_output_mismatches():
    def t():
        return (jnp.zeros(2), jnp.int32(1))

    def f():
        return (jnp.zeros(3), jnp.float32(1))

    assert _message(lambda: lax.cond(True, t, f)) == (
        "cond branches must have equal output types but they differ.\n\n"
        f"true_fun is {_where(t)}\nfalse_fun is {_where(f)}\n\n"
        "  * the output of true_fun at path [0] has type float32[2] but the corresponding "
        "output of false_fun has type float32[3], so the shapes do not match;\n"
        "  * the output of true_fun at path [1] has type int32[] but the corresponding "
        "output of false_fun has type float32[], so the dtypes do not match.\n\n"
        "Revise true_fun and/or false_fun so that all output types match.")

    def a():
        return {"a": 1.0}

    def b():
        return {"b": 1.0}

    assert _message(lambda: lax.cond(True, a, b)) == (
        "cond branch outputs must have the same pytree structure, but they differ:\n\n"
        f"true_fun is {_where(a)}\nfalse_fun is {_where(b)}\n\n"
        "true_fun output is a <class 'dict'> with pytree metadata ('a',) but false_fun "
        "output is a <class 'dict'> with pytree metadata ('b',), so the pytree node metadata "
        "does not match.\n\nRevise true_fun and/or false_fun so that they have the same "
        "pytree structure.")

    def one(x):
        return x + 1.0

    def two(x):
        return x

    assert _message(lambda: lax.switch(1, [one, two], jnp.int32(1))) == (
        "switch branches must have equal output types but they differ.\n\n"
        f"branch 0 is {_where(one)}\nbranch1 is {_where(two)}\n\n"
        "The output of branch 0 has type float32[] but the corresponding output of branch1 "
        "has type int32[], so the dtypes do not match.\n\n"
        "Revise branch 0 and/or branch1 so that all output types match.")


def test_errors_under_jit_name_the_user_line():
    @ember.jit
    def f(x):
        return lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, x)

    with pytest.raises(TypeError, match="must have equal types") as info:
        f(np.int32(0))
    assert __file__ in str(info.value)


def test_scan_length_must_be_concrete():
    @ember.jit
    def f(n):
        return lax.scan(lambda c, _: (c, None), 0.0, None, length=n)

    with pytest.raises(ember.errors.ConcretizationTypeError, match="concrete `int` value"):
        f(3)
