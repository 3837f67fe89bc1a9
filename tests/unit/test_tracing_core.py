"""The tracing core's guarantees: a stack of traces with levels (a custom forward-mode JVP
trace plugs in without touching the core, on plain functions, through an inner `ember.jit`,
and under an outer jit), thread-local trace state, and escaped tracers.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.core.trace import Trace, Tracer, get_aval, new_main
from ember.errors import UnexpectedTracerError
from ember.prims.elementwise import add_p, cos_p, mul_p, neg_p, sin_p

F32 = np.float32


# -- a minimal forward-mode JVP trace, written only against the core's public surface --------

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace: Trace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)


# d(op) rules: (primals, tangents) -> (primal out, tangent out), written with lax, so they
# run at whatever trace is below this one (eager, or an enclosing jit).
JVP_RULES = {
    add_p: lambda p, t: (lax.add(*p), lax.add(*t)),
    mul_p: lambda p, t: (lax.mul(*p), lax.add(lax.mul(t[0], p[1]), lax.mul(p[0], t[1]))),
    sin_p: lambda p, t: (lax.sin(p[0]), lax.mul(t[0], lax.cos(p[0]))),
    cos_p: lambda p, t: (lax.cos(p[0]), lax.mul(t[0], lax.neg(lax.sin(p[0])))),
    neg_p: lambda p, t: (lax.neg(p[0]), lax.neg(t[0])),
}


class JVPTrace(Trace):
    def pure(self, val: Any) -> JVPTracer:
        return JVPTracer(self, val, jnp.zeros_like(val))

    def lift(self, tracer: Tracer) -> JVPTracer:
        return JVPTracer(self, tracer, jnp.zeros_like(tracer))

    def process_primitive(self, prim, tracers, params):
        if prim not in JVP_RULES:
            raise NotImplementedError(f"no JVP rule for {prim}")
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        p, t = JVP_RULES[prim](primals, tangents)
        return JVPTracer(self, p, t)
    # process_call is inherited: a jit inside jvp is inlined equation by equation.


def jvp(f, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    with new_main(JVPTrace) as main:
        trace = main.with_cur_sublevel()
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        out = trace.full_raise(f(*ins))
        return out.primal, out.tangent


def _g(x):
    return jnp.sin(x) * x + jnp.cos(x)


def _dg(x):
    # d/dx [sin(x) x + cos(x)] = cos(x) x + sin(x) - sin(x) = x cos(x)
    return x * np.cos(x)


def test_custom_jvp_trace_on_plain_function():
    x = np.linspace(-3, 3, 7).astype(F32)
    p, t = jvp(_g, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(p), np.sin(x) * x + np.cos(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(t), _dg(x), rtol=1e-5, atol=1e-5)


def test_custom_jvp_trace_through_inner_jit():
    inner = ember.jit(_g)
    x = np.linspace(-2, 2, 33).astype(F32)
    p, t = jvp(lambda y: inner(y) * 2.0, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(t), 2 * _dg(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(p), 2 * (np.sin(x) * x + np.cos(x)), rtol=1e-5,
                               atol=1e-6)


def test_jit_of_custom_jvp_stages_the_derivative():
    x = np.linspace(-2, 2, 7).astype(F32)
    f = ember.jit(lambda x: jvp(_g, (x,), (jnp.ones_like(x),))[1])
    np.testing.assert_allclose(np.asarray(f(x)), _dg(x), rtol=1e-5, atol=1e-5)
    text = str(ember.make_jaxpr(lambda x: jvp(_g, (x,), (jnp.ones_like(x),))[1])(x))
    assert "cos" in text and "sin" in text and "neg" in text


def test_jvp_closing_over_outer_jit_tracer():
    # A value of the enclosing jit (lower level) used inside jvp is lifted with zero tangent.
    def f(x, c):
        return jvp(lambda y: y * c, (x,), (jnp.ones_like(x),))[1]

    x = np.arange(3, dtype=F32)
    c = np.full(3, 5.0, F32)
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x, c)), c)


def test_trace_levels_nest():
    levels = []

    def f(x):
        levels.append(x._trace.level)
        return x

    ember.jit(lambda x: ember.jit(f)(x))(F32(1))
    assert levels == [2]


# -- threads ---------------------------------------------------------------------------------

def test_tracing_from_two_threads_concurrently():
    barrier = threading.Barrier(2, timeout=10)
    results: dict[str, Any] = {}
    errors: list[BaseException] = []

    def fa(x):
        y = jnp.sin(x)
        barrier.wait()          # both traces are open at the same time here
        return y + 1.0

    def fb(x):
        y = jnp.cos(x)
        barrier.wait()
        return y * 2.0

    def run(name, fn):
        try:
            x = np.arange(5, dtype=F32)
            results[name] = (np.asarray(ember.jit(fn)(x)), str(ember.make_jaxpr(fn)(x)))
        except BaseException as e:  # noqa: BLE001 (re-raised in the main thread)
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=run, args=("a", fa)),
               threading.Thread(target=run, args=("b", fb))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    x = np.arange(5, dtype=F32)
    np.testing.assert_allclose(results["a"][0], np.sin(x) + 1, rtol=1e-6)
    np.testing.assert_allclose(results["b"][0], np.cos(x) * 2, rtol=1e-6)
    assert "sin" in results["a"][1] and "cos" not in results["a"][1]
    assert "cos" in results["b"][1] and "sin" not in results["b"][1]


# -- escaped tracers -------------------------------------------------------------------------

def test_escaped_tracer_used_later_raises():
    leaked = []

    @ember.jit
    def f(x):
        leaked.append(x * 2)
        return x

    f(F32(1))
    with pytest.raises(UnexpectedTracerError, match="escaped"):
        leaked[0] + 1
    with pytest.raises(UnexpectedTracerError):
        jnp.sin(leaked[0])
    with pytest.raises(UnexpectedTracerError):
        ember.jit(lambda y: y + leaked[0])(F32(1))
    # the message says where the leaked value was computed
    with pytest.raises(UnexpectedTracerError, match="test_tracing_core.py"):
        leaked[0] * 3
