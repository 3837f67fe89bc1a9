"""The runtime's collectives: what each device of a shard_map receives from a collective
over mesh axes, given every participating device's buffer.

Input: the mesh, the collective's primitive name and params, and the buffers (NumPy) of
this process's devices. Output: each local device's result buffer. Devices form groups:
those equal on every mesh axis the collective does not name; a device's position in its
group is the row-major index of its coordinates over the named axes, in the order the
collective names them (axis_index's and all_gather's order).
Within a process the buffers are combined in memory (`combine`, in group order, so every
member computes the same bits). A group spanning processes goes through the
`Communicator` of `ember.distributed.topology` by the matching MPI collective, on buffers
laid out so that each process's part is contiguous: a reduction is reduced over the local
members first and then all-reduced; all_gather is an Allgather of each process's stacked
members, reduce_scatter a Reduce_scatter_block of the local members' sum (each process
receiving its members' blocks), all_to_all an Alltoall of the pieces each local member
sends to each remote one, ppermute point-to-point messages (`exchange`) for the pairs
between processes and copies for the others. Invariants: every process calls the
communicator for the same groups in the same order (groups are visited in mesh order; a
group's sub-communicator is made once per communicator, by every process, the first time a
collective needs it, and kept); no Python object crosses a process, only contiguous
buffers.
"""

from __future__ import annotations

import itertools
import weakref
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
                  communicator: Any = None,
                  outs: dict[Any, np.ndarray] | None = None) -> dict[Any, np.ndarray]:
    """`run_collective` over explicit device groups (each in position order, every
    process listing the same groups in the same order): a partitioned module's replica
    groups (ember/spmd/_partitioned.py) as well as a mesh's. `outs`: buffers some devices'
    results may be written into (a device alone in its process in a reduction across
    processes receives MPI's result there, without a copy)."""
    spans = [len({d.process_index for d in members}) > 1 for members in all_groups]
    if any(spans) and communicator is None:
        raise RuntimeError("a collective spans processes but no communicator is set: "
                           "call ember.distributed.initialize() first")
    if name == "ppermute" and any(spans):
        return _permute_across(all_groups, params["perm"], local, communicator, outs)
    out: dict[Any, np.ndarray] = {}
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
        sub = _subgroup(communicator, tuple(procs), process)
        if process not in procs:
            continue
        if name == "axis_index":
            for d in mine:
                out[d] = np.array(members.index(d), np.int32)
            continue
        if name in REDUCE_OPS:
            partial = _reduce(REDUCE_OPS[name], [local[d] for d in mine])
            dest = outs.get(mine[0]) if outs and len(mine) == 1 else None
            total = (sub.all_reduce(_contiguous(partial), REDUCE_OPS[name]) if dest is None
                     else sub.all_reduce(_contiguous(partial), REDUCE_OPS[name], out=dest))
            for d in mine:
                out[d] = total
            continue
        out.update(_across(sub, name, params, members, procs, process, local))
    return out


# each communicator's sub-communicators by the processes they join (None where this
# process is not one of them): MPI_Comm_split is collective and costs a round trip, so each
# is made once, the first time a collective needs it (every process meets that collective
# at the same point of the same program, so they all make it there together)
_SUBGROUPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _subgroup(communicator: Any, procs: tuple[int, ...], process: int) -> Any:
    """The communicator of the processes `procs` (made by every process, once)."""
    if len(procs) == communicator.size:
        return communicator
    made = _SUBGROUPS.setdefault(communicator, {})
    if procs not in made:
        try:
            made[procs] = communicator.subgroup(procs)
        except ValueError:  # (not a member: it took part, as the protocol says)
            if process in procs:
                raise
            made[procs] = None
    return made[procs]


def _across(sub: Any, name: str, params: dict, members: Sequence[Any], procs: list[int],
            process: int, local: dict[Any, np.ndarray]) -> dict[Any, np.ndarray]:
    """This process's members' results of a collective whose group spans processes, by the
    matching MPI collective of the group's communicator (rank r: process procs[r]) on
    buffers laid out so that rank r's part is contiguous: all_gather by Allgather,
    reduce_scatter by Reduce_scatter_block, all_to_all by Alltoall. Every process holds
    the same number k of the group's members."""
    held = {p: [d for d in members if d.process_index == p] for p in procs}
    k = len(held[procs[0]])
    if any(len(v) != k for v in held.values()):
        raise NotImplementedError(f"{name} over a group whose processes hold different "
                                  "numbers of its devices")
    mine = held[process]
    pos = {d: i for i, d in enumerate(members)}
    n = len(members)
    if name == "all_gather":
        stacked = sub.all_gather(np.stack([local[d] for d in mine]))  # (P, k, *block)
        full = [stacked[procs.index(d.process_index)][held[d.process_index].index(d)]
                for d in members]
        out = combine(name, params, full)[0]
        return {d: out for d in mine}
    if name == "reduce_scatter":
        partial = _reduce("sum", [local[d] for d in mine])
        sd = params["scatter_dimension"]
        blocks = (np.split(partial, n, axis=sd) if params["tiled"]
                  else [np.take(partial, i, axis=sd) for i in range(n)])
        # (rank r's members' blocks together, in the order r holds them)
        send = np.stack([blocks[pos[d]] for p in procs for d in held[p]])
        got = sub.reduce_scatter(send, "sum")  # (k, *block): this process's members'
        return {d: np.array(got[a], order="C") for a, d in enumerate(mine)}
    if name == "all_to_all":
        sa, ca = params["split_axis"], params["concat_axis"]
        pieces = {d: np.split(local[d], n, axis=sa) for d in mine}
        # for rank r: for each of r's members t, for each of this process's members s,
        # the piece s sends to t
        send = np.stack([pieces[s][pos[t]] for p in procs for t in held[p] for s in mine])
        got = sub.all_to_all(send)
        got = got.reshape((len(procs), k, k) + got.shape[1:])  # [rank, my member, theirs]
        out = {}
        for a, t in enumerate(mine):
            parts = [got[procs.index(j.process_index), a, held[j.process_index].index(j)]
                     for j in members]
            out[t] = np.concatenate(parts, axis=ca)
        return out
    raise NotImplementedError(f"the shard_map runtime has no collective {name} across "
                              "processes")


def _permute_across(all_groups: Sequence[Sequence[Any]], perm: Sequence[tuple[int, int]],
                    local: dict[Any, np.ndarray], communicator: Any,
                    outs: dict[Any, np.ndarray] | None = None) -> dict[Any, np.ndarray]:
    """ppermute where a group spans processes: a pair within this process is a copy, one
    between processes a message from the source's process to the target's (point to
    point, tagged with the target device's id, so several pairs between two processes
    stay apart); every process makes the one `exchange` call, with what it sends and
    receives (perhaps nothing), so the communicator's collectives stay counted alike.
    A target's result goes straight into its buffer in `outs` where one fits and shares
    no memory with any operand (a message then lands there, no copy after)."""
    src_of = {int(t): int(s) for s, t in perm}
    out: dict[Any, np.ndarray] = {}
    sends: list[tuple[int, int, np.ndarray]] = []
    receives: list[tuple[int, int, np.ndarray]] = []
    operands = list(local.values())
    for members in all_groups:
        for t, target in enumerate(members):
            s = src_of.get(t)
            source = members[s] if s is not None else None
            if target in local:
                like = np.asarray(local[target])
                dest = _fitting(outs.get(target) if outs else None, like, operands)
                if dest is None:
                    dest = np.empty(like.shape, like.dtype)
                if source is None:
                    dest.fill(0)
                elif source in local:
                    np.copyto(dest, local[source])
                else:
                    receives.append((source.process_index, _tag(target), dest))
                out[target] = dest
            elif source is not None and source in local:
                sends.append((target.process_index, _tag(target),
                              _contiguous(local[source])))
    communicator.exchange(sends, receives)
    return out


def _fitting(buf: np.ndarray | None, like: np.ndarray, operands: list[np.ndarray]
             ) -> np.ndarray | None:
    """`buf` where it can take a result like `like` (same shape and dtype, C-contiguous,
    writable, apart from every operand), else None."""
    if buf is None or buf.shape != like.shape or buf.dtype != like.dtype \
            or not buf.flags.c_contiguous or not buf.flags.writeable:
        return None
    if any(np.may_share_memory(buf, o) for o in operands):
        return None
    return buf


def _tag(device: Any) -> int:
    """A message's tag: its target device's id (MPI guarantees tags up to 32767)."""
    return int(device.id) % 32768
