"""Algebraic simplification: small local rewrites, grouped by opcode family.

Input: a Module. Output: the module with matching instructions replaced (dead leftovers are
removed; run DCE for the rest). Every computation is simplified: loop bodies, condition
and branch computations as much as the entry. Rewrites are exact under IEEE-754 unless
marked unsafe; unsafe ones run only with `AlgebraicSimplifier(unsafe_math=True)` (the
frontend's `ember_unsafe_math` flag).

Exact (always on):
  arithmetic.py     A * 1 => A;  A * 0 => 0 (integers);  A / 1 => A;  A + (-0.0) => A;
                    A + 0 => A (integers);  A - 0 => A;  -(-A) => A;  power(A, 2) => A * A;
                    power(A, 1) => A;  A + 0.0 => A (A a sum from +0.0: never -0.0);
                    maximum(A, -inf) => A;  minimum(A, +inf) => A
  shapes.py         reshape(reshape(A)) => reshape(A);  reshape(A) => A (same shape);
                    transpose(A, identity) => A;  transpose(transpose(A)) => transpose(A);
                    transpose(broadcast(A)) => broadcast(A) (A's dims kept in order);
                    broadcast(broadcast(A)) => broadcast(A);  broadcast(A) => A (no-op);
                    slice(A, full) => A;  slice(slice(A)) => slice(A);  convert(A) => A (same type);
                    pad(A, nothing) => A;
                    transpose(dot(A, B)) => dot(B, A) (the transpose swaps the free dims)
  odd.py            erf(-A) => -erf(A), also through -A * B, A * -B, -A / B (f(x) and f(-x)
                    then share f: the implementations are odd bit for bit)
  select_compare.py select(const P, A, B) => A or B;  select(P, A, A) => A;
                    compare(A, A) => const (integers/pred)
  reductions.py     reduce(broadcast(s), init, max|min|and|or) => broadcast(op(init, s));
                    reduce(A) over extent-1 dims => op(reshape(A), init);
                    reduce(reduce(A, i), i) => reduce(A, i) over both dims (i an identity,
                    or op idempotent);  reduce(transpose(A)) => reduce(A) (transposed back)
  control_flow.py   get-tuple-element(tuple(A0..An), i) => Ai;
                    get-tuple-element(while(init), k) => init element k (body passes k through);
                    tuple(gte(T, 0), ..., gte(T, n-1)) => T;
                    conditional(constant k, ...) => branch k inlined;
                    while(init) with a constant-false condition => init
  scatter.py        scatter(A, constant index, U) overwriting one window that fits =>
                    dynamic-update-slice(A, U, starts)
Unsafe (unsafe_math=True only):
  arithmetic.py     A * 0 => 0 (floats);  A + 0.0 => A (floats);  (A + B) - A => B;
                    power(A, 0.5) => sqrt(A);  (A op C1) op C2 => A op (C1 op C2) for + and *
  reductions.py     reduce(broadcast(s), init, add) => broadcast(init + s * n)
"""

from __future__ import annotations

from ember.hlo.ir import Module
from ember.passes.algsimp import (  # noqa: F401
    arithmetic,
    control_flow,
    odd,
    reductions,
    scatter,
    select_compare,
    shapes,
)
from ember.passes.algsimp.rewrite import ALL_REWRITES, REWRITES, Rewrite
from ember.passes.base import HloPass

__all__ = ["ALL_REWRITES", "AlgebraicSimplifier", "Rewrite"]


class AlgebraicSimplifier(HloPass):
    name = "algsimp"

    def __init__(self, unsafe_math: bool = False) -> None:
        self.unsafe_math = unsafe_math
        self.applied: list[str] = []  # rewrite names, in order, for tests and debugging

    def run(self, module: Module) -> bool:
        changed = False
        for comp in module.computations:
            for inst in comp.post_order():
                if inst.parent is not comp:
                    continue  # removed by an earlier rewrite
                for rw in REWRITES.get(inst.opcode, ()):
                    if rw.unsafe and not self.unsafe_math:
                        continue
                    new = rw.fn(inst)
                    if new is None or new is inst:
                        continue
                    assert new.shape.compatible(inst.shape), (rw.name, new, inst)
                    comp.replace_instruction(inst, new)
                    self.applied.append(rw.name)
                    changed = True
                    break
            if changed:
                comp.remove_dead()
        return changed
