"""`ember.debug.print`, `ember.debug.callback` and `jax_debug_nans`, on both backends.

Checks prints from inside jit and loop bodies, in program order and once per iteration;
that DCE keeps prints nobody reads and CSE does not merge identical ones (also at the HLO
pass level); the jaxpr text against JAX 0.10.2's (embedded below); and that debug_nans
names the primitive and the user's line that produced the first NaN, jitted and eager.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.hlo.parser import parse_module
from ember.hlo.printer import print_module
from ember.passes.cse import CommonSubexpressionElimination
from ember.passes.dce import DeadCodeElimination


@pytest.fixture(params=["interpreter", "cpu"])
def backend(request, monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", request.param)
    return request.param


@pytest.fixture
def debug_nans():
    ember.config.update("jax_debug_nans", True)
    yield
    ember.config.update("jax_debug_nans", False)


def test_print_eager_and_jit(backend, capsys):
    x = np.array([1.5, -2.0, 3.25], np.float32)

    def f(x, y):
        ember.debug.print("x = {x}, y = {}", y, x=x)
        return x * 2

    f(x, np.int32(7))
    eager = capsys.readouterr().out
    assert eager == f"x = {x}, y = 7\n"
    out = ember.jit(f)(x, np.int32(7))
    np.testing.assert_array_equal(np.asarray(out), x * 2)
    assert capsys.readouterr().out == eager


def test_print_inside_fori_loop_in_order(backend, capsys):
    def f(x):
        ember.debug.print("start {}", x)

        def body(i, c):
            ember.debug.print("i={i} c={c}", i=i, c=c)
            ember.debug.print("after {}", i)
            return c + 1.0

        y = lax.fori_loop(0, 3, body, x)
        ember.debug.print("end {}", y)
        return y

    out = ember.jit(f)(np.float32(1))
    assert float(out) == 4.0
    assert capsys.readouterr().out.splitlines() == [
        "start 1.0", "i=0 c=1.0", "after 0", "i=1 c=2.0", "after 1", "i=2 c=3.0",
        "after 2", "end 4.0"]


def test_print_in_loop_whose_result_is_unused(backend, capsys):
    # Neither the loop's result nor the printed carry element is needed by the output:
    # DCE (also of the loop state) must keep both for the print.
    def f(x):
        def body(i, c):
            a, b = c
            ember.debug.print("b={}", b)
            return a + 1, b * 2
        lax.fori_loop(0, 3, body, (x, x))
        return x + 1

    np.testing.assert_array_equal(np.asarray(ember.jit(f)(np.int32(1))), 2)
    assert capsys.readouterr().out.splitlines() == ["b=1", "b=2", "b=4"]


def test_unused_and_identical_prints_are_kept(backend, capsys):
    def f(x):
        y = jnp.sin(x)  # read only by the prints
        ember.debug.print("y = {}", y)
        ember.debug.print("y = {}", y)
        ember.debug.callback(lambda v: print("callback", v.shape), y)
        return x

    ember.jit(f)(np.zeros(3, np.float32))
    assert capsys.readouterr().out.splitlines() == ["y = [0. 0. 0.]", "y = [0. 0. 0.]",
                                                    "callback (3,)"]


def test_debug_callback_gets_concrete_arrays(backend):
    got = []

    def record(a, *, b):
        got.append((type(a), np.array(a), np.array(b)))

    def f(x):
        ember.debug.callback(record, x, b=x + 1)
        return x

    ember.jit(f)(np.arange(4, dtype=np.int32))
    assert got[0][0] is np.ndarray
    np.testing.assert_array_equal(got[0][1], np.arange(4))
    np.testing.assert_array_equal(got[0][2], np.arange(4) + 1)


_MODULE = """\
HloModule effects

ENTRY %main (p: f32[3]) -> f32[3] {
  %p = f32[3] parameter(0)
  %sine = f32[3] sine(%p)
  %cc.1 = pred[] custom-call(%sine), custom_call_target="ember.python_callback", custom_call_has_side_effect=true, backend_config="0"
  %cc.2 = pred[] custom-call(%sine, %cc.1), custom_call_target="ember.python_callback", custom_call_has_side_effect=true, backend_config="0"
  %cc.3 = pred[] custom-call(%sine), custom_call_target="ember.python_callback", custom_call_has_side_effect=true, backend_config="0"
  %unused = f32[3] custom-call(%sine), custom_call_target="ember.python_callback", backend_config="0"
  ROOT %r = f32[3] add(%p, %p)
}
"""  # noqa: E501


def test_dce_and_cse_keep_side_effects_in_order():
    m = parse_module(_MODULE)
    DeadCodeElimination().run(m)
    CommonSubexpressionElimination().run(m)
    text = print_module(m)
    assert "%unused" not in text  # a pure callback nobody reads may go
    for name in ("%cc.1 ", "%cc.2 ", "%cc.3 ", "%sine "):
        assert name in text
    order = [i.name for i in m.entry.post_order()]
    assert order.index("cc.1") < order.index("cc.2") < order.index("cc.3")
    assert print_module(parse_module(text)) == text  # the attribute round-trips


JAX_DEBUG_PRINT = """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          debug_print[
            fmt=i={i}
            has_placeholders=True
            in_tree=PyTreeDef(((), {'i': *}))
            logging_record=None
            np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))
            ordered=False
            partitioned=False
            static_args=()
          ] c
          f:f32[] = add d 1.0:f32[]
        in (e, f) }
      length=3
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }"""  # noqa: E501 - JAX 0.10.2's text, verbatim

JAX_DEBUG_CALLBACK = """\
{ lambda ; a:f32[3]. let
    debug_callback[
      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>
      effect=OrderedDebug
      partitioned=False
    ] a
  in (a,) }"""  # noqa: E501 - JAX 0.10.2's text, verbatim


def test_jaxprs_match_jax():
    def k(x):
        def body(i, c):
            ember.debug.print("i={i}", i=i)
            return c + 1
        return lax.fori_loop(0, 3, body, x)

    assert str(ember.make_jaxpr(k)(1.0)) == JAX_DEBUG_PRINT

    def g(x):
        ember.debug.callback(lambda a: None, x, ordered=True)
        return x

    assert str(ember.make_jaxpr(g)(np.ones(3, np.float32))) == JAX_DEBUG_CALLBACK


def _line_of(fn, text: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def _nan_fn(x):
    y = x * 2
    z = jnp.log(y)
    return jnp.sqrt(z + 1)


def test_debug_nans_names_the_first_nan_jit(backend, debug_nans):
    line = _line_of(_nan_fn, "jnp.log")
    with pytest.raises(FloatingPointError,
                       match=rf"encountered in log \(at .*test_debug.py:{line} \(_nan_fn\)"):
        ember.jit(_nan_fn)(np.array([-1.0, 1.0], np.float32))
    # no NaN: no error
    out = ember.jit(_nan_fn)(np.array([1.0, 2.0], np.float32))
    np.testing.assert_allclose(np.asarray(out), np.sqrt(np.log([2.0, 4.0]) + 1), rtol=1e-6)


def test_debug_nans_eager_and_nested_jit(backend, debug_nans):
    line = _line_of(_nan_fn, "jnp.log")
    with pytest.raises(FloatingPointError, match=rf"in log \(at .*test_debug.py:{line} "):
        _nan_fn(np.array([-1.0], np.float32))

    def outer(x):
        return ember.jit(_nan_fn)(x) + 1

    with pytest.raises(FloatingPointError, match=rf"in log \(at .*test_debug.py:{line} "):
        ember.jit(outer)(np.array([-3.0, 1.0], np.float32))


def test_debug_nans_off_returns_nan(backend):
    out = ember.jit(_nan_fn)(np.array([-1.0], np.float32))
    assert np.isnan(np.asarray(out)).all()


def test_failing_debug_callback_raises_and_skips_later_effects(backend, capsys):
    def bad(v):
        raise ValueError("bad value")

    def f(x):
        ember.debug.print("before")
        ember.debug.callback(bad, x)
        ember.debug.print("after")
        return x + 1

    with pytest.raises(ValueError, match="bad value"):
        ember.jit(f)(np.float32(1))
    assert capsys.readouterr().out.splitlines() == ["before"]


def test_prints_around_while_loop_and_cond_in_order(backend, capsys):
    def f(x, k):
        ember.debug.print("before")

        def body(c):
            keep, v = c
            ember.debug.print("v={}", v)
            return keep, v + 1   # element 0 passes through: the loop is still ordered

        _, v = lax.while_loop(lambda c: c[1] < 3, body, (k, x))
        ember.debug.print("between")
        y = lax.cond(v > 2, lambda a: (ember.debug.print("big {}", a), a * 2)[1],
                     lambda a: (ember.debug.print("small {}", a), a)[1], v)
        ember.debug.print("after {}", y)
        return y

    out = ember.jit(f)(np.int32(0), np.int32(9))
    assert int(out) == 6
    assert capsys.readouterr().out.splitlines() == [
        "before", "v=0", "v=1", "v=2", "between", "big 3", "after 6"]
