"""Issue 22's small top-level APIs against JAX 0.10.2: device_get, Lowered.compiler_ir,
ensure_compile_time_eval and default_matmul_precision (with its config flag)."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import ember
import ember.numpy as jnp


def test_device_get_converts_arrays_and_keeps_other_leaves() -> None:
    tree = {"a": jnp.arange(3.0), "b": 3, "c": np.float32(2), "d": jnp.float32(1), "e": "s",
            "f": (jnp.zeros((0, 2), jnp.int8),)}
    got = ember.device_get(tree)
    want = jax.device_get({k: (jjnp.asarray(v) if isinstance(v, ember.Array) else v)
                           for k, v in tree.items() if k != "f"})
    for k, w in want.items():
        assert type(got[k]) is type(w), k
        if isinstance(w, np.ndarray):
            assert got[k].dtype == w.dtype and got[k].shape == w.shape
            np.testing.assert_array_equal(got[k], w)
    assert got["b"] == 3 and got["e"] == "s"
    assert type(got["f"][0]) is np.ndarray and got["f"][0].shape == (0, 2)
    assert not got["a"].flags.writeable  # a read-only view, as JAX's


def test_device_get_leaves_tracers_alone() -> None:
    seen = []

    @ember.jit
    def f(x):
        seen.append(ember.device_get(x))
        return x

    f(1.0)
    assert type(seen[0]).__name__.endswith("Tracer")


def test_compiler_ir_is_the_hlo_module() -> None:
    lowered = ember.jit(lambda x: x * 2 + 1).lower(np.ones(3, np.float32))
    module = lowered.compiler_ir()
    assert str(module) == lowered.as_text() == module.as_hlo_text()
    assert str(lowered.compiler_ir("hlo")) == lowered.as_text()
    assert module is not lowered.compiler_ir()  # a copy: editing it changes no Lowered
    assert lowered.compiler_ir("stablehlo") is None  # JAX's "unavailable"
    with pytest.raises(ValueError, match="unknown dialect: mhlo"):
        lowered.compiler_ir("mhlo")


def test_ensure_compile_time_eval_computes_constants_at_trace_time() -> None:
    kinds = []

    @ember.jit
    def f(x):
        with ember.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            positive = y > 0  # concrete: usable in Python control flow
            z = x + y  # involves a tracer: still staged
        kinds.append((type(y), type(z)))
        return jnp.where(positive, z, -z) if positive else -z

    np.testing.assert_allclose(f(1.0), 1.0 + np.sin(3.0), rtol=1e-6)
    assert kinds[0][0] is type(jnp.ones(1)) and kinds[0][1] is not kinds[0][0]
    text = str(ember.make_jaxpr(f)(1.0))
    assert "sin" not in text and "add" in text  # sin was folded, the add staged
    # Outside the block the same constant is staged, as without it.
    assert "sin" in str(ember.make_jaxpr(lambda x: x + jnp.sin(3.0))(1.0))


def _dot_jaxpr(lib, make_jaxpr) -> str:
    x = lib.ones((2, 2))
    return str(make_jaxpr(lib.dot)(x, x))


@pytest.mark.parametrize("value", ["highest", "float32", "tensorfloat32", "bfloat16", "default"])
def test_default_matmul_precision_is_recorded_as_jax_does(value) -> None:
    with ember.default_matmul_precision(value):
        assert ember.config.jax_default_matmul_precision == value
        ours = _dot_jaxpr(jnp, ember.make_jaxpr)
    with jax.default_matmul_precision(value):
        theirs = _dot_jaxpr(jjnp, jax.make_jaxpr)
    assert ours == theirs
    assert ember.config.jax_default_matmul_precision is None
    assert "precision" not in _dot_jaxpr(jnp, ember.make_jaxpr)


def test_default_matmul_precision_retraces_and_restores_after_errors() -> None:
    traces = []

    def product(a, b):
        traces.append(ember.config.jax_default_matmul_precision)
        return a @ b

    f = ember.jit(product)
    a = jnp.ones((3, 3))
    f(a, a), f(a, a), f(a, a)  # (the third call takes the fast path)
    with ember.default_matmul_precision("highest"):
        np.testing.assert_allclose(f(a, a), np.full((3, 3), 3.0))
        f(a, a)
    f(a, a)
    assert traces == [None, "highest"]  # one trace per value; the first one reused after
    with ember.default_matmul_precision("highest"):
        assert "Precision.HIGHEST" in str(ember.make_jaxpr(f)(a, a))
    assert "Precision" not in str(ember.make_jaxpr(f)(a, a))
    with pytest.raises(RuntimeError), ember.default_matmul_precision("high"):
        raise RuntimeError
    assert ember.config.jax_default_matmul_precision is None


def test_default_matmul_precision_errors() -> None:
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        with ember.default_matmul_precision("bogus"):
            pass
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        ember.config.update("jax_default_matmul_precision", "bogus")
    with ember.default_matmul_precision("F32_F32_F32"):  # JAX's preset: no such thing here
        with pytest.raises(NotImplementedError, match="dot algorithm presets"):
            jnp.dot(jnp.ones(2), jnp.ones(2))
    assert "jax_default_matmul_precision" in {f.name for f in ember.config.flags()}
