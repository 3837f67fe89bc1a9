"""vmap's trace: batched values, the batching-rule protocol and the axis helpers rules use.

Input: a function on flat lists of values, and for each value the axis it is mapped along
(`not_mapped` for a value shared by every example). Output: its flat outputs, each mapped
along the axis the caller asks for (`vmap_flat`), computed by a `BatchTrace` whose tracers
carry (value with the batch axis, where that axis is) through each primitive's batching
rule (`prim.batch_rule`).
The rule protocol (JAX's): `rule(axis, args, dims, **params) -> (out, out_dims)`, where
`axis` is the `AxisData` (size and name) of the vmap being traced, `args` the operands
*with* their batch axis, `dims` each operand's batch axis or `not_mapped`, and
`out`/`out_dims` the same for the results (lists for a multiple-results primitive). A rule
may move batch axes where it likes; the caller moves them where the user asked at the end.
Invariants:
- A primitive whose operands are all `not_mapped` runs unbatched at the level below, and its
  results are `not_mapped`: a rule only ever sees at least one mapped operand, except for a
  primitive that names this vmap's axis (a collective, `prim.axis_name_param`), whose rule
  runs even on unmapped operands (psum over the axis of a shared value is size * value).
- A batch axis is a non-negative int < the value's rank; the batch size is `axis.size`.
- Rules live with their primitive (prims/*.py, one file per family); this module knows
  no primitive. It binds the shape primitives it needs through the hooks prims install
  (`set_axis_ops`), so core never imports prims.
- vmap traces nest: each `vmap_flat` pushes its own MainTrace, and a value of an enclosing
  trace enters an inner one as `not_mapped` (`lift`).
- `batch_jaxpr` batches a closed sub-jaxpr (a control-flow body) into a new jaxpr whose
  mapped inputs and outputs all carry their batch axis at 0: it runs the body under a
  BatchTrace above a fresh staging trace, so the rules of its primitives stage the batched
  equations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ember.core.aval import ShapedArray
from ember.core.eval import eval_jaxpr
from ember.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from ember.core.staging import DynamicJaxprTrace, JaxprBuilder, JaxprTracer, trace_to_jaxpr
from ember.core.trace import Trace, Tracer, current_dynamic, get_aval, new_main

not_mapped = None  # the batch "axis" of a value shared by every example


@dataclass(frozen=True)
class AxisData:
    """The vmap being traced: its size and its `axis_name` (None when it has none)."""

    size: int
    name: Any = None


# The shape operations core needs (moving and inserting an axis), installed by prims/_ad.py.
_moveaxis: Callable[[Any, int, int], Any] | None = None
_broadcast: Callable[[Any, int, int], Any] | None = None


def set_axis_ops(moveaxis: Callable[[Any, int, int], Any],
                 broadcast: Callable[[Any, int, int], Any]) -> None:
    """`moveaxis(x, src, dst)`; `broadcast(x, size, axis)`: x with a new axis of `size`
    inserted at `axis` (every slice along it equal to x)."""
    global _moveaxis, _broadcast
    _moveaxis, _broadcast = moveaxis, broadcast


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """x with its axis `src` moved to position `dst` (the other axes keep their order)."""
    if src == dst:
        return x
    assert _moveaxis is not None
    return _moveaxis(x, src, dst)


def bdim_at(x: Any, bdim: int | None, size: int, dst: int = 0) -> Any:
    """x with its batch axis at `dst`: moved there, or, for an unmapped x, made by
    broadcasting x `size` times along a new axis there."""
    if bdim is not_mapped:
        assert _broadcast is not None
        return _broadcast(x, size, dst)
    return moveaxis(x, bdim, dst)


def bdim_at_front(x: Any, bdim: int | None, size: int) -> Any:
    return bdim_at(x, bdim, size, 0)


def move_stacked_axis(x: Any, bdim: int | None, dst: int | None, size: int) -> Any:
    """The final placement of an output: its batch axis moved to `dst` (an unmapped x is
    broadcast there), or, for `dst` None, x unchanged (it must be unmapped)."""
    if dst is None:
        if bdim is not not_mapped:
            raise ValueError("vmap has mapped output but out_axes is None")
        return x
    if dst < 0:  # counted from the end of the output's shape with the batch axis
        ndim = len(get_aval(x).shape) + (1 if bdim is not_mapped else 0)
        dst += ndim
    return bdim_at(x, bdim, size, dst)


# ---------------------------------------------------------------------------------------------
# The batch trace.
# ---------------------------------------------------------------------------------------------

class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: int | None):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        if self.batch_dim is not_mapped:
            return aval
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)


def names_axis(prim: Any, params: dict, name: Any) -> bool:
    """Whether `prim` (a collective) names the axis `name` in its params."""
    param = getattr(prim, "axis_name_param", None)
    if param is None or name is None:
        return False
    names = params[param]
    return name in (names if isinstance(names, (tuple, list)) else (names,))


class BatchTrace(Trace):
    __slots__ = ()

    @property
    def axis(self) -> AxisData:
        return self.main.payload

    def pure(self, val: Any) -> BatchTracer:
        return BatchTracer(self, val, not_mapped)

    def lift(self, tracer: Tracer) -> BatchTracer:
        return BatchTracer(self, tracer, not_mapped)

    def process_primitive(self, prim: Any, tracers: list, params: dict) -> Any:
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        axis = self.axis
        if all(d is not_mapped for d in dims) and not names_axis(prim, params, axis.name):
            out = prim.bind(*vals, **params)
            if prim.multiple_results:
                return [BatchTracer(self, o, not_mapped) for o in out]
            return BatchTracer(self, out, not_mapped)
        rule = prim.batch_rule
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
        out, out_dims = rule(axis, vals, dims, **params)
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dims)]
        return BatchTracer(self, out, out_dims)

    def process_call(self, prim: Any, tracers: list, params: dict) -> Any:
        """A jitted call under vmap. While a jaxpr is being staged, it stays one call, of the
        batched callee (as JAX batches a pjit: the batch dims stay where they are, and an
        output the body leaves unmapped stays unmapped), so `make_jaxpr(vmap(f))` prints the
        nested `jit[...]` JAX prints. Eagerly, or when the body holds a collective, the
        callee's equations are inlined at this level: eager mode never compiles."""
        from ember.core.trace import _collective_axis_names
        closed = params["jaxpr"]
        if current_dynamic().level == 0 or _collective_axis_names(closed, set()):
            return super().process_call(prim, tracers, params)
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        if all(d is not_mapped for d in dims):
            return [BatchTracer(self, o, not_mapped) for o in prim.bind(*vals, **params)]
        out_dims: list[int | None] = []

        def batched_body(*xs: Any) -> list:
            out_dims.clear()
            with new_main(BatchTrace, payload=self.axis) as main:
                trace = BatchTrace(main)
                ins = [BatchTracer(trace, x, d) for x, d in zip(xs, dims)]
                outs = [trace.full_raise(o)
                        for o in eval_jaxpr(closed.jaxpr, closed.consts, *ins)]
            out_dims.extend(o.batch_dim for o in outs)
            return [o.val for o in outs]

        batched, _ = trace_to_jaxpr(batched_body, [get_aval(v) for v in vals])
        if any(isinstance(c, Tracer) for c in batched.consts):
            return super().process_call(prim, tracers, params)
        outs = prim.bind(*vals, **dict(params, jaxpr=batched))
        return [BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]


def vmap_flat(fun: Callable[..., Sequence[Any]], args: Sequence[Any],
              in_dims: Sequence[int | None], out_dims: Callable[[int], Sequence[int | None]],
              axis: AxisData) -> list[Any]:
    """Run `fun(*flat values) -> flat outputs` on values mapped along `in_dims`; each output
    comes back mapped along its entry of `out_dims(n_outputs)` (None: not mapped)."""
    with new_main(BatchTrace, payload=axis) as main:
        trace = BatchTrace(main)
        ins = [BatchTracer(trace, x, d) for x, d in zip(args, in_dims)]
        outs = [trace.full_raise(o) for o in fun(*ins)]
        dsts = out_dims(len(outs))
        return [move_stacked_axis(o.val, o.batch_dim, d, axis.size)
                for o, d in zip(outs, dsts)]


def named_axis_trace(names: Any) -> Trace | None:
    """The innermost vmap trace whose axis is one of `names` (a collective binds there even
    when none of its operands is mapped), or None when no enclosing vmap has that name."""
    from ember.core.trace import _state
    names = names if isinstance(names, (tuple, list)) else (names,)
    for main in reversed(_state.stack):
        if main.trace_type is BatchTrace and main.payload.name in names:
            return main.with_cur_sublevel()
    return None


def bound_axis_names() -> list[Any]:
    """The axis names of the vmaps being traced, outermost first, after the mesh axes of
    the shard_map bodies being traced (`spmd_axes`)."""
    from ember.core.trace import _state
    return [*spmd_axes()] + [m.payload.name for m in _state.stack
                             if m.trace_type is BatchTrace and m.payload.name is not None]


class _SpmdAxes(threading.local):
    def __init__(self) -> None:
        self.stack: list[dict[Any, int]] = []


_spmd = _SpmdAxes()


def spmd_axes() -> dict[Any, int]:
    """The mesh axes (name -> size) of the shard_map bodies this thread is tracing: names a
    collective may use there, which no vmap removes (the body stays per device)."""
    out: dict[Any, int] = {}
    for frame in _spmd.stack:
        out.update(frame)
    return out


@contextmanager
def spmd_axis_env(sizes: dict[Any, int]) -> Iterator[None]:
    """Bind mesh axis names (name -> size) while a shard_map body is traced."""
    _spmd.stack.append(dict(sizes))
    try:
        yield
    finally:
        _spmd.stack.pop()


def eval_body(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Run `jaxpr`'s equations on `args` through `bind` (as core.eval.eval_jaxpr), reading
    a weakly typed literal as a weak value: while a jaxpr is being staged, the literal
    itself; eagerly, its Python scalar (when that has the literal's dtype). Its NumPy value
    would be strongly typed, and `count + 1` on a weak int carry would come out strong in
    the batched body (JAX keeps it weak)."""
    staging = current_dynamic()
    staged = staging.trace_type is DynamicJaxprTrace

    def weak_literal(v: Literal) -> Any:
        if not v.aval.weak_type:
            return v.val
        if staged:
            return JaxprTracer(staging.with_cur_sublevel(), v.aval, v)
        # Eagerly, the Python scalar is the weak value when its type is the literal's.
        scalar = v.val.item() if hasattr(v.val, "item") else v.val
        scalar_aval = get_aval(scalar)
        same = scalar_aval.dtype == v.aval.dtype and scalar_aval.weak_type
        return scalar if same else v.val

    return eval_jaxpr(jaxpr, list(consts), *args, literal=weak_literal)


def batched_aval(aval: ShapedArray, size: int) -> ShapedArray:
    """`aval` with a leading batch axis of `size` (the type of a value mapped at axis 0)."""
    return ShapedArray((size, *aval.shape), aval.dtype, aval.weak_type)


def batch_jaxpr(closed: ClosedJaxpr, axis: AxisData, in_batched: Sequence[bool],
                instantiate: bool | Sequence[bool]) -> tuple[ClosedJaxpr, list[bool]]:
    """`closed` batched over `axis`: input i is mapped (batch axis 0) where `in_batched[i]`;
    returns the batched jaxpr and which outputs are mapped (at axis 0). An output is mapped
    when a mapped input reaches it or `instantiate` asks for it (an unmapped value is then
    broadcast to the batch). The result's consts are constants the batching rules created
    (the caller hoists them where a sub-jaxpr must not have any)."""
    n_out = len(closed.out_avals)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    in_avals = [batched_aval(a, axis.size) if b else a
                for a, b in zip(closed.in_avals, in_batched)]
    out_batched: list[bool] = []
    builder = JaxprBuilder()
    with new_main(DynamicJaxprTrace, dynamic=True, payload=builder) as staging_main:
        staging = DynamicJaxprTrace(staging_main)
        args = [staging.new_arg(a) for a in in_avals]
        with new_main(BatchTrace, payload=axis) as main:
            trace = BatchTrace(main)
            ins = [BatchTracer(trace, x, 0 if b else not_mapped)
                   for x, b in zip(args, in_batched)]
            outs = [trace.full_raise(o)
                    for o in eval_body(closed.jaxpr, closed.consts, *ins)]
            vals = []
            for o, want in zip(outs, inst):
                if o.batch_dim is not_mapped and not want:
                    vals.append(o.val)
                    out_batched.append(False)
                else:
                    vals.append(bdim_at_front(o.val, o.batch_dim, axis.size))
                    out_batched.append(True)
        out_tracers = [staging.full_raise(v) for v in vals]
        batched = builder.to_closed_jaxpr([t._var for t in out_tracers])
    return batched, out_batched
