"""Multi-output loop fusion: merging the loop groups the fusion pass grew, before any fusion
instruction is built, so values shared by several kernels are computed once and written once.

Input: one computation, its groups `[(roots, members)]` (members are the computation's own
instructions; a cheap producer duplicated into two groups is a member of both) and the
fusion pass's refusal list. Output: the groups after merging, a `FusionMerge` per merge
(what the explain tool prints) and a refusal per candidate pair not merged.

Rewrites (P, C, A, B loop groups: every member loop-fusible, array roots):
  producer-consumer: C reads P's root p (from memory) only at its own index
      => one group, roots C.roots + P.roots; p stays a root only while something outside
         the merged group still reads it from memory (it is then an extra output of the
         kernel instead of a kernel of its own that C reads back)
  siblings: A and B read one array input (or hold one duplicated producer), neither
      depends on the other
      => one group, roots A.roots + B.roots: the input is read once, the shared producer
         computed once
  e.g. Black-Scholes: d1 = f(S, K, T); call = g(d1, S, K, T); put = h(d1, S, K, T)
      three kernels (d1 is an expensive divide with three users) => one kernel writing
      (call, put); `K * exp(-r T)`, which both groups had duplicated, computed once.

Invariants:
- Every root of a merged group has one shape and layout: the loop kernel
  (backends/cpu/emit/kernels.py `emit_loop_kernel`) stores all roots at one index.
- A root read inside the merged group is read there at the kernel's own index only
  (elementwise readers of its shape), so the element generator computes it once per
  element for both the store and its readers; a consumer that reads it at other indices
  (a slice, a transpose, a broadcast) would recompute its whole tree, and is refused.
- No cycle: no input of the merged group (an operand of a member, not itself a member, or
  a member another group writes, which the merged kernel may read from that group's
  fusion) depends on one of its roots: a forward walk from the roots over the users,
  bounded by the post order of the inputs, where reaching a member of another group
  reaches all the roots that group writes (an earlier merge made one kernel of them: a
  reader of one of its outputs waits for all its inputs). The walk uses the graph before
  fusion, so a path through a duplicated copy counts too: conservative, never a false
  merge.
- Bounded kernels: at most MAX_OUTPUTS roots, MAX_MEMBERS members and the policy's
  input_limit arrays read (compile time of one LLVM function grows faster than linearly
  in its size and its arguments; an unrolled program must not become one kernel), and
  the code emitted stays the sum of the merged kernels' codes (members are a union: a
  member is emitted once per index it is read at, as before).
- Pure group bookkeeping: the computation is not changed here.
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape, row_major
from ember.passes.fusion_rules import LOOP_FUSIBLE
from ember.passes.grouping import is_constant_fill
from ember.records import FrozenRecord

# the most values one multi-output loop kernel stores, and the most instructions it holds
MAX_OUTPUTS = 8
MAX_MEMBERS = 400

Group = tuple[list[Instruction], list[Instruction]]


class FusionMerge(FrozenRecord):
    """Two groups merged into one multi-output kernel: `kind` ("producer-consumer" or
    "sibling"), the first root of each (names before the rewrite), the roots the merged
    kernel writes, and why (the shared value)."""

    FIELDS = ("kind", "first", "second", "outputs", "reason")

    kind: str
    first: str
    second: str
    outputs: tuple[str, ...]
    reason: str

    def __init__(self, kind: str, first: str, second: str, outputs: tuple[str, ...],
                 reason: str) -> None:
        self._freeze(kind, first, second, tuple(outputs), reason)

    def __str__(self) -> str:
        outs = ", ".join(f"%{o}" for o in self.outputs)
        return (f"{self.kind}: %{self.first} + %{self.second} -> one kernel writing {outs} "
                f"({self.reason})")


def _layout(shape: Shape) -> tuple[int, ...]:
    return tuple(shape.layout) if shape.layout is not None else row_major(shape.rank)


def _loop_fusible(inst: Instruction) -> bool:
    # fusion.LOOP_FUSIBLE, read lazily: fusion.py imports this module

    return inst.opcode in LOOP_FUSIBLE


def is_loop_group(roots: list[Instruction], members: list[Instruction]) -> bool:
    """Array roots of one shape and layout, every member a loop-fusible op (no reduce, dot
    or row): what one loop kernel computes."""
    if not roots or any(r.shape.is_tuple or r.shape.size == 0 for r in roots):
        return False
    key = (roots[0].shape.dimensions, _layout(roots[0].shape))
    return (all((r.shape.dimensions, _layout(r.shape)) == key for r in roots)
            and all(_loop_fusible(m) for m in members))


def _passes_index(consumer: Instruction, producer: Instruction) -> bool:
    # fusion.passes_index: the reader sees the producer at the reader's own index
    return (OPCODES[consumer.opcode].elementwise
            and producer.shape.dimensions == consumer.shape.dimensions)


def _inputs(members: set[Instruction]) -> set[Instruction]:
    return {o for m in members for o in m.operands if o not in members}


class _Merger:
    """The groups of one computation and the merges between them (see the module doc).
    A merged group lives in the later of its two slots (the group list is in dependence
    order, producers' groups first); `parent` leads from a merged-away slot to it."""

    def __init__(self, comp: Computation, groups: list[Group], input_limit: int,
                 order: list[Instruction] | None = None) -> None:
        self.comp = comp
        self.input_limit = input_limit
        order = comp.post_order() if order is None else order
        self.pos = {inst: k for k, inst in enumerate(order)}
        self.groups: list[Group | None] = [(list(r), list(m)) for r, m in groups]
        self.sets: list[set[Instruction]] = [set(m) for _, m in groups]
        self.loop = [is_loop_group(r, m) for r, m in groups]
        self.parent = list(range(len(groups)))
        self.root_of: dict[Instruction, int] = {}     # a root -> its group's first slot
        self.member_of: dict[Instruction, set[int]] = {}
        for k, (roots, members) in enumerate(groups):
            for r in roots:
                self.root_of.setdefault(r, k)
            for m in members:
                self.member_of.setdefault(m, set()).add(k)
        out = comp.root
        self.program_outputs = (set(out.operands) if out is not None and out.opcode == "tuple"
                                else {out})
        self.merges: list[FusionMerge] = []
        self.refusals: list[tuple[str, str, str]] = []
        self.refused: set[tuple[int, int]] = set()
        # (slot, first root position, last member position) of each multi-root group
        self._spans: list[tuple[int, int, int]] | None = None

    def find(self, k: int) -> int:
        """The slot group k lives in now."""
        while self.parent[k] != k:
            self.parent[k] = self.parent[self.parent[k]]
            k = self.parent[k]
        return k

    # -- the checks ----------------------------------------------------------------------

    def _at_kernel_index(self, k: int) -> set[Instruction]:
        """Members of group k evaluated at the kernel's own index only: its roots' and, from
        them, the operands that elementwise readers of one shape pass that index to."""
        roots, _ = self.groups[k]  # type: ignore[misc]
        group = self.sets[k]
        out: set[Instruction] = set()
        for m in sorted(group, key=self.pos.__getitem__, reverse=True):  # readers first
            readers = [u for u in m.users if u in group]
            if m in roots and not readers:
                out.add(m)
            elif (m in roots or readers) and all(
                    u in out and _passes_index(u, m) for u in readers):
                out.add(m)
        return out

    def _bound(self, bound: int, slots: tuple[int, int]) -> int:
        """The last post-order position from which an input (at `bound` or before) can still
        be reached. Along instruction edges positions grow; a jump from a member to its
        group's roots goes back only in a group with several roots (a root of a merged
        producer precedes its consumer's members): such a group with a root at or before
        the bound extends it to its last member."""
        if self._spans is None:  # (recomputed after each merge)
            self._spans = [(k, min(self.pos[r] for r in g[0]),
                            max(self.pos[m] for m in self.sets[k]))
                           for k, g in enumerate(self.groups) if g is not None and len(g[0]) > 1]
        multi = [(lo, hi) for k, lo, hi in self._spans if k not in slots]
        grown = True
        while grown:
            grown = False
            for lo, hi in multi:
                if lo <= bound < hi:
                    bound, grown = hi, True
        return bound

    def _cycle(self, roots: list[Instruction], inputs: set[Instruction],
               slots: tuple[int, int]) -> bool:
        """Does some input depend on one of `roots` (module doc: the cycle check)? Kernels,
        not instructions, run in order: reaching a member of another group reaches every
        root that group writes (a multi-output kernel made by an earlier merge writes all
        its roots after reading all its inputs)."""
        if not inputs:
            return False
        bound = self._bound(max(self.pos.get(i, -1) for i in inputs), slots)
        seen: set[Instruction] = set(roots)
        stack = list(roots)
        while stack:
            inst = stack.pop()
            for u in inst.users:
                if u in seen or self.pos.get(u, bound + 1) > bound:
                    continue
                if u in inputs:
                    return True
                seen.add(u)
                stack.append(u)
                for g in self.member_of.get(u, ()):
                    group = self.groups[g]
                    if g in slots or group is None:
                        continue
                    for r in group[0]:
                        if r not in seen:
                            if r in inputs:
                                return True
                            seen.add(r)
                            stack.append(r)
        return False

    def _read_elsewhere(self, i: int, j: int) -> str | None:
        """A root of group i that group j reads from memory at an index other than its
        kernel's: why not (None: every such read is at the kernel's index)."""
        at_index: set[Instruction] | None = None
        for r in self.groups[i][0]:  # type: ignore[index]
            if r in self.sets[j]:
                continue  # j holds a copy of its own: a shared member, not a read
            for u in r.users:
                if u not in self.sets[j]:
                    continue
                if at_index is None:
                    at_index = self._at_kernel_index(j)
                if not (_passes_index(u, r) and u in at_index):
                    return (f"%{u.name} reads %{r.name} at other indices (through a "
                            f"{u.opcode} or its users); it would be recomputed, not read once")
        return None

    def _written_elsewhere(self, merged: set[Instruction], slots: tuple[int, int]
                           ) -> set[Instruction]:
        """Members that another group writes to memory (a root of it): the fusion of that
        group, when built first, replaces the member's uses here, so the merged kernel
        reads it from there; for the cycle check they are inputs."""
        out = set()
        for m in merged:
            k = self.root_of.get(m)
            if k is None:
                continue
            k = self.find(k)
            g = self.groups[k]
            if k not in slots and g is not None and m in g[0]:
                out.add(m)
        return out

    def _why_not(self, i: int, j: int) -> str | None:
        """Why groups i and j cannot merge (None: they can)."""
        ri, _ = self.groups[i]  # type: ignore[misc]
        rj, _ = self.groups[j]  # type: ignore[misc]
        a, b = ri[0], rj[0]
        if (a.shape.dimensions, _layout(a.shape)) != (b.shape.dimensions, _layout(b.shape)):
            return (f"different iteration spaces ({a.shape} and {b.shape}): one loop kernel "
                    f"stores every output at one index")
        merged = self.sets[i] | self.sets[j]
        if len(merged) > MAX_MEMBERS:
            return (f"the merged kernel would hold {len(merged)} instructions, above "
                    f"{MAX_MEMBERS} (compile time)")
        inputs = _inputs(merged)
        reads = sum(1 for o in inputs if not is_constant_fill(o))
        if reads > self.input_limit:
            return (f"the merged kernel would read {reads} arrays, above "
                    f"{self.input_limit} (its arguments stay bounded)")
        roots = ri + [r for r in rj if r not in ri]
        if len(self._kept(roots, merged, (i, j))) > MAX_OUTPUTS:
            return f"the merged kernel would write more than {MAX_OUTPUTS} outputs"
        why = self._read_elsewhere(i, j) or self._read_elsewhere(j, i)
        if why is not None:
            return why
        if self._cycle(roots, inputs | self._written_elsewhere(merged, (i, j)), (i, j)):
            return ("an input of one depends on the other's result through another "
                    "kernel (merging would form a cycle)")
        return None

    def _kept(self, roots: list[Instruction], merged: set[Instruction],
              slots: tuple[int, int]) -> list[Instruction]:
        """The roots the group merged from `slots` must still write: those read from memory
        by something outside it (a user in no group, or in a group without its own copy
        of the root), and the program's outputs."""
        kept = []
        for r in roots:
            if r in self.program_outputs or any(
                    not self.member_of.get(u) or any(
                        r not in (merged if g in slots else self.sets[g])
                        for g in self.member_of[u]) for u in r.users):
                kept.append(r)
        # (never empty: every group's root was read from memory by something when it was
        # grown; kept anyway, should a dead group have slipped in)
        return kept or roots[-1:]

    # -- merging -------------------------------------------------------------------------

    def _merge(self, i: int, j: int, kind: str, reason: str) -> None:
        """Groups i and j become one, in the later slot; roots of i first."""
        ri, mi = self.groups[i]  # type: ignore[misc]
        rj, mj = self.groups[j]  # type: ignore[misc]
        merged = self.sets[i] | self.sets[j]
        members = mi + [m for m in mj if m not in self.sets[i]]
        roots = self._kept(ri + [r for r in rj if r not in ri], merged, (i, j))
        self.merges.append(FusionMerge(kind, ri[0].name, rj[0].name,
                                       tuple(r.name for r in roots), reason))
        keep, drop = max(i, j), min(i, j)
        self.groups[keep], self.groups[drop] = (roots, members), None
        self.sets[keep], self.sets[drop] = merged, set()
        self.parent[drop] = keep
        self._spans = None
        for m in members:
            self.member_of[m].discard(drop)
            self.member_of[m].add(keep)

    def _try(self, i: int, j: int, kind: str, reason: str) -> bool:
        key = (min(i, j), max(i, j))
        if key in self.refused:
            return False
        why = self._why_not(i, j)
        if why is not None:
            self.refused.add(key)
            a = self.groups[i][0][0].name  # type: ignore[index]
            b = self.groups[j][0][0].name  # type: ignore[index]
            self.refusals.append((a, b, f"multi-output fusion ({kind}): {why}"))
            return False
        self._merge(i, j, kind, reason)
        return True

    def producer_consumer(self) -> bool:
        """Each loop group C takes in the loop groups whose roots it reads from memory."""
        changed = False
        for c0 in range(len(self.groups)):
            c = c0
            again = True
            while again and self.groups[c] is not None and self.loop[c]:
                again = False
                for x in sorted(_inputs(self.sets[c]), key=self.pos.__getitem__,
                                reverse=True):
                    p = self.root_of.get(x)
                    if p is None:
                        continue
                    p = self.find(p)
                    if p == c or not self.loop[p]:
                        continue
                    # (i = P, j = C: P's roots first, as the kernel computes them first)
                    if self._try(p, c, "producer-consumer",
                                 f"%{x.name} computed in the kernel that reads it"):
                        c = self.find(c)
                        changed = again = True
                        break
        return changed

    def siblings(self) -> bool:
        """Loop groups reading one array input, or holding one duplicated producer."""
        changed = False
        readers: dict[Instruction, list[int]] = {}
        for k, g in enumerate(self.groups):
            if g is None or not self.loop[k]:
                continue
            shared = [x for x in _inputs(self.sets[k])
                      if x.shape.size > 1 and not x.shape.is_tuple]
            shared += [m for m in self.sets[k] if len(self.member_of[m]) > 1
                       and m.opcode not in ("broadcast", "constant", "iota")]
            for x in dict.fromkeys(shared):
                readers.setdefault(x, []).append(k)
        for x in sorted(readers, key=self.pos.__getitem__):
            # each reader joins the first merged group that takes it, else starts one (a
            # group full at MAX_OUTPUTS leaves the next readers to a new one)
            bases: list[int] = []
            for k in readers[x]:
                k = self.find(k)
                if k in bases:
                    continue
                for base in bases[-4:]:  # (the newest: older ones are likely full)
                    what = ("producer computed once" if x in self.sets[base]
                            else "input read once")
                    if self._try(base, k, "sibling", f"both read %{x.name}: {what}"):
                        changed = True
                        break
                else:
                    bases.append(k)
                bases = list(dict.fromkeys(self.find(b) for b in bases))
        return changed

    def result(self) -> list[Group]:
        return [g for g in self.groups if g is not None]


def merge_loop_groups(comp: Computation, groups: list[Group], input_limit: int = 96,
                      order: list[Instruction] | None = None
                      ) -> tuple[list[Group], list[FusionMerge], list[tuple[str, str, str]]]:
    """Merge the loop groups of `comp` into multi-output groups (module doc): none whose
    kernel would read more than `input_limit` arrays (FusionPolicy.input_limit). Returns
    (groups, merges, refusals as (producer, consumer, reason)). `order`:
    `comp.post_order()`, when the caller has it."""
    m = _Merger(comp, groups, input_limit, order)
    for _ in range(4):  # a merge can make another possible; a few rounds reach a fixpoint
        if not (m.producer_consumer() | m.siblings()):
            break
    return m.result(), m.merges, m.refusals
