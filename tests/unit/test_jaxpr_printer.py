"""The jaxpr printer's naming and layout beyond the goldens: names past `z`, the one-line
form of short jaxprs, literals, and the inner-jit name aliasing JAX does."""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember.core.jaxpr_printer import encode_name


def test_encode_name():
    assert [encode_name(i) for i in (0, 25, 26, 27, 51, 52, 675, 676)] == \
        ["a", "z", "ba", "bb", "bz", "ca", "zz", "baa"]


def test_names_past_z_and_multiline_layout():
    def f(x):
        for _ in range(27):
            x = jnp.sin(x)
        return x

    text = str(ember.make_jaxpr(f)(np.zeros(2, np.float32)))
    lines = text.splitlines()
    assert lines[0] == "{ lambda ; a:f32[2]. let"
    assert lines[1] == "    b:f32[2] = sin a"
    assert lines[26] == "    ba:f32[2] = sin z"
    assert lines[27] == "    bb:f32[2] = sin ba"
    assert lines[-1] == "  in (bb,) }"


def test_short_jaxpr_one_line_and_literals():
    text = str(ember.make_jaxpr(lambda x: x * 2.0 + 1)(np.zeros(3, np.float32)))
    assert text == ("{ lambda ; a:f32[3]. let\n    b:f32[3] = mul a 2.0:f32[]\n"
                    "    c:f32[3] = add b 1.0:f32[]\n  in (c,) }")
    assert str(ember.make_jaxpr(lambda x: -x)(np.zeros(3, np.int32))) == \
        "{ lambda ; a:i32[3]. let b:i32[3] = neg a in (b,) }"


def test_multiple_outputs_and_inner_jit_aliasing():
    g = ember.jit(lambda u, v: (u + v, u * v))
    text = str(ember.make_jaxpr(lambda x, y: g(y, x))(np.zeros(2, np.float32),
                                                      np.zeros(2, np.float32)))
    # inner binders take the names of the outer variables passed in and bound out
    assert "jaxpr={ lambda ; b:f32[2] a:f32[2]. let" in text
    assert "] b a" in text and "in (c, d) }" in text
