"""Growing fusion groups (ember/passes/grouping.py): `readers_in` finds a producer's users in
a group, from the producer's user list or, for a producer that many groups share (a scalar
constant every reduction reads after CSE), from the group's members, with the same
readers either way; and a program of many reductions sharing one constant fuses as
before."""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember.backends.cpu.compiler import pipeline
from ember.hlo.parser import parse_module
from ember.lowering import lower_jaxpr
from ember.passes.grouping import readers_in


def _shared_constant(n: int) -> str:
    params = ", ".join(f"p{k}: f32[4]" for k in range(n))
    lines = [f"  %p{k} = f32[4] parameter({k})" for k in range(n)]
    lines.append("  %c = f32[] constant(1)")
    lines.append("  %cb = f32[4] broadcast(%c), dimensions={}")
    lines += [f"  %a{k} = f32[4] add(%p{k}, %cb)" for k in range(n)]
    lines += [f"  %m{k} = f32[4] multiply(%a{k}, %cb)" for k in range(n)]
    ops = ", ".join(f"%m{k}" for k in range(n))
    lines.append(f"  ROOT %t = ({', '.join(['f32[4]'] * n)}) tuple({ops})")
    return (f"HloModule shared\nENTRY %main ({params}) -> ({', '.join(['f32[4]'] * n)}) {{\n"
            + "\n".join(lines) + "\n}\n")


def test_readers_in_is_the_same_from_either_side():
    m = parse_module(_shared_constant(30))
    comp = m.entry
    cb = next(i for i in comp.instructions if i.name == "cb")
    order = {inst: k for k, inst in enumerate(comp.post_order())}
    for k in (0, 7, 29):
        a, mul = (next(i for i in comp.instructions if i.name == f"{x}{k}") for x in "am")
        group = {a, mul}
        assert len(cb.users) > 4 * len(group)  # (the members' side)
        assert readers_in(cb, group, order) == sorted([a, mul], key=order.__getitem__)
    everything = set(comp.instructions)  # (the user list's side: a group larger than that)
    assert readers_in(cb, everything, order) == list(cb.users)


def test_many_reductions_sharing_their_init_constant_fuse_as_before():
    x = np.linspace(-1, 1, 50, dtype=np.float32)

    def f(x):
        s = 0.0
        for _ in range(40):
            x = 0.5 * (jnp.sin(x) + x[::-1]) + 0.1
            s = s + jnp.sum(x)
        return x, s

    m = lower_jaxpr(ember.make_jaxpr(f)(x)).module
    pipeline().run(m)  # (CSE leaves one init constant the 40 reductions share)
    fusions = [i for i in m.entry.instructions if i.opcode == "fusion"]
    reduces = [f_ for f_ in fusions
               if any(i.opcode == "reduce" for i in f_.fused_computation.instructions)]
    assert len(reduces) >= 40  # every reduction in a kernel with its init value
    got = ember.jit(f)(x)
    want_x, want_s = x, np.float32(0)
    for _ in range(40):
        want_x = np.float32(0.5) * (np.sin(want_x) + want_x[::-1]) + np.float32(0.1)
        want_s += want_x.sum()
    np.testing.assert_allclose(np.asarray(got[0]), want_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got[1]), want_s, rtol=1e-5)
