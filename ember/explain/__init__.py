"""Seeing what the compiler did with a function.

Public API (each loads its module on first use, so `import ember` stays cheap):
  fusion_graph(f, *args) -> DotGraph   the program before and after fusion, as Graphviz
                                       DOT text; `.render("f.svg")` draws it (diagram.py)
  render(dot_text, path, format=None)  draw DOT text with Graphviz's `dot` (graphviz.py)
  why_not_fused(f, *args) -> [CrossingEdge]   every array that goes through memory between
                                       two kernels, with the fusion pass's reason
  profile(f, *args) -> Profile         per-kernel time, bytes, flops, GB/s and GFLOP/s against
                                       this machine's measured roofline (roofline.py)
  machine() -> Machine                 measured memory bandwidth and peak compute (cached)
  analyze(f, *args) -> Analysis        the whole pipeline with every intermediate kept
  story(f, *args, out_dir=...)         the full report `python -m ember explain` prints
  explain_cache_miss(fn, key, keys)    why a jitted function traced again (cache_miss.py)
  collectives(f, *args) -> CollectivesReport   a jit over a mesh (or a shard_map): each
                                       collective of its per-device module with the bytes
                                       each device sends and receives, and the
                                       partitioner's refusals
Modules: analysis, cache_miss, compile_log, diagram (DOT), graphviz (drawing), hardware
(the machine's ceilings), kernels, loading (the CLI's file:function and argument types),
partitioning (collectives), report (the story), refusals (why not fused), roofline
(profile).
Also here: observers.py (the subscriptions to ember.compile_events that ember/__init__.py
installs), compile_log.py (EMBER_DEBUG levels and EMBER_DUMP_TO file sets, each a watch of
one compilation) and kernels.py (per-kernel HLO, source lines, cost, LLVM IR, assembly;
what `Compiled.kernels()`, `.llvm_ir()` and `.asm()` return).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["analyze", "collectives", "explain_cache_miss", "fusion_graph", "machine",
           "profile", "render", "story", "why_not_fused"]


def fusion_graph(f: Callable, *args: Any, **kwargs: Any) -> Any:
    from ember.explain.diagram import fusion_graph as _fusion_graph

    return _fusion_graph(f, *args, **kwargs)


def render(dot_text: str, path: str, format: str | None = None) -> str:
    from ember.explain.graphviz import render as _render

    return _render(dot_text, path, format)


def why_not_fused(f: Callable, *args: Any, **kwargs: Any) -> list:
    from ember.explain.analysis import analyze as _analyze
    from ember.explain.refusals import crossing_edges

    return crossing_edges(_analyze(f, *args, compile=False, **kwargs))


def profile(f: Callable, *args: Any, **kwargs: Any) -> Any:
    from ember.explain.roofline import profile as _profile

    return _profile(f, *args, **kwargs)


def machine(**kwargs: Any) -> Any:
    from ember.explain.hardware import machine as _machine

    return _machine(**kwargs)


def analyze(f: Callable, *args: Any, **kwargs: Any) -> Any:
    from ember.explain.analysis import analyze as _analyze

    return _analyze(f, *args, **kwargs)


def story(f: Callable, *args: Any, out_dir: str = "ember_explain", **kwargs: Any) -> Any:
    from ember.explain.report import tell

    return tell(f, *args, out_dir=out_dir, **kwargs)


def collectives(f: Callable, *args: Any, **kwargs: Any) -> Any:
    from ember.explain.partitioning import collectives as _collectives

    return _collectives(f, *args, **kwargs)


def explain_cache_miss(fn: Any, key: tuple, cached_keys: Any) -> str:
    from ember.explain.cache_miss import explain_cache_miss as _explain

    return _explain(fn, key, cached_keys)
