"""Cost analysis: flops, transcendentals and bytes accessed of an HLO module, as XLA counts.

Input: a Module (or one instruction / computation). Output: a dict of float properties with
XLA's key names: "flops", "transcendentals", "bytes accessed", plus "bytes accessed{i}{}"
(bytes read through operand i) and "bytes accessedout{}" (bytes written). Like XLA's
HloCostAnalysis, module totals are sums over the entry computation's instructions, so the
per-operand keys add up operand i of every instruction.
Invariants: nothing here mutates the module; each called computation is analyzed once per
call (results are cached by computation).

Counting conventions (XLA's, with the deviations marked *):
- Elementwise ops: one flop per output element, or one transcendental instead for the ops
  the opcode table marks transcendental (exp, log, sin, tanh, power, atan2, ...). compare,
  select, clamp, reduce-precision and convert count one flop per element (XLA counts
  converts as flops); copy and bitcast-convert count none.
- reduce: (input elements - output elements) applications of to_apply's flops and
  transcendentals; map: one application per output element; scatter: one per update
  element; sort: n * ceil(log2 n) flops for n elements; dot: 2 * M * N * K, batch included
  (2 * output elements * contracted size).
- Bytes accessed of an instruction: operand bytes + output bytes, except: parameter,
  constant, get-tuple-element and tuple touch nothing (* XLA counts a tuple's pointer
  table); a reshape that is a bitcast (no layouts set, or both row-major) touches nothing
  (* XLA counts reshapes); slice, dynamic-slice and gather read only what they output;
  dynamic-update-slice reads and writes only the update (it works in place).
- fusion: flops and transcendentals of its fused computation; bytes accessed = its operands'
  bytes + its output's bytes, never the fused temporaries (* XLA also narrows operands read
  only through slices).
- while: one iteration (body + condition, every key), since the trip count is not known
  statically; conditional: the maximum over branches, key by key; call: its computation.
- custom-call: operand + output bytes and no flops (* XLA reports -1: unknown).
- Tuple shapes count the bytes of their leaves; pred is one byte per element.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape, bit_width

FLOPS = "flops"
TRANSCENDENTALS = "transcendentals"
BYTES = "bytes accessed"
OUTPUT_BYTES = "bytes accessedout{}"
_SUB_KEYS = (FLOPS, TRANSCENDENTALS)  # what reduce/map/scatter/fusion take from callees

Properties = dict[str, float]


def operand_bytes_key(i: int) -> str:
    """XLA's key for the bytes read through operand `i`: 'bytes accessed0{}'."""
    return f"{BYTES}{i}{{}}"


def shape_bytes(shape: Shape) -> int:
    """Bytes of a value of `shape` (tuples: the sum of their leaves)."""
    if shape.is_tuple:
        return sum(shape_bytes(s) for s in shape.tuple_shapes)
    return shape.size * (bit_width(shape.element_type) // 8)


def _elements(shape: Shape) -> int:
    return shape.tuple_shapes[0].size if shape.is_tuple else shape.size


def _is_bitcast_reshape(inst: Instruction) -> bool:
    def row_major(s: Shape) -> bool:
        return s.layout is None or s.layout == tuple(range(s.rank - 1, -1, -1))

    return row_major(inst.shape) and row_major(inst.operand.shape)


@dataclass(frozen=True)
class InstructionCost:
    """One row of `cost_breakdown`: an instruction and its properties."""

    computation: str
    name: str
    opcode: str
    depth: int  # 0 for the entry computation, +1 per while/conditional/call level
    properties: Properties = field(default_factory=dict)

    @property
    def flops(self) -> float:
        return self.properties.get(FLOPS, 0.0)

    @property
    def transcendentals(self) -> float:
        return self.properties.get(TRANSCENDENTALS, 0.0)

    @property
    def bytes_accessed(self) -> float:
        return self.properties.get(BYTES, 0.0)


class CostAnalysis:
    """Computes properties per instruction and per computation, caching callees."""

    def __init__(self) -> None:
        self._comp_cache: dict[Computation, Properties] = {}

    # -- computations --------------------------------------------------------------------

    def computation(self, comp: Computation) -> Properties:
        """The sum of the properties of `comp`'s instructions."""
        cached = self._comp_cache.get(comp)
        if cached is None:
            total: Properties = defaultdict(float)
            for inst in comp.post_order():
                for k, v in self.instruction(inst).items():
                    total[k] += v
            cached = self._comp_cache[comp] = _finish(total)
        return dict(cached)

    def _per_application(self, comp: Computation, times: float) -> Properties:
        sub = self.computation(comp)
        return {k: sub.get(k, 0.0) * times for k in _SUB_KEYS}

    # -- instructions --------------------------------------------------------------------

    def instruction(self, inst: Instruction) -> Properties:
        """Properties of one instruction (called computations included as described)."""
        op = inst.opcode
        props = _default_bytes(inst)
        if op in ("parameter", "constant", "get-tuple-element", "tuple") or (
                op == "reshape" and _is_bitcast_reshape(inst)):
            props = _no_bytes(inst)
        elif op in ("slice", "dynamic-slice", "gather"):
            out = shape_bytes(inst.shape)
            props[BYTES] += out - props[operand_bytes_key(0)]
            props[operand_bytes_key(0)] = float(out)
        elif op == "dynamic-update-slice":
            upd = float(shape_bytes(inst.operands[1].shape))
            props[BYTES] -= props[operand_bytes_key(0)] + props[OUTPUT_BYTES] - upd
            props[operand_bytes_key(0)] = 0.0
            props[OUTPUT_BYTES] = upd
        elif op == "while":
            body = self.computation(inst.while_body)
            cond = self.computation(inst.while_condition)
            props = {k: body.get(k, 0.0) + cond.get(k, 0.0) for k in set(body) | set(cond)}
        elif op == "conditional":
            props = {}
            for branch in inst.branch_computations:
                for k, v in self.computation(branch).items():
                    props[k] = max(props.get(k, v), v)
        elif op == "call":
            props = self.computation(inst.to_apply)
        elif op == "fusion":
            props.update(self._per_application(inst.fused_computation, 1))
        props.update(self._compute(inst))
        return _finish(props)

    def _compute(self, inst: Instruction) -> Properties:
        """Flops and transcendentals of an instruction outside control flow and fusion."""
        op = inst.opcode
        row = OPCODES[op]
        if op == "reduce":
            count = _elements(inst.operands[0].shape) - _elements(inst.shape)
            return self._per_application(inst.to_apply, count)
        if op == "map":
            return self._per_application(inst.to_apply, inst.shape.size)
        if op == "scatter":
            return self._per_application(inst.to_apply, inst.operands[2].shape.size)
        if op == "sort":
            n = inst.operands[0].shape.size
            return {FLOPS: float(n * math.ceil(math.log2(n))) if n > 1 else 0.0}
        if op == "dot":
            lhs = inst.operands[0].shape
            k = math.prod(lhs.dimensions[d] for d in inst.attrs["lhs_contracting_dims"])
            return {FLOPS: 2.0 * inst.shape.size * k}
        if op == "convolution":  # (2 flops per tap and input feature of a group)
            rhs = inst.operands[1].shape
            per_out = rhs.size // max(rhs.dimensions[_rhs_out_dim(inst)], 1)
            return {FLOPS: 2.0 * inst.shape.size * per_out}
        if op == "reduce-window":
            taps = math.prod(w.size for w in inst.attrs["window"])
            return self._per_application(inst.to_apply, inst.shape.size * taps)
        if row.elementwise:
            n = float(inst.shape.size)
            return {FLOPS: n * row.flops, TRANSCENDENTALS: n * row.transcendentals}
        return {}


def _rhs_out_dim(inst: Instruction) -> int:
    from ember.hlo.window import parse_dim_labels
    return parse_dim_labels(inst.attrs["dim_labels"]).rhs_out


def _default_bytes(inst: Instruction) -> Properties:
    props: Properties = {FLOPS: 0.0, TRANSCENDENTALS: 0.0}
    out = float(shape_bytes(inst.shape))
    total = out
    for i, o in enumerate(inst.operands):
        b = float(shape_bytes(o.shape))
        props[operand_bytes_key(i)] = b
        total += b
    props[OUTPUT_BYTES] = out
    props[BYTES] = total
    return props


def _no_bytes(inst: Instruction) -> Properties:
    props = {k: 0.0 for k in _default_bytes(inst)}
    return props


def _finish(props: dict[str, float]) -> Properties:
    out = {FLOPS: 0.0, TRANSCENDENTALS: 0.0, BYTES: 0.0}
    out.update({k: float(v) for k, v in props.items()})
    return out


def cost_analysis(module: Module) -> Properties:
    """XLA-style totals for `module`'s entry computation (see the module docstring).

    Per-operand keys that sum to zero (operands of tuples, for instance) are left out.
    """
    props = CostAnalysis().computation(module.entry)
    return {k: v for k, v in props.items()
            if v or not (k.startswith(BYTES) and k.endswith("{}") and k != OUTPUT_BYTES)}


def instruction_cost(inst: Instruction) -> Properties:
    """The properties of one instruction, as counted in the module totals."""
    return CostAnalysis().instruction(inst)


def cost_breakdown(module: Module, *, nested: bool = False) -> list[InstructionCost]:
    """One row per entry instruction, in post order, for profiling reports.

    With nested=True, the instructions of computations run by while, conditional and call
    follow their caller's row, with depth + 1 (fused computations and reducers stay folded
    into their caller: they are not separate kernels). The depth-0 rows sum to
    `cost_analysis(module)`.
    """
    analysis = CostAnalysis()
    rows: list[InstructionCost] = []

    def visit(comp: Computation, depth: int) -> None:
        for inst in comp.post_order():
            rows.append(InstructionCost(comp.name, inst.name or "", inst.opcode, depth,
                                        analysis.instruction(inst)))
            if nested and inst.opcode in ("while", "conditional", "call"):
                for callee in inst.called_computations:
                    visit(callee, depth + 1)

    visit(module.entry, 0)
    return rows
