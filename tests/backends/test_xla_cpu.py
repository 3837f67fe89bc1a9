"""The xla-cpu backend (ember/backends/xla_cpu/, the XLA route of ember/backends/xla/) against
Ember's CPU backend: the elementwise op tables of tests/ops/test_lax_elementwise.py and
programs with reductions, products, loops, branches, gathers, scatters and sorts.

Each check compiles one function on both backends (`EMBER_BACKEND`) and asserts the
xla-cpu compile really ran on XLA (no fallback to the interpreter). Tolerances: integers,
bools and correctly rounded float ops (ulp budget 0 in the table) bit for bit; other float
math within `XLA_ULPS` of Ember's result (each library is a few ulps from the true value,
in its own direction; the expansions of ember/backends/xla/legalize.py add a few); float
sums and products in any order, within `SUM_RTOL`. XLA's CPU runtime flushes subnormals
to zero (FTZ and DAZ, as `jax.jit` on a CPU): the inputs carry the table's edge values
except subnormals, and subnormal results compare as zeros of their sign.

Skipped, with the reason, where jaxlib is not installed (`pip install 'ember[xla]'`; the
test extra has it, so CI runs these).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the xla-cpu backend needs jaxlib: "
                    "pip install 'ember[xla]' (or the test extra)")

import test_lax_elementwise as table  # noqa: E402  (tests/ops, on sys.path: conftest.py)
from op_tables import X64, assert_matches, edge_values, sample, seeded_rng  # noqa: E402

import ember  # noqa: E402
import ember.numpy as jnp  # noqa: E402
from ember import backends, lax  # noqa: E402
from ember.backends.xla.legalize import legalize, xla_text  # noqa: E402
from ember.hlo.parser import parse_module  # noqa: E402

# Extra ulps XLA's math may differ from Ember's per float dtype, over the table's budget
# (twice it: the two libraries may err on opposite sides). Measured worst: a few ulps.
XLA_ULPS = {np.dtype(np.float32): 4, np.dtype(np.float64): 4}
# XLA's algebraic simplifier divides by a broadcast scalar as a multiplication by its
# reciprocal (as under jax.jit): one rounding more than IEEE division
XLA_EXTRA_ULPS = {"div": 1}
# lax functions whose opcode XLA's HLO lacks (ember/backends/xla/legalize.py): they run on
# the interpreter, checked in test_ops_xla_lacks_fall_back_to_the_interpreter
FALLS_BACK = {"erfc"}
# ... and per dtype: f64 erf-inv (legalize.py expands f32 only)
FALLS_BACK_F64 = {"erf_inv"}
# Float reductions and products: XLA vectorizes sums in its own order.
SUM_RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}

DTYPES = [np.dtype(t) for t in (np.float32, np.float64)]
INT_DTYPES = [np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.uint32, np.int64)]


@pytest.fixture
def maybe_x64(request: pytest.FixtureRequest) -> Callable[[np.dtype], None]:
    def use(dtype: np.dtype) -> None:
        if np.dtype(dtype) in X64:
            request.getfixturevalue("x64")
    return use


def edges(dtype: np.dtype) -> np.ndarray:
    """op_tables' edge values without the subnormals (XLA's CPU code flushes them)."""
    ev = edge_values(dtype)
    if ev.dtype.kind != "f":
        return ev
    return ev[~((ev != 0) & (np.abs(ev) < np.finfo(ev.dtype).tiny))]


def flushed(x: np.ndarray) -> np.ndarray:
    """Subnormals as zeros of their sign (what XLA's CPU code produces)."""
    if x.dtype.kind != "f":
        return x
    sub = (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)
    return np.where(sub, np.copysign(np.zeros_like(x), x), x)


def run_on(backend: str, fn: Callable[..., Any], *args: Any) -> Any:
    """fn compiled on `backend` (asserted: no fallback), called on args; NumPy results."""
    old = os.environ.get("EMBER_BACKEND")
    os.environ["EMBER_BACKEND"] = backend
    try:
        compiled = ember.jit(fn).lower(*args).compile()
    finally:
        if old is None:
            del os.environ["EMBER_BACKEND"]
        else:
            os.environ["EMBER_BACKEND"] = old
    assert compiled._compiled.backend == backend, f"{backend} fell back"
    out = compiled(*args)
    if isinstance(out, tuple | list):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


def both(fn: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    return run_on("xla-cpu", fn, *args), run_on("cpu", fn, *args)


def assert_close(got: Any, want: Any, ulps: int | None = 0, rtol: float | None = None,
                 what: str = "") -> None:
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype)
        g, w = flushed(g), flushed(w)
        if rtol is not None and g.dtype.kind == "f":
            assert_matches(g, w, rtol=rtol, atol=rtol, ignore_zero_sign=True, what=what)
        else:
            assert_matches(g, w, ulps=ulps, what=what)


# -- the op tables ----------------------------------------------------------------------------

def _shapes_of(x: np.ndarray) -> list[np.ndarray]:
    return [x.reshape(-1)[:33], x.reshape(-1)[:24].reshape(2, 3, 4), x.reshape(-1)[0]]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(table.FLOAT_UNARY))
def test_float_unary(name: str, dtype: np.dtype, maybe_x64: Any) -> None:
    if name in FALLS_BACK or (name in FALLS_BACK_F64 and dtype == np.float64):
        pytest.skip(f"{name}: no XLA opcode, runs on the interpreter (tested below)")
    maybe_x64(dtype)
    fn, _, budget, (lo, hi) = table.FLOAT_UNARY[name]
    x = sample((64,), dtype, seeded_rng("xla", name, dtype), lo, hi, edges(dtype))
    ulps = 0 if budget == 0 else 2 * budget + XLA_ULPS[dtype]
    got, want = both(lambda *xs: tuple(fn(v) for v in xs), *_shapes_of(x))
    assert_close(got, want, ulps=ulps, what=name)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(table.FLOAT_BINARY))
def test_float_binary(name: str, dtype: np.dtype, maybe_x64: Any) -> None:
    maybe_x64(dtype)
    fn, _, budget, xr, yr = table.FLOAT_BINARY[name]
    rng = seeded_rng("xla", name, dtype)
    x, y = sample((33,), dtype, rng, *xr, edges(dtype)), sample((33,), dtype, rng, *yr,
                                                                edges(dtype))
    ulps = XLA_EXTRA_ULPS.get(name, 0) if budget == 0 else 2 * budget + XLA_ULPS[dtype]
    got, want = both(lambda a, b, s: (fn(a, b), fn(a, s)), x, y, y[3])
    assert_close(got, want, ulps=ulps, what=name)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: d.name)
def test_int_ops(dtype: np.dtype, maybe_x64: Any) -> None:
    """Every integer unary and binary record of the table, in one program per dtype."""
    maybe_x64(dtype)
    rng = seeded_rng("xla-int", dtype)
    x, y = sample((33,), dtype, rng), sample((33,), dtype, rng)
    bits = 8 * dtype.itemsize
    counts = sample((33,), dtype, rng, 0, bits + 2, edges=np.array([0, bits - 1, bits]))
    unary = [f for f, _, kinds in table.INT_UNARY.values() if dtype.kind in kinds]
    binary = [(name, f) for name, (f, _) in table.INT_BINARY.items()]

    def program(x: Any, y: Any, c: Any) -> tuple[Any, ...]:
        outs = [f(x) for f in unary]
        outs += [f(x, c if name in table.SHIFTS else y) for name, f in binary]
        outs += [f(x, y) for f, _ in table.COMPARISONS.values()]
        return tuple(outs)

    got, want = both(program, x, y, counts)
    assert_close(got, want, what=dtype.name)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_comparisons_and_bool(dtype: np.dtype, maybe_x64: Any) -> None:
    maybe_x64(dtype)
    rng = seeded_rng("xla-cmp", dtype)
    x, y = (sample((33,), dtype, rng, -3, 3, edges(dtype)),
            sample((33,), dtype, rng, -3, 3, edges(dtype)))
    p = x > 0

    def program(x: Any, y: Any, p: Any) -> tuple[Any, ...]:
        cmps = tuple(f(x, y) for f, _ in table.COMPARISONS.values())
        return (*cmps, lax.bitwise_not(p), lax.bitwise_xor(p, y > 0), jnp.where(p, x, y))

    got, want = both(program, x, y, p)
    assert_close(got, want)


# -- programs ---------------------------------------------------------------------------------

def _softmax(x: Any) -> Any:
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    return e / jnp.sum(e, axis=-1, keepdims=True)


PROGRAMS: dict[str, tuple[Callable[..., Any], Callable[[np.random.Generator], list[Any]]]] = {
    "reductions": (lambda x: (jnp.sum(x, axis=0), jnp.max(x, axis=1), jnp.argmax(x, axis=1),
                              jnp.min(x), jnp.mean(x, axis=(0, 1)), jnp.cumsum(x, axis=1)),
                   lambda r: [r.standard_normal((9, 17))]),
    "softmax_layernorm": (lambda x: (_softmax(x), (x - x.mean(-1, keepdims=True))
                                     / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)),
                          lambda r: [r.standard_normal((8, 33))]),
    # (a causal mask: its iotas are the row kernel's inputs on the TPU, tpu/iota_inputs.py)
    "causal_softmax": (lambda x: _softmax(jnp.where(jnp.tri(8, 33, dtype=bool), x, -jnp.inf)),
                       lambda r: [r.standard_normal((8, 33))]),
    "dots": (lambda a, b, v: (a @ b, jnp.dot(a, v), jnp.einsum("ij,ij->i", a, a),
                              jnp.tanh(a @ b) @ b.T),
             lambda r: [r.standard_normal((12, 20)), r.standard_normal((20, 7)),
                        r.standard_normal(20)]),
    "batched_dot": (lambda a, b: jnp.matmul(a, b),
                    lambda r: [r.standard_normal((3, 5, 4)), r.standard_normal((3, 4, 6))]),
    "while": (lambda x: lax.fori_loop(0, 7, lambda i, v: v * 0.5 + jnp.sin(v) + i, x),
              lambda r: [r.standard_normal(10)]),
    "while_dynamic": (lambda x, n: lax.while_loop(lambda c: c[0] < n,
                                                  lambda c: (c[0] + 1, c[1] * 1.5 - 1),
                                                  (0, x))[1],
                      lambda r: [r.standard_normal(6), np.int32(5)]),
    "cond": (lambda p, x: (lax.cond(p > 0, jnp.sin, jnp.cos, x),
                           lax.switch(2, [jnp.exp, jnp.tanh, lambda v: v * 2], x)),
             lambda r: [np.float32(0.5), r.standard_normal(5)]),
    "scan": (lambda x: lax.scan(lambda c, v: (c + v, c * v), 0.0, x),
             lambda r: [r.standard_normal(11)]),
    "gather": (lambda x, i: (x[i], x[:, i], jnp.take(x, i, axis=0), x[1:5:2, ::-1]),
               lambda r: [r.standard_normal((6, 5)), np.array([0, 3, 1, 5, -1], np.int32)]),
    "scatter": (lambda x, i, u: (x.at[i].add(u), x.at[i].set(u), x.at[i].max(u),
                                 x.at[2:4].multiply(3.0)),
                lambda r: [r.standard_normal((6, 5)), np.array([0, 3, 3, 5], np.int32),
                           r.standard_normal((4, 5))]),
    "dynamic_update_slice": (lambda x, u, k: lax.dynamic_update_slice(x, u, (k, 0)),
                             lambda r: [r.standard_normal((6, 5)), r.standard_normal((2, 5)),
                                        np.int32(3)]),
    "sort": (lambda x, k: (jnp.sort(x), jnp.argsort(x), jnp.sort(x, axis=0),
                           lax.sort((k, x[0]), num_keys=1)),
             lambda r: [r.standard_normal((4, 9)), r.integers(0, 4, 9).astype(np.int32)]),
    # top_k's comparator orders floats by their bits (-NaN lowest, -0.0 below +0.0):
    # partition puts every element back once
    "top_k_partition": (lambda x: (lax.top_k(x, 5), jnp.partition(x, 3, axis=1),
                                   jnp.argpartition(x, 1, axis=0)),
                        lambda r: [np.where(r.random((4, 9)) < 0.2, np.float32(np.nan),
                                            np.where(r.random((4, 9)) < 0.2, np.float32(-0.0),
                                                     r.standard_normal((4, 9)))) * np.where(
                                   r.random((4, 9)) < 0.5, 1, -1)]),
    "shapes": (lambda x: (x.T, x.reshape(5, 6), jnp.concatenate([x, x * 2], axis=0),
                          jnp.pad(x, ((1, 2), (0, 1))), jnp.flip(x, 0), jnp.tile(x, (2, 1)),
                          jnp.broadcast_to(x[:, :1], (6, 5)), lax.iota(np.int32, 7)),
               lambda r: [r.standard_normal((6, 5))]),
    "converts": (lambda x: (x.astype(np.int32), x.astype(np.uint8), (x > 0).astype(np.float32),
                            lax.bitcast_convert_type(x, np.int32), jnp.clip(x, -1, 1)),
                 lambda r: [r.standard_normal(17) * 100]),
}



# -- transformed programs: what a JAX user's code does around the ops --------------------------
# Gradients, vmap, random numbers and checkpointing produce ordinary jaxprs, so every backend
# must run them like any other program (these run on the TPU chip too: test_tpu_chip.py).

def _mlp_loss(params: Any, x: Any, y: Any) -> Any:
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    logp = z - jax_like_logsumexp(z)
    return -jnp.mean(jnp.sum(y * logp, axis=-1))


def jax_like_logsumexp(z: Any) -> Any:
    m = lax.stop_gradient(jnp.max(z, axis=-1, keepdims=True))
    return m + jnp.log(jnp.sum(jnp.exp(z - m), axis=-1, keepdims=True))


def _sgd_step(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
    params = ((w1, b1), (w2, b2))
    loss, grads = ember.value_and_grad(_mlp_loss)(params, x, y)
    new = ember.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return (loss, *ember.tree_util.tree_leaves(new))


@ember.custom_jvp
def _log1pexp(x: Any) -> Any:
    return jnp.log1p(jnp.exp(x))


@_log1pexp.defjvp
def _log1pexp_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _log1pexp(x), t * lax.logistic(x)


def _scan_loss(w: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        c = jnp.tanh(c * w + x)
        return c, jnp.sum(c * c)
    _, ys = lax.scan(ember.checkpoint(body), jnp.zeros_like(xs[0]), xs)
    return jnp.sum(ys)


def _random_draws(key: Any) -> Any:
    k1, k2, k3 = ember.random.split(key, 3)
    return (ember.random.normal(k1, (4, 33)), ember.random.uniform(k2, (17,)),
            ember.random.bits(k3, (9,)), ember.random.permutation(k3, 12))


TRANSFORMED: dict[str, tuple[Callable[..., Any], Callable[[np.random.Generator], list[Any]]]] = {
    "mlp_sgd_step": (_sgd_step,
                     lambda r: [r.standard_normal((12, 16)) * 0.3, r.standard_normal(16) * 0.1,
                                r.standard_normal((16, 5)) * 0.3, r.standard_normal(5) * 0.1,
                                r.standard_normal((8, 12)),
                                np.eye(5)[r.integers(0, 5, 8)]]),
    "grad_of_grad": (lambda x: (ember.grad(ember.grad(lambda v: jnp.sin(v) * v ** 3))(x),
                                ember.hessian(lambda v: jnp.sum(jnp.tanh(v) * v[::-1]))(
                                    jnp.stack([x, x * 0.5, x - 1])),
                                ember.jacrev(lambda v: jnp.cumsum(jnp.exp(v) * v))(
                                    jnp.stack([x, -x]))),
                     lambda r: [np.float64(r.standard_normal())]),
    "jvp_vjp": (lambda x, t: (ember.jvp(lambda v: jnp.sum(jnp.sin(v) ** 2, axis=0), (x,), (t,)),
                              ember.vjp(lambda v: jnp.cumprod(v, axis=1), x)[1](t),
                              ember.grad(lambda v: jnp.sum(_log1pexp(v)))(x)),
                lambda r: [r.standard_normal((5, 6)), r.standard_normal((5, 6))]),
    "vmap": (lambda x, w: (ember.vmap(lambda v: v @ w + jnp.max(v))(x),
                           ember.vmap(lambda v, i: jnp.roll(v, 1) * i, in_axes=(1, 0))(x, w[:, 0]),
                           ember.vmap(ember.grad(lambda v: jnp.sum(jnp.tanh(v * w[0, 0]))))(x)),
             lambda r: [r.standard_normal((6, 4)), r.standard_normal((4, 6))]),
    "scan_checkpoint_grad": (lambda w, xs: ember.tree_util.tree_leaves(
                                 ember.value_and_grad(_scan_loss, argnums=(0, 1))(w, xs)),
                             lambda r: [r.standard_normal(7) * 0.5, r.standard_normal((10, 7))]),
    "random": (_random_draws, lambda r: [np.array([0, 42], np.uint32)]),
}
PROGRAMS.update(TRANSFORMED)

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program(name: str, dtype: np.dtype, maybe_x64: Any) -> None:
    maybe_x64(dtype)
    fn, make = PROGRAMS[name]
    if name == "converts" and dtype == np.float64:
        pytest.skip("bitcast to int32 is a float32 program")
    if name == "random" and dtype == np.float64:
        pytest.skip("f64 normals draw through f64 erf-inv, which runs on the interpreter")
    args = [a.astype(dtype) if isinstance(a, np.ndarray | np.floating) and a.dtype.kind == "f"
            else a for a in make(seeded_rng("xla-prog", name))]
    got, want = both(fn, *args)
    assert_close(got, want, rtol=SUM_RTOL[dtype], what=name)


# -- the route --------------------------------------------------------------------------------

def test_ops_xla_lacks_fall_back_to_the_interpreter() -> None:
    """erfc has no HLO opcode in XLA and no short accurate expansion: Unsupported, and jit
    runs the program on the interpreter (with the same values)."""
    x = np.linspace(-2, 8, 9).astype(np.float32)
    module = parse_module("""HloModule m
ENTRY %main (x: f32[9]) -> f32[9] {
  %x = f32[9] parameter(0)
  ROOT %r = f32[9] erfc(%x)
}
""")
    with pytest.raises(backends.Unsupported, match="erfc"):
        backends.get("xla-cpu").compile(module)
    os.environ["EMBER_BACKEND"] = "xla-cpu"
    try:
        compiled = ember.jit(lax.erfc).lower(x).compile()
    finally:
        del os.environ["EMBER_BACKEND"]
    assert compiled._compiled.backend == "interpreter"
    np.testing.assert_allclose(np.asarray(compiled(x)), run_on("cpu", lax.erfc, x), rtol=1e-6)


def test_erf_inv_expands_for_f32_and_falls_back_for_f64(x64: Any) -> None:
    """f32 erf-inv (and bf16, widened to f32) is expanded for XLA, with its edges: +-1 ->
    +-inf, |x| > 1 and NaN -> NaN, -0.0 kept; f64 has no expansion: Unsupported naming
    f64, and the interpreter runs it."""
    x = np.array([-1.0, -0.999999, -0.5, -0.0, 0.0, 1e-30, 0.3, 0.49999, 0.5, 0.9999, 1.0,
                  1.5, -2.0, np.nan, np.inf], np.float32)
    got, want = both(lax.erf_inv, x)
    assert_close(got, want, ulps=2 * table.FLOAT_UNARY["erf_inv"][2] + XLA_ULPS[x.dtype])
    assert np.signbit(got[3]) and not np.signbit(got[4])
    xb = x.astype(ml_dtypes.bfloat16)
    got_b, want_b = both(lax.erf_inv, xb)
    np.testing.assert_allclose(got_b.astype(np.float32), want_b.astype(np.float32),
                               rtol=1e-2, equal_nan=True)
    os.environ["EMBER_BACKEND"] = "xla-cpu"
    try:
        compiled = ember.jit(lax.erf_inv).lower(x.astype(np.float64)).compile()
    finally:
        del os.environ["EMBER_BACKEND"]
    assert compiled._compiled.backend == "interpreter"
    module = parse_module("""HloModule m
ENTRY %main (x: f64[3]) -> f64[3] {
  %x = f64[3] parameter(0)
  ROOT %r = f64[3] erf-inv(%x)
}
""")
    with pytest.raises(backends.Unsupported, match="erf-inv of f64"):
        backends.get("xla-cpu").compile(module)


def test_xla_text_legalizes_and_respells() -> None:
    module = parse_module("""HloModule m
ENTRY %main (x: s32[4], y: f32[4], u: u8[4]) -> (s32[4], f32[4], u8[4]) {
  %x = s32[4] parameter(0)
  %y = f32[4] parameter(1)
  %u = u8[4] parameter(2)
  %c = s32[4] clz(%x)
  %a = f32[4] atan(%y)
  %s = f32[4] sinh(%a)
  %b = u8[4] abs(%u)
  ROOT %t = (s32[4], f32[4], u8[4]) tuple(%c, %s, %b)
}
""")
    assert legalize(module)
    text = xla_text(module)
    assert "count-leading-zeros(" in text and " clz(" not in text
    assert " atan(" not in text and " sinh(" not in text and "atan2(" in text
    assert "u8[4] abs(" not in text  # (of an unsigned type: the operand itself)
    assert not legalize(module)  # nothing left to rewrite


def test_nested_tuple_results_and_runtime_hlo() -> None:
    module = parse_module("""HloModule m
ENTRY %main (x: f32[3]) -> ((f32[3], f32[3]), f32[3]) {
  %x = f32[3] parameter(0)
  %n = f32[3] negate(%x)
  %i = (f32[3], f32[3]) tuple(%x, %n)
  ROOT %t = ((f32[3], f32[3]), f32[3]) tuple(%i, %n)
}
""")
    exe = backends.get("xla-cpu").compile(module)
    x = np.arange(3, dtype=np.float32)
    (a, b), c = exe(x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, -x)
    np.testing.assert_array_equal(c, -x)
    assert "ENTRY" in exe.runtime_hlo()  # XLA's optimized HLO


def test_float64_arguments_stay_float64() -> None:
    """JAX's own x64 flag is off: arguments must still go in as f64 (Ember chose them)."""
    xla = backends.get("xla-cpu")
    module = parse_module("""HloModule m
ENTRY %main (x: f64[2]) -> f64[2] {
  %x = f64[2] parameter(0)
  ROOT %r = f64[2] multiply(%x, %x)
}
""")
    x = np.array([1 + 2.0 ** -40, 3.0])
    got = xla.to_host(xla.compile(module)(xla.to_device(x)))
    assert got.dtype == np.float64 and got[0] == x[0] * x[0]


MISSING_JAXLIB = """
import sys
sys.modules["jax"] = sys.modules["jaxlib"] = None  # (as if not installed)
import numpy as np, ember
from ember import backends
from ember.hlo.parser import parse_module
m = parse_module('''HloModule m
ENTRY %main (x: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  ROOT %r = f32[2] negate(%x)
}
''')
try:
    backends.get("xla-cpu").compile(m)
except ImportError as e:
    print("ERROR", e)
"""

NO_JAX_ON_CPU = """
import sys, numpy as np, ember, ember.numpy as jnp
ember.jit(lambda x: jnp.sin(x) @ x)(np.ones((3, 3), np.float32))
print(sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib")))
"""


def _python(code: str) -> str:
    env = dict(os.environ, EMBER_ENABLE_CHECKS="0")
    env.pop("EMBER_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_without_jaxlib_the_error_names_the_extra() -> None:
    line = _python(MISSING_JAXLIB)
    assert line.startswith("ERROR the xla-cpu backend needs jaxlib"), line
    assert "pip install 'ember[xla]'" in line


def test_the_cpu_path_never_imports_jax() -> None:
    assert _python(NO_JAX_ON_CPU) == "[]"


def test_compile_jaxpr_takes_a_backend_name() -> None:
    """The hook jit's `backend=` calls: a backend for one compilation, whatever
    EMBER_BACKEND says."""
    from ember.compiler import compile_jaxpr

    x = np.linspace(0, 1, 5).astype(np.float32)
    closed = ember.make_jaxpr(lambda v: jnp.cos(v) + 1)(x)
    compiled = compile_jaxpr(closed, "f", backend="xla-cpu")
    assert compiled.backend == "xla-cpu"
    (out,) = compiled([x])
    np.testing.assert_allclose(out, np.cos(x) + 1, rtol=1e-6)


def test_jit_backend_xla_cpu_per_function() -> None:
    """jit(backend="xla-cpu") hands this function's optimized HLO to XLA while other jitted
    functions stay on EMBER_BACKEND's backend."""
    x = np.linspace(-1, 1, 7).astype(np.float32)

    def f(v):
        return jnp.tanh(v) * 3 - v

    on_xla = ember.jit(f, backend="xla-cpu")
    assert on_xla.lower(x).compile()._compiled.backend == "xla-cpu"
    assert ember.jit(f).lower(x).compile()._compiled.backend == "cpu"
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(on_xla(x)), np.tanh(x) * 3 - x, rtol=1e-6)
