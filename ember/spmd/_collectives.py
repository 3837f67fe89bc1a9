"""The runtime's collectives: what each device of a shard_map receives from a collective
over mesh axes, given every participating device's buffer.

Input: the mesh, the collective's primitive name and params, and the buffers (NumPy) of
this process's devices. Output: each local device's result buffer. Devices form groups:
those equal on every mesh axis the collective does not name; a device's position in its
group is the row-major index of its coordinates over the named axes, in the order the
collective names them (axis_index's and all_gather's order).
Within a process the buffers are combined in memory (`combine`, in group order, so every
member computes the same bits). A group spanning processes goes through the
`Communicator` of `ember.distributed.topology`: a reduction is reduced over the local
members first and then all-reduced; any other collective all-gathers each process's
stacked local members and then combines locally. Invariants: every process calls the
communicator for the same groups in the same order (groups are visited in mesh order, and
a group's sub-communicator is made, once, by every process for each distinct set of
processes); no Python object crosses a process, only contiguous buffers.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.sharding._mesh import Mesh

REDUCE_OPS = {"psum": "sum", "pmax": "max", "pmin": "min"}
COLLECTIVES = frozenset({"psum", "pmax", "pmin", "all_gather", "reduce_scatter", "ppermute",
                         "all_to_all", "axis_index"})


def axis_names_of(name: str, params: dict) -> tuple:
    """The mesh axis names a collective equation names."""
    key = "axes" if name in REDUCE_OPS else "axis_name"
    names = params[key]
    names = names if isinstance(names, (tuple, list)) else (names,)
    return tuple(a for a in names if not isinstance(a, int))


def groups(mesh: Mesh, names: Sequence[str]) -> list[list[Any]]:
    """The device groups of a collective over `names`, each in position order."""
    names = list(names)
    other = [a for a in mesh.axis_names if a not in names]
    sizes = mesh.shape
    index = {a: i for i, a in enumerate(mesh.axis_names)}
    out = []
    for rest in itertools.product(*[range(sizes[a]) for a in other]):
        members = []
        for mine in itertools.product(*[range(sizes[a]) for a in names]):
            coords = [0] * len(mesh.axis_names)
            for a, c in zip(other, rest):
                coords[index[a]] = c
            for a, c in zip(names, mine):
                coords[index[a]] = c
            members.append(mesh.devices[tuple(coords)])
        out.append(members)
    return out


def _reduce(op: str, vals: Sequence[np.ndarray]) -> np.ndarray:
    """The elementwise reduction of the buffers, left to right (buffers are never written:
    one buffer is its own reduction, no copy)."""
    fn = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}[op]
    acc = np.asarray(vals[0])
    for v in vals[1:]:
        acc = fn(acc, v).astype(acc.dtype, copy=False)
    return acc


def _contiguous(x: np.ndarray) -> np.ndarray:
    """x as a C-contiguous buffer, copied only if it is not one (rank 0 stays rank 0)."""
    return np.require(x, requirements="C")


def combine(name: str, params: dict, vals: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Every member's result from every member's buffer (one group, in position order)."""
    n = len(vals)
    if name in REDUCE_OPS:
        total = _reduce(REDUCE_OPS[name], vals)
        return [total] * n
    if name == "all_gather":
        dim = params["all_gather_dimension"]
        out = (np.concatenate(vals, axis=dim) if params["tiled"]
               else np.stack(vals, axis=dim))
        return [out] * n
    if name == "reduce_scatter":
        total = _reduce("sum", vals)
        sd = params["scatter_dimension"]
        if params["tiled"]:
            return [np.array(b, order="C") for b in np.split(total, n, axis=sd)]
        return [np.array(np.take(total, i, axis=sd), order="C") for i in range(n)]
    if name == "ppermute":
        src = {t: s for s, t in params["perm"]}
        return [np.array(vals[src[t]], copy=True) if t in src else np.zeros_like(vals[t])
                for t in range(n)]
    if name == "all_to_all":
        sa, ca = params["split_axis"], params["concat_axis"]
        pieces = [np.split(v, n, axis=sa) for v in vals]
        return [np.concatenate([pieces[j][i] for j in range(n)], axis=ca) for i in range(n)]
    if name == "axis_index":
        return [np.array(i, np.int32) for i in range(n)]
    raise NotImplementedError(f"the shard_map runtime has no collective {name}")


def _positional_first(name: str, params: dict, x: np.ndarray) -> np.ndarray:
    """A reduction's positional axes (from a vmap inside the body), reduced on the device."""
    if name not in REDUCE_OPS:
        return x
    pos = tuple(a for a in params["axes"] if isinstance(a, int))
    if not pos:
        return x
    fn = {"psum": np.sum, "pmax": np.max, "pmin": np.min}[name]
    return np.asarray(fn(x, axis=pos)).astype(x.dtype, copy=False)


def run_collective(mesh: Mesh, name: str, params: dict, local: dict[Any, np.ndarray],
                   process: int = 0, communicator: Any = None) -> dict[Any, np.ndarray]:
    """Each local device's result (see the module docstring). `local` maps this process's
    devices (every device of the mesh in one process) to their operand buffers; axis_index
    has no operand (its buffers are ignored)."""
    names = axis_names_of(name, params)
    local = {d: _positional_first(name, params, v) for d, v in local.items()}
    return run_in_groups(groups(mesh, names), name, params, local, process, communicator)


def run_in_groups(all_groups: Sequence[Sequence[Any]], name: str, params: dict,
                  local: dict[Any, np.ndarray], process: int = 0,
                  communicator: Any = None) -> dict[Any, np.ndarray]:
    """`run_collective` over explicit device groups (each in position order, every
    process listing the same groups in the same order): a partitioned module's replica
    groups (ember/spmd/_partitioned.py) as well as a mesh's."""
    out: dict[Any, np.ndarray] = {}
    subs: dict[tuple[int, ...], Any] = {}
    for members in all_groups:
        procs = sorted({d.process_index for d in members})
        mine = [d for d in members if d in local]
        if len(procs) == 1:
            if not mine:
                continue
            results = combine(name, params, [local[d] for d in members])
            for d, r in zip(members, results):
                out[d] = r
            continue
        if communicator is None:
            raise RuntimeError("a collective spans processes but no communicator is set: "
                               "call ember.distributed.initialize() first")
        key = tuple(procs)
        if key not in subs:  # (made by every process, in the same order)
            if len(procs) == communicator.size:
                subs[key] = communicator
            else:
                try:
                    subs[key] = communicator.subgroup(key)
                except ValueError:  # (not a member: it took part, as the protocol says)
                    if process in procs:
                        raise
                    subs[key] = None
        if process not in procs:
            continue
        sub = subs[key]
        if name in REDUCE_OPS:
            partial = _reduce(REDUCE_OPS[name], [local[d] for d in mine])
            total = sub.all_reduce(_contiguous(partial), REDUCE_OPS[name])
            for d in mine:
                out[d] = total
            continue
        if name == "axis_index":
            for d in mine:
                out[d] = np.array(members.index(d), np.int32)
            continue
        counts = {p: sum(d.process_index == p for d in members) for p in procs}
        if len(set(counts.values())) != 1:
            raise NotImplementedError(f"{name} over a group whose processes hold different "
                                      "numbers of its devices")
        stacked = sub.all_gather(np.stack([local[d] for d in mine]))
        taken = {p: 0 for p in procs}
        full = []
        for d in members:  # member d is the next of its process's stacked buffers
            p = d.process_index
            full.append(stacked[procs.index(p)][taken[p]])
            taken[p] += 1
        results = combine(name, params, full)
        for d, r in zip(members, results):
            if d in local:
                out[d] = r
    return out
