"""jit over a 2x2 mesh of 4 CPU devices partitions the program (passes/spmd_partitioner.py,
ember/spmd/_partitioned.py): over a table of ops and shardings, every sharded result equals
the unsharded program's (bit for bit for elementwise and integer work, float sums within a
tolerance), comes back laid out as said, and the collectives are the ones the rules give."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.sharding import NamedSharding, P

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _arr(shape, dtype=np.float32):
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-9, 9, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


SPECS2 = [P(), P("data"), P(None, "model"), P("data", "model"), P("model", "data"),
          P(("data", "model"))]

# (name, function, argument shapes, dtype, exact): exact results must match bit for bit
OPS = [
    ("add", lambda x, y: x + y, [(8, 6), (8, 6)], np.float32, True),
    ("mul_bcast_row", lambda x, y: x * y[0], [(8, 6), (8, 6)], np.float32, True),
    ("sub_scalar", lambda x, y: x - 2.5 * y, [(8, 6), (8, 6)], np.float32, True),
    ("tanh_exp", lambda x, y: jnp.tanh(x) * jnp.exp(y), [(8, 6), (8, 6)], np.float32, True),
    ("where", lambda x, y: jnp.where(x > 0, x, y), [(8, 6), (8, 6)], np.float32, True),
    ("int_ops", lambda x, y: (x * y + 3) // 2, [(8, 6), (8, 6)], np.int32, True),
    ("convert", lambda x, y: x.astype(jnp.int32) + y.astype(jnp.int32), [(8, 6), (8, 6)],
     np.float32, True),
    ("sum_all", lambda x, y: jnp.sum(x) + jnp.sum(y), [(8, 6), (8, 6)], np.float32, False),
    ("sum_axis0", lambda x, y: jnp.sum(x * y, axis=0), [(8, 6), (8, 6)], np.float32, False),
    ("sum_axis1_int", lambda x, y: jnp.sum(x - y, axis=1), [(8, 6), (8, 6)], np.int32, True),
    ("max_min", lambda x, y: jnp.max(x, axis=0) - jnp.min(y, axis=1).sum(),
     [(8, 6), (8, 6)], np.float32, False),
    ("mean", lambda x, y: jnp.mean(x, axis=1) + jnp.mean(y), [(8, 6), (8, 6)], np.float32,
     False),
    ("argmax", lambda x, y: jnp.argmax(x + y, axis=0), [(8, 6), (8, 6)], np.float32, True),
    ("matmul", lambda x, y: x @ y.T, [(8, 6), (4, 6)], np.float32, False),
    ("matmul_tn", lambda x, y: x.T @ y, [(8, 6), (8, 4)], np.float32, False),
    ("transpose", lambda x, y: x.T + y.T, [(8, 6), (8, 6)], np.float32, True),
    ("reshape_merge", lambda x, y: (x + y).reshape(48), [(8, 6), (8, 6)], np.float32, True),
    ("reshape_split", lambda x, y: (x * y).reshape(4, 2, 6), [(8, 6), (8, 6)], np.float32,
     True),
    ("reshape_minor", lambda x, y: x.reshape(8, 3, 2) * 2 + y.reshape(8, 3, 2),
     [(8, 6), (8, 6)], np.float32, True),
    ("reshape_refused", lambda x, y: (x + y).reshape(6, 8), [(8, 6), (8, 6)], np.float32,
     True),
    ("broadcast", lambda x, y: x[:, None, :] + y[None, :4, :], [(8, 6), (8, 6)], np.float32,
     True),
    ("slice", lambda x, y: x[2:6] + y[:4, ::-1], [(8, 6), (8, 6)], np.float32, True),
    ("concat", lambda x, y: jnp.concatenate([x, y], axis=1) * 2, [(8, 6), (8, 6)],
     np.float32, True),
    ("cumsum_fallback", lambda x, y: jnp.cumsum(x, axis=0) + y, [(8, 6), (8, 6)],
     np.float32, False),
    ("logical", lambda x, y: jnp.logical_and(x, ~y), [(8, 6), (8, 6)], np.bool_, True),
    ("any_all", lambda x, y: jnp.any(x, axis=0) & jnp.all(y | x, axis=1).any(),
     [(8, 6), (8, 6)], np.bool_, True),
    ("int_bitwise_or", lambda x, y: lax.reduce(x | y, np.int32(0), lax.bitwise_or, (0,)),
     [(8, 6), (8, 6)], np.int32, True),
    ("odd_minor", lambda x, y: jnp.sin(x) * y + 1, [(4, 7), (4, 7)], np.float32, True),
    ("odd_sum", lambda x, y: jnp.sum(x * y, axis=1), [(4, 33), (4, 33)], np.float32, False),
    ("reverse_pad", lambda x, y: (jnp.pad(x[::-1], ((1, 1), (0, 0)))[1:9]
                                  + jnp.pad(y, ((0, 0), (2, 0)))[:, 2:]),
     [(8, 6), (8, 6)], np.float32, True),
    ("sort", lambda x, y: jnp.sort(x, axis=0) - jnp.sort(y, axis=1), [(8, 6), (8, 6)],
     np.float32, True),
    ("dynamic_slice", lambda x, y: (lax.dynamic_slice(x, (2, 5), (4, 6))
                                    - lax.dynamic_slice_in_dim(y, 3, 4, axis=0)),
     [(8, 6), (8, 6)], np.float32, True),
    ("loop_and_gather", lambda x, y: lax.fori_loop(0, 3, lambda i, v: v * 2 + y, x)[
        jnp.array([3, 1, 0])], [(8, 6), (8, 6)], np.float32, True),
    ("iota_softmax", lambda x, y: ember.nn.softmax(x + jnp.arange(6.0), axis=-1) * y,
     [(8, 6), (8, 6)], np.float32, False),
    ("bf16", lambda x, y: (x.astype(jnp.bfloat16) * y.astype(jnp.bfloat16)).sum(0),
     [(8, 6), (8, 6)], np.float32, False),
    ("complex", lambda x, y: jnp.abs(x * (1 + 2j) - y), [(8, 6), (8, 6)], np.float32, True),
    ("scalar_out", lambda x, y: jnp.vdot(x, y) * 1.5, [(8, 6), (8, 6)], np.float32, False),
    ("size_zero", lambda x, y: x * 2 - y, [(0, 6), (0, 6)], np.float32, True),
]


def _spec_fits(spec, shape, mesh):
    try:
        NamedSharding(mesh, spec).shard_shape(shape)
    except ValueError:
        return False
    return len(spec) <= len(shape)


def _check_layout(out, value, exact=True):
    """Each device's shard is its block of the expected value."""
    assert len(out.addressable_shards) == 4
    for sh in out.addressable_shards:
        if exact:
            np.testing.assert_array_equal(np.asarray(sh.data), value[sh.index])
        else:
            np.testing.assert_allclose(np.asarray(sh.data), value[sh.index], rtol=2e-5,
                                       atol=2e-5)


@pytest.mark.parametrize("name,fn,shapes,dtype,exact", OPS, ids=[o[0] for o in OPS])
def test_sharded_equals_unsharded(mesh, name, fn, shapes, dtype, exact):
    args = [_arr(s, dtype) for s in shapes]
    want = np.asarray(ember.jit(fn)(*args))
    tried = 0
    pairs = [(s, SPECS2[(k + 2) % len(SPECS2)]) for k, s in enumerate(SPECS2)]
    for spec, other in pairs + [(s, s) for s in SPECS2[1:]]:
        if not (_spec_fits(spec, shapes[0], mesh) and _spec_fits(other, shapes[1], mesh)):
            continue
        tried += 1
        shardings = (NamedSharding(mesh, spec), NamedSharding(mesh, other))
        jf = ember.jit(fn, in_shardings=shardings)
        out = jf(*args)
        # (compiled natively, collectives as host callbacks: not the interpreter's bits)
        assert [p.compiled.backend for _, p in jf._partitioned.values()] == ["cpu"]
        got = np.asarray(out)
        assert got.dtype == want.dtype and got.shape == want.shape
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {spec} {other}")
        else:
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5,
                                       err_msg=f"{name} {spec} {other}")
        _check_layout(out, want, exact)
    assert tried >= 2


def _compiled(fn, shardings, *args, out_shardings=None):
    jf = ember.jit(fn, in_shardings=shardings, out_shardings=out_shardings)
    return jf.lower(*args).compile()


def test_matmul_chain_has_one_all_reduce(mesh):
    x, w1, w2 = _arr((8, 6)), _arr((6, 4)), _arr((4, 3))
    sh = tuple(NamedSharding(mesh, s) for s in (P("data", None), P(None, "model"),
                                                P("model", None)))
    c = _compiled(lambda x, a, b: (x @ a) @ b, sh, x, w1, w2)
    text = c.as_text()
    assert text.count("all-reduce(") == 1 and "all-gather" not in text, text
    assert "replica_groups={{0,1},{2,3}}" in text  # (over 'model': devices equal on 'data')
    assert "f32[4,6]" in text and "partition-id" in text
    out = c(x, w1, w2)
    np.testing.assert_allclose(np.asarray(out), (x @ w1) @ w2, rtol=1e-5, atol=1e-5)
    assert out.sharding.spec == P("data")
    # one device's share of the flops: (4 x 6 x 2 + 4 x 2 x 3) multiply-adds
    assert c.cost_analysis()["flops"] == 2 * (4 * 6 * 2 + 4 * 2 * 3)
    report = c.partition_report
    (coll,) = report.collectives
    assert (coll.opcode, coll.group_size, coll.bytes_sent) == ("all-reduce", 2, 4 * 3 * 4)
    assert not report.refusals


def test_out_sharding_on_partial_sums_is_a_reduce_scatter(mesh):
    x, w = _arr((8, 6)), _arr((6, 4))
    sh = (NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None)))
    out_s = NamedSharding(mesh, P("model", None))
    c = _compiled(lambda x, w: x @ w, sh, x, w, out_shardings=out_s)
    text = c.as_text()
    assert "reduce-scatter(" in text and "all-reduce" not in text, text
    out = c(x, w)
    np.testing.assert_allclose(np.asarray(out), x @ w, rtol=1e-5, atol=1e-5)
    assert out.sharding == out_s
    _check_layout(out, x @ w, exact=False)


def test_sharding_constraint_reshards(mesh):
    x = _arr((8, 12))
    s_rows = NamedSharding(mesh, P("data", None))
    s_cols = NamedSharding(mesh, P(None, ("data", "model")))

    def f(v):
        return lax.with_sharding_constraint(jnp.sin(v), s_cols) * 2

    c = _compiled(f, (s_rows,), x)
    # (rows to columns: an all-to-all over `data`, then a local slice over `model`)
    assert "all-to-all(" in c.as_text() and "all-gather" not in c.as_text()
    out = c(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ember.jit(f)(x)))
    assert out.sharding.spec == P(None, ("data", "model"))
    # a constraint on an argument itself
    c = _compiled(lambda v: lax.with_sharding_constraint(v, s_cols) * 2, (s_rows,), x)
    assert c.partition_report.collectives[0].opcode == "all-to-all"
    out = c(x)
    np.testing.assert_array_equal(np.asarray(out), x * 2)
    assert out.sharding.spec == P(None, ("data", "model"))


def test_refusals_are_reported(mesh):
    x = _arr((8, 6))
    # a sum whose init is not its identity: 5 + 5 != 5, so partial sums cannot be added
    from ember.hlo.parser import parse_module
    from ember.hlo.sharding import HloSharding
    from ember.passes.spmd_partitioner import partition

    m = parse_module("""HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}

ENTRY %main (p: f32[8,6]) -> f32[6] {
  %p = f32[8,6] parameter(0)
  %five = f32[] constant(5)
  ROOT %r = f32[6] reduce(%p, %five), dimensions={0}, to_apply=%add
}
""")
    axes = (("data", 2), ("model", 2))
    done = partition(m, axes, {0: HloSharding(axes, (("data",), ()))})
    (r,) = done.report.refusals
    assert r.opcode == "reduce" and "identity" in r.reason
    assert [c.opcode for c in done.report.collectives] == ["all-gather"]
    c = _compiled(lambda v: jnp.cumsum(v, axis=0), (NamedSharding(mesh, P("data")),), x)
    assert c.partition_report.refusals
    assert not _compiled(lambda v: v * 2, (NamedSharding(mesh, P("data")),),
                         x).partition_report.refusals
    # boolean any/all reduce locally, then all-reduce; a bitwise or of integers gathers
    c = _compiled(lambda v: jnp.any(v > 0, axis=0), (NamedSharding(mesh, P("data")),), x)
    assert not c.partition_report.refusals
    assert [k.opcode for k in c.partition_report.collectives] == ["all-reduce"]
    # a bitwise or of integers (0 | 0 == 0): each device's partial results gathered and
    # reduced again, no refusal
    xi = (x * 4).astype(np.int32)
    c = _compiled(lambda v: lax.reduce(v, np.int32(0), lax.bitwise_or, (0,)),
                  (NamedSharding(mesh, P("data")),), xi)
    assert not c.partition_report.refusals
    assert [k.opcode for k in c.partition_report.collectives] == ["all-gather"]
    np.testing.assert_array_equal(np.asarray(c(xi)), np.bitwise_or.reduce(xi, axis=0))


def test_large_closed_over_constants_are_whole_on_every_device(mesh):
    big = _arr((64, 48))  # (over 1 kB: a hidden argument of the module, not a literal)
    x = _arr((8, 64))
    c = _compiled(lambda v: v @ big, (NamedSharding(mesh, P("data", "model")),), x)
    assert "f32[64,48]" in c.as_text()
    np.testing.assert_allclose(np.asarray(c(x)), x @ big, rtol=1e-5, atol=1e-4)


def test_sharded_arguments_keep_their_shards(mesh):
    x = _arr((8, 6))
    s = NamedSharding(mesh, P("data", "model"))
    xs = ember.device_put(x, s)
    out = ember.jit(lambda v: v * 3 + 1, in_shardings=s, out_shardings=s)(xs)
    assert out.sharding == s
    np.testing.assert_array_equal(np.asarray(out), x * 3 + 1)


def test_uneven_in_sharding_raises(mesh):
    with pytest.raises(ValueError, match="evenly|divid"):
        ember.jit(lambda v: v + 1, in_shardings=NamedSharding(mesh, P("data")))(
            np.ones((3, 2), np.float32))


def test_collectives_outside_a_device_run_refuse():
    from ember.hlo.evaluator import EvaluationError, evaluate
    from ember.hlo.parser import parse_module

    text = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}

ENTRY %main (p: f32[4,3]) -> f32[2,3] {
  %p = f32[4,3] parameter(0)
  %r = f32[4,3] all-reduce(%p), replica_groups={{0,1},{2,3}}, to_apply=%add
  %g = f32[8,3] all-gather(%r), dimensions={0}, replica_groups={{0,2},{1,3}}
  ROOT %s = f32[2,3] reduce-scatter(%g), dimensions={0}, replica_groups={{0,1,2,3}}, to_apply=%add
}
"""
    m = parse_module(text)
    assert parse_module(str(m)).as_hlo_text() == m.as_hlo_text()
    assert "replica_groups={{0,2},{1,3}}" in str(m)
    with pytest.raises(EvaluationError, match="runs only on the devices"):
        evaluate(m, np.ones((4, 3), np.float32))


def test_explain_lists_collectives_bytes_and_refusals(mesh):
    import io
    import tempfile

    x, w1, w2 = _arr((8, 6)), _arr((6, 4)), _arr((4, 3))
    sh = tuple(NamedSharding(mesh, s) for s in (P("data", None), P(None, "model"),
                                                P("model", None)))
    f = ember.jit(lambda x, a, b: jnp.cumsum((x @ a) @ b, axis=0), in_shardings=sh)
    report = ember.explain.collectives(f, x, w1, w2)
    kinds = [c.opcode for c in report.collectives]
    # the contraction's sums added once (not once per reader), then each step of the scan
    # gathers the rows split over `data`
    assert kinds[0] == "all-reduce" and kinds.count("all-reduce") == 1, kinds
    assert kinds.count("all-gather") == 3
    gather = report.collectives[1]
    assert (gather.shape, gather.group_size, gather.bytes_sent) == ("f32[8,3]", 2, 48)
    assert report.bytes_sent == 48 * 4 == report.bytes_received
    text = str(report)
    assert "%all-reduce" in text and "48 B" in text and "refusals (3)" in text
    assert all(r.opcode == "slice" for r in report.refusals)
    assert "all-gather(" in report.module
    with pytest.raises(ValueError, match="not partitioned"):
        ember.explain.collectives(ember.jit(lambda v: v + 1), x)
    buf = io.StringIO()
    with tempfile.TemporaryDirectory() as d:
        ember.explain.story(f, x, w1, w2, out_dir=d, stream=buf, profile_kernels=False)
    story = buf.getvalue()
    assert "The per-device module" in story and "refusals (3)" in story


def test_rendezvous_combines_and_a_failed_device_aborts_the_others(mesh):
    import threading

    from ember.spmd._partitioned import _Launch

    devices = list(mesh.devices.flat)
    launch = _Launch(mesh, devices, 0, None)
    got: dict = {}

    def device(k: int) -> None:
        run = launch.runner_for(devices[k])
        got[k] = run("all-reduce", "add", ((0, 1), (2, 3)), None, np.full(3, k, np.float32))
        got[(k, "g")] = run("all-gather", None, ((0, 2), (1, 3)), 0,
                            np.full((1, 2), k, np.int32))

    threads = [threading.Thread(target=device, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    np.testing.assert_array_equal(got[0], [1, 1, 1])
    np.testing.assert_array_equal(got[3], [5, 5, 5])
    np.testing.assert_array_equal(got[(1, "g")], [[1, 1], [3, 3]])
    # a device that fails before its collective: the one waiting there raises, promptly
    launch = _Launch(mesh, devices[:2], 0, None)
    errors: list = []

    def waiter() -> None:
        try:
            launch.runner_for(devices[0])("all-reduce", "add", ((0, 1),), None,
                                          np.ones(2, np.float32))
        except RuntimeError as e:
            errors.append(e)

    t = threading.Thread(target=waiter)
    t.start()
    launch.abort(ValueError("device 1 broke"))
    t.join(5)
    assert not t.is_alive() and "device 1 broke" in str(errors[0])


def test_plain_jit_of_sharded_arguments_partitions(mesh):
    x, w = _arr((8, 6)), _arr((6, 4))
    xs = ember.device_put(x, NamedSharding(mesh, P("data", None)))
    ws = ember.device_put(w, NamedSharding(mesh, P(None, "model")))
    f = ember.jit(lambda a, b: jnp.tanh(a @ b) * 2)
    out = f(xs, ws)
    assert out.sharding == NamedSharding(mesh, P("data", "model"))  # as propagated
    np.testing.assert_allclose(np.asarray(out), np.tanh(x @ w) * 2, rtol=1e-6, atol=1e-6)
    assert len({sh.device for sh in out.addressable_shards}) == 4
    plain = f(x, w)  # (plain arrays: one device, as before)
    assert not getattr(plain, "spans_devices", False)
    np.testing.assert_allclose(np.asarray(plain), np.asarray(out), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(f(xs, ws)), np.asarray(out))


def test_sums_of_partial_sums_stay_partial(mesh):
    x, w = _arr((8, 6)), _arr((6, 4))
    sh = (NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model", None)))
    c = _compiled(lambda a, b: jnp.sum((a @ b).T.reshape(32)), sh, x, w)
    (coll,) = c.partition_report.collectives  # the scalar, not the f32[8,4] product
    assert (coll.opcode, coll.shape) == ("all-reduce", "f32[]")
    np.testing.assert_allclose(float(c(x, w)), float(np.sum(x @ w)), rtol=1e-5, atol=1e-5)
    # a max is not linear: the product's sums are added before it
    c = _compiled(lambda a, b: jnp.max(a @ b), sh, x, w)
    assert [k.shape for k in c.partition_report.collectives] == ["f32[8,4]"]
    np.testing.assert_allclose(float(c(x, w)), float(np.max(x @ w)), rtol=1e-5)


def test_static_arguments_and_an_output_on_one_device(mesh):
    from ember.sharding import SingleDeviceSharding

    x = _arr((8, 6))
    f = ember.jit(lambda n, a, b=1.0: a * n + b, static_argnums=0,
                  in_shardings=(NamedSharding(mesh, P("data")),))
    out = f(3, x, b=2.0)  # (in_shardings name the dynamic arguments only)
    assert out.sharding.spec == P("data")
    np.testing.assert_array_equal(np.asarray(out), x * 3 + np.float32(2.0))
    one = SingleDeviceSharding(ember.devices()[1])
    g = ember.jit(lambda a: (a * 2, a.sum()), in_shardings=NamedSharding(mesh, P("data")),
                  out_shardings=(None, one))
    doubled, total = g(x)
    assert doubled.sharding == NamedSharding(mesh, P("data")) and total.sharding == one
    np.testing.assert_allclose(float(total), float(x.sum()), rtol=1e-5)
    with pytest.raises(ValueError, match="two meshes"):
        other = ember.make_mesh((4,), ("i",))
        ember.jit(lambda a, b: a + b, in_shardings=(NamedSharding(mesh, P("data")),
                                                    NamedSharding(other, P("i"))))(x, x)


def test_calls_from_several_threads_take_turns(mesh):
    import threading

    x, w = _arr((8, 6)), _arr((6, 4))
    f = ember.jit(lambda a, b: jnp.sum(a @ b, axis=0),
                  in_shardings=(NamedSharding(mesh, P("data", "model")),
                                NamedSharding(mesh, P("model"))))
    want = np.asarray(f(x, w))
    bad: list = []

    def run() -> None:
        for _ in range(10):
            bad.extend([] if np.array_equal(np.asarray(f(x, w)), want) else [1])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads) and not bad


def test_plain_jit_with_a_constraint_partitions(mesh):
    x = _arr((8, 6))
    s = NamedSharding(mesh, P("data", "model"))

    def f(v):
        return jnp.sum(lax.with_sharding_constraint(jnp.exp(v), s), axis=0)

    jf = ember.jit(f)
    out = jf(x)
    np.testing.assert_allclose(np.asarray(out), np.exp(x).sum(0), rtol=1e-5)
    assert out.sharding == NamedSharding(mesh, P("model"))
    text = jf.lower(x).compile().as_text()
    assert "all-reduce(" in text and "f32[4,3]" in text
    assert [c.opcode for c in ember.explain.collectives(jf, x).collectives] == ["all-reduce"]
    assert not hasattr(ember.jit(jnp.exp).lower(x).compile(), "partition_report")


def test_on_the_interpreter_too(mesh, monkeypatch):
    x, w1, w2 = _arr((8, 6)), _arr((6, 4)), _arr((4, 3))
    sh = tuple(NamedSharding(mesh, s) for s in (P("data", None), P(None, "model"),
                                                P("model", None)))
    monkeypatch.setenv("EMBER_BACKEND", "interpreter")  # (the evaluator runs the module)
    jf = ember.jit(lambda x, a, b: jnp.tanh(x @ a) @ b, in_shardings=sh)
    out = jf(x, w1, w2)
    assert [p.compiled.backend for _, p in jf._partitioned.values()] == ["interpreter"]
    np.testing.assert_allclose(np.asarray(out), np.tanh(x @ w1) @ w2, rtol=1e-5, atol=1e-5)


def test_results_are_assembled_only_when_read(mesh):
    x = _arr((8, 6))
    s = NamedSharding(mesh, P("data", "model"))
    f = ember.jit(lambda v: v * 2, in_shardings=s, out_shardings=s)
    out = f(x)
    assert out._value is None  # (the blocks are all a next partitioned call reads)
    again = f(out)
    assert again._value is None
    np.testing.assert_array_equal(np.asarray(again), x * 4)
    # (an eager sum is jit's, which adds in another order than NumPy's pairwise sum)
    assert "Array(" in repr(out) and float(out.sum()) == float(ember.jit(jnp.sum)(x * 2))
