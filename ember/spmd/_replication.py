"""shard_map's `check_vma`: which mesh axes each value of the body may vary along, and JAX's
error for an output whose out spec claims it is the same on devices it may differ on.

Input: the body's jaxpr, the mesh, the in and out specs. Output: None, or ValueError with
JAX's text. The varying axes ("vma") of a value: an argument varies along the mesh axes
its in spec names; psum/pmax/pmin over names make their result invariant along those
names; axis_index varies along its axis; all_gather, psum_scatter, ppermute and
all_to_all vary along their axes (as in JAX 0.10.2, all_gather's result is not inferred
replicated); any other equation varies along the union of its operands'. A call (a `jit`
in the body) is followed inside. Invariant: the inference never claims more variance than
JAX's: an equation with a body (loop, branch, custom derivative) holding a reduction is
taken as varying along nothing, so no program JAX accepts is refused here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ember.sharding._mesh import Mesh, PartitionSpec
from ember.spmd._collectives import REDUCE_OPS, axis_names_of
from ember.spmd._specs import parts

_ADDS = frozenset({"all_gather", "reduce_scatter", "ppermute", "all_to_all"})


def _has_reduction(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_reduction(v) for v in value)
    jaxpr = getattr(value, "jaxpr", value)
    if not isinstance(jaxpr, Jaxpr):
        return False
    return any(e.primitive.name in REDUCE_OPS or
               any(_has_reduction(p) for p in e.params.values()) for e in jaxpr.eqns)


def infer(jaxpr: Jaxpr, in_vma: Sequence[frozenset]) -> list[frozenset]:
    """The varying mesh axes of each output of `jaxpr` (see the module docstring)."""
    env: dict[int, frozenset] = {v.id: frozenset() for v in jaxpr.constvars}
    for v, vma in zip(jaxpr.invars, in_vma):
        env[v.id] = vma

    def read(v: Any) -> frozenset:
        return frozenset() if isinstance(v, Literal) else env.get(v.id, frozenset())

    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        ins = frozenset().union(*[read(v) for v in eqn.invars])
        if name in REDUCE_OPS:
            outs = [ins - set(axis_names_of(name, eqn.params))]
        elif name == "axis_index":
            outs = [frozenset(axis_names_of(name, eqn.params))]
        elif name in _ADDS:
            outs = [ins | set(axis_names_of(name, eqn.params))]
        elif eqn.primitive.is_call and isinstance(eqn.params.get("jaxpr"), ClosedJaxpr):
            outs = infer(eqn.params["jaxpr"].jaxpr, [read(v) for v in eqn.invars])
        elif any(_has_reduction(p) for p in eqn.params.values()):
            outs = [frozenset()] * len(eqn.outvars)
        else:
            outs = [ins] * len(eqn.outvars)
        for v, vma in zip(eqn.outvars, outs):
            env[v.id] = vma
    return [read(v) for v in jaxpr.outvars]


def check_replication(jaxpr: Jaxpr, mesh: Mesh, in_specs: Sequence[PartitionSpec],
                      out_specs: Sequence[PartitionSpec], name: str) -> None:
    """JAX's error if an output may vary along a mesh axis its out spec leaves out."""
    in_vma = [frozenset(a for axes in parts(s, len(v.aval.shape)) for a in axes)
              for s, v in zip(in_specs, jaxpr.invars)]
    for spec, vma, v in zip(out_specs, infer(jaxpr, in_vma), jaxpr.outvars):
        named = {a for axes in parts(spec, len(v.aval.shape)) for a in axes}
        bad = [a for a in mesh.axis_names if a in vma and a not in named]
        if not bad:
            continue
        unsure = ", ".join(f"'{a}'" for a in bad)
        raise ValueError(
            f"shard_map applied to the function '{name}' was given out_specs which require "
            "replication which can't be statically inferred given the mesh:\n\n"
            f"The mesh given has shape {tuple(mesh.devices.shape)} with corresponding axis "
            f"names {mesh.axis_names}.\n\n"
            f"out_specs is {spec!r} which implies that the corresponding output value is "
            f"replicated across mesh axis {unsure}, but could not infer replication over "
            f"any axes\n\nCheck if these output values are meant to be replicated over "
            "those mesh axes. If not, consider revising the corresponding out_specs "
            "entries. If so, consider disabling the check by passing the check_vma=False "
            "argument to `jax.shard_map`.")
