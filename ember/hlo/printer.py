"""HLO text in XLA's syntax.

Input: a Module. Output: text such as

    HloModule f

    %add_f32 (x: f32[], y: f32[]) -> f32[] {
      %x = f32[] parameter(0)
      %y = f32[] parameter(1)
      ROOT %add.2 = f32[] add(%x, %y)
    }

    ENTRY %f (Arg_0: f32[8]) -> f32[] {
      ...
    }

Modes: "parsable" (constants in full; the parser reads it back), "display" (arrays of more
than 8 elements print as {...}), "canonical" (names replaced in order of appearance,
metadata dropped, constants in full: structurally identical modules print identically,
so the text works as a cache key). `metadata=True` adds `metadata={op_name=...}` (not in
canonical mode). Operands print without shapes (`add(%a, %b)`); control flow as XLA
prints it: `while(%init), condition=%c, body=%b`, `conditional(%i, %x, %y),
branch_computations={%b0, %b1}`, or `true_computation=%t, false_computation=%f` when the
selector is a pred; computations print callees first, the entry last; in each computation
the parameters come first, by number, then the other instructions in post order (as XLA
prints them).
"""

from __future__ import annotations

import json
from typing import Any

from ember.hlo.ir import Computation, Instruction, Module
from ember.hlo.literal_text import format_literal
from ember.hlo.opcodes import OPCODES
from ember.hlo.window import format_window

# attr name -> how its value prints
DIMS_ATTRS = {"dimensions", "offset_dims", "collapsed_slice_dims", "start_index_map",
              "slice_sizes", "dynamic_slice_sizes", "lhs_batch_dims", "lhs_contracting_dims",
              "rhs_batch_dims", "rhs_contracting_dims", "update_window_dims",
              "inserted_window_dims", "scatter_dims_to_operand_dims", "fft_length"}
INT_ATTRS = {"index", "iota_dimension", "index_vector_dim", "exponent_bits", "mantissa_bits",
             "feature_group_count", "batch_group_count"}
BOOL_ATTRS = {"is_stable", "indices_are_sorted", "unique_indices",
              "custom_call_has_side_effect", "left_side", "lower", "unit_diagonal"}
BARE_ATTRS = {"direction", "kind", "dim_labels", "transpose_a", "fft_type"}
OMIT_WHEN_ONE = {"feature_group_count", "batch_group_count"}  # (as XLA prints them)
STRING_ATTRS = {"custom_call_target", "backend_config"}
OMIT_WHEN_EMPTY = {"lhs_batch_dims", "rhs_batch_dims"}
METADATA_KEYS = ("op_name", "source_file", "source_line")


def format_dims(dims: Any) -> str:
    return "{" + ",".join([str(int(d)) for d in dims]) + "}"


def format_replica_groups(groups: Any) -> str:
    """XLA's spelling: `{{0,1},{2,3}}` (replica groups, and source-target pairs)."""
    return "{" + ",".join(format_dims(g) for g in groups) + "}"


def format_padding(cfg: Any) -> str:
    if not cfg:
        return "{}"
    interior = any(c[2] for c in cfg)
    parts = [f"{lo}_{hi}_{i}" if interior else f"{lo}_{hi}" for lo, hi, i in cfg]
    return "x".join(parts)


def _format_attrs(inst: Instruction, cname: dict[Computation, str]) -> list[str]:
    out: list[str] = []
    row = OPCODES[inst.opcode]
    if not row.attrs and not row.called:  # (most opcodes: elementwise ops print none)
        return out
    for key in row.attrs:
        if key in ("value", "parameter_number") or key not in inst.attrs:
            continue
        v = inst.attrs[key]
        if key in DIMS_ATTRS:
            if key in OMIT_WHEN_EMPTY and not v:
                continue
            out.append(f"{key}={format_dims(v)}")
        elif key == "dimension":
            out.append(f"dimensions={{{int(v)}}}")
        elif key in INT_ATTRS:
            if key in OMIT_WHEN_ONE and int(v) == 1:
                continue
            out.append(f"{key}={int(v)}")
        elif key in BOOL_ATTRS:
            if v:
                out.append(f"{key}=true")
        elif key in BARE_ATTRS:
            out.append(f"{key}={v}")
        elif key in STRING_ATTRS:
            out.append(f"{key}={json.dumps(v)}")
        elif key == "slice":
            out.append("slice={" + ", ".join(f"[{a}:{b}:{c}]" for a, b, c in v) + "}")
        elif key == "padding":
            out.append(f"padding={format_padding(v)}")
        elif key == "window":
            out.append(f"window={format_window(v)}")
        elif key in ("replica_groups", "source_target_pairs"):
            out.append(f"{key}={format_replica_groups(v)}")
        else:  # pragma: no cover - table and printer out of sync
            raise ValueError(f"printer does not know attribute {key}")
    comps = inst.called_computations
    for role in row.called:
        if role == "branch_computations" and _pred_selected(inst):
            # XLA's spelling for a pred selector: true runs branch 0, false branch 1.
            out.append(f"true_computation=%{cname[comps[0]]}")
            out.append(f"false_computation=%{cname[comps[1]]}")
        elif role == "branch_computations":
            out.append("branch_computations={" + ", ".join(f"%{cname[c]}" for c in comps) + "}")
        elif role in ("to_apply", "calls", "condition"):
            out.append(f"{role}=%{cname[comps[0]]}")
        elif role == "body":
            out.append(f"body=%{cname[comps[1]]}")
    return out


def _pred_selected(inst: Instruction) -> bool:
    sel = inst.operands[0].shape if inst.operands else None
    return (sel is not None and not sel.is_tuple and sel.element_type == "pred"
            and len(inst.called_computations) == 2)


def format_metadata(md: dict[str, Any]) -> str:
    parts = []
    for k in METADATA_KEYS:
        if k in md and md[k] is not None:
            v = md[k]
            parts.append(f"{k}={int(v)}" if k == "source_line" else f"{k}={json.dumps(str(v))}")
    return "metadata={" + " ".join(parts) + "}"


def format_instruction(inst: Instruction, name: dict[Instruction, str],
                       cname: dict[Computation, str], *, mode: str = "parsable",
                       metadata: bool = False, is_root: bool = False) -> str:
    opcode = inst.opcode
    if opcode == "constant":
        args = format_literal(inst.value, elide=(mode == "display"))
    elif opcode == "parameter":
        args = str(inst.parameter_number)
    else:
        args = ", ".join(["%" + name[o] for o in inst.operands])
    head = f"{'ROOT ' if is_root else ''}%{name[inst]} = {inst.shape} {opcode}({args})"
    parts = _format_attrs(inst, cname)
    if metadata and mode != "canonical" and inst.metadata:
        parts.append(format_metadata(inst.metadata))
    return ", ".join([head, *parts]) if parts else head


def print_order(comp: Computation) -> list[Instruction]:
    """Parameters in parameter-number order, then every other instruction in post order."""
    return list(comp.parameters) + [i for i in comp.post_order() if i.opcode != "parameter"]


def format_computation(comp: Computation, cname: dict[Computation, str], *, entry: bool,
                       mode: str = "parsable", metadata: bool = False) -> str:
    order = print_order(comp)
    if mode == "canonical":
        params = {p: f"p{p.parameter_number}" for p in comp.parameters}
        others = (i for i in order if i.opcode != "parameter")
        name = {**params, **{inst: f"v{k}" for k, inst in enumerate(others)}}
    else:
        name = {inst: inst.name for inst in order}
    sig = ", ".join(f"{name[p]}: {p.shape}" for p in comp.parameters)
    head = f"{'ENTRY ' if entry else ''}%{cname[comp]} ({sig}) -> {comp.root.shape} {{"
    lines = [head]
    for inst in order:
        lines.append("  " + format_instruction(inst, name, cname, mode=mode, metadata=metadata,
                                               is_root=inst is comp.root))
    lines.append("}")
    return "\n".join(lines)


def print_module(module: Module, *, mode: str = "parsable", metadata: bool = False) -> str:
    """The module as HLO text (see the module docstring for the modes)."""
    if mode not in ("parsable", "display", "canonical"):
        raise ValueError(f"unknown print mode {mode!r}")
    comps = module.computations
    if mode == "canonical":
        cname = {c: f"c{k}" for k, c in enumerate(comps[:-1])}
        cname[module.entry] = "main"
        header = "HloModule canonical"
    else:
        cname = {c: c.name for c in comps}
        header = f"HloModule {module.name}"
    blocks = [header]
    for c in comps:
        blocks.append(format_computation(c, cname, entry=c is module.entry, mode=mode,
                                         metadata=metadata))
    return "\n\n".join(blocks) + "\n"


def canonical_text(module: Module) -> str:
    """Text that is equal for structurally identical modules: a cache key."""
    return print_module(module, mode="canonical")
