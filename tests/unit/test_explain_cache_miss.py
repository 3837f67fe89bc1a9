"""Cache-miss explanations (ember/explain/cache_miss.py): which argument changed and how."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.config import config
from ember.explain.cache_miss import explain_cache_miss, report_cache_miss


def f(x, n, *, opts=None):
    return x * n


DEFINED = f"{__file__}:{f.__code__.co_firstlineno}"
jf = ember.jit(f, static_argnums=1)


def key(*args, **kwargs):
    """The key JitFunction._lookup builds for this call."""
    _, _, tree, _, avals, static = jf.flatten_call(args, kwargs)
    return (tree, avals, static, config.trace_context(), ())


def x32(n=3):
    return np.ones(n, np.float32)


BASE = key(x32(), 2, opts={"scale": 1.0})


def lines(text):
    return [s.strip() for s in text.splitlines()]


def test_header_names_call_site_and_definition():
    text = explain_cache_miss(jf, key(x32(4), 2, opts={"scale": 1.0}), [BASE])
    head = text.splitlines()
    assert head[0].startswith(f"TRACING CACHE MISS at {__file__}:")
    assert head[0].endswith("because:")
    assert head[1].strip() == f"for f defined at {DEFINED}"


def test_changed_shape():
    text = explain_cache_miss(jf, key(x32(4), 2, opts={"scale": 1.0}), [BASE])
    assert lines(text)[2:] == ["x: now f32[4], before f32[3]"]


def test_changed_dtype_of_a_nested_leaf_and_weak_type():
    text = explain_cache_miss(jf, key(x32(), 2, opts={"scale": np.float32(1.0)}), [BASE])
    assert lines(text)[2:] == ["opts['scale']: now f32[], before f32[] weak"]


def test_static_argument_new_value():
    text = explain_cache_miss(jf, key(x32(), 5, opts={"scale": 1.0}), [BASE])
    assert lines(text)[2:] == ["static argument n: now 5, before 2"]


def test_new_pytree_structure():
    text = explain_cache_miss(jf, key(x32(), 2, opts={"scale": 1.0, "bias": x32(2)}), [BASE])
    got = lines(text)[2:]
    assert got[0].startswith("argument structure: now PyTreeDef(") and "'bias'" in got[0]
    assert got[1] == "opts['bias']: new argument, f32[2]"
    text = explain_cache_miss(jf, key(x32(), 2), [BASE])
    assert "opts['scale']: no longer passed (was f32[] weak)" in lines(text)


def test_changed_config_value(x64):
    text = explain_cache_miss(jf, key(x32(), 2, opts={"scale": 1.0}), [BASE])
    assert "config jax_enable_x64: now True, before False" in lines(text)
    # the weak Python float follows the flag too
    assert "opts['scale']: now f64[] weak, before f32[] weak" in lines(text)


def test_changed_vmap_axis_size():
    # a trace inside a named vmap depends on the axis sizes (collectives read them)
    new = key(x32(), 2, opts={"scale": 1.0})[:4] + ((("i", 5),),)
    old = BASE[:4] + ((("i", 3),),)
    text = explain_cache_miss(jf, new, [old])
    assert "named vmap axes (name, size): now (('i', 5),), before (('i', 3),)" in lines(text)


def test_first_trace_and_identical_key():
    assert "first trace of f: nothing cached yet" in explain_cache_miss(jf, BASE, [])
    assert "an identical key was cached before" in explain_cache_miss(jf, BASE, [BASE])


def test_closest_cached_key_is_compared():
    other = key(x32(8), 7, opts={"scale": 1.0})
    text = explain_cache_miss(jf, key(x32(4), 2, opts={"scale": 1.0}), [other, BASE])
    assert "x: now f32[4], before f32[3]" in text and "static argument" not in text
    assert "closest of 2 cached traces" in text


def test_report_prints_only_when_the_flag_is_on(capfd):
    report_cache_miss(jf, key(x32(4), 2, opts={"scale": 1.0}), [BASE])
    assert capfd.readouterr().err == ""
    config.update("jax_explain_cache_misses", True)
    try:
        report_cache_miss(jf, key(x32(4), 2, opts={"scale": 1.0}), [BASE])
    finally:
        config.update("jax_explain_cache_misses", False)
    assert "x: now f32[4], before f32[3]" in capfd.readouterr().err


@pytest.mark.parametrize("argnums", [None, 0])
def test_positional_names_follow_static_argnums(argnums):
    def g(a, b):
        return b

    jg = ember.jit(g, static_argnums=argnums)
    a = 1 if argnums == 0 else x32()

    def k(b):
        _, _, tree, _, avals, static = jg.flatten_call((a, b), {})
        return (tree, avals, static, config.trace_context(), ())

    text = explain_cache_miss(jg, k(x32(2)), [k(x32())])
    assert "b: now f32[2], before f32[3]" in text


def test_a_retrace_through_jit_explains_itself(capfd):
    import ember

    @ember.jit
    def scaled(x):
        return x * 2

    ember.config.update("jax_explain_cache_misses", True)
    try:
        scaled(np.ones(3, np.float32))
        scaled(np.ones(4, np.float32))
    finally:
        ember.config.update("jax_explain_cache_misses", False)
    err = capfd.readouterr().err
    assert "scaled" in err
    assert "now f32[4], before f32[3]" in err
