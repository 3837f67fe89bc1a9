"""Reduction splitting (ember/passes/reduction_splitting.py): large few-output reductions
become two reductions so the CPU backend's threads share them; results stay NumPy's and do
not depend on the thread count."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends.cpu import threads
from ember.lowering import lower_jaxpr
from ember.passes.reduction_splitting import ReductionSplitting, blocks_for


def _module(f, *args):
    return lower_jaxpr(ember.make_jaxpr(f)(*args), "f").module


def _reduces(module) -> list[str]:
    return [f"{i.shape}" for c in module.computations for i in c.post_order()
            if i.opcode == "reduce"]


def test_blocks_depend_on_the_size_alone():
    assert blocks_for(10_000_000) == 64
    assert blocks_for(1 << 20) == 64
    assert blocks_for(1 << 18) == 32  # blocks of at least 8192 elements
    assert blocks_for(1_000_003) == 1  # prime: left alone


def test_a_full_sum_becomes_blocks_then_their_total():
    x = np.ones(1 << 20, np.float32)
    m = _module(lambda a: jnp.sum(a), x)
    assert ReductionSplitting().run(m)
    assert _reduces(m) == ["f32[64]", "f32[]"]
    text = str(m.entry.root.operands[0].operands[0])
    assert "f32[64,16384]" in text  # the blocks are a reshape (a view) of the input


@pytest.mark.parametrize("f", [
    lambda a: jnp.sum(a[:100]),                                 # small
    lambda a: jnp.sum(a.reshape(1024, 1024), axis=0),           # leading dim reduced
    lambda a: jnp.sum(a.reshape(64, 16384), axis=1),            # many outputs already
])
def test_left_alone(f):
    m = _module(f, np.ones(1 << 20, np.float32))
    assert not ReductionSplitting().run(m)


def test_left_alone_when_the_initial_value_is_not_the_identity():
    from ember.hlo import Builder, Shape

    b = Builder("f")
    x = b.parameter(Shape("f32", (1 << 20,)))
    add = Builder.scalar_computation("add", "f32")
    m = b.build(b.reduce(x, b.scalar(1.0, "f32"), (0,), add))  # 1 + sum: counted once
    assert not ReductionSplitting().run(m)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_])
def test_values_match_numpy_and_not_the_thread_count(dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(3 * (1 << 18)) * 10).astype(dtype)
    fs = {"sum": (lambda a: jnp.sum(a), np.sum), "max": (lambda a: jnp.max(a), np.max),
          "min": (lambda a: jnp.min(a), np.min),
          "rows": (lambda a: jnp.sum(a.reshape(3, -1), axis=1),
                   lambda a: np.sum(a.reshape(3, -1), axis=1))}
    if dtype == np.bool_:
        fs = {"any": (lambda a: jnp.any(a), np.any), "all": (lambda a: jnp.all(a), np.all)}
    before = threads.get_num_threads()
    try:
        for name, (f, ref) in fs.items():
            got = []
            for n in (1, 3):
                threads.set_num_threads(n)
                got.append(np.asarray(ember.jit(f)(x)))
            np.testing.assert_array_equal(got[0], got[1], err_msg=name)  # same bits
            want = ref(x.astype(np.float64) if dtype != np.bool_ else x)
            # (float64 runs as float32 without jax_enable_x64, as in JAX)
            np.testing.assert_allclose(got[0], want, rtol=1e-5 if x.dtype.kind == "f" else 0,
                                       err_msg=name)
    finally:
        threads.set_num_threads(before)
