"""Collectives on the CPU: each all-reduce, all-gather, reduce-scatter, all-to-all and
collective-permute of a per-device module becomes a host callback
(`ember.python_callback` custom-call, emit/callbacks.py) into the runtime's collective
runner (ember/hlo/evaluator/collectives.py), which meets the other devices' calls.

Input: a Module. Output: the module with each collective replaced (a clone; the same
module when it holds none). Invariants: one registry entry per distinct collective
(opcode, combiner, groups or pairs, dimension, shapes), reused by every compile in the
process, so recompiling registers nothing new; the callback has no side effect (every
device runs the same code, so a pass that merges or drops one does it on every device
alike). Done before the caches' key is taken: the key then names the callback ids of this
process.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ember import callbacks
from ember.core.aval import ShapedArray
from ember.hlo import evaluator
from ember.hlo.evaluator import collectives
from ember.hlo.ir import Instruction, Module

_IDS: dict[tuple, int] = {}
_LOCK = threading.Lock()


def _callback_id(inst: Instruction) -> int:
    from ember.hlo.evaluator.core import plain_binary_opcode

    reducer = plain_binary_opcode(inst.to_apply) if inst.called_computations else None
    if inst.called_computations and reducer in (None, "overwrite"):
        raise evaluator.EvaluationError(f"{inst.opcode} {inst.name}: its combiner is not a "
                                        "plain add/multiply/maximum/minimum")
    dims = inst.attrs.get("dimensions")
    dim = int(dims[0]) if dims else None
    groups = collectives.partners(inst.attrs)
    src, out = inst.operand.shape, inst.shape
    key = (inst.opcode, reducer, groups, dim, src.dimensions, out.dimensions, src.dtype)
    with _LOCK:
        got = _IDS.get(key)
        if got is not None:
            return got
        opcode = inst.opcode

        def fn(args: list[np.ndarray], outs: list[np.ndarray] | None = None
               ) -> list[np.ndarray]:
            return [collectives.run(opcode, reducer, groups, dim, args[0],
                                    outs[0] if outs else None)]

        got = _IDS[key] = callbacks.register(callbacks.HostCallback(
            fn, (ShapedArray(src.dimensions, src.dtype),),
            (ShapedArray(out.dimensions, out.dtype),), False, opcode, borrows=True))
        return got


def as_host_callbacks(module: Module) -> Module:
    """`module` with its collectives as host callbacks (see the module docstring)."""
    if not any(i.opcode in collectives.COLLECTIVES for c in module.computations
               for i in c.instructions):
        return module
    m = module.clone()
    for comp in m.computations:
        for inst in comp.instructions:
            if inst.opcode not in collectives.COLLECTIVES:
                continue
            attrs: dict[str, Any] = {"custom_call_target": callbacks.TARGET,
                                     "backend_config": str(_callback_id(inst))}
            new = Instruction("custom-call", inst.shape, [inst.operand], attrs,
                              metadata=dict(inst.metadata))
            comp.replace_instruction(inst, new)
    m.remove_dead_computations()
    return m
