"""Every Ember flag in one place.

Input: `config.update(name, value)` calls, or environment variables read once at import
(`JAX_ENABLE_X64=1`, `EMBER_UNSAFE_MATH=1`, ...). Output: `config.<name>` reads.
Invariant: flags that change what a trace produces (dtype canonicalization, unsafe rewrites)
are listed with `affects_tracing=True`; `trace_context()` returns their current values and
is part of every jit cache key, so flipping one never serves a stale trace.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Flag:
    name: str
    default: Any
    help: str
    affects_tracing: bool
    env: str | None = None
    parse: Callable[[str], Any] = str


def _parse_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


_FLAGS: dict[str, Flag] = {}


def _define(flag: Flag) -> None:
    _FLAGS[flag.name] = flag


_define(Flag("jax_enable_x64", False, "64-bit types (int64, uint64, float64) instead of "
             "32-bit defaults.", True, "JAX_ENABLE_X64", _parse_bool))
_define(Flag("ember_unsafe_math", False, "Allow rewrites that are not exact under IEEE-754 "
             "(reassociation, x*0 => 0 for floats, x**0.5 => sqrt(x)).", True,
             "EMBER_UNSAFE_MATH", _parse_bool))
_define(Flag("jax_numpy_rank_promotion", "allow", "'allow', 'warn' or 'raise' on implicit "
             "rank promotion in ember.numpy broadcasting.", True))
_define(Flag("jax_log_compiles", False, "Log each compilation to stderr (function, shapes, "
             "time per stage, kernels, cache outcome): EMBER_DEBUG=1's line, see "
             "ember/explain/compile_log.py.", False, "JAX_LOG_COMPILES", _parse_bool))
_define(Flag("jax_explain_cache_misses", False, "On each retrace of a jitted function, print "
             "to stderr which argument, static value, pytree structure or config value "
             "changed (ember/explain/cache_miss.py).", False, "JAX_EXPLAIN_CACHE_MISSES",
             _parse_bool))
_define(Flag("jax_debug_nans", False, "Raise at the first operation that produced a NaN.",
             True, "JAX_DEBUG_NANS", _parse_bool))
_define(Flag("ember_matmul_backend", "auto", "Float matrix products: 'auto' runs Ember's own "
             "packed GEMM (ember/backends/cpu/dot/gemm.py) where it measured at least as fast as "
             "BLAS (large plain products), else BLAS; 'ember' runs it wherever it applies; "
             "'blas' always calls the BLAS library. Part of the CPU backend's cache keys "
             "(and of jit's, as if it changed tracing: a jitted function compiles again after "
             "a change).", True, "EMBER_MATMUL_BACKEND"))
_define(Flag("jax_disable_jit", False, "Run jitted functions eagerly, op by op.", True,
             "JAX_DISABLE_JIT", _parse_bool))


class Config:
    """Attribute-style access to the flags: `config.jax_enable_x64`."""

    def __init__(self) -> None:
        values = {}
        for flag in _FLAGS.values():
            value = flag.default
            if flag.env and flag.env in os.environ:
                value = flag.parse(os.environ[flag.env])
            values[flag.name] = value
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_tracing_names", tuple(
            f.name for f in _FLAGS.values() if f.affects_tracing))
        object.__setattr__(self, "_trace_context", self._compute_trace_context())

    def update(self, name: str, value: Any) -> None:
        if name not in _FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")
        with self._lock:
            self._values[name] = value
            object.__setattr__(self, "_trace_context", self._compute_trace_context())

    def read(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"Unrecognized config option: {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value)")

    def _compute_trace_context(self) -> tuple:
        return tuple(self._values[n] for n in self._tracing_names)

    def trace_context(self) -> tuple:
        """The values of every flag that changes tracing; part of each jit cache key."""
        return self._trace_context

    def describe(self) -> str:
        return "\n".join(f"{f.name} = {self._values[f.name]!r}: {f.help}"
                         for f in _FLAGS.values())


config = Config()
