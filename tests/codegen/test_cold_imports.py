"""A first compile imports only what its program needs (issue 4, first-call goal).

A fresh process with LLVM initialized (benchmarks/run.py --first-call-only's "LLVM
initialized only" line) compiles an elementwise function: it must not import the native
loop code (loops_native.py, loops_emit.py: only for while/conditional), the dot planner
(dot_plan.py: only for a dot or kOutput fusion) or the pass dump writer (dump.py: only with
EMBER_DUMP_TO). Programs that need them still import them and compute what NumPy does.
(No timing here: benchmarks/run.py --first-call-only measures the milliseconds.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

LAZY = ("ember.backends.cpu.plan.loops_native", "ember.backends.cpu.emit.loops_emit",
        "ember.backends.cpu.dot.plan", "ember.passes.dump")

# What the timed call of benchmarks/run.py --first-call-only does, plus what it imported.
PROGRAM = """
import json, sys, numpy as np, ember, ember.numpy as jnp, ember.lax as lax
from ember.backends import cpu
from ember.backends.cpu.jit import llvm_target; llvm_target.target()
before = set(sys.modules)
x = np.linspace(-3, 3, {n}).astype(np.{dtype})
kind = "{kind}"
if kind == "elementwise":
    y = ember.jit(lambda x, a, b: a * jnp.sin(x) + b)(x, x * 0.5, x + 1)
elif kind == "while":
    y = ember.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 0.5 + 1, x))(x)
else:
    y = ember.jit(lambda x: jnp.tanh(jnp.outer(x, x) @ x))(x)
print(json.dumps({{"y": np.asarray(y).tolist(), "new": sorted(set(sys.modules) - before)}}))
"""


def _first_compile(kind: str, n: int, dtype: str) -> dict:
    env = dict(os.environ, EMBER_CACHE_DIR="off", EMBER_ENABLE_CHECKS="0")
    for var in ("EMBER_DEBUG", "EMBER_DUMP_TO", "EMBER_DISABLE_PASSES"):
        env.pop(var, None)
    if dtype == "float64":
        env["JAX_ENABLE_X64"] = "1"
    else:
        env.pop("JAX_ENABLE_X64", None)
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(kind=kind, n=n, dtype=dtype)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("n,dtype", [(1000, "float32"), (33, "float64"), (1, "float32")])
def test_elementwise_first_compile_imports_no_lazy_module(n, dtype):
    got = _first_compile("elementwise", n, dtype)
    assert not [m for m in LAZY if m in got["new"]], got["new"]
    assert "ember.backends.cpu.emit.emitter" in got["new"]  # it did compile, in this process
    x = np.linspace(-3, 3, n).astype(dtype)
    want = (x * 0.5) * np.sin(x) + (x + 1)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(np.asarray(got["y"], dtype), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("n,dtype", [(7, "float32"), (33, "float64")])
def test_a_while_loop_imports_the_native_loop_code(n, dtype):
    got = _first_compile("while", n, dtype)
    assert "ember.backends.cpu.plan.loops_native" in got["new"]
    assert "ember.backends.cpu.emit.loops_emit" in got["new"]
    x = np.linspace(-3, 3, n).astype(dtype)
    want = x
    for _ in range(3):
        want = want * dtype_scalar(dtype, 0.5) + dtype_scalar(dtype, 1)
    np.testing.assert_array_equal(np.asarray(got["y"], dtype), want)


@pytest.mark.parametrize("n,dtype", [(5, "float32"), (40, "float64")])
def test_a_product_imports_the_dot_planner(n, dtype):
    got = _first_compile("dot", n, dtype)
    assert "ember.backends.cpu.dot.plan" in got["new"]
    assert "ember.backends.cpu.plan.loops_native" not in got["new"]
    x = np.linspace(-3, 3, n).astype(dtype)
    want = np.tanh(np.outer(x, x) @ x)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(np.asarray(got["y"], dtype), want, rtol=tol, atol=tol)


def dtype_scalar(dtype: str, v: float):
    return np.dtype(dtype).type(v)
