"""Products for ember.numpy: dot, matmul (the `@` operator), vdot, inner, outer, tensordot,
einsum, vecdot, kron, and gather-free diagonal and trace (used by einsum and linalg).

Input: array-likes of any dtypes. Output: ember arrays/tracers. Operands are promoted to
one dtype with JAX's lattice and every product is one `dot_general` with
preferred_element_type = that dtype (so `x @ y` prints as JAX prints it). Integer products
wrap, bool products are or-of-ands. Shapes follow NumPy: matmul broadcasts its batch
dimensions (a size-1 batch dimension is not materialized: it becomes a free dimension of
the other operand, then a transpose puts the result in NumPy's order), 1-D operands get
a dimension added and removed.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.core import dtypes
from ember.core.trace import get_aval
from ember.numpy._eager_cache import eager_cached
from ember.numpy._jit_wrap import jit_like_jax
from ember.numpy._manipulation import diagonal
from ember.numpy._promote import check_arraylike, promote_dtypes

# diagonal and trace are defined here gather-free (einsum's repeated labels use diagonal) and
# serve ember.numpy.linalg; the top-level jnp.diagonal/jnp.trace come from _manipulation.
__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum", "vecdot", "kron"]


def _promote(fname: str, *args: Any) -> list[Any]:
    check_arraylike(fname, *args)
    return promote_dtypes(*args)


def _dg(a: Any, b: Any, contract: tuple[Sequence[int], Sequence[int]],
        batch: tuple[Sequence[int], Sequence[int]], precision: Any,
        preferred_element_type: Any) -> Any:
    """dot_general with the result dtype as the preferred element type (what jnp does)."""
    dtype = get_aval(a).dtype if preferred_element_type is None else preferred_element_type
    return lax.dot_general(a, b, (tuple(map(tuple, contract)), tuple(map(tuple, batch))),
                           precision=precision, preferred_element_type=dtype)


@eager_cached  # (an eager call replays its primitives: _eager_cache.py)
def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Compute the dot product of two arrays (NumPy's ``dot``).

    Args:
        a: an array or scalar.
        b: an array or scalar.
        precision: accepted for JAX compatibility (Ember computes in the operands' dtype).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        With a scalar operand, the product ``a * b``; otherwise the sum over ``a``'s last
        axis and ``b``'s last axis (``b`` 1-d) or second-to-last axis, of shape
        ``a.shape[:-1] + b.shape[:-2] + b.shape[-1:]``. For stacks of matrices ``matmul``
        (which broadcasts the batch axes) is usually what is meant.

    Example:
        >>> jnp.dot(jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.array([1.0, 1.0]))
        Array([3., 7.], dtype=float32)
    """
    a, b = _promote("dot", a, b)
    an, bn = get_aval(a).ndim, get_aval(b).ndim
    if an == 0 or bn == 0:
        out = lax.mul(a, b)
        return out if preferred_element_type is None else lax.convert_element_type(
            out, preferred_element_type)
    b_axis = 0 if bn == 1 else bn - 2
    return _dg(a, b, ((an - 1,), (b_axis,)), ((), ()), precision, preferred_element_type)


@eager_cached  # (an eager call replays its primitives: _eager_cache.py)
def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Multiply two arrays as matrices, broadcasting the batch axes (the ``@`` operator).

    Args:
        a: an array of shape ``(..., n, k)``, or ``(k,)`` (a row vector).
        b: an array of shape ``(..., k, m)``, or ``(k,)`` (a column vector).
        precision: accepted for JAX compatibility (Ember computes in the operands' dtype).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        An array of shape ``broadcast(a.shape[:-2], b.shape[:-2]) + (n, m)``, without the
        ``n`` or ``m`` axis of a 1-d operand. Scalars are rejected, as in NumPy.

    Example:
        >>> a = jnp.ones((5, 2, 3))
        >>> b = jnp.ones((3, 4))
        >>> jnp.matmul(a, b).shape
        (5, 2, 4)
    """
    a, b = _promote("matmul", a, b)
    sa, sb = get_aval(a).shape, get_aval(b).shape
    if not sa or not sb:
        raise ValueError(f"matmul: operands must have at least 1 dimension, got shapes {sa} "
                         f"and {sb}")
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    a_batch = sa[:-2] if not a_vec else ()
    b_batch = sb[:-2] if not b_vec else ()
    a_k = len(sa) - 1
    b_k = 0 if b_vec else len(sb) - 2
    if sa[a_k] != sb[b_k]:
        raise ValueError(f"matmul: contracting dimensions differ: {sa} @ {sb} "
                         f"({sa[a_k]} != {sb[b_k]})")
    nb = max(len(a_batch), len(b_batch))
    # Classify each broadcast batch position: a shared batch dim, or a dim that only one
    # operand has (the other has size 1 or lacks it) and that becomes that operand's free dim.
    lb, rb, a_squeeze, b_squeeze = [], [], [], []
    a_free_batch, b_free_batch = [], []   # (result position, operand dim)
    shared = []                           # result positions of the shared batch dims
    out_batch = []
    for i in range(nb):
        ai = i - (nb - len(a_batch))
        bi = i - (nb - len(b_batch))
        asz = sa[ai] if ai >= 0 else None
        bsz = sb[bi] if bi >= 0 else None
        if asz is not None and bsz is not None and asz == bsz:
            lb.append(ai)
            rb.append(bi)
            shared.append(i)
            out_batch.append(asz)
        elif asz is None or (asz == 1 and bsz is not None):  # (b lacking it: a's, below)
            if asz is not None:
                a_squeeze.append(ai)
            b_free_batch.append((i, bi))
            out_batch.append(bsz)
        elif bsz is None or bsz == 1:
            if bsz is not None:
                b_squeeze.append(bi)
            a_free_batch.append((i, ai))
            out_batch.append(asz)
        else:
            raise ValueError(f"matmul: batch dimensions {sa[:-2]} and {sb[:-2]} cannot be "
                             "broadcast together")
    if a_squeeze:
        a = lax.squeeze(a, a_squeeze)
    if b_squeeze:
        b = lax.squeeze(b, b_squeeze)

    def renumber(dims: list[int], removed: list[int]) -> list[int]:
        return [d - sum(r < d for r in removed) for d in dims]

    a_k2, b_k2 = renumber([a_k], a_squeeze)[0], renumber([b_k], b_squeeze)[0]
    out = _dg(a, b, ((a_k2,), (b_k2,)), (renumber(lb, a_squeeze), renumber(rb, b_squeeze)),
              precision, preferred_element_type)
    # dot_general's result order: shared batch, a's free dims (its free batch dims then n),
    # b's free dims (its free batch dims then m). Transpose into NumPy's order: the broadcast
    # batch dims in position order, then n, then m.
    order = [("batch", i) for i in shared] + [("batch", i) for i, _ in a_free_batch]
    if not a_vec:
        order.append(("n", 0))
    order += [("batch", i) for i, _ in b_free_batch]
    if not b_vec:
        order.append(("m", 0))
    target = [("batch", i) for i in range(nb)] + ([] if a_vec else [("n", 0)]) + \
        ([] if b_vec else [("m", 0)])
    perm = [order.index(t) for t in target]
    return lax.transpose(out, perm)


@eager_cached  # (an eager call replays its primitives: _eager_cache.py)
def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Compute the dot product of two flattened arrays, conjugating the first.

    Args:
        a, b: arrays of the same size; both are flattened.
        precision: the matmul precision, as for ``jnp.matmul`` (accepted; Ember's CPU
            products are full precision).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``sum(conj(ravel(a)) * ravel(b))``, a 0-d array.

    Example:
        >>> jnp.vdot(jnp.array([1 + 1j, 2]), jnp.array([1j, 1]))
        Array(3.+1.j, dtype=complex64)
    """
    a, b = _promote("vdot", a, b)
    if dtypes.kind(get_aval(a).dtype) == "c":
        a = lax.conj(a)
    a = lax.reshape(a, (get_aval(a).size,))
    b = lax.reshape(b, (get_aval(b).size,))
    return dot(a, b, precision=precision, preferred_element_type=preferred_element_type)


@eager_cached  # (an eager call replays its primitives: _eager_cache.py)
def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Compute the inner product of two arrays over their last axes.

    Args:
        a, b: arrays whose last dimensions have the same length (scalars multiply).
        precision: the matmul precision, as for ``jnp.matmul`` (accepted; Ember's CPU
            products are full precision).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``sum(a[..., k] * b[..., k])`` for every pair of leading indices: shape
        ``a.shape[:-1] + b.shape[:-1]``.

    Example:
        >>> jnp.inner(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))
        Array(11., dtype=float32)
        >>> jnp.inner(jnp.ones((2, 3)), jnp.ones((4, 3))).shape
        (2, 4)
    """
    a, b = _promote("inner", a, b)
    an, bn = get_aval(a).ndim, get_aval(b).ndim
    if an == 0 or bn == 0:
        return dot(a, b, precision=precision, preferred_element_type=preferred_element_type)
    return _dg(a, b, ((an - 1,), (bn - 1,)), ((), ()), precision, preferred_element_type)


def outer(a: Any, b: Any, out: None = None) -> Any:
    """Compute the outer product of two vectors.

    Args:
        a: an array (flattened first).
        b: an array (flattened first).
        out: not supported (must be None), as in JAX.

    Returns:
        The matrix ``out[i, j] = ravel(a)[i] * ravel(b)[j]``.

    Example:
        >>> jnp.outer(jnp.array([1, 2]), jnp.array([1, 10, 100]))
        Array([[  1,  10, 100],
               [  2,  20, 200]], dtype=int32)
    """
    a, b = _promote("outer", a, b)
    # (each raveled, then given a unit axis by broadcast_in_dim, as JAX's a[:, None])
    a = lax.broadcast_in_dim(lax.reshape(a, (get_aval(a).size,)), (get_aval(a).size, 1), (0,))
    b = lax.broadcast_in_dim(lax.reshape(b, (get_aval(b).size,)), (1, get_aval(b).size), (1,))
    return lax.mul(a, b)


@eager_cached  # (an eager call replays its primitives: _eager_cache.py)
def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Sum the product of two arrays over the given axes.

    Args:
        a: an array.
        b: an array.
        axes: an int ``n``: contract ``a``'s last ``n`` axes with ``b``'s first ``n``; or a
            pair of sequences ``(a_axes, b_axes)`` naming the axes to contract pairwise.
        precision: accepted for JAX compatibility (Ember computes in the operands' dtype).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        An array whose axes are ``a``'s free axes followed by ``b``'s.

    Example:
        >>> a = jnp.ones((2, 3, 4))
        >>> b = jnp.ones((4, 3, 5))
        >>> jnp.tensordot(a, b, axes=([1, 2], [1, 0])).shape
        (2, 5)
    """
    a, b = _promote("tensordot", a, b)
    an, bn = get_aval(a).ndim, get_aval(b).ndim
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > min(an, bn):
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks "
                            f"({an} and {bn})")
        ca, cb = list(range(an - n, an)), list(range(n))
    else:
        try:
            xa, xb = axes
        except (TypeError, ValueError):
            raise TypeError("tensordot axes argument must be an int or a pair of sequences, "
                            f"got {axes!r}") from None
        xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
        xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
        if len(xa) != len(xb):
            raise TypeError(f"tensordot requires axes lists of equal length, got {axes!r}")
        ca = [_axis(x, an) for x in xa]
        cb = [_axis(x, bn) for x in xb]
    return _dg(a, b, (ca, cb), ((), ()), precision, preferred_element_type)


def _axis(axis: Any, ndim: int) -> int:
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
    return ax % ndim


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Compute the dot product of vectors along an axis, conjugating the first.

    Args:
        x1, x2: arrays broadcast against each other; the vectors lie along ``axis``.
        axis: the axis of the vectors (after broadcasting).
        precision: the matmul precision, as for ``jnp.matmul`` (accepted; Ember's CPU
            products are full precision).
        preferred_element_type: the accumulation and result dtype.

    Returns:
        ``sum(conj(x1) * x2, axis=axis)``.

    Example:
        >>> jnp.vecdot(jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.array([1.0, 1.0]))
        Array([3., 7.], dtype=float32)
    """
    x1, x2 = _promote("vecdot", x1, x2)
    if dtypes.kind(get_aval(x1).dtype) == "c":
        x1 = lax.conj(x1)
    from ember.numpy._manipulation import broadcast_arrays
    s1, s2 = get_aval(x1).shape, get_aval(x2).shape
    nd = max(len(s1), len(s2))
    if nd == 0:
        raise ValueError("vecdot requires arrays of rank >= 1")
    ax = _axis(axis, nd)
    a1 = ax - (nd - len(s1))
    a2 = ax - (nd - len(s2))
    if a1 < 0 or a2 < 0 or s1[a1] != s2[a2]:
        raise ValueError(f"vecdot: axis {axis} must have the same size in both operands, got "
                         f"shapes {s1} and {s2}")
    x1, x2 = broadcast_arrays(x1, x2)
    batch = [d for d in range(nd) if d != ax]
    return _dg(x1, x2, ((ax,), (ax,)), (batch, batch), precision, preferred_element_type)


@jit_like_jax("kron")
def kron(a: Any, b: Any) -> Any:
    """The Kronecker product of two arrays.

    Args:
        a, b: arrays or scalars; the one with fewer dimensions gets leading axes of size 1.

    Returns:
        An array of shape ``a.shape * b.shape`` (element-wise) holding the block array
        ``out[i * B + j] = a[i] * b[j]`` along every dimension (``B`` being b's size there).

    Example:
        >>> jnp.kron(jnp.eye(2), jnp.array([[1.0, 2.0]]))
        Array([[1., 2., 0., 0.],
               [0., 0., 1., 2.]], dtype=float32)
    """
    from ember.numpy._manipulation import expand_dims, reshape
    a, b = _promote("kron", a, b)
    na, nb = get_aval(a).ndim, get_aval(b).ndim
    if na < nb:
        a = expand_dims(a, tuple(range(nb - na)))
    elif nb < na:
        b = expand_dims(b, tuple(range(na - nb)))
    nd = max(na, nb)
    # a as (a0, 1, a1, 1, ...) and b as (1, b0, 1, b1, ...): their (size-1 broadcasting)
    # product interleaves the axes, and merging each pair gives the block layout.
    ai = expand_dims(a, tuple(range(1, 2 * nd, 2)))
    bi = expand_dims(b, tuple(range(0, 2 * nd, 2)))
    shape = tuple(x * y for x, y in zip(get_aval(a).shape, get_aval(b).shape))
    return reshape(lax.mul(ai, bi), shape)


# -- einsum ------------------------------------------------------------------------------------

def einsum_next_pair(specs: list[str], out_spec: str, sizes: dict[str, int]
                     ) -> tuple[int, int]:
    """The pair of terms einsum contracts next: the one whose result is smallest (the
    product of the sizes of its letters still needed elsewhere; ties: the leftmost)."""
    best = None
    for i in range(len(specs)):
        for j in range(i + 1, len(specs)):
            keep = set(out_spec).union(*(set(s) for k, s in enumerate(specs)
                                         if k not in (i, j)))
            letters = (set(specs[i]) | set(specs[j])) & keep
            cost = math.prod(sizes[c] for c in letters)
            if best is None or cost < best[0]:
                best = (cost, i, j)
    assert best is not None
    return best[1], best[2]


def einsum(subscripts: str, *operands: Any, out: None = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Evaluate an Einstein summation over the operands.

    Ember's plan: the subscripts become one letter per dimension (``...`` becomes reserved
    letters aligned from the right); each operand's repeated letters take a diagonal and
    letters no one else needs are summed out; then pairs are contracted with ``dot_general``,
    always the pair with the smallest result (ties: the leftmost); a last sum and transpose
    give the output order.

    Args:
        subscripts: e.g. ``"ij,jk->ik"``; without ``->`` the output is the letters that
            appear once, in alphabetical order; ``...`` broadcasts.
        *operands: the arrays, one per comma-separated term.
        out: not supported (must be None), as in JAX.
        optimize: accepted for JAX compatibility; Ember always uses the plan above.
        precision: accepted for JAX compatibility.
        preferred_element_type: the accumulation and result dtype.

    Returns:
        The summed product, in the promoted dtype of the operands.

    Example:
        >>> a = jnp.arange(6.0).reshape(2, 3)
        >>> jnp.einsum("ij,ij->i", a, a)
        Array([ 5., 50.], dtype=float32)
    """
    if not isinstance(subscripts, str):
        raise TypeError("einsum: only the string form of subscripts is supported")
    check_arraylike("einsum", *operands)
    ops = promote_dtypes(*operands) if len(operands) > 1 else [
        promote_dtypes(operands[0])[0]] if operands else []
    if not ops:
        raise ValueError("einsum requires at least one operand")
    dtype = get_aval(ops[0]).dtype if preferred_element_type is None else np.dtype(
        preferred_element_type)
    in_specs, out_spec = _parse_einsum(subscripts, [get_aval(o).shape for o in ops])
    sizes: dict[str, int] = {}
    for spec, o in zip(in_specs, ops):
        for letter, size in zip(spec, get_aval(o).shape):
            if letter in sizes and sizes[letter] != size and 1 not in (sizes[letter], size):
                raise ValueError(f"einsum: size of label '{letter}' differs between operands: "
                                 f"{sizes[letter]} and {size}")
            sizes[letter] = size if letter not in sizes or sizes[letter] == 1 else sizes[letter]
    terms: list[tuple[Any, str]] = []
    for spec, o in zip(in_specs, ops):
        o, spec = _einsum_diagonals(o, spec)
        # A size-1 dimension of a label that is larger elsewhere broadcasts: drop it here.
        drop = [i for i, letter in enumerate(spec) if get_aval(o).shape[i] == 1
                and sizes[letter] != 1]
        if drop:
            o = lax.squeeze(o, drop)
            spec = "".join(letter for i, letter in enumerate(spec) if i not in drop)
        terms.append((o, spec))

    def needed_elsewhere(skip: tuple[int, ...]) -> set[str]:
        keep = set(out_spec)
        for i, (_, s) in enumerate(terms):
            if i not in skip:
                keep |= set(s)
        return keep

    def sum_unneeded(i: int) -> None:
        o, s = terms[i]
        keep = needed_elsewhere((i,))
        axes = [j for j, letter in enumerate(s) if letter not in keep]
        if axes:
            o = lax.reduce_sum(o, axes)
            s = "".join(letter for j, letter in enumerate(s) if j not in axes)
        terms[i] = (o, s)

    for i in range(len(terms)):
        sum_unneeded(i)
    while len(terms) > 1:
        i, j = einsum_next_pair([t[1] for t in terms], out_spec, sizes)
        keep = needed_elsewhere((i, j))
        (x, sx), (y, sy) = terms[i], terms[j]
        shared = [c for c in sx if c in sy]
        batch = [c for c in shared if c in keep]
        contract = [c for c in shared if c not in keep]
        res = _dg(x, y, ([sx.index(c) for c in contract], [sy.index(c) for c in contract]),
                  ([sx.index(c) for c in batch], [sy.index(c) for c in batch]), precision,
                  dtype)
        spec = "".join(batch) + "".join(c for c in sx if c not in shared) + \
            "".join(c for c in sy if c not in shared)
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [(res, spec)]
        sum_unneeded(len(terms) - 1)
    result, spec = terms[0]
    if get_aval(result).dtype != dtype:
        result = lax.convert_element_type(result, dtype)
    # Output labels whose every occurrence was a broadcast size-1 dimension were dropped.
    missing = [c for c in out_spec if c not in spec]
    if missing:
        shape = get_aval(result).shape + (1,) * len(missing)
        result = lax.broadcast_in_dim(result, shape, tuple(range(len(spec))))
        spec += "".join(missing)
    return lax.transpose(result, [spec.index(c) for c in out_spec])


_ELLIPSIS_LETTERS = "".join(chr(c) for c in range(0x3b1, 0x3b1 + 24))  # reserved: Greek


def _parse_einsum(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """One label per dimension for each operand, and the output's labels."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        lhs, rhs = s.split("->")
        explicit = True
    else:
        lhs, rhs, explicit = s, "", False
    specs = lhs.split(",")
    if len(specs) != len(shapes):
        raise ValueError(f"einsum: {len(specs)} operand subscripts for {len(shapes)} operands")
    for part in specs + [rhs]:
        if any(not (c.isalpha() or c == ".") for c in part) or \
                part.replace("...", "").count(".") or part.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {subscripts!r}")
    n_ell = 0
    for spec, shape in zip(specs, shapes):
        n_letters = len(spec.replace("...", ""))
        if "..." in spec:
            if len(shape) < n_letters:
                raise ValueError(f"einsum: operand of shape {shape} has too few dimensions "
                                 f"for subscripts {spec!r}")
            n_ell = max(n_ell, len(shape) - n_letters)
        elif n_letters != len(shape):
            raise ValueError(f"einsum: subscripts {spec!r} do not match an operand of "
                             f"rank {len(shape)}")
    ell = _ELLIPSIS_LETTERS[:n_ell]
    out_specs = []
    for spec, shape in zip(specs, shapes):
        if "..." in spec:
            k = len(shape) - len(spec.replace("...", ""))
            spec = spec.replace("...", ell[n_ell - k:] if k else "")
        out_specs.append(spec)
    if explicit:
        out = rhs.replace("...", ell)
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscript {rhs!r} repeats a label")
        for c in out:
            if not any(c in sp for sp in out_specs):
                raise ValueError(f"einsum: output label '{c}' does not appear in the inputs")
    else:
        counts: dict[str, int] = {}
        for sp in out_specs:
            for c in sp:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return out_specs, out


def _einsum_diagonals(x: Any, spec: str) -> tuple[Any, str]:
    """Collapse repeated labels in one operand ('ii' -> 'i') to their diagonal."""
    while len(set(spec)) != len(spec):
        c = next(ch for ch in spec if spec.count(ch) > 1)
        i = spec.index(c)
        j = spec.index(c, i + 1)
        x = diagonal(x, 0, i, j)   # removes axes i, j; appends the diagonal as the last axis
        spec = "".join(ch for k, ch in enumerate(spec) if k not in (i, j)) + c
    return x, spec
