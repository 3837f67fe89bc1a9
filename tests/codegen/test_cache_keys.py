"""The CPU compile cache key covers everything that changes the code: EMBER_DISABLE_PASSES."""

from __future__ import annotations

import numpy as np

import ember
import ember.numpy as jnp
from ember.backends import cpu
from ember.lowering import lower_jaxpr


def test_disabling_a_pass_is_not_served_from_the_cache(monkeypatch):
    x = np.ones(1000, np.float32)
    module = lower_jaxpr(ember.make_jaxpr(lambda a: jnp.exp(a) * 2 + 1)(x), "f").module
    monkeypatch.delenv("EMBER_DISABLE_PASSES", raising=False)
    fused = cpu.compile(module)
    monkeypatch.setenv("EMBER_DISABLE_PASSES", "fusion")
    unfused = cpu.compile(module)
    assert len(fused.kernel_names) == 1
    assert len(unfused.kernel_names) > 1
    np.testing.assert_array_equal(fused(x), unfused(x))
