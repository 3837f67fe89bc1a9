"""`lax.custom_linear_solve` and `lax.custom_root`: solvers differentiated implicitly (JAX's).

Input: the user's functions (matvec and its solver; or f, its root solver and a tangent
solver) and a pytree right-hand side or initial guess. Output: the solver's result (and
its aux outputs with `has_aux`), whose derivatives come from the equation it solves, not
from the solver's iterations: A x = b gives dx = A^-1 (db - dA x); f(x*, theta) = 0 gives
dx* = -(d_x f)^-1 (d_theta f) dtheta.
Invariants: every user function is traced once into a jaxpr whose closed-over values are
leading operands (`_cf_trace.trace_body`), so derivatives with respect to those values
(the matrix, theta) flow through the operands. `custom_linear_solve` binds the
`custom_linear_solve` primitive (prims/linear_solve.py), whose transpose solves with
A^T (vecmat, derived by `linear_transpose`, and `transpose_solve`; `symmetric=True` uses
matvec and solve). `custom_root` is a custom_jvp function whose rule linearizes f at the
root and calls `tangent_solve` (which must be linear in its right-hand side for reverse
mode). Structures are checked with JAX's error texts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ember.core.eval import eval_jaxpr
from ember.core.trace import get_aval
from ember.lax._cf_trace import Body, dce, trace_body
from ember.prims.linear_solve import SolveTuple, linear_solve_p
from ember.tree_util import PyTreeDef, tree_flatten, tree_leaves, tree_structure, tree_unflatten

__all__ = ["custom_linear_solve", "custom_root"]


def _check_tree(func_name: str, expected_name: str, actual: PyTreeDef, expected: PyTreeDef,
                has_aux: bool = False) -> None:
    if has_aux:
        children = actual.children()
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual}, but a "
                             "pytree tuple with auxiliary output was expected because has_aux "
                             "was set to True.")
        actual = children[0]
    if actual != expected:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, "
                        f"got {actual} and {expected}.")


def _shape_checked(fun: Callable, name: str, b_flat: list, has_aux: bool) -> Callable:
    want = [tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape) for x in b_flat]

    def check(y: Any) -> None:
        got = [tuple(get_aval(v).shape) for v in tree_leaves(y)]
        if got != want:
            raise ValueError(f"{name}() output shapes must match b, got {got} and {want}")

    def f(x: Any) -> Any:
        y = fun(x)
        check(y[0] if has_aux else y)
        return y
    return f


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """`solve(matvec, b)`, differentiated as the solution x of `matvec(x) == b` (JAX's
    lax.custom_linear_solve): `transpose_solve(vecmat, b)` solves with the transpose for
    reverse mode (`symmetric=True`: `solve` does); with `has_aux` the solvers return
    `(x, aux)` and so does this."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_flat, tree = tree_flatten(b)
    avals = [get_aval(x) for x in b_flat]
    in_tree = tree_structure((b,))

    mv = trace_body(_shape_checked(matvec, "matvec", b_flat, False), in_tree, avals)
    _check_tree("matvec", "b", mv.out_tree, tree)
    sv = trace_body(_shape_checked(functools.partial(solve, matvec), "solve", b_flat, has_aux),
                    in_tree, avals)
    _check_tree("solve", "b", sv.out_tree, tree, has_aux)
    vm: Body | None = None
    ts: Body | None = None
    if transpose_solve is not None:
        if symmetric:
            vecmat, vm = matvec, mv
        else:
            from ember.ad_api import linear_transpose

            def vecmat(y: Any) -> Any:
                return linear_transpose(matvec, b)(y)[0]
            vm = _pruned(trace_body(vecmat, in_tree, avals))
        ts = trace_body(_shape_checked(functools.partial(transpose_solve, vecmat),
                                       "transpose_solve", b_flat, has_aux), in_tree, avals)
        _check_tree("transpose_solve", "b", ts.out_tree, tree, has_aux)
    bodies = SolveTuple(mv, vm, sv, ts)
    consts = [list(body.consts) if body is not None else [] for body in bodies]
    const_lengths = SolveTuple(*map(len, consts))
    jaxprs = SolveTuple(*(body.jaxpr if body is not None else None for body in bodies))
    out = linear_solve_p.bind(*[c for group in consts for c in group], *b_flat,
                              const_lengths=const_lengths, jaxprs=jaxprs)
    return tree_unflatten(sv.out_tree, out)


def _pruned(body: Body) -> Body:
    """`body` without the equations and consts its outputs do not need (vecmat is traced
    through a linearization whose forward part the transpose does not read)."""
    n = len(body.consts)
    closed, kept = dce(body.jaxpr, [False] * n + [True] * (len(body.jaxpr.in_avals) - n))
    consts = [c for c, k in zip(body.consts, kept) if k]
    return Body(closed, consts, body.out_tree, body.out_avals)


# -- custom_root --------------------------------------------------------------------------------

def _custom_root(const_lengths: tuple, jaxprs: tuple, *args: Any) -> list:
    """The root: the solve jaxpr on its consts and the initial guess (the primal function
    of the custom_jvp function `_ROOT[0]`, named as JAX names it)."""
    params, guess = _split_root(args, const_lengths)
    return eval_jaxpr(jaxprs[1].jaxpr, [], *params[1], *guess)


def _split_root(args: Any, const_lengths: tuple) -> tuple[list[list], list]:
    parts, k = [], 0
    for n in const_lengths:
        parts.append(list(args[k:k + n]))
        k += n
    return parts, list(args[k:])


def _root_jvp(const_lengths: tuple, jaxprs: tuple, primals: tuple, tangents: tuple
              ) -> tuple[list, list]:
    # f(theta, x*(theta)) = 0  =>  d_theta f + d_x f dx* = 0  =>  dx* = -(d_x f)^-1 d_theta f
    from ember.ad_api import jvp
    from ember.lax._ops import neg
    from ember.numpy import zeros_like

    f_jaxpr, _, ls_jaxpr = jaxprs
    params, _ = _split_root(primals, const_lengths)
    params_dot, _ = _split_root(tangents, const_lengths)
    sol = _root(const_lengths, jaxprs, *primals)
    n = len(f_jaxpr.out_avals)
    solution, aux = list(sol[:n]), list(sol[n:])
    if params[0]:
        def f_at_solution(*theta: Any) -> list:
            return eval_jaxpr(f_jaxpr.jaxpr, [], *theta, *solution)
        _, rhs = jvp(f_at_solution, tuple(params[0]), tuple(params_dot[0]))
    else:
        rhs = [zeros_like(s) for s in solution]
    dx = eval_jaxpr(ls_jaxpr.jaxpr, [], *params[2], *solution, *rhs)
    return sol, [neg(d) for d in dx] + [zeros_like(a) for a in aux]


def _make_custom_root() -> Any:
    from ember.custom_derivatives import custom_jvp
    root = custom_jvp(_custom_root, nondiff_argnums=(0, 1))
    root.defjvp(_root_jvp)
    return root


def _root(const_lengths: tuple, jaxprs: tuple, *args: Any) -> Any:
    return _ROOT[0](const_lengths, jaxprs, *args)


# The custom_jvp function, made at first use: ember.custom_derivatives (the API layer above
# lax, whose rules call back into lax) is imported by functions here, never by the module.
_ROOT: list[Any] = []


def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """`solve(f, initial_guess)`, differentiated implicitly as a root of `f` with respect
    to the values f closes over (JAX's lax.custom_root): `tangent_solve(g, y)` solves the
    linear system g(x) = y, where g is f linearized at the root."""
    if not _ROOT:
        _ROOT.append(_make_custom_root())
    guess_flat, tree = tree_flatten(initial_guess)
    avals = [get_aval(x) for x in guess_flat]
    in_tree = tree_structure((initial_guess,))
    fb = trace_body(f, in_tree, avals)
    _check_tree("f", "initial_guess", fb.out_tree, tree)
    sb = trace_body(functools.partial(solve, f), in_tree, avals)
    _check_tree("solve", "initial_guess", sb.out_tree, tree, has_aux)

    def linearize_and_solve(x: Any, rhs: Any) -> Any:
        from ember.ad_api import linearize
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, rhs)
    lb = trace_body(linearize_and_solve, tree_structure((initial_guess, initial_guess)),
                    avals + avals)
    _check_tree("tangent_solve", "x", lb.out_tree, tree)
    bodies = (fb, sb, lb)
    const_lengths = tuple(len(body.consts) for body in bodies)
    jaxprs = tuple(body.jaxpr for body in bodies)
    out = _root(const_lengths, jaxprs,
                       *[c for body in bodies for c in body.consts], *guess_flat)
    return tree_unflatten(sb.out_tree, out)
