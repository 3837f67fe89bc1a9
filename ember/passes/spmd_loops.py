"""The SPMD partitioner's rules for tuples and loops: a while loop runs on every device with
its carried values split as they enter it, its body and condition partitioned too.

Input: the partitioner's state (spmd_partitioner.py). Output: the `Local` of a tuple (its
elements' shardings in `elements`), of a get-tuple-element (its element's sharding) and of a
while. A while's carry keeps the shardings of its initial values (partial sums added
first): the body is partitioned with its parameter's elements split so, and its results are
resharded to them at the end of each iteration (the loop's fixed point by construction);
the condition's predicate is made whole. The partition id rides along as one more carried
element (the body's slices need it), so the carry is (elements..., s32[] partition-id).
A tuple holding a tuple is whole (a refusal where something in it was split).
Invariants: every device runs the same iterations (the predicate is whole, so equal on
every device); collectives in the body meet in the same order on every device.
"""

from __future__ import annotations

from typing import Any

from ember.hlo.ir import Computation, Instruction
from ember.hlo.shape import Shape
from ember.hlo.sharding import HloSharding
from ember.passes.spmd_reshard import Local, Resharder


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

    def _while(self: Any, inst: Instruction) -> Local:
        init = self.env[inst.operand]
        carry = init.elements
        if carry is None or any(e is None for e in carry):
            return self.whole(inst)
        b = self.b
        shapes = list(inst.shape.tuple_shapes)
        pieces = [b.op("get-tuple-element", [init.inst], {"index": i},
                       shape=_local_shape(shape, e))
                  for i, (shape, e) in enumerate(zip(shapes, carry))]
        new_init = b.tuple(pieces + [self.rs.pid])
        local = Shape.tuple_of([_local_shape(sh, e) for sh, e in zip(shapes, carry)]
                               + [Shape("s32", ())])
        cond = self._partition_called(inst.while_condition, carry, local, None)
        hints: list = []
        body = self._partition_called(inst.while_body, carry, local, carry, hints)
        self.loop_hints[inst] = hints
        md = dict(inst.metadata)
        new = b.op("while", [new_init], shape=local, called=[cond, body], metadata=md,
                   name=inst.name)
        return Local(new, None, elements=list(carry))

    def _partition_called(self: Any, comp: Computation, carry: list, local: Shape,
                          outs: list | None, hints: list | None = None) -> Computation:
        """`comp` (a loop's body: `outs` its results' shardings, or its condition: None)
        partitioned with its parameter's elements split as `carry` says; `hints` gets the
        shardings the body gave its results (before they are resharded to the carry's)."""
        sub = self.for_body(comp.name)
        (param,) = comp.parameters
        new_param = sub.b.parameter(local, name=param.name, number=0)
        n = len(carry)
        pid = sub.b.get_tuple_element(new_param, n)
        sub.rs = Resharder(sub.b, self.mesh, pid, self.report,
                           f"each iteration of %{comp.name}")
        sub.env[param] = Local(new_param, None, elements=list(carry))
        for inst in comp.post_order():
            if inst.opcode == "parameter":
                continue
            if inst is comp.root:
                break
            sub.env[inst] = sub.constrain(inst, sub.visit(inst))
        root = comp.root
        if outs is None:  # the condition: its predicate whole on every device
            if root not in sub.env:
                sub.env[root] = sub.visit(root)
            pred = sub.get(root, self.replicated(0), f"the condition of %{comp.name}")
            return sub.b.build_computation(pred)
        if root.opcode == "tuple" and root.parent is comp:
            values = list(root.operands)
        else:  # (a body returning its carry some other way: take its elements)
            if root not in sub.env:
                sub.env[root] = sub.visit(root)
            values = []
            for i, shape in enumerate(root.shape.tuple_shapes):
                part = Instruction("get-tuple-element", shape, [root], {"index": i})
                comp.add_instruction(part)
                sub.env[part] = sub._get_tuple_element(part)
                values.append(part)
        if hints is not None:
            hints.extend(None if sub.env[v].partial else sub.env[v].sharding for v in values)
        pieces = [sub.get(v, s, f"the carry of %{comp.name}") for v, s in zip(values, outs)]
        new_root = sub.b.tuple(pieces + [pid])
        built = sub.b.build_computation(new_root)
        built.remove_dead()
        return built
