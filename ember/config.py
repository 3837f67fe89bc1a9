"""Every Ember flag in one place: the table `config.flags()` lists, and the reads of it.

Input: environment variables (`JAX_ENABLE_X64=1`, `EMBER_DUMP_TO=dir`, ...) and
`config.update(name, value)` calls. Output: `config.<name>` reads, `config.flags()` (the
table: name, type, default, environment variable, doc, affects_tracing, live) and
`config.describe()` (the table with current values, as text).

Two kinds of flag, chosen per row by `live`:
- Options (`live=False`): the variable is read once, when this module is imported; after
  that only `config.update` changes the value. Flags that change what a trace produces are
  options, because a jit cache key must see every change (below).
- Live flags (`live=True`): the variable is read again at every `config.<name>` read, and
  `config.update` refuses them (set the variable instead). They are the debugging and
  backend knobs that tests and users change between compilations (EMBER_DUMP_TO,
  EMBER_DISABLE_PASSES, EMBER_CACHE_DIR, EMBER_ENABLE_CHECKS, ...) and the ones a
  subsystem reads once when it starts (EMBER_NUM_THREADS when the CPU backend loads): the
  flag is read when its user asks, exactly as the user's own `os.environ.get` used to be.

Invariants: no module outside this one reads an `EMBER_*` or `JAX_*` variable
(tests/unit/test_config_flags.py checks the sources, and that README.md names exactly the
table's variables). Flags that change what a trace produces (dtype canonicalization, unsafe
rewrites) are options with `affects_tracing=True`; `trace_context()` returns their current
values and is part of every jit cache key, so flipping one never serves a stale trace. A
live flag never affects tracing (its value cannot be part of a precomputed key); the compile
caches that depend on one put its value in their own keys (EMBER_DISABLE_PASSES).
Cost: importing this module imports nothing beyond the standard library modules below. An
option read is an instance attribute lookup (~30 ns; an eager `x + 1` reads options 6 times,
dtype canonicalization mostly). A live read (~0.2 us) costs one dict lookup in the
environment's own table plus a Python call, less than the `os.environ.get` it replaced
(~0.25 us for a set variable, ~0.7 us for an unset one, which raises and catches a KeyError
inside `Mapping.get`); the parsed value is remembered for the text it came from, so a read
parses only after the variable changed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Flag:
    """One row of the table. `type` is the value's type as an annotation reads; `parse`
    turns the variable's text into a value (it may raise ValueError for a bad value, which a
    live read passes on to its caller)."""

    name: str
    type: str
    default: Any
    env: str | None
    doc: str
    affects_tracing: bool = False
    live: bool = False
    parse: Callable[[str], Any] = str
    check: Callable[[Any], Any] | None = None  # raises ValueError for a value update refuses


def _parse_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def _parse_level(text: str) -> int:
    """EMBER_DEBUG's level: 0 when empty or not a number (a typo never stops a program)."""
    try:
        return int(text or 0)
    except ValueError:
        return 0


# (ember.backends.NAMES; config imports no backend)
_BACKENDS = ("cpu", "interpreter", "xla-cpu", "tpu")


def _parse_backend(text: str) -> str:
    if text not in _BACKENDS:
        raise ValueError(f"EMBER_BACKEND must be one of {', '.join(map(repr, _BACKENDS))}, "
                         f"got {text!r}")
    return text


_TPU_KERNELS = ("auto", "ember", "xla")


def _parse_tpu_kernels(text: str) -> str:
    if text not in _TPU_KERNELS:
        raise ValueError(f"EMBER_TPU_KERNELS must be one of "
                         f"{', '.join(map(repr, _TPU_KERNELS))}, got {text!r}")
    return text


def _parse_names(text: str) -> frozenset[str]:
    """`a, b,,c` -> {a, b, c}: whitespace around a name stripped, empty items dropped."""
    return frozenset(s.strip() for s in text.split(",") if s.strip())


def _parse_count(text: str) -> int | None:
    return int(text) if text else None


def _check_positive(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"expected a positive number of seconds, got {value!r}")


def _parse_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"EMBER_COLLECTIVE_TIMEOUT_S must be a positive number of seconds, "
                         f"got {text!r}")
    return value


_FLAGS: dict[str, Flag] = {}


def _define(flag: Flag) -> None:
    assert flag.name not in _FLAGS, flag.name
    # (a live value cannot be part of trace_context(), which is computed on update only)
    assert not (flag.live and flag.affects_tracing), flag.name
    assert flag.env is not None or not flag.live, flag.name
    _FLAGS[flag.name] = flag


# -- options: read at import, changed by config.update ----------------------------------------

def _parse_int(text: str) -> int:
    return int(text)


# Whether the device list has been built (ember/device_state.py installs the probe: config
# imports nothing of Ember's); the number of CPU devices may change only before that.
_devices_started: list[Callable[[], bool]] = [lambda: False]


def set_devices_started_probe(probe: Callable[[], bool]) -> None:
    """Install the function that says whether the devices have been created."""
    _devices_started[0] = probe


def _check_num_cpu_devices(value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"jax_num_cpu_devices must be an int, got {value!r}")
    if _devices_started[0]() and value != config.jax_num_cpu_devices:
        raise RuntimeError(
            "jax_num_cpu_devices config should be updated before backends are initialized "
            "i.e. before any JAX operation is executed. You should initialize this config "
            "immediately after `import jax`.")


_define(Flag("jax_enable_x64", "bool", False, "JAX_ENABLE_X64", "64-bit types (int64, "
             "uint64, float64) instead of 32-bit defaults.", True, parse=_parse_bool))
_define(Flag("jax_num_cpu_devices", "int", -1, "JAX_NUM_CPU_DEVICES", "Number of CPU "
             "devices in this process (-1: one). Set it before the devices are first used "
             "(ember.devices(), a mesh, a sharding): afterwards a different value raises.",
             parse=_parse_int, check=_check_num_cpu_devices))
_define(Flag("ember_unsafe_math", "bool", False, "EMBER_UNSAFE_MATH", "Allow rewrites that "
             "are not exact under IEEE-754 (reassociation, x*0 => 0 for floats, x**0.5 => "
             "sqrt(x)).", True, parse=_parse_bool))
_define(Flag("jax_numpy_rank_promotion", "str", "allow", None, "'allow', 'warn' or 'raise' "
             "on implicit rank promotion in ember.numpy broadcasting.", True))
_define(Flag("jax_log_compiles", "bool", False, "JAX_LOG_COMPILES", "Log each compilation "
             "to stderr (function, shapes, time per stage, kernels, cache outcome): "
             "EMBER_DEBUG=1's line, see ember/explain/compile_log.py.", parse=_parse_bool))
_define(Flag("jax_explain_cache_misses", "bool", False, "JAX_EXPLAIN_CACHE_MISSES", "On each "
             "retrace of a jitted function, print to stderr which argument, static value, "
             "pytree structure or config value changed (ember/explain/cache_miss.py).",
             parse=_parse_bool))
_define(Flag("jax_debug_nans", "bool", False, "JAX_DEBUG_NANS", "Raise at the first "
             "operation that produced a NaN.", True, parse=_parse_bool))
_define(Flag("ember_collective_timeout_s", "float", 300.0, "EMBER_COLLECTIVE_TIMEOUT_S",
             "Seconds a collective between processes (ember.distributed, over MPI) may wait "
             "for the others before it raises CollectiveTimeoutError naming the processes that "
             "did not arrive (ember/distributed/deadline.py).", parse=_parse_seconds,
             check=_check_positive))
_define(Flag("ember_matmul_backend", "str", "auto", "EMBER_MATMUL_BACKEND", "Float matrix "
             "products: 'auto' runs Ember's own packed GEMM (ember/backends/cpu/dot/gemm.py) where "
             "it measured at least as fast as BLAS (large plain products), else BLAS; 'ember' "
             "runs it wherever it applies; 'blas' always calls the BLAS library. Part of the "
             "CPU backend's cache keys (and of jit's, as if it changed tracing: a jitted "
             "function compiles again after a change).", True))
# JAX's names: the legacy precisions, then the dot algorithm presets (which Ember's dots
# refuse when they apply, ember/lax/_linalg.py: there is no DotAlgorithmPreset here).
MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
    "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
    "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
    "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")


def _check_matmul_precision(value: Any) -> None:
    if value is not None and value not in MATMUL_PRECISIONS:
        raise ValueError(f"new enum value must be None or in {list(MATMUL_PRECISIONS)}, got "
                         f"{value} of type {type(value)}.")


def _parse_matmul_precision(text: str) -> str | None:
    value = text or None
    _check_matmul_precision(value)
    return value


_define(Flag("jax_default_matmul_precision", "str | None", None,
             "JAX_DEFAULT_MATMUL_PRECISION", "The precision of products and convolutions "
             "whose `precision` is None ('default', 'high', 'highest', 'bfloat16', "
             "'tensorfloat32', 'float32'; JAX's algorithm preset names are accepted here and "
             "refused by the product): recorded in the jaxpr as JAX does; the CPU computes "
             "in full precision whatever it says.", True, parse=_parse_matmul_precision,
             check=_check_matmul_precision))
TRACEBACK_FILTERING = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto")


def _check_traceback_filtering(value: Any) -> None:
    if value not in TRACEBACK_FILTERING:
        raise ValueError(f"new enum value must be in {list(TRACEBACK_FILTERING)}, got {value} "
                         f"of type {type(value)}.")


def _parse_traceback_filtering(text: str) -> str:
    _check_traceback_filtering(text)
    return text


_define(Flag("jax_traceback_filtering", "str", "auto", "JAX_TRACEBACK_FILTERING", "How an "
             "error raised under jit, make_jaxpr, eval_shape (...) hides Ember's frames "
             "(ember/core/traceback_util.py): 'off' (all frames), 'quiet_remove_frames' (user "
             "frames and a note naming this flag), 'remove_frames' (also the full traceback "
             "as the cause), 'tracebackhide' (marks Ember's frames for IPython/pytest), "
             "'auto' (tracebackhide under IPython, else quiet_remove_frames).",
             parse=_parse_traceback_filtering, check=_check_traceback_filtering))
_define(Flag("jax_disable_jit", "bool", False, "JAX_DISABLE_JIT", "Run jitted functions "
             "eagerly, op by op.", True, parse=_parse_bool))

_PLATFORMS = ("cpu", "tpu")


def _check_platforms(value: Any) -> None:
    if value is None:
        return
    first = str(value).split(",")[0].strip()
    if not isinstance(value, str) or first not in _PLATFORMS:
        raise ValueError(f"jax_platforms (EMBER_PLATFORM) must name one of "
                         f"{', '.join(map(repr, _PLATFORMS))} first, got {value!r}")


def _parse_platforms(text: str) -> str | None:
    value = text.strip() or None
    _check_platforms(value)
    return value


_define(Flag("jax_platforms", "str | None", None, "EMBER_PLATFORM", "The platform jit "
             "compiles for when neither jit(backend=/device=) nor a device argument says: "
             "'cpu' or unset (EMBER_BACKEND's backend) or 'tpu' (the tpu backend; jit's "
             "results stay on the chip, ember.devices() lists the chip). A comma-separated "
             "list, as JAX's, is read by its first entry.", parse=_parse_platforms,
             check=_check_platforms))

# -- live flags: read from the environment at each read ---------------------------------------

_define(Flag("ember_backend", "str", "cpu", "EMBER_BACKEND", "jit's backend: 'cpu' (LLVM "
             "code for this machine), 'interpreter' (the optimized HLO run with NumPy: the "
             "same bits except the summation order of float sums and dots), 'xla-cpu' (the "
             "optimized HLO compiled by XLA through jaxlib: pip install 'ember[xla]'; "
             "ember/backends/xla_cpu/) or 'tpu' (the TPU compiler and Ember's Mosaic "
             "kernels, through jaxlib and libtpu; ember/backends/tpu/); anything else "
             "raises ValueError at the next compilation.", live=True, parse=_parse_backend))
_define(Flag("ember_tpu_kernels", "str", "auto", "EMBER_TPU_KERNELS", "Which fusions the tpu "
             "backend runs as Ember's own Mosaic kernels: 'auto' (where Ember's kernel was "
             "measured faster than XLA's fusions: row reductions such as softmax and "
             "layernorm), 'ember' (every fusion Ember has a kernel for) or 'xla' (none: the "
             "whole module to the TPU compiler); anything else raises ValueError at the "
             "next TPU compilation.", live=True, parse=_parse_tpu_kernels))
_define(Flag("ember_debug", "int", 0, "EMBER_DEBUG", "Compile log level on stderr, 0-4 "
             "(ember/explain/compile_log.py); 0 when not a number.", live=True,
             parse=_parse_level))
_define(Flag("ember_dump_to", "str | None", None, "EMBER_DUMP_TO", "Directory that receives "
             "every stage of each compilation as files (ember/passes/dump.py); while set, "
             "jit bypasses the compiled-code caches. Empty: unset.", live=True,
             parse=lambda text: text or None))
_define(Flag("ember_disable_passes", "frozenset[str]", frozenset(), "EMBER_DISABLE_PASSES",
             "Comma-separated HLO pass names to skip (part of every compile cache key).",
             live=True, parse=_parse_names))
_define(Flag("ember_enable_checks", "bool", False, "EMBER_ENABLE_CHECKS", "'1': the verifier "
             "before the pipeline and after every pass, a text round trip and a before/after "
             "evaluation of each compiled module (the test suite runs with it); any other "
             "text: off.", live=True, parse=lambda text: text == "1"))
_define(Flag("ember_cache_dir", "str | None", None, "EMBER_CACHE_DIR", "Directory of the "
             "compiled-code disk cache; None: $XDG_CACHE_HOME/ember or ~/.cache/ember; 'off', "
             "'0' or empty: no disk cache (ember/backends/cpu/jit/disk_cache.py; the XLA "
             "backends' executables in its xla/ folder: ember/backends/xla/disk_cache.py).",
             live=True))
_define(Flag("ember_num_threads", "int | None", None, "EMBER_NUM_THREADS", "Threads large "
             "kernels use, read when the CPU backend loads (then set_num_threads); None: the "
             "CPUs this process may run on.", live=True, parse=_parse_count))
_define(Flag("ember_pool_spin_us", "float", 50.0, "EMBER_POOL_SPIN_US", "Microseconds an "
             "idle thread-pool worker polls before it sleeps, read when the pool is built "
             "(ember/backends/cpu/runtime/pool.py; 50 when not a number).", live=True, parse=float))
_define(Flag("ember_allocator_bytes", "int", 1 << 30, "EMBER_ALLOCATOR_BYTES", "Bytes of "
             "free blocks the CPU backend's output allocator keeps for reuse, read when it is "
             "created (ember/backends/cpu/runtime/allocator.py).", live=True, parse=int))
_define(Flag("ember_jit_cache_size", "int", 512, "EMBER_JIT_CACHE_SIZE", "Signatures (shapes, "
             "dtypes, static arguments) all jitted functions together keep traced and "
             "compiled; beyond it the least recently used is dropped and its native code "
             "freed (ember/live_signatures.py).", live=True, parse=int))
_define(Flag("ember_blas", "str", "auto", "EMBER_BLAS", "Where float products find BLAS, "
             "read when the first product is linked: 'auto' (NumPy's, else SciPy's), "
             "'numpy', 'scipy', or 'none'/'off' (Ember's loops; "
             "ember/backends/cpu/dot/blas_find.py).", live=True,
             parse=lambda text: text.strip().lower() or "auto"))
_define(Flag("ember_malloc_tuning", "bool", True, "EMBER_MALLOC_TUNING", "Whether `import "
             "ember` sets glibc's malloc thresholds (ember/host_malloc.py); '0': leave the C "
             "library's settings alone.", live=True, parse=lambda text: text != "0"))


# The environment's own table when this Python exposes it (CPython and PyPy: os._Environ
# keeps encoded keys and values in `_data`, updated by every os.environ write, which is
# also the only kind of write os.environ.get sees). Looking a key up there skips the four
# Python-level calls of os.environ.get, and the KeyError it raises and catches when the
# variable is unset; elsewhere live reads go through os.environ.get itself.
_ENV_DATA = getattr(os.environ, "_data", None)
if (isinstance(_ENV_DATA, dict) and callable(getattr(os.environ, "encodekey", None))
        and callable(getattr(os.environ, "decodevalue", None))):
    _env_get: Callable[[Any], Any] = _ENV_DATA.get
    _env_key: Callable[[str], Any] = os.environ.encodekey
    _env_text: Callable[[Any], str] = os.environ.decodevalue
else:  # pragma: no cover - other Pythons
    _env_get, _env_key, _env_text = os.environ.get, str, str


class _LiveValue:
    """A live flag's attribute on Config: each read looks its variable up; the value parsed
    from the last text seen is kept as (raw text, value), replaced whole so that
    concurrent readers never pair one text with another's value."""

    __slots__ = ("flag", "key", "memo")

    def __init__(self, flag: Flag) -> None:
        self.flag = flag
        self.key = _env_key(flag.env)
        self.memo: tuple[Any, Any] = (None, flag.default)  # unset -> the default

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        raw = _env_get(self.key)
        memo = self.memo
        if raw == memo[0]:
            return memo[1]
        value = self.flag.default if raw is None else self.flag.parse(_env_text(raw))
        self.memo = (raw, value)
        return value


class Config:
    """Attribute-style access to the flags: `config.jax_enable_x64`, `config.ember_dump_to`."""

    def __init__(self) -> None:
        values = {}
        for flag in _FLAGS.values():
            if flag.live:
                continue
            value = flag.default
            if flag.env and flag.env in os.environ:
                value = flag.parse(os.environ[flag.env])
            values[flag.name] = value
        object.__setattr__(self, "_values", values)
        for name, value in values.items():
            object.__setattr__(self, name, value)  # (see __getattr__)
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_tracing_names", tuple(
            f.name for f in _FLAGS.values() if f.affects_tracing))
        object.__setattr__(self, "_trace_context", self._compute_trace_context())

    def update(self, name: str, value: Any) -> None:
        flag = _FLAGS.get(name)
        if flag is None:
            raise AttributeError(f"Unrecognized config option: {name}")
        if flag.live:
            raise ValueError(f"{name} is read from the environment at each use: set "
                             f"{flag.env} instead of calling config.update")
        if flag.check is not None:
            flag.check(value)
        with self._lock:
            self._values[name] = value
            object.__setattr__(self, name, value)
            object.__setattr__(self, "_trace_context", self._compute_trace_context())

    def read(self, name: str) -> Any:
        if name not in _FLAGS:
            raise AttributeError(f"Unrecognized config option: {name}")
        return getattr(self, name)

    def __getattr__(self, name: str) -> Any:
        # (only unknown names get here: an option is also an instance attribute, found by
        # the ordinary lookup in ~20 ns, where this fallback costs ~1 us, a cost every
        # eager op's dtype canonicalization paid; a live flag is a class attribute)
        raise AttributeError(f"Unrecognized config option: {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value)")

    def _compute_trace_context(self) -> tuple:
        return tuple(self._values[n] for n in self._tracing_names)

    def trace_context(self) -> tuple:
        """The values of every flag that changes tracing; part of each jit cache key."""
        return self._trace_context

    def flags(self) -> tuple[Flag, ...]:
        """The table, in definition order (options first, then live flags)."""
        return tuple(_FLAGS.values())

    def describe(self) -> str:
        """One line per flag: name, type, current value, variable, kind, doc."""
        lines = []
        for f in _FLAGS.values():
            source = (f"env {f.env}" if f.env else "no env") + (
                ", read at each use" if f.live else ", read at import; config.update")
            lines.append(f"{f.name}: {f.type} = {getattr(self, f.name)!r} ({source}): {f.doc}")
        return "\n".join(lines)


for _flag in _FLAGS.values():
    if _flag.live:
        setattr(Config, _flag.name, _LiveValue(_flag))
del _flag

config = Config()


def child_environment(**overrides: str) -> dict[str, str]:
    """The environment for a child process (ember.testing's runner, tests): this process's
    variables with `overrides` set, e.g. `child_environment(EMBER_CACHE_DIR="off")`. Here,
    so that every touch of the environment stays in this module."""
    return dict(os.environ, **overrides)
