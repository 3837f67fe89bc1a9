"""Why a jitted function traced again: `config.update("jax_explain_cache_misses", True)`.

Input: the JitFunction, the cache key of the call that missed and the keys already cached
(`JitFunction._lookup`: key = (in_tree, avals, static, trace_context, axis_env), where
`static` holds `(position or keyword, _StaticKey)` pairs, `trace_context` the values of the
config flags that affect tracing, in `config._tracing_names` order, and `axis_env` the
(name, size) of each named vmap axis being traced).
Output: `explain_cache_miss(...)` returns text in the spirit of JAX's report, naming the
call site and the function's definition, then what differs from the closest cached key:

    TRACING CACHE MISS at /work/app.py:31 (main) because:
      for f defined at /work/app.py:12
      x: now f32[4], before f32[3]

A changed argument type (`x: now f32[4], before f32[3]`; weak types are marked `weak`), a
static argument's new value (`static argument n: now 3, before 2`), a new pytree structure
(`argument structure: now ..., before ...`, plus leaves that appeared or disappeared), a
changed config value (`config jax_enable_x64: now True, before False`), other named vmap
axes (`named vmap axes (name, size): now (('i', 5),), before (('i', 3),)`), or a signature
the process-wide bound dropped (ember/live_signatures.py: the function keeps the hashes of
its last 64 dropped keys).
`report_cache_miss(...)` prints that text to stderr when the flag is on (ember/explain/
observers.py calls it on every cache miss jit reports, importing this module only while
the flag is on).
Invariants: the closest cached key is the one with the fewest differences (ties: the most
recent); nothing here changes the cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ember.tree_util import tree_flatten_with_path, tree_unflatten


def _aval_text(aval: Any) -> str:
    text = aval.str_short() if hasattr(aval, "str_short") else str(aval)
    return text + (" weak" if getattr(aval, "weak_type", False) else "")


def _static_name(fn: Any, where: Any) -> str:
    if isinstance(where, int):
        try:
            return str(fn.arg_name(where))
        except (AttributeError, IndexError, TypeError):
            return f"args[{where}]"
    return str(where)


def _leaf_names(fn: Any, in_tree: Any, static: tuple) -> list[str]:
    """How each flat argument was passed (`x`, `params['w']`), as jit names them."""
    n = in_tree.num_leaves
    try:
        dyn_args, dyn_kwargs = tree_unflatten(in_tree, list(range(n)))
        static_pos = {k for k, _ in static if isinstance(k, int)}
        nargs = len(dyn_args) + len(static_pos)
        dyn_names = [fn.arg_name(i) for i in range(nargs) if i not in static_pos]
        names = [""] * n
        for path, leaf in tree_flatten_with_path((dyn_args, dyn_kwargs))[0]:
            names[leaf] = fn.path_name(path, dyn_names)
        return names
    except (AttributeError, TypeError, ValueError, IndexError):
        return [f"args[{i}]" for i in range(n)]


def _differences(fn: Any, new: tuple, old: tuple) -> list[str]:
    from ember.config import config

    (tree, avals, static, ctx, env), (otree, oavals, ostatic, octx, oenv) = new, old
    out: list[str] = []
    if env != oenv:
        out.append(f"named vmap axes (name, size): now {env}, before {oenv}")
    if tree != otree:
        out.append(f"argument structure: now {tree}, before {otree}")
    names = dict(zip(_leaf_names(fn, tree, static), avals))
    onames = dict(zip(_leaf_names(fn, otree, ostatic), oavals))
    for name, aval in names.items():
        if name not in onames:
            out.append(f"{name}: new argument, {_aval_text(aval)}")
        elif aval != onames[name]:
            out.append(f"{name}: now {_aval_text(aval)}, before {_aval_text(onames[name])}")
    out += [f"{name}: no longer passed (was {_aval_text(a)})" for name, a in onames.items()
            if name not in names]
    svals = {w: k.value for w, k in static}
    osvals = {w: k.value for w, k in ostatic}
    for w in list(svals) + [w for w in osvals if w not in svals]:
        label = f"static argument {_static_name(fn, w)}"
        if w not in osvals:
            out.append(f"{label}: now {svals[w]!r}, not static before")
        elif w not in svals:
            out.append(f"{label}: not passed now, before {osvals[w]!r}")
        elif not (type(svals[w]) is type(osvals[w]) and bool(svals[w] == osvals[w])):
            out.append(f"{label}: now {svals[w]!r}, before {osvals[w]!r}")
    flag_names = getattr(config, "_tracing_names", ())
    for k, (a, b) in enumerate(zip(ctx, octx)):
        if a != b:
            flag = flag_names[k] if k < len(flag_names) else f"flag {k}"
            out.append(f"config {flag}: now {a!r}, before {b!r}")
    return out


def explain_cache_miss(fn: Any, key: tuple, cached_keys: Iterable[tuple]) -> str:
    """Why `key` missed `fn`'s cache (see the module docstring for the text)."""
    from ember.api import fun_location, fun_name
    from ember.core.source_info import user_frame

    call = user_frame()
    name = fun_name(fn.fun)
    head = [f"TRACING CACHE MISS at {call.file}:{call.line} ({call.function}) because:",
            f"  for {name} defined at {fun_location(fn.fun)}"]
    dropped = getattr(fn, "_dropped", None)
    if dropped and hash(key) in dropped:
        from ember.live_signatures import limit

        return "\n".join(head + [
            f"  this signature was traced and compiled before, then dropped: more than "
            f"EMBER_JIT_CACHE_SIZE ({limit()}) signatures of all jitted functions were "
            "cached, and it was the least recently used"])
    keys = list(cached_keys)
    if not keys:
        return "\n".join(head + [f"  first trace of {name}: nothing cached yet"])
    best: list[str] | None = None
    for old in reversed(keys):  # the most recent first, so it wins ties
        diffs = _differences(fn, key, old)
        if best is None or len(diffs) < len(best):
            best = diffs
    assert best is not None
    if not best:
        best = ["an identical key was cached before: the cache was cleared, or the earlier "
                "trace closed over an enclosing trace's values and could not be cached"]
    more = (f"  (compared with the closest of {len(keys)} cached traces)"
            if len(keys) > 1 else None)
    return "\n".join(head + [f"  {d}" for d in best] + ([more] if more else []))


def report_cache_miss(fn: Any, key: tuple, cached_keys: Iterable[tuple]) -> None:
    """Print `explain_cache_miss` to stderr when `jax_explain_cache_misses` is on."""
    from ember.config import config

    if not config.jax_explain_cache_misses:
        return
    from ember.explain.compile_log import emit

    emit(explain_cache_miss(fn, key, cached_keys))
