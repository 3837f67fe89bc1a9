"""What a first compile of a small elementwise program leaves out, and that it changes
nothing it computes.

- Modules only some programs need load on first use: the row-fusion emitter (rows.py:
  only a fusion holding a reduce), the loop-state and inlining helpers of the passes
  (only a while or conditional), the precise copies' code (lazy_precise.py: compiled on
  the first huge sin/cos/tan argument), SHA-256 (only with the disk cache on).
- Light modules (compile_effort.py) run LLVM's O1 pipeline with both vectorizers on, which
  gives the same code as O3 on elementwise loops: checked here on the optimized IR of
  several kernels, and on the results.
(No timing here: benchmarks/run.py --first-call-only measures the milliseconds.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends.cpu import compiler
from ember.backends.cpu.jit import compile_effort, llvm_target

_FIRST = textwrap.dedent("""
    import json, sys
    import numpy as np
    import ember, ember.numpy as jnp
    from ember.backends.cpu.jit import llvm_target
    llvm_target.target()
    before = set(sys.modules)
    x = np.ones(1000, np.float32)
    s0 = dict(llvm_target.STATS)
    ember.jit(lambda x, a, b: a * jnp.sin(x) + b)(x, x, x)
    new = sorted(set(sys.modules) - before)
    s = llvm_target.STATS
    print(json.dumps({"new": new, "light": s["light_runs"] - s0["light_runs"],
                      "runs": s["optimize_runs"] - s0["optimize_runs"]}))
""")

# (+ the SHA-256 extension: with the disk cache off, no key is hashed)
_LEFT_OUT = ["ember.backends.cpu.emit.rows", "ember.passes.loop_state", "ember.passes.inlining",
             "ember.passes.licm", "ember.passes.transpose_folding",
             "ember.passes.reduction_splitting", "_sha256"]


def test_first_compile_leaves_out_what_it_does_not_use():
    # (checks off: they would evaluate the program with the interpreter too)
    env = {**os.environ, "EMBER_CACHE_DIR": "off", "EMBER_ENABLE_CHECKS": "0"}
    r = subprocess.run([sys.executable, "-c", _FIRST], env=env, capture_output=True,
                       text=True, timeout=300, check=True)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "ember.backends.cpu.emit.emitter" in out["new"]  # the compile did run
    assert not set(_LEFT_OUT) & set(out["new"])
    assert out["runs"] == 1 and out["light"] == 1  # one module, the light pipeline


def test_passes_still_handle_loops_and_branches():
    """The lazily imported helpers are found when a program has a while or conditional."""
    def f(x):
        y = ember.lax.fori_loop(0, 3, lambda i, v: v * 2.0 + 1.0, x)
        return ember.lax.cond(True, lambda v: v + 1.0, lambda v: v - 1.0, y)

    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(ember.jit(f)(x)), ((x * 2 + 1) * 2 + 1) * 2 + 2)


def _leaves(p):
    from ember.passes.base import Fix, PassPipeline

    if isinstance(p, PassPipeline):
        return [q for x in p.passes for q in _leaves(x)]
    if isinstance(p, Fix):
        return _leaves(p.inner)
    return [p]


@pytest.mark.parametrize("name, opcode, program", [
    ("licm", "while",
     lambda v: ember.lax.fori_loop(0, 4, lambda i, s: s + jnp.sin(v) * 2.0, v)),
    ("transpose-folding", "dot", lambda v: v.T @ v),
    ("reduction-splitting", "reduce", lambda v: jnp.sum(v * v)),
])
def test_on_opcodes_runs_its_pass_only_where_it_can_change_something(name, opcode, program):
    from ember.backends import cpu
    from ember.passes.base import OnOpcodes

    x = np.ones((8, 8), np.float32)
    module = ember.jit(program).lower(x)._lowered.module
    assert any(i.opcode == opcode for c in module.computations for i in c.instructions)
    plain = ember.jit(lambda v: v * 2 + 1).lower(x)._lowered.module
    for m, built in ((plain, False), (module, True)):
        pipe = cpu.pipeline()
        proxy = next(p for p in _leaves(pipe) if p.name == name)
        assert isinstance(proxy, OnOpcodes)
        pipe.run(m.clone())
        assert (proxy._pass is not None) == built
        if built:
            assert type(proxy._pass).__name__ != "OnOpcodes" and proxy._pass.name == name
    got = np.asarray(ember.jit(program)(x))
    assert np.all(np.isfinite(got))


def test_row_fusions_still_emit_row_kernels():
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    f = ember.jit(lambda v: jnp.exp(v - v.max(axis=1, keepdims=True)))
    np.testing.assert_allclose(np.asarray(f(x)), np.exp(x - x.max(1, keepdims=True)),
                               rtol=1e-6)


def test_optimize_options():
    x = np.ones(1000, np.float32)
    small = ember.jit(lambda v: jnp.sin(v) + 1).lower(x).compile()._compiled.executable
    opts = compile_effort.optimize_options(small.module)
    assert opts == {"interleave": False, "unroll": False, "epilogue": False,
                    "level": compile_effort.LIGHT_SPEED_LEVEL}
    big = np.ones(compile_effort.LIGHT_MAX_ELEMENTS + 1, np.float32)
    large = ember.jit(lambda v: jnp.sin(v) + 1).lower(big).compile()._compiled.executable
    assert compile_effort.optimize_options(large.module) == {**compile_effort.FULL,
                                                              "level": 3}


CASES = {
    "sin_fma": (lambda x, a, b: a * jnp.sin(x) + b, 3, np.float32),
    "chain": (lambda x: jnp.tanh(x * .5 + 1) * jnp.exp(-x * x) + jnp.log1p(jnp.abs(x)), 1,
              np.float32),
    "where": (lambda x, y: jnp.where(x > y, x - y, jnp.sqrt(jnp.abs(y))), 2, np.float32),
    "int": (lambda x, y: (x * 3 + y) // 7 - (x >> 2), 2, np.int32),
    "cvt": (lambda x: (x * 255).astype(jnp.uint8), 1, np.float32),
    "pow": (lambda x, y: x ** y + jnp.log(x), 2, np.float32),
    "atan2": (lambda x, y: jnp.arctan2(x, y) * jnp.cos(x), 2, np.float32),
}


def _optimized_ir(text: str, opts: dict) -> str:
    mod = llvm_target.parse_and_verify(text)
    llvm_target.optimize(mod, **opts)
    return str(mod).replace("nonnull ", "")  # (an attribute O1 infers less often)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("n", [7, 1000])
def test_light_level_gives_the_code_o3_gives(name, n):
    f, nargs, dt = CASES[name]
    args = [np.linspace(1, 5, n).astype(dt) for _ in range(nargs)]
    exe = ember.jit(f).lower(*args).compile()._compiled.executable
    opts = compile_effort.optimize_options(exe.module)
    assert opts["level"] == compile_effort.LIGHT_SPEED_LEVEL
    text = compiler._emit_and_load(exe.module, (), "lazy")[-1]
    assert _optimized_ir(text, opts) == _optimized_ir(text, {**opts, "level": 3})
