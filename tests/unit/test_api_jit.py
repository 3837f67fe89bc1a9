"""ember.jit: decorator forms, static and dynamic arguments, the trace cache, pytrees,
nested jit, closures, the stage objects (trace/lower/compile), eval_shape, donation,
bound methods and disable_jit.

Every cache test counts traces with `JitFunction.trace_count`, so a retrace (or a missing
one) fails the test.
"""

from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np
import pytest

import ember
import ember.numpy as jnp

F32 = np.float32


def _f32(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=F32).reshape(shape) + 1


# -- forms ------------------------------------------------------------------------------------

def test_decorator_forms():
    @ember.jit
    def a(x):
        return x * 2

    @ember.jit(static_argnums=1)
    def b(x, n):
        return x * n

    @functools.partial(ember.jit, static_argnums=(1,))
    def c(x, n):
        return x + n

    x = _f32(3)
    np.testing.assert_array_equal(np.asarray(a(x)), x * 2)
    np.testing.assert_array_equal(np.asarray(b(x, 3)), x * 3)
    np.testing.assert_array_equal(np.asarray(c(x, 4)), x + 4)
    assert a.__name__ == "a" and "ember.jit of a" in repr(a)


def test_jit_rejects_non_callable_and_unknown_kwargs():
    with pytest.raises(TypeError, match="callable"):
        ember.jit(3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        ember.jit(lambda x: x, bogus=1)
    with pytest.raises(ValueError, match="nope"):
        ember.jit(lambda x: x, static_argnames="nope")


def test_jit_signature_has_no_catch_all_and_a_full_docstring():
    import inspect
    params = inspect.signature(ember.jit).parameters
    assert not any(p.kind == p.VAR_KEYWORD for p in params.values())
    for name in ("static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
                 "keep_unused", "inline", "backend", "device", "in_shardings",
                 "out_shardings", "abstracted_axes", "compiler_options"):
        assert name in params, name
        assert name in ember.jit.__doc__, name


def test_argnums_out_of_range_raise_jaxs_error_at_jit():
    one = lambda x: x  # noqa: E731
    with pytest.raises(ValueError, match=r"^Jitted function has static_argnums=\(3,\), but "
                       r"only accepts 1 positional arguments\.(\n|$)"):
        ember.jit(one, static_argnums=3)
    with pytest.raises(ValueError, match=r"static_argnums=\(-2,\), but only accepts 1"):
        ember.jit(one, static_argnums=-2)
    with pytest.raises(ValueError, match=r"donate_argnums=\(0, 1\), but only accepts 1"):
        ember.jit(one, donate_argnums=(0, 1))
    ember.jit(one, static_argnums=-1)                   # in range
    ember.jit(lambda *args: args[0], static_argnums=5)  # *args takes any index


def test_argnames_that_name_no_parameter_raise_jaxs_error():
    with pytest.raises(ValueError, match=r"^Jitted function has invalid argnames \{'nope'\} "
                       r"in static_argnames\. Function does not take these args\.(\n|$)"):
        ember.jit(lambda x: x, static_argnames="nope")
    with pytest.raises(ValueError, match=r"invalid argnames \{'x'\} in donate_argnames\. "
                       "These are positional-only"):
        ember.jit(lambda x, /: x, donate_argnames="x")
    ember.jit(lambda x, **kw: x, static_argnames="anything")    # **kwargs takes any name


def test_static_and_donated_arguments_cannot_intersect():
    with pytest.raises(ValueError, match="cannot intersect"):
        ember.jit(lambda x, y: x, static_argnums=1, donate_argnums=1)
    with pytest.raises(ValueError, match="cannot intersect"):
        ember.jit(lambda x, y: x, static_argnames="y", donate_argnums=1)


def test_negative_static_argnum_beyond_a_calls_arguments():
    f = ember.jit(lambda *args: args[0] * args[-1], static_argnums=-3)
    with pytest.raises(ValueError, match=r"must have value greater than or equal to "
                       r"-len\(args\) and less than len\(args\), but got value -3 for "
                       r"len\(args\) == 2\."):
        f(1.0, 2.0)
    g = ember.jit(lambda x, n=2: x * n, static_argnums=1)
    assert float(g(3.0)) == 6.0     # an index past the call's arguments is skipped


def test_placement_keywords_accept_what_ember_does_and_name_the_rest():
    x = _f32(3)
    for kw in ({"backend": None}, {"backend": "cpu"}, {"device": None},
               {"device": ember.devices()[0]}, {"in_shardings": None},
               {"out_shardings": (None, None)}, {"abstracted_axes": None},
               {"out_shardings": ember.sharding.SingleDeviceSharding(ember.devices()[0])},
               {"compiler_options": {}}, {"compiler_options": None}):
        f = ember.jit(lambda a: a * 2, **kw)
        np.testing.assert_array_equal(np.asarray(f(x)), x * 2)
        g = ember.jit(**kw)(lambda a: a + 1)
        np.testing.assert_array_equal(np.asarray(g(x)), x + 1)
    with pytest.raises(RuntimeError, match=r"jit\(backend='gpu'\): Unknown backend: 'gpu' "
                       "requested, but no platforms that are instances of gpu are present"):
        ember.jit(lambda a: a, backend="gpu")
    with pytest.raises(RuntimeError, match=r"backend='rocm'.*Unknown backend rocm"):
        ember.jit(lambda a: a, backend="rocm")
    # "tpu" is an Ember backend: where there is no TPU, the first call says so
    # (tests/backends/test_tpu.py checks the text)
    with pytest.raises(ValueError, match=r"jit\(device='cuda:0'\)"):
        ember.jit(lambda a: a, device="cuda:0")
    with pytest.raises(ValueError, match="can't specify both a device and a backend"):
        ember.jit(lambda a: a, device=ember.devices()[0], backend="cpu")
    for kw in ("in_shardings", "out_shardings"):  # (shardings: tests/distributed/)
        with pytest.raises(TypeError, match=rf"jit {kw} leaves must be Shardings"):
            ember.jit(lambda a: a, **{kw: object()})
    with pytest.raises(NotImplementedError, match=r"jit\(abstracted_axes=\.\.\.\)"):
        ember.jit(lambda a: a, abstracted_axes=object())
    with pytest.raises(NotImplementedError, match=r"compiler_options.*xla_cpu_enable_fast_math"):
        ember.jit(lambda a: a, compiler_options={"xla_cpu_enable_fast_math": True})
    with pytest.raises(TypeError, match="in_shardings"):
        ember.jit(in_shardings=object())    # checked in the decorator form too


def test_inline_traces_into_the_callers_jaxpr():
    g = ember.jit(lambda x: x * 2.0)
    inlined = ember.jit(lambda x: x * 2.0, inline=True)
    staged = str(ember.make_jaxpr(lambda x: g(x) + 1.0)(1.0))
    flat = str(ember.make_jaxpr(lambda x: inlined(x) + 1.0)(1.0))
    assert "jit[" in staged and "jit[" not in flat and "mul" in flat
    assert float(inlined(3.0)) == 6.0   # called from Python it is an ordinary jit
    assert float(ember.jit(lambda x: inlined(x) + 1.0)(3.0)) == 7.0


# -- the cache --------------------------------------------------------------------------------

def test_second_call_same_shapes_does_not_retrace():
    f = ember.jit(lambda x, y: x * y + 1)
    x = _f32(7)
    f(x, x)
    f(x, x)
    f(x.copy(), ember.device_put(x))    # a NumPy array and an Array of the same type
    assert f.trace_count == 1
    f(_f32(33), _f32(33))               # new shape
    assert f.trace_count == 2
    f(x.astype(np.int32), x.astype(np.int32))   # new dtype
    assert f.trace_count == 3
    f(_f32(33), _f32(33))
    assert f.trace_count == 3


def test_weak_type_is_part_of_the_key():
    f = ember.jit(lambda x: x * 2)
    r1 = f(1.0)                 # Python float: weak f32
    r2 = f(np.float32(1.0))     # NumPy scalar: strong f32
    assert f.trace_count == 2
    assert r1.weak_type and not r2.weak_type
    f(2.0)
    f(np.float32(3.0))
    assert f.trace_count == 2
    f(1)                        # Python int: weak i32
    assert f.trace_count == 3
    b = ember.jit(lambda x: x)(True)            # a Python bool is a strong bool, as in JAX
    assert b.dtype == np.bool_ and not b.weak_type
    # A Python scalar argument prints as a weak f32 binder, converted before use.
    text = str(ember.make_jaxpr(lambda x, s: x * s)(_f32(3), 2.0))
    assert "convert_element_type[new_dtype=float32 weak_type=False] b" in text


def test_pytree_structure_is_part_of_the_key():
    f = ember.jit(lambda t: sum(jnp.sum(v) for v in ember.tree_leaves(t)))
    x = _f32(3)
    assert float(f((x, x))) == 12.0
    assert float(f([x, x])) == 12.0
    assert f.trace_count == 2
    assert float(f({"a": x, "b": x})) == 12.0
    assert f.trace_count == 3
    f({"b": x, "a": x})     # same dict (keys sorted)
    assert f.trace_count == 3


def test_config_change_retraces(x64):
    f = ember.jit(lambda x: x * 2)
    ember.config.update("jax_enable_x64", False)
    assert f(1.0).dtype == np.float32
    ember.config.update("jax_enable_x64", True)
    assert f(1.0).dtype == np.float64
    assert f.trace_count == 2
    ember.config.update("jax_enable_x64", False)
    assert f(1.0).dtype == np.float32
    assert f.trace_count == 2


def test_static_argnums_and_argnames():
    @functools.partial(ember.jit, static_argnums=(1,))
    def f(x, n, k=1):
        return x * n + k

    x = _f32(3)
    np.testing.assert_array_equal(np.asarray(f(x, 2)), x * 2 + 1)
    f(x, 2)
    assert f.trace_count == 1
    f(x, 3)                 # new static value
    assert f.trace_count == 2
    f(x, n=3)               # name inferred from argnum: n is static by name too
    assert "n" in f.static_argnames
    np.testing.assert_array_equal(np.asarray(f(x, 2, k=5)), x * 2 + 5)   # dynamic kwarg

    @functools.partial(ember.jit, static_argnames="mode")
    def g(x, mode="double"):
        return x * 2 if mode == "double" else x * 3

    assert 1 in g.static_argnums     # argnum inferred from the name
    np.testing.assert_array_equal(np.asarray(g(x)), x * 2)                # default
    np.testing.assert_array_equal(np.asarray(g(x, mode="triple")), x * 3)
    np.testing.assert_array_equal(np.asarray(g(x, "triple")), x * 3)     # positional


def test_negative_static_argnums():
    f = ember.jit(lambda x, n: x * n, static_argnums=-1)
    assert "n" in f.static_argnames
    np.testing.assert_array_equal(np.asarray(f(_f32(2), 5)), _f32(2) * 5)
    f(_f32(2), 5)
    assert f.trace_count == 1
    f(_f32(2), 6)
    assert f.trace_count == 2


def test_static_arg_equal_values_share_a_trace_but_types_do_not():
    f = ember.jit(lambda x, n: x * n, static_argnums=1)
    f(_f32(2), 2)
    f(_f32(2), 2.0)         # 2 == 2.0 but a different type: JAX-style separate entries
    assert f.trace_count == 2


def test_unhashable_static_arg_names_the_argument():
    f = ember.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(ValueError, match="`shape`.*list"):
        f(_f32(6), [2, 3])
    np.testing.assert_array_equal(np.asarray(f(_f32(6), (2, 3))), _f32(2, 3))


def test_non_array_dynamic_argument_error_names_path():
    f = ember.jit(lambda p: p["w"])
    with pytest.raises(TypeError, match=r"path p\['s'\]"):
        f({"w": _f32(2), "s": "text"})


def test_dynamic_kwargs_and_defaults():
    @ember.jit
    def f(x, y=None, *, scale=1.0):
        out = x * scale
        return out if y is None else out + y

    x = _f32(3)
    np.testing.assert_array_equal(np.asarray(f(x)), x)
    np.testing.assert_array_equal(np.asarray(f(x, scale=2.0)), x * 2)
    np.testing.assert_array_equal(np.asarray(f(x, y=x, scale=3.0)), x * 4)
    np.testing.assert_array_equal(np.asarray(f(x, x)), x * 2)
    n = f.trace_count
    f(x, scale=5.0)             # scale is a dynamic kwarg: no retrace on a new value
    assert f.trace_count == n


def test_scalars_weak_and_numpy_scalars_strong():
    f = ember.jit(lambda x, s: x * s)
    u8 = np.arange(4, dtype=np.uint8)
    assert f(u8, 3).dtype == np.uint8                 # weak int keeps u8
    assert f(u8, np.int32(3)).dtype == np.int32        # strong i32 promotes
    assert f(_f32(2), np.float32(1.5)).dtype == np.float32
    assert not f(np.float32(2), np.float32(1.5)).weak_type


# -- outputs ----------------------------------------------------------------------------------

Pair = namedtuple("Pair", ["lo", "hi"])


def test_outputs_any_pytree():
    @ember.jit
    def f(x):
        return {"pair": Pair(x - 1, x + 1), "none": None, "nest": [(x,), {"z": x * 0}]}

    x = _f32(3)
    out = f(x)
    assert isinstance(out["pair"], Pair) and out["none"] is None
    np.testing.assert_array_equal(np.asarray(out["pair"].hi), x + 1)
    np.testing.assert_array_equal(np.asarray(out["nest"][1]["z"]), 0 * x)
    assert isinstance(out["nest"][0], tuple)
    assert ember.jit(lambda x: None)(x) is None
    assert ember.jit(lambda x: ())(x) == ()


# -- nesting and closures ---------------------------------------------------------------------

def test_nested_jit_prints_as_golden():
    @ember.jit
    def g(x):
        return jnp.cos(x)

    def f(x):
        return g(x) * 3.0

    assert str(ember.make_jaxpr(f)(np.zeros(3, F32))) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = jit[\n"
        "      name=g\n"
        "      jaxpr={ lambda ; a:f32[3]. let b:f32[3] = cos a in (b,) }\n"
        "    ] a\n"
        "    c:f32[3] = mul b 3.0:f32[]\n"
        "  in (c,) }")
    x = _f32(3)
    np.testing.assert_allclose(np.asarray(ember.jit(f)(x)), np.cos(x) * 3, rtol=1e-6)
    # The inner cache is keyed by avals: the outer jit reuses the trace make_jaxpr made.
    assert g.trace_count == 1


def test_make_jaxpr_of_jitted_function_shows_a_jit_equation():
    g = ember.jit(lambda x: x + 1)
    text = str(ember.make_jaxpr(g)(np.zeros(2, F32)))
    assert "jit[" in text and "name=<lambda>" in text


def test_inner_jit_closing_over_outer_tracer():
    def f(x):
        @ember.jit
        def inner(y):
            return y * x + 1.0      # x is a tracer of the outer jit
        return inner(x + 1.0)

    x = _f32(4)
    out = ember.jit(f)(x)
    np.testing.assert_allclose(np.asarray(out), (x + 1) * x + 1)
    closed = ember.make_jaxpr(f)(x)
    eqn = [e for e in closed.jaxpr.eqns if e.primitive.name == "jit"][0]
    # the closed-over tracer is an extra leading argument of the inner jit
    assert len(eqn.invars) == 2 and not eqn.params["jaxpr"].consts


def test_closure_constant_golden():
    c = np.arange(3, dtype=F32)

    def f(x):
        return x * c

    assert str(ember.make_jaxpr(f)(np.zeros(3, F32))) == (
        "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = mul b a in (c,) }")


def test_closure_mutated_after_trace_does_not_change_cached_result():
    c = np.ones(3, F32)
    f = ember.jit(lambda x: x + c)
    r1 = f(np.zeros(3, F32))
    c[:] = 100
    r2 = f(np.zeros(3, F32))
    np.testing.assert_array_equal(np.asarray(r1), np.ones(3))
    np.testing.assert_array_equal(np.asarray(r2), np.ones(3))
    assert f.trace_count == 1


# -- stages -----------------------------------------------------------------------------------

def test_trace_lower_compile_with_shape_dtype_struct():
    f = ember.jit(lambda x, y: jnp.sin(x) * y)
    spec = ember.ShapeDtypeStruct((3,), jnp.float32)
    traced = f.trace(spec, spec)
    assert "sin" in str(traced.jaxpr)
    assert traced.out_info.shape == (3,) and traced.out_info.dtype == np.float32
    lowered = f.lower(spec, spec)
    assert "mul" in lowered.as_text()
    compiled = lowered.compile()
    x = _f32(3)
    np.testing.assert_allclose(np.asarray(compiled(x, x)), np.sin(x) * x, rtol=1e-6)
    with pytest.raises(TypeError, match="expects f32\\[3\\]"):
        compiled(_f32(4), _f32(4))
    assert f.trace_count == 1       # trace and lower share the cache entry
    f(x, x)
    assert f.trace_count == 1
    assert repr(spec) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"


def test_eval_shape():
    def f(x, y):
        return {"s": jnp.sum(x), "p": jnp.expand_dims(x, 1) * y}

    out = ember.eval_shape(f, ember.ShapeDtypeStruct((4,), np.float32), np.zeros(5, F32))
    assert out["s"].shape == () and out["s"].dtype == np.float32
    assert out["p"].shape == (4, 5)
    j = ember.jit(f)
    assert j.eval_shape(np.zeros(4, F32), np.zeros(5, F32))["p"].shape == (4, 5)


# -- donation ---------------------------------------------------------------------------------

def test_donate_argnums_only_deletes_ember_arrays():
    f = ember.jit(lambda x, y: x + y, donate_argnums=0)
    a = ember.device_put(_f32(3))
    b = ember.device_put(_f32(3))
    out = f(a, b)
    np.testing.assert_array_equal(np.asarray(out), _f32(3) * 2)
    assert a.is_deleted() and not b.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        a + 1
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(a)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(a, b)
    n = _f32(3)
    keep = n.copy()
    f(n, b)                 # a NumPy argument is never written or invalidated
    np.testing.assert_array_equal(n, keep)
    assert n.flags.writeable


def test_donate_argnames_and_pytrees():
    f = ember.jit(lambda p, x: {k: v * x for k, v in p.items()}, donate_argnames="p")
    p = {"w": ember.device_put(_f32(2)), "b": ember.device_put(_f32(2))}
    x = ember.device_put(_f32(2))
    out = f(p, x)
    assert p["w"].is_deleted() and p["b"].is_deleted() and not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(out["w"]), _f32(2) ** 2)


# -- methods, disable_jit ---------------------------------------------------------------------

class Scaler:
    def __init__(self, k: float):
        self.k = k

    def apply(self, x):
        return x * self.k


def test_jit_of_a_bound_method():
    s = Scaler(3.0)
    f = ember.jit(s.apply)
    np.testing.assert_array_equal(np.asarray(f(_f32(2))), _f32(2) * 3)
    f(_f32(2))
    assert f.trace_count == 1


def test_jit_as_method_decorator_with_static_self():
    class M:
        def __init__(self, k):
            self.k = k

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, o):
            return isinstance(o, M) and o.k == self.k

        @functools.partial(ember.jit, static_argnums=0)
        def run(self, x):
            return x + self.k

    np.testing.assert_array_equal(np.asarray(M(2).run(_f32(2))), _f32(2) + 2)


def test_disable_jit():
    seen = []

    @ember.jit
    def f(x):
        seen.append(type(x))
        return x * 2

    with ember.disable_jit():
        out = f(ember.device_put(_f32(2)))
    assert f.trace_count == 0 and seen == [ember.array.ArrayImpl]
    np.testing.assert_array_equal(np.asarray(out), _f32(2) * 2)
    f(_f32(2))
    assert f.trace_count == 1


def test_jit_eager_bit_identical_on_a_mix():
    def f(x, y):
        return jnp.tanh(x * 0.5 + 1.0) * jnp.exp(-x * x) + jnp.log1p(jnp.abs(y))

    rng = np.random.default_rng(0)
    for shape in [(), (0,), (7,), (33,), (4, 5), (2, 3, 4)]:
        x = rng.standard_normal(shape).astype(F32)
        y = rng.standard_normal(shape).astype(F32)
        eager = np.asarray(f(x, y))
        jitted = np.asarray(ember.jit(f)(x, y))
        assert eager.tobytes() == jitted.tobytes()
        np.testing.assert_allclose(
            jitted, np.tanh(x * F32(0.5) + 1) * np.exp(-x * x) + np.log1p(np.abs(y)),
            rtol=2e-6, atol=1e-6)
