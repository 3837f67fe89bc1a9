"""FFT (prims/fft.py, lax.fft, jnp.fft) against numpy.fft and jax.numpy.fft.

Input: real and complex arrays of power-of-two, prime and composite sizes, size 1 and empty
batches, in f32/f64/c64/c128 and int32, with 64-bit mode off and on. Output: assertions that
every jnp.fft function gives NumPy's values and JAX's dtype (and JAX's values), eagerly and
under one shared jit; `n`/`s` cut and pad, `axes` and every `norm`; transforms over more
than 3 axes; fftfreq/rfftfreq/fftshift/ifftshift; JAX's error texts; lax.fft's conversions
and checks; JVPs against finite differences and VJPs against JVPs (the RFFT/IRFFT
transposes' Hermitian weights); vmap over any batch axis; the HLO `fft` opcode's text form,
shape rule and evaluator.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ad_checks import check_grads

import ember
import ember.numpy as jnp
from ember import lax
from ember.hlo import parser, printer
from ember.hlo.shape import Shape
from ember.hlo.shape_inference import ShapeError, infer_shape

RNG = np.random.default_rng(11)
NORMS = (None, "backward", "ortho", "forward")


def _data(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = RNG.standard_normal(shape)
    dt = np.dtype(dtype)
    if dt.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    if dt.kind == "i":
        x = x * 10
    return x.astype(dt)


@contextlib.contextmanager
def _jax_x64(on: bool):
    jax = pytest.importorskip("jax")
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", prev)


def _tol(dtype: np.dtype) -> float:
    return 1e-12 if np.finfo(dtype).bits == 64 else 3e-5


def _close(got: Any, want: Any, what: str) -> None:
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    tol = _tol(got.dtype)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


class _Cases:
    """Cases checked eagerly at once, then all compiled in ONE jit and compared with the
    eager values bit for bit (the compiled program runs the same NumPy FFT)."""

    def __init__(self) -> None:
        self.items: list[tuple[Callable, tuple, Any, str]] = []

    def add(self, fn: Callable, args: tuple, want_dtype: Any, reference: Any, what: str,
            jax_value: Any = None) -> None:
        got = fn(*args)
        assert got.dtype == np.dtype(want_dtype), (what, got.dtype, want_dtype)
        _close(got, reference, what + " vs numpy")
        if jax_value is not None:
            assert np.asarray(jax_value).dtype == got.dtype, (what, jax_value.dtype)
            _close(got, jax_value, what + " vs jax")
        self.items.append((fn, args, got, what))

    def run_jit(self) -> None:
        fns = [f for f, _, _, _ in self.items]
        outs = ember.jit(lambda all_args: tuple(f(*a) for f, a in zip(fns, all_args)))(
            tuple(a for _, a, _, _ in self.items))
        for (_, _, eager, what), out in zip(self.items, outs):
            assert out.dtype == eager.dtype, what
            np.testing.assert_array_equal(np.asarray(out), np.asarray(eager), err_msg=what)


def _complex_of(dtype: Any, x64: bool) -> np.dtype:
    wide = x64 and np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def _real_of(dtype: Any, x64: bool) -> np.dtype:
    return np.dtype(np.float64 if _complex_of(dtype, x64) == np.complex128 else np.float32)


# (function, input shape, input dtypes, kwargs) — odd, prime, power-of-two and size-1 axes
ONE_AXIS = [
    ("fft", (8,), {}), ("fft", (7,), {"n": 10}), ("fft", (3, 5), {"n": 3, "axis": 0}),
    ("fft", (1,), {}), ("fft", (0, 4), {}), ("ifft", (11,), {}),
    ("ifft", (4, 6), {"n": 4, "axis": -1}), ("rfft", (9,), {}), ("rfft", (2, 8), {"n": 5}),
    ("rfft", (6, 3), {"axis": 0}), ("irfft", (5,), {}), ("irfft", (2, 4), {"n": 7}),
    ("irfft", (6, 3), {"n": 4, "axis": 0}), ("irfft", (2,), {}), ("hfft", (5,), {}),
    ("hfft", (3, 4), {"n": 5, "axis": 0}), ("ihfft", (7,), {}), ("ihfft", (2, 6), {"n": 4}),
]
MANY_AXES = [
    ("fft2", (4, 5), {}), ("fft2", (3, 4, 5), {"s": (2, 7)}),
    ("ifft2", (2, 3, 4), {"axes": (0, 2)}), ("rfft2", (6, 5), {}),
    ("rfft2", (3, 4, 5), {"s": (5, 4), "axes": (2, 0)}), ("irfft2", (4, 3), {}),
    ("irfft2", (2, 5, 4), {"s": (3, 6)}), ("fftn", (2, 3, 4), {}),
    ("fftn", (3, 4, 5), {"axes": (1,)}), ("fftn", (2, 3, 4), {"s": (4, 2)}),
    ("ifftn", (3, 2, 5), {"axes": (2, 0, 1)}), ("rfftn", (4, 3, 6), {}),
    ("rfftn", (4, 3, 6), {"s": (5, 3), "axes": (0, 1)}), ("irfftn", (3, 4, 3), {}),
    ("irfftn", (3, 4, 3), {"s": (2, 5), "axes": (2, 1)}),
    ("fftn", (2, 3, 2, 3, 2), {}), ("ifftn", (2, 2, 3, 2), {}),
    ("rfftn", (2, 3, 2, 4), {"axes": (3, 0, 2, 1)}), ("irfftn", (2, 3, 2, 2, 3), {}),
]
_REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}
_REAL_OUT = {"irfft", "hfft", "irfft2", "irfftn"}


@pytest.mark.parametrize("x64_on", [False, True], ids=["x64off", "x64on"])
def test_transforms_match_numpy_and_jax(x64_on, request):
    if x64_on:
        request.getfixturevalue("x64")
    cases = _Cases()
    with _jax_x64(x64_on) as jax:
        for k, (name, shape, kw) in enumerate(ONE_AXIS + MANY_AXES):
            dtypes = ((np.float32, np.float64, np.int32) if name in _REAL_IN
                      else (np.complex64, np.complex128, np.float32))
            for j, dtype in enumerate(dtypes):
                norm = NORMS[k % len(NORMS)] if dtype != np.float32 else NORMS[(k + 1) % 4]
                args = dict(kw, norm=norm)
                x = _data(shape, dtype)
                fn = getattr(jnp.fft, name)
                out = (_real_of if name in _REAL_OUT else _complex_of)(dtype, x64_on)
                np_args = dict(args)
                if "s" in kw and "axes" not in kw:  # (NumPy 2 wants them spelled out)
                    np_args["axes"] = tuple(range(len(shape) - len(kw["s"]), len(shape)))
                want = getattr(np.fft, name)(x, **np_args)
                # JAX's value for one dtype per case and mode (its compiles are slow);
                # the dtype rule `out` is JAX's for every dtype (checked when written)
                jax_value = (np.asarray(getattr(jax.numpy.fft, name)(x, **args))
                             if j == int(x64_on) else None)
                cases.add(lambda v, fn=fn, args=args: fn(v, **args), (x,), out, want,
                          f"{name}{shape} {np.dtype(dtype).name} {args}", jax_value)
    cases.run_jit()


@pytest.mark.parametrize("norm", NORMS)
def test_every_norm_on_the_complex_and_real_pairs(norm, x64):
    x = _data((3, 6), np.float64)
    z = _data((3, 6), np.complex128)
    for name, v in (("fft", z), ("ifft", z), ("rfft", x), ("irfft", z), ("hfft", z),
                    ("ihfft", x), ("fftn", z), ("ifftn", z), ("rfftn", x), ("irfftn", z)):
        _close(getattr(jnp.fft, name)(v, norm=norm), getattr(np.fft, name)(v, norm=norm),
               f"{name} norm={norm}")
    # the round trips are the identity for every norm
    _close(jnp.fft.ifft(jnp.fft.fft(z, norm=norm), norm=norm), z, "ifft(fft)")
    _close(jnp.fft.irfftn(jnp.fft.rfftn(x, norm=norm), s=x.shape, norm=norm), x,
           "irfftn(rfftn)")


def test_sizes_powers_of_two_primes_and_products(x64):
    for n in (1, 2, 3, 5, 13, 16, 17, 30, 64, 97, 210, 256):
        z = _data((2, n), np.complex128)
        _close(jnp.fft.fft(z), np.fft.fft(z), f"fft {n}")
        _close(jnp.fft.rfft(z.real), np.fft.rfft(z.real), f"rfft {n}")
        _close(jnp.fft.irfft(z, n=n), np.fft.irfft(z, n=n), f"irfft {n}")


def test_empty_and_zero_length_transforms():
    # an empty batch, and transforms of length 0 (zeros of the result shape, as JAX)
    assert jnp.fft.fft(np.zeros((0, 4), np.complex64)).shape == (0, 4)
    assert jnp.fft.fft(np.zeros(0, np.float32)).shape == (0,)
    out = jnp.fft.irfft(np.ones(1, np.complex64))
    assert out.shape == (0,) and out.dtype == np.float32
    np.testing.assert_array_equal(jnp.fft.rfft(np.zeros((3, 0), np.float32)),
                                  np.zeros((3, 1), np.complex64))
    f = ember.jit(lambda v: jnp.fft.rfft(v))
    np.testing.assert_array_equal(f(np.zeros((0, 6), np.float32)), np.zeros((0, 4)))
    # a rank-0 input: fftn over no axes is the conversion alone
    out = jnp.fft.fftn(np.float32(3.0))
    assert out.shape == () and out.dtype == np.complex64 and complex(out) == 3


def test_frequencies(x64):
    for n in (1, 2, 7, 8):
        for d in (1.0, 0.25):
            np.testing.assert_allclose(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d))
            np.testing.assert_allclose(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d))
    assert jnp.fft.fftfreq(4).dtype == np.float64
    assert jnp.fft.fftfreq(4, dtype=np.float32).dtype == np.float32
    assert jnp.fft.rfftfreq(5, dtype=np.float32).dtype == np.float32
    ints = jnp.fft.fftfreq(5, 0.1, dtype=np.int32)  # computed in float32, then converted
    assert ints.dtype == np.int32
    np.testing.assert_array_equal(ints, np.fft.fftfreq(5, 0.1).astype(np.int32))
    # d may be traced
    got = ember.jit(lambda d: jnp.fft.fftfreq(6, d))(0.5)
    np.testing.assert_allclose(got, np.fft.fftfreq(6, 0.5))
    got = ember.jit(lambda d: jnp.fft.rfftfreq(6, d))(0.5)
    np.testing.assert_allclose(got, np.fft.rfftfreq(6, 0.5))


def test_frequencies_default_dtype_without_x64():
    assert jnp.fft.fftfreq(4).dtype == np.float32
    assert jnp.fft.rfftfreq(4).dtype == np.float32


def test_shifts():
    x = np.arange(2 * 5 * 4).reshape(2, 5, 4)
    for axes in (None, 0, 1, (0, 2), (-1,)):
        np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))
    np.testing.assert_array_equal(jnp.fft.ifftshift(jnp.fft.fftshift(x)), x)
    np.testing.assert_array_equal(ember.jit(jnp.fft.fftshift)(x), np.fft.fftshift(x))


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, text", [
    (lambda: jnp.fft.fft(np.float32(1)), ValueError,
     "axis -1 is out of bounds for array of dimension 0"),
    (lambda: jnp.fft.fft(np.zeros(4), n=0), ValueError, "Shape should be positive."),
    (lambda: jnp.fft.fft(np.zeros(4), norm="bad"), ValueError,
     'Invalid norm value bad; should be "backward","ortho" or "forward".'),
    (lambda: jnp.fft.fft(np.zeros(4), axis=(0,)), ValueError,
     "jax.numpy.fft.fft does not support multiple axes. Please use jax.numpy.fft.fftn. Got "
     "axis = (0,)."),
    (lambda: jnp.fft.fftn(np.zeros((4, 4)), axes=(0, 0)), ValueError,
     "jax.numpy.fft.fftn does not support repeated axes. Got axes (0, 0)."),
    (lambda: jnp.fft.fft2(np.zeros((4, 4)), axes=(0,)), ValueError,
     "jax.numpy.fft.fft2 only supports 2 axes. Got axes = (0,)."),
    (lambda: jnp.fft.rfft(np.zeros(4, np.complex64)), ValueError,
     "only real valued inputs supported for rfft"),
    (lambda: jnp.fft.fftn(np.zeros((2, 3)), s=(4,), axes=(0, 1)), ValueError,
     "Shape and axes have different lengths."),
    (lambda: jnp.fft.fft([1.0, 2.0]), TypeError,
     "jax.numpy.fft.fft requires ndarray or scalar arguments"),
    (lambda: jnp.fft.fftfreq((3,)), ValueError,
     "The n argument of jax.numpy.fft.fftfreq only takes an int. Got n = [3]."),
    (lambda: jnp.fft.rfftfreq(3, [1.0]), ValueError,
     "The d argument of jax.numpy.fft.rfftfreq only takes a single value. Got d = [1.0]."),
    (lambda: lax.fft(np.zeros(4), "bad", (4,)), ValueError, "Unknown FFT type 'bad'"),
    (lambda: lax.fft(np.zeros(4), 3, (4,)), TypeError, "Unknown FFT type value '3'"),
    (lambda: lax.fft(np.zeros(4, np.complex64), "FFT", (5,)), ValueError,
     "FFT input shape (4,) minor dimensions must be equal to fft_lengths (5,)"),
    (lambda: lax.fft(np.zeros(4, np.complex64), "fft", (2, 4)), ValueError,
     "FFT input shape (4,) must have at least as many input dimensions as fft_lengths"),
    (lambda: lax.fft(np.zeros((2, 4), np.complex64), "IRFFT", (3, 6)), ValueError,
     "IRFFT input shape (2, 4) minor dimensions must be equal to all except the last "
     "fft_length"),
    (lambda: lax.fft(np.zeros(4, np.complex64), "irfft", (8,)), ValueError,
     "IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. Got: 4 "
     "but fft_length is 8."),
    (lambda: lax.fft(np.zeros(4, np.float16), "rfft", (4,)), ValueError,
     "RFFT input must be float32 or float64, got float16"),
    (lambda: lax.fft(np.zeros((2,) * 4, np.complex64), "fft", (2,) * 4), ValueError,
     "rank must be between 1 and 3, but got 4."),
])
def test_errors_are_jax_texts(call, error, text):
    with pytest.raises(error) as info:
        call()
    assert text in str(info.value)


# -- lax.fft -------------------------------------------------------------------------------------

def test_lax_fft_types_conversions_and_names(x64):
    x = _data((2, 3, 8), np.float64)
    z = _data((2, 3, 8), np.complex128)
    for kind in ("fft", "FFT", lax.FftType.FFT):
        _close(lax.fft(z, kind, (8,)), np.fft.fft(z), f"fft {kind}")
    _close(lax.fft(z, "ifft", (3, 8)), np.fft.ifft2(z), "ifft2")
    _close(lax.fft(x, "rfft", (2, 3, 8)), np.fft.rfftn(x), "rfftn")
    _close(lax.fft(z[..., :5], "irfft", (3, 8)), np.fft.irfft2(z[..., :5], s=(3, 8)),
           "irfft2")
    # conversions: ints and bools become inexact first, as JAX's
    assert lax.fft(np.arange(4, dtype=np.int32), "fft", (4,)).dtype == np.complex64
    assert lax.fft(np.arange(4, dtype=np.int64), "fft", (4,)).dtype == np.complex128
    assert lax.fft(np.arange(4, dtype=np.int32), "rfft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.float32), "fft", (4,)).dtype == np.complex64
    # no lengths: the converted operand
    out = lax.fft(np.ones(3, np.float32), "fft", ())
    assert out.dtype == np.complex64 and out.shape == (3,)
    assert [t.value for t in lax.FftType] == [0, 1, 2, 3]


def test_jaxpr_and_hlo_text():
    x = np.zeros((3, 8), np.float32)
    text = str(ember.make_jaxpr(lambda v: lax.fft(v, "rfft", (8,)))(x))
    assert "c64[3,5] = fft[fft_lengths=(8,) fft_type=2] a" in text
    # JAX 0.10.2's text for jnp.fft.fft of a real vector (lax.fft is a jit there)
    assert str(ember.make_jaxpr(jnp.fft.fft)(np.zeros(8, np.float32))) == """\
{ lambda ; a:f32[8]. let
    b:c64[8] = jit[
      name=fft
      jaxpr={ lambda ; a:f32[8]. let
          c:c64[8] = convert_element_type[new_dtype=complex64 weak_type=False] a
          b:c64[8] = fft[fft_lengths=(8,) fft_type=0] c
        in (b,) }
    ] a
  in (b,) }"""
    hlo = ember.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v))).lower(x).as_text()
    assert "c64[3,5] fft(%Arg_0), fft_type=RFFT, fft_length={8}" in hlo
    assert "f32[3,8] fft(%fft.0), fft_type=IRFFT, fft_length={8}" in hlo
    again = printer.print_module(parser.parse_module(hlo))
    assert "fft_type=RFFT, fft_length={8}" in again and "fft_type=IRFFT" in again


def test_hlo_shape_rule():
    c = Shape("c64", (4, 6, 8))
    f = Shape("f64", (4, 6, 8))
    assert infer_shape("fft", [c], {"fft_type": "FFT", "fft_length": (6, 8)}) == c
    assert infer_shape("fft", [f], {"fft_type": "RFFT", "fft_length": (8,)}) == \
        Shape("c128", (4, 6, 5))
    assert infer_shape("fft", [Shape("c64", (4, 5))],
                       {"fft_type": "IRFFT", "fft_length": (4, 9)}) == Shape("f32", (4, 9))
    for operand, attrs in ((f, {"fft_type": "FFT", "fft_length": (8,)}),
                           (c, {"fft_type": "RFFT", "fft_length": (8,)}),
                           (c, {"fft_type": "FFT", "fft_length": (7,)}),
                           (c, {"fft_type": "IRFFT", "fft_length": (8,)}),
                           (c, {"fft_type": "FFT", "fft_length": ()}),
                           (c, {"fft_type": "DCT", "fft_length": (8,)})):
        with pytest.raises(ShapeError):
            infer_shape("fft", [operand], attrs)


def test_xla_cpu_backend_compiles_the_opcode():
    pytest.importorskip("jaxlib")
    x = _data((4, 8), np.float32)
    f = ember.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * 2, n=8), backend="xla-cpu")
    _close(f(x), 2 * x, "xla-cpu irfft(rfft)")
    g = ember.jit(lambda v: jnp.fft.fft2(v), backend="xla-cpu")
    _close(g(x), np.fft.fft2(x), "xla-cpu fft2")


def test_evaluator_runs_the_opcode():
    from ember.hlo.evaluator import evaluate

    x = _data((2, 6), np.float32)
    hlo = ember.jit(lambda v: lax.fft(v, "rfft", (2, 6))).lower(x).as_text()
    got = evaluate(parser.parse_module(hlo), x)
    assert got.dtype == np.complex64
    _close(got, np.fft.rfft2(x), "evaluate rfft2")


# -- autodiff and vmap -------------------------------------------------------------------------

def _parts(z: Any) -> Any:
    """A real function of a complex value that sees both parts."""
    return lax.real(z) * 1.5 - lax.imag(z)


@pytest.mark.parametrize("n", [7, 8])
def test_grads(n, x64):
    x = _data((2, n), np.float64)
    m = n // 2 + 1
    check_grads(lambda v: _parts(lax.fft(v, "rfft", (n,))), [x], 2)
    check_grads(lambda v: _parts(lax.fft(v, "rfft", (2, n))), [x], 1)
    check_grads(lambda v: lax.fft(lax.complex(v, v * v), "irfft", (n,)),
                [_data((3, m), np.float64)], 2)
    check_grads(lambda v: lax.fft(lax.complex(v, -v), "irfft", (3, n)),
                [_data((3, m), np.float64)], 1, use_jit=True)
    check_grads(lambda v: _parts(lax.fft(lax.complex(v, v * v), "fft", (n,))), [x], 2)
    check_grads(lambda v: _parts(lax.fft(lax.complex(v, 2 * v), "ifft", (2, n))), [x], 1,
                use_jit=True)
    for norm in NORMS:
        check_grads(lambda v, norm=norm: _parts(jnp.fft.rfft2(v, s=(3, n + 1), norm=norm)),
                    [x], 1)
        check_grads(lambda v, norm=norm: jnp.fft.hfft(lax.complex(v, v), norm=norm), [x], 1)


def test_grad_of_a_power_spectrum(x64):
    x = _data((16,), np.float64)

    def energy(v):
        return jnp.sum(jnp.abs(jnp.fft.rfft(v)) ** 2)

    got = ember.grad(energy)(x)
    eps = 1e-6
    fd = np.array([(energy(x + eps * e) - energy(x - eps * e)) / (2 * eps)
                   for e in np.eye(16)])
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ember.jit(ember.grad(energy))(x), got, rtol=1e-12, atol=1e-12)


def test_linear_transpose_of_the_complex_transforms(x64):
    z = _data((5,), np.complex128)
    for kind in ("fft", "ifft"):
        f = ember.linear_transpose(lambda v, kind=kind: lax.fft(v, kind, (5,)), z)
        mat = (np.fft.fft if kind == "fft" else np.fft.ifft)(np.eye(5))
        (got,) = f(z)
        _close(got, mat.T @ z, f"{kind}^T")  # unconjugated transpose, as JAX's


def test_vmap(x64):
    z = _data((3, 4, 6), np.complex128)
    x = z.real
    for axis in (0, 1, 2):
        length = (6,) if axis != 2 else (4,)
        got = ember.vmap(lambda v, length=length: lax.fft(v, "fft", length), in_axes=axis)(z)
        want = np.stack([np.fft.fft(np.take(z, i, axis)) for i in range(z.shape[axis])])
        _close(got, want, f"vmap fft axis {axis}")
    got = ember.vmap(lambda v: jnp.fft.rfft2(v), in_axes=1)(x)
    _close(got, np.stack([np.fft.rfft2(x[:, i]) for i in range(4)]), "vmap rfft2")
    got = ember.vmap(lambda v: jnp.fft.irfft(v, n=6), in_axes=2, out_axes=1)(z)
    want = np.stack([np.fft.irfft(z[..., i], n=6) for i in range(6)], axis=1)
    _close(got, want, "vmap irfft")
    got = ember.jit(ember.vmap(ember.vmap(lambda v: jnp.fft.fft(v))))(z)
    _close(got, np.fft.fft(z), "nested vmap under jit")
