"""The tpu backend on a TPU chip: the op tables of tests/ops and the programs of
test_xla_cpu.py through `jit(backend="tpu")`, against Ember's CPU backend, and the device
runtime (results stay on the chip). Skipped, with the reason printed, where no TPU is
present (CI; the chip's machine runs `pytest -p no:xdist tests/backends/test_tpu_chip.py`,
one process, as one program at a time may hold the chip).

Tolerances, float32 (the TPU has no float64 arithmetic of its own): correctly rounded ops
(ulp budget 0 in the table) within `EXACT_RTOL`, and `TINY` absolute (the TPU divides by
a reciprocal, which flushes to zero where it is subnormal); transcendentals within
`MATH_RTOL` relative plus `MATH_ATOL` absolute (the chip's math library is a few ulps from
the host's), the logarithms within `LOG_ATOL` absolute (the chip's log is accurate
absolutely, not relatively, near 1: measured 6e-5, and jax.jit's on the chip errs as
much: benchmarks/tpu_check.py's op table); products and sums at the default precision
within `PRODUCT_RTOL` of the largest entry (one bfloat16 pass on a TPU, as in JAX).
Integers and bools bit for bit. `AS_JAX`: ops that XLA computes on the chip (no Ember
kernel) and whose TPU results are far from the host's (XLA's logistic loses relative
accuracy below 1e-3 and gives 0 below ~1e-20; its rem is off by 1e-5 relative and NaN
where the host's is not): these must equal `jax.jit`'s on the same chip.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the tpu backend needs jaxlib and libtpu")

import ember  # noqa: E402


def _chip() -> Any:
    try:
        return ember.devices("tpu")[0]
    except RuntimeError as e:
        return str(e)


CHIP = _chip()
if isinstance(CHIP, str):
    pytest.skip(f"no TPU here: {CHIP[:200]}", allow_module_level=True)

import test_lax_elementwise as table  # noqa: E402  (tests/ops, on sys.path: conftest.py)
import test_xla_cpu  # noqa: E402  (tests/backends)
from op_tables import sample, seeded_rng  # noqa: E402

import ember.numpy as jnp  # noqa: E402
from ember import device_array as da  # noqa: E402

EXACT_RTOL, TINY = 2e-7, 1e-30
MATH_RTOL, MATH_ATOL = 1e-4, 1e-5
LOG_ATOL = 2e-4
LOGS = {"log", "log1p", "atanh", "acosh", "asinh"}
PRODUCT_RTOL = 2e-2
F32 = np.dtype(np.float32)


AS_JAX = {"logistic": "logistic", "rem": "rem"}


def same_as_jax(name: str, fn: Callable[..., Any], args: list[Any]) -> None:
    import jax

    got = on("tpu", fn, *args)[0]
    want = np.asarray(jax.jit(getattr(jax.lax, AS_JAX[name]))(*args))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=TINY, equal_nan=True)


def on(backend: str, fn: Callable[..., Any], *args: Any) -> tuple[np.ndarray, ...]:
    compiled = ember.jit(fn, backend=backend).lower(*args).compile()
    # (no silent fallback: a module XLA cannot take would run on the host's interpreter)
    assert compiled._compiled.backend == backend, f"{backend} fell back"
    out = compiled(*args)
    out = out if isinstance(out, tuple | list) else (out,)
    return tuple(np.asarray(o) for o in out)


def compare(fn: Callable[..., Any], args: list[Any], rtol: float, atol: float,
            kernels: str = "auto", of_largest: bool = False) -> None:
    """`fn` on the chip against the CPU backend (`of_largest`: `atol` is relative to the
    largest entry of each result)."""
    os.environ["EMBER_TPU_KERNELS"] = kernels
    try:
        got = on("tpu", fn, *args)
    finally:
        del os.environ["EMBER_TPU_KERNELS"]
    want = on("cpu", fn, *args)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        if w.dtype.kind == "f":
            w = test_xla_cpu.flushed(w)
            finite = np.abs(w[np.isfinite(w)])
            scale = atol * (float(finite.max()) if of_largest and finite.size else 1.0)
            np.testing.assert_allclose(test_xla_cpu.flushed(g), w, rtol=rtol, atol=scale,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("kernels", ["ember"])  # (route 1: the programs, tpu_check)
@pytest.mark.parametrize("name", [n for n in table.FLOAT_UNARY
                                  if n not in test_xla_cpu.FALLS_BACK])
def test_float_unary(name: str, kernels: str) -> None:
    fn, _, budget, (lo, hi) = table.FLOAT_UNARY[name]
    x = sample((8, 128), F32, seeded_rng("tpu", name), lo, hi, test_xla_cpu.edges(F32))
    rtol, atol = (EXACT_RTOL, TINY) if budget == 0 else (MATH_RTOL, MATH_ATOL)
    atol = LOG_ATOL if name in LOGS else atol
    if name in AS_JAX:
        return same_as_jax(name, fn, [x])
    compare(lambda v: fn(v) * 1.0, [x], rtol, atol, kernels)


@pytest.mark.parametrize("kernels", ["ember"])  # (route 1: the programs, tpu_check)
@pytest.mark.parametrize("name", list(table.FLOAT_BINARY))
def test_float_binary(name: str, kernels: str) -> None:
    fn, _, budget, xr, yr = table.FLOAT_BINARY[name]
    rng = seeded_rng("tpu", name)
    edges = test_xla_cpu.edges(F32)
    x, y = sample((8, 128), F32, rng, *xr, edges), sample((8, 128), F32, rng, *yr, edges)
    rtol, atol = (EXACT_RTOL, TINY) if budget == 0 else (MATH_RTOL, MATH_ATOL)
    if name in AS_JAX:
        return same_as_jax(name, fn, [x, y])
    compare(lambda a, b: fn(a, b), [x, y], rtol, atol, kernels)


@pytest.mark.parametrize("name", list(test_xla_cpu.PROGRAMS))
def test_program(name: str) -> None:
    fn, make = test_xla_cpu.PROGRAMS[name]
    args = [a.astype(F32) if isinstance(a, np.ndarray | np.floating) and a.dtype.kind == "f"
            else a for a in make(seeded_rng("tpu-prog", name))]
    compare(fn, args, PRODUCT_RTOL, PRODUCT_RTOL, of_largest=True)


def test_results_stay_on_the_chip() -> None:
    x = np.linspace(-1, 1, 4096, dtype=np.float32).reshape(32, 128)
    d = ember.device_put(x, CHIP)
    f = ember.jit(lambda v: jnp.exp(v - jnp.max(v, axis=-1, keepdims=True)))
    y = f(d)
    assert isinstance(y, da.DeviceArray) and y.device == CHIP
    z = f(y)  # (chained: no copy to the host in between)
    assert isinstance(z, da.DeviceArray) and z.block_until_ready() is z
    ref = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(z), np.exp(ref - ref.max(-1, keepdims=True)),
                               rtol=MATH_RTOL, atol=MATH_ATOL)
    g = ember.jit(lambda v: v * 2, donate_argnums=0)
    w = g(ember.device_put(x, CHIP))
    np.testing.assert_array_equal(np.asarray(w), x * 2)


def test_roofline_of_ember_kernels() -> None:
    """explain.profile(backend="tpu") with Ember's row kernel: the kernel timed alone
    against the chip's measured bandwidth; no XLA row when the kernel is the program."""
    import io

    x = np.random.default_rng(0).standard_normal((1024, 2048)).astype(np.float32)

    def softmax(v):
        e = jnp.exp(v - jnp.max(v, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    os.environ["EMBER_TPU_KERNELS"] = "ember"
    try:
        out = io.StringIO()
        p = ember.explain.profile(softmax, x, backend="tpu", file=out)
    finally:
        del os.environ["EMBER_TPU_KERNELS"]
    (row,) = p.kernels
    assert row.kind == "Ember row kernel" and row.bytes >= 2 * x.nbytes and row.seconds > 0
    assert p.machine.bandwidth > 1e11 and "no row for XLA's part" in out.getvalue()
