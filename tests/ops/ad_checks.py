"""JAX's `check_grads`, for Ember: JVPs against central finite differences, VJPs against JVPs.

Input: a function of float64 arrays and a point. Output: assertion errors naming the order
and the mode that disagree.
- `check_jvp`: jvp(f, x, t) against (f(x + eps t) - f(x - eps t)) / (2 eps) for a random t.
- `check_vjp`: <vjp(ct), t> == <ct, jvp(t)> for random t and ct (the transpose identity).
- `check_grads(f, args, order)`: both, and again for x -> jvp(f, x, t)[1] up to `order`
  (order 2 differentiates a JVP: nested JVP traces, and the transposition of a JVP's JVP).
`wrap` runs the differentiated functions under `jit` when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ember

EPS = 1e-6


def _tree_vdot(xs: Sequence[Any], ys: Sequence[Any]) -> float:
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64))
                     for x, y in zip(xs, ys)))


def _leaves(x: Any) -> list:
    return ember.tree_util.tree_leaves(x)


def _random_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    return rng.standard_normal(np.shape(x)).astype(np.float64)


def _maybe_jit(fn: Callable, use_jit: bool) -> Callable:
    return ember.jit(fn) if use_jit else fn


def check_jvp(f: Callable, args: Sequence[np.ndarray], rng: np.random.Generator, *,
              use_jit: bool = False, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    tangents = [_random_like(rng, a) for a in args]
    jvp = _maybe_jit(lambda a, t: ember.jvp(f, a, t), use_jit)
    _, got = jvp(tuple(args), tuple(tangents))
    plus = f(*[a + EPS * t for a, t in zip(args, tangents)])
    minus = f(*[a - EPS * t for a, t in zip(args, tangents)])
    for g, p, m in zip(_leaves(got), _leaves(plus), _leaves(minus)):
        want = (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * EPS)
        np.testing.assert_allclose(np.asarray(g), want, rtol=rtol, atol=atol,
                                   err_msg="JVP vs finite differences")


def check_vjp(f: Callable, args: Sequence[np.ndarray], rng: np.random.Generator, *,
              use_jit: bool = False, rtol: float = 1e-6) -> None:
    tangents = [_random_like(rng, a) for a in args]
    out, t_out = ember.jvp(f, tuple(args), tuple(tangents))
    cts = ember.tree_util.tree_map(lambda o: _random_like(rng, o), out)

    def pullback(a: Sequence[Any], ct: Any) -> Any:
        return ember.vjp(f, *a)[1](ct)

    ct_in = _maybe_jit(pullback, use_jit)(tuple(args), cts)
    lhs = _tree_vdot(_leaves(ct_in), tangents)
    rhs = _tree_vdot(_leaves(cts), _leaves(t_out))
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=1e-9,
                               err_msg="<vjp(ct), t> != <ct, jvp(t)>")


def check_grads(f: Callable, args: Sequence[np.ndarray], order: int, *, seed: int = 0,
                use_jit: bool = False, rtol: float = 1e-5) -> None:
    rng = np.random.default_rng(seed)
    args = [np.asarray(a, np.float64) for a in args]
    check_jvp(f, args, rng, use_jit=use_jit, rtol=rtol)
    check_vjp(f, args, rng, use_jit=use_jit)
    if order > 1:
        fixed = tuple(_random_like(rng, a) for a in args)

        def f_jvp(*a: Any) -> Any:
            return ember.jvp(f, a, fixed)[1]

        check_grads(f_jvp, args, order - 1, seed=seed + 1, use_jit=use_jit, rtol=rtol)
