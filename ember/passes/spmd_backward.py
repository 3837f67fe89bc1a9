"""Backward sharding propagation for the SPMD partitioner: from the shardings the outputs,
the constraints and the readers of each value want, the sharding each value's operands
should have (the backward half of GSPMD's propagation; spmd_partitioner.py's forward pass
is the other).

Input: the entry computation of a module, the shardings a first forward pass gave every
value (`Local`s by instruction), the outputs' wanted shardings, and the shardings each
while loop's body gave its results (`loop_hints`). Output: `Wants`: per instruction, the
sharding its readers want (`values`), and per tuple that starts a while loop, the
shardings its elements should enter the loop with (`carries`). Rules, from a reader whose
sharding is S (wanted, or else what the forward pass gave it) to its operand:
  elementwise         an operand of the same rank wants S
  broadcast           operand dim i wants S's split of result dim dimensions[i]
  transpose           operand dim dimensions[i] wants S's split of result dim i
  reduce (one input)  the kept dims want S's splits in order, the reduced dims whole
  dot                 batch and free dims want S's splits of the result dims they become,
                      a contracted dim the split the forward pass gave either side's
  reshape             a split result dim that is the major dim of a group of dims the
                      reshape keeps wants the group's major operand dim split so
  slice, pad, reverse, a dim taken whole wants S's split (every operand of a
  dynamic-slice,      concatenate)
  concatenate
  while               a carried value the forward pass kept whole, which the body's result
                      split (`loop_hints`), wants that split for the whole loop
  anything else       nothing (its operands keep what the forward pass gives them)
Several readers: the most split want wins (the first in reverse program order on a tie);
whole wants say nothing (a whole value is sliced for free). A parameter's want
(`params`) counts only where every reader wants the same split: one reading it whole (or
without a rule) would otherwise gather it, where a whole parameter is sliced for free.
How the second forward pass uses them: a parameter without a sharding of its own takes its
want (the host cuts its blocks: no communication); an elementwise op whose operands
disagree takes the one its readers want; a while loop's carried value kept whole enters
the loop split (a local slice), so the body stops gathering it each iteration; a scatter
into a whole operand, wanted split, slices it and scatters into the blocks
(spmd_indexing.py).
Invariants: wants are hints: the forward pass still only uses a sharding the rules allow,
so results are those of the forward pass alone; nothing here emits code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ember.hlo.ir import Computation, Instruction
from ember.hlo.sharding import CONSTRAINT_KEY, HloSharding
from ember.passes.spmd_reshard import Local
from ember.passes.spmd_rules import blocks_of, fit, reshape_groups


@dataclass
class Wants:
    values: dict[Instruction, HloSharding] = field(default_factory=dict)
    carries: dict[Instruction, list[HloSharding | None]] = field(default_factory=dict)
    params: dict[int, HloSharding] = field(default_factory=dict)  # by parameter number


def _operand_wants(inst: Instruction, s: HloSharding, env: dict[Instruction, Local]
                   ) -> list[HloSharding | None]:
    """What `inst`, laid out as `s`, wants of each of its operands (None: nothing); `env`
    the forward pass's shardings (a dot's contraction: split as its other side is)."""
    mesh, op = s.mesh, inst.opcode
    ops = inst.operands
    if inst.is_elementwise() and ops:
        return [s if o.shape.rank == inst.shape.rank else None for o in ops]
    if op == "broadcast":
        return [HloSharding(mesh, tuple(s.dims[d] for d in inst.attrs["dimensions"]))]
    if op == "transpose":
        perm = inst.attrs["dimensions"]
        dims: list[tuple[str, ...]] = [()] * len(perm)
        for i, p in enumerate(perm):
            dims[p] = s.dims[i]
        return [HloSharding(mesh, tuple(dims))]
    if op == "reduce" and len(ops) == 2:
        rdims = set(inst.attrs["dimensions"])
        kept = iter(s.dims)
        return [HloSharding(mesh, tuple(() if d in rdims else next(kept)
                                        for d in range(ops[0].shape.rank))), None]
    if op == "dot":
        at = inst.attrs
        lb, rb = list(at["lhs_batch_dims"]), list(at["rhs_batch_dims"])
        lc, rc = list(at["lhs_contracting_dims"]), list(at["rhs_contracting_dims"])
        lhs, rhs = ops
        lfree = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
        rfree = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
        tl: list[tuple[str, ...]] = [()] * lhs.shape.rank
        tr: list[tuple[str, ...]] = [()] * rhs.shape.rank
        out = iter(s.dims)
        for i, j in zip(lb, rb):
            tl[i] = tr[j] = next(out)
        for d in lfree:
            tl[d] = next(out)
        for d in rfree:
            tr[d] = next(out)
        sl, sr = env[lhs].sharding, env[rhs].sharding
        for i, j in zip(lc, rc):
            if sl is not None and sr is not None:
                tl[i] = tr[j] = sl.dims[i] or sr.dims[j]
        return [HloSharding(mesh, tuple(tl)), HloSharding(mesh, tuple(tr))]
    if op == "reshape":
        a, out = ops[0].shape.dimensions, inst.shape.dimensions
        dims = [()] * len(a)
        for gi, gj in reshape_groups(a, out):
            split = [j for j in gj if s.dims[j]]
            major_i = next((i for i in gi if a[i] != 1), None)
            major_j = next((j for j in gj if out[j] != 1), None)
            if split == [major_j] and major_i is not None:
                dims[major_i] = s.dims[major_j]
        return [HloSharding(mesh, tuple(dims))]
    keep = _kept_dims(inst)
    if keep is not None:  # (the dims these ops take whole keep the reader's split)
        first = HloSharding(mesh, tuple(a if k else () for a, k in zip(s.dims, keep)))
        rest = [first if op == "concatenate" else None for _ in ops[1:]]
        return [first, *rest]
    return [None] * len(ops)


def _kept_dims(inst: Instruction) -> list[bool] | None:
    """Per dim, whether slice, pad, reverse, dynamic-slice or concatenate takes its first
    operand's dim whole (its split carries over), or None for other ops."""
    op, at = inst.opcode, inst.attrs
    if not inst.operands:
        return None
    x = inst.operands[0]
    if op == "slice":
        return [tuple(c) == (0, n, 1) for c, n in zip(at["slice"], x.shape.dimensions)]
    if op == "pad":
        return [tuple(c) == (0, 0, 0) for c in at["padding"]]
    if op == "reverse":
        return [d not in set(at["dimensions"]) for d in range(x.shape.rank)]
    if op == "dynamic-slice":
        return [n == m for n, m in zip(at["dynamic_slice_sizes"], x.shape.dimensions)]
    if op == "concatenate":
        return [d != at["dimension"] for d in range(x.shape.rank)]
    return None


def _valid(s: HloSharding) -> bool:
    """No mesh axis splits two dims."""
    axes = [a for d in s.dims for a in d]
    return len(axes) == len(set(axes))


def propagate_back(entry: Computation, env: dict[Instruction, Local],
                   outs: Sequence[HloSharding | None] | None,
                   loop_hints: dict[Instruction, list[HloSharding | None]]) -> Wants:
    """The wants of every value of `entry` (see the module docstring)."""
    wants = Wants()
    values = wants.values
    said: dict[Instruction, list[HloSharding | None]] = {}

    def want(inst: Instruction, s: HloSharding | None) -> None:
        if inst.shape.is_tuple:
            return
        if s is not None:
            s = fit(s, inst.shape.dimensions)
            if s.is_replicated or not _valid(s):
                s = None
        said.setdefault(inst, []).append(s)
        have = values.get(inst)
        if s is not None and (have is None or blocks_of(s) > blocks_of(have)):
            values[inst] = s

    root = entry.root
    results = list(root.operands) if root.opcode == "tuple" else [root]
    for k, o in enumerate(results):
        if outs is not None and k < len(outs) and outs[k] is not None:
            want(o, outs[k])
    order = entry.post_order()
    for inst in order:
        c = inst.metadata.get(CONSTRAINT_KEY)
        if isinstance(c, HloSharding) and len(c.dims) == inst.shape.rank:
            want(inst, c)
    for inst in reversed(order):
        if inst.opcode == "while":
            init = inst.operand
            hints = loop_hints.get(inst)
            carried = env.get(init)
            if hints is None or init.opcode != "tuple" or carried is None \
                    or carried.elements is None:
                continue
            carry: list[HloSharding | None] = []
            for o, have, hint in zip(init.operands, carried.elements, hints):
                whole = have is not None and have.is_replicated and not env[o].partial
                split = hint is not None and not hint.is_replicated and _valid(hint)
                carry.append(hint if whole and split else None)
                want(o, hint if whole and split else None)
            if any(c is not None for c in carry):
                wants.carries[init] = carry
            continue
        if inst.opcode == "tuple" and any(u.opcode == "while" for u in inst.users):
            continue  # (its while says what its elements want)
        mine = values.get(inst)
        if mine is None and not inst.shape.is_tuple:
            got = env.get(inst)
            mine = got.sharding if got is not None else None
        if mine is None or inst.shape.is_tuple or any(
                o.shape.is_tuple for o in inst.operands):
            for o in inst.operands:
                want(o, None)
            continue
        for o, w in zip(inst.operands, _operand_wants(inst, mine, env)):
            want(o, w)
    # a parameter is cut as its readers want only where every one of them wants the same
    # split (any other reader would gather it, where a whole one is sliced for free)
    for p in entry.parameters:
        got = said.get(p)
        if got and got[0] is not None and all(g == got[0] for g in got):
            wants.params[p.parameter_number] = got[0]
    return wants
