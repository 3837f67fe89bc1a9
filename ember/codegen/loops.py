"""Counted loops in llvmlite IR.

Input: a builder and static trip counts (>= 1; callers skip empty loops). Output: loops in
the canonical form LLVM's loop passes expect (one header with an i64 induction phi, one
latch), `for_nest` nests them outermost first so the last index walks contiguous memory and
is the loop the vectorizer widens. `hints` attach loop metadata to a loop's latch branch
(`!llvm.loop`, a distinct node whose first operand is itself, as LLVM requires):
  NO_UNROLL         the loop stays rolled (for a loop that is not vectorized, such as a
                    loop over rows: LLVM also reads it as "interleave once", and the loops
                    the vectorizer would make of it inherit it);
  VECTOR_NO_UNROLL  the vectorizer widens and interleaves the loop as it chooses, and the
                    loops it makes (vector body, vector epilogue, scalar remainder) stay
                    rolled: the same code per iteration, no full unrolling of a loop whose
                    trip count is a constant (LLVM's time grows with the unrolled size);
  TAIL_FOLDED       the vectorizer runs the last partial vector under a mask instead of
                    a scalar remainder loop (where the target has masked loads and stores;
                    else it keeps the remainder loop).
Hints never change what a loop computes; for a reduction with `reassoc` adds, keeping the
interleave count keeps its summation order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir

from ember.codegen.irtypes import I64, i64

NO_UNROLL: tuple = ("llvm.loop.unroll.disable",)
# the follow-up properties LLVM gives every loop the vectorizer makes of this one
VECTOR_NO_UNROLL: tuple = (("llvm.loop.vectorize.followup_all", NO_UNROLL),)
TAIL_FOLDED: tuple = (("llvm.loop.vectorize.predicate.enable", True),)


class _LoopID(ir.values.MDValue):
    """`distinct !{!self, hints...}`: llvmlite's metadata nodes are uniqued and cannot name
    themselves, which a loop ID must."""

    def descr(self, buf: list[str]) -> None:
        ops = ", ".join([self.get_reference(), *(o.get_reference() for o in self.operands)])
        buf += (f"distinct !{{ {ops} }}", "\n")

    # identity, not structure: two loops with the same hints are two loop IDs
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


# "llvm.loop.<property>", with an i1 or i32 value, or with the properties of a follow-up loop
Hint = str | tuple[str, bool | int] | tuple[str, tuple["Hint", ...]]


def _property(module: ir.Module, hint: Hint) -> ir.values.MDValue:
    name, value = (hint, None) if isinstance(hint, str) else hint
    ops: list = [ir.MetaDataString(module, name)]
    if isinstance(value, bool):
        ops.append(ir.Constant(ir.IntType(1), value))
    elif isinstance(value, int):
        ops.append(ir.Constant(ir.IntType(32), value))
    elif value is not None:
        ops += [_property(module, h) for h in value]
    return module.add_metadata(ops)


def loop_id(module: ir.Module, hints: Sequence[Hint]) -> ir.values.MDValue:
    """A fresh loop ID carrying each hint as a property node."""
    props = [_property(module, h) for h in hints]
    return _LoopID(module, props, name=str(len(module.metadata)))


def _latch(b: ir.IRBuilder, cond: ir.Value, header: ir.Block, exit_: ir.Block,
           hints: Sequence[Hint]) -> None:
    br = b.cbranch(cond, header, exit_)
    if hints:
        br.set_metadata("llvm.loop", loop_id(b.module, hints))


def for_range(b: ir.IRBuilder, n: int, body: Callable[[ir.Value], None],
              name: str = "i", hints: Sequence[Hint] = ()) -> None:
    """for (i = 0; i < n; ++i) body(i); requires n >= 1 (a do-while form)."""
    if n < 1:
        raise ValueError("empty loops are skipped by the caller")
    fn = b.function
    pre = b.block
    header = fn.append_basic_block(f"{name}.loop")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I64, name=name)
    i.add_incoming(i64(0), pre)
    body(i)
    nxt = b.add(i, i64(1), name=f"{name}.next", flags=("nuw", "nsw"))
    i.add_incoming(nxt, b.block)
    _latch(b, b.icmp_signed("<", nxt, i64(n)), header, exit_, hints)
    b.position_at_end(exit_)


def for_nest(b: ir.IRBuilder, dims: Sequence[int],
             body: Callable[[list[ir.Value]], None], name: str = "d",
             span_at: int | None = None,
             span: tuple[ir.Value, ir.Value] | None = None) -> None:
    """Nested loops over `dims` (outermost first); body gets the index list. An empty
    `dims` runs body once with []; a zero in `dims` emits nothing. With `span_at`, level
    `span_at` runs only [span[0], span[1]) of its range (one thread's share)."""
    dims = list(dims)
    if any(d == 0 for d in dims):
        return  # no iterations

    def level(k: int, idx: list[ir.Value]) -> None:
        if k == len(dims):
            body(idx)
            return
        if k == span_at and span is not None:
            for_span(b, span[0], span[1], lambda i: level(k + 1, idx + [i]), name=f"{name}{k}")
            return
        if dims[k] == 1:
            level(k + 1, idx + [i64(0)])
            return
        for_range(b, dims[k], lambda i: level(k + 1, idx + [i]), name=f"{name}{k}")

    level(0, [])


def for_regions(b: ir.IRBuilder, tree: list, order: Sequence[int],
                body: Callable[[list[ir.Value], list[tuple[int, int]]], None],
                span: tuple[ir.Value, ir.Value] | None = None, name: str = "d",
                inner_hints: Sequence[Hint] = ()) -> None:
    """Loops that follow a region tree (regions.Tree: per level, the dimension order[k]
    cut into intervals, each with the tree of the levels below): `body(walk, box)` at each
    index, `walk` the induction values (walk order), `box` the [lo, hi) of every dimension
    (dimension order) the region spans. The intervals of a level run one after the other
    inside the same loops of the levels above. An interval of one index is the constant,
    with no loop. `span`: the outermost level runs only the indices in [begin, end).
    `inner_hints`: the innermost level's loops' hints."""
    box = [(0, 0)] * len(order)

    def level(k: int, walk: list[ir.Value], tree: list) -> None:
        if k == len(order):
            body(walk, list(box))
            return
        for (lo, hi), sub in tree:
            box[order[k]] = (lo, hi)
            hints = inner_hints if k == len(order) - 1 else ()
            run = lambda i, sub=sub: level(k + 1, [*walk, i], sub)  # noqa: E731
            if k == 0 and span is not None:  # (the span lies within the whole level)
                begin = span[0] if lo == tree[0][0][0] else smax(b, span[0], i64(lo))
                end = span[1] if hi == tree[-1][0][1] else smin(b, span[1], i64(hi))
                for_span(b, begin, end, run, name=f"{name}{k}")
            elif hi - lo == 1:
                run(i64(lo))
            elif lo == 0:
                for_range(b, hi, run, name=f"{name}{k}", hints=hints)
            else:
                for_range(b, hi - lo, lambda i, run=run, lo=lo: run(
                    b.add(i, i64(lo), flags=("nuw", "nsw"))), name=f"{name}{k}", hints=hints)

    level(0, [], tree)


def for_span(b: ir.IRBuilder, begin: ir.Value, end: ir.Value,
             body: Callable[[ir.Value], None], name: str = "span",
             hints: Sequence[Hint] = (), step: int = 1) -> None:
    """for (i = begin; i < end; i += step) body(i) with runtime i64 bounds (possibly
    empty): the part of a loop one thread runs, or the blocks of a blocked loop."""
    fn = b.function
    pre = b.block
    header = fn.append_basic_block(f"{name}.loop")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.cbranch(b.icmp_signed("<", begin, end), header, exit_)
    b.position_at_end(header)
    i = b.phi(I64, name=name)
    i.add_incoming(begin, pre)
    body(i)
    nxt = b.add(i, i64(step), name=f"{name}.next", flags=("nuw", "nsw"))
    i.add_incoming(nxt, b.block)
    _latch(b, b.icmp_signed("<", nxt, end), header, exit_, hints)
    b.position_at_end(exit_)


def smin(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """The smaller of two signed integers (a block's extent clamped to a bound)."""
    return b.select(b.icmp_signed("<", x, y), x, y)


def smax(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """The larger of two signed integers."""
    return b.select(b.icmp_signed(">", x, y), x, y)
