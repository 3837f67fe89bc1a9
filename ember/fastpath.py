"""The cached-call fast path of `ember.jit`: a call that repeats the last signature skips
flattening, cache lookup, `bind` and result wrapping.

Input: a JitFunction cache entry (TraceResult) that a call has just hit, the positional
arguments of that call, and the entry's CompiledModule.
Output: `fast(args) -> result | MISS`, which the JitFunction tries before its normal path.
It answers MISS, and the normal path runs, unless every condition below holds; otherwise it
returns exactly what the normal path would (same values, dtypes, weak types, pytree).

A call takes the fast path when:
- no trace is active on this thread (`current_dynamic()` is the eval trace: under another
  jit or `make_jaxpr` the call must be staged as one `jit` equation) and the tracing config
  is the one the entry was traced under (the same tuple object: `config.update` makes a new
  one, `jax_disable_jit` included);
- it has no keyword arguments (checked by the caller) and as many positional arguments,
  each an `ember.Array` whose aval equals the entry's (identity first: a result of the
  previous call carries the very aval object) or a plain `np.ndarray` of the exact dtype,
  shape and C strides (only where the entry's aval is strongly typed: a NumPy array is
  never weak), or a Python float, int or bool where the entry's aval is the scalar it traces
  to (an int only within the dtype's range: outside it the normal path raises
  OverflowError), converted as the normal path converts it.
Everything else (pytrees, complex scalars, static arguments, tracers, other shapes) misses.

What a fast call does: collect each argument's C-contiguous value (cached on the Array),
run the backend's `fast_runner` (CPU: allocate outputs, one native call) and wrap its
fresh outputs in read-only Arrays with the traced out avals. Backends without a runner (the
interpreter) run the CompiledModule and wrap through `wrap_results`, which copies results
that alias a user's NumPy array. Donated Arrays are deleted after the call, as on the
normal path. The closure holds no per-call state, so threads may share it.

`STATS["slow_calls"]` counts calls that took the normal path (a test asserts the fast path
ran by seeing it unchanged: the fast path itself counts nothing, to stay cheap);
`STATS["fast_built"]` counts installed fast paths.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ember.array import ArrayImpl
from ember.compiler import CompiledModule
from ember.config import config
from ember.core import trace as _trace
from ember.core.trace import wrap_results
from ember.donation import exclusive_value
from ember.tree_util import PyTreeDef, tree_structure

MISS = object()  # "not taken": a sentinel, as a jitted function may return None
STATS = {"slow_calls": 0, "fast_built": 0}
_LEAF = tree_structure(0)


_SCALARS = (float, int, bool)  # (not complex: rare)


def eligible(args: tuple) -> bool:
    """Whether a call with these positional arguments could ever take the fast path."""
    for x in args:
        t = type(x)
        if t is not ArrayImpl and t is not np.ndarray and t not in _SCALARS:
            return False
    return True


def _scalar_spec(x: Any, aval: Any) -> tuple | None:
    """("python", its type, dtype, lo, hi) when the Python scalar `x` traces to `aval` (a weak
    scalar of its kind: float to a weak float, int to a weak int; bool to a strong bool),
    else None. lo..hi: the
    ints the dtype holds (the normal path raises OverflowError outside them)."""
    dt = np.dtype(aval.dtype)
    if aval.shape != ():
        return None
    if type(x) is bool:  # (a Python bool is a strong bool[], as in JAX)
        return ("python", bool, dt, None, None) if dt == np.bool_ and not aval.weak_type \
            else None
    if not aval.weak_type:
        return None
    if type(x) is float and dt.kind == "f" and dt.itemsize >= 4:
        return ("python", float, dt, None, None)
    if type(x) is int and dt.kind == "i":
        info = np.iinfo(dt)
        return ("python", int, dt, int(info.min), int(info.max))
    return None


def build(in_avals: list, out_avals: list, out_tree: PyTreeDef, donated: tuple | None,
          args: tuple, compiled: CompiledModule) -> Callable[[tuple], Any] | None:
    """The fast path for calls like `args` (which just hit this cache entry), or None."""
    if not eligible(args) or len(args) != len(in_avals) or not out_avals:
        return None  # (a function without results has nothing worth a fast path)
    specs = []
    for x, aval in zip(args, in_avals):
        if type(x) in _SCALARS:
            py_spec = _scalar_spec(x, aval)
            if py_spec is None:
                return None
            specs.append((aval, py_spec))
            continue
        np_spec = None
        if not aval.weak_type:
            strides = np.empty(aval.shape, aval.dtype).strides  # C order
            np_spec = (aval.dtype, aval.shape, strides)
        if type(x) is ArrayImpl:
            if x._aval != aval:  # (a donated `x` is deleted by now; its aval stays)
                return None
            aval = x._aval  # the object later results of this function will carry
        elif np_spec is None or x.dtype != aval.dtype or x.strides != np_spec[2]:
            return None  # calls like this one would always miss: keep the previous path
        specs.append((aval, np_spec))
    runner = compiled.fast_runner()
    donated_pos = tuple(i for i, d in enumerate(donated or ()) if d)
    single = out_tree == _LEAF
    STATS["fast_built"] += 1
    return _closure(len(args), specs, runner, compiled, list(out_avals), out_tree, single,
                    donated_pos)


def _closure(nargs: int, specs: list, runner: Any, compiled: CompiledModule,
             out_avals: list, out_tree: PyTreeDef, single: bool, donated_pos: tuple
             ) -> Callable[[tuple], Any]:
    """Generate `fast(args)` for this arity, unrolled: every check and output a plain line.

    For `f(x)` on the CPU backend with one output the generated source reads:

        def fast(args):
            if len(args) != 1 or tls.dynamic.level or cfg._trace_context is not ctx:
                return MISS
            x0, = args
            if type(x0) is ArrayImpl:
                if x0._aval is not aval0 and x0._aval != aval0:
                    return MISS
                v0 = x0._cval
                if v0 is None:
                    v0 = x0._c_value()
                    if v0 is None:
                        return MISS
            elif (type(x0) is ndarray and x0.dtype is dt0 and x0.shape == shape0
                  and x0.strides == strides0):
                v0 = x0
            else:
                return MISS
            o0 = make0(dims0, odt0)
            objs = (desc, v0, o0,)
            tramp(objs)
            r0 = new(ArrayImpl); r0._value = o0; r0._aval = oaval0; r0._deleted = False; ...
            return r0

    A loop over arguments costs a few hundred nanoseconds more per call than this, about a
    sixth of the whole budget of a tiny call.
    """
    ns: dict[str, Any] = {
        "MISS": MISS, "ArrayImpl": ArrayImpl, "new": object.__new__, "ndarray": np.ndarray,
        "array": np.array,
        "wrap_results": wrap_results,
        "tls": _trace._state,  # thread-local: `.dynamic` is this thread's innermost dynamic trace
        "cfg": config, "ctx": config.trace_context(), "runner": runner, "compiled": compiled,
        "out_avals": out_avals, "out_tree": out_tree}
    xs = [f"x{i}" for i in range(nargs)]
    vs = [f"v{i}" for i in range(nargs)]
    lines = ["def fast(args):",
             f"    if len(args) != {nargs} or tls.dynamic.level or cfg._trace_context is not ctx:",
             "        return MISS"]
    if nargs:
        lines.append(f"    {', '.join(xs)}, = args")
    # outputs written into donated arguments (cpu RuntimeSpec `aliases`): an Array nothing
    # else references lends its memory (ember/donation.py), asked before a local holds it
    lend = (runner is not None and not runner.direct and bool(donated_pos)
            and bool(runner.exe._spec.aliases))
    if lend:
        ns["exclusive"] = exclusive_value
        lines.append("    owned = []")
    for i, (aval, np_spec) in enumerate(specs):
        ns[f"aval{i}"] = aval
        if np_spec is not None and isinstance(np_spec[0], str):  # a Python scalar
            _, kind, ns[f"sdt{i}"], lo, hi = np_spec
            test = (f"type(x{i}) is int and {lo} <= x{i} <= {hi}" if kind is int
                    else f"type(x{i}) is {kind.__name__}")
            lines += [f"    if {test}:", f"        v{i} = array(x{i}, sdt{i})"]
            np_spec = None  # (Arrays of the same weak aval are taken below too)
            lines += [f"    elif type(x{i}) is ArrayImpl:"]
        else:
            lines += [f"    if type(x{i}) is ArrayImpl:"]
        lines += [f"        if x{i}._aval is not aval{i} and x{i}._aval != aval{i}:",
                  "            return MISS"]
        pad = ""
        if lend and i in donated_pos:
            lines += [f"        v{i} = exclusive(x{i})",
                      f"        if v{i} is not None:",
                      f"            owned.append({i})",
                      "        else:"]
            pad = "    "
        lines += [f"{pad}        v{i} = x{i}._cval",
                  f"{pad}        if v{i} is None:",
                  f"{pad}            v{i} = x{i}._c_value()",
                  f"{pad}            if v{i} is None:",  # deleted: the normal path raises
                  f"{pad}                return MISS"]
        if np_spec is not None:
            ns[f"dt{i}"], ns[f"shape{i}"], ns[f"strides{i}"] = np_spec
            lines += [f"    elif (type(x{i}) is ndarray and x{i}.dtype is dt{i} "
                      f"and x{i}.shape == shape{i}",
                      f"          and x{i}.strides == strides{i}):",
                      f"        v{i} = x{i}"]
        lines += ["    else:", "        return MISS"]
    nout = len(out_avals)
    rs = [f"r{k}" for k in range(nout)]
    if runner is not None and runner.direct:
        ns["tramp"], ns["desc"] = runner.tramp, runner.desc
        for k, (make, dims, dt) in enumerate(runner.outputs):
            ns[f"make{k}"], ns[f"dims{k}"], ns[f"odt{k}"] = make, dims, dt
            lines.append(f"    o{k} = make{k}(dims{k}, odt{k})")
        for j, a in enumerate(runner.fixed):
            ns[f"fixed{j}"] = a
        objs = (["desc"] + vs + [f"fixed{j}" for j in range(len(runner.fixed))]
                + [f"o{k}" for k in range(nout)])
        # (the call holds the tuple, so every array in it, while the kernel runs)
        lines += [f"    objs = ({', '.join(objs)},)", "    tramp(objs)"]
        if runner.precise is not None:  # (its copies could not be compiled: raise)
            ns["precise"] = runner.precise
            lines.append("    precise.raise_if_failed()")
    elif runner is not None:
        owned = ", owned" if lend else ""
        lines.append(f"    {''.join(f'o{k}, ' for k in range(nout))}= "
                     f"runner([{', '.join(vs)}]{owned})")
    else:  # the interpreter: results may alias inputs; wrap_results copies what it must
        lines += [f"    vals = [{', '.join(vs)}]",
                  f"    {''.join(r + ', ' for r in rs)}= wrap_results(compiled(vals), out_avals, "
                  "list(args), vals)"]
    if runner is not None:  # fresh, read-only outputs of the traced avals
        # every slot `ArrayImpl.__init__(o, aval, cval=o)` sets, set here without its
        # frame: half the cost of wrapping (tests compare the two slot by slot)
        for k in range(nout):
            ns[f"oaval{k}"] = out_avals[k]
            lines.append(f"    r{k} = new(ArrayImpl); r{k}._value = o{k}; r{k}._aval = oaval{k}; "
                         f"r{k}._deleted = False; r{k}._cval = o{k}")
    for i in donated_pos:
        lines += [f"    if type(x{i}) is ArrayImpl:", f"        x{i}.delete()"]
    lines.append("    return r0" if single else f"    return out_tree.unflatten([{', '.join(rs)}])")
    code = compile("\n".join(lines) + "\n", "<ember.jit fast path>", "exec")
    exec(code, ns)
    return ns["fast"]
