"""Reverse mode through a loop, Ember vs JAX in one process (issue 19's loop goal):
1. `grad` of a 1000-step `fori_loop` (static bounds) of `x = x*0.99 + 0.01*sin(x)` on a
   1e4-element f32 carry, jitted: median time of each and Ember/JAX; residual memory from
   `jit(...).lower(...).compile().memory_analysis()` (temporaries, next to the 1000 x carry
   bytes the per-iteration residual cos(x) needs; goal: at most that plus a constant);
2. the same loop with a body of many intermediates, with and without `checkpoint` on the
   body: the stacked residuals of the forward scan (from the jaxpr) and the temporaries
   (goal: with checkpoint only the carries are saved).

Run:
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/grad_scan_bench.py [--repeat 11]

Informative only: shared hosts are noisy; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np
from timing import interleaved_median_ms  # benchmarks/timing.py (this folder is sys.path[0])

STEPS, N = 1000, 10_000


def _simple(lax, jnp):
    def loss(x):
        return jnp.sum(lax.fori_loop(0, STEPS, lambda i, v: v * 0.99 + 0.01 * jnp.sin(v), x))
    return loss


def _busy(lax, jnp, wrap):
    def body(v):
        a = jnp.sin(v)
        b = jnp.cos(a) * v
        c = jnp.tanh(b) * a
        d = jnp.exp(-c * c)
        return v * 0.99 + 0.01 * d * jnp.sin(b)

    step = wrap(body)

    def loss(x):
        return jnp.sum(lax.fori_loop(0, STEPS, lambda i, v: step(v), x))
    return loss


def _stacked_bytes(ember, fun, x) -> int:
    """Bytes of the ys of the forward scan of grad(fun): its residuals (fori_loop has no
    ys of its own)."""
    jaxpr = ember.make_jaxpr(ember.grad(fun))(x).jaxpr
    fwd = next(e for e in jaxpr.eqns if e.primitive.name == "scan")
    outs = fwd.outvars[fwd.params["num_carry"]:]
    return sum(int(np.prod(v.aval.shape)) * v.aval.dtype.itemsize for v in outs)


def _temp(compiled) -> int:
    m = compiled.memory_analysis()
    return -1 if m is None else int(m.temp_size_in_bytes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=11)
    repeat = ap.parse_args().repeat
    import ember
    import ember.numpy as ejnp
    from ember import lax as elax

    x = np.linspace(-2.0, 2.0, N, dtype=np.float32)
    carry_bytes = x.nbytes
    print(f"carry: f32[{N}] = {carry_bytes} bytes; {STEPS} x carry = {STEPS * carry_bytes}")

    # 1. the simple body.
    e_grad = ember.jit(ember.grad(_simple(elax, ejnp)))
    e_comp = e_grad.lower(x).compile()
    fns = {"ember": lambda: e_grad(x).block_until_ready()}
    have_jax = importlib.util.find_spec("jax") is not None
    if have_jax:
        import jax
        import jax.numpy as jjnp
        j_grad = jax.jit(jax.grad(_simple(jax.lax, jjnp)))
        j_comp = j_grad.lower(x).compile()
        fns["jax"] = lambda: j_grad(x).block_until_ready()
        np.testing.assert_allclose(np.asarray(e_grad(x)), np.asarray(j_grad(x)), rtol=1e-4,
                                   atol=1e-6)
    times = interleaved_median_ms(fns, repeat)
    print("1. grad of fori_loop(x*0.99 + 0.01*sin(x)), jitted")
    print(f"   ember {times['ember']:.2f} ms", end="")
    if have_jax:
        print(f"   jax {times['jax']:.2f} ms   ember/jax {times['ember'] / times['jax']:.2f}x")
    else:
        print()
    print(f"   residuals stacked by the forward scan: "
          f"{_stacked_bytes(ember, _simple(elax, ejnp), x)} bytes")
    print(f"   memory_analysis temp bytes: ember {_temp(e_comp)}"
          + (f", jax {_temp(j_comp)}" if have_jax else ""))

    # 2. a busy body, with and without checkpoint.
    print("2. busy body (sin, cos, tanh, exp), grad jitted")
    for name, wrap in (("plain", lambda f: f), ("checkpoint", ember.checkpoint)):
        loss = _busy(elax, ejnp, wrap)
        comp = ember.jit(ember.grad(loss)).lower(x).compile()
        line = (f"   ember {name:10s}: stacked residuals {_stacked_bytes(ember, loss, x)} "
                f"bytes, temp {_temp(comp)} bytes")
        if have_jax:
            jwrap = (lambda f: f) if name == "plain" else jax.checkpoint
            jcomp = jax.jit(jax.grad(_busy(jax.lax, jjnp, jwrap))).lower(x).compile()
            line += f"   (jax temp {_temp(jcomp)} bytes)"
        print(line)
        e_busy = ember.jit(ember.grad(loss))
        busy_fns = {"ember": lambda f=e_busy: f(x).block_until_ready()}
        if have_jax:
            j_busy = jax.jit(jax.grad(_busy(jax.lax, jjnp, jwrap)))
            busy_fns["jax"] = lambda f=j_busy: f(x).block_until_ready()
        t = interleaved_median_ms(busy_fns, max(3, repeat // 2))
        print(f"      time ember {t['ember']:.2f} ms"
              + (f"   jax {t['jax']:.2f} ms   ember/jax {t['ember'] / t['jax']:.2f}x"
                 if have_jax else ""))


if __name__ == "__main__":
    main()
