"""ember.numpy.fft: `jax.numpy.fft`, NumPy's FFT functions on the `fft` primitive.

Input: array-likes (lists are refused, as JAX does), `n`/`s` (transform lengths: an axis is
cut to the length, or padded with zeros up to it), `axis`/`axes` and `norm` (None or
"backward": no scaling forward, 1/N inverse; "ortho": 1/sqrt(N) both ways; "forward": 1/N
forward, none inverse).
Output: ember arrays, in JAX's dtypes: complex64 (complex128 for 64-bit inputs) from the
complex transforms, the real type of that width from irfft*/hfft.
  fft, ifft, rfft, irfft, hfft, ihfft   one axis (`n`, `axis`)
  fft2, ifft2, rfft2, irfft2            two axes (`s`, `axes`, default the last two)
  fftn, ifftn, rfftn, irfftn            any axes (`s`, `axes`; default all, or the last
                                        len(s) when only `s` is given)
  fftfreq, rfftfreq                     the sample frequencies k / (d n)
  fftshift, ifftshift                   the zero frequency rolled to the middle and back
Invariants: the transformed axes are moved last, since the primitive transforms minor
dimensions, then moved back; a transform over more than 3 axes (XLA's limit) is done in
pieces of at most 3: the real-to-complex piece first, the complex-to-real piece last. An
irfft with no length given produces 2 (m - 1) points from m, the last axis's count.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval as _get_aval
from ember.numpy import _creation, _manipulation, _ufuncs
from ember.numpy._promote import check_arraylike as _check_arraylike
from ember.numpy._promote import ensure_array as _ensure_array
from ember.prims.fft import FftType

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_INVERSE = {FftType.IFFT, FftType.IRFFT}


def _norm_scale(norm: str, lengths: Sequence[int], inverse: bool) -> float | None:
    """The factor a `norm` multiplies the unnormalized (forward) or 1/N (inverse) transform
    by; None: no multiplication."""
    if norm == "backward":
        return None
    count = float(math.prod(lengths))
    if norm == "ortho":
        root = math.sqrt(count)
        return root if inverse else (1.0 / root if root else math.inf)
    if norm == "forward":
        return count if inverse else (1.0 / count if count else math.inf)
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _transform_nd(x: Any, fft_type: FftType, lengths: tuple[int, ...]) -> Any:
    """The transform over x's last len(lengths) axes, in pieces of at most 3 axes."""
    k = len(lengths)
    if k <= 3:
        return lax.fft(x, fft_type, lengths)
    nd = _get_aval(x).ndim
    head = tuple(range(nd - k, nd - 3))  # the leading k - 3 transformed axes
    end = tuple(range(nd - (k - 3), nd))  # where they go for their own transform
    inner = FftType.IFFT if fft_type in _INVERSE else FftType.FFT
    if fft_type not in _INVERSE:  # (possibly) real to complex first
        x = lax.fft(x, fft_type, lengths[-3:])
    x = _manipulation.moveaxis(x, head, end)
    x = _transform_nd(x, inner, lengths[:-3])
    x = _manipulation.moveaxis(x, end, head)
    if fft_type in _INVERSE:  # (possibly) complex to real last
        x = lax.fft(x, fft_type, lengths[-3:])
    return x


def _resize(x: Any, shape: list[int]) -> Any:
    """x cut or zero-padded (at the end) to `shape`."""
    have = _get_aval(x).shape
    if any(n < h for n, h in zip(shape, have)):
        x = lax.slice(x, (0,) * len(shape), tuple(min(n, h) for n, h in zip(shape, have)))
    have = _get_aval(x).shape
    if any(n > h for n, h in zip(shape, have)):
        zero = np.zeros((), _get_aval(x).dtype)
        x = lax.pad(x, zero, [(0, n - h, 0) for n, h in zip(shape, have)])
    return x


def _core(name: str, fft_type: FftType, a: Any, s: Sequence[int] | None,
          axes: Sequence[int] | None, norm: str | None) -> Any:
    full_name = f"jax.numpy.fft.{name}"
    _check_arraylike(full_name, a)
    x = _ensure_array(a)
    nd = _get_aval(x).ndim
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    given = axes
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    k = len(axes)
    last = tuple(range(nd - k, nd))
    if given is not None:
        x = _manipulation.moveaxis(x, tuple(given), last)
    shape = list(_get_aval(x).shape)
    if s is not None:
        for ax, n in zip(last, s):
            shape[ax] = n
        if fft_type == FftType.IRFFT:
            shape[-1] = shape[-1] // 2 + 1
        x = _resize(x, shape)
        lengths = tuple(s)
    elif fft_type == FftType.IRFFT and k:
        lengths = tuple(shape[ax] for ax in last[:-1]) + (max(0, 2 * (shape[-1] - 1)),)
    else:
        lengths = tuple(shape[ax] for ax in last)
    out = _transform_nd(x, fft_type, lengths)
    if norm is not None:
        scale = _norm_scale(norm, lengths, name.startswith("i"))
        if scale is not None:
            out = lax.mul(out, np.array(scale, _get_aval(out).dtype))
    if given is not None:
        out = _manipulation.moveaxis(out, last, tuple(given))
    return out


def _one_axis(name: str, axis: Any) -> list[int]:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")
    return [axis]


def _core_1d(name: str, fft_type: FftType, a: Any, n: int | None, axis: int,
             norm: str | None) -> Any:
    axes = _one_axis(name, axis)
    return _core(name, fft_type, a, None if n is None else [n], axes, norm)


def _core_2d(name: str, fft_type: FftType, a: Any, s: Sequence[int] | None,
             axes: Sequence[int], norm: str | None) -> Any:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return _core(name, fft_type, a, s, axes, norm)


# -- one axis ------------------------------------------------------------------------------------

def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Compute the one-dimensional discrete Fourier transform.

    Args:
        a: an array; real inputs become complex (complex64 unless x64 is on).
        n: the number of points (the input is cut or zero-padded along ``axis``) (default: the axis'
            length).
        axis: the axis to transform.
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``sum_k a[k] exp(-2 pi i j k / n)`` for each frequency j, along ``axis``.

    Example:
        >>> jnp.fft.fft(jnp.array([1.0, 2.0, 3.0, 4.0]))
        Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
    """
    return _core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Compute the one-dimensional inverse discrete Fourier transform.

    Args:
        a: an array.
        n: the number of points (the input is cut or zero-padded along ``axis``) (default: the axis'
            length).
        axis: the axis to transform.
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``sum_j a[j] exp(2 pi i j k / n) / n`` (with the default ``norm``): ``ifft(fft(x))`` is
        ``x``.

    Example:
        >>> jnp.fft.ifft(jnp.array([10.0, -2 + 2j, -2, -2 - 2j]))
        Array([1.+0.j, 2.+0.j, 3.+0.j, 4.+0.j], dtype=complex64)
    """
    return _core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Compute the one-dimensional discrete Fourier transform of a real input.

    Args:
        a: an array of real values.
        n: the number of input points (the input is cut or zero-padded along ``axis``) (default: the
            axis' length).
        axis: the axis to transform.
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        The ``n // 2 + 1`` non-negative frequencies of ``fft(a, n)`` (the others are
        their conjugates).

    Example:
        >>> jnp.fft.rfft(jnp.array([1.0, 2.0, 3.0, 4.0]))
        Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    return _core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Compute the inverse of ``rfft``: a real signal from its non-negative frequencies.

    Args:
        a: an array of the non-negative frequencies.
        n: the number of output points (the input is cut or zero-padded along ``axis``) (default ``2
            (m - 1)`` for ``m`` input frequencies).
        axis: the axis to transform.
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        The real signal of ``n`` points whose ``rfft`` is ``a``.

    Example:
        >>> jnp.fft.irfft(jnp.array([10.0, -2 + 2j, -2]))
        Array([1., 2., 3., 4.], dtype=float32)
    """
    return _core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Compute the transform of a signal with Hermitian symmetry, given by its first half.

    Args:
        a: an array (the first half of a Hermitian-symmetric signal).
        n: the number of output points (the input is cut or zero-padded along ``axis``) (default ``2
            (m - 1)``).
        axis: the axis to transform.
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        The real spectrum: ``irfft(conj(a), n)`` scaled by ``n`` (with the default ``norm``).

    Example:
        >>> jnp.fft.hfft(jnp.array([1.0, 2.0, 3.0]))
        Array([ 8., -2.,  0., -2.], dtype=float32)
    """
    conj_a = _ufuncs.conj(a)
    _one_axis("hfft", axis)
    count = (_get_aval(conj_a).shape[axis] - 1) * 2 if n is None else n
    out = _core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return lax.mul(out, np.array(count, _get_aval(out).dtype))


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """Compute the inverse of ``hfft``.

    Args:
        a: an array of real values.
        n: the number of input points (the input is cut or zero-padded along ``axis``) (default: the
            axis' length).
        axis: the axis to transform.
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``conj(rfft(a, n)) / n`` (with the default ``norm``): the first half of a
        Hermitian-symmetric signal.

    Example:
        >>> jnp.fft.ihfft(jnp.array([1.0, 2.0, 3.0, 4.0]))[0]
        Array(2.5+0.j, dtype=complex64)
    """
    _one_axis("ihfft", axis)
    x = _ensure_array(a)
    count = _get_aval(x).shape[axis] if n is None else n
    out = _core_1d("ihfft", FftType.RFFT, x, n, axis, norm)
    return lax.mul(_ufuncs.conj(out), np.array(1 / count, _get_aval(out).dtype))


# -- two axes ------------------------------------------------------------------------------------

def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """Compute the two-dimensional discrete Fourier transform.

    Args:
        a: an array.
        s: the number of points along each transformed axis (cut or zero-padded) (default: the axes'
            lengths).
        axes: the axes to transform (default the last two).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``fftn`` over the two ``axes``.

    Example:
        >>> jnp.fft.fft2(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        Array([[10.+0.j, -2.+0.j],
               [-4.+0.j,  0.+0.j]], dtype=complex64)
    """
    return _core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """Compute the two-dimensional inverse discrete Fourier transform.

    Args:
        a: an array.
        s: the number of points along each transformed axis (cut or zero-padded) (default: the axes'
            lengths).
        axes: the axes to transform (default the last two).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``ifftn`` over the two ``axes``.

    Example:
        >>> jnp.fft.ifft2(jnp.array([[10.0, -2.0], [-4.0, 0.0]]))
        Array([[1.+0.j, 2.+0.j],
               [3.+0.j, 4.+0.j]], dtype=complex64)
    """
    return _core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """Compute the two-dimensional discrete Fourier transform of a real input.

    Args:
        a: an array of real values.
        s: the number of input points along each transformed axis (cut or zero-padded) (default: the
            axes' lengths).
        axes: the axes to transform (default the last two).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``rfftn`` over the two ``axes``.

    Example:
        >>> jnp.fft.rfft2(jnp.ones((2, 4))).shape
        (2, 3)
    """
    return _core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """Compute the inverse of ``rfft2``.

    Args:
        a: an array of the frequencies ``rfft2`` gives.
        s: the number of output points along each transformed axis (cut or zero-padded) (default: as
            ``irfftn``).
        axes: the axes to transform (default the last two).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``irfftn`` over the two ``axes``.

    Example:
        >>> jnp.fft.irfft2(jnp.array([[10.0, -2.0], [-4.0, 0.0]]))
        Array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    return _core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


# -- any axes ------------------------------------------------------------------------------------

def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """Compute the N-dimensional discrete Fourier transform.

    Args:
        a: an array.
        s: the number of points along each transformed axis (cut or zero-padded) (default: the axes'
            lengths).
        axes: the axes to transform (default: all, or the last ``len(s)``).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``fft`` applied along each axis of ``axes``.

    Example:
        >>> jnp.fft.fftn(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        Array([[10.+0.j, -2.+0.j],
               [-4.+0.j,  0.+0.j]], dtype=complex64)
    """
    return _core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """Compute the N-dimensional inverse discrete Fourier transform.

    Args:
        a: an array.
        s: the number of points along each transformed axis (cut or zero-padded) (default: the axes'
            lengths).
        axes: the axes to transform (default: all, or the last ``len(s)``).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``ifft`` applied along each axis of ``axes``: ``ifftn(fftn(x))`` is ``x``.

    Example:
        >>> jnp.fft.ifftn(jnp.array([[10.0, -2.0], [-4.0, 0.0]]))
        Array([[1.+0.j, 2.+0.j],
               [3.+0.j, 4.+0.j]], dtype=complex64)
    """
    return _core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """Compute the N-dimensional discrete Fourier transform of a real input.

    Args:
        a: an array of real values.
        s: the number of input points along each transformed axis (cut or zero-padded) (default: the
            axes' lengths).
        axes: the axes to transform (default: all, or the last ``len(s)``).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        ``rfft`` along the last of ``axes`` (its ``s[-1] // 2 + 1`` non-negative frequencies),
        then ``fft`` along the others.

    Example:
        >>> jnp.fft.rfftn(jnp.ones((2, 4))).shape
        (2, 3)
    """
    return _core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """Compute the inverse of ``rfftn``.

    Args:
        a: an array of the frequencies ``rfftn`` gives.
        s: the number of output points along each transformed axis (cut or zero-padded) (default:
            the axes' lengths, ``2 (m - 1)`` for the last).
        axes: the axes to transform (default: all, or the last ``len(s)``).
        norm: ``'backward'`` (the default: no scaling forward, ``1/n`` inverse),
            ``'ortho'`` (``1/sqrt(n)`` both ways) or ``'forward'`` (``1/n`` forward).

    Returns:
        The real N-dimensional signal whose ``rfftn`` is ``a``.

    Example:
        >>> jnp.fft.irfftn(jnp.array([[10.0, -2.0], [-4.0, 0.0]]))
        Array([[1., 2.],
               [3., 4.]], dtype=float32)
    """
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm)


# -- frequencies and shifts ------------------------------------------------------------------------

def _check_freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d)}.")


def _compute_dtype(dtype: Any) -> np.dtype:
    """The real floating type the frequencies are computed in for a requested `dtype`."""
    dt = dtypes.canonicalize(dtype)
    if dt.kind in "biu":
        dt = dtypes.canonicalize(np.float64 if dt.itemsize == 8 else np.float32)
    return np.dtype(np.finfo(dt).dtype)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """Return the sample frequencies of a discrete Fourier transform.

    Args:
        n: the number of points of the transform.
        d: the sample spacing.
        dtype: the result dtype (default the default float type).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d n)``: the frequency of each
        output of ``fft``.

    Example:
        >>> jnp.fft.fftfreq(4)
        Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    out_dtype = dtype or dtypes.default_float()
    _check_freq_args("fftfreq", n, d)
    work = _compute_dtype(out_dtype)
    k = (np.arange(n) + n // 2) % n - n // 2 if n else np.zeros(0)
    freqs = _creation.asarray(k.astype(work), device=device)
    out = _ufuncs.true_divide(freqs, _creation.asarray(d * n, dtype=work))
    return out.astype(out_dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """Return the sample frequencies of an ``rfft``.

    Args:
        n: the number of input points of the transform.
        d: the sample spacing.
        dtype: the result dtype (default the default float type).
        device: accepted for JAX compatibility; Ember runs on one CPU device.

    Returns:
        ``[0, 1, ..., n // 2] / (d n)``: the frequency of each output of ``rfft``.

    Example:
        >>> jnp.fft.rfftfreq(5, d=0.5)
        Array([0. , 0.4, 0.8], dtype=float32)
    """
    dtype = dtype or dtypes.default_float()
    _check_freq_args("rfftfreq", n, d)
    k = _creation.arange(0, n // 2 + 1, dtype=dtype, device=device)
    return _ufuncs.true_divide(k, _creation.asarray(d * n, dtype=dtype))


def _shifts(x: Any, axes: None | int | Sequence[int], sign: int) -> tuple[Any, Any]:
    shape = _get_aval(x).shape
    if axes is None:
        return [sign * (m // 2) for m in shape], tuple(range(len(shape)))
    if isinstance(axes, int):
        return sign * (shape[axes] // 2), axes
    return [sign * (shape[ax] // 2) for ax in axes], axes


def fftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """Move the zero frequency to the middle of a spectrum.

    Args:
        x: an array (for example the output of ``fft``).
        axes: the axes to shift (default all).

    Returns:
        ``x`` rolled by ``n // 2`` along each axis of ``axes``.

    Example:
        >>> jnp.fft.fftshift(jnp.array([0, 1, 2, -2, -1]))
        Array([-2, -1,  0,  1,  2], dtype=int32)
    """
    _check_arraylike("fftshift", x)
    x = _ensure_array(x)
    shift, axes = _shifts(x, axes, 1)
    return _manipulation.roll(x, shift, axes)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None) -> Any:
    """Undo ``fftshift``: move the zero frequency back to the start.

    Args:
        x: an array.
        axes: the axes to shift (default all).

    Returns:
        ``x`` rolled by ``-(n // 2)`` along each axis of ``axes`` (it differs from
        ``fftshift`` for odd lengths).

    Example:
        >>> jnp.fft.ifftshift(jnp.array([-2, -1, 0, 1, 2]))
        Array([ 0,  1,  2, -2, -1], dtype=int32)
    """
    _check_arraylike("ifftshift", x)
    x = _ensure_array(x)
    shift, axes = _shifts(x, axes, -1)
    return _manipulation.roll(x, shift, axes)


# A JAX name this module lacks: AttributeError saying Ember does not implement it yet.
from ember._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
