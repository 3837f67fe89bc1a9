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
This file grows the groups under the backend's `FusionPolicy`; the per-edge rules are
`fusion_rules.py` (should_fuse, emissions, should_fuse_dot), the joins of sibling
reductions and loop carries `fusion_groups.py`, multi-output loop merges
`fusion_merge.py`, the rewrite of a group into a fusion `fusion_build.py`.

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
  duplicated: softmax's `x - max(x)` must see the same x the max saw, bit for bit; unless it
  is an integer or predicate value, which every copy computes bit for bit. A
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
- Bounded inputs: a group reads at most the policy's `input_limit` arrays (operands of
  its members that are not members, constant fills aside); a producer that would add
  more is refused ("the fusion would read more than N arrays") and roots a kernel of its
  own, so no kernel takes thousands of arguments (an unrolled loop's chain of scalar
  sums). A root that itself reads more (a concatenate of many arrays) still fuses
  producers that add none.
- kOutput: at most one dot per group; it joins only if every group member between it and
  the root is elementwise on the dot's dims with all its users in the group (so the
  epilogue reads the dot's value at the index it writes, and the dot is never computed
  twice); the dot's operands stay in memory (BLAS reads them), never fused.
"""

from __future__ import annotations

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.window_reads import reads_only_its_window
from ember.passes.base import HloPass
from ember.passes.fusion_build import build_fusion, control_flow_computations
from ember.passes.fusion_groups import merge_carries, merge_siblings, reads_updated_array
from ember.passes.fusion_merge import FusionMerge, merge_loop_groups
from ember.passes.fusion_reuse import worst_recomputation
from ember.passes.fusion_rules import (
    LOOP_FUSIBLE,
    ROOT_FUSIBLE,
    Decision,
    FusionDecision,
    emissions,
    expands,
    reaches_reduction,
    should_fuse,
    should_fuse_dot,
)
from ember.passes.grouping import grow_group, is_constant_fill, readers_in
from ember.passes.row_fusion import form_row_groups
from ember.records import FrozenRecord


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
        for comp in control_flow_computations(module):
            changed |= self._run_on(module, comp, comp in bodies)
            found += module.fusion_decisions  # type: ignore[attr-defined]
            merges += module.fusion_merges  # type: ignore[attr-defined]
        module.fusion_decisions = found  # type: ignore[attr-defined]
        module.fusion_merges = merges  # type: ignore[attr-defined]
        return changed

    def _run_on(self, module: Module, entry: Computation, loop_body: bool = False) -> bool:
        decisions: list[FusionDecision] = []
        row_decisions: list[tuple[str, str, str]] = []
        order = entry.post_order()
        row_groups = (form_row_groups(entry, row_decisions, order) if self.policy.row_fusion
                      else [])
        pos = {inst: k for k, inst in enumerate(order)} if row_groups else {}
        for root, members in row_groups:
            build_fusion(module, entry, [root], members, pos)
        if row_groups:
            entry.remove_dead()
            order = entry.post_order()
        # (one post order from here to the rewrite: forming, merging and ordering the
        # groups change no instruction)
        groups = self._form_groups(entry, decisions, order)
        groups = (merge_siblings(entry, groups, decisions) if self.policy.sibling_fusion
                  else [([r], m) for r, m in groups])
        if loop_body and self.policy.carry_fusion:
            groups = merge_carries(entry, groups)
        merges: list[FusionMerge] = []
        if self.policy.multi_output_fusion:
            groups, merges, refused = merge_loop_groups(entry, groups,
                                                        self.policy.input_limit, order)
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
        pos = {inst: k for k, inst in enumerate(order)}
        for roots, members in groups:
            if len(members) > 1:
                build_fusion(module, entry, roots, members, pos)
                changed = True
        if changed:
            entry.remove_dead()
        return changed

    def _form_groups(self, comp: Computation, decisions: list[FusionDecision],
                     order: list[Instruction] | None = None
                     ) -> list[tuple[Instruction, list[Instruction]]]:
        """`order`: `comp.post_order()`, when the caller has it."""
        order = comp.post_order() if order is None else order
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
            if root.opcode == "dynamic-update-slice" and reads_updated_array(root, members) \
                    and not reads_only_its_window(root, set(members)):
                update = root.operands[1]
                cut.add(update)
                cuts.append(FusionDecision(update.name, root.name, (
                    "the update reads the array it is written into: computed in a kernel "
                    "of its own, so the update is written in place")))
                continue
            worst = worst_recomputation(root, members, self.policy.recompute_limit)
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
            consumers = readers_in(p, group, pos)
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
                d = should_fuse(c, p, group, amplified[c] or expands(c), self._feeds)
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
            amplified[p] = any(amplified[c] or expands(c) for c in consumers)
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


# (the per-edge rules live in fusion_rules.py; their names stay importable from here)
__all__ = ["LOOP_FUSIBLE", "ROOT_FUSIBLE", "Decision", "Fusion", "FusionDecision",
           "FusionPolicy", "should_fuse"]
