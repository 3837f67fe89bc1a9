"""jnp.convolve and jnp.correlate: 1-D discrete convolution and cross-correlation.

Input: two non-empty 1-D arrays, `mode` ('full', 'same', 'valid'), precision and
preferred_element_type. Output: a 1-D array of the promoted inexact dtype (or the promoted
dtype with preferred_element_type): 'full' has len(a) + len(v) - 1 elements, 'same'
max(len(a), len(v)), 'valid' max - min + 1.
Semantics (NumPy's, computed as JAX does with one `conv_general_dilated`): convolve
slides the flipped shorter array over the longer one; correlate slides v (conjugated)
over a, and when v is the longer one the operands swap and the result reverses, so
correlate(a, v) keeps NumPy's orientation.
"""

from __future__ import annotations

from typing import Any

from ember import lax
from ember.core import dtypes
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._promote import ensure_array, promote_dtypes, promote_dtypes_inexact

__all__ = ["convolve", "correlate"]


@jit_like_jax("_conv", static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(x: Any, y: Any, mode: str, op: str, precision: Any,
          preferred_element_type: Any) -> Any:
    from ember.numpy._manipulation import flip
    x, y = ensure_array(x), ensure_array(y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if op == "correlate":
        if dtypes.kind(y.dtype) == "c":
            from ember.numpy._ufuncs import conjugate
            y = conjugate(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = flip(y)
    k = y.shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(k // 2, k - k // 2 - 1)]
    elif mode == "full":
        padding = [(k - 1, k - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    # (x[None, None, :] and result[0, 0, :], staged as JAX stages that indexing)
    out = lax.conv_general_dilated(lax.broadcast_in_dim(x, (1, 1, x.shape[0]), (2,)),
                                   lax.broadcast_in_dim(y, (1, 1, k), (2,)), (1,), padding,
                                   precision=precision,
                                   preferred_element_type=preferred_element_type)
    if reverse:
        out = lax.rev(out, (2,))
    return lax.squeeze(out, (0, 1))


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Compute the discrete linear convolution of two 1-d arrays.

    Args:
        a, v: non-empty 1-d arrays; integers promote to the default float type (unless
            ``preferred_element_type`` is given).
        mode: ``'full'`` (every overlap: ``len(a) + len(v) - 1`` values), ``'same'`` (the
            length of the longer input, centered) or ``'valid'`` (complete overlaps only).
        precision: the precision of the underlying convolution (accepted; Ember's CPU
            convolutions are full precision).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``out[k] = sum_j a[j] v[k - j]``, computed as one ``conv_general_dilated`` (as JAX);
        the result is the same whichever input is longer.

    Example:
        >>> jnp.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))
        Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    return _convolve(a, v, mode=mode, precision=precision,
                     preferred_element_type=preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Compute the cross-correlation of two 1-d arrays.

    Args:
        a, v: non-empty 1-d arrays; integers promote to the default float type (unless
            ``preferred_element_type`` is given).
        mode: ``'valid'`` (the default here: complete overlaps only), ``'full'`` (every
            overlap: ``len(a) + len(v) - 1`` values) or ``'same'`` (the length of the
            longer input, centered).
        precision: the precision of the underlying convolution (accepted; Ember's CPU
            convolutions are full precision).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``out[k] = sum_n a[n + k] conj(v[n])`` (NumPy's orientation, also when ``v`` is the
        longer input).

    Example:
        >>> jnp.correlate(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]), mode="full")
        Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    return _correlate(a, v, mode=mode, precision=precision,
                      preferred_element_type=preferred_element_type)


# (JAX jits the public functions around the shared `_conv`; so does Ember under a trace)
@jit_like_jax("convolve", static_argnames=("mode", "precision", "preferred_element_type"))
def _convolve(a: Any, v: Any, mode: str, precision: Any, preferred_element_type: Any) -> Any:
    return _conv(a, v, mode=mode, op="convolve", precision=precision,
                 preferred_element_type=preferred_element_type)


@jit_like_jax("correlate", static_argnames=("mode", "precision", "preferred_element_type"))
def _correlate(a: Any, v: Any, mode: str, precision: Any, preferred_element_type: Any) -> Any:
    return _conv(a, v, mode=mode, op="correlate", precision=precision,
                 preferred_element_type=preferred_element_type)
