"""Reduction splitting (ember/passes/reduction_splitting.py): large few-output reductions
become two reductions so the CPU backend's threads share them; results stay NumPy's and do
not depend on the thread count."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.backends.cpu.runtime import threads
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


def test_a_column_sum_becomes_blocks_of_rows_then_their_total():
    x = np.ones(1 << 20, np.float32)
    m = _module(lambda a: jnp.sum(a.reshape(1024, 1024), axis=0), x)
    assert ReductionSplitting().run(m)
    assert _reduces(m) == ["f32[16,1024]", "f32[1024]"]
    assert "f32[16,64,1024]" in str(m.entry.root.operands[0].operands[0])


def test_lead_blocks_depend_on_the_rows_alone():
    from ember.passes.reduction_splitting import lead_blocks_for

    assert lead_blocks_for(4096) == 16
    assert lead_blocks_for(96) == 12  # blocks of at least 8 rows
    assert lead_blocks_for(4099) == 1  # prime: left alone


@pytest.mark.parametrize("f", [
    lambda a: jnp.sum(a[:100]),                                 # small
    lambda a: jnp.sum(a.reshape(64, 16384), axis=1),            # many outputs already
    lambda a: jnp.sum(a[:1031 * 1000].reshape(1031, 1000), axis=0),  # 1031 rows: prime
    lambda a: jnp.sum(a.reshape(64, 128, 128), axis=1),         # a middle dim
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
                   lambda a: np.sum(a.reshape(3, -1), axis=1)),
          "columns": (lambda a: jnp.sum(a.reshape(768, 1024), axis=0),
                      lambda a: np.sum(a.reshape(768, 1024), axis=0)),
          "column max": (lambda a: jnp.max(a.reshape(96, 8, 1024), axis=(0, 1)),
                         lambda a: np.max(a.reshape(96, 8, 1024), axis=(0, 1))),
          "middle": (lambda a: jnp.sum(a.reshape(12, 64, 1024), axis=1),
                     lambda a: np.sum(a.reshape(12, 64, 1024), axis=1)),
          "x.T rows": (lambda a: jnp.sum(a.reshape(768, 1024).T, axis=1),
                       lambda a: np.sum(a.reshape(768, 1024).T, axis=1))}
    if dtype == np.bool_:
        fs = {"any": (lambda a: jnp.any(a), np.any), "all": (lambda a: jnp.all(a), np.all),
              "column any": (lambda a: jnp.any(a.reshape(768, 1024), axis=0),
                             lambda a: np.any(a.reshape(768, 1024), axis=0))}
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
            # a float sum is off by ~eps x the sum of |terms|: near-zero columns need an
            # absolute tolerance on the scale of the largest result
            tol = 1e-5 if x.dtype.kind == "f" else 0
            np.testing.assert_allclose(got[0], want, rtol=tol,
                                       atol=tol * float(np.max(np.abs(want))), err_msg=name)
    finally:
        threads.set_num_threads(before)
