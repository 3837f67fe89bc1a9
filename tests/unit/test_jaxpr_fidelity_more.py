"""make_jaxpr text of more jnp functions equals JAX 0.10.2's, character for character
(issue 22, item 7: nested-jit texts as JAX prints them).

Input: the programs of jaxpr_fidelity_more_cases.py and JAX's texts for them
(jaxpr_fidelity_more_expected.py, written by tools/gen_jaxpr_fidelity.py; this test never
imports JAX). Output: one test per program. Values are tested with each function's op
tests; the eager-vs-jit check here guards the staged forms these texts pin down.
"""

from __future__ import annotations

import numpy as np
import pytest
from jaxpr_fidelity_more_cases import CASES
from jaxpr_fidelity_more_expected import EXPECTED

import ember
import ember.numpy as jnp


def test_every_case_has_an_expected_text() -> None:
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jaxpr_text_equals_jax(name: str) -> None:
    make, args = CASES[name]
    assert str(ember.make_jaxpr(make(jnp))(*args)) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_staged_program_computes_the_eager_values(name: str) -> None:
    make, args = CASES[name]
    fun = make(jnp)
    eager = ember.tree_util.tree_leaves(fun(*args))
    staged = ember.tree_util.tree_leaves(ember.jit(fun)(*args))
    assert len(eager) == len(staged)
    for e, s in zip(eager, staged):
        np.testing.assert_allclose(np.asarray(s), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_weak_tracer_meets_a_strong_operand_of_its_dtype_unconverted() -> None:
    # A weakly typed f32 argument times a strong f32 array: one `mul`, no conversion
    # equation, and a strong result (JAX 0.10.2's text, taken from the venv's JAX).
    from ember import lax
    x = np.ones(3, np.float32)
    inner = ember.jit(lambda x, s: lax.mul(s, x))
    text = str(ember.make_jaxpr(lambda x: inner(x, 2.0))(x))
    assert text == ("{ lambda ; a:f32[3]. let\n    b:f32[3] = jit[\n      name=<lambda>\n"
                    "      jaxpr={ lambda ; a:f32[3] c:f32[]. let b:f32[3] = mul c a in (b,) }\n"
                    "    ] a 2.0:f32[]\n  in (b,) }")
    out = inner(x, 2.0)
    assert np.asarray(out).dtype == np.float32 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0, 2.0])
