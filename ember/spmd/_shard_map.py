"""`ember.shard_map` (and `ember.experimental.shard_map.shard_map`): a function written for
one device's block of each array, run on every device of a mesh, with collectives over
the mesh axis names.

Input: `f`, `mesh` (or the current `with mesh:`), `in_specs` (a pytree prefix of the
arguments; by default each argument's own NamedSharding spec, else replicated),
`out_specs` (a pytree prefix of the outputs), `check_vma`/`check_rep`, `axis_names`.
Output: a function of the global arrays returning global arrays (`ShardedArray`s laid out
as `out_specs` says when run eagerly).
How it runs: the body is traced once, for the per-device shapes (mesh axis names bound,
`core.batching.spmd_axis_env`). Called on concrete arrays, the runtime runs that jaxpr on
every device, doing the collectives itself (`_runtime.py`); called on traced values (inside
`jit`, `grad`, `vmap`) the jaxpr becomes one program over all the blocks, the mesh axes as
named vmaps (`_emulate.py`), which the enclosing transformation handles like any other;
inside `jit` over a mesh of several devices that program carries sharding constraints
(each block on its device, each output laid out as its out spec), so the SPMD partitioner
(passes/spmd_partitioner.py) makes it the per-device body with its collectives.
A call on arrays outside any trace keeps its traced body per signature (mesh, specs,
argument structure and types, tracing flags): calls again skip the trace, and the
runtime compiles the body on the second call (one per-device module with HLO
collectives, else its stages) and reuses it after.
Invariants: both ways give the per-device program's values; a body with a collective in a
loop or branch also runs the second way eagerly. `check_vma` (default True) raises JAX's
error for an output that may vary along a mesh axis its out spec leaves out
(`_replication.py`); with it off, such an output is read from the devices at coordinate 0
of those axes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ember.api import fun_name
from ember.array import ArrayImpl
from ember.config import config
from ember.core.aval import ShapedArray
from ember.core.batching import eval_body, spmd_axis_env
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import Tracer, current_dynamic, get_aval
from ember.core.traceback_util import api_boundary
from ember.sharding._array import ShardedArray, covers
from ember.sharding._mesh import Mesh, PartitionSpec, current_mesh
from ember.sharding._shardings import NamedSharding
from ember.spmd import _runtime
from ember.spmd._emulate import emulate
from ember.spmd._replication import check_replication
from ember.spmd._specs import block_shape, check_spec, cut, global_shape
from ember.tree_util import tree_flatten, tree_structure, tree_unflatten


class _Infer:
    def __repr__(self) -> str:
        return "Infer"


Infer = _Infer()


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _broadcast_prefix(prefix: Any, tree: Any, what: str) -> list[Any]:
    """One spec per leaf of `tree`: `prefix` is a pytree prefix of it whose leaves are
    PartitionSpecs (or None), each applying to every leaf of the subtree it covers."""
    prefix_def = tree_structure(prefix, is_leaf=_is_spec)
    spec_leaves = tree_flatten(prefix, is_leaf=_is_spec)[0]
    try:
        subtrees = prefix_def.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"shard_map {what} must be a pytree prefix of the corresponding "
                         f"value, got {what} {prefix!r} for a value of structure "
                         f"{tree_structure(tree)}.") from e
    out: list[Any] = []
    for spec, sub in zip(spec_leaves, subtrees):
        out.extend([spec] * len(tree_flatten(sub)[0]))
    return out


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = Infer,
              mesh: Mesh | None = None, axis_names: Any = frozenset(),
              check_vma: bool = True) -> Any:
    """Map `f` over the blocks of its arguments on the devices of `mesh` (as
    jax.shard_map); see the module docstring."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs,
                                 mesh=mesh, axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError("shard_map requires a callable for its first argument, but got "
                        f"{f} of type {type(f)}.")

    traced: dict[Any, _Traced] = {}  # (calls on arrays, outside any trace: per signature)
    specs: dict[Any, list] = {}  # (in_specs broadcast per argument structure)

    @functools.wraps(f)
    @api_boundary
    def wrapped(*args: Any) -> Any:
        m = mesh if mesh is not None else current_mesh()
        if m is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context or pass a mesh to shard_map")
        return _call(f, m, in_specs, out_specs, args, check_vma, traced, specs)

    wrapped._traced = traced  # type: ignore[attr-defined]

    return wrapped


def _infer_spec(x: Any, mesh: Mesh) -> PartitionSpec:
    s = getattr(x, "sharding", None) if isinstance(x, ShardedArray) else None
    if isinstance(s, NamedSharding) and s.mesh == mesh:
        return s.spec
    return PartitionSpec()


@dataclass
class _Traced:
    """A body traced for one signature: what a repeated call reuses (no trace, and its
    stages compiled once, on the second call: `_runtime.StagedBody`)."""

    closed: Any
    out_tree: Any
    o_specs: list
    out_avals: list
    body: _runtime.StagedBody | None  # None: not runnable stage by stage
    # (made on the first run, reused by every call: the arguments' shardings, and each
    # output's sharding and global aval)
    in_named: list | None = None
    out_named: list | None = None
    out_global: list | None = None
    out_covers: list | None = None  # (whether this process holds every block of each)


def _call(f: Callable, mesh: Mesh, in_specs: Any, out_specs: Any, args: tuple,
          check_vma: bool, traced: dict[Any, _Traced] | None = None,
          spec_cache: dict[Any, list] | None = None) -> Any:
    leaves, in_tree = tree_flatten(args)
    avals = [get_aval(x) for x in leaves]
    # (the given in_specs broadcast over an argument structure once: a repeated call
    # skips the prefix matching, tens of microseconds)
    spec_key = (mesh, in_tree, tuple(a.ndim for a in avals))
    specs = None if in_specs is Infer or spec_cache is None else spec_cache.get(spec_key)
    if specs is None:
        if in_specs is Infer:
            specs = [_infer_spec(x, mesh) for x in leaves]
        else:
            prefix = tuple(in_specs) if isinstance(in_specs, list) else in_specs
            specs = _broadcast_prefix(prefix, args, "in_specs")
        specs = [check_spec(mesh, s, a.ndim, "in_specs") for s, a in zip(specs, avals)]
        if in_specs is not Infer and spec_cache is not None:
            spec_cache[spec_key] = specs
    key = None
    if traced is not None and current_dynamic().level == 0 and not any(
            isinstance(x, Tracer) for x in leaves):
        key = (mesh, in_tree, tuple(specs), tuple((a.shape, a.dtype, a.weak_type)
                                                  for a in avals),
               check_vma, config.trace_context())
        got = traced.get(key)
        if got is not None and got.body is not None:
            return tree_unflatten(got.out_tree, _run(got, mesh, specs, leaves))
    blocks = [ShapedArray(block_shape(mesh, s, a.shape, "in_specs"), a.dtype, a.weak_type)
              for s, a in zip(specs, avals)]
    out_tree_box: list[Any] = []

    def flat_body(*xs: Any) -> list[Any]:
        outs = f(*tree_unflatten(in_tree, list(xs)))
        out_leaves, out_tree = tree_flatten(outs)
        out_tree_box.append((out_tree, outs))
        return [x if isinstance(x, (Tracer, ArrayImpl)) else np.asarray(x) for x in out_leaves]

    # the body is traced once, for the blocks, whatever runs it after
    with spmd_axis_env(dict(mesh.shape)):
        closed, out_avals = trace_to_jaxpr(flat_body, blocks)
    out_tree, outs_traced = out_tree_box[-1]
    o_specs = _broadcast_prefix(out_specs, outs_traced, "out_specs")
    o_specs = [check_spec(mesh, s, a.ndim, "out_specs") for s, a in zip(o_specs, out_avals)]
    if check_vma:
        check_replication(closed.jaxpr, mesh, specs, o_specs, fun_name(f))
    if any(isinstance(x, Tracer) for x in leaves) or not _runtime.runnable(closed):
        def per_device(*xs: Any) -> list[Any]:
            return eval_body(closed.jaxpr, closed.consts, *xs)
        outs = emulate(per_device, mesh, specs, o_specs, leaves)
        return tree_unflatten(out_tree, outs)
    entry = _Traced(closed, out_tree, o_specs, out_avals, _runtime.StagedBody(closed))
    if key is not None:
        traced[key] = entry
    return tree_unflatten(out_tree, _run(entry, mesh, specs, leaves))


def _run(entry: _Traced, mesh: Mesh, specs: list, leaves: list) -> list[Any]:
    from ember.distributed import topology
    topo = topology.current()
    devices = [d for d in mesh.devices.flat if d.process_index == topo.process_index]
    if entry.in_named is None:
        entry.in_named = [NamedSharding(mesh, s) for s in specs]
        entry.out_named = [NamedSharding(mesh, s) for s in entry.o_specs]
        entry.out_global = [ShapedArray(global_shape(mesh, s, a.shape), a.dtype, a.weak_type)
                            for s, a in zip(entry.o_specs, entry.out_avals)]
        mine = dict.fromkeys(devices)
        entry.out_covers = [covers(a, n, mine)
                            for a, n in zip(entry.out_global, entry.out_named)]
    per_arg = []
    for x, s, named in zip(leaves, specs, entry.in_named):
        if isinstance(x, ShardedArray) and x.sharding == named and not x.is_deleted():
            shards = x._shards  # (its own buffers, lent: nothing writes them)
            per_arg.append([shards[d] for d in devices])
        else:
            per_arg.append(cut(np.asarray(x), mesh, s, devices))
    blocks = [[arg[k] for arg in per_arg] for k in range(len(devices))]
    assert entry.body is not None
    outs = entry.body.run(mesh, devices, blocks, topo.process_index, topo.communicator)
    results = []
    assert entry.out_named is not None and entry.out_global is not None
    assert entry.out_covers is not None
    for j, (named, aval, whole) in enumerate(zip(entry.out_named, entry.out_global,
                                                 entry.out_covers)):
        by_dev = {}
        for k, d in enumerate(devices):
            buf = np.require(outs[k][j], dtype=aval.dtype, requirements="C")
            if buf.flags.writeable:  # (a fresh result: nobody else holds it)
                buf.setflags(write=False)
            by_dev[d] = buf
        # (the value is assembled from the shards when first read, where this process
        # holds every block: a result fed to the next call is never assembled)
        results.append(ShardedArray(aval, named, by_dev, lazy=True, covers=whole))
    return results
