"""User-defined derivatives, as JAX's: `custom_jvp`, `custom_vjp`, `custom_gradient`.

Input: a Python function over pytrees of arrays and the rules the user gives for it
(`defjvp(jvp)` / `defjvps(*jvps)`, `defvjp(fwd, bwd)`; `nondiff_argnums` marks arguments
that are not differentiated and reach the rules as they are, e.g. functions). Output: a
callable that computes the function and differentiates with the user's rule.
Invariants:
- Called with no transformation active (eager mode, no jit being traced), the function
  simply runs. Otherwise its flat body is traced to a jaxpr and bound as one
  `custom_jvp_call` / `custom_vjp_call` equation (prims/custom_derivatives.py): jit stages
  it with its primal body (which the lowering inlines), JVP runs the rule, reverse mode runs
  fwd forward and bwd in the transpose. Tracers of enclosing transformations the function
  closes over become leading operands (`num_consts`).
- The rules see pytrees shaped as the user's arguments and outputs; what they return is
  checked against the primal function's structure and types, with JAX's error texts
  (naming the rule, the function, and the mismatching output).
- A zero tangent reaches a `defjvp` rule as zeros (float0 zeros for an integer or bool
  argument), or, with `symbolic_zeros=True`, as a `SymbolicZero`; a rule's `None`
  cotangent (bwd) and a `SymbolicZero` tangent or cotangent mean zero.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember.ad_api import float0
from ember.core import ad, dtypes
from ember.core.aval import ShapedArray
from ember.core.errors import UnexpectedTracerError
from ember.core.jaxpr import ClosedJaxpr, Jaxpr
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import Tracer, get_aval, transforms_active
from ember.prims.custom_derivatives import Rule, custom_jvp_call_p, custom_vjp_call_p
from ember.tree_util import (
    PyTreeDef,
    keystr,
    register_pytree_node,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "SymbolicZero", "CustomVJPPrimal"]


class SymbolicZero:
    """A zero tangent (or cotangent) known without its values: what a `symbolic_zeros=True`
    rule receives for an input with no tangent, and may return for a zero output tangent."""

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval.str_short()})"


class CustomVJPPrimal:
    """A primal input as a `symbolic_zeros=True` custom_vjp fwd rule receives it: its
    `value`, and whether it is `perturbed` (has a nonzero tangent)."""

    def __init__(self, value: Any, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _long_type(aval: ShapedArray) -> str:
    """`float32[3]`: the form JAX's custom-rule errors print an output's type in."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _positional_count(fun: Callable) -> int:
    """How many positional parameters `fun` has (0 for a partial, whose signature JAX
    treats as opaque, or one inspect cannot read)."""
    try:
        return _positional_count_cached(fun)
    except TypeError:  # an unhashable callable object
        return _count_positional(fun)


@functools.lru_cache(maxsize=256)
def _positional_count_cached(fun: Callable) -> int:
    return _count_positional(fun)


def _count_positional(fun: Callable) -> int:
    if isinstance(fun, functools.partial):
        return 0
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return 0
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 0
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _resolve_kwargs(fun: Callable, args: tuple, kwargs: dict, kind: str, name: str
                    ) -> tuple:
    """Keyword arguments bound to their positions, and omitted arguments' defaults filled
    in, as JAX does (a custom function's rules are positional: `f(x)` of `def f(x, n=3)`
    with `nondiff_argnums=(1,)` hands the rule n = 3)."""
    if not kwargs and len(args) >= _positional_count(fun):
        return args
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
        ba.apply_defaults()
        if ba.kwargs:
            raise TypeError("keyword-only arguments are not supported")
    except (TypeError, ValueError) as e:
        raise TypeError(f"The input arguments to the {kind}-decorated function {name} could "
                        "not be resolved to positional-only arguments. Binding failed with "
                        f"the error:\n{e}") from e
    return tuple(ba.args)


def _split_args(args: tuple, nondiff: tuple[int, ...]) -> tuple[list, list]:
    for i in nondiff:
        if not -len(args) <= i < len(args):
            raise ValueError(f"nondiff_argnums {i} is out of range for a call with "
                             f"{len(args)} positional arguments")
    fixed = {i % len(args) for i in nondiff}
    return ([args[i] for i in sorted(fixed)],
            [a for i, a in enumerate(args) if i not in fixed])


def _merge(args_len: int, nondiff: tuple[int, ...], static: list, dyn: Sequence[Any]) -> list:
    fixed = sorted({i % args_len for i in nondiff})
    s, d = iter(static), iter(dyn)
    return [next(s) if i in fixed else next(d) for i in range(args_len)]


class _Static:
    """The nondiff arguments of a call. Their tracer leaves (values of enclosing
    transformations) travel as leading operands of the primitive, so a rule sees them as
    the values of its own level; `rebuild(values)` puts those values back in the
    arguments. Their tangents are never read: nondiff arguments are constants of the
    differentiation (JAX stops their gradients)."""

    def __init__(self, static: list):
        self.parts = []
        self.operands: list[Any] = []
        for s in static:
            leaves, tree = tree_flatten(s)
            mask = [isinstance(leaf, Tracer) for leaf in leaves]
            self.operands += [leaf for leaf, m in zip(leaves, mask) if m]
            self.parts.append((tree, leaves, mask))

    def rebuild(self, values: Sequence[Any]) -> list:
        it = iter(values)
        return [tree_unflatten(tree, [next(it) if m else leaf for leaf, m in zip(leaves, mask)])
                for tree, leaves, mask in self.parts]


def _hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Consts that are tracers of enclosing transformations become leading invars."""
    j = closed.jaxpr
    if not any(isinstance(c, Tracer) for c in closed.consts):
        return closed, []
    keep_v, keep_c, hoist_v, hoist_c = [], [], [], []
    for v, c in zip(j.constvars, closed.consts):
        if isinstance(c, Tracer):
            hoist_v.append(v)
            hoist_c.append(c)
        else:
            keep_v.append(v)
            keep_c.append(c)
    jaxpr = Jaxpr(keep_v, hoist_v + j.invars, j.outvars, j.eqns, j.debug_info)
    return ClosedJaxpr(jaxpr, keep_c), hoist_c


def _trace_primal(fun: Callable, args_len: int, nondiff: tuple[int, ...], static: _Static,
                  in_tree: PyTreeDef, flat: list) -> tuple[ClosedJaxpr, list, PyTreeDef]:
    """The primal body as a jaxpr over the nondiff tracer leaves, then the flat
    differentiable arguments."""
    out_trees: list[PyTreeDef] = []
    n_static = len(static.operands)

    def body(*xs: Any) -> list[Any]:
        args = _merge(args_len, nondiff, static.rebuild(xs[:n_static]),
                      tree_unflatten(in_tree, list(xs[n_static:])))
        leaves, tree = tree_flatten(fun(*args))
        out_trees.append(tree)
        return leaves

    closed, _ = trace_to_jaxpr(body, [get_aval(x) for x in [*static.operands, *flat]])
    closed, consts = _hoist_tracer_consts(closed)
    return closed, consts, out_trees[0]


def _as_value(x: Any, aval: ShapedArray) -> Any:
    """A Python or NumPy scalar a rule returned, as an array of the expected dtype."""
    if isinstance(x, (int, float, complex, bool, np.generic)) or (
            isinstance(x, np.ndarray) and x.dtype != aval.dtype):
        return np.asarray(x, dtype=aval.dtype)
    return x


# ---------------------------------------------------------------------------------------------
# custom_jvp
# ---------------------------------------------------------------------------------------------

class custom_jvp:  # noqa: N801 (JAX's name)
    """A function with a JVP rule of the user's (JAX's `jax.custom_jvp`).

    `@custom_jvp def f(x, ...)`, then `@f.defjvp def f_jvp(primals, tangents)` returning
    `(primal_out, tangent_out)`; with `nondiff_argnums`, the rule takes those arguments
    first: `f_jvp(*nondiff_args, primals, tangents)`.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else functools.partial(self, instance)

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the JVP rule `jvp(primals, tangents) -> (primal_out, tangent_out)`."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per argument, `jvp_i(t_i, primal_out, *primals)` (None: not
        differentiable); the output tangent is their sum."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            primal_out = self(*primals)
            total = None
            for t, rule in zip(tangents, jvps):
                if rule is None:
                    continue
                term = rule(t, primal_out, *primals)
                total = term if total is None else tree_map(lambda a, b: a + b, total, term)
            if total is None:
                from ember import numpy as jnp
                total = tree_map(jnp.zeros_like, primal_out)
            return primal_out, total

        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using "
                                 "defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp", name)
        static, dyn = _split_args(args, self.nondiff_argnums)
        flat, in_tree = tree_flatten(tuple(dyn))
        if not transforms_active():
            return self.fun(*args)
        fixed = _Static(static)
        n, nd = len(args), self.nondiff_argnums
        closed, consts, out_tree = _trace_primal(self.fun, n, nd, fixed, in_tree, flat)
        jvp_rule = self._flat_jvp(name, fixed, in_tree, out_tree, closed.out_avals)
        outs = custom_jvp_call_p.bind(*consts, *fixed.operands, *flat, call_jaxpr=closed,
                                      jvp=jvp_rule,
                                      num_consts=len(consts),
                                      symbolic_zeros=self.symbolic_zeros, name=name)
        return tree_unflatten(out_tree, outs)

    def _flat_jvp(self, name: str, static: _Static, in_tree: PyTreeDef, out_tree: PyTreeDef,
                  out_avals: list[ShapedArray]) -> Rule:
        user = self.jvp
        assert user is not None
        jvp_name = _name(user)
        symbolic = self.symbolic_zeros

        def zero_tangent(t: Any, p: Any) -> Any:
            if not isinstance(t, ad.Zero):
                return t
            aval = get_aval(p)
            if symbolic:
                return SymbolicZero(aval.strip_weak_type())
            if not ad.is_differentiable(aval):
                return np.zeros(aval.shape, float0)
            return ad.instantiate_zeros(ad.Zero(aval.strip_weak_type()))

        n_static = len(static.operands)

        def rule(primals: list, tangents: list) -> tuple[list, list]:
            fixed = static.rebuild(primals[:n_static])
            primals, tangents = primals[n_static:], tangents[n_static:]
            ts = [zero_tangent(t, p) for t, p in zip(tangents, primals)]
            pair = user(*fixed, tree_unflatten(in_tree, primals), tree_unflatten(in_tree, ts))
            return _check_jvp_out(pair, name, jvp_name, out_tree, out_avals)

        return Rule(rule, jvp_name)


def _check_jvp_out(pair: Any, name: str, jvp_name: str, out_tree: PyTreeDef,
                   out_avals: list[ShapedArray]) -> tuple[list, list]:
    """The rule's (primal, tangent) outputs, flat, checked as JAX checks them."""
    head = f"Custom JVP rule {jvp_name} for function {name} must "
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise TypeError(head + "produce a pair (list or tuple of length two) representing "
                        f"primal and tangent outputs, but got {pair}.")
    primals, tree = tree_flatten(pair[0])
    tangents, tree2 = tree_flatten(pair[1], is_leaf=lambda x: isinstance(x, SymbolicZero))
    if tree != tree2:
        raise TypeError(head + "produce primal and tangent outputs with equal container "
                        f"(pytree) structures, but got {tree} and {tree2} respectively.")
    primals = [_as_value(p, a) for p, a in zip(primals, out_avals)]
    avals = [get_aval(p) for p in primals]
    pre = (head + "produce a pair (list or tuple of length two) where the first element "
           "represents the primal output (equal in value to the output of the "
           f"custom_jvp-decorated function {name}, ")
    if tree != out_tree:
        raise TypeError(pre + "and in particular of the same container/pytree structure), but "
                        "instead the JVP rule output's first element had container/pytree "
                        f"structure:\n    {_types(tree, avals)}\nwhile the custom_jvp-"
                        f"decorated function {name} had output container/pytree structure:\n"
                        f"    {_types(out_tree, out_avals)}.")
    if any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(avals, out_avals)):
        raise TypeError(pre + "and in particular with leaves of the same shape/dtype), but "
                        "instead the JVP rule output's first element had shapes/dtypes of:\n"
                        f"    {_types(tree, avals)}\nwhile the custom_jvp-decorated function "
                        f"{name} had output shapes/dtypes of:\n    {_types(out_tree, out_avals)}")
    out_t: list[Any] = []
    bad = []
    for a, t in zip(avals, tangents):
        want = a.strip_weak_type()
        if isinstance(t, SymbolicZero) or not ad.is_differentiable(a):
            got = t.aval if isinstance(t, SymbolicZero) else None
            if got is not None and (got.shape != want.shape or got.dtype != want.dtype):
                bad.append((want, got.strip_weak_type()))
            out_t.append(ad.Zero(want))
            continue
        t = _as_value(t, want)
        got = get_aval(t).strip_weak_type()
        if got.shape != want.shape or got.dtype != want.dtype:
            bad.append((want, got))
        out_t.append(t)
    if bad:
        if len(primals) == 1:
            want, got = bad[0]
            raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                            f"corresponding shapes and dtypes. Expected {want.str_short()} "
                            f"(tangent type of {want.str_short()}) but got {got.str_short()}.")
        lines = "\n".join(f"  primal {w.str_short()} with tangent {g.str_short()}, expecting "
                          f"tangent {w.str_short()}" for w, g in bad)
        raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                        f"corresponding shapes and dtypes, but got:\n{lines}")
    return primals, out_t


def _types(tree: PyTreeDef, avals: Sequence[ShapedArray]) -> str:
    return str(tree_unflatten(tree, [a.str_short() for a in avals])).replace("'", "")


# ---------------------------------------------------------------------------------------------
# custom_vjp
# ---------------------------------------------------------------------------------------------

_NONDIFF_TRACER = (
    "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position "
    "indicated by nondiff_argnums as non-differentiable. Tracers cannot be passed as "
    "non-differentiable arguments to custom_vjp functions; instead, nondiff_argnums should "
    "only be used for arguments that can't be or contain JAX tracers, e.g. function-valued "
    "arguments. In particular, array-valued arguments should typically not be indicated as "
    "nondiff_argnums.")


class custom_vjp:  # noqa: N801 (JAX's name)
    """A function with a reverse-mode rule of the user's (JAX's `jax.custom_vjp`).

    `f.defvjp(fwd, bwd)`: `fwd(*args) -> (out, residuals)` runs on the forward pass;
    `bwd(residuals, out_cotangent) -> tuple` gives one cotangent per differentiable
    argument (None: zero); with `nondiff_argnums` bwd takes those arguments first.
    Forward-mode differentiation (jvp, jacfwd) of it raises JAX's error.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self if instance is None else functools.partial(self, instance)

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Set the forward (`fwd`) and backward (`bwd`) rules."""
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError("remat optimization for custom_vjp does not support "
                                      "symbolic zeros")
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using "
                                 "defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp", name)
        static, dyn = _split_args(args, self.nondiff_argnums)
        for s in static:
            if any(isinstance(leaf, Tracer) for leaf in tree_flatten(s)[0]):
                raise UnexpectedTracerError(_NONDIFF_TRACER)
        flat, in_tree = tree_flatten(tuple(dyn))
        if not transforms_active():
            return self.fun(*args)
        n, nd = len(args), self.nondiff_argnums
        closed, consts, out_tree = _trace_primal(self.fun, n, nd, _Static(static), in_tree,
                                                 flat)
        in_avals = [get_aval(x) for x in flat]
        fwd = self._flat_fwd(name, n, static, in_tree, out_tree, closed.out_avals)
        bwd = self._flat_bwd(static, in_tree, out_tree, in_avals, len(dyn))
        outs = custom_vjp_call_p.bind(*consts, *flat, call_jaxpr=closed, fwd=fwd, bwd=bwd,
                                      num_consts=len(consts),
                                      symbolic_zeros=self.symbolic_zeros, name=name)
        return tree_unflatten(out_tree, outs)

    def _flat_fwd(self, name: str, n: int, static: list, in_tree: PyTreeDef,
                  out_tree: PyTreeDef, out_avals: list[ShapedArray]) -> Rule:
        user = self.fwd
        assert user is not None
        fwd_name = _name(user)
        nd = self.nondiff_argnums

        symbolic = self.symbolic_zeros

        def rule(primals: list, perturbed: list[bool]) -> tuple[list, list, PyTreeDef]:
            if symbolic:  # JAX's symbolic_zeros: fwd sees which inputs have tangents
                primals = [CustomVJPPrimal(p, d) for p, d in zip(primals, perturbed)]
            pair = user(*_merge(n, nd, static, tree_unflatten(in_tree, primals)))
            head = f"Custom VJP fwd rule {fwd_name} for function {name} must produce a pair "
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise TypeError(
                    head + "(list or tuple of length two) where the first element represents "
                    "the primal output (equal to those of the custom_vjp-decorated function "
                    f"{name}) and the second element represents residuals (i.e. values "
                    "stored from the forward pass for use on the backward pass), but instead "
                    f"of a pair the fwd rule {fwd_name} produced {pair}.")
            outs, tree = tree_flatten(pair[0])
            outs = [_as_value(o, a) for o, a in zip(outs, out_avals)]
            avals = [get_aval(o) for o in outs]
            pre = (head + "(list or tuple of length two) where the first element represents "
                   "the primal output (equal to the output of the custom_vjp-decorated "
                   f"function {name}) and the second element represents residuals (i.e. "
                   "values stored from the forward pass for use on the backward pass), but ")
            if tree != out_tree:
                raise TypeError(
                    pre + "instead the fwd rule output's first element had container/pytree "
                    f"structure:\n    {_types(tree, avals)}\nwhile the custom_vjp-decorated "
                    f"function {name} had output container/pytree structure:\n"
                    f"    {_types(out_tree, out_avals)}.")
            if any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(avals, out_avals)):
                raise TypeError(
                    pre + "instead the fwd rule output's first element had shapes/dtypes of:"
                    f"\n    {_types(tree, avals)}\nwhile the custom_vjp-decorated function "
                    f"{name} had output shapes/dtypes of:\n    {_types(out_tree, out_avals)}")
            res, res_tree = tree_flatten(pair[1])
            for r in res:
                get_aval(r)  # a residual must be an array (JAX's rule): a clear error if not
            return outs, res, res_tree

        return Rule(rule, fwd_name)

    def _flat_bwd(self, static: list, in_tree: PyTreeDef, out_tree: PyTreeDef,
                  in_avals: list[ShapedArray], n_dyn: int) -> Rule:
        user = self.bwd
        assert user is not None
        symbolic = self.symbolic_zeros

        def rule(res_tree: PyTreeDef, res: list, cts: list) -> list:
            cts = [SymbolicZero(c.aval) if isinstance(c, ad.Zero) else c for c in cts]
            got = user(*static, tree_unflatten(res_tree, res), tree_unflatten(out_tree, cts))
            return _check_bwd_out(got, in_tree, in_avals, n_dyn, symbolic)

        return Rule(rule, _name(user))


def _check_bwd_out(got: Any, in_tree: PyTreeDef, in_avals: list[ShapedArray], n_dyn: int,
                   symbolic: bool) -> list:
    """bwd's cotangents, one per flat differentiable input (`Zero` where it gave None)."""
    if isinstance(got, list) and len(got) == n_dyn:
        got = tuple(got)
    zero = object()
    dummy = tree_unflatten(in_tree, [object()] * len(in_avals))
    paths = [p for p, _ in tree_flatten_with_path(dummy)[0]]
    flat: list[Any] = []
    ok = isinstance(got, tuple) and len(got) == n_dyn
    if ok:
        for ct, arg in zip(got, dummy):
            n_leaves = len(tree_flatten(arg)[0])
            if ct is None:
                flat.extend([zero] * n_leaves)
                continue
            leaves, tree = tree_flatten(ct, is_leaf=lambda x: x is None or
                                        isinstance(x, SymbolicZero))
            if tree != tree_structure(arg):
                ok = False
                break
            flat.extend(zero if leaf is None else leaf for leaf in leaves)
    if not ok:
        got_tree = tree_structure(got)
        raise TypeError("Custom VJP bwd rule must produce an output with the same container "
                        "(pytree) structure as the args tuple of the primal function, and in "
                        "particular must produce a tuple of length equal to the number of "
                        "arguments to the primal function, but got bwd output structure "
                        f"{got_tree} for primal input structure {in_tree}.")
    out: list[Any] = []
    for path, aval, ct in zip(paths, in_avals, flat):
        want = aval.strip_weak_type()
        if ct is zero or not ad.is_differentiable(aval):
            out.append(ad.Zero(want))
            continue
        if isinstance(ct, SymbolicZero):
            if ct.shape != want.shape or ct.dtype != want.dtype:
                raise ValueError(
                    "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does "
                    "not match the corresponding input tangent shape/dtype: at output"
                    f"{keystr(path)} the SymbolicZero had shape/dtype {ct.aval.str_short()} "
                    f"while the corresponding input had shape/dtype {aval.str_short()}. "
                    "Consider just returning a None here instead of a SymbolicZero object.")
            out.append(ad.Zero(want))
            continue
        ct = _as_value(ct, want)
        have = get_aval(ct)
        float_mix = dtypes.kind(have.dtype) in "fc" and dtypes.kind(want.dtype) in "fc"
        if have.shape != want.shape or (have.dtype != want.dtype and not float_mix):
            why = []
            if have.dtype != want.dtype:
                why.append("the dtypes do not match")
            if have.shape != want.shape:
                why.append("the shapes do not match")
            raise ValueError(
                "Custom VJP bwd rule must produce an output with the same type as the args "
                f"tuple of the primal function, but at output{keystr(path)} the bwd rule "
                f"produced an output of type {_long_type(have)} corresponding to an input of "
                f"type {_long_type(aval)}, so {' and '.join(why)}")
        if have.dtype != want.dtype:
            from ember.lax import convert_element_type
            ct = convert_element_type(ct, want.dtype)
        out.append(ct)
    return out


# ---------------------------------------------------------------------------------------------
# custom_gradient
# ---------------------------------------------------------------------------------------------

class _Residuals:
    """custom_gradient's residuals: the traced vjp function's consts (the pytree's leaves)
    and its jaxpr and structures (static)."""

    def __init__(self, jaxpr: Jaxpr, in_tree: PyTreeDef, out_tree: PyTreeDef,
                 consts: list[Any]):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts


register_pytree_node(_Residuals, lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree)),
                     lambda aux, consts: _Residuals(*aux, list(consts)))


def custom_gradient(fun: Callable) -> Callable:
    """`fun(*args) -> (value, vjp_fn)`: differentiate with `vjp_fn(cotangent) -> tuple of
    one cotangent per argument` (JAX's `jax.custom_gradient`); calls return the value."""
    from ember.core.eval import eval_jaxpr

    @custom_vjp
    def wrapped_fun(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)[0]

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, _Residuals]:
        ans, vjp_fn = fun(*args, **kwargs)
        ans_flat, out_tree = tree_flatten((ans,))
        in_trees: list[PyTreeDef] = []

        def flat_vjp(*cts: Any) -> list[Any]:
            got = vjp_fn(*tree_unflatten(out_tree, list(cts)))
            leaves, tree = tree_flatten(got)
            in_trees.append(tree)
            return leaves

        avals = [get_aval(a).strip_weak_type() for a in ans_flat]
        closed, _ = trace_to_jaxpr(flat_vjp, avals)
        return ans, _Residuals(closed.jaxpr, in_trees[0], out_tree, list(closed.consts))

    def bwd(res: _Residuals, cts: Any) -> Any:
        cts_flat, tree = tree_flatten((cts,))
        if tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{tree}")
        got = tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts, *cts_flat))
        return (got,) if treedef_is_leaf(res.in_tree) else got

    wrapped_fun.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped_fun, fun)
    return wrapped_fun
