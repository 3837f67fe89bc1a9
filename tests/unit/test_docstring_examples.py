"""The ``>>>`` examples in the docstrings of ember, ember.numpy (with its linalg and
fft) and ember.lax run and print what they show (issue 22, item 1: an example that drifts
from the code is a wrong doc).

Input: every public callable of those modules defined in Ember (NumPy's own functions that
ember.numpy re-exports, such as ``save``, are NumPy's to test) whose docstring has an
example. Output: one doctest per module, run with ``jnp``, ``lax``, ``ember`` and ``np``
in scope and whitespace normalized; a failure prints the example, what it expected and
what it got. Its tests take about 1 s on an idle core (0.8 s of it ember.numpy's examples,
where roots, float_power and acos, whose first calls build math kernels, are the slowest).
"""

from __future__ import annotations

import doctest
import io
from types import ModuleType

import numpy as np
import pytest

import ember
import ember.lax
import ember.numpy
import ember.numpy.fft
import ember.numpy.linalg

MODULES = {"ember": ember, "ember.numpy": ember.numpy, "ember.lax": ember.lax,
           "ember.numpy.linalg": ember.numpy.linalg, "ember.numpy.fft": ember.numpy.fft}


def _documented_examples(module: ModuleType) -> dict[str, str]:
    out = {}
    for name in sorted(dir(module)):
        obj = getattr(module, name)
        doc = getattr(obj, "__doc__", None)
        if (name.startswith("_") or not callable(obj) or not doc or ">>>" not in doc
                or not getattr(obj, "__module__", "").startswith("ember")):
            continue
        out[name] = doc
    return out


def test_the_documented_functions_have_examples() -> None:
    # The functions documented in JAX's layout carry examples; a lost one fails here.
    numpy_names = _documented_examples(ember.numpy)
    for name in ["zeros", "arange", "sum", "argmax", "reshape", "concatenate", "matmul",
                 "einsum", "where", "trace", "kron"]:
        assert name in numpy_names, name
    linalg_names = _documented_examples(ember.numpy.linalg)
    for name in ["solve", "inv", "det"]:
        assert name in linalg_names, name
    lax_names = _documented_examples(ember.lax)
    for name in ["cond", "switch", "while_loop", "fori_loop", "scan"]:
        assert name in lax_names, name


@pytest.mark.parametrize("modname", sorted(MODULES))
def test_docstring_examples_run_as_shown(modname: str) -> None:
    scope = {"jnp": ember.numpy, "lax": ember.lax, "ember": ember, "np": np}
    parser = doctest.DocTestParser()
    failures = []
    for name, doc in _documented_examples(MODULES[modname]).items():
        test = parser.get_doctest(doc, dict(scope), f"{modname}.{name}", None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        report = io.StringIO()
        runner.run(test, out=report.write)
        if runner.failures:
            failures.append(report.getvalue())
    assert not failures, "\n".join(failures)
