"""Who runs the collectives of a partitioned per-device module (all-reduce, all-gather,
reduce-scatter, all-to-all, collective-permute): the runtime that runs the module on every
device installs a runner on the thread running each device's copy; the evaluator and the
CPU backend's collective kernels (host callbacks) call `run`, which hands the operand to
that runner.

Input: `running_on(runner)` from the runtime (ember/spmd/_partitioned.py), around one
device's run; `run(opcode, reducer, groups, dimension, value)` from the code of the module
(`groups`: the replica groups, or collective-permute's (source, target) pairs).
Output: the device's result of the collective. Invariants: a collective outside a device
run (a compile-time check evaluating the module on one set of inputs) raises
`NoDeviceRunner`; the runner is per thread, so devices run on threads of their own.
Imports nothing of Ember: the HLO layers below the runtime call up through it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

# runner(opcode, reducer, groups, dimension, value) -> this device's result
# (and `out`: a buffer of the result's shape it may write the result into and return, or
# None)
Runner = Callable[[str, str | None, tuple, int | None, np.ndarray, np.ndarray | None],
                  np.ndarray]
COLLECTIVES = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                         "collective-permute"})


def partners(attrs: dict[str, Any]) -> tuple[tuple[int, ...], ...]:
    """A collective's replica groups, or collective-permute's (source, target) pairs."""
    groups = attrs["replica_groups"] if "replica_groups" in attrs else \
        attrs["source_target_pairs"]
    return tuple(tuple(int(p) for p in g) for g in groups)


class NoDeviceRunner(RuntimeError):
    """A collective evaluated outside a run of a partitioned module on its devices."""


class _Local(threading.local):
    runner: Runner | None = None


_local = _Local()


@contextlib.contextmanager
def running_on(runner: Runner) -> Iterator[None]:
    """Make `runner` this thread's collective runner for the duration."""
    prev = _local.runner
    _local.runner = runner
    try:
        yield
    finally:
        _local.runner = prev


def run(opcode: str, reducer: str | None, groups: Any, dimension: int | None,
        value: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """This thread's device's result of the collective (see the module docstring); `out`:
    where the runner may write it (the CPU kernel's output buffer)."""
    runner = _local.runner
    if runner is None:
        raise NoDeviceRunner(f"{opcode} runs only on the devices of a partitioned program "
                             "(not in a compile-time check on one device)")
    if not isinstance(groups, tuple):  # (the callers' groups are tuples of tuples already)
        groups = tuple(tuple(g) for g in groups)
    return runner(opcode, reducer, groups, dimension, value, out)
