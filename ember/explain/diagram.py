"""Fusion diagrams: the program before and after fusion, side by side, as Graphviz DOT.

Input: a function and example arguments (`fusion_graph(f, *args)`) or an `Analysis`.
Output: a `DotGraph` (a str holding DOT text, with `.render(path, format)`), one digraph
with two clusters laid out side by side:
- "before fusion": the module after the simplification passes, just before the fusion
  pass; every operation is its own kernel, so every edge is an array in memory.
- "after fusion": each kernel a cluster (a fusion's operations inside it, labelled with
  their names from the "before" side; a lone operation alone in its cluster). Edges
  between kernels are arrays that go through memory, labelled with their size and, in red,
  the fusion pass's reason for not fusing them (`refusals.py`); edges inside a
  kernel are values in registers (grey, unlabelled).
Nodes: parameters are ellipses, operations boxes (name, shape; the tooltip holds the source
line), scalar constants small plain text, the program's outputs one `outputs` node.
Invariants: node ids are `b:<name>` / `a:<kernel>/<name>`, quoted, so any HLO name is a
valid id; labels escape quotes and backslashes; the text is deterministic for a module.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from ember.explain.analysis import Analysis, analyze, origin
from ember.explain.refusals import NO_KERNEL, crossing_edges, format_bytes
from ember.hlo.cost_analysis import cost_analysis, shape_bytes
from ember.hlo.ir import Instruction, Module

_PARAM = 'shape=ellipse, style=filled, fillcolor="#e8f0fe"'
_OP = 'shape=box, style="rounded,filled", fillcolor="#ffffff"'
_CONST = "shape=plaintext, fontsize=8"
_OUT = 'shape=doubleoctagon, style=filled, fillcolor="#e6f4ea"'
_KERNEL = 'style="rounded,filled"; fillcolor="#fff4e0"; color="#e0a040";'
_REGISTER = 'color="#9e9e9e", arrowsize=0.6'
_MEMORY = 'color="#1a73e8", penwidth=1.5'


class DotGraph(str):
    """DOT text; `render(path, format=None)` draws it with Graphviz's `dot`."""

    def render(self, path: str, format: str | None = None) -> str:
        from ember.explain.graphviz import render

        return render(str(self), path, format)


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(*lines: str) -> str:
    return _q("\n".join(lines)).replace("\n", "\\n")


def _where(inst: Instruction) -> str:
    md = inst.metadata
    if md.get("source_file") and md.get("source_line") is not None:
        return f"{md['source_file']}:{md['source_line']}"
    return ""


def _node(nid: str, inst: Instruction, name: str) -> str:
    if inst.opcode == "parameter":
        return f"{_q(nid)} [label={_label(name, str(inst.shape))}, {_PARAM}];"
    if inst.opcode == "constant" and inst.shape.size <= 1:
        value = inst.value.reshape(-1)[0] if inst.shape.size else ""
        return f"{_q(nid)} [label={_label(str(value))}, {_CONST}];"
    tip = _where(inst)
    return (f"{_q(nid)} [label={_label(name, str(inst.shape))}, {_OP}"
            + (f", tooltip={_q(tip)}" if tip else "") + "];")


def _is_scalar_constant(inst: Instruction) -> bool:
    return inst.opcode == "constant" and inst.shape.size <= 1


def _bytes_label(inst: Instruction) -> str:
    return format_bytes(shape_bytes(inst.shape))


def _summary(module: Module, kernels: int) -> str:
    moved = cost_analysis(module).get("bytes accessed", 0.0)
    return f"{kernels} kernel{'s' if kernels != 1 else ''}, {format_bytes(moved)} moved"


def _outputs(lines: list[str], prefix: str, root: Instruction,
             source: Callable[[Instruction], str | None]) -> None:
    """The `outputs` node and an edge from every root leaf."""
    out = f"{prefix}:outputs"
    lines.append(f"    {_q(out)} [label=\"outputs\", {_OUT}];")
    leaves = root.operands if root.opcode == "tuple" else [root]
    for leaf in leaves:
        src = source(leaf)
        if src is not None:
            lines.append(f"    {_q(src)} -> {_q(out)} [label={_label(_bytes_label(leaf))}, "
                         f"{_MEMORY}];")


def _before(module: Module) -> list[str]:
    entry = module.entry
    insts = [i for i in entry.post_order() if i.opcode not in ("tuple", "get-tuple-element")]
    kernels = sum(1 for i in insts if i.opcode not in NO_KERNEL)
    lines = ["  subgraph \"cluster_before\" {",
             f"    label={_label('before fusion: ' + _summary(module, kernels))};",
             "    style=dashed; color=\"#9e9e9e\";"]

    def nid(i: Instruction) -> str | None:
        if i.opcode == "get-tuple-element":  # a leaf of a multi-output op: that op's node
            return nid(i.operand)
        return None if i.opcode == "tuple" else f"b:{i.name}"

    for i in insts:
        lines.append("    " + _node(f"b:{i.name}", i, i.name or i.opcode))
    for i in insts:
        for o in i.operands:
            src = nid(o)
            if src is None:
                continue
            if _is_scalar_constant(o):  # an immediate operand, not an array in memory
                lines.append(f"    {_q(src)} -> {_q('b:' + str(i.name))} [{_REGISTER}];")
                continue
            lines.append(f"    {_q(src)} -> {_q('b:' + str(i.name))} "
                         f"[label={_label(_bytes_label(o))}, {_MEMORY}];")
    _outputs(lines, "b", entry.root, nid)
    lines.append("  }")
    return lines


def _after(analysis: Analysis) -> list[str]:
    from ember.explain.kernels import kernel_kind

    module = analysis.fused
    entry = module.entry
    reasons = {(e.producer, e.consumer): e.reason for e in crossing_edges(analysis)}
    kernels = [i for i in entry.post_order() if i.opcode not in NO_KERNEL]
    lines = ["  subgraph \"cluster_after\" {",
             f"    label={_label('after fusion: ' + _summary(module, len(kernels)))};",
             "    style=dashed; color=\"#9e9e9e\";"]
    node_of: dict[Instruction, str] = {}   # fused or lone op -> node id

    def inner(kernel: Instruction) -> list[Instruction]:
        if kernel.opcode == "fusion":
            return [i for i in kernel.fused_computation.post_order()
                    if i.opcode not in ("parameter", "tuple")]
        return [kernel]

    for p in entry.post_order():
        if p.opcode in ("parameter", "constant"):
            node_of[p] = f"a:{p.name}"
            lines.append("    " + _node(node_of[p], p, p.name or p.opcode))
    for k in kernels:
        lines.append(f"    subgraph {_q('cluster_a:' + str(k.name))} {{")
        lines.append(f"      label={_label(f'{k.name} ({kernel_kind(k)})')}; {_KERNEL}")
        for i in inner(k):
            node_of[i] = f"a:{k.name}/{origin(i)}"
            lines.append("      " + _node(node_of[i], i, origin(i)))
        for i in inner(k):
            for o in i.operands:
                if o in node_of and o.opcode != "parameter":
                    lines.append(f"      {_q(node_of[o])} -> {_q(node_of[i])} [{_REGISTER}];")
        lines.append("    }")

    def source(value: Instruction) -> tuple[str, Instruction] | None:
        """(node id, producing op) of an entry value."""
        index = None
        if value.opcode == "get-tuple-element":
            index, value = value.attrs["index"], value.operand
        if value.opcode == "fusion":
            root = value.fused_computation.root
            if index is not None and root.opcode == "tuple":
                root = root.operands[index]
            return node_of[root], root
        if value in node_of:
            return node_of[value], value
        return None

    for k in kernels:
        readers: list[tuple[int, Instruction]] = []
        if k.opcode == "fusion":
            for prm in k.fused_computation.parameters:
                readers += [(prm.parameter_number, u) for u in prm.users]
        else:
            readers = [(n, k) for n in range(len(k.operands))]
        for n, reader in readers:
            found = source(k.operands[n])
            if found is None:
                continue
            src, producer = found
            if _is_scalar_constant(producer):
                lines.append(f"    {_q(src)} -> {_q(node_of[reader])} [{_REGISTER}];")
                continue
            text = [_bytes_label(k.operands[n])]
            why = reasons.get((origin(producer), origin(reader)))
            attrs = _MEMORY
            if why:
                text += textwrap.wrap(why, 34)
                attrs += ', fontcolor="#b00020"'
            lines.append(f"    {_q(src)} -> {_q(node_of[reader])} [label={_label(*text)}, "
                         f"{attrs}];")

    def out_source(leaf: Instruction) -> str | None:
        found = source(leaf)
        return found[0] if found else None

    _outputs(lines, "a", entry.root, out_source)
    lines.append("  }")
    return lines


def fusion_dot(analysis: Analysis) -> DotGraph:
    """The before/after DOT text of an analysis (see the module docstring)."""
    title = f"jit({analysis.name}): before and after fusion"
    lines = [f"digraph {_q('fusion_' + analysis.name)} {{",
             f"  graph [label={_label(title)}, labelloc=t, fontname=\"Helvetica\", "
             f"newrank=true, nodesep=0.3, ranksep=0.35];",
             "  node [fontname=\"Helvetica\", fontsize=10];",
             "  edge [fontname=\"Helvetica\", fontsize=9];"]
    lines += _before(analysis.before_fusion)
    lines += _after(analysis)
    lines.append("}")
    return DotGraph("\n".join(lines) + "\n")


def fusion_graph(f: Callable, *args: Any, **kwargs: Any) -> DotGraph:
    """Graphviz DOT text of `f`'s program before and after fusion, side by side (see the
    module docstring); `.render("f.svg")` draws it when Graphviz is installed."""
    return fusion_dot(analyze(f, *args, compile=False, **kwargs))
