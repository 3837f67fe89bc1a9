"""lax sorting and scans: sort, sort_key_val, top_k, cumsum, cumprod, cummax, cummin,
cumlogsumexp.

Input: arrays (a sequence of equal-shape arrays for a multi-operand sort); negative
`dimension`/`axis` count from the end. Output: the primitives' results (prims/sort.py,
prims/cumulative.py). sort returns one array for one operand and a tuple for a sequence.

Also private building blocks shared with ember.numpy (written only with primitives, so
they run under jit): `total_order_key` (an integer or bool key whose `<` is JAX's sorting
order), `argsort` (a sort of (x, iota)), and `take_prefix` (the first k entries along an
axis, padded with a fill value when k exceeds the axis length).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ember.core import dtypes
from ember.lax import _ops as L
from ember.lax._base import aval_of, canonical_axis
from ember.prims import cumulative as C
from ember.prims.sort import sort_p, top_k_p


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort `operand` (or a sequence of operands, by their first `num_keys`) along
    `dimension`."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    if not operands:
        raise TypeError("sort requires at least one operand")
    ndim = aval_of(operands[0]).ndim
    if ndim == 0:
        raise TypeError("sort requires operands of rank >= 1, got a scalar")
    dim = canonical_axis(int(dimension), ndim, "dimension")
    outs = sort_p.bind(*operands, dimension=dim, is_stable=bool(is_stable),
                       num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """Sort `keys` along `dimension` and permute `values` the same way."""
    k, v = sort((keys, values), dimension, is_stable, 1)
    return k, v


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The k largest entries along `axis` (descending; lower index first among equals) and
    their int32 indices. Floats are ordered as JAX's top_k orders them, by their bits
    (IEEE totalOrder): +NaN first, -0.0 after +0.0, -NaN last."""
    aval = aval_of(operand)
    if aval.ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got a scalar")
    ax = canonical_axis(int(axis), aval.ndim)
    k = int(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    values, indices = top_k_p.bind(operand, k=k, axis=ax)
    return values, indices


def _cumulative(prim: Any) -> Any:
    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        ndim = aval_of(operand).ndim
        if ndim == 0:
            raise ValueError(f"{prim.name} requires an operand of rank >= 1, got a scalar")
        return prim.bind(operand, axis=canonical_axis(int(axis), ndim), reverse=bool(reverse))
    fn.__name__ = prim.name
    fn.__doc__ = (f"Inclusive scan `{prim.name}` along `axis` (from the end when reverse), "
                  f"the `{prim.name}` primitive.")
    return fn


cumsum = _cumulative(C.cumsum_p)
cumprod = _cumulative(C.cumprod_p)
cummax = _cumulative(C.cummax_p)
cummin = _cumulative(C.cummin_p)
cumlogsumexp = _cumulative(C.cumlogsumexp_p)


# -- private helpers shared with ember.numpy --------------------------------------------------

def total_order_key(x: Any) -> Any:
    """A key with the same `<` order as JAX's sort comparator.

    Floats: -0.0 -> +0.0 and every NaN -> +NaN, then the IEEE bits as a signed integer b,
    with the magnitude bits of negatives flipped (b ^ INT_MAX), so that integer order equals
    float order: -inf < ... < -0 == +0 < ... < +inf < NaN. Other dtypes are their own key.
    """
    aval = aval_of(x)
    if dtypes.kind(aval.dtype) != "f":
        return x
    ity = {2: np.int16, 4: np.int32, 8: np.int64}[aval.dtype.itemsize]
    canon = L.select(L.ne(x, x), L.full_like(x, np.nan), L.add(x, L.full_like(x, 0)))
    bits = L.bitcast_convert_type(canon, ity)
    flipped = L.bitwise_xor(bits, L.full_like(bits, np.iinfo(ity).max))
    return L.select(L.lt(bits, L.full_like(bits, 0)), flipped, bits)


def argsort(x: Any, axis: int, index_dtype: Any, *, descending: bool = False,
            stable: bool = True) -> Any:
    """Indices that sort x along `axis` (a sort of (x, iota)); descending stays stable
    (equal entries keep their input order) by sorting the reversed array and mapping the
    reversed positions back: i -> n - 1 - i."""
    aval = aval_of(x)
    ax = canonical_axis(int(axis), aval.ndim)
    iota = L.broadcasted_iota(index_dtype, aval.shape, ax)
    if descending:
        x = L.rev(x, (ax,))
        iota = L.rev(iota, (ax,))
    _, idx = sort((x, iota), ax, stable, 1)
    return L.rev(idx, (ax,)) if descending else idx


def masked_pick(x: Any, mask: Any, axes: Sequence[int]) -> Any:
    """Reduce `axes` away keeping, per output entry, the one x where mask is True (0 where
    none is): a gather written as select + reduce, exact for every dtype.

    Floats go through their bit patterns (bitcast to a same-width int), and the reduction
    is a bitwise or with zeros, so -0.0, NaN payloads and subnormals survive; a float sum
    would not (XLA's sum starts from +0.0, and +0.0 + -0.0 = +0.0).
    """
    aval = aval_of(x)
    if dtypes.kind(aval.dtype) == "f":
        ity = {2: np.int16, 4: np.int32, 8: np.int64}[aval.dtype.itemsize]
        bits = L.bitcast_convert_type(x, ity)
        picked = L.reduce_or(L.select(mask, bits, L.full_like(bits, 0)), tuple(axes))
        return L.bitcast_convert_type(picked, aval.dtype)
    return L.reduce_or(L.select(mask, x, L.full_like(x, 0)), tuple(axes))


def take_prefix(x: Any, k: int, axis: int, fill: Any, *, onehot: bool | None = None) -> Any:
    """The first k entries of x along `axis`; positions past the axis length hold `fill`.

    Uses lax.slice and lax.pad when the slicing family provides them (O(k)); otherwise
    (or with onehot=True) a one-hot selection (masked_pick of x[..., i] where i == j), exact
    for every dtype but O(n * k) per row.
    """
    aval = aval_of(x)
    ax = canonical_axis(int(axis), aval.ndim)
    n, k = aval.shape[ax], int(k)
    if k == n:
        return x
    import ember.lax as lax_ns
    if onehot is None:
        onehot = not (hasattr(lax_ns, "slice") and hasattr(lax_ns, "pad"))
    if not onehot:
        out = x
        if k < n:
            limit = tuple(k if i == ax else s for i, s in enumerate(aval.shape))
            out = lax_ns.slice(x, (0,) * aval.ndim, limit)
        if k > n:
            config = [(0, k - n if i == ax else 0, 0) for i in range(aval.ndim)]
            out = lax_ns.pad(out, L.full((), fill, aval.dtype), config)
        return out
    perm = [i for i in range(aval.ndim) if i != ax] + [ax]
    xt = L.transpose(x, perm)
    rest = tuple(aval.shape[i] for i in perm[:-1])
    r = len(rest)
    onehot_mask = L.eq(L.broadcasted_iota(np.int32, (k, n), 1),
                       L.broadcasted_iota(np.int32, (k, n), 0))
    xe = L.broadcast_in_dim(xt, rest + (k, n), tuple(range(r)) + (r + 1,))
    me = L.broadcast_in_dim(onehot_mask, rest + (k, n), (r, r + 1))
    out = masked_pick(xe, me, (r + 1,))
    if k > n:
        valid = L.lt(L.broadcasted_iota(np.int32, rest + (k,), r),
                     L.full(rest + (k,), n, np.int32))
        out = L.select(valid, out, L.full(rest + (k,), fill, aval.dtype))
    inv = [0] * aval.ndim
    for pos, p in enumerate(perm):
        inv[p] = pos
    return L.transpose(out, inv)


def default_index_dtype() -> np.dtype:
    return dtypes.default_int()


__all__ = ["sort", "sort_key_val", "top_k", "cumsum", "cumprod", "cummax", "cummin",
           "cumlogsumexp"]
