"""Ember's Mosaic kernels: a fusion's computation as one TPU kernel in Mosaic MLIR text.

Input: a `fusion` instruction of the TPU pipeline (kLoop: elementwise chains; kInput row
fusions of ember/passes/row_fusion.py: softmax, layernorm, logsumexp, variance rows).
Output: `Kernel` (the MLIR text, the 2-D views its operands and result are reshaped to,
its blocks), or `NoKernel` saying why the fusion stays HLO for the TPU compiler.

The kernel (what Pallas's TPU lowering also produces) is a module with one `func.func`
taking the grid indices (i32) then one memref per window: operands in the fusion's order,
then the result. Its attributes give the grid (`iteration_bounds`), every window's block
shape and index map (`window_params`: `window_bounds` and `transform_indices`, a function
from the grid indices to the block's index) and `dimension_semantics` (every step is
independent: `parallel`). The body loads the blocks, computes, stores the result block.

Values of the fused computation, by level (the 2-D view is R x C; a block br x bc):
  full     the fusion's shape                   vector<br x bc>, window (br, bc) at (i, j)
  row      one value per row (a reduce's result, rows broadcast along C)
                                                vector<br x 1>,  window (br, 1) at (i, 0)
  column   one value per column, the same for every row (a broadcast along the rows)
                                                vector<1 x bc>,  window (1, bc) at (0, j)
  scalar   rank 0: a constant, or an operand in scalar memory (SMEM, window (1, 1))
A reduce over the last dimension is `vector.multi_reduction` of the full block into a row
value (its init broadcast as the accumulator). Row kernels keep whole rows (bc = C).
Invariants: the result has the fusion's shape (one array; a tuple root stays HLO); every
member lowers (ember/backends/tpu/mosaic_text.py) or the whole fusion stays HLO; a window's
element type is one the kernel loads (f32, bf16, s32, u32; no i1 memory), scalar operands
are 32-bit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ember.backends.tpu import blocks as blk
from ember.backends.tpu.mosaic_text import ELEMENT_TYPES, Vec, Writer, lower, vector_type
from ember.hlo.ir import Computation, Instruction

# the combining kinds Mosaic's reductions implement (no products, no bool and/or)
_REDUCE_KINDS = {("add", "f32"): "add", ("add", "i32"): "add",
                 ("maximum", "f32"): "maximumf", ("minimum", "f32"): "minimumf"}
_INT_REDUCE = {("maximum", True): "maxsi", ("maximum", False): "maxui",
               ("minimum", True): "minsi", ("minimum", False): "minui"}


class NoKernel(Exception):
    """This fusion has no Ember kernel (the reason says why): it goes to the TPU compiler."""


@dataclass
class Window:
    """One memref of the kernel: operand k (or the result, k = -1) seen as `dims` (2-D)."""

    operand: int
    level: str           # full | row | column | scalar
    dims: tuple[int, int]
    block: tuple[int, int]
    element_type: str    # the HLO element type


@dataclass
class Kernel:
    name: str
    kind: str                      # "loop" | "row"
    text: str                      # the Mosaic module
    view: blk.View
    blocks: blk.Blocks
    windows: list[Window] = field(default_factory=list)  # operands, then the result
    reductions: int = 0            # the row reductions in it

    @property
    def result(self) -> Window:
        return self.windows[-1]


def kind_of(fusion: Instruction) -> str:
    """"row" for a fusion with reductions (row_fusion.py's kInput groups and single row
    reductions), "loop" for kLoop, "" for the rest (products: kOutput)."""
    k = fusion.attrs.get("kind")
    return {"kLoop": "loop", "kInput": "row"}.get(k, "")


def generate(fusion: Instruction, name: str | None = None) -> Kernel:
    """The Mosaic kernel of `fusion`; raises NoKernel."""
    kind = kind_of(fusion)
    if not kind:
        raise NoKernel(f"{fusion.attrs.get('kind')} fusions (products) stay with XLA")
    if fusion.shape.is_tuple:
        raise NoKernel("a fusion with several results")
    (comp,) = fusion.called_computations
    return _Generator(fusion, comp, kind, _symbol(name or fusion.name or "kernel")).run()


def _symbol(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if s[:1].isalpha() else "k_" + s


class _Generator:
    def __init__(self, fusion: Instruction, comp: Computation, kind: str, name: str) -> None:
        self.fusion, self.comp, self.kind, self.name = fusion, comp, kind, name
        self.root = comp.root
        self.levels: dict[Instruction, str] = {}

    # -- the plan: levels, the view, the blocks -------------------------------------------

    def run(self) -> Kernel:
        order = self.comp.post_order()
        reduces = [i for i in order if i.opcode == "reduce"]
        if self.kind == "row":
            if not reduces:
                raise NoKernel("a kInput fusion without a reduce")
            dims = reduces[0].operands[0].shape.dimensions
            if any(r.operands[0].shape.dimensions != dims or len(r.operands) != 2
                   or tuple(r.attrs.get("dimensions", ())) != (len(dims) - 1,)
                   for r in reduces):
                raise NoKernel("reductions other than one array over its last dimension")
        else:
            dims = self.root.shape.dimensions
        self.dims = dims
        view = blk.view_of(dims, keep_last=self.kind == "row")
        if view is None:
            raise NoKernel(f"no (8, 128)-tiled 2-D view of shape {list(dims)}")
        self.view = view
        for inst in order:
            self.levels[inst] = self._level(inst)
        root_level = self.levels[self.root]
        if root_level not in ("full", "row"):
            raise NoKernel(f"a result at the {root_level} level")
        if self.kind == "loop" and root_level != "full":
            raise NoKernel("a loop fusion whose result is not the fusion's shape")
        windows = self._windows()
        per_elem = 0.0
        for w in windows:
            nbytes = _itemsize(w.element_type)
            # (VMEM holds (8, 128) tiles: a (br, 1) block takes br x 128 elements, a
            # (1, bc) block 8 x bc)
            share = {"full": 1.0, "row": blk.LANES / view.cols, "column": 8 / view.rows,
                     "scalar": 0.0}[w.level]
            per_elem += nbytes * share
        itemsizes = [_itemsize(w.element_type) for w in windows if w.level != "scalar"]
        blocks = blk.choose(view, math.ceil(per_elem), min(itemsizes),
                            whole_rows=self.kind == "row")
        if blocks is None:
            raise NoKernel(f"a row of {view.cols} elements does not fit scoped VMEM")
        self.blocks = blocks
        for w in windows:
            w.block = {"full": (blocks.rows, blocks.cols), "row": (blocks.rows, 1),
                       "column": (1, blocks.cols), "scalar": (1, 1)}[w.level]
        self.windows = windows
        return Kernel(self.name, self.kind, self._text(), view, blocks, windows,
                      len(reduces))

    def _level(self, inst: Instruction) -> str:
        shape = inst.shape
        if shape.is_tuple:
            raise NoKernel("a tuple inside the fusion")
        et = shape.element_type
        if et not in ELEMENT_TYPES:
            raise NoKernel(f"element type {et}")
        op = inst.opcode
        if op == "parameter":
            return self._param_level(inst)
        if op == "constant":
            if shape.rank:
                raise NoKernel("an array constant")
            return "scalar"
        if op == "broadcast":
            return self._broadcast_level(inst)
        if op == "reduce":
            return self._reduce_level(inst)
        if op == "reshape":
            src = self.levels[inst.operands[0]]
            if src in ("row", "scalar", "column") and self._is_level(shape.dimensions, src):
                return src
            if src == "full" and shape.dimensions == self.dims:
                return src
            raise NoKernel("a reshape that moves elements between rows")
        levels = {self.levels[o] for o in inst.operands}
        if len(levels) != 1 or "scalar" in levels:
            raise NoKernel(f"{op} of values at levels {sorted(levels)}")
        return levels.pop()

    def _is_level(self, dims: tuple[int, ...], level: str) -> bool:
        if level == "scalar":
            return math.prod(dims) == 1
        if level == "full":
            return math.prod(dims) == self.view.rows * self.view.cols
        if level == "row":
            return math.prod(dims) == self.view.rows
        return math.prod(dims) == self.view.cols

    def _param_level(self, inst: Instruction) -> str:
        dims = inst.shape.dimensions
        if dims == self.dims:
            level = "full"
        elif not dims:
            level = "scalar"
        else:
            # (a vector: its level is what its broadcasts make of it; ambiguous squares are
            # decided by the broadcast dimensions)
            users = {self._broadcast_source_level(u) for u in inst.users
                     if u.opcode == "broadcast"}
            if len(users) != 1 or len(inst.users) != sum(u.opcode == "broadcast"
                                                         for u in inst.users):
                raise NoKernel(f"an operand of shape {list(dims)}")
            level = users.pop()
        if level == "scalar" and _itemsize(inst.shape.element_type) != 4:
            raise NoKernel("a scalar operand narrower than 32 bits (SMEM holds 32-bit words)")
        if level != "scalar" and inst.shape.element_type == "pred":
            raise NoKernel("a bool array operand (no i1 memory)")
        return level

    def _keeps_last(self) -> bool:
        """The view's columns are the fusion's last dimension (row and column values
        exist): row kernels, and loop kernels of lane-aligned rows."""
        return self.view.cols == self.dims[-1]

    def _broadcast_source_level(self, inst: Instruction) -> str:
        """The level of a broadcast's operand, from where its dimensions land."""
        src = inst.operands[0].shape.dimensions
        out = inst.shape.dimensions
        mapped = [d for d, n in zip(inst.attrs.get("dimensions", ()), src, strict=False)
                  if n != 1]
        if not mapped or math.prod(src) == 1:
            return "scalar"
        if not self._keeps_last() or mapped != sorted(mapped):
            raise NoKernel("a broadcast that is not of a scalar or in order")
        n = math.prod(src)
        if mapped == [len(out) - 1] and n == self.view.cols and out[-1] == n:
            return "column"
        if all(d < len(out) - 1 for d in mapped) and n == self.view.rows:
            return "row"
        if out != self.dims and n == self.view.rows and self._is_level(out, "row"):
            return "row"  # (to one value per row with 1s inserted, e.g. [R] -> [R,1])
        raise NoKernel("a broadcast that is not of a scalar, a row value or a column")

    def _broadcast_level(self, inst: Instruction) -> str:
        src = self.levels[inst.operands[0]]
        if src != "scalar" and self._broadcast_source_level(inst) != src:
            raise NoKernel("a broadcast whose operand level is ambiguous")
        out = inst.shape.dimensions
        if out == self.dims:
            return "full"
        if src in ("scalar", "row") and self._keeps_last() and self._is_level(out, "row") \
                and (src == "row" or out[-1] != self.view.cols):
            return "row"
        if src in ("scalar", "column") and self._keeps_last() and out[-1] == self.view.cols \
                and self._is_level(out, "column"):
            return "column"
        raise NoKernel("a broadcast to another shape than the fusion's")

    def _reduce_level(self, inst: Instruction) -> str:
        data, init = inst.operands
        if self.levels[data] != "full" or self.levels[init] != "scalar":
            raise NoKernel("a reduce that is not of a full block with a scalar init")
        self._reduce_kind(inst)
        return "row"

    def _reduce_kind(self, inst: Instruction) -> str:
        (reducer,) = inst.called_computations
        r = reducer.root
        params = [i for i in reducer.post_order() if i.opcode == "parameter"]
        if len(params) != 2 or set(r.operands) != set(params) or len(reducer) != 3:
            raise NoKernel("a reducer other than one binary op")
        _, t, signed = ELEMENT_TYPES[inst.shape.element_type]
        kind = _REDUCE_KINDS.get((r.opcode, t)) or (
            _INT_REDUCE.get((r.opcode, signed)) if t == "i32" else None)
        if kind is None:
            raise NoKernel(f"a {r.opcode} reduction of {t}")
        return kind

    def _windows(self) -> list[Window]:
        out = []
        v = self.view
        dims = {"full": (v.rows, v.cols), "row": (v.rows, 1), "column": (1, v.cols),
                "scalar": (1, 1)}
        params = sorted((i for i in self.comp.post_order() if i.opcode == "parameter"),
                        key=lambda p: p.attrs["parameter_number"])
        for p in params:
            level = self.levels[p]
            out.append(Window(p.attrs["parameter_number"], level, dims[level], (0, 0),
                              p.shape.element_type))
        level = self.levels[self.root]
        if self.root.shape.element_type == "pred":
            raise NoKernel("a bool result (no i1 memory)")
        out.append(Window(-1, level, dims[level], (0, 0), self.root.shape.element_type))
        return out

    # -- the text ---------------------------------------------------------------------

    def _text(self) -> str:
        b, w = self.blocks, Writer()
        two_d = len(b.grid) == 2
        grid_args = ["%i", "%j"][:len(b.grid)]
        refs = [f"%ref{k}" for k in range(len(self.windows))]
        mem = [self._memref(win) for win in self.windows]
        args = [f"{g}: i32" for g in grid_args] + [f"{r}: {m}" for r, m in zip(refs, mem,
                                                                               strict=True)]
        values: dict[Instruction, Any] = {}
        c0 = w.index(0)
        params = {win.operand: (ref, win) for ref, win in zip(refs, self.windows, strict=True)
                  if win.operand >= 0}
        for inst in self.comp.post_order():
            values[inst] = self._emit(w, inst, values, params, c0)
        out_ref, out_win = refs[-1], self.windows[-1]
        out = values[self.root]
        _, mem_t, _ = _types(out_win.element_type)
        if mem_t != out.t:
            out = w.cast("arith.truncf", out, mem_t, True)
        w.line(f"vector.store {out.name}, {out_ref}[{c0}, {c0}] : {mem[-1]}, {out.type}")
        w.line("return")
        semantics = ", ".join(["#tpu.dimension_semantics<parallel>"] * len(b.grid))
        bounds = ", ".join(map(str, b.grid))
        wparams = ", ".join(
            f"{{transform_indices = @{self.name}_window_{k}, window_bounds = "
            f"array<i64: {win.block[0]}, {win.block[1]}>}}"
            for k, win in enumerate(self.windows))
        head = (f"  func.func @{self.name}({', '.join(args)}) attributes {{"
                f"dimension_semantics = [{semantics}], iteration_bounds = array<i64: {bounds}>,"
                f" scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, "
                f"tpu.core_type = #tpu.core_type<tc>, window_params = [{wparams}]}} {{")
        lines = ["module {", head, *w.lines, "  }"]
        for k, win in enumerate(self.windows):
            lines += self._index_map(k, win, grid_args, two_d)
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _index_map(self, k: int, win: Window, grid_args: list[str], two_d: bool) -> list[str]:
        sig = ", ".join(f"{g}: i32" for g in grid_args)
        i = "%i"
        j = "%j" if two_d else "%zero"
        block = {"full": (i, j), "row": (i, "%zero"), "column": ("%zero", j),
                 "scalar": ("%zero", "%zero")}[win.level]
        return [f"  func.func @{self.name}_window_{k}({sig}) -> (i32, i32) {{",
                "    %zero = arith.constant 0 : i32",
                f"    return {block[0]}, {block[1]} : i32, i32",
                "  }"]

    def _memref(self, win: Window) -> str:
        _, mem_t, _ = _types(win.element_type)
        space = "smem" if win.level == "scalar" else "vmem"
        return f"memref<{win.block[0]}x{win.block[1]}x{mem_t}, #tpu.memory_space<{space}>>"

    def _shape(self, level: str) -> tuple[int, int]:
        b = self.blocks
        return {"full": (b.rows, b.cols), "row": (b.rows, 1), "column": (1, b.cols)}[level]

    def _emit(self, w: Writer, inst: Instruction, values: dict[Instruction, Any],
              params: dict[int, tuple[str, Window]], c0: str) -> Any:
        op, level = inst.opcode, self.levels[inst]
        et = inst.shape.element_type
        t, mem_t, signed = _types(et)
        if op == "parameter":
            ref, win = params[inst.attrs["parameter_number"]]
            memref = self._memref(win)
            if level == "scalar":  # (a scalar: an SSA scalar, broadcast where used)
                return (w.op(f"memref.load {ref}[{c0}, {c0}] : {memref}"), t, signed)
            shape = self._shape(level)
            v = Vec(w.op(f"vector.load {ref}[{c0}, {c0}] : {memref}, "
                         f"{vector_type(shape, mem_t)}"), mem_t, shape, signed)
            return w.cast("arith.extf", v, t, signed) if mem_t != t else v
        if op == "constant":
            return ("const", inst.attrs["value"], t, signed)
        if op == "broadcast":
            src = values[inst.operands[0]]
            shape = self._shape(level)
            if isinstance(src, tuple):
                return self._scalar_vector(w, src, shape)
            return w.broadcast(src, shape)
        if op == "reshape" or op == "copy":
            return values[inst.operands[0]]
        if op == "reduce":
            data, init = (values[o] for o in inst.operands)
            kind = self._reduce_kind(inst)
            acc = self._scalar_vector(w, init, (self.blocks.rows,))
            red = w.op(f"vector.multi_reduction <{kind}>, {data.name}, {acc.name} [1] : "
                       f"{data.type} to {acc.type}")
            shape = (self.blocks.rows, 1)
            return Vec(w.op(f"vector.shape_cast {red} : {acc.type} to "
                            f"{vector_type(shape, t)}"), t, shape, signed)
        args = [values[o] for o in inst.operands]
        in_type = inst.operands[0].shape.element_type if inst.operands else ""
        out = lower(w, op, args, inst.attrs, et, in_type)
        if out is None:
            raise NoKernel(f"no Mosaic lowering of {op} ({et})")
        return out

    def _scalar_vector(self, w: Writer, src: tuple, shape: tuple[int, ...]) -> Vec:
        if src[0] == "const":
            _, value, t, signed = src
            return w.splat(value.item() if hasattr(value, "item") else value, t, shape,
                           signed)
        name, t, signed = src
        return w.scalar_to_vector(name, t, shape, signed)


def _itemsize(element_type: str) -> int:
    """Bytes per element in memory (i1 values never reach memory)."""
    return {"f32": 4, "bf16": 2, "s32": 4, "u32": 4, "pred": 1}[element_type]


def _types(element_type: str) -> tuple[str, str, bool]:
    """(compute type, memory type, signed) of an HLO element type."""
    mem_t, t, signed = ELEMENT_TYPES[element_type]
    return t, mem_t, signed
