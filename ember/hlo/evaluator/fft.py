"""The evaluator's `fft` opcode: discrete Fourier transforms through NumPy's pocketfft.

Input: an array and the opcode's attributes: `fft_type` ("FFT", "IFFT", "RFFT", "IRFFT")
and `fft_length`, the k = 1..3 transform lengths of the operand's minor k dimensions (the
leading dimensions are a batch). Output: a fresh NumPy array of the result type XLA gives:
  FFT    c -> c, X[f] = sum_t x[t] exp(-2 pi i <f, t / n>)        (same shape)
  IFFT   c -> c, x[t] = (1 / prod n) sum_f X[f] exp(+2 pi i <f, t / n>)
  RFFT   f32 -> c64, f64 -> c128: FFT of a real input, keeping the non-negative
         frequencies of the last axis (n[-1] // 2 + 1 of them)
  IRFFT  c64 -> f32, c128 -> f64: the real x whose RFFT is the operand (the last axis holds
         n[-1] // 2 + 1 entries; the Hermitian half is implied, and the imaginary parts of
         the zero and Nyquist frequencies are ignored)
Invariants: single precision stays single precision (NumPy >= 2 transforms float32 and
complex64 natively, as XLA's CPU FFT does); a transform of length 0, or an empty batch,
gives zeros of the result shape (an empty sum) instead of NumPy's error. The same function
is the `fft` primitive's eager rule (prims/fft.py) and the CPU backend's host call
(backends/cpu/emit/fft.py), which passes `out` to write into its result buffer.
"""

from __future__ import annotations

import numpy as np

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def result_shape(shape: tuple[int, ...], fft_type: str, lengths: tuple[int, ...]
                 ) -> tuple[int, ...]:
    """The result's dimensions for an operand of dimensions `shape`."""
    k = len(lengths)
    if fft_type == "RFFT":
        return tuple(shape[:-k]) + tuple(lengths[:-1]) + (lengths[-1] // 2 + 1,)
    if fft_type == "IRFFT":
        return tuple(shape[:-k]) + tuple(lengths)
    return tuple(shape)


def result_dtype(dtype: np.dtype, fft_type: str) -> np.dtype:
    """c -> c for FFT/IFFT, f32 -> c64 for RFFT, c64 -> f32 for IRFFT."""
    dtype = np.dtype(dtype)
    if fft_type == "RFFT":
        return _COMPLEX_OF[dtype]
    if fft_type == "IRFFT":
        return _REAL_OF[dtype]
    return dtype


def fft(x: np.ndarray, fft_type: str, lengths: tuple[int, ...],
        out: np.ndarray | None = None) -> np.ndarray:
    """The `fft` opcode on `x` (see the module docstring); writes into `out` when given
    (C-contiguous, of the result's shape and dtype) and returns it."""
    x = np.asarray(x)
    lengths = tuple(int(n) for n in lengths)
    shape = result_shape(x.shape, fft_type, lengths)
    dtype = result_dtype(x.dtype, fft_type)
    if out is None:
        out = np.empty(shape, dtype)
    if out.size == 0 or x.size == 0 or 0 in lengths:
        out[...] = 0  # an empty sum (XLA's value for a zero length)
        return out
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if fft_type == "FFT":
        np.fft.fftn(x, axes=axes, out=out)
    elif fft_type == "IFFT":
        np.fft.ifftn(x, axes=axes, out=out)
    elif fft_type == "RFFT":
        np.fft.rfftn(x, axes=axes, out=out)
    elif fft_type == "IRFFT":
        np.fft.irfftn(x, s=lengths, axes=axes, out=out)
    else:
        raise ValueError(f"unknown fft_type {fft_type!r}; expected one of {FFT_TYPES}")
    return out


__all__ = ["FFT_TYPES", "fft", "result_dtype", "result_shape"]
