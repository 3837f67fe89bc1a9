"""Rewrites of reshape, transpose, broadcast, slice, convert (see the package docstring)."""

from __future__ import annotations

from ember.hlo.ir import Instruction
from ember.passes.algsimp.rewrite import rewrite
from ember.passes.algsimp.util import add


@rewrite("reshape")
def reshape_reshape(inst: Instruction) -> Instruction | None:
    """reshape(reshape(A)) => reshape(A)"""
    a = inst.operand
    if a.opcode != "reshape":
        return None
    return add(inst, "reshape", [a.operand], shape=inst.shape)


@rewrite("reshape")
def reshape_noop(inst: Instruction) -> Instruction | None:
    """reshape(A) => A when the shape does not change"""
    a = inst.operand
    return a if a.shape.dimensions == inst.shape.dimensions else None


@rewrite("transpose")
def transpose_identity(inst: Instruction) -> Instruction | None:
    """transpose(A, identity) => A"""
    perm = tuple(inst.attrs["dimensions"])
    return inst.operand if perm == tuple(range(len(perm))) else None


@rewrite("transpose")
def transpose_transpose(inst: Instruction) -> Instruction | None:
    """transpose(transpose(A, p), q) => transpose(A, p o q)"""
    a = inst.operand
    if a.opcode != "transpose":
        return None
    p, q = a.attrs["dimensions"], inst.attrs["dimensions"]
    # result dim i = a dim q[i] = A dim p[q[i]]
    return add(inst, "transpose", [a.operand], {"dimensions": tuple(p[i] for i in q)})


@rewrite("transpose")
def transpose_of_broadcast(inst: Instruction) -> Instruction | None:
    """transpose(broadcast(A, d), q) => broadcast(A, d') when A's dims stay in order"""
    # vmap writes a per-row value's broadcast as broadcast-then-transpose (the batch axis
    # moved to the front after the fact); as one broadcast a row fusion reads it per row
    a = inst.operand
    if a.opcode != "broadcast":
        return None
    q = tuple(inst.attrs["dimensions"])
    # result dim i is broadcast dim q[i]; A dim j sits at broadcast dim d[j], so at
    # result dim q.index(d[j])
    dims = tuple(q.index(d) for d in a.attrs["dimensions"])
    if any(x >= y for x, y in zip(dims, dims[1:])):
        return None  # (A itself would need a transpose)
    return add(inst, "broadcast", [a.operand], {"dimensions": dims}, inst.shape)


@rewrite("broadcast")
def broadcast_broadcast(inst: Instruction) -> Instruction | None:
    """broadcast(broadcast(A, d1), d2) => broadcast(A, d2 o d1)"""
    a = inst.operand
    if a.opcode != "broadcast":
        return None
    d1, d2 = a.attrs["dimensions"], inst.attrs["dimensions"]
    # A dim i -> a dim d1[i] -> result dim d2[d1[i]]
    return add(inst, "broadcast", [a.operand], {"dimensions": tuple(d2[d] for d in d1)},
               inst.shape)


@rewrite("broadcast")
def broadcast_noop(inst: Instruction) -> Instruction | None:
    """broadcast(A) => A when it adds nothing and keeps dimension order"""
    a = inst.operand
    dims = tuple(inst.attrs["dimensions"])
    if a.shape.dimensions == inst.shape.dimensions and dims == tuple(range(len(dims))):
        return a
    return None


@rewrite("slice")
def slice_full(inst: Instruction) -> Instruction | None:
    """slice(A, [0:n:1]...) => A"""
    a = inst.operand
    spec = inst.attrs["slice"]
    if all(s == (0, d, 1) for s, d in zip(spec, a.shape.dimensions)):
        return a
    return None


@rewrite("slice")
def slice_slice(inst: Instruction) -> Instruction | None:
    """slice(slice(A)) => slice(A)"""
    a = inst.operand
    if a.opcode != "slice":
        return None
    spec = []
    for (s1, _l1, t1), (s2, _l2, t2), n in zip(a.attrs["slice"], inst.attrs["slice"],
                                             inst.shape.dimensions):
        # element k of the outer slice is element s2 + k*t2 of the inner slice, which is
        # element s1 + (s2 + k*t2)*t1 of A
        start = s1 + s2 * t1
        stride = t1 * t2
        limit = start + (n - 1) * stride + 1 if n else start
        spec.append((start, limit, stride))
    return add(inst, "slice", [a.operand], {"slice": tuple(spec)})


@rewrite("pad")
def pad_noop(inst: Instruction) -> Instruction | None:
    """pad(A, v) => A when no edge or interior padding is added"""
    # (the transpose of a slice that keeps everything: each element would otherwise pass a
    # bounds test and a select in every fusion that reads it)
    a = inst.operands[0]
    if all(tuple(p) == (0, 0, 0) for p in inst.attrs["padding"]):
        return a
    return None


@rewrite("convert")
def convert_same_type(inst: Instruction) -> Instruction | None:
    """convert(A) => A when the element type does not change"""
    a = inst.operand
    return a if a.shape.element_type == inst.shape.element_type else None


_DOT_DIMS = ("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
             "rhs_contracting_dims")


@rewrite("transpose")
def transpose_of_dot(inst: Instruction) -> Instruction | None:
    """transpose(dot(A, B)) => dot(B, A) when the transpose swaps A's free dimensions with
    B's (batch dimensions first, each group in order) and the dot has no other user"""
    # dot(A, B) is [batch..., A free..., B free...] and dot(B, A) is [batch..., B free...,
    # A free...]: element for element the same sums of the same products (x*y = y*x
    # exactly), so the transposed copy of the gradient dW = dz^T h (autodiff's transpose
    # of x @ W) becomes a product that writes W's layout directly.
    d = inst.operand
    if d.opcode != "dot" or len(d.users) != 1:
        return None
    a = d.attrs
    lhs, rhs = d.operands
    nb = len(a["lhs_batch_dims"])
    nl = lhs.shape.rank - nb - len(a["lhs_contracting_dims"])
    nr = rhs.shape.rank - nb - len(a["rhs_contracting_dims"])
    swap = (*range(nb), *range(nb + nl, nb + nl + nr), *range(nb, nb + nl))
    if nl == 0 or nr == 0 or tuple(inst.attrs["dimensions"]) != swap:
        return None  # (no free dims on a side: the transpose is the identity or not this)
    attrs = dict(a)
    attrs.update(lhs_batch_dims=a["rhs_batch_dims"], lhs_contracting_dims=a[
        "rhs_contracting_dims"], rhs_batch_dims=a["lhs_batch_dims"],
        rhs_contracting_dims=a["lhs_contracting_dims"])
    return add(inst, "dot", [rhs, lhs], attrs, inst.shape.without_layout())
