"""Scaled dot-product attention (as jax.nn.dot_product_attention, its 'xla' implementation).

Input: `query` (B, T, N, H) or (T, N, H), `key` and `value` (B, S, K, H) or (S, K, H) with
N a multiple of K (K = N: multi-head; K < N: grouped-query attention), an optional additive
`bias` and boolean `mask` broadcastable to (B, N, T, S), `scale` (default 1/sqrt(H)),
`is_causal`, per-batch `query_seq_lengths` / `key_value_seq_lengths` (int32, shape (B,)),
and `local_window_size` (left, right). Output: an array of query's shape, and with
`return_residual=True` also the logsumexp of the masked logits, shaped (B, T, N) or (T, N).
Invariants: JAX's arithmetic: logits in promote(query dtype, float32), masked-out logits
set to -0.7 * (the largest finite value, capped at float32's), softmax in float32, the
probabilities cast to the key's dtype before the second product; query positions past
their sequence length give zeros. Grouped heads are carried as a (K, G) pair of axes of
one product each way (where JAX maps over G).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import ember.numpy as jnp
from ember import lax
from ember.core import dtypes
from ember.nn._logsumexp import logsumexp
from ember.nn._softmax import softmax

__all__ = ["dot_product_attention"]


def _ensure_4d(t: Any) -> Any:
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t: Any, shape: list[int], dtype: Any, name: str) -> None:
    """JAX's shape and dtype checks (-1 in `shape` matches any size)."""
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def _grouped(t: Any, k: int, g: int) -> Any:
    """A (B, N or 1, T, S) bias or mask as (B, K or 1, G or 1, T, S), the logits' layout."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return t[:, :, None, :, :]
    if tn != k * g:
        raise ValueError(f"bias/mask head dimension should be 1 or {k * g}, but got {tn}")
    return jnp.reshape(t, (tb, k, g, tt, ts))


def _large_negative(dtype: np.dtype) -> Any:
    # Capped at float32's range: the softmax runs in float32, where a float64 -0.7 * max
    # would become -inf (and an all-masked row nan).
    top = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return jnp.asarray(-0.7 * top, dtype=dtype)


def _mask_logits(logits: Any, mask: Any, is_causal: bool, q_len: Any, kv_len: Any,
                 window: tuple[int, int] | None) -> Any:
    """Logits (B, K, G, T, S) with every position the masks exclude set very negative."""
    if mask is None and not is_causal and q_len is None and kv_len is None and window is None:
        return logits
    t, s = logits.shape[-2:]
    keep = jnp.ones(logits.shape, dtype=bool)
    if mask is not None:
        keep = keep & mask
    q_pos = lax.broadcasted_iota(np.int32, (t, s), 0)
    k_pos = lax.broadcasted_iota(np.int32, (t, s), 1)
    if is_causal:  # query i sees keys 0..i (aligned at the start, as jnp.tril)
        keep = keep & (k_pos <= q_pos)
    if window is not None:
        left, right = window
        keep = keep & (q_pos <= k_pos + left) & (q_pos >= k_pos - right)
    if q_len is not None or kv_len is not None:
        pad = jnp.ones((1, t, s), dtype=bool)
        if q_len is not None:
            pad = pad & (q_pos[None] < q_len[:, None, None])
        if kv_len is not None:
            pad = pad & (k_pos[None] < kv_len[:, None, None])
        keep = keep & pad[:, None, None, :, :]
    return jnp.where(keep, logits, _large_negative(logits.dtype))


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None,
                          mask: Any = None, *, scale: float | None = None,
                          is_causal: bool = False, query_seq_lengths: Any = None,
                          key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """softmax(Q K^T * scale + bias, masked) V per head (as jax.nn.dot_product_attention
    with implementation 'xla'; 'cudnn' is refused: Ember has no cuDNN)."""
    output_shape = jnp.asarray(query).shape
    q, k, v = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    q_len = jnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_len = jnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, kh, h = k.shape
    _check(v, [b, s, kh, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [b], np.dtype("int32"), "key_value_seq_lengths")
    t, n = q.shape[1], q.shape[2]
    if n % kh != 0:
        raise ValueError(f"The number of query heads must be a multiple of "
                         f"key/value heads, but got {n} vs {kh}")
    if implementation == "cudnn":
        raise ValueError("implementation='cudnn' needs cuDNN on a GPU, which Ember does not "
                         "have; use implementation='xla' or None")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    g = n // kh
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale

    logits_dtype = jnp.promote_types(q.dtype, np.float32)
    qg = jnp.reshape(q, (b, t, kh, g, h))
    logits = jnp.einsum("btkgh,bskh->bkgts", qg, k, preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale_val, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, kh, g)).astype(logits.dtype)
    logits = _mask_logits(logits, _grouped(mask, kh, g), is_causal, q_len, kv_len,
                          local_window_size)
    logits = logits.astype(np.float32)  # the softmax always runs in float32
    probs = softmax(logits, axis=-1).astype(k.dtype)
    encoded = jnp.einsum("bkgts,bskh->btkgh", probs, v)
    if q_len is not None:
        valid = jnp.arange(t)[None, :] < q_len[:, None]
        encoded = encoded * valid[:, :, None, None, None].astype(encoded.dtype)
    out = jnp.reshape(encoded, output_shape)
    if not return_residual:
        return out
    lse = logsumexp(logits, axis=-1).astype(k.dtype)  # (B, K, G, T)
    lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), (b, t, n))
    return out, jnp.reshape(lax.stop_gradient(lse), output_shape[:-1])
