"""The mutable HLO graph: Instruction, Computation, Module.

Input: instructions built by `builder.py`, `parser.py`, or passes. Output: a graph that
passes rewrite in place and the printer, verifier and evaluator read.
Invariants (checked by `verifier.py`):
- `inst.users` lists each instruction that has `inst` as an operand, once, and is kept in
  sync by every mutation helper here (never assign `operands` directly: the helpers also
  count the change, which is how a computation knows its cached post order is stale).
- Instruction names are unique within a module (`add.3`); computation names too.
- A computation's parameters are numbered 0..n-1; `post_order()` lists operands before
  users and the root last among the live instructions.
- Side effects (`has_side_effect`: a custom-call with `custom_call_has_side_effect=true`,
  or an instruction whose called computations hold one) are roots too: never dead, and
  walked first by `post_order()` in program order (then the root may not come last); their
  relative order is fixed by token operands and, for loops and conditionals that print, by
  the lowering's numbering (`EFFECT_ORDER` metadata; see ember/lowering.py).
- Called computations (to_apply, condition/body, branches, fused computation) are stored in
  `called_computations`, in the roles order of the opcode table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ember.hlo.opcodes import is_elementwise
from ember.hlo.shape import Shape


class NameUniquer:
    """Hands out XLA-style names `prefix.N` with one counter per module."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.next_id = 0

    def register(self, name: str) -> None:
        self.used.add(name)
        # (a name `prefix.N` raises the counter past N; partition, not a regex: every
        # instruction name passes here)
        head, dot, tail = name.rpartition(".")
        if dot and tail.isdecimal():
            n = int(tail) + 1
            if n > self.next_id:
                self.next_id = n

    def register_all(self, names: list[str]) -> None:
        """`register` of each name (the counter ends past every suffix, in any order)."""
        self.used.update(names)
        top = self.next_id
        for name in names:
            head, dot, tail = name.rpartition(".")
            if dot and tail.isdecimal():
                n = int(tail) + 1
                if n > top:
                    top = n
        self.next_id = top

    def fresh(self, prefix: str) -> str:
        head, dot, tail = prefix.rpartition(".")
        base = head if dot and tail.isdecimal() else prefix
        while True:
            name = f"{base}.{self.next_id}"
            self.next_id += 1
            if name not in self.used:
                self.used.add(name)
                return name

    def unique(self, name: str | None, prefix: str) -> str:
        """`name` if it is free, else a fresh name built from it (or from `prefix`)."""
        if name and name not in self.used:
            self.register(name)
            return name
        return self.fresh(name or prefix)


class Instruction:
    """One HLO instruction: an opcode applied to operands, producing a value of `shape`."""

    def __init__(
        self,
        opcode: str,
        shape: Shape,
        operands: Iterable[Instruction] = (),
        attrs: dict[str, Any] | None = None,
        called_computations: Iterable[Computation] = (),
        metadata: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        self.opcode = opcode
        self.shape = shape
        self.operands: list[Instruction] = []
        self.users: list[Instruction] = []
        self.attrs: dict[str, Any] = dict(attrs or {})
        self.called_computations: list[Computation] = list(called_computations)
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.name: str | None = name
        self.parent: Computation | None = None
        # (clone_computation sets these fields itself: a field added here goes there too)
        ops = self.operands
        for op in operands:  # (_add_operand, inlined: every instruction made passes here)
            if op not in ops:
                op.users.append(self)
            ops.append(op)

    # -- operand / user bookkeeping -----------------------------------------------------

    def _add_operand(self, op: Instruction) -> None:
        # self is in op.users exactly when op is already one of its operands: the short
        # operand list is searched, not op's users (a constant with thousands of users
        # made building a long program quadratic)
        if op not in self.operands:
            op.users.append(self)
        self.operands.append(op)
        if self.parent is not None:
            self.parent._version += 1

    def replace_operand(self, index: int, new: Instruction) -> None:
        """Make operand `index` be `new`, keeping both use lists right."""
        old = self.operands[index]
        self.operands[index] = new
        if self.parent is not None:
            self.parent._version += 1
        if old is not new and old not in self.operands:
            old.users.remove(self)
        if self not in new.users:
            new.users.append(self)

    def replace_operand_with(self, old: Instruction, new: Instruction) -> None:
        for i, op in enumerate(self.operands):
            if op is old:
                self.replace_operand(i, new)

    def replace_all_uses_with(self, new: Instruction) -> None:
        """Every user of self uses `new` instead; the root moves to `new` too."""
        if new is self:
            return
        for user in list(self.users):
            user.replace_operand_with(self, new)
        if self.parent is not None and self.parent.root is self:
            self.parent.root = new

    def drop_operands(self) -> None:
        for op in self.operands:
            if self in op.users:
                op.users.remove(self)
        self.operands = []
        if self.parent is not None:
            self.parent._version += 1

    # -- convenient views ----------------------------------------------------------------

    @property
    def operand(self) -> Instruction:
        return self.operands[0]

    @property
    def to_apply(self) -> Computation:
        return self.called_computations[0]

    @property
    def while_condition(self) -> Computation:
        return self.called_computations[0]

    @property
    def while_body(self) -> Computation:
        return self.called_computations[1]

    @property
    def branch_computations(self) -> list[Computation]:
        return self.called_computations

    @property
    def fused_computation(self) -> Computation:
        return self.called_computations[0]

    @property
    def value(self) -> np.ndarray:
        """The literal of a constant."""
        return self.attrs["value"]

    @property
    def parameter_number(self) -> int:
        return self.attrs["parameter_number"]

    def is_constant(self) -> bool:
        return self.opcode == "constant"

    def is_elementwise(self) -> bool:
        """The opcode table's answer, except that a bitcast-convert that changes the
        element width (and so adds or drops a minor dimension) is not elementwise."""
        if self.opcode == "bitcast-convert":
            return self.shape.dimensions == self.operand.shape.dimensions
        return is_elementwise(self.opcode)

    def __repr__(self) -> str:
        ops = ", ".join(f"%{o.name}" for o in self.operands)
        return f"<%{self.name} = {self.shape} {self.opcode}({ops})>"


class Computation:
    """A graph of instructions with numbered parameters and one root."""

    def __init__(self, name: str, uniquer: NameUniquer | None = None) -> None:
        self.name = name
        self._instructions: dict[Instruction, None] = {}  # insertion-ordered set
        # the instructions that call computations or may have side effects (_special), in
        # the same order: the walks over callees and effects (Module.computations,
        # side_effect_roots, has_side_effect) read these few, not every instruction
        self._special: dict[Instruction, None] = {}
        # post_order's last answer, kept while nothing it depends on changed: `_version`
        # counts the changes to the instruction set and to operands (every mutation
        # helper here bumps it), and the root and the effect roots are compared at use
        self._version = 0
        self._order: tuple[int, Instruction | None, list[Instruction],
                           list[Instruction]] | None = None
        self.parameters: list[Instruction] = []
        self.root: Instruction | None = None
        self.uniquer = uniquer or NameUniquer()
        self.is_fusion_computation = False

    @property
    def instructions(self) -> list[Instruction]:
        return list(self._instructions)

    def __contains__(self, inst: Instruction) -> bool:
        return inst in self._instructions

    def __len__(self) -> int:
        return len(self._instructions)

    def add_instruction(self, inst: Instruction) -> Instruction:
        """Adopt `inst` (its operands must already be here) and give it a unique name."""
        if inst.parent is not None and inst.parent is not self:
            raise ValueError(f"{inst!r} already belongs to computation {inst.parent.name}")
        inst.parent = self
        inst.name = self.uniquer.unique(inst.name, inst.opcode)
        self._instructions[inst] = None
        self._version += 1
        if _is_special(inst):
            self._special[inst] = None
            if inst.called_computations:
                note_callees_changed()
        if inst.opcode == "parameter":
            params = self.parameters
            k = len(params)
            # (in number order: a fusion's parameters come in order, so this is an append;
            # sorting the list at every parameter made a 1,600-parameter fusion quadratic)
            while k and params[k - 1].parameter_number > inst.parameter_number:
                k -= 1
            params.insert(k, inst)
        return inst

    def remove_instruction(self, inst: Instruction) -> None:
        """Remove a dead instruction (no users, not the root)."""
        if inst.users:
            raise ValueError(f"cannot remove {inst!r}: it still has users {inst.users}")
        if inst is self.root:
            raise ValueError(f"cannot remove the root {inst!r}")
        inst.drop_operands()
        del self._instructions[inst]
        self._version += 1
        self._special.pop(inst, None)
        if inst.called_computations:
            note_callees_changed()
        if inst.opcode == "parameter":
            self.parameters.remove(inst)
        inst.parent = None

    def replace_all_uses(self, old: Instruction, new: Instruction) -> None:
        old.replace_all_uses_with(new)

    def replace_instruction(self, old: Instruction, new: Instruction) -> None:
        """Route all uses of `old` to `new` (added here if needed), then drop `old`."""
        if new.parent is None:
            self.add_instruction(new)
        old.replace_all_uses_with(new)
        if not old.users and old is not self.root and old.opcode != "parameter":
            self.remove_instruction(old)

    def remove_dead(self) -> bool:
        """Remove instructions that cannot reach the root (parameters stay)."""
        live = self._reachable()
        if len(live) == len(self._instructions):
            return False  # (everything reaches the root: nothing to look for)
        dead = [i for i in self._instructions if i not in live and i.opcode != "parameter"]
        if not dead:
            return False
        # (no order needed: each dead instruction leaves its operands' user lists, which
        # keep the order of the users that stay, and its own users are all dead or gone;
        # a post order of the whole computation per call was most of the cost)
        self._version += 1
        for inst in dead:
            inst.drop_operands()
        for inst in dead:
            inst.users = [u for u in inst.users if u.parent is self and u in live]
            del self._instructions[inst]
            if inst in self._special:
                del self._special[inst]
                if inst.called_computations:
                    note_callees_changed()
            inst.parent = None
        return bool(dead)

    def _reachable(self) -> set[Instruction]:
        """The instructions the root and the side effects reach (all of them here)."""
        seen: set[Instruction] = set()
        stack = [self.root] if self.root is not None else []
        stack += self.side_effect_roots()
        add, push, pop = seen.add, stack.extend, stack.pop
        while stack:
            inst = pop()
            if inst in seen:
                continue
            add(inst)
            push(inst.operands)
        return seen

    def side_effect_roots(self) -> list[Instruction]:
        """Instructions that must run though nothing reads them (`has_side_effect`), in
        program order: those the lowering numbered (metadata EFFECT_ORDER, which passes
        copy when they rebuild a loop, appending it) sorted among themselves by number."""
        roots = [i for i in self._special
                 if i.opcode in _MAY_HAVE_EFFECTS and has_side_effect(i)]
        if not roots:
            return roots
        numbered = iter(sorted((i for i in roots if EFFECT_ORDER in i.metadata),
                               key=lambda i: i.metadata[EFFECT_ORDER]))
        return [next(numbered) if EFFECT_ORDER in i.metadata else i for i in roots]

    def post_order(self) -> list[Instruction]:
        """Operands before users: a DFS from the root, then anything unreachable."""
        order: list[Instruction] = []
        seen: set[Instruction] = set()
        # Side-effecting instructions (host callbacks, loops around them) are roots too,
        # walked first in program order; each one's token operand orders it after the last.
        effects = self.side_effect_roots() if self._special else []
        root = self.root
        kept = self._order
        if (kept is not None and kept[0] == self._version and kept[1] is root
                and kept[2] == effects):
            # (nothing changed since the last walk: passes and analyses ask for the same
            # order several times in a row; a copy, as callers may change their list)
            return list(kept[3])
        version = self._version
        starts = list(effects)
        if root is not None:
            starts.append(root)
        append, see = order.append, seen.add
        n = len(self._instructions)
        for pass_ in (starts, self._instructions):
            for start in pass_:
                if start in seen:
                    continue
                # (each frame holds an iterator over its operands, which resumes where it
                # stopped: the walk is the index-counting DFS's, at a third of its cost)
                stack = [(start, iter(start.operands))]
                see(start)
                while stack:
                    inst, operands = stack[-1]
                    for op in operands:
                        if op not in seen:
                            see(op)
                            if op.operands:
                                stack.append((op, iter(op.operands)))
                                break
                            append(op)  # (a leaf: done at once, no frame)
                    else:
                        stack.pop()
                        append(inst)
            if len(order) == n:  # (all reached from the roots: no unreachable ones left)
                break
        self._order = (version, root, effects, order)
        return list(order)

    def holds(self, opcodes: frozenset[str]) -> bool:
        """Whether some instruction here has one of `opcodes` (a loop over the instructions,
        cheaper than a post order, for passes that only act on a few opcodes)."""
        for inst in self._instructions:
            if inst.opcode in opcodes:
                return True
        return False

    def called_computations(self) -> list[Computation]:
        """The computations this one's instructions call, each once, in first-call order."""
        out: list[Computation] = []
        seen: set[int] = set()  # (a set: a 1,200-fusion entry made every walk quadratic)
        for inst in self._special:
            called = inst.called_computations
            if called:
                for c in called:
                    if id(c) not in seen:
                        seen.add(id(c))
                        out.append(c)
        return out

    def program_shape(self) -> tuple[list[Shape], Shape]:
        assert self.root is not None
        return [p.shape for p in self.parameters], self.root.shape

    def __repr__(self) -> str:
        return f"<Computation {self.name}: {len(self._instructions)} instructions>"


# Counts changes to which computations call which (an instruction with callees joining or
# leaving a computation, a module's computation list, a callee replaced in place); a
# module's `computations` answer is kept while the count stays.
_CALLEE_CHANGES = [0]


def note_callees_changed() -> None:
    """Tell the cached `Module.computations` answers that some instruction's callees, or
    some module's computations, changed other than through the helpers here (which tell
    it themselves): e.g. after `inst.called_computations[k] = other`."""
    _CALLEE_CHANGES[0] += 1


def _is_special(inst: Instruction) -> bool:
    """Whether `inst` belongs in its computation's `_special`: it calls computations or has
    an opcode that may have a side effect. (Nothing gives an instruction callees after it
    joins a computation: they are set when it is made, as its opcode is.)"""
    return bool(inst.called_computations) or inst.opcode in _MAY_HAVE_EFFECTS


# Metadata key: a side effect's place in program order (ember/lowering.py numbers them).
EFFECT_ORDER = "ember_effect_order"
# Opcodes that are, or may call a computation holding, a side-effecting custom-call.
_MAY_HAVE_EFFECTS = frozenset({"custom-call", "while", "conditional", "call", "fusion"})


def has_side_effect(inst: Instruction) -> bool:
    """A custom-call with `custom_call_has_side_effect=true`, or an instruction whose called
    computations hold one (a while whose body prints): passes must keep these, in order."""
    if inst.opcode == "custom-call":
        return bool(inst.attrs.get("custom_call_has_side_effect"))
    # (loops, not a generator: post_order asks this of every fusion of the entry)
    for c in inst.called_computations:
        for i in c._special:
            if i.opcode in _MAY_HAVE_EFFECTS and has_side_effect(i):
                return True
    return False


class Module:
    """An entry computation plus the computations it (transitively) calls."""

    def __init__(self, name: str, entry: Computation,
                 computations: Iterable[Computation] = ()) -> None:
        self.name = name
        self.entry = entry
        self._extra: list[Computation] = list(computations)
        # the last `computations` answer and what it depended on (see _CALLEE_CHANGES)
        self._computations: tuple[int, Computation, list[Computation], int,
                                  list[Computation]] | None = None
        self.uniquer = NameUniquer()
        self.config: dict[str, Any] = {}
        self._adopt_all()

    def _adopt_all(self) -> None:
        """Share one name uniquer among all computations, renaming any collisions."""
        comp_names: set[str] = set()
        comps = self.computations
        for comp in comps:
            if comp.name in comp_names:
                comp.name = self.uniquer.fresh(comp.name)
            comp_names.add(comp.name)
            self.uniquer.register(comp.name)
        names = [inst.name for comp in comps for inst in comp._instructions]
        if None not in names and len(set(names)) == len(names) \
                and comp_names.isdisjoint(names):
            # no collision (a clone, a parsed module): nothing is renamed, so the names
            # register in any order, without a post order of every computation
            self.uniquer.register_all(names)
            for comp in comps:
                comp.uniquer = self.uniquer
            return
        for comp in comps:
            for inst in comp.post_order():
                if inst.name in self.uniquer.used:
                    inst.name = self.uniquer.fresh(inst.name or inst.opcode)
                else:
                    self.uniquer.register(inst.name)
            comp.uniquer = self.uniquer

    @property
    def computations(self) -> list[Computation]:
        """Every computation, callees before callers, the entry last."""
        kept = self._computations
        if (kept is not None and kept[0] == _CALLEE_CHANGES[0] and kept[1] is self.entry
                and kept[2] is self._extra and kept[3] == len(self._extra)):
            return list(kept[4])  # (passes ask for it again and again; a copy to change)
        changes = _CALLEE_CHANGES[0]
        order: list[Computation] = []
        seen: set[Computation] = set()

        def visit(c: Computation) -> None:
            if c in seen:
                return
            seen.add(c)
            for callee in c.called_computations():
                visit(callee)
            order.append(c)

        for c in self._extra:
            if c is not self.entry:
                visit(c)
        visit(self.entry)
        if order[-1] is not self.entry:  # entry called by an extra computation: keep it last
            order.remove(self.entry)
            order.append(self.entry)
        self._computations = (changes, self.entry, self._extra, len(self._extra), order)
        return list(order)

    def add_computation(self, comp: Computation, fresh_name: bool = False) -> Computation:
        """Add `comp` to the module, renaming it (and its instructions) where names clash.
        `fresh_name`: the caller named it with `self.uniquer.fresh`, so no computation holds
        the name and the walk over every computation that checks it is skipped (a pass that
        adds one computation per group would otherwise be quadratic)."""
        if not fresh_name and comp.name in {c.name for c in self.computations}:
            comp.name = self.uniquer.fresh(comp.name)
        self.uniquer.register(comp.name)
        if comp.uniquer is not self.uniquer:
            # (a computation built on the module's uniquer has every name registered in it
            # already: add_instruction took them from it)
            for inst in comp.post_order():
                if inst.name in self.uniquer.used:
                    inst.name = self.uniquer.fresh(inst.name or inst.opcode)
                else:
                    self.uniquer.register(inst.name)
        comp.uniquer = self.uniquer
        self._extra.append(comp)
        note_callees_changed()
        return comp

    def remove_dead_computations(self) -> bool:
        """Forget computations no instruction calls any more."""
        live = set(self._reachable_computations())
        before = len(self._extra)
        self._extra = [c for c in self._extra if c in live]
        note_callees_changed()
        return len(self._extra) != before

    def _reachable_computations(self) -> list[Computation]:
        out: list[Computation] = []
        seen: set[Computation] = set()  # (not `in out`: quadratic over 1,800 computations)
        stack = [self.entry]
        while stack:
            c = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            out.append(c)
            stack.extend(c.called_computations())
        return out

    def computation(self, name: str) -> Computation:
        for c in self.computations:
            if c.name == name:
                return c
        raise KeyError(name)

    def instruction_count(self) -> int:
        return sum(len(c) for c in self.computations)

    def clone(self, name: str | None = None) -> Module:
        """A deep copy: new instructions and computations, same names, copied literals."""
        comp_map: dict[Computation, Computation] = {}
        comps = self.computations
        for comp in comps:
            comp_map[comp] = clone_computation(comp, comp_map)
        new = Module(name or self.name, comp_map[self.entry],
                     [comp_map[c] for c in comps if c is not self.entry])
        new.config = dict(self.config)
        return new

    def __repr__(self) -> str:
        return f"<Module {self.name}: {len(self.computations)} computations>"

    def as_hlo_text(self) -> str:
        """The module in XLA's HLO text syntax (what `str()` gives; the name of the method
        of the XlaComputation that JAX's `compiler_ir("hlo")` returns)."""
        from ember.hlo.printer import print_module
        return print_module(self)

    def __str__(self) -> str:
        return self.as_hlo_text()


def clone_computation(comp: Computation,
                      comp_map: dict[Computation, Computation]) -> Computation:
    """A deep copy of `comp` (attribute arrays copied, metadata dicts too) whose called
    computations are mapped through `comp_map` (pass `{c: c ...}` to share them); the copy
    belongs to no module until added to one."""
    new = Computation(comp.name)
    new.is_fusion_computation = comp.is_fusion_computation
    inst_map: dict[Instruction, Instruction] = {}
    order = comp.post_order()
    # (the copies join `new` directly, not through add_instruction: the names are unique
    # in `comp` already, so they are registered at once and no name is made twice)
    adopted, special = new._instructions, new._special
    for inst in order:
        # (Instruction.__init__'s fields set here directly, without its second copy of
        # the attributes or its search of the operand list: a clone copies every
        # instruction of the program; keep the two in step)
        copy = Instruction.__new__(Instruction)
        copy.opcode = inst.opcode
        copy.shape = inst.shape
        copy.operands = ops = [inst_map[o] for o in inst.operands]
        copy.users = []
        for o in ops:  # (each distinct operand lists the copy once, as _add_operand does)
            users = o.users
            if not users or users[-1] is not copy:
                users.append(copy)
        copy.attrs = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                      for k, v in inst.attrs.items()} if inst.attrs else {}
        copy.called_computations = [comp_map[c] for c in inst.called_computations]
        copy.metadata = dict(inst.metadata)
        copy.name = inst.name
        copy.parent = new
        adopted[copy] = None
        if _is_special(copy):
            special[copy] = None
        inst_map[inst] = copy
    new.parameters = [inst_map[p] for p in comp.parameters]
    new.uniquer.register_all([i.name for i in order])
    new.root = inst_map[comp.root] if comp.root is not None else None
    return new
