"""`jit` over a mesh: the calls of a `jit(f, in_shardings=..., out_shardings=...)` whose
shardings (or whose arguments' shardings) span several devices run partitioned
(`PartitionedProgram`), each device on its own blocks; so do the calls of a plain `jit(f)`
with an argument laid out over several devices, or whose program constrains a value to a
mesh of several devices (`with_sharding_constraint`; ember/api.py asks).

Input: the JitFunction, its in/out sharding prefixes, the call's arguments. Output: the
results as ShardedArrays, or None when the call is not for a mesh of several devices (the
caller then runs it on one device). `PartitionedLowered` and `PartitionedCompiled` are
the stages `JitFunction.lower(...)` gives such a call (`compile().as_text()` is the
per-device module with its collectives, `partition_report` what it costs).
Invariants: one mesh per call (shardings over two meshes raise ValueError);
arguments with no sharding given take their own NamedSharding on that mesh, else the one
their readers want (the partitioner's backward propagation), else are whole on every
device; programs are cached per trace and shardings.
"""

from __future__ import annotations

from typing import Any

from ember.core.jaxpr import ClosedJaxpr
from ember.core.trace import current_dynamic
from ember.hlo.sharding import HloSharding
from ember.sharding._array import ShardedArray
from ember.sharding._mesh import Mesh, PartitionSpec
from ember.sharding._shardings import NamedSharding, as_sharding
from ember.spmd._constraints import constrained_over_devices
from ember.spmd._partitioned import PartitionedProgram, mesh_axes, to_hlo
from ember.tree_util import tree_unflatten


def _named(s: Any, what: str) -> NamedSharding | None:
    if s is None:
        return None
    sh = as_sharding(s, f"jit {what}")
    return sh if isinstance(sh, NamedSharding) else None


def _mesh(in_leaf: list, out_leaf: list, leaves: list, closed: ClosedJaxpr) -> Mesh | None:
    meshes = [s.mesh for s in in_leaf + out_leaf if s is not None]
    meshes += list(constrained_over_devices(closed))
    meshes += [x.sharding.mesh for x in leaves if isinstance(x, ShardedArray)
               and isinstance(x.sharding, NamedSharding)]
    meshes = [m for m in meshes if m.size > 1]
    if not meshes:
        return None
    for m in meshes[1:]:
        if m != meshes[0]:
            raise ValueError(f"jit: shardings over two meshes in one call: {meshes[0]} and "
                             f"{m}")
    return meshes[0]


def _leaf_shardings(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, list, list, list]:
    from ember.jit_placement import _per_leaf

    result, leaves = fn._lookup(args, kwargs)
    dyn_args = fn._split(args, kwargs)[0]  # (in_shardings name the dynamic arguments)
    prefix = getattr(fn, "_in_shardings", None)  # (a plain jit: its arguments' own)
    if isinstance(prefix, list):
        prefix = tuple(prefix)
    if not isinstance(prefix, tuple) or isinstance(prefix, PartitionSpec):
        prefix = (prefix,) * len(dyn_args)
    pos = _per_leaf(prefix, dyn_args, "in_shardings")
    ins = [_named(s, "in_shardings") for s in pos]
    ins += [None] * (len(leaves) - len(ins))
    n_out = len(result.closed_jaxpr.out_avals)
    outs: list = [None] * n_out
    out_prefix = getattr(fn, "_out_shardings", None)
    if out_prefix is not None:
        dummy = tree_unflatten(result.out_tree, [0] * n_out)
        outs = [_named(s, "out_shardings") for s in
                _per_leaf(out_prefix, dummy, "out_shardings")]
    return result, leaves, ins, outs


def _hlo(s: NamedSharding | None, mesh: Mesh, ndim: int, what: str) -> HloSharding | None:
    if s is None:
        return None
    if s.mesh != mesh:
        raise ValueError(f"jit: {what} is over another mesh than the call's ({mesh})")
    return to_hlo(s, ndim)


def _program(fn: Any, args: tuple, kwargs: dict) -> tuple[Any, PartitionedProgram, list
                                                          ] | None:
    if current_dynamic().level > 0:  # (traced: the enclosing program runs it)
        return None
    result, leaves, ins, outs = _leaf_shardings(fn, args, kwargs)
    mesh = _mesh(ins, outs, leaves, result.closed_jaxpr)
    if mesh is None or result.hoisted:
        return None
    avals = result.closed_jaxpr.in_avals
    in_hlo = []
    free = []  # (no sharding given or carried: the partitioner picks, from its readers)
    for k, (s, x, aval) in enumerate(zip(ins, leaves, avals)):
        if s is None and isinstance(x, ShardedArray) and isinstance(x.sharding, NamedSharding) \
                and x.sharding.mesh == mesh:
            s = x.sharding
        h = _hlo(s, mesh, aval.ndim, f"the sharding of argument {result.arg_names[k]}")
        if h is None:
            free.append(k)
        in_hlo.append(h or HloSharding.replicated(mesh_axes(mesh), aval.ndim))
    out_hlo = [_hlo(s, mesh, a.ndim, f"out_shardings[{k}]")
               for k, (s, a) in enumerate(zip(outs, result.closed_jaxpr.out_avals))]
    from ember.dispatch import _warn_unusable_donations, donated_positions

    donated = donated_positions(result.params)
    key = (id(result), tuple(in_hlo), tuple(out_hlo), tuple(free), donated)
    cache = fn.__dict__.setdefault("_partitioned", {})
    hit = cache.get(key)
    if hit is None or hit[0] is not result:
        hit = cache[key] = (result, PartitionedProgram(result.closed_jaxpr, fn._name, mesh,
                                                       in_hlo, out_hlo, outs, free, donated))
        _warn_unusable_donations(result.closed_jaxpr, donated)
    return result, hit[1], leaves


def call_partitioned(fn: Any, args: tuple, kwargs: dict) -> Any:
    """The call's results, run partitioned; None when it is not for a mesh."""
    got = _program(fn, args, kwargs)
    if got is None:
        return None
    result, program, leaves = got
    outs = program(leaves)
    out_prefix = getattr(fn, "_out_shardings", None)
    if out_prefix is not None:  # (an output wanted on one device: moved there after)
        from ember.array import device_put
        from ember.jit_placement import _per_leaf

        dummy = tree_unflatten(result.out_tree, [0] * len(outs))
        for k, s in enumerate(_per_leaf(out_prefix, dummy, "out_shardings")):
            if s is not None and _named(s, "out_shardings") is None:
                outs[k] = device_put(outs[k], as_sharding(s, "jit out_shardings"))
    return tree_unflatten(result.out_tree, outs)


def is_for_mesh(fn: Any, args: tuple, kwargs: dict) -> bool:
    """Whether a call of `fn` with these arguments runs partitioned."""
    return _program(fn, args, kwargs) is not None


class PartitionedLowered:
    """`jit(f, in_shardings=...).lower(*args)` for a mesh: the HLO before partitioning
    (`as_text()`); `compile()` partitions and compiles it."""

    def __init__(self, fn: Any, args: tuple, kwargs: dict) -> None:
        self._fn, self._args, self._kwargs = fn, args, kwargs
        got = _program(fn, args, kwargs)
        assert got is not None
        self._program = got[1]

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The HLO of the whole program (what every device's module is cut from)."""
        from ember.hlo.printer import print_module
        return print_module(self._program.lowered.module, metadata=debug_info)

    def compile(self) -> PartitionedCompiled:
        return PartitionedCompiled(self._fn, self._args, self._kwargs)


class PartitionedCompiled:
    """`jit(f, in_shardings=...).lower(*args).compile()` for a mesh: the per-device
    module (`as_text()`), the report of its collectives and refusals (`partition_report`),
    and a call."""

    def __init__(self, fn: Any, args: tuple, kwargs: dict) -> None:
        got = _program(fn, args, kwargs)
        assert got is not None
        self._fn = fn
        self._result, self.program, _ = got

    def as_text(self, *, debug_info: bool = False) -> str:
        """The per-device HLO, with its collectives (before the backend's passes)."""
        from ember.hlo.printer import print_module
        return print_module(self.program.module, mode="display", metadata=debug_info)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost model on one device's module (its flops and bytes; the collectives'
        traffic is `partition_report`'s)."""
        from ember.hlo.cost_analysis import cost_analysis
        return cost_analysis(self.program.module)

    @property
    def partition_report(self) -> Any:
        """The collectives inserted (bytes per device) and the refusals."""
        return self.program.report

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _, _, in_tree, leaves, _, _ = self._fn.flatten_call(args, kwargs)
        return tree_unflatten(self._result.out_tree, self.program(leaves))
