"""shard_map over 4 CPU devices in this process: every collective (psum, pmean, pmax, pmin,
all_gather, psum_scatter, ppermute, all_to_all, axis_index) against JAX 0.10.2's shard_map
over 4 CPU devices (one JAX subprocess computes the whole table, values and gradients),
eagerly (the runtime: the first call per-device stages evaluated with NumPy, the second
the body compiled as one per-device module whose collectives are HLO collectives, met by
copies in memory) and under jit (one program, the mesh axes as named vmaps). Inputs are
small integers in float32, so every order of summation gives the same bits and the
comparisons are exact."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember import lax
from ember.sharding import NamedSharding, P

M22 = [[2, 2], ["x", "y"]]
M4 = [[4], ["i"]]
# (name, mesh, in_specs, out_specs, body, input shapes, eager only)
CASES = [
    ("psum", M22, "P('x', 'y')", "P(None, 'y')", "lambda a: L.psum(a, 'x')", [[8, 6]], 0),
    ("psum2", M22, "P('x', 'y')", "P()", "lambda a: L.psum(a, ('x', 'y'))", [[4, 2]], 0),
    ("pmean", M22, "P('x', None)", "P(None, None)", "lambda a: L.pmean(a, 'x') * 2",
     [[4, 3]], 0),
    ("pmax_pmin", M22, "P('y', 'x')", "(P(None, 'x'), P('y', None))",
     "lambda a: (L.pmax(a, 'y'), L.pmin(a, 'x'))", [[6, 4]], 0),
    ("all_gather", M4, "P('i')", "P()", "lambda a: L.all_gather(a, 'i')", [[8, 3]], 0),
    ("all_gather_tiled", M22, "P('x', 'y')", "P('x', None)",
     "lambda a: L.all_gather(a, 'y', axis=1, tiled=True)", [[4, 6]], 0),
    ("psum_scatter_tiled", M4, "P()", "P('i')",
     "lambda a: L.psum_scatter(a, 'i', tiled=True)", [[8, 2]], 0),
    ("psum_scatter", M4, "P('i')", "P('i')",
     "lambda a: L.psum_scatter(a, 'i', scatter_dimension=1)", [[8, 4]], 0),
    ("ppermute_ring", M4, "P('i')", "P('i')",
     "lambda a: L.ppermute(a, 'i', [(0, 1), (1, 2), (2, 3), (3, 0)])", [[8, 5]], 0),
    ("ppermute_partial", M22, "P('x', 'y')", "P('x', 'y')",
     "lambda a: L.ppermute(a, 'y', [(1, 0)])", [[4, 4]], 0),
    ("ppermute_shift", M4, "P('i')", "P('i')",
     "lambda a: L.ppermute(a, 'i', [(0, 1), (1, 2), (2, 3)])", [[8, 3]], 0),
    ("ppermute_perm", M4, "P(None, 'i')", "P(None, 'i')",
     "lambda a: L.ppermute(a * 2, 'i', [(0, 2), (2, 1), (1, 3), (3, 0)]) + a", [[3, 8]], 0),
    ("ppermute_x", M22, "P('x', 'y')", "P('x', 'y')",
     "lambda a: L.ppermute(a, 'x', [(0, 1), (1, 0)]) - L.ppermute(a, 'y', [(0, 1)])",
     [[4, 6]], 0),
    ("ppermute_two_axes", M22, "P(('x', 'y'))", "P(('x', 'y'))",
     "lambda a: L.ppermute(a, ('x', 'y'), [(0, 3), (3, 1), (1, 2), (2, 0)])", [[8]], 1),
    ("all_to_all_tiled", M4, "P('i')", "P('i')",
     "lambda a: L.all_to_all(a, 'i', 0, 1, tiled=True)", [[16, 4]], 0),
    ("all_to_all", M22, "P(None, 'y')", "P(None, 'y')",
     "lambda a: L.all_to_all(a, 'y', 0, 1)", [[2, 6]], 0),
    ("axis_index", M22, "P('x', 'y')", "P('x', 'y')",
     "lambda a: a * L.axis_index('x') + L.axis_index(('x', 'y'))", [[4, 4]], 0),
    ("two_args_tree", M22, "(P('x'), P())", "{'s': P(), 'g': P('x')}",
     "lambda a, b: {'s': L.psum(a @ b, 'x'), 'g': a + b[0]}", [[4, 3], [3, 3]], 0),
    ("jit_inside", M4, "P('i')", "P('i')",
     "lambda a: jax.jit(lambda u: L.psum(u, 'i') - u)(a) * 3", [[8, 2]], 0),
    ("scalar", M4, "P()", "P()", "lambda a: L.psum(a, 'i') * L.pmax(a, 'i')", [[]], 0),
    ("empty", M4, "P('i')", "P('i')", "lambda a: L.psum(a, 'i') + a", [[0, 3]], 0),
    ("int32", M22, "P('x', 'y')", "(P(None, 'y'), P('x', 'y'))",
     "lambda a: (L.psum(a.astype('int32'), 'x'), L.all_to_all(a.astype('int32'), 'y', 0, 1, "
     "tiled=True))", [[4, 6]], 0),
    ("loop_ring", M4, "P('i')", "P('i')",
     "lambda a: L.fori_loop(0, 3, lambda k, c: L.ppermute(c, 'i', "
     "[(0, 1), (1, 2), (2, 3), (3, 0)]) + c, a)", [[4, 2]], 0),
]
# check_vma: (body, out_specs) over a mesh of 4 along "i", argument split by P("i")
CHECKS = [
    ("lambda a: L.psum(a, 'i')", "P()"),
    ("lambda a: L.pmax(a * 2, 'i') + 1", "P()"),
    ("lambda a: a", "P()"),
    ("lambda a: a * 0", "P()"),
    ("lambda a: L.all_gather(a, 'i')", "P()"),
    ("lambda a: (L.psum(a, 'i'), a)", "(P(), P('i'))"),
    ("lambda a: (L.psum(a, 'i'), a)", "P()"),
    ("lambda a: jax.jit(lambda u: L.psum(u, 'i'))(a)", "P()"),
    ("lambda a: L.axis_index('i') + 0 * a", "P(None)"),
    ("lambda a: L.ppermute(L.psum(a, 'i'), 'i', [(0, 1), (1, 0)])", "P()"),
]
GRAD_CASES = ["psum", "pmean", "all_gather_tiled", "psum_scatter_tiled", "ppermute_ring",
              "ppermute_shift", "ppermute_perm", "ppermute_x", "all_to_all_tiled"]

SCRIPT = """
import json, sys
import numpy as np
import jax
jax.config.update("jax_num_cpu_devices", 4)
from jax import lax as L
from jax.sharding import PartitionSpec as P
cases, grads, out = json.loads(sys.argv[1]), set(json.loads(sys.argv[2])), sys.argv[3]
CHECKS = json.loads(sys.argv[4])
res = {}
for name, (mshape, names), ins, outs, body, shapes, _ in cases:
    mesh = jax.make_mesh(tuple(mshape), tuple(names),
                         axis_types=(jax.sharding.AxisType.Auto,) * len(names))
    f = jax.shard_map(eval(body), mesh=mesh, in_specs=eval(ins), out_specs=eval(outs),
                      check_vma=False)
    args = [(np.arange(int(np.prod(s))).reshape(s) % 7 - 3).astype(np.float32) for s in shapes]
    for k, v in enumerate(jax.tree.leaves(f(*args))):
        res[f"{name}/out{k}"] = np.asarray(v)
    if name in grads:
        loss = lambda *a: sum((v * (1 + np.arange(v.size).reshape(v.shape) % 5)).sum()
                              for v in jax.tree.leaves(f(*a)))
        for k, g in enumerate(jax.grad(loss, argnums=tuple(range(len(args))))(*args)):
            res[f"{name}/grad{k}"] = np.asarray(g)
for k, (body, outs) in enumerate(CHECKS):
    mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    f = jax.shard_map(eval(body), mesh=mesh, in_specs=P("i"), out_specs=eval(outs))
    try:
        f(np.ones((4, 2), np.float32))
        res[f"check{k}"] = np.array(0)
    except ValueError as e:
        res[f"check{k}"] = np.array(1 if "can't be statically inferred" in str(e) else 2)
np.savez(out, **res)
"""


@pytest.fixture(scope="module")
def jax_results(tmp_path_factory):
    path = tmp_path_factory.mktemp("jax") / "results.npz"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(CASES),
                           json.dumps(GRAD_CASES), str(path), json.dumps(CHECKS)],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(np.load(path))


def _make(case):
    name, (mshape, names), ins, outs, body, shapes, eager_only = case
    mesh = ember.make_mesh(tuple(mshape), tuple(names))
    scope = {"L": lax, "P": P, "jax": ember}
    f = ember.shard_map(eval(body, scope), mesh=mesh, in_specs=eval(ins, scope),
                        out_specs=eval(outs, scope), check_vma=False)
    args = [(np.arange(int(np.prod(s))).reshape(s) % 7 - 3).astype(np.float32)
            for s in shapes]
    return f, args, mesh


# the HLO collective each primitive of the table's bodies becomes in the per-device module
HLO_OF = {"psum": "all-reduce", "pmean": "all-reduce", "pmax": "all-reduce",
          "pmin": "all-reduce", "all_gather": "all-gather", "psum_scatter": "reduce-scatter",
          "ppermute": "collective-permute", "all_to_all": "all-to-all"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_collective_table_matches_jax(devices4, jax_results, case):
    name, eager_only = case[0], case[6]
    f, args, mesh = _make(case)
    for call in ("eager", "eager per-device module"):  # (the second call compiles it)
        got = ember.tree_util.tree_leaves(f(*args))
        for k, v in enumerate(got):
            want = jax_results[f"{name}/out{k}"]
            assert v.shape == want.shape and v.dtype == want.dtype, (name, k)
            np.testing.assert_array_equal(np.asarray(v), want, err_msg=f"{name} {call} out{k}")
    (entry,) = f._traced.values() if f._traced else (None,)
    if entry is not None:  # (a body with a collective in a loop runs as one program)
        module = entry.body.per_device.compiled.lowered.module.as_hlo_text()
        for prim, opcode in HLO_OF.items():
            assert (f"L.{prim}(" in case[4]) <= (f" {opcode}(" in module), (prim, module)
    if not eager_only:
        for k, v in enumerate(ember.tree_util.tree_leaves(ember.jit(f)(*args))):
            np.testing.assert_array_equal(np.asarray(v), jax_results[f"{name}/out{k}"],
                                          err_msg=f"{name} jit out{k}")
    if name in GRAD_CASES:
        def loss(*a):
            return sum((v * (1 + np.arange(v.size).reshape(v.shape) % 5)).sum()
                       for v in ember.tree_util.tree_leaves(f(*a)))
        grads = ember.grad(loss, argnums=tuple(range(len(args))))(*args)
        for k, g in enumerate(grads):
            np.testing.assert_array_equal(np.asarray(g), jax_results[f"{name}/grad{k}"],
                                          err_msg=f"{name} grad{k}")


def test_eager_outputs_are_sharded(devices4):
    mesh = ember.make_mesh((2, 2), ("x", "y"))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    f = ember.shard_map(lambda a: (a * 2, lax.psum(a, "y")), mesh=mesh,
                        in_specs=P("x", "y"), out_specs=(P("x", "y"), P("x")))
    doubled, summed = f(x)
    assert doubled.sharding == NamedSharding(mesh, P("x", "y"))
    for shard in doubled.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), x[shard.index] * 2)
    assert summed.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(np.asarray(summed), x[:, :2] + x[:, 2:])
    # a sharded argument's own shards feed the devices; in_specs default to its spec
    g = ember.shard_map(lambda a: a + lax.axis_index("x").astype(np.float32), mesh=mesh,
                        out_specs=P("x", "y"))
    np.testing.assert_array_equal(np.asarray(g(doubled)),
                                  x * 2 + np.repeat([0.0, 1.0], 4)[:, None])


def test_body_traced_once_for_the_block_shape(devices4):
    mesh = ember.make_mesh((4,), ("i",))
    seen = []

    def body(a):
        seen.append(a.shape)
        return a

    ember.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(np.ones((8, 3)))
    assert seen == [(2, 3)]


def test_with_mesh_context_and_experimental_spelling(devices4):
    from ember.experimental.shard_map import shard_map as old
    mesh = ember.make_mesh((4,), ("i",))
    x = np.arange(8.0, dtype=np.float32)
    with mesh:
        got = ember.shard_map(lambda a: lax.psum(a, "i"), in_specs=P("i"), out_specs=P())(x)
    np.testing.assert_array_equal(np.asarray(got), x.reshape(4, 2).sum(0))
    got = old(lambda a: lax.pmax(a, "i"), mesh, P("i"), P(), check_rep=False)(x)
    np.testing.assert_array_equal(np.asarray(got), [6.0, 7.0])


def test_errors(devices4):
    mesh = ember.make_mesh((4,), ("i",))
    with pytest.raises(ValueError, match="does not evenly divide"):
        ember.shard_map(lambda a: a, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(
            np.ones(6))
    with pytest.raises(ValueError, match="Resource axis: z"):
        ember.shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P())(np.ones(4))
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        ember.shard_map(lambda a: a, in_specs=P(), out_specs=P())(np.ones(4))
    with pytest.raises(NameError, match="unbound axis name: j"):
        ember.shard_map(lambda a: lax.psum(a, "j"), mesh=mesh, in_specs=P("i"),
                        out_specs=P())(np.ones(4))
    with pytest.raises(ValueError, match="pytree prefix"):
        ember.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(), P(), P()),
                        out_specs=P())(np.ones(4), np.ones(4))


@pytest.mark.parametrize("k", range(len(CHECKS)))
def test_check_vma_agrees_with_jax(devices4, jax_results, k):
    body, outs = CHECKS[k]
    mesh = ember.make_mesh((4,), ("i",))
    scope = {"L": lax, "P": P, "jax": ember}
    f = ember.shard_map(eval(body, scope), mesh=mesh, in_specs=P("i"),
                        out_specs=eval(outs, scope))
    x = np.ones((4, 2), np.float32)
    if int(jax_results[f"check{k}"]) == 0:
        f(x)
        ember.jit(f)(x)
        return
    assert int(jax_results[f"check{k}"]) == 1
    for run in (f, ember.jit(f)):
        with pytest.raises(ValueError, match="which require replication which can't be "
                                             "statically inferred given the mesh"):
            run(x)
    # check_vma=False: the output is read from the devices at coordinate 0
    g = ember.shard_map(eval(body, scope), mesh=mesh, in_specs=P("i"),
                        out_specs=eval(outs, scope), check_vma=False)
    g(x)


def test_under_vmap_and_grad_of_jit(devices4):
    mesh = ember.make_mesh((2, 2), ("x", "y"))
    f = ember.shard_map(lambda a: lax.psum(a * lax.axis_index("y"), ("x", "y")), mesh=mesh,
                        in_specs=P("x", "y"), out_specs=P())
    xs = np.arange(3 * 4 * 4, dtype=np.float32).reshape(3, 4, 4) % 7
    want = np.stack([f(x) for x in xs])
    np.testing.assert_array_equal(np.asarray(ember.vmap(f)(xs)), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(ember.vmap(f))(xs)), want)
    # d/dx of sum(psum(x * y_index)): each element is summed once, weighted by its
    # device's y index (the replicated output is not counted once per device)
    g = ember.jit(ember.grad(lambda x: f(x).sum()))(xs[0])
    np.testing.assert_array_equal(np.asarray(g), np.repeat([[0.0, 1.0]], 4, 0).repeat(2, 1))


def test_ppermute_under_vmap_jvp_vjp_and_inside_a_vmapped_body(devices4):
    """ppermute's batching rule (vmap of a shard_map, and a vmap inside the body, whose
    per-device collective-permute then moves the whole batch), its JVP (linear: the tangent
    moves as the primal) and its transpose (the inverse pairs), against NumPy."""
    mesh = ember.make_mesh((4,), ("i",))
    perm = [(0, 2), (2, 1), (1, 3), (3, 0)]
    src = {t: s for s, t in perm}

    def moved(a, axis=0):  # (block t of the result is block src[t] of a, along `axis`)
        blocks = np.split(a, 4, axis=axis)
        return np.concatenate([blocks[src[t]] for t in range(4)], axis=axis)

    f = ember.shard_map(lambda a: lax.ppermute(a, "i", perm) * 3, mesh=mesh,
                        in_specs=P("i"), out_specs=P("i"))
    xs = (np.arange(2 * 8 * 3) % 7 - 3).astype(np.float32).reshape(2, 8, 3)
    want = np.stack([moved(x) * 3 for x in xs])
    np.testing.assert_array_equal(np.asarray(ember.vmap(f)(xs)), want)
    np.testing.assert_array_equal(np.asarray(ember.jit(ember.vmap(f))(xs)), want)
    primal, tangent = ember.jvp(f, (xs[0],), (xs[1],))
    np.testing.assert_array_equal(np.asarray(primal), want[0])
    np.testing.assert_array_equal(np.asarray(tangent), want[1])
    _, pull = ember.vjp(f, xs[0])
    (ct,) = pull(xs[1])
    inverse = {s: t for s, t in perm}  # (block s of the cotangent is block inverse[s])
    blocks = np.split(xs[1], 4)
    np.testing.assert_array_equal(np.asarray(ct), np.concatenate(
        [blocks[inverse[s]] * 3 for s in range(4)]))
    g = ember.shard_map(lambda a: ember.vmap(lambda r: lax.ppermute(r, "i", perm))(a),
                        mesh=mesh, in_specs=P(None, "i"), out_specs=P(None, "i"))
    y = (np.arange(3 * 8) % 5).astype(np.float32).reshape(3, 8)
    for _ in range(2):  # (NumPy stages, then the per-device module)
        np.testing.assert_array_equal(np.asarray(g(y)), moved(y, axis=1))
    (entry,) = g._traced.values()
    assert "collective-permute(" in entry.body.per_device.compiled.lowered.module.as_hlo_text()
