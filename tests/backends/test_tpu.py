"""The tpu backend (ember/backends/tpu/) without a chip: the error where no TPU is present,
and Ember's Mosaic kernels for the elementwise op tables (f32, bf16, int32) and the row
kinds (softmax, layernorm, logsumexp, variance), each parsed and verified with the Mosaic
dialects of jaxlib's MLIR and run through Mosaic's serialization pass, with the kernel
count of each program checked, and the module the TPU compiler would get read by XLA's own
HLO parser and converted to StableHLO. What the kernels compute is checked too: the NumPy
evaluator of tests/backends/mosaic_eval.py runs them (grid, windows, partial blocks, SMEM
scalars) against Ember's CPU backend, f32 within a few ulps, integers bit for bit.

Mosaic's layout passes (infer-memref-layout, apply-vector-layout) are in libtpu, not in
jaxlib: they cannot run here (ember/backends/tpu/verify.py). Running the kernels needs the
TPU machine (benchmarks/tpu_check.py).

Skipped, with the reason, where jaxlib is not installed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jaxlib", reason="the tpu backend's checks need jaxlib's MLIR: "
                    "pip install 'ember[xla]' (or the test extra)")

import mosaic_eval  # noqa: E402  (tests/backends, on sys.path)

import ember  # noqa: E402
import ember.numpy as jnp  # noqa: E402
from ember import backends, config, lax  # noqa: E402
from ember.backends import tpu  # noqa: E402
from ember.backends.tpu import blocks as blk  # noqa: E402
from ember.backends.tpu import custom_calls, verify  # noqa: E402
from ember.backends.xla import jaxlib  # noqa: E402
from ember.hlo.parser import parse_module  # noqa: E402


def tpu_module(f: Callable[..., Any], *args: Any, kernels: str = "ember") -> tpu.TpuModule:
    """`f`'s module as the TPU compiler would get it (Ember's kernels chosen by `kernels`)."""
    module = ember.jit(f).lower(*args)._lowered.module
    return tpu.tpu_module(tpu.optimize(module), kernels)


def checked(tm: tpu.TpuModule, count: int) -> list[str]:
    """The kernels' texts, after checking there are `count`, each verifies and serializes,
    and the module with them parses in XLA (and converts to StableHLO)."""
    assert len(tm.kernels) == count, (len(tm.kernels), getattr(tm.module, "tpu_refusals", []))
    for k in tm.kernels:
        verify.verify(k.text)
        assert verify.serialize(k.text)
    assert tm.text.count('custom_call_target="tpu_custom_call"') == count
    assert tm.text.count("operand_layout_constraints={") == count  # (row-major, pinned)
    lib = jaxlib("tpu")
    hlo = lib.hlo.hlo_module_from_text(tm.text)
    assert lib.jax.mlir.hlo_to_stablehlo(hlo.as_serialized_hlo_module_proto())
    calls = [i for c in tm.module.computations for i in c.instructions
             if i.opcode == "custom-call"]
    assert [custom_calls.kernel_text(c.attrs["backend_config"]) for c in calls] == \
        [k.text for k in tm.kernels]
    for c in calls:
        config = json.loads(c.attrs["backend_config"])["custom_call_config"]
        assert config["needs_layout_passes"] is True
        cost = config["cost_estimate"]
        assert cost["bytes_accessed"] >= sum(o.shape.size for o in c.operands)  # (>= 1 B)
        assert set(cost) == {"flops", "transcendentals", "bytes_accessed",
                             "remote_bytes_transferred"}
    return [k.text for k in tm.kernels]


def arg(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-50, 50, shape).astype(dtype)


# -- no TPU here -------------------------------------------------------------------------

def test_without_a_tpu_the_error_names_what_was_asked_and_found(monkeypatch) -> None:
    x = np.ones((4,), np.float32)
    with pytest.raises(tpu.NoTpu, match=r"backend='tpu'.*found none.*[Aa]vailable backends "
                       r"are \['cpu'\]"):
        ember.jit(lambda v: v * 2, backend="tpu")(x)
    monkeypatch.setenv("EMBER_BACKEND", "tpu")
    with pytest.raises(RuntimeError, match="EMBER_BACKEND=tpu"):
        ember.jit(lambda v: v * 3)(x)
    with pytest.raises(RuntimeError, match="asked jaxlib for a TPU"):
        tpu.to_device(x)
    assert "tpu" in backends.NAMES and backends.get("tpu") is tpu


def test_the_tpu_kernels_flag(monkeypatch) -> None:
    assert config.ember_tpu_kernels == "auto"
    monkeypatch.setenv("EMBER_TPU_KERNELS", "fast")
    with pytest.raises(ValueError, match="EMBER_TPU_KERNELS must be one of"):
        _ = config.ember_tpu_kernels
    monkeypatch.setenv("EMBER_TPU_KERNELS", "xla")
    x = arg((64, 256), np.float32)
    assert tpu.tpu_module(tpu.optimize(ember.jit(_softmax).lower(x)._lowered.module)
                          ).kernels == []


# -- elementwise (kLoop) kernels -----------------------------------------------------------

FLOAT_UNARY: dict[str, tuple[Callable[[Any], Any], str]] = {
    "neg": (lax.neg, "arith.negf"), "abs": (lax.abs, "math.absf"),
    "exp": (lax.exp, "math.exp"), "exp2": (lax.exp2, "math.exp2"),
    "log": (lax.log, "math.log"), "log1p": (lax.log1p, "math.log1p"),
    "sqrt": (lax.sqrt, "math.sqrt"), "rsqrt": (lax.rsqrt, "math.rsqrt"),
    "tanh": (lax.tanh, "math.tanh"), "sin": (lax.sin, "math.sin"),
    "cos": (lax.cos, "math.cos"), "tan": (lax.tan, "math.tan"),
    "floor": (lax.floor, "math.floor"), "ceil": (lax.ceil, "math.ceil"),
    "round": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), "math.roundeven"),
    "round_afz": (lax.round, "math.round"), "erf": (lax.erf, "math.erf"),
    "logistic": (lax.logistic, "math.exp"), "sign": (lax.sign, "arith.select"),
}
FLOAT_BINARY: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "add": (lax.add, "arith.addf"), "sub": (lax.sub, "arith.subf"),
    "mul": (lax.mul, "arith.mulf"), "div": (lax.div, "arith.divf"),
    "max": (lax.max, "arith.maximumf"), "min": (lax.min, "arith.minimumf"),
    "pow": (lax.pow, "math.powf"), "atan2": (lax.atan2, "math.atan2"),
    "lt_select": (lambda x, y: lax.select(x < y, x, y), "arith.cmpf olt"),
    "ne_select": (lambda x, y: lax.select(x != y, x, y), "arith.cmpf une"),
    "clamp": (lambda x, y: lax.clamp(-1.0, x, y), "arith.maximumf"),
}
INT_OPS: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "add": (lax.add, "arith.addi"), "sub": (lax.sub, "arith.subi"),
    "mul": (lax.mul, "arith.muli"), "max": (lax.max, "arith.maxsi"),
    "min": (lax.min, "arith.minsi"), "and": (lax.bitwise_and, "arith.andi"),
    "or": (lax.bitwise_or, "arith.ori"), "xor": (lax.bitwise_xor, "arith.xori"),
    "shl": (lax.shift_left, "arith.shli"), "shr": (lax.shift_right_logical, "arith.shrui"),
    "sar": (lax.shift_right_arithmetic, "arith.shrsi"),
    "neg": (lambda x, y: lax.neg(x), "arith.subi"), "abs": (lambda x, y: lax.abs(x),
                                                          "math.absi"),
    "not": (lambda x, y: lax.bitwise_not(x), "arith.xori"),
    "ge_select": (lambda x, y: lax.select(x >= y, x, y), "arith.cmpi sge"),
    "to_float": (lambda x, y: lax.convert_element_type(x, np.float32) * 2.0, "arith.sitofp"),
}


def test_f32_elementwise_kernels_verify() -> None:
    # (every op is followed by a multiply: a lone op is no fusion)
    shape = (24, 384)
    x, y = arg(shape, np.float32, 1), arg(shape, np.float32, 2)
    for name, (op, mlir) in FLOAT_UNARY.items():
        (text,) = checked(tpu_module(lambda a, b, op=op: op(a) * b, x, y), 1)
        assert mlir in text, name
        assert "arith.extf" not in text and "memref<24x384xf32, #tpu.memory_space<vmem>>" \
            in text
    for name, (op, mlir) in FLOAT_BINARY.items():
        (text,) = checked(tpu_module(lambda a, b, op=op: op(a, b) * a, x, y), 1)
        assert mlir in text, name


BF16_OPS = {"sine": "math.sin", "exponential": "math.exp", "tanh": "math.tanh",
            "log-plus-one": "math.log1p", "rsqrt": "math.rsqrt", "negate": "arith.negf",
            "add": "arith.addf", "divide": "arith.divf", "maximum": "arith.maximumf",
            "power": "math.powf"}


def test_bf16_elementwise_kernels_compute_in_f32() -> None:
    """(Ember's tracer has no bfloat16 yet: the modules are HLO text.) bf16 blocks are
    widened on load and rounded on the store, as XLA's TPU fusions keep f32 inside."""
    for op, mlir in BF16_OPS.items():
        binary = mlir in ("arith.addf", "arith.divf", "arith.maximumf", "math.powf")
        value = f"{op}(%x, %y)" if binary else f"{op}(%x)"
        module = parse_module(f"""HloModule m
ENTRY %main (x: bf16[32,256], y: bf16[32,256]) -> bf16[32,256] {{
  %x = bf16[32,256] parameter(0)
  %y = bf16[32,256] parameter(1)
  %v = bf16[32,256] {value}
  %w = f32[32,256] convert(%v)
  %z = f32[32,256] multiply(%w, %w)
  ROOT %r = bf16[32,256] convert(%z)
}}
""")
        (text,) = checked(tpu.tpu_module(tpu.optimize(module), "ember"), 1)
        assert mlir in text and "memref<32x256xbf16" in text, op
        # widened on load, %v kept in f32 (XLA's excess precision), the explicit convert
        # of %z to bf16 rounded (truncf, extf), the store narrowed
        assert text.count("arith.extf") == (3 if binary else 2), op
        assert text.count("arith.truncf") == 2, op


def test_int32_elementwise_kernels_verify() -> None:
    shape = (16, 256)
    x, y = arg(shape, np.int32, 1), np.abs(arg(shape, np.int32, 2)) % 40
    for name, (op, mlir) in INT_OPS.items():
        (text,) = checked(tpu_module(lambda a, b, op=op: op(a, b) + b, x, y), 1)
        assert mlir in text, name
        assert "memref<16x256xi32" in text, name
    # HLO's shifts past the width give 0 (or the sign): compared and selected, not UB
    (text,) = checked(tpu_module(lambda a, b: lax.shift_left(a, b) + b, x, y), 1)
    assert "arith.cmpi ult" in text and "dense<32>" in text


def test_scalars_ride_in_smem_and_odd_shapes_get_a_view() -> None:
    f = (lambda x, a, b: a * jnp.sin(x) + b)
    (text,) = checked(tpu_module(f, arg((1 << 16,), np.float32), np.float32(2),
                                 np.float32(3)), 1)
    assert text.count("#tpu.memory_space<smem>>") >= 2 and "memref.load" in text
    # 3-D, lane-aligned last dim: rows are the outer dims
    (text,) = checked(tpu_module(lambda x: jnp.exp(x) * 2.0, arg((3, 5, 256), np.float32)), 1)
    assert "memref<15x256xf32" in text
    # a size that is no multiple of 128 has no tiled view: XLA fuses it
    tm = tpu_module(lambda x: jnp.exp(x) * 2.0, arg((7, 9), np.float32))
    checked(tm, 0)
    assert "view" in tm.module.tpu_refusals[0][1]


def test_what_has_no_kernel_stays_hlo() -> None:
    x, y = arg((8, 128), np.int32), arg((8, 128), np.int32) | 1
    for f in (lambda a, b: lax.div(a, b) + a,                       # int division: UB in arith
              lambda a, b: lax.convert_element_type(a * 0.5, np.int32) + b,  # saturating
              lambda a, b: jnp.cbrt(a.astype(np.float32)) * 2.0):  # no Mosaic lowering
        tm = tpu_module(f, x, y)
        checked(tm, 0)
        assert tm.module.tpu_refusals and "call(" in tm.text  # (a fusion printed as a call)


# -- row kernels ---------------------------------------------------------------------------

def _softmax(x):
    e = jnp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def _logsumexp(x):
    m = x.max(-1, keepdims=True)
    return (jnp.log(jnp.exp(x - m).sum(-1, keepdims=True)) + m)[..., 0]


def _variance(x):
    return ((x - x.mean(-1, keepdims=True)) ** 2).mean(-1)


@pytest.mark.parametrize("shape", [(64, 512), (3, 5, 200), (16, 4096)])
def test_row_kernels_verify(shape: tuple[int, ...]) -> None:
    x = arg(shape, np.float32)
    g, b = arg(shape[-1:], np.float32, 3), arg(shape[-1:], np.float32, 4)
    rows = int(np.prod(shape[:-1]))
    (text,) = checked(tpu_module(_softmax, x, kernels="auto"), 1)
    assert text.count("vector.multi_reduction") == 2
    assert "<maximumf>" in text and "<add>" in text
    assert f"window_bounds = array<i64: {min(rows, 512)}, {shape[-1]}>" in text or rows > 64
    (text,) = checked(tpu_module(_layernorm, x, g, b, kernels="auto"), 1)
    assert text.count("vector.multi_reduction") == 2 and "math.rsqrt" in text
    assert f"window_bounds = array<i64: 1, {shape[-1]}>" in text  # g and b: columns
    tm = tpu_module(_layernorm, x, g, b, kernels="auto")
    n = shape[-1]
    assert (f"f32[{rows},{n}]{{1,0}} custom-call(" in tm.text and "operand_layout_constraints"
            f"={{f32[{rows},{n}]{{1,0}}, f32[1,{n}]{{1,0}}, f32[1,{n}]{{1,0}}}}" in tm.text)
    (text,) = checked(tpu_module(_logsumexp, x, kernels="auto"), 1)
    assert "math.log" in text and "x1xf32, #tpu.memory_space<vmem>>" in text  # per row
    (text,) = checked(tpu_module(_variance, x, kernels="auto"), 1)


def test_a_causal_softmax_keeps_its_row_kernel() -> None:
    """The mask's iotas: taken into the row fusion (the CPU generates them in its kernel),
    then made by XLA as the Ember kernel's inputs (iota_inputs.py: Mosaic has no iota)."""
    x = arg((64, 256), np.float32)

    def causal(v):
        s = jnp.where(jnp.tri(64, 256, dtype=bool), v, -jnp.inf)
        return ember.nn.softmax(s, axis=-1)

    module = tpu.optimize(ember.jit(causal).lower(x)._lowered.module)
    (text,) = checked(tpu.tpu_module(module, "auto"), 1)
    assert "iota" not in text and text.count("vector.multi_reduction") == 2
    (fusion,) = [i for i in module.entry.instructions if i.opcode == "fusion"]
    assert [o.opcode for o in fusion.operands].count("iota") == 2
    e = np.where(np.tri(64, 256, dtype=bool), x, -np.inf)
    e = np.exp(e - e.max(-1, keepdims=True))
    from ember.hlo.evaluator import evaluate as evaluate_hlo

    np.testing.assert_allclose(np.asarray(evaluate_hlo(module, x)),
                               e / e.sum(-1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_bf16_kernels_compute_within_bf16_rounding() -> None:
    """bf16 kernels (f32 inside) against Ember's HLO evaluator, which rounds every bf16 op:
    within two bf16 ulps (the evaluator rounds twice, the kernel once)."""
    import ml_dtypes

    from ember.hlo.evaluator.core import evaluate as evaluate_hlo

    bf16 = np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(12)
    x = rng.uniform(0.2, 2.0, (32, 256)).astype(bf16)
    y = rng.uniform(0.2, 2.0, (32, 256)).astype(bf16)
    for op in BF16_OPS:
        binary = BF16_OPS[op] in ("arith.addf", "arith.divf", "arith.maximumf", "math.powf")
        value = f"{op}(%x, %y)" if binary else f"{op}(%x)"
        module = parse_module(f"""HloModule m
ENTRY %main (x: bf16[32,256], y: bf16[32,256]) -> bf16[32,256] {{
  %x = bf16[32,256] parameter(0)
  %y = bf16[32,256] parameter(1)
  %v = bf16[32,256] {value}
  ROOT %r = bf16[32,256] multiply(%v, %y)
}}
""")
        want = np.asarray(evaluate_hlo(module, x, y))
        tm = tpu.tpu_module(tpu.optimize(module), "ember")
        got = evaluate(tm, [x, y])
        assert got.dtype == bf16
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2 ** -6, atol=1e-3, err_msg=op)


def test_bf16_softmax_rounds_at_the_store() -> None:
    module = parse_module("""HloModule m
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: bf16[64,256]) -> bf16[64,256] {
  %x = bf16[64,256] parameter(0)
  %ninf = f32[] constant(-inf)
  %xf = f32[64,256] convert(%x)
  %m = f32[64] reduce(%xf, %ninf), dimensions={1}, to_apply=%max
  %mf = bf16[64] convert(%m)
  %mb = bf16[64,256] broadcast(%mf), dimensions={0}
  %d = bf16[64,256] subtract(%x, %mb)
  %e = bf16[64,256] exponential(%d)
  %ef = f32[64,256] convert(%e)
  %zero = f32[] constant(0)
  %s = f32[64] reduce(%ef, %zero), dimensions={1}, to_apply=%sum
  %sb = f32[64,256] broadcast(%s), dimensions={0}
  %q = f32[64,256] divide(%ef, %sb)
  ROOT %r = bf16[64,256] convert(%q)
}
""")
    (text,) = checked(tpu.tpu_module(tpu.optimize(module), "auto"), 1)
    assert "arith.extf" in text and "arith.truncf" in text
    assert "memref<64x256xbf16" in text and text.count("vector.multi_reduction") == 2
    assert "window_bounds = array<i64: 64, 256>" in text  # (64 rows: a multiple of 16)


def test_kernel_counts_of_fusion_programs() -> None:
    x, w = arg((128, 256), np.float32), arg((256, 256), np.float32, 5)
    bias = arg((256,), np.float32, 6)

    def mlp(x, w, bias):  # the product stays HLO; its epilogue is a loop fusion
        return jnp.tanh(x @ w + bias) * 0.5

    checked(tpu_module(mlp, x, w, bias, kernels="auto"), 0)   # auto: XLA fuses it
    (text,) = checked(tpu_module(mlp, x, w, bias, kernels="ember"), 1)
    assert "math.tanh" in text
    checked(tpu_module(mlp, x, w, bias, kernels="xla"), 0)

    def attention_like(x, w):  # product, row softmax, product: one kernel (the softmax)
        return _softmax(x @ w) @ w

    checked(tpu_module(attention_like, x, w, kernels="auto"), 1)

    def two_rows(x):  # a softmax and a layernorm of its result: one row fusion, one kernel
        s = _softmax(x)
        return _layernorm(s, 1.0, 0.0) + s

    (text,) = checked(tpu_module(two_rows, x, kernels="auto"), 1)
    assert text.count("vector.multi_reduction") == 4

    def row_max(x):  # one reduction, nothing after: auto leaves it to XLA, ember takes it
        return jnp.max(x * 2.0, axis=-1)

    tm = tpu_module(row_max, x, kernels="auto")
    checked(tm, 0)
    assert "auto: one reduction" in tm.module.tpu_refusals[0][1]
    (text,) = checked(tpu_module(row_max, x, kernels="ember"), 1)
    assert "memref<128x1xf32" in text


def test_block_shapes_follow_the_tiling_and_scoped_vmem() -> None:
    # issue 20: 128-row blocks of 8192x4096 f32 ran, 512 rows did not compile
    view = blk.view_of((8192, 4096), keep_last=True)
    b = blk.choose(view, 8, 4, whole_rows=True)
    assert (b.rows, b.cols, b.grid) == (128, 4096, (64,))
    assert 2 * 8 * b.rows * b.cols + blk.TEMPS * 4 * b.rows * b.cols <= blk.SCOPED_VMEM
    # bf16 packs 16 rows a tile; a 2^24 vector is viewed as the TPU lays it out (tiles of
    # 1024 consecutive elements: (N/128, 128), a bitcast), in blocks of 2^19 elements
    assert blk.choose(blk.View(4096, 1024), 4, 2, False).rows % 16 == 0
    assert blk.view_of((1 << 24,), keep_last=False) == blk.View(1 << 17, 128)
    b = blk.choose(blk.View(1 << 17, 128), 8, 4, whole_rows=False)
    assert (b.rows, b.cols, b.grid) == (4096, 128, (32,))
    assert blk.view_of((6, 100), keep_last=False) is None  # (no view without a relayout)
    # a row too long for VMEM: no kernel; an elementwise one is split in columns
    assert blk.choose(blk.View(64, 1 << 20), 8, 4, whole_rows=True) is None
    b = blk.choose(blk.View(64, 1 << 20), 8, 4, whole_rows=False)
    assert b.cols % 128 == 0 and len(b.grid) == 2 and b.cols < 1 << 20
    assert blk.view_of((0, 128), keep_last=False) is None


def test_a_bad_kernel_is_caught_by_the_verifier() -> None:
    (text,) = checked(tpu_module(lambda x: jnp.exp(x) * 2.0, arg((8, 128), np.float32)), 1)
    with pytest.raises(verify.MosaicError):
        verify.verify(text.replace("math.exp", "math.nosuchop"))
    bad = re.sub(r"(math.exp %v\d+ : vector<8x128x)f32", r"\1i32", text)
    assert bad != text
    with pytest.raises(verify.MosaicError):
        verify.verify(bad)


# -- the compile path, on the CPU's XLA (the TPU's compiler is out of reach here) ----------

def test_compile_runs_the_route_on_a_stand_in_platform(monkeypatch) -> None:
    """tpu.compile's wiring (pipeline, kernels, legalize, XLA) with jaxlib's CPU client as
    the platform: without Ember kernels the module runs (fusions as calls); with them XLA's
    CPU compiler rejects the TPU custom call, as it must (Unsupported)."""
    from ember.backends import Unsupported
    from ember.backends.xla import platform

    monkeypatch.setattr(tpu, "_platform", lambda: platform("cpu", "xla-cpu"))
    x = arg((64, 256), np.float32)
    module = ember.jit(_softmax).lower(x)._lowered.module
    monkeypatch.setenv("EMBER_TPU_KERNELS", "xla")
    exe = tpu.compile(module)
    assert exe.mosaic_kernels == [] and "call(" in exe.text
    np.testing.assert_allclose(exe(x), np.asarray(ember.jit(_softmax)(x)), rtol=1e-6)
    monkeypatch.setenv("EMBER_TPU_KERNELS", "auto")
    with pytest.raises(Unsupported, match="tpu_custom_call"):
        tpu.compile(module)


# -- inspection ----------------------------------------------------------------------------

def test_compiled_mosaic_shows_the_kernels(monkeypatch) -> None:
    x = arg((64, 512), np.float32)
    compiled = ember.jit(_softmax).lower(x).compile()  # (the cpu backend: no chip here)
    text = compiled.mosaic()
    assert text.startswith("// kernel fusion\n") and text.count("func.func @fusion(") == 1
    body = compiled.mosaic(kernel="fusion")
    verify.verify(body)
    assert text.endswith(body) and body.count("vector.multi_reduction") == 2
    with pytest.raises(ValueError, match="no Mosaic kernel named 'fusion_7'; the kernels "
                       "are: fusion"):
        compiled.mosaic(kernel="fusion_7")
    ew = ember.jit(lambda v: jnp.exp(v) * 2.0).lower(x).compile()
    with pytest.raises(ValueError, match="has no Mosaic kernel"):
        ew.mosaic()  # (auto leaves elementwise fusions to XLA)
    monkeypatch.setenv("EMBER_TPU_KERNELS", "ember")
    assert "math.exp" in ew.mosaic(kernel="fusion")


# -- what the kernels compute (tests/backends/mosaic_eval.py runs them with NumPy) -------------

def evaluate(tm: tpu.TpuModule, args: list[np.ndarray]) -> np.ndarray:
    """Run a one-kernel module: the custom call's operands traced back to the entry's
    parameters, reshaped to the kernel's windows; the result reshaped back."""
    (kernel,) = tm.kernels
    entry = tm.module.entry
    root = entry.root
    call = root.operands[0] if root.opcode == "reshape" else root
    assert call.opcode == "custom-call"
    operands = []
    for x, win in zip(call.operands, kernel.windows[:-1], strict=True):
        p = x.operands[0] if x.opcode == "reshape" else x
        assert p.opcode == "parameter"
        operands.append(np.asarray(args[p.attrs["parameter_number"]]).reshape(win.dims))
    out = mosaic_eval.run(kernel.text, operands, kernel.result.dims,
                          root.shape.dtype)
    return out.reshape(root.shape.dimensions)


def against_cpu(f: Callable[..., Any], *args: Any, kernels: str = "ember", rtol: float = 2e-6,
                atol: float = 1e-7) -> str:
    """`f`'s one kernel run by the evaluator against Ember's CPU backend; its text."""
    tm = tpu_module(f, *args, kernels=kernels)
    (text,) = checked(tm, 1)
    want = np.asarray(ember.jit(f, backend="cpu")(*args))
    got = evaluate(tm, list(args))
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)
    return text


# float records with the domain where each is tested (inside it, with edges)
DOMAINS = {"log": (0.01, 5), "log1p": (-0.9, 5), "sqrt": (0, 5), "rsqrt": (0.01, 5),
           "tan": (-1.4, 1.4), "exp": (-20, 20), "exp2": (-20, 20)}
EXPANDED: dict[str, tuple[Callable[[Any], Any], tuple[float, float]]] = {
    "expm1": (lax.expm1, (-3, 3)), "atan": (lax.atan, (-10, 10)),
    "asin": (lax.asin, (-1, 1)), "acos": (lax.acos, (-1, 1)),
    "atanh": (lax.atanh, (-0.99, 0.99)), "sinh": (lax.sinh, (-10, 10)),
    "cosh": (lax.cosh, (-10, 10)), "is_finite": (lambda x: lax.select(
        lax.is_finite(x), x, x * 0.0), (-1, 1)),
}


def test_elementwise_kernels_compute_what_the_cpu_backend_does() -> None:
    rng = np.random.default_rng(7)
    shape = (16, 256)
    y = rng.uniform(0.5, 2.0, shape).astype(np.float32)
    for name, (op, _) in FLOAT_UNARY.items():
        lo, hi = DOMAINS.get(name, (-4, 4))
        x = rng.uniform(lo, hi, shape).astype(np.float32)
        x[0, :4] = [lo, hi, 0.0 if lo <= 0 <= hi else lo, -0.0 if lo <= 0 <= hi else hi]
        against_cpu(lambda a, b, op=op: op(a) * b, x, y, rtol=4e-6, atol=1e-6)
    for name, (op, rng_) in EXPANDED.items():
        x = rng.uniform(*rng_, shape).astype(np.float32)
        x[0, :3] = [rng_[0], rng_[1], 0.0]
        if name == "is_finite":
            x[1, :3] = [np.inf, -np.inf, np.nan]
        # (the expansions' few ulps, as ember/backends/xla/legalize.py's)
        text = against_cpu(lambda a, b, op=op: op(a) * b, x, y, rtol=3e-5, atol=1e-6)
        assert "math.exp" in text or "math.atan2" in text or "math.log1p" in text or \
            name == "is_finite", name
    x = rng.uniform(-3, 3, shape).astype(np.float32)
    z = rng.uniform(0.5, 3, shape).astype(np.float32)
    for name, (op, _) in FLOAT_BINARY.items():
        against_cpu(lambda a, b, op=op: op(a, b) * a, z if name == "pow" else x, z,
                    rtol=4e-6, atol=1e-6)
    # Mosaic's remf was measured inexact on the chip (and NaN where HLO's is not): XLA's
    tm = tpu_module(lambda a, b: lax.rem(a, b) * b, x, z)
    checked(tm, 0)
    assert "remainder" in tm.module.tpu_refusals[0][1]


def test_integer_kernels_compute_what_the_cpu_backend_does() -> None:
    rng = np.random.default_rng(8)
    x = rng.integers(-2**31, 2**31 - 1, (8, 384), dtype=np.int64).astype(np.int32)
    x[0, :4] = [0, -1, 2**31 - 1, -2**31]
    y = rng.integers(-40, 40, (8, 384)).astype(np.int32)
    for op, _ in INT_OPS.values():
        against_cpu(lambda a, b, op=op: op(a, b) + b, x, y)
    for op in (lax.clz, lax.population_count, lax.sign):
        against_cpu(lambda a, b, op=op: op(a) + b, x, y)
    u = x.view(np.uint32)
    for op in (lax.max, lax.shift_right_logical, lambda a, b: lax.select(a < b, a, b)):
        against_cpu(lambda a, b, op=op: op(a, b) + b, u, np.abs(y).astype(np.uint32))


def test_row_kernels_compute_what_the_cpu_backend_does() -> None:
    rng = np.random.default_rng(9)
    for shape in [(64, 512), (3, 5, 200), (1001, 128)]:
        x = (rng.standard_normal(shape) * 4).astype(np.float32)
        g, b = rng.standard_normal(shape[-1:]).astype(np.float32), rng.standard_normal(
            shape[-1:]).astype(np.float32)
        against_cpu(_softmax, x, kernels="auto", rtol=2e-6)
        against_cpu(_layernorm, x, g, b, kernels="auto", rtol=2e-5, atol=2e-5)
        against_cpu(_logsumexp, x, kernels="auto", rtol=2e-6)
        against_cpu(_variance, x, kernels="auto", rtol=2e-5, atol=1e-6)


def test_partial_blocks_and_smem_scalars_compute_right() -> None:
    # 5001 rows: no multiple of 8 divides them, so 4096-row blocks and a partial last one
    x = np.random.default_rng(3).standard_normal((5001, 128)).astype(np.float32)
    text = against_cpu(lambda v, a, c: a * jnp.sin(v) + c, x, np.float32(2.5),
                       np.float32(-1.0), atol=1e-6)  # (2.5 sin(v) - 1 cancels near 0)
    assert "iteration_bounds = array<i64: 2>" in text and "memref<4096x128xf32" in text
    assert text.count("memref.load") == 2 and "#tpu.memory_space<smem>" in text


def test_the_disk_cache_skips_xla_compiles(monkeypatch, tmp_path) -> None:
    """(On jaxlib's CPU client, which serializes executables as the TPU's does.)"""
    from ember.backends.xla import disk_cache, platform

    monkeypatch.setattr(tpu, "_platform", lambda: platform("cpu", "xla-cpu"))
    monkeypatch.setenv("EMBER_TPU_KERNELS", "xla")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    x = arg((16, 128), np.float32)
    module = ember.jit(_softmax).lower(x)._lowered.module
    plat = platform("cpu", "xla-cpu")
    calls = []
    real = type(plat)._compile
    monkeypatch.setattr(type(plat), "_compile", lambda self, t: calls.append(t) or real(self, t))
    before = dict(disk_cache.STATS)
    first = tpu.compile(module)(x)
    second = tpu.compile(module)(x)  # (a fresh process reads the same file)
    assert len(calls) == 1 and disk_cache.STATS["hits"] == before["hits"] + 1
    np.testing.assert_array_equal(first, second)
    (entry,) = (tmp_path / "xla").iterdir()
    entry.write_bytes(entry.read_bytes()[:-1] + b"?")  # corrupt: ignored, compiled again
    tpu.compile(module)
    assert len(calls) == 2 and disk_cache.STATS["rejected"] == before["rejected"] + 1
    tpu.compile(module, use_cache=False)
    assert len(calls) == 3
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    tpu.compile(module)
    assert len(calls) == 4


def test_loop_kernels_with_row_and_column_operands_compute_right() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((24, 256)).astype(np.float32)
    col, row = rng.standard_normal(256).astype(np.float32), rng.standard_normal(24).astype(
        np.float32)
    text = against_cpu(lambda a, c, r: jnp.tanh(a + c) * 0.5 - r[:, None], x, col, row,
                       atol=1e-6)
    assert "window_bounds = array<i64: 1, 256>" in text  # the column operand
    assert "window_bounds = array<i64: 24, 1>" in text   # the row operand
    # a 3-D shape: the rows are the outer dims, a column broadcast along both of them
    x3 = rng.standard_normal((2, 8, 128)).astype(np.float32)
    against_cpu(lambda a, c: jnp.exp(a) * c, x3, col[:128], rtol=4e-6)


def test_compiled_runtime_hlo_is_xlas() -> None:
    x = arg((64, 256), np.float32)
    text = ember.jit(_softmax, backend="xla-cpu").lower(x).compile().runtime_hlo()
    assert "ENTRY" in text and "fusion" in text  # (XLA's own fusions)
    with pytest.raises(ValueError, match="Ember's own code generator"):
        ember.jit(_softmax, backend="cpu").lower(x).compile().runtime_hlo()


def test_row_reductions_mosaic_lacks_stay_hlo() -> None:
    x = arg((16, 256), np.float32)
    for f in (lambda v: v / jnp.prod(v, axis=-1, keepdims=True),       # no <mul> kind
              lambda v: jnp.where(jnp.all(v > 0, axis=-1, keepdims=True), v, 0.0)):
        tm = tpu_module(f, x, kernels="ember")
        assert not [k for k in tm.kernels if k.kind == "row"]
        assert any("reduction" in r[1] or "reduce" in r[1] for r in tm.module.tpu_refusals)
    xi = arg((16, 256), np.int32)
    against_cpu(lambda v: v - jnp.max(v, axis=-1, keepdims=True), xi, kernels="auto")
