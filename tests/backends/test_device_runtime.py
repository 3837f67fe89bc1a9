"""The device runtime (ember/device_array.py, the device path of ember/dispatch.py) without a
chip: the tpu backend on jaxlib's CPU client as a stand-in platform, so arrays live in
PJRT buffers, jit's results stay there (DeviceArray), and dispatch is asynchronous, exactly
as on the TPU. On the chip's machine, `EMBER_TEST_ON_CHIP=1` runs the same tests on the real
TPU instead of the stand-in (benchmarks/tpu_check.py times the same calls there)."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the stand-in platform is jaxlib's CPU client: "
                    "pip install 'ember[xla]' (or the test extra)")

import ember  # noqa: E402
import ember.numpy as jnp  # noqa: E402
from ember import config  # noqa: E402
from ember import device_array as da  # noqa: E402
from ember.backends import tpu  # noqa: E402
from ember.backends.xla import platform  # noqa: E402


@pytest.fixture
def chip(monkeypatch):
    """The tpu backend on jaxlib's CPU client (or the real chip: EMBER_TEST_ON_CHIP=1); its
    first device, as ember sees it."""
    if not os.environ.get("EMBER_TEST_ON_CHIP"):
        monkeypatch.setattr(tpu, "_platform", lambda: platform("cpu", "xla-cpu"))
    monkeypatch.setenv("EMBER_TPU_KERNELS", "xla")  # (XLA's CPU compiler has no Mosaic)
    monkeypatch.setattr(da, "_DEVICES", {})
    (dev,) = ember.devices("tpu")
    return dev


def _f(x, y):
    return jnp.sin(x) * y + 1.5, jnp.sum(x * y)


def test_devices_and_the_default_platform(chip, monkeypatch) -> None:
    assert isinstance(chip, da.AcceleratorDevice) and chip.platform == "tpu"
    assert chip.backend == "tpu" and chip == ember.devices("tpu")[0] and chip.id == 0
    assert ember.default_backend() == "cpu" and ember.devices()[0].platform == "cpu"
    config.update("jax_platforms", "tpu,cpu")
    try:
        assert ember.default_backend() == "tpu"
        assert ember.devices() == [chip] and ember.local_devices() == [chip]
        y = ember.jit(lambda v: v * 2)(np.arange(4, dtype=np.float32))
        assert isinstance(y, da.DeviceArray) and y.device == chip
    finally:
        config.update("jax_platforms", None)
    assert ember.default_backend() == "cpu"


def test_jax_platforms_names_a_known_platform() -> None:
    with pytest.raises(ValueError, match="jax_platforms"):
        config.update("jax_platforms", "gpu")
    assert config.jax_platforms is None


def test_device_put_and_back(chip) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = ember.device_put(x, chip)
    assert isinstance(d, da.DeviceArray) and d.device == chip and d.devices() == {chip}
    assert d.shape == (3, 4) and d.dtype == np.float32
    assert d.sharding.device_set == {chip}
    assert d.block_until_ready() is d and d.is_ready()
    np.testing.assert_array_equal(np.asarray(d), x)
    assert "Array([[ 0.,  1.," in repr(d)
    assert ember.device_put(d, chip) is d  # (already there)
    host = ember.device_put(d, ember.devices("cpu")[0])
    assert type(host) is ember.array.ArrayImpl and host.device.platform == "cpu"
    np.testing.assert_array_equal(np.asarray(host), x)
    tree = ember.device_put({"a": x, "b": [1.0, 2]}, chip)
    assert all(isinstance(v, da.DeviceArray) for v in ember.tree_util.tree_leaves(tree))


@pytest.mark.parametrize("shape", [(7,), (3, 5), (64, 129)])
def test_jit_runs_where_its_arguments_are(chip, shape) -> None:
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    want = [np.asarray(v) for v in ember.jit(_f)(x, y)]  # (the CPU backend)
    f = ember.jit(_f)
    got = f(ember.device_put(x, chip), y)  # (one argument there: the call goes there)
    assert all(isinstance(v, da.DeviceArray) and v.device == chip for v in got)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6, atol=2e-5)
    # a chain of calls keeps the values on the device; a weak Python scalar rides along
    again = f(got[0], 2.0)
    np.testing.assert_allclose(np.asarray(again[0]), np.sin(want[0]) * 2 + 1.5, rtol=2e-6,
                               atol=2e-6)


def test_jit_device_and_backend_keywords(chip) -> None:
    x = np.linspace(0, 1, 33, dtype=np.float32)
    for f in (ember.jit(jnp.cos, device=chip), ember.jit(jnp.cos, backend="tpu")):
        y = f(x)
        assert isinstance(y, da.DeviceArray) and y.device == chip
        np.testing.assert_allclose(np.asarray(y), np.cos(x), rtol=1e-6)


def test_hidden_constants_and_integer_outputs(chip) -> None:
    table = np.arange(1000, dtype=np.int32) * 3  # (a constant big enough to be hidden)

    @ember.jit
    def f(i):
        return jnp.asarray(table)[i] + 1, i * 2

    i = ember.device_put(np.array([0, 5, 999], np.int32), chip)
    a, b = f(i)
    np.testing.assert_array_equal(np.asarray(a), [1, 16, 2998])
    np.testing.assert_array_equal(np.asarray(b), [0, 10, 1998])
    a2, _ = f(i)  # (the constants went to the device once; the second call reuses them)
    np.testing.assert_array_equal(np.asarray(a2), np.asarray(a))


def test_eager_operations_run_on_the_device(chip) -> None:
    x = ember.device_put(np.array([1.0, 4.0, 9.0], np.float32), chip)
    y = jnp.sqrt(x) + 1  # (two eager primitives, each jitted for the device)
    assert isinstance(y, da.DeviceArray) and y.device == chip
    np.testing.assert_allclose(np.asarray(y), [2.0, 3.0, 4.0])
    s = jnp.sum(x)
    assert isinstance(s, da.DeviceArray) and float(s) == 14.0 and x[1] == 4.0
    z = x * np.arange(3, dtype=np.float32) + 0.5  # (host operands go to the device)
    assert isinstance(z, da.DeviceArray) and z.weak_type is False
    np.testing.assert_allclose(np.asarray(z), [0.5, 4.5, 18.5])
    h = ember.device_put(np.ones(3, np.float32)) * 2  # (no operand there: the host)
    assert type(h) is ember.array.ArrayImpl


def test_donated_buffers_are_written_in_place(chip) -> None:
    f = ember.jit(lambda v, w: (v + 1, w * 2.0), donate_argnums=0)
    x = ember.device_put(np.ones(5, np.float32), chip)
    buffer = x._buffer
    y, z = f(x, np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(y), np.full(5, 2.0, np.float32))
    np.testing.assert_array_equal(np.asarray(z), np.arange(5) * 2.0)
    assert x.is_deleted() and buffer.is_deleted()  # (the runtime consumed it)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
    g = ember.jit(lambda v, w: (v + 1, w * 2.0), donate_argnums=0, backend="tpu")
    compiled = g.lower(np.ones(5, np.float32), np.ones(5, np.float32)).compile()
    exe = compiled._compiled.executable
    assert "input_output_alias={ {0}: (0, {}, may-alias) }" in exe.text
    # (the chip pads f32[5] to its tile: 512 bytes there, 20 on the stand-in)
    assert compiled.memory_analysis().alias_size_in_bytes in (20, 512)


def test_block_until_ready_on_a_pytree(chip) -> None:
    out = ember.jit(_f)(ember.device_put(np.ones(8, np.float32), chip), np.float32(2))
    assert ember.block_until_ready(out) is out and all(v.is_ready() for v in out)


def test_no_tpu_names_what_was_asked_and_found(monkeypatch) -> None:
    def missing():
        raise tpu.NoTpu("the tpu backend asked jaxlib for a TPU and found none: no libtpu")

    monkeypatch.setattr(tpu, "_platform", missing)
    monkeypatch.setattr(da, "_DEVICES", {})
    with pytest.raises(RuntimeError, match=r"Unknown backend: 'tpu' requested.*no libtpu"):
        ember.devices("tpu")
    with pytest.raises(RuntimeError, match="no libtpu"):
        ember.jit(jnp.sin, backend="tpu")(np.ones(3, np.float32))


def test_repeated_calls_take_the_device_fast_path(chip) -> None:
    from ember import fastpath

    f = ember.jit(lambda v, w: (v * w + 1, jnp.sum(v)))
    x = ember.device_put(np.arange(6, dtype=np.float32), chip)
    y = ember.device_put(np.full(6, 2.0, np.float32), chip)
    f(x, y)
    f(x, y)  # (a cache hit: installs the fast path)
    slow = fastpath.STATS["slow_calls"]
    a, s = f(x, y)
    assert fastpath.STATS["slow_calls"] == slow  # (taken)
    assert isinstance(a, da.DeviceArray) and a.device == chip
    np.testing.assert_array_equal(np.asarray(a), np.arange(6) * 2.0 + 1)
    assert float(s) == 15.0
    f(x, np.full(6, 2.0, np.float32))  # (a host argument: the normal path, same values)
    assert fastpath.STATS["slow_calls"] == slow + 1
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x, y)


def test_inspection_of_a_device_program(chip) -> None:
    """as_text (Ember's optimized HLO), runtime_hlo (XLA's), cost and memory analysis."""
    x = np.ones((64, 256), np.float32)

    def softmax(v):
        e = jnp.exp(v - jnp.max(v, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    c = ember.jit(softmax, backend="tpu").lower(x).compile()
    assert "HloModule jit_softmax" in c.as_text() and "is_scheduled=true" in c.runtime_hlo()
    cost = c.cost_analysis()
    assert cost["transcendentals"] == x.size and cost["bytes accessed"] >= 2 * x.nbytes
    mem = c.memory_analysis()
    assert mem.argument_size_in_bytes == x.nbytes and mem.output_size_in_bytes == x.nbytes
    assert mem.peak_memory_in_bytes >= 2 * x.nbytes


def test_roofline_on_the_device(chip, monkeypatch) -> None:
    """explain.profile(backend="tpu"): the chip's own ceilings and the program's device
    time; each Ember kernel gets a module of its own (parsed by XLA here: the stand-in
    platform cannot run Mosaic)."""
    import io

    from ember.backends.tpu.custom_calls import pin_layouts
    from ember.backends.xla import jaxlib
    from ember.explain import device_roofline as dr
    from ember.hlo.parser import parse_module

    monkeypatch.setattr(dr, "TRIAD_BYTES", 1_200_000)
    monkeypatch.setattr(dr, "PRODUCT_N", 128)
    monkeypatch.setattr(dr, "_MACHINES", {})
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)

    def softmax(v):
        e = jnp.exp(v - jnp.max(v, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    out = io.StringIO()
    p = ember.explain.profile(softmax, x, backend="tpu", file=out)
    assert p.machine.threads == 0 and p.machine.bandwidth > 0 and p.machine.peak_flops_f32 > 0
    (row,) = p.kernels  # (EMBER_TPU_KERNELS=xla: no Ember kernel, one row for XLA's part)
    assert row.bytes >= 2 * x.nbytes and row.transcendentals == x.size and row.seconds > 0
    assert "TFLOP/s peak (bf16 product)" in out.getvalue()
    assert "one whole call on the device" in out.getvalue()
    tm = tpu.tpu_module(tpu.optimize(ember.jit(softmax).lower(x)._lowered.module), "ember")
    (kernel,) = tm.kernels
    config = dr.kernel_configs(tm.module)[kernel.text]
    text = dr.kernel_module(kernel, config)
    assert text.count('custom_call_target="tpu_custom_call"') == 1
    assert parse_module(text).entry.root.opcode == "custom-call"  # (Ember reads it)
    pinned = pin_layouts(text, [kernel])  # (and XLA, with the layouts pinned)
    assert "operand_layout_constraints" in pinned
    assert jaxlib("tpu").hlo.hlo_module_from_text(pinned)
    assert dr._kernel_cost(config)["transcendentals"] == x.size
