"""compile(module) -> Executable: passes, schedule, LLVM emission, JIT, in-memory cache.

Input: an HLO Module (not modified: a clone is optimized). Output: an `Executable`.
The cache key is the canonical HLO text of the input (constants printed in full), the
pass options, and the target (triple, CPU name, features); the cache is an LRU bounded by
`CACHE_SIZE` entries whose evicted LLVM modules are removed from the JIT engine.
`STATS` counts compiles and cache hits.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

from ember.backends.cpu import llvm_target
from ember.backends.cpu.emitter import ModuleEmitter
from ember.backends.cpu.executable import Executable
from ember.backends.cpu.inline import inline_calls
from ember.backends.cpu.schedule import build_schedule
from ember.backends.cpu.support import check_supported
from ember.hlo.ir import Module
from ember.hlo.printer import canonical_text
from ember.passes.base import PassPipeline

CACHE_SIZE = 256
STATS: dict[str, int] = {"compiles": 0, "cache_hits": 0, "evictions": 0}
_CACHE: OrderedDict[str, Executable] = OrderedDict()
_LOCK = threading.Lock()
_IDS = itertools.count()


def pipeline(unsafe_math: bool = False) -> PassPipeline:
    """Hardware-independent simplification, then fusion."""
    from ember.passes import hardware_independent_pipeline
    from ember.passes.fusion import Fusion

    return PassPipeline("cpu", [hardware_independent_pipeline(unsafe_math), Fusion()])


def clear_cache() -> None:
    with _LOCK:
        for exe in _CACHE.values():
            llvm_target.remove_from_engine(exe._llvm_module)
        _CACHE.clear()


def compile(module: Module, *, unsafe_math: bool = False, run_passes: bool = True,
            use_cache: bool = True) -> Executable:
    """Compile `module` for the host CPU (raises UnsupportedOnCpu for modules the
    interpreter must run)."""
    check_supported(module)
    target = llvm_target.target()
    key = f"{target.key}|unsafe={unsafe_math}|passes={run_passes}\n{canonical_text(module)}"
    if use_cache:
        with _LOCK:
            hit = _CACHE.get(key)
            if hit is not None:
                _CACHE.move_to_end(key)
                STATS["cache_hits"] += 1
                return hit
    exe = _compile_uncached(module, unsafe_math, run_passes)
    if use_cache:
        with _LOCK:
            _CACHE[key] = exe
            while len(_CACHE) > CACHE_SIZE:
                _, old = _CACHE.popitem(last=False)
                llvm_target.remove_from_engine(old._llvm_module)
                STATS["evictions"] += 1
    return exe


def _compile_uncached(module: Module, unsafe_math: bool, run_passes: bool) -> Executable:
    m = module.clone()
    inline_calls(m)
    if run_passes:
        pipeline(unsafe_math).run(m)
    sched = build_schedule(m)
    prefix = f"ember{next(_IDS)}_"
    emitter = ModuleEmitter(m, sched, prefix)
    text = emitter.emit()
    llmod = llvm_target.parse_and_verify(text)
    llvm_target.optimize(llmod)
    optimized = str(llmod)
    address = llvm_target.add_to_engine(llmod, emitter.entry_name)
    STATS["compiles"] += 1
    return Executable(m, sched, address, emitter.kernel_names, optimized, llmod, text)
