"""The SPMD partitioner's rules for tuples, loops and conditionals: a while loop runs on
every device with its carried values split as they enter it, its body and condition
partitioned too; a conditional runs the branch every device picks (the selector is made
whole, so every device picks the same one), each branch partitioned with its operand
split as it enters.

Input: the partitioner's state (spmd_partitioner.py). Output: the `Local` of a tuple (its
elements' shardings in `elements`), of a get-tuple-element (its element's sharding), of a
while and of a conditional. A while's carry keeps the shardings of its initial values
(partial sums added first): the body is partitioned with its parameter's elements split
so, and its results are resharded to them at the end of each iteration (the loop's fixed
point by construction); the condition's predicate is made whole. The partition id rides
along as one more carried element (the body's slices need it), so the carry is
(elements..., s32[] partition-id). A conditional's branch k takes its operand as it is
split (partial sums added), with the partition id after it: (elements..., partition-id)
for a tuple operand, (operand, partition-id) for an array. Each branch's result (each
element of a tuple result) is resharded to one sharding, the most split any branch gave it
(the first on a tie), so every branch returns the same per-device shape.
A tuple holding a tuple is whole (a refusal where something in it was split), as is a
conditional whose operands or result hold one.
Invariants: every device runs the same iterations and the same branch (the predicate and
the selector are whole, so equal on every device); collectives in a body or a branch meet
in the same order on every device.
"""

from __future__ import annotations

from typing import Any

from ember.hlo.ir import Computation, Instruction
from ember.hlo.shape import Shape
from ember.hlo.sharding import CONSTRAINT_KEY, HloSharding
from ember.passes.spmd_reshard import Local, Resharder
from ember.passes.spmd_rules import blocks_of, reader


def _local_shape(shape: Shape, s: HloSharding | None) -> Shape:
    return shape if s is None else Shape(shape.element_type, s.local_shape(shape.dimensions))


class LoopRules:
    """Mixed into the partitioner (see the module docstring)."""

    def _tuple(self: Any, inst: Instruction) -> Local:
        if any(o.shape.is_tuple for o in inst.operands):
            return self.whole(inst)
        elements = [self.env[o].sharding for o in inst.operands]
        # (a value kept whole that the loop's body splits enters the loop split: a local
        # slice, where it would otherwise be gathered at the end of every iteration)
        carry = self.wants.carries.get(inst)
        if carry is not None:
            elements = [c if c is not None and e is not None and e.is_replicated
                        and not self.env[o].partial else e
                        for o, e, c in zip(inst.operands, elements, carry)]
        # (partial sums added: a tuple carries values)
        ops = [self.get(o, s, f"%{inst.name} (tuple)") for o, s in zip(inst.operands, elements)]
        return Local(self.emit(inst, ops, None), None, elements=elements)

    def _get_tuple_element(self: Any, inst: Instruction) -> Local:
        v = self.env[inst.operand]
        i = inst.attrs["index"]
        s = v.elements[i] if v.elements is not None else (
            None if inst.shape.is_tuple else self.replicated(inst.shape.rank))
        return Local(self.emit(inst, [v.inst], s), s)

    def whole_tuple(self: Any, o: Instruction, why: str) -> Instruction:
        """Tuple `o` with every element whole (gathered where split)."""
        v = self.env[o]
        if v.elements is None or all(e is None or e.is_replicated for e in v.elements):
            return v.inst
        b = self.b
        parts = []
        for i, (e, shape) in enumerate(zip(v.elements, o.shape.tuple_shapes)):
            part = b.op("get-tuple-element", [v.inst], {"index": i},
                        shape=_local_shape(shape, e))
            if e is not None:
                part = self.rs.reshard(Local(part, e), self.replicated(shape.rank), why)
            parts.append(part)
        return b.tuple(parts)

    def _with_pid(self: Any, o: Instruction, why: str
                  ) -> tuple[Instruction, HloSharding | list[HloSharding]] | None:
        """Operand `o` of a called computation with the partition id appended: the
        per-device tuple (elements..., pid) or (array, pid), and `o`'s sharding (its
        elements' for a tuple); None where `o` holds a tuple (kept whole)."""
        b = self.b
        if not o.shape.is_tuple:
            s = self.env[o].sharding
            return b.tuple([self.get(o, s, why), self.rs.pid]), s
        v = self.env[o]
        carry = v.elements
        if carry is None or any(e is None for e in carry):
            return None
        pieces = [b.op("get-tuple-element", [v.inst], {"index": i},
                       shape=_local_shape(shape, e))
                  for i, (shape, e) in enumerate(zip(o.shape.tuple_shapes, carry))]
        return b.tuple(pieces + [self.rs.pid]), list(carry)

    def _while(self: Any, inst: Instruction) -> Local:
        got = self._with_pid(inst.operand, reader(inst))
        if got is None or not isinstance(got[1], list):
            return self.whole(inst)
        new_init, carry = got
        b = self.b
        local = new_init.shape
        cond = self._called(inst.while_condition, carry, local, None)
        hints: list = []
        body = self._called(inst.while_body, carry, local, carry, hints)
        self.loop_hints[inst] = hints
        md = dict(inst.metadata)
        new = b.op("while", [new_init], shape=local, called=[cond, body], metadata=md,
                   name=inst.name)
        return Local(new, None, elements=list(carry))

    def _enter(self: Any, comp: Computation, arg: HloSharding | list, local: Shape,
               where: str) -> tuple[Any, Instruction]:
        """A partitioner of `comp` whose parameter is the per-device tuple `local`
        (`_with_pid`'s: split as `arg` says, the partition id last), with every
        instruction but the root's visited; and that partition id."""
        sub = self.for_body(comp.name)
        (param,) = comp.parameters
        new_param = sub.b.parameter(local, name=param.name, number=0)
        n = len(local.tuple_shapes) - 1
        pid = sub.b.get_tuple_element(new_param, n)
        sub.rs = Resharder(sub.b, self.mesh, pid, self.report, where)
        if isinstance(arg, list):
            sub.env[param] = Local(new_param, None, elements=list(arg))
        else:
            sub.env[param] = Local(sub.b.get_tuple_element(new_param, 0), arg)
        for inst in comp.post_order():
            if inst.opcode == "parameter":
                continue
            if inst is comp.root:
                break
            sub.env[inst] = sub.constrain(inst, sub.visit(inst))
        return sub, pid

    def _results(self: Any, sub: Any, comp: Computation) -> list[Instruction]:
        """The values `comp` returns in a tuple, visited by `sub`."""
        root = comp.root
        if root.opcode == "tuple" and root.parent is comp:
            return list(root.operands)
        if root not in sub.env:
            sub.env[root] = sub.visit(root)
        values = []  # (a computation returning a tuple some other way: its elements)
        for i, shape in enumerate(root.shape.tuple_shapes):
            part = Instruction("get-tuple-element", shape, [root], {"index": i})
            comp.add_instruction(part)
            sub.env[part] = sub._get_tuple_element(part)
            values.append(part)
        return values

    def _called(self: Any, comp: Computation, carry: list, local: Shape,
                outs: list | None, hints: list | None = None) -> Computation:
        """`comp` (a loop's body: `outs` its results' shardings, or its condition: None)
        partitioned with its parameter's elements split as `carry` says; `hints` gets the
        shardings the body gave its results (before they are resharded to the carry's)."""
        sub, pid = self._enter(comp, carry, local, f"each iteration of %{comp.name}")
        root = comp.root
        if outs is None:  # the condition: its predicate whole on every device
            if root not in sub.env:
                sub.env[root] = sub.visit(root)
            pred = sub.get(root, self.replicated(0), f"the condition of %{comp.name}")
            return sub.b.build_computation(pred)
        values = self._results(sub, comp)
        if hints is not None:
            hints.extend(None if sub.env[v].partial else sub.env[v].sharding for v in values)
        pieces = [sub.get(v, s, f"the carry of %{comp.name}") for v, s in zip(values, outs)]
        built = sub.b.build_computation(sub.b.tuple(pieces + [pid]))
        built.remove_dead()
        return built

    def _conditional(self: Any, inst: Instruction) -> Local:
        """Each branch partitioned with its operand split as it is; the results resharded
        to one sharding in every branch (see the module docstring)."""
        index, *operands = inst.operands
        out = inst.shape
        if out.is_tuple and any(t.is_tuple for t in out.tuple_shapes):
            return self.whole(inst)
        why = reader(inst)
        entered: dict[Instruction, Any] = {}
        for o in operands:
            if o not in entered:
                entered[o] = self._with_pid(o, why)
                if entered[o] is None:
                    return self.whole(inst)
        sel = self.get(index, self.replicated(0), why)
        subs = []
        for comp, o in zip(inst.branch_computations, operands):
            arg, s = entered[o]
            sub, _ = self._enter(comp, s, arg.shape, f"when %{comp.name} runs")
            root = comp.root
            if out.is_tuple:
                values = self._results(sub, comp)
            else:
                if root not in sub.env:
                    sub.env[root] = sub.visit(root)
                values = [root]
            subs.append((sub, values))
        shapes = list(out.tuple_shapes) if out.is_tuple else [out]
        # (partial sums are added inside their branch: every branch returns values)
        targets = [max((sub.env[vals[k]].sharding for sub, vals in subs), key=blocks_of)
                   for k in range(len(shapes))]
        branches = []
        for (sub, values), comp in zip(subs, inst.branch_computations):
            pieces = [sub.get(v, t, f"the result of %{comp.name}")
                      for v, t in zip(values, targets)]
            built = sub.b.build_computation(pieces[0] if not out.is_tuple
                                            else sub.b.tuple(pieces))
            built.remove_dead()
            branches.append(built)
        local = Shape.tuple_of([_local_shape(sh, t) for sh, t in zip(shapes, targets)]) \
            if out.is_tuple else _local_shape(out, targets[0])
        new = self.b.op("conditional", [sel] + [entered[o][0] for o in operands],
                        dict(inst.attrs), shape=local, called=branches,
                        metadata={k: v for k, v in inst.metadata.items()
                                  if k != CONSTRAINT_KEY}, name=inst.name)
        if out.is_tuple:
            return Local(new, None, elements=targets)
        return Local(new, targets[0])
