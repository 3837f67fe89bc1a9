"""Issue 19's training check: examples/mlp_training.py trains a small MLP for 200 steps with
`value_and_grad` and SGD inside one `jit`, and its loss curve matches the same model trained
in NumPy with hand-written gradients to 1e-5 relative (f32), compiled once.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlp_training.py"


def _load():
    spec = importlib.util.spec_from_file_location("mlp_training", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_loss_curve_matches_numpy_hand_gradients() -> None:
    mlp = _load()
    ours, ref, rel = mlp.compare(steps=200)
    assert rel <= mlp.TOLERANCE, f"loss curves differ by {rel:.2e} relative"
    assert ours[-1] < 0.05 * ours[0]  # it did learn
    assert mlp.train_step.trace_count == 1


def test_main_reports_and_exits_zero(capsys) -> None:
    assert _load().main(["--steps", "20"]) == 0
    assert "largest relative difference" in capsys.readouterr().out
