"""Parser for the HLO text `printer.py` emits (parsable, canonical and verbose modes).

Input: HLO text. Output: a Module whose printed text equals the input text (for text the
printer produced) and which evaluates bit-identically to the printed module.
Invariants: definitions precede uses (the printer emits post order, callees first);
shapes are taken from the text, so the verifier can check them against inference.
Raises `HloParseError` with the line number on malformed input, including display-mode
`{...}` constants.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.literal_text import parse_literal
from ember.hlo.printer import BARE_ATTRS, BOOL_ATTRS, DIMS_ATTRS, INT_ATTRS, STRING_ATTRS
from ember.hlo.shape import Shape
from ember.hlo.window import parse_window


class HloParseError(ValueError):
    pass


_SHAPE_ARRAY = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\](?:\{([0-9,]*)\})?")
_COMP_HEAD = re.compile(r"^(ENTRY\s+)?%([^\s(]+)\s*\((.*)\)\s*->\s*(.*)\{\s*$")
_OPCODE = re.compile(r"[a-z][a-z0-9-]*")


def parse_shape(text: str) -> Shape:
    shape, rest = _shape_at(text.strip(), 0)
    if rest != len(text.strip()):
        raise HloParseError(f"trailing text after shape in {text!r}")
    return shape


def _shape_at(s: str, i: int) -> tuple[Shape, int]:
    if s.startswith("(", i):
        i += 1
        elems = []
        while not s.startswith(")", i):
            sh, i = _shape_at(s, i)
            elems.append(sh)
            if s.startswith(", ", i):
                i += 2
        return Shape.tuple_of(elems), i + 1
    m = _SHAPE_ARRAY.match(s, i)
    if not m:
        raise HloParseError(f"expected a shape at {s[i:i + 30]!r}")
    dims = tuple(int(d) for d in m.group(2).split(",") if d)
    layout = tuple(int(d) for d in m.group(3).split(",") if d) if m.group(3) is not None \
        else None
    if layout is not None and not dims:
        layout = None
    return Shape(m.group(1), dims, layout), m.end()


def _balanced(s: str, i: int, open_: str, close: str) -> int:
    """Index just past the bracket closing the one at s[i]; quotes are skipped."""
    depth = 0
    in_str = False
    k = i
    while k < len(s):
        c = s[k]
        if in_str:
            if c == "\\":
                k += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    raise HloParseError(f"unbalanced {open_}{close} in {s[i:i + 40]!r}")


def _split_attrs(s: str) -> list[tuple[str, str]]:
    """`, key=value, key=value` -> [(key, value)] with brace- and quote-aware values."""
    out = []
    i = 0
    while i < len(s):
        if not s.startswith(", ", i):
            raise HloParseError(f"expected ', key=value' at {s[i:i + 30]!r}")
        i += 2
        eq = s.index("=", i)
        key = s[i:eq]
        j = eq + 1
        if s.startswith("{", j):
            end = _balanced(s, j, "{", "}")
        elif s.startswith('"', j):
            end = j + 1
            while s[end] != '"':
                end += 2 if s[end] == "\\" else 1
            end += 1
        else:
            end = s.find(", ", j)
            end = len(s) if end < 0 else end
        out.append((key, s[j:end]))
        i = end
    return out


def _dims(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.strip("{}").split(",") if x.strip())


def _parse_slice(v: str) -> tuple[tuple[int, int, int], ...]:
    out = []
    for part in re.findall(r"\[([^\]]*)\]", v):
        nums = [int(x) for x in part.split(":")]
        out.append((nums[0], nums[1], nums[2] if len(nums) > 2 else 1))
    return tuple(out)


def _parse_replica_groups(v: str) -> tuple[tuple[int, ...], ...]:
    """`{{0,1},{2,3}}` -> ((0, 1), (2, 3)) (replica groups, and source-target pairs)."""
    inner = v.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise HloParseError(f"bad replica_groups or source_target_pairs {v}")
    groups = re.findall(r"\{([^{}]*)\}", inner[1:-1])
    return tuple(tuple(int(x) for x in g.split(",") if x.strip()) for g in groups)


def _parse_padding(v: str) -> tuple[tuple[int, int, int], ...]:
    if v == "{}":
        return ()
    out = []
    for part in v.split("x"):
        nums = [int(x) for x in re.findall(r"-?\d+", part)]
        out.append((nums[0], nums[1], nums[2] if len(nums) > 2 else 0))
    return tuple(out)


def _parse_metadata(v: str) -> dict[str, Any]:
    md: dict[str, Any] = {}
    for key, val in re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+?)(?=\s|\}$)', v):
        md[key] = json.loads(val) if val.startswith('"') else int(val)
    return md


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.comps: dict[str, Computation] = {}

    def fail(self, lineno: int, msg: str) -> HloParseError:
        line = self.lines[lineno] if lineno < len(self.lines) else ""
        return HloParseError(f"line {lineno + 1}: {msg}\n  {line.strip()}")

    def parse(self) -> Module:
        name = None
        entry: Computation | None = None
        k = 0
        while k < len(self.lines):
            line = self.lines[k].strip()
            if not line:
                k += 1
                continue
            if line.startswith("HloModule "):
                name = line[len("HloModule "):].split(",")[0].strip()
                k += 1
                continue
            m = _COMP_HEAD.match(line)
            if not m:
                raise self.fail(k, "expected a computation header")
            comp, k = self.parse_computation(m.group(2), k + 1)
            self.comps[comp.name] = comp
            if m.group(1):
                entry = comp
        if entry is None:
            raise HloParseError("no ENTRY computation")
        others = [c for c in self.comps.values() if c is not entry]
        return Module(name or entry.name, entry, others)

    def parse_computation(self, name: str, k: int) -> tuple[Computation, int]:
        comp = Computation(name)
        insts: dict[str, Instruction] = {}
        while k < len(self.lines):
            line = self.lines[k].strip()
            if line == "}":
                if comp.root is None:
                    raise self.fail(k, f"computation %{name} has no ROOT")
                return comp, k + 1
            try:
                inst, is_root = self.parse_instruction(line, insts)
            except HloParseError as e:
                raise self.fail(k, str(e)) from None
            except (ValueError, KeyError, IndexError) as e:
                raise self.fail(k, f"{type(e).__name__}: {e}") from None
            comp.add_instruction(inst)
            insts[inst.name] = inst
            if is_root:
                comp.root = inst
            k += 1
        raise self.fail(k, f"computation %{name} is not closed")

    def parse_instruction(self, line: str,
                          insts: dict[str, Instruction]) -> tuple[Instruction, bool]:
        is_root = line.startswith("ROOT ")
        if is_root:
            line = line[5:]
        if not line.startswith("%"):
            raise HloParseError("expected %name")
        eq = line.index(" = ")
        name = line[1:eq]
        shape, i = _shape_at(line, eq + 3)
        if line[i] != " ":
            raise HloParseError("expected a space after the shape")
        m = _OPCODE.match(line, i + 1)
        if not m:
            raise HloParseError("expected an opcode")
        opcode = m.group(0)
        j = m.end()
        if line[j] != "(":
            raise HloParseError("expected '(' after the opcode")
        end = _balanced(line, j, "(", ")")
        inner = line[j + 1:end - 1]
        attrs: dict[str, Any] = {}
        operands: list[Instruction] = []
        if opcode == "constant":
            attrs["value"] = parse_literal(inner, shape.dtype, shape.dimensions)
            attrs["value"].setflags(write=False)
        elif opcode == "parameter":
            attrs["parameter_number"] = int(inner)
        elif inner.strip():
            for tok in inner.split(","):
                tok = tok.strip()
                if not tok.startswith("%") or tok[1:] not in insts:
                    raise HloParseError(f"unknown operand {tok}")
                operands.append(insts[tok[1:]])
        called: list[Computation] = []
        body = cond = true_comp = false_comp = None
        metadata: dict[str, Any] = {}
        for key, v in _split_attrs(line[end:]):
            if key == "dimensions" and opcode in ("sort", "concatenate"):
                attrs["dimension"] = _dims(v)[0]
            elif key in DIMS_ATTRS:
                attrs[key] = _dims(v)
            elif key in INT_ATTRS:
                attrs[key] = int(v)
            elif key in BOOL_ATTRS:
                attrs[key] = v == "true"
            elif key in BARE_ATTRS:
                attrs[key] = v
            elif key in STRING_ATTRS:
                attrs[key] = json.loads(v)
            elif key == "slice":
                attrs[key] = _parse_slice(v)
            elif key == "padding":
                attrs[key] = _parse_padding(v)
            elif key == "window":
                attrs[key] = parse_window(v)
            elif key in ("replica_groups", "source_target_pairs"):
                attrs[key] = _parse_replica_groups(v)
            elif key in ("to_apply", "calls"):
                called = [self.comp(v)]
            elif key == "condition":
                cond = self.comp(v)
            elif key == "body":
                body = self.comp(v)
            elif key == "branch_computations":
                called = [self.comp(x.strip()) for x in v.strip("{}").split(",")]
            elif key == "true_computation":
                true_comp = self.comp(v)
            elif key == "false_computation":
                false_comp = self.comp(v)
            elif key == "metadata":
                metadata = _parse_metadata(v)
            else:
                raise HloParseError(f"unknown attribute {key}")
        if opcode == "while":
            if cond is None or body is None:
                raise HloParseError("while needs condition= and body=")
            called = [cond, body]
        if true_comp is not None or false_comp is not None:
            if true_comp is None or false_comp is None:
                raise HloParseError("conditional needs both true_computation= and "
                                    "false_computation=")
            called = [true_comp, false_comp]
        if opcode == "convolution":
            attrs.setdefault("feature_group_count", 1)
            attrs.setdefault("batch_group_count", 1)
        if opcode in ("dot",):
            attrs.setdefault("lhs_batch_dims", ())
            attrs.setdefault("rhs_batch_dims", ())
        for flag in ("is_stable",) if opcode == "sort" else ():
            attrs.setdefault(flag, False)
        if opcode == "gather":
            attrs.setdefault("indices_are_sorted", False)
        if opcode == "scatter":
            attrs.setdefault("indices_are_sorted", False)
            attrs.setdefault("unique_indices", False)
        if opcode == "fusion":
            called[0].is_fusion_computation = True
        inst = Instruction(opcode, shape, operands, attrs, called, metadata, name)
        return inst, is_root

    def comp(self, ref: str) -> Computation:
        name = ref.strip().lstrip("%")
        if name not in self.comps:
            raise HloParseError(f"unknown computation %{name}")
        return self.comps[name]


def parse_module(text: str) -> Module:
    """Parse HLO text into a Module."""
    return _Parser(text).parse()
