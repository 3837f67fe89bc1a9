"""benchmarks/tpu_check.py's CPU mode (`--platform cpu`: Ember's xla-cpu backend against
`jax.jit` on the CPU), so the script prepared for the TPU machine is not dead code: its
argument checks, its workload list (issue 20, item 5), the op table and the harness with
queued calls, on small sizes. Skipped, with the reason, where jaxlib is not installed."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

pytest.importorskip("jax", reason="benchmarks/tpu_check.py compares with jax.jit: "
                    "pip install 'ember[xla]' (or the test extra)")

_BENCH = str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks")
if _BENCH not in sys.path:
    sys.path.insert(0, _BENCH)

import tpu_check  # noqa: E402  (benchmarks/, on sys.path above)


def test_arguments() -> None:
    a = tpu_check.parse_args([])
    assert (a.platform, a.calls, a.kernels, a.op_kernels) == ("tpu", 20, "auto", "ember")
    with pytest.raises(SystemExit):
        tpu_check.parse_args(["--calls", "5"])  # (device time needs queued calls)
    with pytest.raises(SystemExit):
        tpu_check.parse_args(["--platform", "gpu"])


def test_the_workloads_are_the_issues() -> None:
    names = [w.name for w in tpu_check.workloads(quick=True)]
    for wanted in ("a*sin(x)+b, 2^14", "row softmax", "layernorm", "logsumexp rows",
                   "bf16 product", "heat stencil", "README demo", "run.py: sum"):
        assert any(wanted in n for n in names), wanted
    full = tpu_check.SIZES[False]  # (the issue's sizes; not built here: 1 GB of inputs)
    assert (full["log2n"], full["rows"], full["product"]) == (24, (8192, 4096), 4096)
    assert "bf16[256,256] dot(" in tpu_check._bf16_product(256).hlo


def test_cpu_mode_runs(capsys: pytest.CaptureFixture[str]) -> None:
    before = os.environ.get("EMBER_TPU_KERNELS")
    code = tpu_check.main(["--platform", "cpu", "--quick", "--calls", "2", "--repeat", "1",
                           "--only", "softmax, 64,product,stencil,tiny"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert os.environ.get("EMBER_TPU_KERNELS") == before  # (the flag is restored)
    lines = {ln.split("  ")[0]: ln for ln in out.splitlines()}
    # the row softmax: one Ember kernel the TPU backend would generate; the product none
    assert lines["row softmax, 64x512 f32"].split()[-1] == "1"
    assert lines["256^3 bf16 product"].split()[-1] == "0"
    assert "yes" in lines["heat stencil 64^2, fori_loop"]
    assert "cached tiny call" in out and "0 failures" in out


def test_op_table(capsys: pytest.CaptureFixture[str]) -> None:
    names = ["sin", "logistic", "shift_left", "select(x < y)", "ne to float"]
    passed, failed = tpu_check.run_op_table("xla-cpu", "ember", quick=True, names=names)
    out = capsys.readouterr().out
    assert (passed, failed) == (5, 0), out
    assert "ok   shift_left               int32    bit for bit" in out
