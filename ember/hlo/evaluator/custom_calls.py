"""The evaluator's custom-call rules, by target name.

Input: `register_custom_call(target, fn)` from whoever defines a target (the evaluator its
own `ember.identity`; ember/callbacks.py `ember.python_callback`). Output: `CUSTOM_CALLS`,
read by the evaluator: fn(*operands, shape=Shape, backend_config=str | None) -> value.
A module of its own, importing nothing, so a layer above HLO registers its target at import
without loading the evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CUSTOM_CALLS: dict[str, Callable[..., Any]] = {}


def register_custom_call(target: str, fn: Callable[..., Any]) -> None:
    CUSTOM_CALLS[target] = fn
