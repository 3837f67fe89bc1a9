"""`python -m ember explain file.py:function --args ...` and the demo's story
(ember/__main__.py, ember/explain/report.py, ember/explain/loading.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ember.__main__ import main
from ember.explain import graphviz, hardware
from ember.explain.hardware import Machine
from ember.explain.loading import example_arrays, load_function, parse_arg_specs

MACHINE = Machine(bandwidth=20e9, peak_flops_f32=100e9, threads=1, target="test",
                  triad_bytes=0)
SECTIONS = ["== 1. The jaxpr", "== 2. HLO before optimization",
            "== 3. Passes that changed the module", "== 4. HLO after optimization",
            "== 5. Fusion decisions", "== 6. Kernels", "== 7. Timing", "== 8. Drawings"]


@pytest.fixture(autouse=True)
def known_machine(monkeypatch):
    """The roofline's ceilings without measuring this machine (a 200 MB triad)."""
    monkeypatch.setattr(hardware, "machine", lambda **_: MACHINE)


def test_parse_arg_specs():
    specs = parse_arg_specs("f32[1000000], f32[1000000], i32[]")
    assert [(s.shape, s.dtype) for s in specs] == [
        ((1000000,), np.float32), ((1000000,), np.float32), ((), np.int32)]
    specs = parse_arg_specs(" f64[3, 4],bool[2],uint8[0] ")
    assert [(s.shape, s.dtype) for s in specs] == [
        ((3, 4), np.float64), ((2,), np.bool_), ((0,), np.uint8)]
    for bad in ("f32[3", "q9[2]", "f32[2] f32[3]", "[3]"):
        with pytest.raises(ValueError):
            parse_arg_specs(bad)


def test_example_arrays_are_seeded_and_typed():
    specs = parse_arg_specs("f32[5], i32[2,3], bool[4]")
    a, b = example_arrays(specs, 1), example_arrays(specs, 1)
    assert [x.dtype for x in a] == [np.float32, np.int32, np.bool_]
    assert [x.shape for x in a] == [(5,), (2, 3), (4,)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert np.abs(a[1]).max() <= 100


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        import ember.numpy as jnp

        def fusion(x, a, b):
            return a * jnp.sin(x) + b

        def two_users(x):
            y = jnp.exp(x)
            return jnp.sum(y * y), y * 2.0

        class Model:
            @staticmethod
            def apply(x):
                return x * 2.0
        """))
    return path


def test_load_function(program):
    assert load_function(f"{program}:fusion").__name__ == "fusion"
    assert load_function(f"{program}:Model.apply").__name__ == "apply"
    with pytest.raises(AttributeError):
        load_function(f"{program}:missing")
    with pytest.raises(FileNotFoundError):
        load_function(f"{program}.nope:fusion")
    with pytest.raises(ValueError):
        load_function(str(program))


def test_explain_prints_the_story_in_order(program, tmp_path, capsys):
    out = tmp_path / "drawings"
    rc = main(["explain", f"{program}:two_users", "--args", "f32[1000]", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions), text
    assert "b:f32[1000] = exp a" in text                        # the jaxpr
    assert "exponential(%Arg_0)" in text                        # HLO before
    assert "-- cpu.fusion (run 1) --" in text and "+++ after fusion" in text  # diff
    assert "expensive exponential has 2 users; not duplicated" in text       # decisions
    # y = exp(x) and y * 2: one kernel writing both (multi-output fusion), reported as such
    assert re.search(r"fusion\.\d+ \(kLoop\): exponential", text) and "transcendentals" in text
    assert "producer-consumer: %exponential.0 + %multiply." in text
    assert f"from {program}:7 (exp): y = jnp.exp(x)" in text
    assert "Roofline of jit(two_users)" in text
    assert "compiled (one native call):" in text and "eager (ember.numpy op by op):" in text
    assert (out / "two_users.fusion.dot").read_text().startswith("digraph")
    assert f"Graphviz source: {out / 'two_users.fusion.dot'}" in text
    if graphviz.dot_program() is not None:
        assert (out / "two_users.fusion.svg").exists()
        assert f"before/after fusion diagram: {out / 'two_users.fusion.svg'}" in text


def test_explain_without_graphviz_says_how_to_get_it(program, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(graphviz, "dot_program", lambda: None)
    rc = main(["explain", f"{program}:fusion", "--args", "f32[8], f32[8], f32[8]", "--out",
               str(tmp_path)])
    text = capsys.readouterr().out
    assert rc == 0 and "apt-get install graphviz" in text
    assert "Every intermediate value stays inside a kernel" in text
    assert (tmp_path / "fusion.fusion.dot").exists()
    assert not (tmp_path / "fusion.fusion.svg").exists()


def test_explain_reports_bad_input(program, capsys):
    assert main(["explain", f"{program}:fusion", "--args", "f32[8"]) == 1
    assert "cannot read an argument type" in capsys.readouterr().err
    assert main(["explain", f"{program}:nope", "--args", "f32[8]"]) == 1


def test_demo_tells_the_story_of_the_fusion_example(tmp_path, capsys):
    rc = main(["demo", "--size", "1000", "--repeats", "1", "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert rc == 0
    assert f"diagrams go to {tmp_path}" in text
    assert "The story of jit(f) on (f32[1000], f32[1000], f32[1000])" in text
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert (tmp_path / "f.fusion.dot").exists()


def test_demo_without_story(tmp_path, capsys):
    assert main(["demo", "--size", "10", "--repeats", "1", "--no-story"]) == 0
    assert "== 1." not in capsys.readouterr().out


def test_module_help_lists_explain():
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "ember", "--help"], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    assert "explain" in proc.stdout and "demo" in proc.stdout
