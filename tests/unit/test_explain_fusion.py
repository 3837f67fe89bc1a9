"""Why-not-fused reasons and the fusion diagrams (ember/explain/refusals.py,
diagram.py, graphviz.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ember.numpy as jnp
from ember.explain import fusion_graph
from ember.explain import graphviz as render_mod
from ember.explain.analysis import Analysis, analyze
from ember.explain.refusals import UNKNOWN, crossing_edges, format_report
from ember.hlo.parser import parse_module
from ember.hlo.printer import print_module

HAVE_DOT = render_mod.dot_program() is not None


def fusion_example(x, a, b):
    return a * jnp.sin(x) + b


def exp_two_users(x):
    y = jnp.exp(x)
    return jnp.sum(y * y), y * 2.0


def softmax(x):
    m = jnp.max(x, axis=1, keepdims=True)
    e = jnp.exp(x - m)
    return e / jnp.sum(e, axis=1, keepdims=True)


def matmul_two_users(x, w):
    y = x @ w
    return jnp.tanh(y), jnp.sum(y)


def scaled_matmul(x, w):
    return (x * 2.0) @ w


def normalize(x):
    return x / jnp.sum(x) + jnp.max(x)


f32 = np.float32
PROGRAMS = {
    "fusion_example": (fusion_example, [np.ones(1000, f32)] * 3),
    "exp_two_users": (exp_two_users, [np.ones(1000, f32)]),
    # rows of 200000 floats do not fit the row fusion's cache budget: four kernels
    "softmax_wide": (softmax, [np.ones((4, 200000), f32)]),
    "softmax_rows": (softmax, [np.ones((64, 100), f32)]),
    "matmul_two_users": (matmul_two_users, [np.ones((8, 8), f32)] * 2),
    "scaled_matmul": (scaled_matmul, [np.ones((8, 8), f32)] * 2),
    "normalize": (normalize, [np.ones(1000, f32)]),
}


@pytest.fixture(scope="module")
def analyses():
    from ember.backends import cpu

    cpu.clear_cache()  # (an in-memory hit carries the names of whichever function compiled first)
    return {k: analyze(f, *args) for k, (f, args) in PROGRAMS.items()}


def by_pair(edges):
    return {(e.producer_op, e.consumer_op): e for e in edges}


def test_analysis_fuses_exactly_as_the_backend(analyses):
    for name, a in analyses.items():
        assert print_module(a.fused) == print_module(a.executable.module), name


def test_no_crossing_edges_when_everything_fuses(analyses):
    assert crossing_edges(analyses["fusion_example"]) == []
    assert crossing_edges(analyses["softmax_rows"]) == []
    assert "nothing crosses a kernel boundary" in format_report(analyses["fusion_example"])


def test_expensive_producer_with_two_users(analyses):
    # y = exp(x) is not duplicated; its loop user y * 2 joins y's kernel (multi-output
    # fusion: the kernel writes y and y * 2), the sum of y * y reads y from memory
    a = analyses["exp_two_users"]
    edges = crossing_edges(a)
    assert len(edges) == 1
    for e in edges:
        assert e.producer_op == "exponential" and e.consumer_op == "multiply"
        assert e.reason == "expensive exponential has 2 users; not duplicated"
        assert e.bytes == 1000 * 4
        assert e.producer_kernel != e.consumer_kernel
    assert [m.kind for m in a.merges] == ["producer-consumer"]
    assert len(a.merges[0].outputs) == 2 and a.merges[0].first.startswith("exponential")
    report = format_report(a)
    assert "Multi-output fusions formed" in report
    assert f"producer-consumer: %{a.merges[0].first} + %{a.merges[0].second}" in report


def test_reductions_and_their_recombination(analyses):
    edges = crossing_edges(analyses["softmax_wide"])
    pairs = by_pair(edges)
    assert pairs[("reduce", "broadcast")].reason == "reduce is not loop-fusible"
    assert pairs[("reduce", "broadcast")].bytes == 4 * 4  # one float per row
    assert pairs[("exponential", "divide")].bytes == 4 * 200000 * 4
    report = format_report(analyses["softmax_wide"])
    assert "does not fit in 262144 bytes of cache" in report


def test_dot_with_two_users_gets_the_fusion_pass_reason(analyses):
    edges = crossing_edges(analyses["matmul_two_users"])
    assert {e.producer_op for e in edges} == {"dot"} and len(edges) == 2
    assert all(e.bytes == 8 * 8 * 4 for e in edges)


def _fused_by_hand(text: str) -> Analysis:
    """An Analysis of an already fused module and no recorded decisions: only the generic
    reasons can explain its edges."""
    m = parse_module(text)
    return Analysis("m", None, None, [], m, m, [])


def test_generic_reasons_when_the_fusion_pass_recorded_none():
    a = _fused_by_hand("""HloModule m

ENTRY %m (p0: f32[8,8], p1: f32[8,8]) -> f32[8,8] {
  %p0 = f32[8,8] parameter(0)
  %p1 = f32[8,8] parameter(1)
  %multiply.1 = f32[8,8] multiply(%p0, %p0)
  %dot.2 = f32[8,8] dot(%multiply.1, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %add.3 = f32[8,8] add(%dot.2, %p1)
}
""")
    pairs = by_pair(crossing_edges(a))
    assert pairs[("multiply", "dot")].reasons == (
        "dot runs as its own kernel: only elementwise, shape and reduce operations take "
        "producers into their kernel",)
    assert pairs[("dot", "add")].reasons == ("dot is not loop-fusible",)
    assert pairs[("dot", "add")].bytes == 256


def test_sibling_reductions_feed_the_epilogue(analyses):
    edges = crossing_edges(analyses["normalize"])
    assert {e.producer_op for e in edges} == {"reduce"}
    assert len({e.producer_kernel for e in edges}) == 1  # one multi-output kernel
    assert all(e.bytes == 4 for e in edges)


def test_every_crossing_edge_has_a_reason(analyses):
    for name, a in analyses.items():
        for e in crossing_edges(a):
            assert e.reasons and UNKNOWN not in e.reasons, (name, e)


def _clusters(dot: str) -> list[str]:
    return re.findall(r'subgraph "(cluster_[^"]+)"', dot)


def test_dot_has_before_and_after_clusters_and_one_cluster_per_kernel(analyses):
    for name, (f, args) in PROGRAMS.items():
        dot = fusion_graph(f, *args)
        exe = analyses[name].executable
        clusters = _clusters(dot)
        assert clusters[:1] == ["cluster_before"] and "cluster_after" in clusters
        kernels = [c for c in clusters if c.startswith("cluster_a:")]
        assert kernels == [f"cluster_a:{k}" for k in exe.kernel_names], name
        assert dot.startswith("digraph") and dot.rstrip().endswith("}")


def test_dot_of_the_fusion_example():
    dot = fusion_graph(fusion_example, *[np.ones(1000, f32)] * 3)
    # hand count: sin 4+4 kB, multiply 8+4 kB, add 8+4 kB; fused: 3 reads + 1 write
    assert 'label="before fusion: 3 kernels, 32 kB moved"' in dot
    assert 'label="after fusion: 1 kernel, 16 kB moved"' in dot
    after = dot.split('subgraph "cluster_after"')[1]
    # the cluster ends at a line holding only "}" (labels may hold braces: f32[1000]{0})
    kernel = re.split(r"\n\s*}\s*\n", after.split('subgraph "cluster_a:fusion"')[1])[0]
    # the fused operations keep the names they had before fusion
    for op in ("sine.0", "multiply.1", "add.2"):
        assert f'"a:fusion/{op}"' in kernel
        assert f'"b:{op}"' in dot
    # arrays in memory are labelled with their size
    assert '"a:Arg_0" -> "a:fusion/sine.0" [label="4 kB"' in dot
    assert '"b:sine.0" -> "b:multiply.1" [label="4 kB"' in dot
    # values in registers are not
    assert re.search(r'"a:fusion/sine\.0" -> "a:fusion/multiply\.1" \[color', dot)


def test_dot_labels_crossing_edges_with_the_reason():
    dot = fusion_graph(exp_two_users, np.ones(1000, f32))
    assert dot.count("expensive exponential has 2 users;\\nnot duplicated") == 1


@pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_render_with_graphviz(tmp_path, fmt):
    dot = fusion_graph(softmax, np.ones((4, 200000), f32))
    path = dot.render(str(tmp_path / f"softmax.{fmt}"))
    data = open(path, "rb").read()
    assert data.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in data


def test_render_without_graphviz_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(render_mod, "dot_program", lambda: None)
    dot = fusion_graph(fusion_example, *[np.ones(10, f32)] * 3)
    with pytest.raises(render_mod.GraphvizMissing, match="apt-get install graphviz"):
        dot.render(str(tmp_path / "f.svg"))
    assert (tmp_path / "f.dot").read_text() == dot


def test_package_functions_are_not_shadowed_by_submodules():
    import ember.explain as ex
    from ember.explain import diagram, graphviz, hardware, refusals, report, roofline  # noqa: F401

    for name in ("fusion_graph", "render", "why_not_fused", "profile", "machine", "analyze",
                 "story", "explain_cache_miss"):
        assert callable(getattr(ex, name)) and not isinstance(getattr(ex, name), type(ex))
    edges = ex.why_not_fused(exp_two_users, np.ones(10, f32))
    assert [e.producer_op for e in edges] == ["exponential"]
