"""Producer-consumer fusion: kLoop fusions of elementwise/shape chains, kInput fusions of a
reduce with the elementwise producers of its input, kOutput fusions of a dot with its
elementwise epilogue (bias add, activation), row fusions (softmax, layernorm; see
`row_fusion.py`) and sibling multi-output fusion of reductions over the same input.

Input: a Module (the entry and every computation its while, conditional and call run are
fused). Output: the module where each group of fused instructions is replaced by
`%fusion = T fusion(%in...), kind=kLoop|kInput, calls=%fused_computation`; the fused
computation holds the group, its parameters are the group's inputs in operand order.
`module.fusion_decisions` lists every refusal as a `FusionDecision(producer, consumer,
reason)` (instruction names before the rewrite); `module.fusion_merges` every multi-output
loop fusion formed (`fusion_merge.FusionMerge`: which groups, why, what it writes).

Rewrites:
  f(g(x)) => fusion(x){f(g(p0))}                 (g's only user is f)
  f(g(x)), h(g(x)) => fusion{f(g)}, fusion{h(g)}  (g cheap: duplicated into both)
  f(dynamic-update-slice(x, g(u))) => fusion(x, u){f(dus(p0, g(p1)))}   (f the update's
                                                   only reader: the kernel reads x or the
                                                   update region by region, regions.py)
  dynamic-update-slice(x, g(u)) => fusion(x, u){dus(p0, g(p1))}   (x never fused: where x
                                                   dies there, the kernel writes g's
                                                   window into x's buffer and nothing else)
  reduce(f(x), c) => fusion(x), kind=kInput        (the reduce is the fusion root)
  f(dot(x, w), b) => fusion(x, w, b), kind=kOutput  (f elementwise on the dot's shape: the
                                                   backend runs f on each block of the
                                                   product while it is in cache)
  reduce(x), reduce(g(x)) => gte(fusion(x){tuple(reduce, reduce)}, k)   (siblings: one pass
                                                   over x; same input shape and dimensions,
                                                   neither depends on the other)
  in a while body: f(x) a carry, g(f(x)) => gte(fusion(x){tuple(g(f), f)}, k)   (loop
                                                   carries: f's group and the group reading
                                                   f at its own index become one kLoop pass
                                                   writing both, so an iteration such as
                                                   z = z*z + c; n += |z| <= 2 is one kernel)
  g(x) read by f1 and f2; y = f1(g(x), x), z = f2(g(x), x)
      => gte(fusion(x){tuple(f1(g), f2(g))}, k)   (multi-output loop fusion,
                                                   `fusion_merge.py`: a loop group reading
                                                   another's root at its own index takes
                                                   it in, the root an extra output while
                                                   others read it; loop groups sharing an
                                                   input merge; Black-Scholes is one kernel)

Target choices: what a backend's code generator can run reaches the pass as a
`FusionPolicy` the backend gives (`Fusion(policy)`), never as a test of which backend runs:
whether a dot takes its epilogue (kOutput), whether rows become row fusions, whether
sibling reductions share one pass. Each refusal a policy causes is reported like any other.

Invariants:
- A group is grown from its root (an instruction whose value must live in memory) by
  visiting candidate producers latest-in-post-order first, so when a producer is decided all
  of its users that will join the group already have: a producer with a user outside the
  group is duplicated, which `should_fuse` allows only for cheap producers.
- Expensive producers (the opcode table's flag: transcendentals, divide, power, ...) are
  never duplicated and never fused below a broadcast that would recompute them per output;
  nor below a cheap producer that is duplicated (`K * exp(-r T)` read by two kernels is
  copied into both, but its exp is not: the exp is then a kernel's root, which
  multi-output fusion may merge with its readers' kernels).
- A producer with several users that (through elementwise ops) feeds a reduction is never
  duplicated: softmax's `x - max(x)` must see the same x the max saw, bit for bit. A
  broadcast of a scalar constant, or an iota, involves no arithmetic: it is duplicated into
  every consumer and never a kernel of its own.
- No cycles: a group's inputs are operands of its members, which precede the root, and an
  input that uses a member gets that member materialized on its own (duplication).
- A group of one instruction stays unfused (the backend emits lone ops as kernels).
- Bounded code duplication (the rule XLA applies, see `emissions`): the element generator
  emits a member once per distinct index it is read at, and index-remapping users (slice,
  concatenate, pad, reverse, reshape, ...) each ask for a new index, so a chain of stencil
  steps (each reading the previous one through shifted slices) would emit the first step
  k^steps times. A producer that would be emitted more than the policy's
  `duplication_limit` times is refused ("would be emitted N times...") and becomes the
  root of a kernel of its own: the code of every kernel stays linear in the program.
  Broadcasts and constant fills are exempt (their operands are still counted).
- Bounded recomputation (`fusion_reuse.py`): a member read through a many-to-one index
  (a broadcast, overlapping slices, a pad, which reads its operand at every output) is
  evaluated several times per element; when the work so repeated exceeds the policy's
  `recompute_limit` operations per element of the kernel, the costliest such member is
  cut ("reused operand elements: ...") and computed once in a kernel of its own, e.g. a
  col2im tap sum under a max-pool backward, or a stencil step read by the next step.
- kOutput: at most one dot per group; it joins only if every group member between it and
  the root is elementwise on the dot's dims with all its users in the group (so the
  epilogue reads the dot's value at the index it writes, and the dot is never computed
  twice); the dot's operands stay in memory (BLAS reads them), never fused.
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape
from ember.passes.base import HloPass
from ember.passes.fusion_merge import FusionMerge, merge_loop_groups
from ember.passes.fusion_reuse import worst_recomputation
from ember.passes.grouping import grow_group, is_constant_fill
from ember.passes.row_fusion import form_row_groups
from ember.records import FrozenRecord

# Ops that may sit inside a kLoop fusion (index-remapping ops and elementwise ops).
LOOP_FUSIBLE: frozenset[str] = frozenset(
    {n for n, r in OPCODES.items() if r.elementwise and n != "map"}
    | {"broadcast", "reshape", "transpose", "slice", "pad", "concatenate", "iota", "reverse",
       "convert", "select", "compare", "clamp", "bitcast-convert", "constant", "gather",
       "dynamic-update-slice"}
)
# Roots a group may grow from: loop-fusible ops and reductions (kInput).
ROOT_FUSIBLE: frozenset[str] = (LOOP_FUSIBLE - {"constant", "iota"}) | {"reduce"}


class Decision(FrozenRecord):
    """Whether a producer may fuse into a consumer, and why not. (Records, not dataclasses,
    for import time: ember/records.py; FusionDecision too.)"""

    FIELDS = ("ok", "reason")

    ok: bool
    reason: str

    def __init__(self, ok: bool, reason: str = "") -> None:
        self._freeze(ok, reason)


class FusionDecision(FrozenRecord):
    """A refused fusion: `producer` was not fused into `consumer` because of `reason`."""

    FIELDS = ("producer", "consumer", "reason")

    producer: str
    consumer: str
    reason: str

    def __init__(self, producer: str, consumer: str, reason: str) -> None:
        self._freeze(producer, consumer, reason)

    def __str__(self) -> str:
        return f"%{self.producer} -> %{self.consumer}: {self.reason}"


def _expands(inst: Instruction) -> bool:
    """True when `inst` reads some operand element for several output elements."""
    if inst.opcode == "gather":
        return True  # indices may repeat: one operand element read for many outputs
    if inst.opcode != "broadcast":
        return False
    return inst.shape.size > inst.operand.shape.size


def _feeds_reduction(inst: Instruction) -> bool:
    """Does `inst` reach a reduce through a chain of loop-fusible users?"""
    seen: set[Instruction] = set()
    stack = list(inst.users)
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u.opcode == "reduce":
            return True
        if u.opcode in LOOP_FUSIBLE:
            stack.extend(u.users)
    return False


def reaches_reduction(order: list[Instruction]) -> dict[Instruction, bool]:
    """`_feeds_reduction` of every instruction of a computation (`order`: its post order)
    in one walk, users first: a walk per candidate made the pass quadratic in the program
    (an unrolled loop of 600 steps spent 6 of its 9 s of fusion there)."""
    out: dict[Instruction, bool] = {}
    for inst in reversed(order):
        out[inst] = any(u.opcode == "reduce" or (u.opcode in LOOP_FUSIBLE and out.get(u, False))
                        for u in inst.users)
    return out


def should_fuse(consumer: Instruction, producer: Instruction,
                group: set[Instruction] | None = None, amplified: bool = False,
                feeds: dict[Instruction, bool] | None = None) -> Decision:
    """May `producer` be computed inside the fusion that `consumer` belongs to?

    `group` is the consumer's group so far (users of `producer` outside it force a
    duplicate); `amplified` says the consumer's value is read several times per output of
    the group (a broadcast between it and the root); `feeds`: `reaches_reduction` of the
    computation, when the caller has it.
    """
    group = group if group is not None else {consumer}
    op = producer.opcode
    if producer.shape.is_tuple:
        return Decision(False, "tuple-shaped producer")
    if op == "constant":
        if producer.shape.size <= 1:
            return Decision(True)
        return Decision(False, "array constant stays in memory")
    if op not in LOOP_FUSIBLE:
        return Decision(False, f"{op} is not loop-fusible")
    if consumer.opcode == "reduce" and producer in consumer.operands[len(consumer.operands)
                                                                    // 2:]:
        if producer.shape.size > 1:
            return Decision(False, "reduce init value is not a scalar")
    if is_constant_fill(producer):
        # no arithmetic: every copy holds the same bits, and a kernel of its own would only
        # write memory its consumers then read
        return Decision(True)
    expensive = OPCODES[op].expensive
    if expensive and (amplified or _expands(consumer)):
        return Decision(False, f"expensive {op} would be recomputed for each element of a "
                               f"broadcast")
    outside = [u for u in producer.users if u not in group]
    if outside:
        if op == "dynamic-update-slice":
            # its own kernel updates in place; a copy here would read the operand after it
            return Decision(False, "dynamic-update-slice has users outside the fusion; "
                                   "updated in place once, not duplicated")
        if expensive:
            return Decision(False, f"expensive {op} has {len(producer.users)} users; "
                                   f"not duplicated")
        if feeds[producer] if feeds is not None and producer in feeds else \
                _feeds_reduction(producer):
            return Decision(False, "feeds a reduction and another consumer (x - max(x) "
                                   "pattern); not duplicated")
    return Decision(True)


def passes_index(consumer: Instruction, producer: Instruction) -> bool:
    """Does the element generator read `producer` at `consumer`'s own index (the same Index
    object, so a diamond of such users emits it once)? True for elementwise consumers of
    the same dimensions; every other consumer computes a new index from its own."""
    return (OPCODES[consumer.opcode].elementwise
            and producer.shape.dimensions == consumer.shape.dimensions)


def emissions(producer: Instruction, consumers: list[Instruction],
              sources: dict[Instruction, frozenset[Instruction]],
              counts: dict[Instruction, int]) -> tuple[frozenset[Instruction], int]:
    """How many times the element generator would emit `producer` inside a fusion whose
    members `consumers` read it, as (index sources, count).

    An index source is the member that made an index (the root's index, or a consumer that
    remaps its index for its operand); a member is emitted once per index it is read at:
        sources(p) = U_c (sources(c) if c passes its index to p else {c})
        count(p)   = sum_{s in sources(p)} count(s),   count(root) = 1
    A set, not a sum over paths, so a diamond of elementwise users reading p at one index
    counts once; a stencil step read through 8 slices counts 8 times its consumers' count.
    """
    srcs: set[Instruction] = set()
    for c in consumers:
        srcs |= sources[c] if passes_index(c, producer) else {c}
    out = frozenset(srcs)
    return out, sum(counts[s] for s in out)


def should_fuse_dot(dot: Instruction, group: set[Instruction], root: Instruction) -> Decision:
    """May `dot` join `group` (grown from `root`) as a kOutput fusion's product? Every member
    from the dot up to the root must be elementwise on the dot's dims (the epilogue reads
    the product at the index it writes) with no user outside the group (no copy of it would
    need the product again)."""
    if any(m.opcode == "dot" for m in group):
        return Decision(False, "a kOutput fusion holds one dot")
    dims = dot.shape.dimensions
    stack, seen = [dot], set()
    while stack:
        inst = stack.pop()
        if inst in seen:
            continue
        seen.add(inst)
        if inst is not root and any(u not in group for u in inst.users):
            return Decision(False, f"{inst.opcode} on the dot's path has users outside the "
                                   f"fusion; the dot is not computed twice")
        if inst is not dot:
            info = OPCODES[inst.opcode]
            if not info.elementwise or inst.opcode == "map" or inst.shape.dimensions != dims:
                return Decision(False, f"{inst.opcode} reads the dot's result at other "
                                       f"indices; an epilogue must be elementwise")
        if inst is not root:
            stack.extend(inst.users)
    return Decision(True)


class FusionPolicy(FrozenRecord):
    """The fusions a backend's code generator can run (the defaults: all of them, as the
    CPU backend does). A backend hands its policy to `Fusion` in its pipeline.

    output_fusion   a dot takes its elementwise epilogue (kOutput: the backend applies f to
                    each block of the product while it is in cache)
    row_fusion      reductions over the last dimension of a row shape and their elementwise
                    surroundings become one row fusion (softmax, layernorm: row_fusion.py)
    sibling_fusion  reductions of one input over the same dimensions share one pass
    carry_fusion    in a while body, a loop group whose root is a carry merges with the loop
                    group that reads that root elementwise (one multi-output kLoop kernel
                    writes both: the backend's loop kernels store several roots)
    duplication_limit
                    the most times one producer may be emitted inside a fusion (once per
                    distinct index it is read at; see `emissions`); past it the producer
                    is a kernel of its own. XLA allows 15 (compile time against re-reads).

    recompute_limit
                    the most operations a fusion may repeat per element of its iteration
                    space by evaluating a member more than once per element (a member read
                    through a many-to-one index: broadcast, overlapping slices, interior
                    padding); past it the costliest such member is a kernel of its own
                    (see `fusion_reuse.py`). XLA refuses any expensive producer under a
                    reusing consumer; this counts the work instead, so a long chain of
                    cheap taps counts too and a cheap op under a broadcast does not.
    input_limit     the most arrays one fusion grown from a root reads (operands of its
                    members that are not members; copied constant fills not counted): past
                    it the producer that would add more is a kernel of its own. A long chain
                    of scalar sums (an unrolled loop's `s = s + sum(x)`) otherwise became one
                    kernel of 1,600 arguments, whose call LLVM compiles in time superlinear
                    in their count. XLA bounds a fusion's operands likewise (96 on GPU).
    multi_output_fusion
                    loop groups merge into multi-output loop kernels (`fusion_merge.py`):
                    a producer read at the consumer's index joins it (an extra output while
                    others read it), siblings sharing an input merge (the backend's loop
                    kernels store several roots of one shape and layout)
    """

    FIELDS = ("output_fusion", "row_fusion", "sibling_fusion", "duplication_limit",
              "recompute_limit", "carry_fusion", "multi_output_fusion", "input_limit")
    output_fusion: bool
    row_fusion: bool
    sibling_fusion: bool
    duplication_limit: int
    recompute_limit: float
    carry_fusion: bool
    multi_output_fusion: bool
    input_limit: int

    def __init__(self, output_fusion: bool = True, row_fusion: bool = True,
                 sibling_fusion: bool = True, duplication_limit: int = 15,
                 recompute_limit: float = 32.0, carry_fusion: bool = False,
                 multi_output_fusion: bool = False, input_limit: int = 96) -> None:
        if duplication_limit < 1:
            raise ValueError(f"duplication_limit must be at least 1, got {duplication_limit}")
        if input_limit < 1:
            raise ValueError(f"input_limit must be at least 1, got {input_limit}")
        if not recompute_limit >= 0:
            raise ValueError(f"recompute_limit must be at least 0, got {recompute_limit}")
        self._freeze(output_fusion, row_fusion, sibling_fusion, duplication_limit,
                     float(recompute_limit), carry_fusion, multi_output_fusion, input_limit)


class Fusion(HloPass):
    """Groups producers into their consumers (see the module docstring), within what the
    backend's `FusionPolicy` allows."""

    name = "fusion"

    def __init__(self, policy: FusionPolicy | None = None) -> None:
        self.policy = policy if policy is not None else FusionPolicy()
        self._feeds: dict[Instruction, bool] = {}  # reaches_reduction of the computation

    def run(self, module: Module) -> bool:
        # the entry and every computation a while or conditional runs (their bodies become
        # native loops whose kernels are fused like any other code); fused computations and
        # reducers are left alone
        changed, found, merges = False, [], []
        bodies = {inst.called_computations[1] for c in module.computations
                  for inst in c.instructions if inst.opcode == "while"}
        for comp in _control_flow_computations(module):
            changed |= self._run_on(module, comp, comp in bodies)
            found += module.fusion_decisions  # type: ignore[attr-defined]
            merges += module.fusion_merges  # type: ignore[attr-defined]
        module.fusion_decisions = found  # type: ignore[attr-defined]
        module.fusion_merges = merges  # type: ignore[attr-defined]
        return changed

    def _run_on(self, module: Module, entry: Computation, loop_body: bool = False) -> bool:
        decisions: list[FusionDecision] = []
        row_decisions: list[tuple[str, str, str]] = []
        row_groups = (form_row_groups(entry, row_decisions) if self.policy.row_fusion
                      else [])
        pos = {inst: k for k, inst in enumerate(entry.post_order())} if row_groups else {}
        for root, members in row_groups:
            _build_fusion(module, entry, [root], members, pos)
        if row_groups:
            entry.remove_dead()
        groups = self._form_groups(entry, decisions)
        groups = (_merge_siblings(entry, groups, decisions) if self.policy.sibling_fusion
                  else [([r], m) for r, m in groups])
        if loop_body and self.policy.carry_fusion:
            groups = _merge_carries(entry, groups)
        merges: list[FusionMerge] = []
        if self.policy.multi_output_fusion:
            groups, merges, refused = merge_loop_groups(entry, groups,
                                                        self.policy.input_limit)
            decisions += [FusionDecision(*d) for d in refused]
        module.fusion_merges = merges  # type: ignore[attr-defined]
        decisions += [FusionDecision(*d) for d in row_decisions]
        seen: set[tuple[str, str, str]] = set()
        unique = []
        for d in decisions:
            key = (d.producer, d.consumer, d.reason)
            if key not in seen:
                seen.add(key)
                unique.append(d)
        module.fusion_decisions = unique  # type: ignore[attr-defined]
        changed = bool(row_groups)
        pos = {inst: k for k, inst in enumerate(entry.post_order())}
        for roots, members in groups:
            if len(members) > 1:
                _build_fusion(module, entry, roots, members, pos)
                changed = True
        if changed:
            entry.remove_dead()
        return changed

    def _form_groups(self, comp: Computation, decisions: list[FusionDecision]
                     ) -> list[tuple[Instruction, list[Instruction]]]:
        order = comp.post_order()
        pos = {inst: k for k, inst in enumerate(order)}
        self._feeds = reaches_reduction(order)
        member_of: dict[Instruction, list[set[Instruction]]] = {}
        groups: list[tuple[Instruction, list[Instruction]]] = []
        for inst in reversed(order):
            if not self._needs_memory(inst, comp, member_of):
                continue
            if inst.opcode not in ROOT_FUSIBLE or inst.shape.is_tuple:
                continue
            members = self._grow(inst, pos, decisions)
            group = set(members)
            for m in members:
                member_of.setdefault(m, []).append(group)
            groups.append((inst, members))
        groups.reverse()  # producers' groups first, so their fusions exist when used
        return groups

    def _grow(self, root: Instruction, pos: dict[Instruction, int],
              decisions: list[FusionDecision]) -> list[Instruction]:
        """The group of `root`: producers visited latest-in-post-order first; then, while
        some member would repeat more work than the policy's `recompute_limit` (see
        `fusion_reuse.py`), the costliest one is cut (a kernel of its own) and the group
        regrown without it."""
        cut: set[Instruction] = set()
        cuts: list[FusionDecision] = []
        while True:
            tried: list[FusionDecision] = []
            members = self._grow_once(root, pos, tried, cut)
            if root.opcode == "dynamic-update-slice" and _reads_updated_array(root, members):
                update = root.operands[1]
                cut.add(update)
                cuts.append(FusionDecision(update.name, root.name, (
                    "the update reads the array it is written into: computed in a kernel "
                    "of its own, so the update is written in place")))
                continue
            worst = worst_recomputation(root, members)
            if worst is None or worst.per_element <= self.policy.recompute_limit:
                decisions += cuts + tried
                return members
            cut.add(worst.member)
            cuts.append(FusionDecision(worst.member.name, worst.consumer.name,
                                       worst.reason(self.policy.recompute_limit)))

    def _grow_once(self, root: Instruction, pos: dict[Instruction, int],
                   decisions: list[FusionDecision], cut: set[Instruction]
                   ) -> list[Instruction]:
        """One growth of `root`'s group that refuses the members in `cut`."""
        amplified: dict[Instruction, bool] = {root: False}
        # a member copied into this group while other kernels read (or copy) it too: its
        # producers fused here are copies as well
        copied: dict[Instruction, bool] = {root: False}
        output_fusion = self.policy.output_fusion
        limit = self.policy.duplication_limit
        # the element generator's index sources and emission counts of each member
        sources: dict[Instruction, frozenset[Instruction]] = {root: frozenset({root})}
        counts: dict[Instruction, int] = {root: 1}
        # what the kernel reads: operands of members, not members (constant fills, which
        # every group copies, left out)
        inputs = {o for o in root.operands if not is_constant_fill(o)}
        input_limit = self.policy.input_limit

        def takes_inputs(p: Instruction, group: set[Instruction],
                         consumer: Instruction) -> bool:
            """Whether the kernel still reads at most `input_limit` arrays with `p` fused
            (its operands read instead of it), or no more than without it (a root of many
            operands, a concatenate of 200 arrays, still fuses their producers); if so
            they are counted in."""
            new = [o for o in dict.fromkeys(p.operands) if o not in group
                   and o not in inputs and not is_constant_fill(o)]
            after = len(inputs) - (p in inputs) + len(new)
            if after > input_limit and after > len(inputs):
                decisions.append(FusionDecision(p.name, consumer.name, (
                    f"the fusion would read more than {input_limit} arrays; computed in a "
                    f"kernel of its own so each kernel's arguments stay bounded")))
                return False
            inputs.discard(p)
            inputs.update(new)
            return True

        def accept(p: Instruction, group: set[Instruction]) -> bool:
            if p in cut:
                return False
            if root.opcode == "dynamic-update-slice" and p is root.operands[0]:
                # the array updated stays in memory, so the kernel may write just the
                # window into it (in_place.py) instead of the whole array
                if p.opcode != "parameter":
                    decisions.append(FusionDecision(p.name, root.name, (
                        "the array a dynamic-update-slice updates stays in memory (the "
                        "update is written into it in place)")))
                return False
            consumers = [u for u in p.users if u in group]
            dots = [c for c in consumers if c.opcode == "dot"]
            if dots:  # BLAS reads a dot's operands from memory
                if p.opcode != "parameter":
                    decisions.append(FusionDecision(p.name, dots[0].name, "operand of a dot "
                                                    "stays in memory (BLAS reads it)"))
                return False
            if p.opcode == "dot":
                d = (should_fuse_dot(p, group, root) if output_fusion else
                     Decision(False, "the backend runs a dot without its epilogue"))
                if not d.ok:
                    decisions.append(FusionDecision(p.name, consumers[0].name, d.reason))
                    return False
                if not takes_inputs(p, group, consumers[0]):
                    return False
                amplified[p] = copied[p] = False
                sources[p], counts[p] = frozenset({p}), 1
                return True
            for c in consumers:
                d = should_fuse(c, p, group, amplified[c] or _expands(c), self._feeds)
                if not d.ok:
                    if p.opcode != "parameter":
                        decisions.append(FusionDecision(p.name, c.name, d.reason))
                    return False
            under = next((c for c in consumers if copied[c]), None)
            if under is not None and OPCODES[p.opcode].expensive:
                # its only users are copies: fusing it would compute it once per copy (a
                # chain x = exp(x) * .5 read twice per step would copy every earlier step)
                decisions.append(FusionDecision(p.name, under.name, (
                    f"expensive {p.opcode} under %{under.name}, which is copied into other "
                    f"kernels too; not duplicated")))
                return False
            srcs, n = emissions(p, consumers, sources, counts)
            if n > limit and p.opcode != "broadcast" and not is_constant_fill(p):
                # a broadcast is exempt (materializing it costs more than re-reading its
                # operand); its operand is counted and refused in its place
                worst = max(consumers, key=lambda c: counts[c])
                decisions.append(FusionDecision(p.name, worst.name, (
                    f"would be emitted {n} times in the fusion (once per index it is read "
                    f"at, above the limit of {limit}); computed once in a kernel of its "
                    f"own so the code does not grow exponentially")))
                return False
            if not takes_inputs(p, group, consumers[0]):
                return False
            sources[p], counts[p] = srcs, n
            amplified[p] = any(amplified[c] or _expands(c) for c in consumers)
            copied[p] = under is not None or any(u not in group for u in p.users)
            return True

        return grow_group(root, pos, accept)

    @staticmethod
    def _needs_memory(inst: Instruction, comp: Computation,
                      member_of: dict[Instruction, list[set[Instruction]]]) -> bool:
        """True when some user reads `inst` from memory (it is in none of that user's
        groups, or the user is not fused at all), or `inst` is the root."""
        if inst is comp.root:
            return True
        for u in inst.users:
            groups = member_of.get(u)
            if not groups:
                return True
            if any(inst not in g for g in groups):
                return True
        return False


def _reads_updated_array(root: Instruction, members: list[Instruction]) -> bool:
    """Whether the members computing the update of a group rooted at a dynamic-update-slice
    read the array it updates, when that array is not a parameter of the computation.
    Fused, those reads could follow the window's writes in place. (A parameter's buffer is
    the caller's, never written: a kernel that reads it writes a whole new array instead,
    region by region, in one pass. The starts are read before any write.)"""
    target = root.operands[0]
    if target.opcode == "parameter":
        return False
    group, seen = set(members), set()
    stack = [root.operands[1]]
    while stack:
        m = stack.pop()
        if m in seen or m not in group:
            continue
        seen.add(m)
        if any(o is target for o in m.operands):
            return True
        stack.extend(m.operands)
    return False


def _depends_on(inst: Instruction, targets: set[Instruction]) -> bool:
    """Does `inst` (transitively, through operands) use any of `targets`?"""
    seen: set[Instruction] = set()
    stack = [inst]
    while stack:
        i = stack.pop()
        if i in targets:
            return True
        if i in seen:
            continue
        seen.add(i)
        stack.extend(i.operands)
    return False


def _merge_siblings(comp: Computation, groups: list[tuple[Instruction, list[Instruction]]],
                    decisions: list[FusionDecision]
                    ) -> list[tuple[list[Instruction], list[Instruction]]]:
    """Merge kInput groups reducing the same input over the same dimensions (sum(x) and
    sum(x*x), max(x) and min(x)) into multi-output groups: one pass over memory."""
    out: list[tuple[list[Instruction], list[Instruction]]] = [([r], m) for r, m in groups]
    by_key: dict[tuple, int] = {}
    for k, (roots, members) in enumerate(out):
        red = roots[0]
        if red.opcode != "reduce" or red.shape.is_tuple:
            continue
        x = red.operands[0]
        key = (x.shape.dimensions, tuple(sorted(red.attrs["dimensions"])))
        inputs = {o for m in members for o in m.operands if o not in members}
        j = by_key.get(key)
        if j is None:
            by_key[key] = k
            continue
        o_roots, o_members = out[j]
        o_inputs = {o for m in o_members for o in m.operands if o not in o_members}
        if not inputs & o_inputs:
            by_key[key] = k  # no shared input: nothing saved by a joint pass
            continue
        if any(_depends_on(i, set(o_roots)) for i in inputs) or any(
                _depends_on(i, {red}) for i in o_inputs):
            decisions.append(FusionDecision(o_roots[0].name, red.name,
                                            "sibling reductions depend on each other"))
            continue
        merged = o_members + [m for m in members if m not in o_members]
        out[k] = (o_roots + [red], merged)
        out[j] = ([], [])
        by_key[key] = k
    return [(r, m) for r, m in out if r]


def _loop_group(roots: list[Instruction], members: list[Instruction]) -> bool:
    """One array root, every member a loop-fusible op (no reduce, dot or row)."""
    return (len(roots) == 1 and not roots[0].shape.is_tuple
            and all(m.opcode in LOOP_FUSIBLE for m in members))


def _same_layout(a: Shape, b: Shape) -> bool:
    return a.dimensions == b.dimensions and (a.layout or ()) == (b.layout or ())


def _merge_carries(comp: Computation, groups: list[tuple[list[Instruction], list[Instruction]]]
                   ) -> list[tuple[list[Instruction], list[Instruction]]]:
    """In a while body: a loop group P whose root p is a carry (the body's root tuple holds
    it) joins a loop group C that reads p only through elementwise members of p's shape
    and layout (so C reads p at its own index), when none of C's other inputs depends on
    p: the merged group has roots (C's root, p) and writes both in one pass."""
    out = [(list(r), list(m)) for r, m in groups]
    root_tuple = comp.root
    for i, (p_roots, p_members) in enumerate(out):
        if not p_roots or not _loop_group(p_roots, p_members):
            continue
        p = p_roots[0]
        if root_tuple is None or root_tuple.opcode != "tuple" or p not in root_tuple.operands:
            continue
        for j, (c_roots, c_members) in enumerate(out):
            if j == i or not c_roots or not _loop_group(c_roots, c_members):
                continue
            c = c_roots[0]
            readers = [m for m in c_members if p in m.operands]
            if not readers or not _same_layout(c.shape, p.shape) or not all(
                    m.is_elementwise() and _same_layout(m.shape, p.shape) for m in readers):
                continue
            inputs = {o for m in c_members for o in m.operands
                      if o not in c_members and o is not p}
            if any(_depends_on(x, {p}) for x in inputs):
                continue
            merged = c_members + [m for m in p_members if m not in c_members]
            out[j] = (c_roots + [p], merged)
            out[i] = ([], [])
            break
    return [(r, m) for r, m in out if r]


def _control_flow_computations(module: Module) -> list[Computation]:
    """The entry, then (depth first) every computation a while, conditional or call in
    them runs."""
    out: list[Computation] = []
    stack = [module.entry]
    while stack:
        comp = stack.pop()
        if comp in out:
            continue
        out.append(comp)
        for inst in comp.instructions:
            if inst.opcode in ("while", "conditional", "call"):
                stack.extend(reversed(inst.called_computations))
    return out


def _build_fusion(module: Module, comp: Computation, roots: list[Instruction],
                  members: list[Instruction], pos: dict[Instruction, int]) -> Instruction:
    """Replace the group by a fusion instruction (several roots: a tuple-shaped multi-output
    fusion whose users read get-tuple-element); returns it. `pos`: the post order of `comp`
    before any group was replaced (still an order of the members: replacing a group only
    cuts edges into its root; one walk for all groups, not one per group)."""
    member_set = set(members)
    fused = Computation("fused_computation", module.uniquer)
    fused.name = module.uniquer.fresh("fused_computation")
    fused.is_fusion_computation = True
    inputs: list[Instruction] = []
    mapping: dict[Instruction, Instruction] = {}
    # Members in post order restricted to the group: operands before users.
    order = sorted(member_set, key=pos.__getitem__)
    for inst in order:
        new_ops = []
        for o in inst.operands:
            if o in member_set:
                new_ops.append(mapping[o])
                continue
            if o not in mapping:
                k = len(inputs)
                inputs.append(o)
                param = Instruction("parameter", o.shape, (), {"parameter_number": k},
                                    name=f"param_{k}")
                mapping[o] = fused.add_instruction(param)
            new_ops.append(mapping[o])
        attrs = dict(inst.attrs)
        clone = Instruction(inst.opcode, inst.shape, new_ops, attrs,
                            list(inst.called_computations), dict(inst.metadata), inst.name)
        mapping[inst] = fused.add_instruction(clone)
    root = roots[0]
    if len(roots) == 1:
        fused.root = mapping[root]
        shape = root.shape
    else:
        shape = Shape.tuple_of([r.shape for r in roots])
        fused.root = fused.add_instruction(Instruction(
            "tuple", shape, [mapping[r] for r in roots], {}, name="tuple"))
    module.add_computation(fused, fresh_name=True)
    kind = ("kOutput" if any(m.opcode == "dot" for m in members) else
            "kInput" if any(m.opcode == "reduce" for m in members) else "kLoop")
    fusion = Instruction("fusion", shape, inputs, {"kind": kind}, [fused],
                         dict(root.metadata), "fusion")
    comp.add_instruction(fusion)
    if len(roots) == 1:
        root.replace_all_uses_with(fusion)
    else:
        for k, r in enumerate(roots):
            gte = comp.add_instruction(Instruction("get-tuple-element", r.shape, [fusion],
                                                   {"index": k}, name="get-tuple-element"))
            r.replace_all_uses_with(gte)
    return fusion
