"""1-D discrete convolution and cross-correlation for ember.numpy: convolve, correlate.

Input: two non-empty 1-D array-likes, `mode` 'full' / 'same' / 'valid'. Output: a 1-D
array, inexact unless `preferred_element_type` is given (then the inputs' promoted type).
Invariants (JAX's): the longer input slides over the shorter; correlate with the inputs
swapped gives the reversed result. Computed as one gather of the sliding windows of the
padded long input and one dot with the short one (out[i] = sum_j xpad[i + j] * y[j]), so it
differentiates and maps under vmap like any gather and dot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.numpy._promote import check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["convolve", "correlate"]


def _slide(x: Any, y: Any, mode: str, op: str, precision: Any, pref: Any) -> Any:
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if pref is None:
        x, y = promote_dtypes_inexact(x, y)
    else:
        x, y = promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if op == "correlate":
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = y[::-1]
    m = y.shape[0]
    if mode == "valid":
        pad = (0, 0)
    elif mode == "same":
        pad = (m // 2, m - m // 2 - 1)
    elif mode == "full":
        pad = (m - 1, m - 1)
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    xp = jnp.pad(x, [pad])
    n_out = xp.shape[0] - m + 1
    windows = xp[jnp.arange(n_out)[:, None] + jnp.arange(m)[None, :]]
    out = jnp.matmul(windows, y, precision=precision, preferred_element_type=pref)
    return out[::-1] if reverse else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Discrete linear convolution: out[k] = sum_j a[j] v[k - j]."""
    check_arraylike("convolve", a, v)
    return _slide(jnp.asarray(a), jnp.asarray(v), mode, "convolve", precision,
                  preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Cross-correlation: out[k] = sum_j a[j + k] v[j] (real inputs)."""
    check_arraylike("correlate", a, v)
    return _slide(jnp.asarray(a), jnp.asarray(v), mode, "correlate", precision,
                  preferred_element_type)
