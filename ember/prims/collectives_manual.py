"""The collectives of a shard_map body lowered for one device: each becomes the HLO
collective XLA's shard_map lowering gives it, over the mesh axes it names.

Input: a lowering context whose driver lowers for one device (`ctx.lowerer.manual`: the
mesh axes (name, size) in mesh order; partition ids are row-major over them), the
operand, and the primitive's params. Output: the per-device instruction:
  psum, pmax, pmin        -> all-reduce (add, maximum, minimum; or/and on booleans)
  all_gather              -> all-gather (untiled: a unit dimension gathered)
  reduce_scatter          -> reduce-scatter with add (untiled: then that dimension dropped)
  ppermute                -> collective-permute, each group's pairs as partition ids
  all_to_all              -> all-to-all on the split dimension cut into one block per
                             member, the blocks received moved before the concat dimension
  axis_index              -> arithmetic on the partition-id parameter
Groups are `hlo.sharding.replica_groups`: devices equal on every other mesh axis, each
group in the order of its members' row-major index over the named axes (the order
axis_index and the runtime use). Invariant: what cannot be said this way (axis_index_groups,
axis_index inside a loop or branch) raises LoweringError, and the caller runs the body
stage by stage instead.
"""

from __future__ import annotations

from typing import Any

from ember.hlo.builder import Builder
from ember.hlo.ir import Instruction
from ember.hlo.sharding import replica_groups
from ember.lowering import LoweringError

# (booleans: a sum of bools cast back to bool is or, as the runtime reduces them)
_COMBINERS = {"psum": "add", "pmax": "maximum", "pmin": "minimum"}
_BOOL_COMBINERS = {"psum": "or", "pmax": "or", "pmin": "and"}


def manual_axes(ctx: Any) -> tuple[tuple[str, int], ...] | None:
    """The mesh axes when `ctx` lowers a shard_map body for one device, else None."""
    lowerer = getattr(ctx, "lowerer", None)
    return getattr(lowerer, "manual", None)


def _groups(ctx: Any, names: Any, what: str, axis_index_groups: Any = None
            ) -> tuple[tuple[int, ...], ...]:
    if axis_index_groups is not None:
        raise LoweringError(f"{what} with axis_index_groups in a per-device module")
    names = tuple(names) if isinstance(names, (tuple, list)) else (names,)
    mesh = manual_axes(ctx)
    assert mesh is not None
    known = {a for a, _ in mesh}
    if any(a not in known for a in names):
        raise LoweringError(f"{what} over {names}: not axes of the mesh {mesh}")
    return replica_groups(mesh, names)


def reduction(ctx: Any, x: Instruction, name: str, names: tuple, axis_index_groups: Any
              ) -> Instruction:
    """psum/pmax/pmin over mesh axes `names` (positional axes already reduced)."""
    groups = _groups(ctx, names, name, axis_index_groups)
    t = x.shape.element_type
    opcode = (_BOOL_COMBINERS if t == "pred" else _COMBINERS)[name]
    return ctx.b.op("all-reduce", [x], {"replica_groups": groups},
                    called=[Builder.scalar_computation(opcode, t)])


def all_gather(ctx: Any, x: Instruction, *, axis_name: tuple, all_gather_dimension: int,
               axis_index_groups: Any, axis_size: int, tiled: bool) -> Instruction:
    groups = _groups(ctx, axis_name, "all_gather", axis_index_groups)
    b, dim = ctx.b, all_gather_dimension
    if not tiled:  # (a unit dimension at `dim`, gathered into the stacked one)
        dims = x.shape.dimensions
        x = b.reshape(x, dims[:dim] + (1,) + dims[dim:])
    return b.op("all-gather", [x], {"dimensions": (dim,), "replica_groups": groups})


def reduce_scatter(ctx: Any, x: Instruction, *, axis_name: tuple, scatter_dimension: int,
                   axis_index_groups: Any, axis_size: int, tiled: bool) -> Instruction:
    groups = _groups(ctx, axis_name, "reduce_scatter", axis_index_groups)
    b, dim = ctx.b, scatter_dimension
    t = x.shape.element_type
    out = b.op("reduce-scatter", [x], {"dimensions": (dim,), "replica_groups": groups},
               called=[Builder.scalar_computation("or" if t == "pred" else "add", t)])
    if not tiled:  # (the dimension had one element per member: this member's, dropped)
        dims = out.shape.dimensions
        out = b.reshape(out, dims[:dim] + dims[dim + 1:])
    return out


def ppermute(ctx: Any, x: Instruction, *, axis_name: tuple, perm: tuple) -> Instruction:
    """Within each group, member s sends to member t for each (s, t) of `perm`."""
    groups = _groups(ctx, axis_name, "ppermute")
    pairs = tuple((g[s], g[t]) for g in groups for s, t in perm)
    return ctx.b.op("collective-permute", [x], {"source_target_pairs": pairs})


def all_to_all(ctx: Any, x: Instruction, *, axis_name: tuple, split_axis: int,
               concat_axis: int, axis_index_groups: Any, tiled: bool = True) -> Instruction:
    """Block i of each member's split axis to member i, the blocks received concatenated
    along the concat axis in member order: the split axis cut into (n, size/n), the HLO
    all-to-all swapping the n blocks (so that axis then counts the sending member), that
    axis moved before the concat axis and merged into it."""
    groups = _groups(ctx, axis_name, "all_to_all", axis_index_groups)
    b, n = ctx.b, len(groups[0])
    sa, ca = split_axis, concat_axis
    if sa == ca:
        return b.op("all-to-all", [x], {"dimensions": (sa,), "replica_groups": groups})
    shape = list(x.shape.dimensions)
    cut = shape[:sa] + [n, shape[sa] // n] + shape[sa + 1:]
    y = b.op("all-to-all", [b.reshape(x, tuple(cut))],
             {"dimensions": (sa,), "replica_groups": groups})
    at = ca if ca < sa else ca + 1  # (where the concat axis sits in `cut`)
    order = [d for d in range(len(cut)) if d != sa]
    order.insert(order.index(at), sa)
    y = b.transpose(y, tuple(order))
    out = list(shape)
    out[sa] //= n
    out[ca] *= n
    return b.reshape(y, tuple(out))


def axis_index(ctx: Any, *, axis_name: Any) -> Instruction:
    """The row-major index of this device's coordinates over the named axes, from its
    partition id: coordinate along axis a = (id / (product of later mesh axes)) % size(a)."""
    lowerer = ctx.lowerer
    pid = lowerer.partition_id
    if pid is None or ctx.b is not lowerer.entry:
        raise LoweringError("axis_index inside a loop or branch of a per-device module")
    mesh = manual_axes(ctx)
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    _groups(ctx, names, "axis_index")
    b = ctx.b
    sizes = dict(mesh)
    axes = [a for a, _ in mesh]

    def s32(v: int) -> Instruction:
        return b.scalar(v, "s32")

    out: Instruction | None = None
    for a in names:
        stride = 1
        for later in axes[axes.index(a) + 1:]:
            stride *= sizes[later]
        c = b.binary("divide", pid, s32(stride)) if stride != 1 else pid
        c = b.binary("remainder", c, s32(sizes[a]))
        out = c if out is None else b.binary("add", b.binary("multiply", out,
                                                             s32(sizes[a])), c)
    assert out is not None
    return out
