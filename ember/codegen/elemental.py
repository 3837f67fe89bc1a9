"""Element generators: the value of any fusible instruction at one index, as scalar IR.

Input: a graph (a fused computation, or one entry instruction whose operands are buffers),
a map from boundary instructions to buffers, an Index. Output: the element's value in
registers. Generators compose: an operand's value is requested at the index this opcode
maps to (broadcast drops dims, transpose permutes, slice scales and shifts, pad/concatenate
select between clamped reads (a concatenate of many operands branches to the one it
reads), gather and dynamic-slice add clamped start indices read from
their index operands), so a whole fusion becomes one loop body with no temporaries.
An index may carry static ranges (a region of a loop nest split by regions.py): pad,
concatenate and constant-start dynamic slices then decide at compile time what they would
select per element, and read only the operand the region covers.
Invariants: every read is in bounds (indices are clamped before a select picks the real
value; an index's static ranges hold for every value it takes); values are cached per
(instruction, index object), so a diamond computes once.
"""

from __future__ import annotations

from collections.abc import Callable

import llvmlite.ir as ir
import numpy as np

from ember.codegen import convert as conv
from ember.codegen import regions
from ember.codegen.index import Index
from ember.codegen.irtypes import I64, const, i64, is_complex, mem_type, reg_type
from ember.codegen.scalar_ops import MathEmitter, emit_elementwise
from ember.hlo.ir import Computation, Instruction
from ember.hlo.opcodes import OPCODES
from ember.hlo.shape import Shape, bit_width


class Buf:
    """A buffer argument of a kernel: its pointer and the array shape it holds. (A plain
    class: `@dataclass` costs ~0.4 ms at import, on every process's first compile.)"""

    __slots__ = ("ptr", "shape")

    def __init__(self, ptr: ir.Value, shape: Shape) -> None:
        self.ptr = ptr
        self.shape = shape

    def __repr__(self) -> str:
        return f"Buf(ptr={self.ptr!r}, shape={self.shape!r})"


def physical(b: ir.IRBuilder, buf: Buf, linear: ir.Value) -> ir.Value:
    """Memory offset of logical (row-major numbered) element `linear` of `buf`: itself,
    unless layout assignment laid the buffer out otherwise; then the multi-index is
    recovered (div/mod) and weighted by the layout's strides. Kernels that know the
    multi-index use `load_at`/`store_at`, which skip the division."""
    if buf.shape.is_row_major:
        return linear
    return Index(b, buf.shape.dimensions, linear=linear).offset(buf.shape.layout)


def _load_raw(b: ir.IRBuilder, buf: Buf, offset: ir.Value) -> ir.Value:
    et = buf.shape.element_type
    mty = mem_type(et)
    p = b.gep(buf.ptr, [offset], inbounds=True, source_etype=mty)
    if is_complex(et):  # part by part: plain float loads, which vectorize as strided ones
        part = mty.elements[0]
        re = b.load(_part_ptr(b, p, mty, 0), typ=part)
        im = b.load(_part_ptr(b, p, mty, 1), typ=part)
        z = b.insert_value(ir.Constant(mty, ir.Undefined), re, 0)
        return b.insert_value(z, im, 1)
    v = b.load(p, typ=mty)
    if et == "pred":
        return b.icmp_unsigned("!=", v, ir.Constant(mty, 0))
    return v


def _store_raw(b: ir.IRBuilder, buf: Buf, offset: ir.Value, value: ir.Value) -> None:
    et = buf.shape.element_type
    mty = mem_type(et)
    if et == "pred":
        value = b.zext(value, mty)
    p = b.gep(buf.ptr, [offset], inbounds=True, source_etype=mty)
    if is_complex(et):
        b.store(b.extract_value(value, 0), _part_ptr(b, p, mty, 0))
        b.store(b.extract_value(value, 1), _part_ptr(b, p, mty, 1))
        return
    b.store(value, p)


def _part_ptr(b: ir.IRBuilder, p: ir.Value, mty: ir.Type, k: int) -> ir.Value:
    """The address of part k (0: real, 1: imaginary) of the complex element at `p`."""
    return b.gep(p, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(32), k)],
                 inbounds=True, source_etype=mty)


def load(b: ir.IRBuilder, buf: Buf, linear: ir.Value) -> ir.Value:
    """Element number `linear` (logical, row-major numbering) of `buf`."""
    return _load_raw(b, buf, physical(b, buf, linear))


def store(b: ir.IRBuilder, buf: Buf, linear: ir.Value, value: ir.Value) -> None:
    _store_raw(b, buf, physical(b, buf, linear), value)


def load_at(b: ir.IRBuilder, buf: Buf, idx: Index) -> ir.Value:
    """The element of `buf` at `idx`, addressed through the buffer's layout."""
    return _load_raw(b, buf, _offset(b, buf, idx))


def store_at(b: ir.IRBuilder, buf: Buf, idx: Index, value: ir.Value) -> None:
    _store_raw(b, buf, _offset(b, buf, idx), value)


def _offset(b: ir.IRBuilder, buf: Buf, idx: Index) -> ir.Value:
    if buf.shape.is_row_major or idx.dims != buf.shape.dimensions:
        return physical(b, buf, idx.linear)  # an index over another shape of equal size
    return idx.offset(buf.shape.layout)


def index_to_i64(b: ir.IRBuilder, v: ir.Value, et: str) -> ir.Value:
    """An index element as i64, as the evaluator's `astype(np.int64)` reads it: narrower
    unsigned types (and pred) zero-extend, signed ones sign-extend; 64-bit values as is."""
    if v.type.width >= 64:
        return v
    if et.startswith("u") or et == "pred":
        return b.zext(v, I64)
    return b.sext(v, I64)


# Concatenates of this many operands or more branch to the one operand an element reads.
BRANCHING_CONCAT = 8


def _clamp_index(b: ir.IRBuilder, i: ir.Value, lo: int, hi: int) -> ir.Value:
    """max(lo, min(i, hi)) on signed i64."""
    i = b.select(b.icmp_signed(">", i, i64(hi)), i64(hi), i)
    return b.select(b.icmp_signed("<", i, i64(lo)), i64(lo), i)


class ElementGenerator:
    """Generates element values of one kernel's graph inside one loop body.

    `math`: the backend's float math (a class attribute a backend's subclass sets, or an
    argument); without it a transcendental opcode raises NotImplementedError."""

    math: MathEmitter | None = None

    def __init__(self, b: ir.IRBuilder, inputs: dict[Instruction, Buf], precise: bool,
                 scalar_computation: Callable[[Computation, list[ir.Value]], list[ir.Value]]
                 | None = None, math: MathEmitter | None = None) -> None:
        if math is not None:
            self.math = math
        self.b = b
        self.inputs = inputs
        self.precise = precise
        self.flags: list[ir.Value] = []  # i1 "rerun precisely" flags (fast sin/cos)
        self._cache: dict[tuple[int, int], ir.Value] = {}
        self._keep: list[Index] = []  # keep index objects alive: the cache keys on id()
        self.scalar_computation = scalar_computation or self.apply_scalar

    def value(self, inst: Instruction, idx: Index) -> ir.Value:
        key = (id(inst), id(idx))
        v = self._cache.get(key)
        if v is None:
            self._generate_operands_first(inst, idx)
            v = self._generate(inst, idx)
            self._cache[key] = v
            self._keep.append(idx)
        return v

    def provides(self, inst: Instruction) -> bool:
        """Whether `value()` answers `inst` without generating it (a subclass's own values,
        e.g. a row kernel's registers and scratch rows): the bottom-up pass below must not
        generate anything under such a value."""
        return False

    def _same_index_operands(self, inst: Instruction) -> list[Instruction]:
        """The operands a plain elementwise `inst` reads at its own index (none for any
        other instruction: its handler picks its operands' indices), less those a subclass
        provides."""
        op = inst.opcode
        if inst in self.inputs or op == "constant" or not OPCODES[op].elementwise or hasattr(
                self, "_" + op.replace("-", "_")):
            return []
        return [o for o in inst.operands
                if not (o.shape.rank == 0 and inst.shape.rank != 0) and not self.provides(o)]

    def _generate_operands_first(self, inst: Instruction, idx: Index) -> None:
        """Generate the elementwise operand graph under `inst` bottom-up with an explicit
        stack (a depth-first post-order), so a chain thousands of ops deep (a hash's rounds,
        a loop body of several hashes) never recurses more than a level or two: each value
        finds its operands already in the cache."""
        if not self._same_index_operands(inst):
            return
        done = {id(inst)}
        stack: list[tuple[Instruction, bool]] = [
            (o, False) for o in self._same_index_operands(inst)]
        while stack:
            node, expanded = stack.pop()
            key = (id(node), id(idx))
            if id(node) in done or key in self._cache:
                continue
            if expanded:  # every operand is generated: generate the node
                done.add(id(node))
                self._cache[key] = self._generate(node, idx)
                self._keep.append(idx)
                continue
            stack.append((node, True))
            stack.extend((o, False) for o in self._same_index_operands(node)
                         if id(o) not in done and (id(o), id(idx)) not in self._cache)

    # -- dispatch ------------------------------------------------------------------------------

    def _generate(self, inst: Instruction, idx: Index) -> ir.Value:
        b = self.b
        buf = self.inputs.get(inst)
        if buf is not None:
            if buf.shape.rank == 0 or buf.shape.size == 1:
                return load(b, buf, i64(0))
            return load_at(b, buf, idx)
        op = inst.opcode
        if op == "constant":
            if inst.shape.size != 1:
                raise NotImplementedError("array constant without a buffer")
            return const(inst.shape.element_type, np.asarray(inst.value).reshape(-1)[0])
        handler = getattr(self, "_" + op.replace("-", "_"), None)
        if handler is not None:
            return handler(inst, idx)
        if OPCODES[op].elementwise:
            return self._elementwise(inst, idx)
        raise NotImplementedError(f"no element generator for {op}")

    def _operand(self, inst: Instruction, k: int, idx: Index) -> ir.Value:
        """Operand k at the same index (scalars broadcast, as select/clamp allow)."""
        o = inst.operands[k]
        if o.shape.rank == 0 and inst.shape.rank != 0:
            return self.value(o, Index.scalar(self.b))
        return self.value(o, idx)

    def _elementwise(self, inst: Instruction, idx: Index) -> ir.Value:
        args = [self._operand(inst, k, idx) for k in range(len(inst.operands))]
        types = [o.shape.element_type for o in inst.operands]
        v, flag = emit_elementwise(self.b, inst.opcode, types, inst.shape.element_type, args,
                                   inst.attrs, self.precise, self.math)
        if flag is not None:
            self.flags.append(flag)
        return v

    def _map(self, inst: Instruction, idx: Index) -> ir.Value:
        args = [self._operand(inst, k, idx) for k in range(len(inst.operands))]
        return self.scalar_computation(inst.to_apply, args)[0]

    def apply_scalar(self, comp: Computation, args: list[ir.Value]) -> list[ir.Value]:
        """Emit a scalar computation (reduce/map to_apply) on register values."""
        sub = ElementGenerator(self.b, {}, self.precise, self.scalar_computation, self.math)
        scalar = Index.scalar(self.b)
        for p in comp.parameters:
            sub._cache[(id(p), id(scalar))] = args[p.parameter_number]
        sub._keep.append(scalar)
        root = comp.root
        outs = root.operands if root.opcode == "tuple" else [root]
        vals = [sub.value(o, scalar) for o in outs]
        self.flags.extend(sub.flags)
        return vals

    # -- index remapping ops ---------------------------------------------------------------

    def _iota(self, inst: Instruction, idx: Index) -> ir.Value:
        i = idx.multi[inst.attrs["iota_dimension"]]
        et = inst.shape.element_type
        ty = reg_type(et)
        if et in ("f16", "f32", "f64"):
            return self.b.uitofp(i, ty)
        if et == "pred":
            return self.b.icmp_unsigned("!=", i, i64(0))
        return self.b.trunc(i, ty) if ty.width < 64 else i

    def _broadcast(self, inst: Instruction, idx: Index) -> ir.Value:
        o = inst.operand
        dims = inst.attrs["dimensions"]
        if o.shape.rank == 0:
            return self.value(o, Index.scalar(self.b))
        multi = [idx.multi[d] for d in dims]
        ranges = [idx.ranges[d] for d in dims]
        return self.value(o, Index(self.b, o.shape.dimensions, multi=multi, ranges=ranges))

    def _reshape(self, inst: Instruction, idx: Index) -> ir.Value:
        o = inst.operand
        where = regions.unit_reshape(inst.shape.dimensions, o.shape.dimensions)
        if where is not None and idx.has_multi:  # only 1s inserted or dropped
            multi = [i64(0) if d is None else idx.multi[d] for d in where]
            ranges = [(0, 1) if d is None else idx.ranges[d] for d in where]
            return self.value(o, Index(self.b, o.shape.dimensions, multi=multi, ranges=ranges))
        return self.value(o, Index(self.b, o.shape.dimensions, linear=idx.linear))

    def _copy(self, inst: Instruction, idx: Index) -> ir.Value:
        return self.value(inst.operand, idx)

    def _bitcast_convert(self, inst: Instruction, idx: Index) -> ir.Value:
        """bitcast-convert; changing the element width by a factor k adds (narrowing) or
        drops (widening) a minor dimension of size k, in little-endian order: piece j of
        a wide element holds its bits [j*w, (j+1)*w), w the narrow width. Row-major, so
        narrowing reads wide element lin // k, piece lin % k; widening ors the k narrow
        elements lin*k + j, each shifted left by j*w."""
        b = self.b
        x = inst.operand
        if x.shape.dimensions == inst.shape.dimensions:
            return self._elementwise(inst, idx)
        src, dst = x.shape.element_type, inst.shape.element_type
        sw, dw = bit_width(src), bit_width(dst)
        xdims = x.shape.dimensions
        if sw > dw:
            k = sw // dw
            lin = idx.linear
            wide = self.value(x, Index(b, xdims, linear=b.udiv(lin, i64(k))))
            bits = conv.to_bits(b, src, wide)
            shift = b.mul(b.trunc(b.urem(lin, i64(k)), bits.type) if sw < 64
                          else b.urem(lin, i64(k)), ir.Constant(bits.type, dw))
            return conv.from_bits(b, dst, b.trunc(b.lshr(bits, shift), ir.IntType(dw)))
        k = dw // sw
        wty = ir.IntType(dw)
        base = b.mul(idx.linear, i64(k))
        acc: ir.Value = ir.Constant(wty, 0)
        for j in range(k):
            lin = b.add(base, i64(j)) if j else base
            narrow = conv.to_bits(b, src, self.value(x, Index(b, xdims, linear=lin)))
            part = b.zext(narrow, wty)
            acc = b.or_(acc, b.shl(part, ir.Constant(wty, j * sw)) if j else part)
        return conv.from_bits(b, dst, acc)

    def _transpose(self, inst: Instruction, idx: Index) -> ir.Value:
        o = inst.operand
        perm = inst.attrs["dimensions"]
        multi: list[ir.Value] = [i64(0)] * len(perm)
        ranges: list[tuple[int, int]] = [(0, 0)] * len(perm)
        for i, p in enumerate(perm):
            multi[p] = idx.multi[i]
            ranges[p] = idx.ranges[i]
        return self.value(o, Index(self.b, o.shape.dimensions, multi=multi, ranges=ranges))

    def _reverse(self, inst: Instruction, idx: Index) -> ir.Value:
        o = inst.operand
        dims = set(inst.attrs["dimensions"])
        multi = [self.b.sub(i64(n - 1), i) if d in dims else i
                 for d, (i, n) in enumerate(zip(idx.multi, o.shape.dimensions))]
        ranges = [(n - r[1], n - r[0]) if d in dims else r
                  for d, (r, n) in enumerate(zip(idx.ranges, o.shape.dimensions))]
        return self.value(o, Index(self.b, o.shape.dimensions, multi=multi, ranges=ranges))

    def _slice(self, inst: Instruction, idx: Index) -> ir.Value:
        o = inst.operand
        multi, ranges = [], []
        for i, r, (start, _limit, stride) in zip(idx.multi, idx.ranges, inst.attrs["slice"]):
            j = self.b.mul(i, i64(stride)) if stride != 1 else i
            multi.append(self.b.add(j, i64(start)) if start else j)
            ranges.append((r[0] * stride + start, (r[1] - 1) * stride + start + 1))
        return self.value(o, Index(self.b, o.shape.dimensions, multi=multi, ranges=ranges))

    def _pad(self, inst: Instruction, idx: Index) -> ir.Value:
        """The operand's element or the pad value. Along each dimension, the index's static
        range (`Index.ranges`) may show it all inside the operand (no test, no clamp) or
        all padding (then the pad value, and no read at all); only mixed dimensions test
        and clamp per element."""
        b = self.b
        o, padv = inst.operands
        if o.shape.size == 0:
            return self.value(padv, Index.scalar(b))
        where = [regions.pad_dim(r, lo, interior, n) for r, n, (lo, _hi, interior)
                 in zip(idx.ranges, o.shape.dimensions, inst.attrs["padding"])]
        if any(w == regions.OUT for w, _ in where):
            return self.value(padv, Index.scalar(b))
        inside: ir.Value | None = None
        multi = []
        for i, n, (lo, _hi, interior), (w, rng) in zip(idx.multi, o.shape.dimensions,
                                                       inst.attrs["padding"], where):
            t = b.sub(i, i64(lo)) if lo else i
            step = interior + 1
            if w == regions.IN:  # every index reads the operand: t is a multiple of step
                multi.append(b.sdiv(t, i64(step)) if step != 1 else t)
                continue
            if step != 1:
                # t must be >= 0 and a multiple of step; srem of a negative t is <= 0
                ok = b.icmp_signed(">=", t, i64(0))
                ok = b.and_(ok, b.icmp_signed("==", b.srem(t, i64(step)), i64(0)))
                t = b.sdiv(t, i64(step))
            else:
                ok = b.icmp_signed(">=", t, i64(0))
            ok = b.and_(ok, b.icmp_signed("<", t, i64(n)))
            inside = ok if inside is None else b.and_(inside, ok)
            multi.append(_clamp_index(b, t, rng[0], rng[1] - 1))
        ranges = [rng for _, rng in where]
        v = self.value(o, Index(b, o.shape.dimensions, multi=multi, ranges=ranges))
        if inside is None:
            return v
        return b.select(inside, v, self.value(padv, Index.scalar(b)))

    def _concatenate(self, inst: Instruction, idx: Index) -> ir.Value:
        """The element of the operand that holds output index i along the dimension: of
        the operands i's static range reaches (one, inside a region of a split loop nest:
        a plain read), a select chain, or a branch for many."""
        b = self.b
        dim = inst.attrs["dimension"]
        pieces: list[tuple[Instruction, int, tuple[int, int]]] = []  # (operand, offset, range)
        offset = 0
        for o in inst.operands:
            n = o.shape.dimensions[dim]
            rng = regions.piece_range(idx.ranges[dim], offset, n)
            if rng is not None:
                pieces.append((o, offset, rng))
            offset += n
        if len(pieces) >= BRANCHING_CONCAT:
            return self._concatenate_branching(pieces, dim, idx)
        i = idx.multi[dim]
        result: ir.Value | None = None
        for o, offset, rng in pieces:
            local = b.sub(i, i64(offset)) if offset else i
            multi = list(idx.multi)
            ranges = list(idx.ranges)
            multi[dim] = local if len(pieces) == 1 else _clamp_index(b, local, rng[0],
                                                                       rng[1] - 1)
            ranges[dim] = rng
            v = self.value(o, Index(b, o.shape.dimensions, multi=multi, ranges=ranges))
            if result is None:
                result = v
            else:
                result = b.select(b.icmp_signed(">=", i, i64(offset)), v, result)
        assert result is not None
        return result

    def _concatenate_branching(self, pieces: list[tuple[Instruction, int, tuple[int, int]]],
                               dim: int, idx: Index) -> ir.Value:
        """Many operands (im2col's taps): a switch on the operand that holds element i
        computes that one operand only (a select chain would compute every operand for
        every element). Values cached inside a case stay there (they do not dominate the
        merge block), so each case's cache entries are dropped after it. `pieces`: the
        operands i's range reaches (consecutive ones), with their offsets and ranges."""
        b = self.b
        i = idx.multi[dim]
        first = pieces[0][1]
        sizes = {o.shape.dimensions[dim] for o, _, _ in pieces}
        if len(sizes) == 1:  # equal pieces (im2col): one division
            which = b.sdiv(b.sub(i, i64(first)) if first else i, i64(sizes.pop()))
        else:
            which = i64(0)
            for _, off, _ in pieces[1:]:  # the number of operand starts at or below i
                which = b.add(which, b.zext(b.icmp_signed(">=", i, i64(off)), I64))
        merge = b.append_basic_block("concat.merge")
        blocks = [b.append_basic_block(f"concat.{k}") for k in range(len(pieces))]
        sw = b.switch(which, blocks[-1])
        incoming = []
        for k, ((o, off, rng), blk) in enumerate(zip(pieces, blocks)):
            if k < len(pieces) - 1:
                sw.add_case(i64(k), blk)
            b.position_at_end(blk)
            before = set(self._cache)
            multi = list(idx.multi)
            ranges = list(idx.ranges)
            multi[dim] = b.sub(i, i64(off))
            ranges[dim] = rng
            v = self.value(o, Index(b, o.shape.dimensions, multi=multi, ranges=ranges))
            for key in set(self._cache) - before:
                del self._cache[key]
            incoming.append((v, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(incoming[0][0].type)
        for v, blk in incoming:
            phi.add_incoming(v, blk)
        return phi

    def clamped_starts(self, inst: Instruction, first: int, limits: list[int]
                       ) -> list[ir.Value]:
        """Dynamic start indices, clamped into [0, limit] as XLA does."""
        b = self.b
        out = []
        for k, lim in enumerate(limits):
            s = self.value(inst.operands[first + k], Index.scalar(b))
            s = index_to_i64(b, s, inst.operands[first + k].shape.element_type)
            out.append(_clamp_index(b, s, 0, max(lim, 0)))
        return out

    def _dynamic_slice(self, inst: Instruction, idx: Index) -> ir.Value:
        o = inst.operands[0]
        sizes = inst.attrs["dynamic_slice_sizes"]
        limits = [n - s for n, s in zip(o.shape.dimensions, sizes)]
        known = regions.static_starts(inst, 1, limits)
        if known is not None:  # constant starts: a slice, whose ranges are known
            multi = [self.b.add(i, i64(s)) if s else i for i, s in zip(idx.multi, known)]
            ranges = [(r[0] + s, r[1] + s) for r, s in zip(idx.ranges, known)]
            return self.value(o, Index(self.b, o.shape.dimensions, multi=multi, ranges=ranges))
        starts = self.clamped_starts(inst, 1, limits)
        multi = [self.b.add(i, s) for i, s in zip(idx.multi, starts)]
        return self.value(o, Index(self.b, o.shape.dimensions, multi=multi))

    def _dynamic_update_slice(self, inst: Instruction, idx: Index) -> ir.Value:
        """The update's element inside the window at the (clamped) starts, the operand's
        elsewhere. With constant starts, the index's static ranges may show it all inside
        the window (only the update is read) or all outside (only the operand)."""
        b = self.b
        o, upd = inst.operands[0], inst.operands[1]
        if upd.shape.size == 0:
            return self.value(o, idx)
        udims = upd.shape.dimensions
        limits = [n - u for n, u in zip(o.shape.dimensions, udims)]
        known = regions.static_starts(inst, 2, limits)
        if known is not None:
            where = [regions.piece_range(r, s, n) for r, s, n in zip(idx.ranges, known, udims)]
            if any(w is None for w in where):
                return self.value(o, idx)
            if all(w == (r[0] - s, r[1] - s) for w, r, s in zip(where, idx.ranges, known)):
                multi = [b.sub(i, i64(s)) if s else i for i, s in zip(idx.multi, known)]
                return self.value(upd, Index(b, udims, multi=multi, ranges=where))
        base = self.value(o, idx)
        starts = (self.clamped_starts(inst, 2, limits) if known is None
                  else [i64(s) for s in known])
        inside: ir.Value = ir.Constant(ir.IntType(1), 1)
        multi = []
        for i, s, n in zip(idx.multi, starts, udims):
            t = b.sub(i, s)
            ok = b.and_(b.icmp_signed(">=", t, i64(0)), b.icmp_signed("<", t, i64(n)))
            inside = b.and_(inside, ok)
            multi.append(_clamp_index(b, t, 0, n - 1))
        v = self.value(upd, Index(b, udims, multi=multi))
        return b.select(inside, v, base)

    def _gather(self, inst: Instruction, idx: Index) -> ir.Value:
        """XLA gather at one output index: the output's batch dims (those not in
        offset_dims) pick an index vector; component k is the start along operand dim
        start_index_map[k], clamped into [0, dim - slice_size] so the window fits (as the
        evaluator does); offset dims give the position inside the window of the operand
        dims not collapsed, in order. operand[start + offset] is read: always in bounds."""
        b = self.b
        operand, indices = inst.operands
        a = inst.attrs
        odims = operand.shape.dimensions
        sizes = a["slice_sizes"]
        offset_dims = list(a["offset_dims"])
        collapsed = set(a["collapsed_slice_dims"])
        ivd = a["index_vector_dim"]
        batch = [idx.multi[p] for p in range(inst.shape.rank) if p not in offset_dims]
        window = [d for d in range(len(odims)) if d not in collapsed]
        multi: list[ir.Value] = [i64(0)] * len(odims)
        for d, p in zip(window, offset_dims):
            multi[d] = idx.multi[p]
        ivec = indices.shape.dimensions
        ity = indices.shape.element_type
        for k, d in enumerate(a["start_index_map"]):
            at = batch if ivd == len(ivec) else [*batch[:ivd], i64(k), *batch[ivd:]]
            s = index_to_i64(b, self.value(indices, Index(b, ivec, multi=at)), ity)
            s = _clamp_index(b, s, 0, max(odims[d] - sizes[d], 0))
            multi[d] = b.add(s, multi[d])
        return self.value(operand, Index(b, odims, multi=multi))
