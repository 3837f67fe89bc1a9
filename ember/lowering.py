"""Lower a jaxpr to an HLO module: the bridge between the two IRs.

Input: a ClosedJaxpr (from tracing) and the function's name. Output: an HLO `Module` whose
entry computation takes one parameter per jaxpr invar, then one per large constant (closed-
over arrays above `MAX_EMBEDDED_CONST_BYTES` are passed as hidden arguments rather than
embedded in the code), and returns the outputs (a tuple when there is more than one).
Invariants:
- Each primitive lowers through its own rule (`prim.lowering`, defined beside the primitive):
  `rule(ctx, *operands, **params) -> Instruction | list[Instruction]`.
- Every instruction carries metadata from its equation: `op_name` as a path such as
  `jit(f)/jit(g)/cos`, and the user's source file and line.
- Nested `jit` equations are inlined (their op_name path records the nesting).
- Control-flow rules lower their sub-jaxprs into sub-computations with
  `ctx.lower_sub(builder, closed_jaxpr, args, name)`; constants there are embedded
  (hidden parameters exist only in the entry computation).
- Side effects (host callbacks that print) are custom-calls with
  `custom_call_has_side_effect=true`, chained per computation by a token operand (the
  previous effect, or the loop or branch instruction that holds effects), so they run in
  program order; ember/hlo/ir.py treats them as roots.
- Implicit broadcasting of the jaxpr (size-1 and rank-0 operands of elementwise ops) is
  made explicit here: HLO elementwise ops take operands of exactly the result shape.
- A shard_map body lowered for one device (`manual=`, the mesh axes): its collectives over
  mesh axis names become HLO collectives with replica groups of partition ids (row-major
  over the mesh), and the entry takes one last parameter, `s32[] partition-id` (after the
  hidden ones), as the SPMD partitioner's per-device modules do.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ember.core.aval import ShapedArray
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ember.core.staging import eqn_has_effects
from ember.core.trace import to_numpy
from ember.hlo.builder import Builder
from ember.hlo.ir import EFFECT_ORDER, Instruction, Module
from ember.hlo.shape import Shape, element_type_from_numpy

MAX_EMBEDDED_CONST_BYTES = 1024


class LoweringError(NotImplementedError):
    pass


def hlo_shape(aval: ShapedArray) -> Shape:
    return Shape(element_type_from_numpy(aval.dtype), aval.shape)


@dataclass
class LoweredModule:
    module: Module
    hidden_consts: list[np.ndarray] = field(default_factory=list)   # extra trailing args
    out_avals: list[ShapedArray] = field(default_factory=list)
    tuple_result: bool = False


@dataclass
class LoweringContext:
    """What a lowering rule sees: the builder, the equation's avals, and helpers."""

    b: Builder
    avals_in: list[ShapedArray]
    avals_out: list[ShapedArray]
    name_stack: str
    lowerer: Any = None   # the driver (Lowerer), for lower_sub

    @property
    def aval_out(self) -> ShapedArray:
        return self.avals_out[0]

    def broadcast_to(self, x: Instruction, aval: ShapedArray, shape: tuple[int, ...]
                     ) -> Instruction:
        """Make the jaxpr's implicit broadcast explicit: rank-0 operands and size-1 dims."""
        if aval.shape == tuple(shape):
            return x
        if aval.ndim == 0:
            return self.b.broadcast(x, shape, ())
        kept = [i for i, (s, t) in enumerate(zip(aval.shape, shape)) if s == t]
        if len(kept) != aval.ndim:
            x = self.b.reshape(x, tuple(aval.shape[i] for i in kept))
        return self.b.broadcast(x, shape, tuple(kept))

    def elementwise_operands(self, *xs: Instruction) -> list[Instruction]:
        shape = self.aval_out.shape
        return [self.broadcast_to(x, a, shape) for x, a in zip(xs, self.avals_in)]

    def constant(self, value: Any, dtype: Any) -> Instruction:
        return self.b.constant(np.asarray(value, dtype=dtype))

    def sub_builder(self, name: str) -> Builder:
        return Builder(name)

    def lower_sub(self, b: Builder, closed: ClosedJaxpr, args: list[Instruction],
                  name: str) -> list[Instruction]:
        """Lower `closed` into the sub-computation builder `b` on the values `args` (its
        instructions carry the op_name path `<this equation's path>/<name>`)."""
        if self.lowerer is None:
            raise LoweringError("this lowering context cannot lower sub-jaxprs")
        return self.lowerer.lower_into(b, closed, args, f"{self.name_stack}/{name}")


class Lowerer:
    """Lowers a jaxpr's equations into HLO: `lower_jaxpr` into its builder `b` (the
    module's entry, where large constants become hidden parameters), `lower_into` into a
    sub-computation's builder (the lowering rules' `ctx.lower_sub`). The module-level
    `lower_jaxpr` drives one per module; scatter's update jaxpr gets one of its own."""

    def __init__(self, name: str, num_args: int,
                 manual: tuple[tuple[str, int], ...] | None = None) -> None:
        self.b = Builder(name)
        self.entry = self.b
        self.num_args = num_args
        self.hidden: list[np.ndarray] = []
        # a shard_map body lowered for one device: the mesh axes (name, size), and the
        # entry's partition-id parameter (numbered last once the hidden ones are known)
        self.manual = manual
        self.partition_id: Instruction | None = None
        if manual is not None:
            self.partition_id = self.b.parameter(Shape("s32", ()), name="partition-id",
                                                 number=_LAST)

    def const(self, value: Any, aval: ShapedArray) -> Instruction:
        arr = np.asarray(to_numpy(value, aval), order="C")
        if arr.nbytes > MAX_EMBEDDED_CONST_BYTES and self.b is self.entry:
            # Hidden parameters are numbered after the function's own arguments.
            self.hidden.append(arr)
            return self.b.parameter(hlo_shape(aval), name=f"const_arg.{len(self.hidden) - 1}",
                                    number=self.num_args + len(self.hidden) - 1)
        return self.b.constant(arr)

    def lower_jaxpr(self, jaxpr: Jaxpr, consts: list[Any], args: list[Instruction],
                    name_stack: str) -> list[Instruction]:
        env: dict[int, Instruction] = {}

        def read(v: Any) -> Instruction:
            if isinstance(v, Literal):
                return self.b.constant(np.asarray(v.val, dtype=v.aval.dtype))
            return env[v.id]

        for v, c in zip(jaxpr.constvars, consts):
            env[v.id] = self.const(c, v.aval)
        for v, a in zip(jaxpr.invars, args):
            env[v.id] = a
        for eqn in jaxpr.eqns:
            prim = eqn.primitive
            ins = [read(v) for v in eqn.invars]
            src = eqn.source_info
            if prim.is_call:
                closed = eqn.params["jaxpr"]
                inner = f"{name_stack}/jit({eqn.params.get('name', 'fn')})"
                outs = self.lower_jaxpr(closed.jaxpr, closed.consts, ins, inner)
            else:
                rule = getattr(prim, "lowering", None)
                if rule is None:
                    raise LoweringError(f"primitive {prim.name} has no lowering rule")
                self.b.set_metadata(op_name=f"{name_stack}/{prim.name}",
                                    source_file=src.file, source_line=src.line)
                ctx = LoweringContext(self.b, [v.aval for v in eqn.invars],
                                      [v.aval for v in eqn.outvars],
                                      f"{name_stack}/{prim.name}", self)
                out = rule(ctx, *ins, **eqn.params)
                outs = list(out) if prim.multiple_results else [out]
            if outs and not getattr(prim, "has_effects", False) and eqn_has_effects(eqn):
                # A loop or branch that prints: later side effects come after it. The token
                # is the whole while/conditional, not one element of it, so that no rewrite
                # of an element (a pass-through carry) can cut the dependence.
                token = outs[0]
                while token.opcode == "get-tuple-element":
                    token = token.operand
                set_effect_token(self.b, token)
            for v, o in zip(eqn.outvars, outs):
                env[v.id] = o
        self.b.set_metadata()
        return [read(v) for v in jaxpr.outvars]

    def lower_into(self, b: Builder, closed: ClosedJaxpr, args: list[Instruction],
                   name_stack: str) -> list[Instruction]:
        """Lower a sub-jaxpr into builder `b` (a while body, a branch), then come back."""
        outer, outer_md = self.b, dict(self.b.metadata)
        self.b = b
        try:
            return self.lower_jaxpr(closed.jaxpr, closed.consts, args, name_stack)
        finally:
            self.b = outer
            outer.metadata = outer_md


_EFFECT_NUMBERS = itertools.count()  # increasing over the process: order within a module


def effect_token(b: Builder) -> Instruction | None:
    """The last side effect lowered into builder `b` (None before the first)."""
    return getattr(b, "_ember_effect_token", None)


def set_effect_token(b: Builder, inst: Instruction) -> None:
    """Order the next side effect in `b` after `inst`: it takes `inst` as its last operand,
    so every pass (and the schedule's post order) keeps the effects in program order.
    `inst` is also numbered in program order (metadata `EFFECT_ORDER`): a loop or branch
    that prints takes no token operand (its state holds none), so when a pass rebuilds it
    (appended at the end of its computation, metadata copied) the number, not the insertion
    order, keeps it after the effects before it and before the next loop that prints."""
    if inst.metadata:  # (an instruction without metadata would print `metadata={}`)
        inst.metadata[EFFECT_ORDER] = next(_EFFECT_NUMBERS)
    b._ember_effect_token = inst  # type: ignore[attr-defined]


# The characters an HLO module name keeps (ASCII letters, digits, `_`). A set test, not a
# regex: compiling one costs ~0.3 ms of a fresh process's first call.
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def module_name(fun_name: str) -> str:
    """`jit_<name>` with characters HLO names cannot hold replaced (`<lambda>` -> `_lambda_`):
    every other character (code point) becomes one `_`."""
    return "jit_" + "".join(c if c in _NAME_CHARS else "_" for c in fun_name)


_LAST = 1 << 30  # (the partition id's number while the hidden parameters are counted)


def lower_jaxpr(closed: ClosedJaxpr, name: str = "main",
                manual: tuple[tuple[str, int], ...] | None = None) -> LoweredModule:
    """The HLO module of a traced function (see module docstring for its signature);
    `manual`: a shard_map body's mesh axes, lowered for one device."""
    jaxpr = closed.jaxpr
    lw = Lowerer(module_name(name), len(jaxpr.invars), manual)
    params = [lw.b.parameter(hlo_shape(v.aval), name=f"Arg_{i}", number=i)
              for i, v in enumerate(jaxpr.invars)]
    outs = lw.lower_jaxpr(jaxpr, closed.consts, params, f"jit({name})")
    if lw.partition_id is not None:  # (last: still the largest number, order unchanged)
        lw.partition_id.attrs["parameter_number"] = len(jaxpr.invars) + len(lw.hidden)
    if len(outs) == 1:
        root = outs[0]
        tuple_result = False
    else:
        root = lw.b.tuple(outs)
        tuple_result = True
    module = lw.b.build(root, name=module_name(name))
    return LoweredModule(module, lw.hidden, closed.out_avals, tuple_result)
