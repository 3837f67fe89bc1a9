"""EMBER_DEBUG levels, jax_log_compiles and EMBER_DUMP_TO file sets (ember/explain/
compile_log.py, ember/passes/dump.py)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.compiler import compile_jaxpr
from ember.config import config
from ember.explain.compile_log import record_trace
from ember.passes import dump


@pytest.fixture
def cpu_backend(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")
    monkeypatch.delenv("EMBER_DUMP_TO", raising=False)


def fusion_example(x, a, b):
    return a * jnp.sin(x) + b


def exp_two_users(x):
    y = jnp.exp(x)
    return jnp.sum(y * y), y * 2.0


def _args(n=7, k=3):
    return [np.linspace(-2, 2, n, dtype=np.float32) for _ in range(k)]


def test_level_0_logs_nothing(cpu_backend, capfd, monkeypatch):
    monkeypatch.delenv("EMBER_DEBUG", raising=False)
    ember.jit(fusion_example)(*_args())
    assert "[ember]" not in capfd.readouterr().err


def test_level_1_one_line_per_compilation(cpu_backend, capfd, monkeypatch):
    monkeypatch.setenv("EMBER_DEBUG", "1")
    f = ember.jit(fusion_example)
    f(*_args())
    f(*_args())  # cached: no second log
    f(*_args(9))  # new shapes: compiled again
    err = capfd.readouterr().err
    heads = [line for line in err.splitlines() if line.startswith("[ember] compiled")]
    assert len(heads) == 2, err
    # The head names the function, where it was defined (when the trace was timed),
    # the signature and the backend.
    assert re.search(r"jit\(fusion_example\)( \(defined at \S+test_explain_log\.py:\d+\))? "
                     r"for \(f32\[7\], f32\[7\], f32\[7\]\) -> \(f32\[7\]\) on cpu",
                     heads[0]), heads[0]
    assert "f32[9]" in heads[1]
    for stage in ("lower", "optimize", "codegen"):
        assert re.search(rf"{stage} [0-9.e+-]+ ms", heads[0]), heads[0]
    assert "1 kernel (fusion); cache: " in err
    assert re.search(r"cache: (in-memory hit|disk hit|miss)", err)
    assert "--- jaxpr ---" not in err and "LLVM IR" not in err


def test_level_1_names_the_cache_outcome(cpu_backend, capfd, monkeypatch):
    from ember.backends import cpu

    monkeypatch.setenv("EMBER_DEBUG", "1")
    cpu.clear_cache()
    ember.jit(lambda x: x * 3.0 - 1.0)(np.ones(11, np.float32))
    ember.jit(lambda y: y * 3.0 - 1.0)(np.ones(11, np.float32))  # the same HLO
    err = capfd.readouterr().err
    outcomes = re.findall(r"cache: ([a-z -]+)", err)
    assert outcomes[0] in ("disk hit ", "miss ") and outcomes[1] == "in-memory hit", err


def test_trace_time_and_definition_are_logged_when_recorded(cpu_backend, capfd,
                                                            monkeypatch):
    monkeypatch.setenv("EMBER_DEBUG", "1")
    closed = ember.make_jaxpr(fusion_example)(*_args(5))
    record_trace(closed, 0.0123, fusion_example)
    compile_jaxpr(closed, "fusion_example")
    err = capfd.readouterr().err
    assert "trace 12.3 ms" in err
    line = fusion_example.__code__.co_firstlineno
    assert f"defined at {__file__}:{line}" in err


def test_level_1_splits_out_llvm_time_and_counts_many_kernels(cpu_backend, capfd,
                                                              monkeypatch):
    from ember.backends import cpu
    from ember.explain.compile_log import KERNEL_NAMES

    monkeypatch.setenv("EMBER_DEBUG", "1")
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    cpu.clear_cache()

    def steps(x):
        for _ in range(3 * KERNEL_NAMES):  # a kernel per step or two (x read at two indices)
            x = jnp.sin(x) + jnp.cos(x[::-1])
        return x

    ember.jit(steps)(np.linspace(0, 1, 64, dtype=np.float32))
    err = capfd.readouterr().err
    head = next(line for line in err.splitlines() if line.startswith("[ember] compiled"))
    assert re.search(r"codegen [0-9.e+-]+ ms \(LLVM optimize [0-9.e+-]+ ms, machine code "
                     r"[0-9.e+-]+ ms\)", head), head
    kernels = next(line for line in err.splitlines() if " kernels (" in line)
    n = int(re.search(r"\[ember\]   (\d+) kernels", kernels).group(1))
    assert n > KERNEL_NAMES
    assert kernels.count("fusion") == KERNEL_NAMES, kernels
    assert f"... {n - KERNEL_NAMES} more); cache: miss" in kernels, kernels


def test_level_2_adds_jaxpr_and_optimized_hlo(cpu_backend, capfd, monkeypatch):
    from ember.backends import cpu

    monkeypatch.setenv("EMBER_DEBUG", "2")
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    cpu.clear_cache()  # (so the passes run)
    ember.jit(fusion_example)(*_args())
    err = capfd.readouterr().err
    passes = next(line for line in err.splitlines() if line.startswith("[ember]   passes: "))
    assert re.search(r"fusion [0-9.e+-]+ ms", passes), passes
    assert "[ember] --- jaxpr ---" in err and "d:f32[7] = sin a" in err
    assert "[ember] --- optimized HLO ---" in err and "kind=kLoop" in err
    assert "LLVM IR" not in err and "why not fused" not in err


def test_level_3_adds_kernel_ir_and_refusals(cpu_backend, capfd, monkeypatch):
    monkeypatch.setenv("EMBER_DEBUG", "3")
    ember.jit(exp_two_users)(np.linspace(-1, 1, 33, dtype=np.float32))
    err = capfd.readouterr().err
    assert "[ember] --- why not fused ---" in err
    assert "expensive exponential has 2 users; not duplicated" in err
    # (y = exp(x) and y * 2 are one multi-output loop kernel)
    assert re.search(r"--- LLVM IR of fusion\.\d+ ---\n\s+define void @ember_fusion\.\d+",
                     err), err
    assert re.search(r"--- kernel fusion\.\d+ \(kLoop\) from ", err) and f"from {__file__}:" in err
    assert "assembly of" not in err


def test_level_4_adds_assembly(cpu_backend, capfd, monkeypatch):
    monkeypatch.setenv("EMBER_DEBUG", "4")
    ember.jit(fusion_example)(*_args())
    err = capfd.readouterr().err
    asm = err.split("--- assembly of fusion ---", 1)[1]
    assert "ember_fusion:" in asm and "ret" in asm


def test_jax_log_compiles_turns_on_level_1(cpu_backend, capfd, monkeypatch):
    monkeypatch.delenv("EMBER_DEBUG", raising=False)
    config.update("jax_log_compiles", True)
    try:
        ember.jit(fusion_example)(*_args(6))
    finally:
        config.update("jax_log_compiles", False)
    err = capfd.readouterr().err
    assert re.search(r"\[ember\] compiled jit\(fusion_example\)( \(defined at \S+\))? "
                     r"for \(f32\[6\], f32\[6\], f32\[6\]\)", err), err


def test_interpreter_backend_is_logged(capfd, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")
    monkeypatch.setenv("EMBER_DEBUG", "1")
    ember.jit(fusion_example)(*_args(4))
    err = capfd.readouterr().err
    assert "on interpreter:" in err and "interpreter backend" in err


_NAME = re.compile(r"(\d{4})\.jit_fusion_example\.(\d{4})\.(.+)")


def _sets(directory) -> dict[int, list[tuple[int, str]]]:
    out: dict[int, list[tuple[int, str]]] = {}
    for name in sorted(os.listdir(directory)):
        m = _NAME.fullmatch(name)
        assert m, name
        out.setdefault(int(m.group(1)), []).append((int(m.group(2)), m.group(3)))
    return out


def test_dump_to_writes_one_set_per_compilation_in_pipeline_order(cpu_backend, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("EMBER_DUMP_TO", str(tmp_path))
    f = ember.jit(fusion_example)
    f(*_args())
    f(*_args(9))
    sets = _sets(tmp_path)
    assert sorted(sets) == [0, 1]
    for files in sets.values():
        steps = [s for s, _ in files]
        assert steps == list(range(len(files)))  # sorted = pipeline order, none missing
        stages = [st for _, st in files]
        assert stages[:2] == ["jaxpr.txt", "before_optimizations.hlo.txt"]
        assert stages[-5:] == ["after_optimizations.hlo.txt", "ir-no-opt.ll",
                               "ir-with-opt.ll", "asm.s", "buffer-assignment.txt"]
        passes = stages[2:-5]
        assert "simplify.algsimp.hlo.txt" in passes and passes[-1] == "cpu.fusion.hlo.txt"
    first = {st: s for s, st in sets[0]}
    text = (tmp_path / f"0000.jit_fusion_example.{first['jaxpr.txt']:04d}.jaxpr.txt"
            ).read_text()
    assert "sin a" in text
    fused = (tmp_path / f"0000.jit_fusion_example.{first['cpu.fusion.hlo.txt']:04d}"
                        ".cpu.fusion.hlo.txt").read_text()
    assert "kind=kLoop" in fused and "source_line=" in fused
    ll = (tmp_path / f"0000.jit_fusion_example.{first['ir-with-opt.ll']:04d}"
                     ".ir-with-opt.ll").read_text()
    assert "define void @ember_fusion" in ll
    ba = (tmp_path / f"0000.jit_fusion_example.{first['buffer-assignment.txt']:04d}"
                     ".buffer-assignment.txt").read_text()
    assert "CompiledMemoryStats(" in ba and "output 0: f32[7]" in ba


def test_dump_sets_continue_after_files_already_there(cpu_backend, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_DUMP_TO", str(tmp_path))
    ember.jit(fusion_example)(*_args(5))
    dump._NEXT_SET.pop(str(tmp_path))  # as a new process would see the directory
    ember.jit(fusion_example)(*_args(5))
    assert sorted(_sets(tmp_path)) == [0, 1]


def test_dump_bypasses_caches_so_every_pass_is_dumped(cpu_backend, tmp_path, monkeypatch):
    ember.jit(fusion_example)(*_args(13))  # now cached in memory and on disk
    monkeypatch.setenv("EMBER_DUMP_TO", str(tmp_path))
    ember.jit(fusion_example)(*_args(13))
    stages = [st for _, st in _sets(tmp_path)[0]]
    assert "cpu.fusion.hlo.txt" in stages


def test_interpreter_dump_has_no_native_files(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")
    monkeypatch.setenv("EMBER_DUMP_TO", str(tmp_path))
    ember.jit(fusion_example)(*_args(3))
    stages = [st for _, st in _sets(tmp_path)[0]]
    assert stages[0] == "jaxpr.txt" and stages[-1] == "after_optimizations.hlo.txt"
    assert not any(st.endswith((".ll", ".s")) for st in stages)
