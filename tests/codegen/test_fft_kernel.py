"""The CPU backend's `fft` kernel kind (backends/cpu/emit/fft.py): compiled HLO `fft`
against the evaluator.

Every fft has a complex operand or result; the CPU compiles them natively (support.py's
complex_compiles lists fft), and `test_jnp_fft_under_jit_is_the_native_kernel` checks that
jnp.fft under jit reaches this kernel rather than the interpreter. Input: HLO modules of
every fft_type over 1-3 minor dimensions with batches, some with native f32 producers and
consumers around the transform. Output: results equal to the evaluator's bit for bit (both
run NumPy's pocketfft), the descriptor round trip, and the trampoline's error path (NaN out,
the error recorded for the executable to raise).
"""

from __future__ import annotations

import numpy as np
import pytest

from ember import callbacks
from ember.backends import cpu
from ember.backends.cpu.emit import fft as fft_kernel
from ember.hlo import parser
from ember.hlo.evaluator import evaluate

RNG = np.random.default_rng(3)
_NP = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def _arg(et: str, dims: tuple[int, ...]) -> np.ndarray:
    x = RNG.standard_normal(dims)
    if et.startswith("c"):
        x = x + 1j * RNG.standard_normal(dims)
    return x.astype(_NP[et])


def _shape(et: str, dims: tuple[int, ...]) -> str:
    return f"{et}[{','.join(map(str, dims))}]"


def _module(body: str, param: str, root_shape: str) -> str:
    return (f"HloModule f\n\nENTRY %f (p: {param}) -> {root_shape} {{\n"
            f"  %p = {param} parameter(0)\n{body}}}\n")


CASES = [  # (fft_type, operand type, operand dims, fft_length, result type, result dims)
    ("FFT", "c64", (8,), (8,), "c64", (8,)),
    ("FFT", "c128", (3, 7), (7,), "c128", (3, 7)),
    ("IFFT", "c64", (2, 3, 5), (3, 5), "c64", (2, 3, 5)),
    ("IFFT", "c128", (2, 3, 4, 5), (3, 4, 5), "c128", (2, 3, 4, 5)),
    ("RFFT", "f32", (4, 9), (9,), "c64", (4, 5)),
    ("RFFT", "f64", (2, 6, 8), (6, 8), "c128", (2, 6, 5)),
    ("IRFFT", "c64", (3, 5), (8,), "f32", (3, 8)),
    ("IRFFT", "c128", (2, 4, 4), (2, 4, 7), "f64", (2, 4, 7)),
    ("RFFT", "f32", (0, 8), (8,), "c64", (0, 5)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{len(c[3])}d" for c in CASES])
def test_compiled_fft_equals_the_evaluator(case):
    kind, et, dims, lengths, out_et, out_dims = case
    out = _shape(out_et, out_dims)
    text = _module(f"  ROOT %r = {out} fft(%p), fft_type={kind}, "
                   f"fft_length={{{','.join(map(str, lengths))}}}\n", _shape(et, dims), out)
    module = parser.parse_module(text)
    exe = cpu.compile(module, use_cache=False)
    x = _arg(et, dims)
    got = np.asarray(exe(x))
    want = evaluate(module, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_fft_between_native_kernels():
    # f32 math before an RFFT, an IRFFT back, and f32 math after: the fft kernels read and
    # write buffers the loop kernels produce and consume
    body = ("  %two = f32[] constant(2)\n"
            "  %b = f32[4,16] broadcast(%two), dimensions={}\n"
            "  %m = f32[4,16] multiply(%p, %b)\n"
            "  %e = f32[4,16] exponential(%m)\n"
            "  %s = c64[4,9] fft(%e), fft_type=RFFT, fft_length={16}\n"
            "  %i = f32[4,16] fft(%s), fft_type=IRFFT, fft_length={16}\n"
            "  ROOT %r = f32[4,16] subtract(%i, %e)\n")
    module = parser.parse_module(_module(body, "f32[4,16]", "f32[4,16]"))
    exe = cpu.compile(module, use_cache=False)
    x = _arg("f32", (4, 16)) * 0.1
    got = np.asarray(exe(x))
    np.testing.assert_allclose(got, evaluate(module, x), atol=1e-5)
    assert np.max(np.abs(got)) < 1e-4  # irfft(rfft(e)) == e


def test_descriptor_round_trip():
    text = _module("  ROOT %r = f64[2,3,8] fft(%p), fft_type=IRFFT, fft_length={3,8}\n",
                   "c128[2,3,5]", "f64[2,3,8]")
    inst = parser.parse_module(text).entry.root
    words = fft_kernel.descriptor(inst)
    assert words == [3, 3, 3, 2, 3, 5, 2, 3, 8]
    kind, dtype, shape, lengths = fft_kernel.parse_descriptor(words)
    assert (kind, dtype, shape, lengths) == ("IRFFT", np.dtype(np.complex128), (2, 3, 5),
                                             (3, 8))


def test_trampoline_error_gives_nan_and_is_recorded(monkeypatch):
    words = np.array([0, 2, 1, 4, 1, 4], np.int64)
    src = np.ones(4, np.complex64)
    dst = np.zeros(4, np.complex64)

    def boom(*args, **kwargs):
        raise RuntimeError("fft failed")

    monkeypatch.setattr(fft_kernel.npfft, "fft", boom)
    callbacks._state.pending = None
    try:
        fft_kernel.run(words.ctypes.data, src.ctypes.data, dst.ctypes.data)
        assert callbacks.has_pending_error()
        assert np.all(np.isnan(dst.real))
    finally:
        callbacks._state.pending = None


def test_modules_with_fft_are_guarded_like_callbacks():
    text = _module("  ROOT %r = c64[4] fft(%p), fft_type=FFT, fft_length={4}\n", "c64[4]",
                   "c64[4]")
    assert callbacks.uses_callbacks(parser.parse_module(text))


def test_fft_of_a_transposed_operand_reads_row_major():
    # layout assignment gives the fft a row-major operand (a copy of the transpose)
    body = ("  %t = f32[8,4] transpose(%p), dimensions={1,0}\n"
            "  ROOT %r = c64[8,3] fft(%t), fft_type=RFFT, fft_length={4}\n")
    module = parser.parse_module(_module(body, "f32[4,8]", "c64[8,3]"))
    x = _arg("f32", (4, 8))
    np.testing.assert_array_equal(cpu.compile(module, use_cache=False)(x),
                                  evaluate(module, x))


def test_jnp_fft_under_jit_is_the_native_kernel():
    import ember
    import ember.numpy as jnp
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    f = ember.jit(lambda v: jnp.abs(jnp.fft.rfft(v * 2.0)) + 1.0)
    compiled = f.lower(x).compile()
    assert compiled._compiled.backend == "cpu"  # (not the interpreter)
    assert " fft(" in compiled.as_text()
    np.testing.assert_allclose(compiled(x), np.abs(np.fft.rfft(x * 2.0)) + 1.0, rtol=2e-5,
                               atol=1e-5)
