"""Functions that map a user function over an array for ember.numpy: vectorize (built on
vmap, with `excluded` and a gufunc `signature`), apply_along_axis, apply_over_axes,
fromfunction, and matvec / vecmat (matmul vectorized over '(n,m),(m)->(n)' and
'(n),(n,m)->(m)').

Input: a Python function traced by Ember (so it must be written with ember.numpy / lax
operations) and array-likes. Output: what the mapped function returns, stacked.
Invariants: vectorize broadcasts the arguments' loop dimensions (all but the signature's
trailing core dimensions) and puts one vmap per broadcast dimension, skipping dimensions of
size 1 (vmap with in_axes None there) and re-inserting dimensions no argument maps;
core-dimension sizes must agree across arguments and outputs (JAX's error texts). Keyword
arguments that are not excluded are vectorized like positional ones (JAX silently drops
them); with a signature they must be excluded. apply_along_axis is one vmap per other axis.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember.numpy as jnp
from ember.numpy._promote import check_arraylike
from ember.numpy._reductions import normalize_axes

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "fromfunction", "matvec",
           "vecmat"]

_NAME = r"\w+"
_DIMS = rf"(?:{_NAME}(?:,{_NAME})*)?"
_ARG = rf"\({_DIMS}\)"
_ARGS = rf"{_ARG}(?:,{_ARG})*"
_SIGNATURE = rf"^{_ARGS}->{_ARGS}$"

CoreDims = tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    if not re.match(_SIGNATURE, signature.replace(" ", "")):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = ([tuple(re.findall(_NAME, arg)) for arg in re.findall(_ARG, side)]
                 for side in signature.replace(" ", "").split("->"))
    return ins, outs


def _record_sizes(sizes: dict[str, int], shape: tuple[int, ...], core: CoreDims,
                  context: str, *, is_input: bool) -> None:
    n = len(core)
    if is_input and len(shape) < n:
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all "
                         f"core dimensions {core!r} {context}")
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} "
                         f"{context}")
    for name, size in zip(core, shape[len(shape) - n:] if n else ()):
        if name not in sizes:
            sizes[name] = size
        elif sizes[name] != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                             f"{sizes[name]!r} {context}")


def _checking_outputs(func: Callable, sizes: dict[str, int], out_core: list[CoreDims],
                      context: str) -> Callable:
    def checked(*args: Any) -> Any:
        out = func(*args)
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, "
                            f"got: {out!r}\n{context}")
        shapes = [np.shape(o) for o in (out if isinstance(out, tuple) else [out])]
        if len(shapes) != len(out_core):
            raise TypeError(f"wrong number of output arguments: expected {len(out_core)!r}, "
                            f"got {len(shapes)!r} {context}")
        known = dict(sizes)
        for shape, core in zip(shapes, out_core):
            _record_sizes(known, shape, core, context, is_input=False)
        return out
    return checked


def vectorize(pyfunc: Callable, *, excluded: Any = frozenset(),
              signature: str | None = None) -> Callable:
    """Turn a function of scalars (or of core blocks) into one that broadcasts over arrays.

    The counterpart of :func:`numpy.vectorize` for traced code: instead of a Python loop,
    each broadcast loop dimension becomes one ``vmap``, so ``pyfunc`` is traced once and
    must be written with ``ember.numpy`` / ``lax`` operations.

    Args:
        pyfunc: the function to vectorize.
        excluded: positions (ints) and keyword names (strs) of arguments passed to
            ``pyfunc`` unchanged instead of being mapped over.
        signature: an optional gufunc signature such as ``"(n),(n)->()"``: the named
            trailing dimensions are core dimensions handed whole to ``pyfunc``; sizes that
            share a name must agree. Without it every argument is mapped element by element.
            With a signature, keyword arguments must be listed in ``excluded``.

    Returns:
        A function taking the same arguments as ``pyfunc``: the loop dimensions of its
        arguments broadcast together and lead each output. Unlike NumPy, ``otypes`` and
        ``cache`` are not accepted and the output dtype is whatever ``pyfunc`` returns.

    Example:
        >>> f = jnp.vectorize(lambda a, b: jnp.where(a > b, a - b, a + b))
        >>> f(jnp.array([1, 5, 3]), 2)
        Array([3, 3, 1], dtype=int32)
        >>> dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
        >>> dot(jnp.ones((2, 3)), jnp.arange(3.0))
        Array([3., 3.], dtype=float32)
    """
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = (f"on vectorized function with excluded={excluded!r} and "
                   f"signature={signature!r}")
        dyn_pos = [(i, a) for i, a in enumerate(args) if i not in excluded]
        nones = {j for j, (_, a) in enumerate(dyn_pos) if a is None}
        fixed_pos = {i: a for i, a in enumerate(args) if i in excluded or a is None}
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        kw_names = [k for k in kwargs if k not in excluded]
        if signature is None:
            in_core: list[CoreDims] = [()] * (len(dyn_pos) - len(nones) + len(kw_names))
            out_core = None
        else:
            if kw_names:
                raise TypeError(f"keyword arguments {kw_names} of a vectorized function with "
                                "a signature must be listed in excluded")
            in_core, out_core = _parse_signature(signature)
            if any(j < len(in_core) and in_core[j] != () for j in nones):
                raise ValueError(f"Cannot pass None at locations {nones} with "
                                 f"signature={signature!r}")
            in_core = [c for j, c in enumerate(in_core) if j not in nones]
        dyn = [jnp.asarray(a) for i, a in enumerate(args) if i not in fixed_pos]
        dyn += [jnp.asarray(kwargs[k]) for k in kw_names]
        n_pos = len(dyn) - len(kw_names)

        def call(*vals: Any) -> Any:
            full = list(vals[:n_pos])
            for i in sorted(fixed_pos):
                full.insert(i, fixed_pos[i])
            named = dict(zip(kw_names, vals[n_pos:]))
            return pyfunc(*full, **named, **fixed_kw)

        if len(dyn) != len(in_core):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_core)!r}, "
                            f"got {len(dyn)!r} {context}")
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(dyn, in_core):
            _record_sizes(sizes, a.shape, core, context, is_input=True)
            loop_shapes.append(a.shape[:a.ndim - len(core)])
        bshape = jnp.broadcast_shapes(*loop_shapes)
        func = call if out_core is None else _checking_outputs(call, sizes, out_core, context)
        squeezed, rev_shapes = [], []
        for a, loop in zip(dyn, loop_shapes):
            rev_shapes.append(((1,) * (len(bshape) - len(loop)) + loop)[::-1])
            ones = tuple(i for i, s in enumerate(loop) if s == 1)
            squeezed.append(jnp.squeeze(a, axis=ones) if ones else a)
        from ember.vmap_api import vmap
        expand = []
        # From the last loop dimension out: each mapped one wraps the function in a vmap
        # over the (squeezed) arguments' leading axis.
        for neg, dim_sizes in enumerate(zip(*rev_shapes)):
            axes = tuple(None if s == 1 else 0 for s in dim_sizes)
            if all(ax is None for ax in axes):
                expand.append(len(bshape) - 1 - neg)
            else:
                func = vmap(func, in_axes=axes)
        out = func(*squeezed)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(jnp.expand_dims(o, tuple(expand)) for o in out)
        return jnp.expand_dims(out, tuple(expand))

    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """Apply a function to every 1-D slice of an array along one axis.

    The counterpart of :func:`numpy.apply_along_axis`, built on ``vmap``: ``func1d`` is
    traced once on one slice rather than called once per slice.

    Args:
        func1d: a function of a 1-D array (traced, so written with ``ember.numpy``).
        axis: the axis whose slices ``func1d`` receives.
        arr: the input array.
        *args: passed on to ``func1d`` after the slice.
        **kwargs: passed on to ``func1d`` as keywords.

    Returns:
        The stacked results: the dimensions of ``func1d``'s output take the place of
        ``axis`` (a scalar output removes it).

    Example:
        >>> x = jnp.array([[3, 1, 2], [9, 7, 8]])
        >>> jnp.apply_along_axis(jnp.sort, 1, x)
        Array([[1, 2, 3],
               [7, 8, 9]], dtype=int32)
        >>> jnp.apply_along_axis(lambda v: v[0] - v[-1], 0, x)
        Array([-6, -6, -6], dtype=int32)
    """
    check_arraylike("apply_along_axis", arr)
    from ember.vmap_api import vmap
    nd = np.ndim(arr)
    ax = normalize_axes(axis, nd)[0]

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    # Axes after `axis` map innermost-last (their outputs go at the end), then the leading.
    for i in range(1, nd - ax):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(ax):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(jnp.asarray(arr))


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """Apply a reduction repeatedly over several axes, keeping the array's rank.

    The counterpart of :func:`numpy.apply_over_axes`.

    Args:
        func: called as ``func(a, axis)``; it must return an array of the same rank, or of
            one rank less (the reduced axis is then put back with length 1).
        a: the input array.
        axes: the axes, applied in order.

    Returns:
        The result after the last axis, with ``a``'s number of dimensions. A ``func`` that
        returns any other rank raises ``ValueError``.

    Example:
        >>> x = jnp.arange(6).reshape(2, 3)
        >>> jnp.apply_over_axes(jnp.sum, x, [0, 1])
        Array([[15]], dtype=int32)
        >>> jnp.apply_over_axes(jnp.sum, x, [1])
        Array([[ 3],
               [12]], dtype=int32)
    """
    check_arraylike("apply_over_axes", a)
    arr = jnp.asarray(a)
    for axis in axes:
        b = func(arr, axis)
        if b.ndim == arr.ndim:
            arr = b
        elif b.ndim == arr.ndim - 1:
            arr = jnp.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """Build an array by calling a function on the index grid of a shape.

    The counterpart of :func:`numpy.fromfunction`. Where NumPy calls ``function`` once
    with whole index arrays, Ember maps it with one ``vmap`` per axis, so ``function``
    receives scalar indices; an elementwise function gives the same result either way.

    Args:
        function: called as ``function(i0, i1, ..., **kwargs)`` with one index per axis.
        shape: an int or a tuple of ints (static).
        dtype: the dtype of the indices passed in (default: the default float type).
        **kwargs: passed on to ``function``.

    Returns:
        The array of ``function``'s values, of shape ``shape`` (followed by the shape of
        each value when ``function`` returns non-scalars).

    Example:
        >>> jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int)
        Array([[ 0,  1,  2],
               [10, 11, 12]], dtype=int32)
        >>> jnp.fromfunction(lambda i, j: i == j, (2, 2))
        Array([[ True, False],
               [False,  True]], dtype=bool)
    """
    from ember.vmap_api import vmap
    dims = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    fn = function
    for i in range(len(dims)):
        # The vmap added last is outermost: it maps the first axis.
        fn = vmap(fn, in_axes=tuple(0 if j == len(dims) - 1 - i else None
                                    for j in range(len(dims))))
    return fn(*(jnp.arange(s, dtype=dtype) for s in dims), **kwargs)


def matvec(x1: Any, x2: Any, /) -> Any:
    """Compute matrix-vector products over broadcast leading dimensions.

    The counterpart of :func:`numpy.matvec` (NumPy 2.2): the gufunc
    ``(n,m),(m)->(n)``.

    Args:
        x1: an array of matrices, shape ``(..., n, m)``.
        x2: an array of vectors, shape ``(..., m)``; the leading dimensions of both
            broadcast together.

    Returns:
        The products ``x1 @ x2`` of each matrix with its vector, shape ``(..., n)``.

    Example:
        >>> a = jnp.array([[1, 2], [3, 4]])
        >>> jnp.matvec(a, jnp.array([1, 1]))
        Array([3, 7], dtype=int32)
        >>> jnp.matvec(a, jnp.array([[1, 0], [0, 1], [1, 1]]))
        Array([[1, 3],
               [2, 4],
               [3, 7]], dtype=int32)
    """
    check_arraylike("matvec", x1, x2)
    return vectorize(jnp.matmul, signature="(n,m),(m)->(n)")(x1, x2)


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Compute vector-matrix products over broadcast leading dimensions.

    The counterpart of :func:`numpy.vecmat` (NumPy 2.2): the gufunc
    ``(n),(n,m)->(m)``, with the vector conjugated as in :func:`numpy.vecdot`.

    Args:
        x1: an array of vectors, shape ``(..., n)`` (conjugated when complex).
        x2: an array of matrices, shape ``(..., n, m)``; the leading dimensions of both
            broadcast together.

    Returns:
        ``conj(x1) @ x2`` for each pair, shape ``(..., m)``.

    Example:
        >>> jnp.vecmat(jnp.array([1, 1]), jnp.array([[1, 2], [3, 4]]))
        Array([4, 6], dtype=int32)
        >>> jnp.vecmat(jnp.array([1j, 1]), jnp.array([[1, 0], [0, 1]]))
        Array([0.-1.j, 1.+0.j], dtype=complex64)
    """
    check_arraylike("vecmat", x1, x2)
    return vectorize(jnp.matmul, signature="(n),(n,m)->(m)")(jnp.conj(x1), x2)
