"""The `fft` primitive: discrete Fourier transforms over an array's minor dimensions, as
`jax.lax.fft_p` defines them.

Input: one array and the params `fft_type` (an `FftType`: FFT, IFFT, RFFT, IRFFT) and
`fft_lengths` (a tuple of 1 to 3 lengths: the transform runs over the operand's last
len(fft_lengths) dimensions; the leading ones are a batch).
Output (JAX's dtype rules; the NumPy rule is the evaluator's, hlo/evaluator/fft.py):
  FFT, IFFT  complex64 -> complex64, complex128 -> complex128, same shape (IFFT scaled by
             1 / prod(fft_lengths))
  RFFT       float32 -> complex64, float64 -> complex128; the minor dimensions must equal
             fft_lengths, the last becomes fft_lengths[-1] // 2 + 1
  IRFFT      complex64 -> float32, complex128 -> float64; the minor dimensions must be
             fft_lengths[:-1] and fft_lengths[-1] // 2 + 1, the result's are fft_lengths
HLO: XLA's `fft` opcode, `fft(%x), fft_type=RFFT, fft_length={8}`.
Autodiff: linear. With JAX's unconjugated transposes (complex_parts.py), the DFT matrix F
is symmetric, so FFT^T = FFT and IFFT^T = IFFT. RFFT is y = P F x (x real, P keeps the
first m = n // 2 + 1 frequencies of the last axis); its transpose is real(F^T P^T c),
which an IRFFT computes once the weights w_k (1 at the zero and, for even n, the Nyquist
frequency; 2 elsewhere, since IRFFT counts each other frequency twice through its mirror)
are divided out: RFFT^T(c) = N irfft(conj(c) / w), N = prod(fft_lengths). IRFFT is
x = real(F^* W z) / N; its transpose is conj(w * rfft(c)) / N.
Batching: the transform acts on the trailing dimensions, so the batch axis moves to the
front.
"""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.batching import AxisData
from ember.core.primitive import Primitive
from ember.core.trace import get_aval
from ember.hlo.evaluator import fft as npfft
from ember.prims import _ad
from ember.prims.complex_parts import conj


class FftType(enum.IntEnum):
    """Which transform `fft` computes (JAX's `lax.FftType`; the names are XLA's)."""

    FFT = 0  # complex to complex, forward
    IFFT = 1  # complex to complex, inverse (scaled by 1 / N)
    RFFT = 2  # real to complex, forward (the non-negative frequencies of the last axis)
    IRFFT = 3  # complex to real, inverse


fft_p = Primitive("fft")
fft_p.hlo_opcode = "fft"  # type: ignore[attr-defined]

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


@fft_p.def_abstract_eval
def _fft_abstract(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                  ) -> ShapedArray:
    fft_type = FftType(fft_type)
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    if not 1 <= k <= 3:  # (XLA's limit; jnp.fft splits larger transforms)
        raise ValueError(f"fft: rank must be between 1 and 3, but got {k}.")
    if fft_type == FftType.RFFT:
        if x.dtype not in _COMPLEX_OF:
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if x.shape[-k:] != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal "
                             f"to fft_lengths {fft_lengths}")
        shape = x.shape[:-k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _COMPLEX_OF[x.dtype], x.weak_type)
    if x.dtype not in _REAL_OF:
        name = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{name} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if x.shape[-k:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal "
                             f"to all except the last fft_length, got {fft_lengths=}")
        if x.shape[-1] != fft_lengths[-1] // 2 + 1:
            raise ValueError("IRFFT requires innermost dimension to be compatible with "
                             f"fft_length[-1]/2+1. Got: {x.shape[-1]} but fft_length is "
                             f"{fft_lengths[-1]}.")
        return ShapedArray(x.shape[:-k] + fft_lengths, _REAL_OF[x.dtype], x.weak_type)
    if x.shape[-k:] != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {fft_lengths}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


@fft_p.def_impl
def _fft_impl(x: np.ndarray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
              ) -> np.ndarray:
    return npfft.fft(np.asarray(x), FftType(fft_type).name, fft_lengths)


@fft_p.def_lowering
def _fft_lowering(ctx: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                  ) -> Any:
    return ctx.b.op("fft", [x], {"fft_type": FftType(fft_type).name,
                                 "fft_length": tuple(fft_lengths)})


def _bind(x: Any, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=tuple(fft_lengths))


# -- autodiff: linear ------------------------------------------------------------------------------

def _last_axis_weights(fft_lengths: tuple[int, ...], like: Any) -> Any:
    """w broadcast to `like`'s shape along its last axis: w_k = 1 at k = 0 and (n even) at
    the Nyquist frequency k = n / 2, 2 at every other of the m = n // 2 + 1 frequencies
    (the number of times IRFFT counts frequency k, itself and its mirror n - k)."""
    aval = get_aval(like)
    m = aval.shape[-1]
    w = np.full((m,), 2.0)
    w[0] = 1.0
    if fft_lengths[-1] % 2 == 0:
        w[-1] = 1.0
    return _ad.broadcast_in_dim(w.astype(aval.dtype), aval.shape, (aval.ndim - 1,))


def _rfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    # RFFT^T(c) = real(sum_k c_k e^{-2 pi i jk/n}) = irfft(N conj(c) / w)
    n_total = math.prod(fft_lengths)
    scaled = _ad.div(_ad.mul(conj(ct), _ad.full_like(ct, float(n_total))),
                     _last_axis_weights(fft_lengths, ct))
    return _bind(scaled, FftType.IRFFT, fft_lengths)


def _irfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    # IRFFT^T(c)_k = (w_k / N) sum_j c_j e^{+2 pi i jk/n} = conj(w_k rfft(c)_k) / N
    n_total = math.prod(fft_lengths)
    y = _bind(ct, FftType.RFFT, fft_lengths)
    scale = 1.0 / n_total if n_total else 0.0  # (a zero-length transform: no values)
    y = _ad.mul(_ad.mul(y, _last_axis_weights(fft_lengths, y)), _ad.full_like(y, scale))
    return conj(y)


def _fft_transpose(ct: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                   ) -> list:
    fft_type = FftType(fft_type)
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [_bind(ct, fft_type, fft_lengths)]  # the DFT matrix is symmetric


ad.deflinear(fft_p)
fft_p.def_transpose(_fft_transpose)


# -- batching: the batch axis goes in front of the transformed dimensions --------------------------

@fft_p.def_batch
def _fft_batch(axis: AxisData, args: list, dims: list, *, fft_type: FftType,
               fft_lengths: tuple[int, ...]) -> tuple[Any, int]:
    (x,), (d,) = args, dims
    return _bind(batching.moveaxis(x, d, 0), fft_type, fft_lengths), 0


__all__ = ["FftType", "fft_p"]
