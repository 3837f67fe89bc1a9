"""The last `jax.numpy` functions Ember lacked (issue 25 item 5): `cross`, `sort_complex`,
`einsum_path`, `frompyfunc` and the `object_` type.

Input: array-likes (and, for `einsum_path`, only their shapes; for `frompyfunc`, a scalar
function written with `ember.numpy`). Output: what JAX 0.10.2 returns, with NumPy's
semantics where JAX keeps them. Invariants: `cross` takes 2- and 3-vectors (a 2-vector is a
3-vector with z = 0; two 2-vectors give the z component alone, as NumPy and JAX do);
`einsum_path` computes no values: it replays einsum's own choice of pairs on the shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core.trace import get_aval
from ember.numpy._jit_wrap import jit_like_jax

object_ = np.object_


def _jnp() -> Any:
    import ember.numpy as jnp
    return jnp


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Compute the cross product of two arrays of 2- or 3-vectors (as ``numpy.cross``).

    Args:
      a, b: arrays whose vector axes (``axisa``, ``axisb``) have length 2 or 3; the other
        axes broadcast. A 2-vector is read as a 3-vector with zero z.
      axisa, axisb: the vector axis of ``a`` and of ``b``.
      axisc: the vector axis of the result (of 3-vectors).
      axis: when given, the vector axis of ``a``, ``b`` and the result (overrides the others).

    Returns:
      The cross products: 3-vectors along ``axisc``; the z components alone (no vector
      axis) when both inputs are 2-vectors.

    Examples:
      >>> import ember.numpy as jnp
      >>> jnp.cross(jnp.array([1, 0, 0]), jnp.array([0, 1, 0]))
      Array([0, 0, 1], dtype=int32)
      >>> jnp.cross(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))
      Array(-2., dtype=float32)
    """
    jnp = _jnp()
    a, b = jnp.asarray(a), jnp.asarray(b)
    if not get_aval(a).shape or not get_aval(b).shape:
        raise ValueError("cross: both inputs must have at least one dimension")
    return _cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


@jit_like_jax("cross", static_argnames=("axisa", "axisb", "axisc", "axis"))
def _cross(a: Any, b: Any, axisa: int, axisb: int, axisc: int, axis: int | None) -> Any:
    # (the components in JAX's order, stacked by jnp.array, so the text prints as JAX's)
    jnp = _jnp()
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = jnp.moveaxis(a, axisa, -1), jnp.moveaxis(b, axisb, -1)
    na, nb = get_aval(a).shape[-1], get_aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 "
                         "or 3)")
    if na == 2 and nb == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if na == 3 else jnp.zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if nb == 3 else jnp.zeros_like(b0)
    c = jnp.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return jnp.moveaxis(c, 0, axisc)


def sort_complex(a: Any) -> Any:
    """Sort an array lexicographically by real, then imaginary part, as a complex array.

    Args:
      a: an array; sorted along its last axis.

    Returns:
      The sorted values, of the complex type ``a``'s type promotes to (``complex64`` for
      ``float32`` and the integers, as JAX's).

    Examples:
      >>> import ember.numpy as jnp
      >>> jnp.sort_complex(jnp.array([3.0, 1.0, 2.0]))
      Array([1.+0.j, 2.+0.j, 3.+0.j], dtype=complex64)
    """
    jnp = _jnp()
    a = jnp.asarray(a)
    kind = np.dtype(a.dtype).kind
    out_dt = a.dtype if kind == "c" else jnp.result_type(a.dtype, jnp.complex64)
    return jnp.sort(a.astype(out_dt), axis=-1)


def einsum_path(subscripts: str, *operands: Any, optimize: Any = "auto"
                ) -> tuple[list[tuple[int, int]], str]:
    """The order in which ``einsum`` contracts its operands, and a short report of it.

    Args:
      subscripts: the einsum specification, as for ``einsum``.
      *operands: arrays or shape-and-dtype objects (only their shapes are read).
      optimize: accepted for JAX compatibility; Ember's einsum always contracts the pair
        with the smallest result first (ties: the leftmost), and this is that order.

    Returns:
      ``(path, report)``: the contractions in opt_einsum's format, each a pair of positions
      in the current list of terms (the two are removed and their product appended), and
      a text report listing each step's subscripts. JAX returns opt_einsum's path and its
      ``PathInfo`` object; the order may differ where JAX's planner chooses otherwise.

    Examples:
      >>> import ember.numpy as jnp
      >>> path, _ = jnp.einsum_path("ij,jk,kl->il", jnp.ones((2, 3)), jnp.ones((3, 4)),
      ...                           jnp.ones((4, 5)))
      >>> path
      [(0, 1), (0, 1)]
    """
    from ember.numpy._linalg import _parse_einsum, einsum_next_pair

    del optimize
    shapes = [tuple(getattr(o, "shape", np.shape(o))) for o in operands]
    in_specs, out_spec = _parse_einsum(subscripts, shapes)
    sizes: dict[str, int] = {}
    for spec, shape in zip(in_specs, shapes):
        for letter, size in zip(spec, shape):
            sizes[letter] = max(sizes.get(letter, 1), size)
    # (einsum takes diagonals first and drops broadcast size-1 axes: unique letters)
    specs = ["".join(dict.fromkeys(spec)) for spec in in_specs]
    path, steps = [], []
    while len(specs) > 1:
        i, j = einsum_next_pair(specs, out_spec, sizes)
        keep = set(out_spec).union(*(set(s) for k, s in enumerate(specs) if k not in (i, j)))
        merged = "".join(c for c in dict.fromkeys(specs[i] + specs[j]) if c in keep)
        steps.append(f"{specs[i]},{specs[j]}->{merged}")
        path.append((i, j))
        specs = [s for k, s in enumerate(specs) if k not in (i, j)] + [merged]
    report = "  Complete contraction:  " + subscripts + "\n" + "\n".join(
        f"  step {k}: {step}" for k, step in enumerate(steps))
    return path, report


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> Any:
    """Make a ``ufunc`` from a scalar function written with ``ember.numpy``.

    Args:
      func: a function of ``nin`` scalars returning one scalar (``nout == 1``) or a tuple of
        ``nout`` of them; it is vectorized (``vmap``) over broadcast inputs.
      nin: the number of inputs.
      nout: the number of outputs.
      identity: the identity of a binary ufunc (for ``reduce`` over an empty axis).

    Returns:
      An ``ember.numpy.ufunc``: callable on arrays, with ``outer``, ``reduce`` and
      ``accumulate`` (binary, one output).

    Examples:
      >>> import ember.numpy as jnp
      >>> hypot2 = jnp.frompyfunc(lambda x, y: x * x + y * y, nin=2, nout=1)
      >>> hypot2(jnp.array([1.0, 2.0]), 2.0)
      Array([5., 8.], dtype=float32)
    """
    jnp = _jnp()
    if int(nin) < 1 or int(nout) < 1:
        raise ValueError(f"frompyfunc: nin and nout must be positive, got {nin} and {nout}")
    name = getattr(func, "__name__", "frompyfunc")
    return jnp.ufunc(jnp.vectorize(func), name, int(nin), int(nout), identity=identity)


__all__ = ["cross", "einsum_path", "frompyfunc", "object_", "sort_complex"]
