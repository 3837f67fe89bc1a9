"""A shard_map body compiled as one per-device module: its collectives are HLO collectives
(all-reduce, all-gather, reduce-scatter, collective-permute, all-to-all; ember/prims/
collectives_manual.py), run by the partitioned runtime (`run_on_devices`: every local
device runs the module on a thread of its own; each collective meets the others' in
memory, and MPI's matching collective between processes).

Input: the body's ClosedJaxpr (traced for the per-device shapes, mesh axis names bound)
and the mesh. Output: `PerDeviceBody`, whose `run` gives each local device's outputs from
its blocks; `lower_per_device` gives the per-device module alone (its text shows the
collectives). Raises `LoweringError` (or the backend's error) when the body cannot be one
module (prims/collectives_manual.py says which collectives refuse): the runtime then
keeps running it stage by stage (_runtime.py).
Invariants: the module's parameters are the body's arguments, the hidden constants, then
the partition id (row-major over the mesh), as the SPMD partitioner's; one module serves
every device; compiled on the CPU backend (collectives as host callbacks) unless the
interpreter is chosen, as the partitioned programs are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ember.compiler import backend_name, compile_jaxpr
from ember.core.jaxpr import ClosedJaxpr
from ember.lowering import LoweredModule, lower_jaxpr
from ember.sharding._mesh import Mesh
from ember.spmd._partitioned import mesh_axes, run_on_devices

NAME = "shard_map_body"


def lower_per_device(closed: ClosedJaxpr, mesh: Mesh) -> LoweredModule:
    """The body lowered for one device of `mesh`."""
    return lower_jaxpr(closed, NAME, manual=mesh_axes(mesh))


class PerDeviceBody:
    """A shard_map body as one compiled per-device module (see the module docstring)."""

    def __init__(self, closed: ClosedJaxpr, mesh: Mesh) -> None:
        self.in_dtypes = [np.dtype(v.aval.dtype) for v in closed.jaxpr.invars]
        backend = "interpreter" if backend_name() == "interpreter" else "cpu"
        self.compiled = compile_jaxpr(closed, NAME, backend=backend, manual=mesh_axes(mesh))

    def run(self, mesh: Mesh, devices: list, blocks: list[list[np.ndarray]],
            process: int = 0, communicator: Any = None) -> list[list[np.ndarray]]:
        """Each of `devices`' outputs from its input blocks (`blocks[k][j]`: argument j of
        devices[k])."""
        blocks = [[np.require(x, t, "C") for x, t in zip(mine, self.in_dtypes)]
                  for mine in blocks]
        return run_on_devices(self.compiled, mesh, devices, blocks, None, process,
                              communicator)
