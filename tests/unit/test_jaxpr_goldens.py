"""make_jaxpr output against JAX 0.10.2's own text (tests/goldens/jaxpr_cases.py, a copy of
the project's shared goldens that travels with a clone; a test checks it against the shared
file where that exists).

Cases marked exact must match character for character. The others are cases where JAX
wraps a jnp function in an inner `jit` (clip, where) or prints internals Ember does not
copy; for those we compare structure: the sequence of computing primitives with the inner
jits inlined (dropping the dtype conversions and broadcasts JAX adds inside its wrappers),
and the output types.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax

_GOLDENS = os.path.join(os.path.dirname(__file__), "..", "goldens")
_SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "goldens")
sys.path.insert(0, os.path.abspath(_GOLDENS))
from jaxpr_cases import CASES  # noqa: E402

_PLUMBING = {"jit", "convert_element_type", "broadcast_in_dim"}


def _build(case: dict):
    env = {"jax": ember, "jnp": jnp, "lax": lax, "np": np}
    exec(case["source"], env)
    args = []
    for a in case["args"]:
        if isinstance(a, list):
            shape, dtype = a
            args.append(np.zeros(tuple(shape), dtype=dtype))
        else:
            args.append(a)
    return env["f"], args


def _golden_structure(text: str) -> tuple[list[str], str]:
    prims = re.findall(r"= ([a-z_]+)(?:\[| |$)", text, flags=re.M)
    outs = re.findall(r"in \(([^)]*)\) }\s*$", text)
    return [p for p in prims if p not in _PLUMBING], outs[-1] if outs else ""


def _our_structure(closed) -> list[str]:
    names = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "jit":
                walk(eqn.params["jaxpr"].jaxpr)
            elif eqn.primitive.name not in _PLUMBING:
                names.append(eqn.primitive.name)

    walk(closed.jaxpr)
    return names


@pytest.mark.parametrize("case", [c for c in CASES if c["exact"]], ids=lambda c: c["name"])
def test_exact_golden(case):
    f, args = _build(case)
    assert str(ember.make_jaxpr(f)(*args)) == case["jaxpr"]


@pytest.mark.parametrize("case", [c for c in CASES if not c["exact"]], ids=lambda c: c["name"])
def test_structural_golden(case):
    f, args = _build(case)
    closed = ember.make_jaxpr(f)(*args)
    prims, _ = _golden_structure(case["jaxpr"])
    assert _our_structure(closed) == prims
    # Output types as JAX prints them in the outer jaxpr's binder lines.
    out_types = [v.aval.str_short() for v in closed.jaxpr.outvars]
    for t in out_types:
        assert t in case["jaxpr"]


@pytest.mark.parametrize("name", ["clip_inner_jit", "where"])
def test_inner_jit_goldens_print_exactly(name):
    """The jnp functions JAX wraps in a jit print JAX's nested `jit[name=...]` text too."""
    case = next(c for c in CASES if c["name"] == name)
    f, args = _build(case)
    assert str(ember.make_jaxpr(f)(*args)) == case["jaxpr"]


def test_golden_file_has_24_cases():
    assert len(CASES) == 24


@pytest.mark.skipif(not os.path.exists(os.path.join(_SHARED, "jaxpr_cases.py")),
                    reason="no shared goldens beside this clone (a user's clone)")
def test_the_copy_matches_the_shared_goldens():
    with open(os.path.join(_GOLDENS, "jaxpr_cases.py")) as a, \
            open(os.path.join(_SHARED, "jaxpr_cases.py")) as b:
        assert a.read() == b.read(), "tests/goldens/jaxpr_cases.py is stale: copy it again"
