"""ember.lax.fft: the discrete Fourier transform primitive as a function (`jax.lax.fft`).

Input: an array, `fft_type` (an `FftType` or one of the strings "fft", "ifft", "rfft",
"irfft", in either case) and `fft_lengths` (the lengths of the transform over the
operand's last len(fft_lengths) dimensions, 1 to 3 of them).
Output: the `fft` primitive's result (prims/fft.py). As in JAX, the operand is first
converted: to a complex type for FFT, IFFT and IRFFT (float64 and complex128 give
complex128, every other type complex64), to an inexact type for RFFT (integers and bools
become float32, 64-bit integers float64; a complex operand is an error); an empty
`fft_lengths` returns the converted operand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.lax._base import aval_of, convert_element_type
from ember.prims.fft import FftType, fft_p

__all__ = ["FftType", "fft", "fft_p"]

_BY_NAME = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
            "irfft": FftType.IRFFT}


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type.lower() in _BY_NAME and fft_type in (fft_type.lower(), fft_type.upper()):
            return _BY_NAME[fft_type.lower()]
        raise ValueError(f"Unknown FFT type '{fft_type}'")
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _inexact(dtype: np.dtype) -> np.dtype:
    """JAX's to_inexact_dtype: bool and integers to float32 (64-bit integers: float64)."""
    if dtype.kind in "fc":
        return dtype
    return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _complex(dtype: np.dtype) -> np.dtype:
    inexact = _inexact(dtype)
    wide = inexact in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The FFT of x over its last len(fft_lengths) dimensions (see the module docstring).
    Under a trace it stages as `jit[name=fft]`, as JAX's jitted lax.fft does."""
    lengths = tuple(int(n) for n in fft_lengths)
    return _staged()(x, fft_type=fft_type, fft_lengths=lengths)


_STAGED: list[Any] = []


def _staged() -> Any:
    """`_fft` wrapped to trace as JAX's `jit[name=fft]` (made on first use: the wrapper
    lives in ember.numpy, which imports this module)."""
    if not _STAGED:
        from ember.numpy._jit_wrap import jit_like_jax
        _STAGED.append(jit_like_jax("fft", static_argnames=("fft_type", "fft_lengths"))(_fft))
    return _STAGED[0]


def _fft(x: Any, fft_type: FftType | str, fft_lengths: tuple[int, ...]) -> Any:
    kind = _fft_type(fft_type)
    dtype = aval_of(x).dtype
    if kind == FftType.RFFT:
        if dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, _inexact(dtype))
    else:
        x = convert_element_type(x, _complex(dtype))
    if not fft_lengths:
        return x
    return fft_p.bind(x, fft_type=kind, fft_lengths=fft_lengths)
