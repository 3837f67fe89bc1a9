"""Counted loops in llvmlite IR.

Input: a builder and static trip counts (>= 1; callers skip empty loops). Output: loops in
the canonical form LLVM's loop passes expect (one header with an i64 induction phi, one
latch), `for_nest` nests them outermost first so the last index walks contiguous memory and
is the loop the vectorizer widens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import llvmlite.ir as ir

from ember.backends.cpu.irtypes import I64, i64


def for_range(b: ir.IRBuilder, n: int, body: Callable[[ir.Value], None],
              name: str = "i") -> None:
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
    b.cbranch(b.icmp_signed("<", nxt, i64(n)), header, exit_)
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


def for_span(b: ir.IRBuilder, begin: ir.Value, end: ir.Value,
             body: Callable[[ir.Value], None], name: str = "span") -> None:
    """for (i = begin; i < end; ++i) body(i) with runtime i64 bounds (possibly empty): the
    part of a loop one thread runs."""
    fn = b.function
    pre = b.block
    header = fn.append_basic_block(f"{name}.loop")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.cbranch(b.icmp_signed("<", begin, end), header, exit_)
    b.position_at_end(header)
    i = b.phi(I64, name=name)
    i.add_incoming(begin, pre)
    body(i)
    nxt = b.add(i, i64(1), name=f"{name}.next", flags=("nuw", "nsw"))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, end), header, exit_)
    b.position_at_end(exit_)
