"""`import ember` stays cheap (no llvmlite, no scipy), the public surface JAX programs use
exists, and `python -m ember demo` / `--help` work in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(*args: str, code: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, *(("-c", code) if code is not None else args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("stmt", ["import ember", "import ember.numpy",
                                  "import ember as jax; import ember.numpy as jnp; "
                                  "from ember import lax; import ember.errors"])
def test_import_is_cheap(stmt):
    code = (f"{stmt}\nimport sys\n"
            "heavy = [m for m in ('llvmlite', 'scipy') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    r = _run(code=code)
    assert r.returncode == 0, r.stderr
    assert "HEAVY []" in r.stdout, r.stdout


def test_public_surface():
    import ember
    for name in ["jit", "make_jaxpr", "eval_shape", "ShapeDtypeStruct", "Array", "device_put",
                 "devices", "block_until_ready", "config", "numpy", "lax", "tree_util",
                 "errors", "disable_jit", "tree_map"]:
        assert hasattr(ember, name), name
    import ember.errors
    assert ember.errors.ConcretizationTypeError is ember.ConcretizationTypeError


def test_demo_runs_and_checks_against_numpy():
    r = _run("-m", "ember", "demo", "--size", "100000", "--repeats", "3")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "def f(x, a, b):\n        y = jnp.sin(x)\n        z = a * y\n        return z + b" in out
    assert ("{ lambda ; a:f32[3] b:f32[3] c:f32[3]. let\n"
            "        d:f32[3] = sin a\n"
            "        e:f32[3] = mul b d\n"
            "        f:f32[3] = add e c\n"
            "      in (f,) }") in out
    assert "max |jit - numpy|" in out and "(OK)" in out
    assert "jit" in out and "NumPy" in out and "ms" in out


def test_demo_exits_nonzero_when_result_disagrees(monkeypatch, capsys):
    import numpy as np

    import ember
    from ember.__main__ import demo

    def broken_jit(fun):
        return lambda x, a, b: ember.device_put(np.asarray(fun(x, a, b)) + np.float32(1e-3))

    monkeypatch.setattr(ember, "jit", broken_jit)
    assert demo(size=1000, repeats=1, seed=0) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_help_and_bad_usage():
    r = _run("-m", "ember", "--help")
    assert r.returncode == 0 and "demo" in r.stdout
    r = _run("-m", "ember", "demo", "--repeats", "0")
    assert r.returncode == 2
    r = _run("-m", "ember", "frobnicate")
    assert r.returncode == 2
