"""The autodiff API, as JAX's: `jvp`, `linearize`, `vjp`, `grad`, `value_and_grad`.

Input: a Python function over pytrees of arrays, and the point (and tangents or
cotangents) to differentiate at. Output: JAX's results with JAX's structures: pytrees in,
pytrees out, gradients shaped like the arguments they differentiate.
Invariants: forward mode is core/ad.py's JVP trace; reverse mode is linearize (JVP +
partial evaluation) and the backward pass of core/transpose.py. Everything is traced, so
these compose with `jit` in both orders and with each other (grad of grad). Bad input gets
JAX's error texts (non-scalar or integer grad outputs, integer grad inputs, argnums out of
range, jvp tangents that do not match their primals).
Integer and bool values have `float0` tangents and cotangents, as in JAX: `jvp` takes a
float0 tangent for an integer primal and gives float0 tangents for integer outputs; `vjp`
gives float0 cotangents for integer inputs; `grad(..., allow_int=True)` gives a float0
gradient (a NumPy array of the input's shape) for an integer input. A float0 value is a
NumPy array, never an Ember array; a `jit`ted function returns it as JAX does (it rides in
the output tree, not through the compiled program: `float0_outputs_as_nodes`).
`holomorphic=True` differentiates complex-to-complex functions: the cotangent seeded is 1
(complex), and since Ember's transposes do not conjugate, `grad` returns f'(z). Not here
yet: `reduce_axes`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.core import ad, dtypes, traceback_util
from ember.core.trace import get_aval
from ember.core.transpose import Linearized, linearize_flat
from ember.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_unflatten,
)

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "float0", "linear_transpose"]

# The dtype of the tangent of an integer or bool value (JAX's float0): a zero-size void
# field, so an array of it holds no data; only its shape means anything.
float0 = np.dtype([("float0", np.void, 0)])


def float0_zeros(shape: Sequence[int]) -> np.ndarray:
    """The (only) tangent of an integer or bool value of shape `shape`: zeros of float0."""
    return np.zeros(tuple(shape), dtype=float0)


def _is_float0(x: Any) -> bool:
    return getattr(x, "dtype", None) == float0


class _Float0Output:
    """A float0 output of a jitted function (an integer input's gradient): it holds no
    data, only a shape, so it is not an output of the compiled program but a pytree node
    without children in the output tree, which unflattens to float0 zeros of its shape."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape


register_pytree_node(_Float0Output, lambda z: ((), z.shape),
                     lambda shape, _: float0_zeros(shape))


def float0_outputs_as_nodes(out: Any) -> Any:
    """`out` with its float0 leaves made childless pytree nodes (see _Float0Output)."""
    return tree_map(lambda x: _Float0Output(np.shape(x)) if _is_float0(x) else x, out)


def _tangent_value(t: Any, aval: Any) -> Any:
    """An output tangent or input cotangent as the user sees it: float0 zeros for an integer
    or bool value, zeros materialized for a symbolic Zero of a float value."""
    if not ad.is_differentiable(aval):
        return float0_zeros(aval.shape)
    out = ad.instantiate_zeros(t)
    if isinstance(out, np.ndarray):  # a rank-0 zero outside any trace: an Array, as JAX's
        from ember.array import ArrayImpl
        return ArrayImpl._from_user(out, weak_type=getattr(aval, "weak_type", False))
    return out


def check_holomorphic(name: str, dtype: np.dtype, side: str) -> None:
    """JAX's error for a real input or output (`side`) of a holomorphic derivative."""
    if dtypes.kind(np.dtype(dtype)) != "c":
        raise TypeError(f"{name} with holomorphic=True requires {side} with complex dtype, "
                        f"but got {np.dtype(dtype).name}.")


def _flat_fun(fun: Callable, in_tree: PyTreeDef, has_aux: bool, store: list
              ) -> Callable[..., list]:
    """fun over flat leaves: its outputs (and aux, if any) flattened; the trees go to
    `store` as [out_tree, aux_tree, n_out]."""
    def flat(*leaves: Any) -> list:
        args = tree_unflatten(in_tree, list(leaves))
        out = fun(*args)
        aux: Any = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("expected function with aux output to return a two-element "
                                f"tuple, but got type {type(out)} with value {out!r}")
            out, aux = out
        out_leaves, out_tree = tree_flatten(out)
        aux_leaves, aux_tree = tree_flatten(aux)
        store[:] = [out_tree, aux_tree, len(out_leaves)]
        return [*out_leaves, *aux_leaves]
    return flat


def _check_jvp_args(primals: Any, tangents: Any) -> tuple[list, list, PyTreeDef]:
    for name, value in (("primal", primals), ("tangent", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"{name} arguments to jax.jvp must be a tuple or a list; found "
                            f"{type(value).__name__}.")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        pa = get_aval(p)
        t_shape, t_dtype = (np.shape(t), float0) if _is_float0(t) else _shape_dtype(t)
        expected = pa.dtype if ad.is_differentiable(pa) else float0
        if t_dtype != expected:
            raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes "
                            "must be equal, or in case of int/bool primal dtype the tangent "
                            f"dtype must be float0.Got primal dtype {pa.dtype.name} and so "
                            f"expected tangent dtype {_dtype_name(expected)}, but got tangent "
                            f"dtype {_dtype_name(t_dtype)} instead.")
        if pa.shape != t_shape:
            raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                             f"shape {pa.shape} and tangent shape as {t_shape}")
    return p_leaves, t_leaves, p_tree


def _shape_dtype(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    aval = get_aval(x)
    return aval.shape, aval.dtype


def _dtype_name(dtype: np.dtype) -> str:
    return "float0" if dtype == float0 else dtype.name


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> Any:
    """Evaluate ``fun`` and its Jacobian-vector product (forward-mode autodiff).

    Args:
        fun: the function to differentiate; its arguments and results are arrays or
            pytrees of arrays.
        primals: a tuple or list of the arguments at which to evaluate ``fun``.
        tangents: a tuple or list like ``primals``, of the same structure, shapes and
            dtypes: the direction of the derivative.
        has_aux: whether ``fun`` returns a pair ``(output, aux)`` whose ``aux`` is not
            differentiated.

    Returns:
        ``(primals_out, tangents_out)``: ``fun(*primals)`` and the derivative of ``fun``
        at ``primals`` along ``tangents``; with ``has_aux``, ``(primals_out, tangents_out,
        aux)``.

    Example:
        >>> y, dy = ember.jvp(jnp.sin, (0.0,), (2.0,))
        >>> float(y), float(dy)
        (0.0, 2.0)
    """
    p_leaves, t_leaves, in_tree = _check_jvp_args(primals, tangents)
    store: list = []
    flat = _flat_fun(fun, in_tree, has_aux, store)
    tangents_in = [t if ad.is_differentiable(get_aval(p)) else ad.Zero(get_aval(p))
                   for p, t in zip(p_leaves, t_leaves)]
    out_p, out_t = ad.jvp_flat(flat, p_leaves, tangents_in)
    out_tree, aux_tree, n = store
    primal_out = tree_unflatten(out_tree, out_p[:n])
    tangent_out = tree_unflatten(out_tree, [_tangent_value(t, get_aval(p))
                                            for p, t in zip(out_p[:n], out_t[:n])])
    if has_aux:
        return primal_out, tangent_out, tree_unflatten(aux_tree, out_p[n:])
    return primal_out, tangent_out


def _linearize(fun: Callable, primals: Sequence[Any], has_aux: bool
               ) -> tuple[list, Linearized, list, PyTreeDef]:
    """The linearization of the flattened fun; returns (flat outputs, the linear part,
    store = [out_tree, aux_tree, n_out], in_tree)."""
    leaves, in_tree = tree_flatten(tuple(primals))
    store: list = []
    outs, lin = linearize_flat(_flat_fun(fun, in_tree, has_aux, store), leaves)
    return outs, lin, store, in_tree


def linearize(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """Evaluate ``fun`` and return its linear approximation at ``primals``.

    ``fun``'s linear part is staged once, so ``f_jvp`` evaluates Jacobian-vector products
    at ``primals`` without re-running ``fun``'s nonlinear parts.

    Args:
        fun: the function to linearize, of arrays or pytrees of arrays.
        *primals: the arguments at which to linearize ``fun``.
        has_aux: whether ``fun`` returns a pair ``(output, aux)``.

    Returns:
        ``(primals_out, f_jvp)``, where ``f_jvp(*tangents)`` is the derivative of ``fun``
        at ``primals`` along ``tangents`` (of ``primals``' structure); with ``has_aux``,
        ``(primals_out, f_jvp, aux)``.
    """
    outs, lin, (out_tree, aux_tree, n), in_tree = _linearize(fun, primals, has_aux)

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with "
                            f"the original primal values: expected tree structure {in_tree}, "
                            f"got {t_tree}")
        # (aux outputs are outputs of the linearized function too: their tangents are
        # computed and dropped)
        outs_t = lin.jvp([None if _is_float0(t) else t for t in t_leaves])[:n]
        return tree_unflatten(out_tree, [_tangent_value(t, a)
                                         for t, a in zip(outs_t, lin.out_avals)])

    primal_out = tree_unflatten(out_tree, outs[:n])
    if has_aux:
        return primal_out, f_jvp, tree_unflatten(aux_tree, outs[n:])
    return primal_out, f_jvp


def _vjp_function(lin: Linearized, in_tree: PyTreeDef, out_tree: PyTreeDef, n: int
                  ) -> Callable[[Any], tuple]:
    def f_vjp(cotangent: Any) -> tuple:
        ct_leaves, ct_tree = tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise TypeError("Tree structure of cotangent input "
                            f"{ct_tree}, does not match structure of primal output {out_tree}.")
        cts: list[Any] = []
        for ct, aval in zip(ct_leaves, lin.out_avals):
            shape = np.shape(ct) if _is_float0(ct) else get_aval(ct).shape
            if shape != aval.shape:
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{shape} must be the same as the shape of corresponding "
                                 f"primal input {aval.shape}.")
            # (an integer output's cotangent, float0 or not, reaches nothing)
            cts.append(ct if ad.is_differentiable(aval) else ad.Zero(aval))
        cts += [ad.Zero(a) for a in lin.out_avals[n:]]
        got = lin.vjp(cts)
        return tuple(tree_unflatten(in_tree, [_tangent_value(c, a)
                                              for c, a in zip(got, lin.in_avals)]))
    return f_vjp


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """Evaluate ``fun`` and return its vector-Jacobian product function (reverse mode).

    Args:
        fun: the function to differentiate, of arrays or pytrees of arrays.
        *primals: the arguments at which to evaluate ``fun``.
        has_aux: whether ``fun`` returns a pair ``(output, aux)``.

    Returns:
        ``(primals_out, f_vjp)``, where ``f_vjp(cotangent)`` takes a cotangent of
        ``primals_out``'s structure, shapes and dtypes and returns a tuple with one
        cotangent per primal; with ``has_aux``, ``(primals_out, f_vjp, aux)``.

    Example:
        >>> y, f_vjp = ember.vjp(jnp.sin, 0.0)
        >>> f_vjp(1.0)
        (Array(1., dtype=float32),)
    """
    outs, lin, (out_tree, aux_tree, n), in_tree = _linearize(fun, primals, has_aux)
    f_vjp = _vjp_function(lin, in_tree, out_tree, n)
    primal_out = tree_unflatten(out_tree, outs[:n])
    if has_aux:
        return primal_out, f_vjp, tree_unflatten(aux_tree, outs[n:])
    return primal_out, f_vjp


def _check_input_dtype(x: Any) -> None:
    dtype = get_aval(x).dtype
    if dtypes.kind(dtype) not in "fc":
        raise TypeError("grad requires real-valued inputs (input dtype that is a sub-dtype of "
                        f"np.inexact), but got {dtype.name}. If you want to use Boolean- or "
                        "integer-valued inputs, use vjp or set allow_int to True.")


def _check_scalar_output(x: Any, holomorphic: bool = False) -> None:
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x!r}."
                        ) from None
    if aval.shape != ():
        raise TypeError("Gradient only defined for scalar-output functions. Output had shape: "
                        f"{aval.shape}.")
    if holomorphic:
        check_holomorphic("grad", aval.dtype, "outputs")
    elif dtypes.kind(aval.dtype) != "f":
        raise TypeError("grad requires real-valued outputs (output dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")


def _argnums_tuple(argnums: int | Sequence[int]) -> tuple[int, ...]:
    if isinstance(argnums, (int, np.integer)):
        return (int(argnums),)
    return tuple(int(a) for a in argnums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """Make a function that evaluates ``fun`` and its gradient together.

    Args:
        fun: the function to differentiate; it returns a scalar (or ``(scalar, aux)``
            with ``has_aux``).
        argnums: the position (int) or positions (sequence of ints) of the arguments to
            differentiate with respect to.
        has_aux: whether ``fun`` returns a pair ``(output, aux)`` whose ``aux`` is
            returned as it is.
        holomorphic: whether ``fun`` is holomorphic: its inputs and output must then be
            complex, and the gradient is the complex derivative.
        allow_int: whether integer and bool arguments may be differentiated (their
            gradient is a ``float0`` array of their shape).

    Returns:
        A function with ``fun``'s arguments that returns ``(value, gradient)`` (or
        ``((value, aux), gradient)`` with ``has_aux``); the gradient has the structure of
        the argument ``argnums`` names, or is a tuple of them for a sequence ``argnums``.

    Example:
        >>> value, g = ember.value_and_grad(lambda x: x ** 2)(3.0)
        >>> float(value), float(g)
        (9.0, 6.0)
    """
    nums = _argnums_tuple(argnums)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        if nums and max(nums) >= len(args):
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {max(nums) + 1} positional arguments to be passed by the "
                            f"caller, but got only {len(args)} positional arguments.")
        picked = [args[i] for i in nums]
        for leaf in tree_flatten(picked)[0]:
            if holomorphic:
                check_holomorphic("grad", get_aval(leaf).dtype, "inputs")
            if not allow_int:
                _check_input_dtype(leaf)

        def partial_fun(*diff_args: Any) -> Any:
            full = list(args)
            for i, a in zip(nums, diff_args):
                full[i] = a
            return fun(*full, **kwargs)

        outs, lin, (out_tree, aux_tree, n), in_tree = _linearize(partial_fun, picked, has_aux)
        value = tree_unflatten(out_tree, outs[:n])
        _check_scalar_output(value, holomorphic)
        ct = np.ones((), get_aval(value).dtype)
        f_vjp = _vjp_function(lin, in_tree, out_tree, n)
        grads = f_vjp(ct)
        g = grads[0] if isinstance(argnums, (int, np.integer)) else grads
        if has_aux:
            return (value, tree_unflatten(aux_tree, outs[n:])), g
        return value, g

    return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable:
    """Make a function that evaluates the gradient of the scalar-valued ``fun``.

    Args:
        fun: the function to differentiate; it returns a scalar (or ``(scalar, aux)``
            with ``has_aux``).
        argnums: the position (int) or positions (sequence of ints) of the arguments to
            differentiate with respect to.
        has_aux: whether ``fun`` returns a pair ``(output, aux)``; the gradient function
            then returns ``(gradient, aux)``.
        holomorphic: whether ``fun`` is holomorphic: its inputs and output must then be
            complex, and the gradient is the complex derivative.
        allow_int: whether integer and bool arguments may be differentiated (their
            gradient is a ``float0`` array of their shape).

    Returns:
        A function with ``fun``'s arguments that returns the gradient: a pytree like the
        argument ``argnums`` names, or a tuple of them for a sequence ``argnums``.

    Example:
        >>> float(ember.grad(jnp.sin)(0.0))
        1.0
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic=holomorphic, allow_int=allow_int)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return grad_f


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: tuple = ()) -> Callable:
    """The transpose of the linear `fun`: a function from an output cotangent to the tuple
    of cotangents of fun's arguments. `primals` (arrays or ShapeDtypeStructs) give only
    the arguments' shapes and dtypes. fun is staged once, by linearizing it at zeros (for
    a linear function its linearization is itself), and transposed by the backward pass.
    """
    if reduce_axes:
        raise NotImplementedError("linear_transpose(reduce_axes=...) is not supported.")
    leaves, in_tree = tree_flatten(tuple(primals))
    shapes = [(tuple(np.shape(x) if not hasattr(x, "shape") else x.shape),
               np.dtype(x.dtype) if hasattr(x, "dtype") else get_aval(x).dtype) for x in leaves]
    if not all(dtypes.kind(dtype) in "fc" for _, dtype in shapes):
        raise TypeError("linear_transpose only supports [float or complex] -> "
                        "[float or complex] functions, but got "
                        f"{[d.name for _, d in shapes]}.")
    store: list = []
    flat = _flat_fun(fun, in_tree, False, store)
    outs, lin = linearize_flat(flat, [np.zeros(s, d) for s, d in shapes])
    out_tree, _, n = store
    if not all(ad.is_differentiable(a) for a in lin.out_avals):
        raise TypeError("linear_transpose only supports [float or complex] -> "
                        "[float or complex] functions, but got outputs of dtypes "
                        f"{[a.dtype.name for a in lin.out_avals]}.")
    f_vjp = _vjp_function(lin, in_tree, out_tree, n)

    def transposed_fun(out_cotangent: Any) -> tuple:
        return f_vjp(out_cotangent)

    return transposed_fun
