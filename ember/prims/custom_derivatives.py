"""The custom-derivative primitives: `custom_jvp_call`, `custom_vjp_call` and `custom_lin`.

Operands and params (as JAX 0.10.2 binds and prints them):
  custom_jvp_call(*consts, *args; call_jaxpr, jvp, num_consts, symbolic_zeros, name)
      call_jaxpr: (*consts, *args) -> outs, the primal function; `jvp` a `Rule`:
      (primals, tangents) -> (primal outs, tangent outs) over the flat `args` (tangents may
      be symbolic `Zero`s; ember/custom_derivatives.py builds it from the user's rule).
  custom_vjp_call(*consts, *args; call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name)
      `fwd` a `Rule`: (primals, which have a tangent) -> (outs, residual leaves, residual
      tree); `bwd` a `Rule`:
      (residual tree, residual leaves, output cotangents) -> one cotangent (or `Zero`) per arg.
  custom_lin(*residuals, *tangents; num_res, bwd, out_avals, symbolic_zeros, res_tree)
      the linear part of a custom_vjp function: only reverse mode gives it meaning, by
      running `bwd` in its transpose rule.
`consts` are values the function closes over that are tracers of an enclosing
transformation (a jit being traced): they are operands, so the enclosing trace sees them.
Invariants: the forward computation is always `call_jaxpr` (eager, the interpreter, and the
HLO lowering inline it); only differentiation looks at the rules. JVP of custom_jvp_call
runs the user's rule on the primals; under linearize its tangent work is staged like any
other, so reverse mode needs nothing more. JVP of custom_vjp_call is legal only under
linearize (reverse mode): it runs `fwd` on the primals and stages one `custom_lin`, whose
transpose calls `bwd`; evaluating custom_lin forward (jvp, or calling linearize's linear
function) raises JAX's error. A function differentiated with respect to a value it closes
over (a const whose tangent is not zero) raises JAX's error: the rules only know the
explicit arguments. vmap batches the primal jaxpr and the rules (mapped operands moved to
batch axis 0, unmapped ones left as they are, every result mapped along axis 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ember.core import ad, batching
from ember.core.aval import ShapedArray
from ember.core.eval import eval_closed_numpy, eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr
from ember.core.primitive import Primitive
from ember.core.staging import trace_to_jaxpr
from ember.core.trace import get_aval, new_main
from ember.core.transpose import is_linearized_tangent
from ember.prims import _ad
from ember.prims.control_flow import check_inputs

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_lin_p = Primitive("custom_lin", multiple_results=True)

JVP_OF_CUSTOM_VJP = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
CLOSURE_JVP = ("Detected differentiation of a custom_jvp function with respect to a "
               "closed-over value. That isn't supported because the custom JVP rule only "
               "specifies how to differentiate the custom_jvp function with respect to "
               "explicit input parameters. Try passing the closed-over value into the "
               "custom_jvp function as an argument, and adapting the custom_jvp rule.")
CLOSURE_VJP = ("Detected differentiation of a custom_vjp function with respect to a "
               "closed-over value. That isn't supported because the custom VJP rule only "
               "specifies how to differentiate the custom_vjp function with respect to "
               "explicit input parameters. Try passing the closed-over value into the "
               "custom_vjp function as an argument, and adapting the custom_vjp fwd and bwd "
               "rules.")


class Rule:
    """A Python function carried as an equation param: calling it calls the function; it
    prints as the user's function name (`jvp=f_jvp`, `bwd=<lambda>`), as JAX prints it."""

    __slots__ = ("fn", "name")

    def __init__(self, fn: Callable[..., Any], name: str):
        self.fn = fn
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


def _check_consts(tangents: Sequence[Any], num_consts: int, msg: str) -> None:
    if any(not isinstance(t, ad.Zero) for t in tangents[:num_consts]):
        raise TypeError(msg)


def _inline_lowering(ctx: Any, *ins: Any, call_jaxpr: ClosedJaxpr, **params: Any) -> list:
    """The primal body, lowered in place (the compiled code never sees the rules)."""
    if ctx.lowerer is None:
        raise NotImplementedError("this lowering context cannot lower sub-jaxprs")
    return ctx.lowerer.lower_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, list(ins),
                                   ctx.name_stack)


def _call_abstract(*avals: ShapedArray, call_jaxpr: ClosedJaxpr, **params: Any
                   ) -> list[ShapedArray]:
    check_inputs("custom derivative call_jaxpr", call_jaxpr, list(avals))
    return list(call_jaxpr.out_avals)


def _call_impl(*args: Any, call_jaxpr: ClosedJaxpr, **params: Any) -> list:
    return eval_closed_numpy(call_jaxpr, list(args))


for _p in (custom_jvp_call_p, custom_vjp_call_p):
    _p.def_abstract_eval(_call_abstract)
    _p.def_impl(_call_impl)
    _p.def_lowering(_inline_lowering)


@custom_jvp_call_p.def_pp_params
def _pp_jvp_call(params: dict) -> list:
    return [("name", params["name"]), ("call_jaxpr", params["call_jaxpr"]),
            ("jvp", params["jvp"]), ("symbolic_zeros", params["symbolic_zeros"])]


@custom_vjp_call_p.def_pp_params
def _pp_vjp_call(params: dict) -> list:
    return [("name", params["name"]), ("bwd", params["bwd"]),
            ("call_jaxpr", params["call_jaxpr"]), ("fwd", params["fwd"]),
            ("symbolic_zeros", params["symbolic_zeros"])]


@custom_lin_p.def_pp_params
def _pp_lin(params: dict) -> list:
    return [(k, params[k]) for k in ("bwd", "num_res", "out_avals", "symbolic_zeros")]


# -- JVP ----------------------------------------------------------------------------------------

@custom_jvp_call_p.def_jvp
def _custom_jvp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         call_jaxpr: ClosedJaxpr, jvp: Rule, num_consts: int,
                         symbolic_zeros: bool, name: str) -> tuple[list, list]:
    _check_consts(tangents, num_consts, CLOSURE_JVP)
    outs, out_tangents = jvp(list(primals[num_consts:]), list(tangents[num_consts:]))
    return list(outs), list(out_tangents)


@custom_vjp_call_p.def_jvp
def _custom_vjp_call_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                         call_jaxpr: ClosedJaxpr, fwd: Rule, bwd: Rule, num_consts: int,
                         symbolic_zeros: bool, name: str) -> tuple[list, list]:
    _check_consts(tangents, num_consts, CLOSURE_VJP)
    arg_tangents = list(tangents[num_consts:])
    # Forward mode has no rule to run: only a linearization (reverse mode) stages the
    # tangents, and its transpose is what calls bwd.
    if not all(isinstance(t, ad.Zero) or is_linearized_tangent(t) for t in arg_tangents):
        raise TypeError(JVP_OF_CUSTOM_VJP)
    perturbed = [not isinstance(t, ad.Zero) for t in arg_tangents]
    outs, res, res_tree = fwd(list(primals[num_consts:]), perturbed)
    out_avals = tuple(get_aval(o).strip_weak_type() for o in outs)
    ts = [ad.instantiate_zeros(t) for t in arg_tangents]
    t_out = custom_lin_p.bind(*res, *ts, num_res=len(res), bwd=bwd, out_avals=out_avals,
                              symbolic_zeros=symbolic_zeros, res_tree=res_tree)
    t_out = [t if ad.is_differentiable(a) else ad.Zero(a) for t, a in zip(t_out, out_avals)]
    return list(outs), t_out


# -- custom_lin: the linear part of a custom_vjp function ----------------------------------------

@custom_lin_p.def_abstract_eval
def _lin_abstract(*avals: ShapedArray, out_avals: tuple, **params: Any) -> list[ShapedArray]:
    return list(out_avals)


def _lin_forward(*args: Any, **params: Any) -> Any:
    raise TypeError(JVP_OF_CUSTOM_VJP)


custom_lin_p.def_impl(_lin_forward)
custom_lin_p.def_lowering(_lin_forward)
custom_lin_p.def_jvp(_lin_forward)
# vmap of it is evaluating it forward too (jacfwd pushes a batch of tangents through it)
custom_lin_p.def_batch(_lin_forward)


@custom_lin_p.def_transpose
def _lin_transpose(cts: Sequence[Any], *args: Any, num_res: int, bwd: Rule, out_avals: tuple,
                   symbolic_zeros: bool, res_tree: Any) -> list:
    res = list(args[:num_res])
    if not symbolic_zeros:
        cts = [ad.instantiate_zeros(c) for c in cts]
    cts_in = bwd(res_tree, res, list(cts))
    return [None] * num_res + list(cts_in)


# -- vmap ---------------------------------------------------------------------------------------
# A mapped operand is moved to batch axis 0 and an unmapped one stays as it is (its dim is
# None); every result and tangent comes out mapped along axis 0 (residuals keep the dims
# the batched fwd gives them, which reach bwd through the residual tree). The rules run
# under vmap with the same dims, and a cotangent bwd gives for an unmapped input is summed
# over the batch (each example's contribution to the one shared value).

def mapped_at_front(axis: batching.AxisData, args: Sequence[Any], dims: Sequence[Any]
                    ) -> tuple[list[Any], list[int | None]]:
    """Mapped operands moved to batch axis 0 (unmapped ones as they are), and their dims."""
    xs = [x if d is None else batching.bdim_at_front(x, d, axis.size)
          for x, d in zip(args, dims)]
    return xs, [None if d is None else 0 for d in dims]


def _batched(fn: Callable[..., Sequence[Any]], axis: batching.AxisData,
             in_dims: Sequence[int | None]) -> Callable[..., list[Any]]:
    """`fn` on flat values mapped along `in_dims`, every result mapped along axis 0."""
    def run(*xs: Any) -> list[Any]:
        return batching.vmap_flat(fn, xs, list(in_dims), lambda n: [0] * n, axis)
    return run


def batch_jaxpr(closed: ClosedJaxpr, axis: batching.AxisData,
                 in_dims: Sequence[int | None]) -> ClosedJaxpr:
    """`closed` on inputs with a leading batch axis where `in_dims` says 0."""
    avals = [a if d is None else ShapedArray((axis.size, *a.shape), a.dtype, a.weak_type)
             for a, d in zip(closed.in_avals, in_dims)]
    body = _batched(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), axis, in_dims)
    batched, _ = trace_to_jaxpr(body, avals)
    return batched


def _batch_jvp_rule(jvp: Rule, axis: batching.AxisData, in_dims: list[int | None]) -> Rule:
    def rule(primals: list, tangents: list) -> tuple[list, list]:
        n = len(primals)
        ts = [ad.instantiate_zeros(t) for t in tangents]

        def flat(*xs: Any) -> list[Any]:
            outs, touts = jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + [ad.instantiate_zeros(t) for t in touts]
        got = _batched(flat, axis, in_dims + in_dims)(*primals, *ts)
        half = len(got) // 2
        return got[:half], got[half:]
    return Rule(rule, jvp.name)


@custom_jvp_call_p.def_batch
def _custom_jvp_call_batch(axis: batching.AxisData, args: Sequence[Any], dims: Sequence[Any],
                           *, call_jaxpr: ClosedJaxpr, jvp: Rule, num_consts: int,
                           symbolic_zeros: bool, name: str) -> tuple[list, list]:
    xs, in_dims = mapped_at_front(axis, args, dims)
    outs = custom_jvp_call_p.bind(
        *xs, call_jaxpr=batch_jaxpr(call_jaxpr, axis, in_dims),
        jvp=_batch_jvp_rule(jvp, axis, in_dims[num_consts:]), num_consts=num_consts,
        symbolic_zeros=False, name=name)
    return outs, [0] * len(outs)


def _vmap_keeping_dims(fn: Callable[..., Sequence[Any]], xs: Sequence[Any],
                       in_dims: Sequence[int | None], axis: batching.AxisData
                       ) -> tuple[list[Any], list[int | None]]:
    """`fn` under vmap, its results left where the batching rules put their batch axes (a
    residual shared by every example stays unmapped)."""
    with new_main(batching.BatchTrace, payload=axis) as main:
        trace = batching.BatchTrace(main)
        ins = [batching.BatchTracer(trace, x, d) for x, d in zip(xs, in_dims)]
        outs = [trace.full_raise(o) for o in fn(*ins)]
        return [o.val for o in outs], [o.batch_dim for o in outs]


def _batch_fwd_rule(fwd: Rule, axis: batching.AxisData, in_dims: list[int | None]) -> Rule:
    # the residual tree the batched fwd returns carries the residuals' batch dims to bwd
    def rule(primals: list, perturbed: list[bool]) -> tuple[list, list, Any]:
        trees: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            outs, res, res_tree = fwd(list(xs), perturbed)
            trees.append((len(outs), res_tree))
            return list(outs) + list(res)
        got, dims = _vmap_keeping_dims(flat, primals, in_dims, axis)
        n_out, res_tree = trees[0]
        outs = [batching.bdim_at_front(o, d, axis.size) for o, d in zip(got[:n_out], dims)]
        return outs, got[n_out:], (res_tree, tuple(dims[n_out:]))
    return Rule(rule, fwd.name)


def _batch_bwd_rule(bwd: Rule, axis: batching.AxisData, in_dims: list[int | None]) -> Rule:
    def rule(tree_and_dims: Any, res: list, cts: list) -> list:
        res_tree, res_dims = tree_and_dims
        n_res = len(res)
        cts = [ad.instantiate_zeros(c) for c in cts]

        def flat(*xs: Any) -> list[Any]:
            got = bwd(res_tree, list(xs[:n_res]), list(xs[n_res:]))
            return [ad.instantiate_zeros(c) for c in got]
        got, dims = _vmap_keeping_dims(flat, [*res, *cts], [*res_dims, *[0] * len(cts)], axis)
        # a mapped input gets its per-example cotangents; a shared one their sum
        return [batching.bdim_at_front(c, d, axis.size) if want is not None
                else (c if d is None else _ad.reduce_sum(c, (d,)))
                for c, d, want in zip(got, dims, in_dims)]
    return Rule(rule, bwd.name)


@custom_vjp_call_p.def_batch
def _custom_vjp_call_batch(axis: batching.AxisData, args: Sequence[Any], dims: Sequence[Any],
                           *, call_jaxpr: ClosedJaxpr, fwd: Rule, bwd: Rule, num_consts: int,
                           symbolic_zeros: bool, name: str) -> tuple[list, list]:
    xs, in_dims = mapped_at_front(axis, args, dims)
    arg_dims = in_dims[num_consts:]
    outs = custom_vjp_call_p.bind(
        *xs, call_jaxpr=batch_jaxpr(call_jaxpr, axis, in_dims),
        fwd=_batch_fwd_rule(fwd, axis, arg_dims), bwd=_batch_bwd_rule(bwd, axis, arg_dims),
        num_consts=num_consts, symbolic_zeros=False, name=name)
    return outs, [0] * len(outs)
