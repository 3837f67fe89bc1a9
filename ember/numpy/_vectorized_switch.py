"""`lax.switch` applied elementwise, with the equations JAX 0.10.2 gets from vmapping it.

Input: an integer index array, branch functions of one scalar operand (each returning a
scalar), and the operand array x. Output: `branches[clamp(index)](x)` per element, of the
broadcast shape of index and x. This is what `jnp.vectorize(lax.switch)` computes in
jnp.piecewise; Ember has no vmap, so this module emits the same equations directly:
- vectorize squeezes size-1 dimensions and maps (one vmap level per remaining dimension,
  the last dimension innermost) over the arguments whose dimension is not 1;
- no level: a plain `lax.switch` (a `cond` equation);
- index mapped at no level (x at all): the vmapped cond stays a `cond` whose branches are
  traced at x's full shape, an output that does not depend on x broadcast level by level;
- index mapped at every level: cond's batching rule turns into selects: the index is
  clamped, every operand (closed-over values, then x) not mapped is broadcast at the
  innermost level, and branch k runs on `select_n(eq(i, k), stop_gradient(op), op)` of
  every operand (a value broadcast at the innermost level is broadcast to each outer level
  by select_n's batching rule, whose dimensions print as `np.int64`), and the results are
  combined by `select_n(i, *outs)`. The branches are traced once at scalar shapes and their
  equations re-bound on full-shape values, which is JAX's batching for elementwise
  primitives (rank-0 operands stay rank 0); nested `jit`s are re-traced at full shape.
Anything else (an index mapped at some levels only, an operand mapped at some levels only,
a branch that is not elementwise, a non-scalar result or closed-over array) gives the same
values through broadcasting, with equations that may differ from JAX's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ember import lax
from ember.core.aval import ShapedArray
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from ember.core.primitive import Primitive
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import get_aval
from ember.lax._cf_trace import forwarding, merge_consts, trace_bodies
from ember.prims import conversion, elementwise
from ember.prims.call import jit_p
from ember.prims.copy import copy_p
from ember.prims.shape_ops import broadcast_in_dim_p
from ember.tree_util import tree_flatten

# Primitives whose batching rule re-binds them unchanged on full-shape operands.
_ELEMENTWISE: frozenset[Primitive] = frozenset(
    [p for p in vars(elementwise).values() if isinstance(p, Primitive)]
    + [conversion.convert_element_type_p, conversion.select_n_p, conversion.clamp_p,
       conversion.stop_gradient_p, copy_p])


def vectorized_switch(index: Any, branches: Sequence[Callable[[Any], Any]], x: Any) -> Any:
    ishape, xshape = tuple(np.shape(index)), tuple(np.shape(x))
    full = tuple(np.broadcast_shapes(ishape, xshape))
    nd = len(full)
    ipad = (1,) * (nd - len(ishape)) + ishape
    xpad = (1,) * (nd - len(xshape)) + xshape
    idx = lax.squeeze(index, [d for d, s in enumerate(ishape) if s == 1])
    xs = lax.squeeze(x, [d for d, s in enumerate(xshape) if s == 1])
    levels = [d for d in range(nd) if ipad[d] != 1 or xpad[d] != 1]
    expand = [d for d in range(nd) if d not in levels]
    shape = tuple(full[d] for d in levels)
    i_mapped = [ipad[d] != 1 for d in levels]
    x_mapped = [xpad[d] != 1 for d in levels]
    if not levels:
        out = lax.switch(idx, list(branches), xs)
    elif not any(i_mapped):
        out = lax.switch(idx, [_full_output(b, shape) for b in branches], xs)
    else:
        out = None
        if all(i_mapped) and (all(x_mapped) or not any(x_mapped)):
            out = _as_selects(idx, branches, xs, shape)
        if out is None:
            return _broadcast_fallback(index, branches, x, full)
    return lax.expand_dims(out, expand) if expand else out


# ---------------------------------------------------------------------------------------------
# Broadcasting as the batching rules do it.
# ---------------------------------------------------------------------------------------------

def _up_one_level(v: Any, shape: tuple[int, ...]) -> Any:
    """Broadcast v (of shape[k+1:]) to shape[k:]: select_n's batching rule, which builds
    its dimensions with NumPy and so prints them as np.int64."""
    vshape = tuple(np.shape(v))
    target = shape[len(shape) - len(vshape) - 1:]
    dims = tuple(np.int64(d) for d in range(1, len(target)))
    return broadcast_in_dim_p.bind(v, shape=target, broadcast_dimensions=dims, sharding=None)


def _innermost(v: Any, shape: tuple[int, ...]) -> Any:
    """bdim_at_front of an unmapped scalar at the innermost level: shape (n_last,)."""
    return lax.broadcast_in_dim(v, (shape[-1],), ())


def _to_full(v: Any, shape: tuple[int, ...]) -> Any:
    """An unmapped scalar through every level: innermost, then one level at a time."""
    v = _innermost(v, shape)
    while tuple(np.shape(v)) != shape:
        v = _up_one_level(v, shape)
    return v


def _full_output(branch: Callable[[Any], Any], shape: tuple[int, ...]) -> Callable[[Any], Any]:
    """A branch traced at x's full shape whose result, if it does not depend on x, is
    broadcast as a batched cond's forced-mapped output is."""
    def run(v: Any) -> Any:
        out = branch(v)
        if tuple(np.shape(out)) == ():
            out = _to_full(out, shape)
        return out
    return run


# ---------------------------------------------------------------------------------------------
# Index mapped at every level: selects.
# ---------------------------------------------------------------------------------------------

def _as_selects(idx: Any, branches: Sequence[Callable[[Any], Any]], xs: Any,
                shape: tuple[int, ...]) -> Any:
    """The selects of cond's batching rule (module docstring), or None if a branch is not
    elementwise (nothing is staged then)."""
    x_aval = get_aval(xs)
    scalar = ShapedArray((), x_aval.dtype, x_aval.weak_type)
    _, in_tree = tree_flatten((xs,))
    bodies = trace_bodies(list(branches), in_tree, [scalar])
    for b in bodies:
        if len(b.out_avals) != 1 or b.out_avals[0].shape != ():
            return None
        if any(get_aval(c).shape != () for c in b.consts):
            return None
    jaxprs, consts = merge_consts(bodies)
    if not all(_elementwise(j.jaxpr, [True] * len(j.jaxpr.invars)) for j in jaxprs):
        return None
    if len(branches) == 1:
        return eval_batched(jaxprs[0], [*consts, xs], shape)[0]
    idx = lax.convert_element_type(idx, np.int32)
    idx = lax.clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    ops = [op if tuple(np.shape(op)) == shape else _innermost(op, shape)
           for op in [*consts, xs]]
    outs = []
    for k, closed in enumerate(jaxprs):
        pred = lax.eq(idx, np.int32(k))
        masked = []
        for op in ops:
            sg, val = lax.stop_gradient(op), op
            while tuple(np.shape(val)) != shape:
                sg, val = _up_one_level(sg, shape), _up_one_level(val, shape)
            masked.append(lax.select_n(pred, sg, val))
        outs.append(eval_batched(closed, masked, shape)[0])
    # An output every branch forwards from one operand is that operand (switch's pruning).
    fwd = {forwarding(j.jaxpr)[0] for j in jaxprs}
    if len(fwd) == 1 and None not in fwd:
        src = ops[fwd.pop()]
        return src if tuple(np.shape(src)) == shape else _to_full(src, shape)
    return lax.select_n(idx, *outs)


def _elementwise(jaxpr: Jaxpr, mapped: list[bool]) -> bool:
    """Whether every equation reading a mapped value can be re-bound at full shape."""
    is_mapped = {v.id: m for v, m in zip(jaxpr.invars, mapped)}
    for eqn in jaxpr.eqns:
        ins = [isinstance(a, Var) and is_mapped.get(a.id, False) for a in eqn.invars]
        if any(ins):
            if eqn.primitive is jit_p:
                if not _elementwise(eqn.params["jaxpr"].jaxpr, ins):
                    return False
            elif eqn.primitive not in _ELEMENTWISE:
                return False
            if any(a.aval.shape != () for a in eqn.invars):
                return False
        for v in eqn.outvars:
            is_mapped[v.id] = any(ins)
    return True


def eval_batched(closed: ClosedJaxpr, args: Sequence[Any], shape: tuple[int, ...]) -> list:
    """Evaluate a scalar-traced elementwise jaxpr on full-shape arguments (arguments of
    shape () are unmapped); outputs are forced to the full shape."""
    results = _eval_mapped(closed, list(args))
    return [r if tuple(np.shape(r)) == shape else _to_full(r, shape) for r in results]


def _eval_mapped(closed: ClosedJaxpr, args: list) -> list:
    """Re-bind each equation on the new arguments; a nested jit reading a mapped value
    is re-traced at the mapped shapes (its batched jaxpr)."""
    jaxpr = closed.jaxpr
    env: dict[int, Any] = {v.id: c for v, c in zip(jaxpr.constvars, closed.consts)}
    env.update({v.id: a for v, a in zip(jaxpr.invars, args)})

    def read(a: Any) -> Any:
        if isinstance(a, Literal):  # keep the literal's weak type
            return lax.convert_element_type(a.val, a.aval.dtype, a.aval.weak_type)
        return env[a.id]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        if eqn.primitive is jit_p and any(np.shape(v) != () for v in ins):
            outs = _batched_call(eqn.params, ins)
        else:
            outs = eqn.primitive.bind(*ins, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v.id] = o
    return [read(a) for a in jaxpr.outvars]


def _batched_call(params: dict, ins: list) -> list:
    """A nested jit whose inputs are (partly) mapped, with its body re-traced."""
    inner = params["jaxpr"]
    avals = [get_aval(v) for v in ins]
    closed, _ = trace_to_jaxpr(lambda *t: _eval_mapped(inner, list(t)), avals,
                               debug_info=params.get("name"))
    return jit_p.bind(*ins, **{**params, "jaxpr": closed})


# ---------------------------------------------------------------------------------------------
# Everything else: the same values by broadcasting.
# ---------------------------------------------------------------------------------------------

def _broadcast_fallback(idx: Any, branches: Sequence[Callable[[Any], Any]], xs: Any,
                        shape: tuple[int, ...]) -> Any:
    """Every branch applied to the whole operand broadcast to `shape` (the unsqueezed
    broadcast shape), the results picked by select_n."""
    import ember.numpy as jnp
    xb = jnp.broadcast_to(xs, shape)
    cases = [jnp.broadcast_to(b(xb), shape) for b in branches]
    if len(cases) == 1:
        return cases[0]
    idx = lax.convert_element_type(idx, np.int32)
    idx = lax.clamp(np.int32(0), idx, np.int32(len(branches) - 1))
    return lax.select_n(jnp.broadcast_to(idx, shape), *cases)
