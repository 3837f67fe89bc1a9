"""Partitioning of what used to be computed whole on every device: variadic reduces
(argmax, argmin: each device reduces its block, the small partial results are gathered and
reduced again), gathers and scatters (split along the dims they take whole, or along the
indices' batch dims): results equal the unpartitioned program's bit for bit, with no
refusal, and the communication is the partial results only; what still cannot be split
is refused with its reason."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember.sharding import NamedSharding, P

RNG = np.random.default_rng(11)


@pytest.fixture(scope="module")
def mesh(devices4):
    return ember.make_mesh((2, 2), ("data", "model"))


def _x():
    x = RNG.standard_normal((8, 6)).astype(np.float32)
    x[5, 4] = x[1, 4] = 9.0  # (a tie across the row blocks: the first index wins)
    x[6, 1] = np.nan  # (NaN wins argmax and argmin, as in JAX)
    x[:, 3] = -np.inf
    return x


def _report(fn, mesh, specs, *args):
    f = ember.jit(fn, in_shardings=tuple(NamedSharding(mesh, s) for s in specs))
    return f, ember.explain.collectives(f, *args)


def _same(f, fn, *args):
    got = f(*args)
    want = np.asarray(ember.jit(fn)(*args))
    np.testing.assert_array_equal(np.asarray(got), want)
    for sh in got.addressable_shards:
        np.testing.assert_array_equal(np.asarray(sh.data), want[sh.index])
    return got


@pytest.mark.parametrize("spec", [P("data"), P(None, "model"), P("data", "model"),
                                  P(("data", "model"))])
def test_argmax_argmin_reduce_their_blocks_then_the_partials(mesh, spec):
    x = _x()

    def fn(v):
        return jnp.argmax(v, axis=0), jnp.argmin(v, axis=1)

    f, report = _report(fn, mesh, [spec], x)
    assert not report.refusals, report
    assert {c.opcode for c in report.collectives} <= {"all-gather"}
    # (only partial results move: at most 3 of the 4 devices' rows of the kept dims)
    assert all(c.bytes_received <= 3 * 8 * 4 for c in report.collectives), report
    got = f(x)
    want = ember.jit(fn)(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert int(np.asarray(got[0])[4]) == 1


IDX = np.array([1, 7, 3, 0], np.int32)

# (name, function, in specs, the result's spec): no collective, no refusal
GATHERS = [
    ("rows_by_split_indices", lambda v, k: v[k], [P(None, "model"), P("data")],
     P("data", "model")),
    ("cols_of_split_rows", lambda v, k: v[:, k], [P("data"), P("model")], P("data", "model")),
    ("indices_2d", lambda v, k: v[k.reshape(2, 2)], [P(None, "model"), P()],
     P(None, None, "model")),
]


@pytest.mark.parametrize("name,fn,specs,out", GATHERS, ids=[g[0] for g in GATHERS])
def test_gather_keeps_its_splits(mesh, name, fn, specs, out):
    f, report = _report(fn, mesh, specs, _x(), IDX)
    assert not report.collectives and not report.refusals, report
    assert _same(f, fn, _x(), IDX).sharding.spec == out


TABLE = RNG.standard_normal((64, 6)).astype(np.float32)
TABLE[3, 0], TABLE[9, 1], TABLE[12, 2] = -0.0, np.nan, -np.inf
TOKENS = np.array([[3, 9, 12, 0], [63, 1, 40, 7], [-3, 70, 2, 33]], np.int32)


@pytest.mark.parametrize("spec", [P("data"), P("data", "model"), P(("data", "model"))])
def test_embedding_lookup_in_a_table_split_by_rows(mesh, spec):
    """Each device looks up the rows it holds, the others masked with -0.0, and the
    results are added: the output's size moves (an all-reduce), not the table's; the
    values are bit for bit the whole lookup's (NaN, -inf, -0.0, clamped indices)."""
    fn = lambda t, k: t[k]  # noqa: E731
    f, report = _report(fn, mesh, [spec, P()], TABLE, TOKENS)
    assert not report.refusals, report
    (c,) = report.collectives
    assert c.opcode == "all-reduce" and "[3,4," in c.shape
    got = np.asarray(f(TABLE, TOKENS))
    want = np.asarray(ember.jit(fn)(TABLE, TOKENS))
    assert got.tobytes() == want.tobytes()
    # booleans are or'ed
    g = lambda t, k: (t > 0)[k]  # noqa: E731
    f, report = _report(g, mesh, [spec, P()], TABLE, TOKENS)
    np.testing.assert_array_equal(np.asarray(f(TABLE, TOKENS)), np.asarray(ember.jit(g)(TABLE,
                                                                                      TOKENS)))


def test_gather_that_would_move_more_than_the_operand_is_refused(mesh):
    fn = lambda t, k: t[:, k[0] % 6]  # noqa: E731
    f, report = _report(fn, mesh, [P(None, "model"), P()], TABLE, TOKENS)
    (r,) = report.refusals
    assert r.opcode == "gather" and "an index reaches" in r.reason
    assert [(c.opcode, c.shape) for c in report.collectives] == [("all-gather", "f32[64,6]")]
    np.testing.assert_array_equal(np.asarray(f(TABLE, TOKENS)),
                                  np.asarray(ember.jit(fn)(TABLE, TOKENS)))


U = RNG.standard_normal((4, 6)).astype(np.float32)

SCATTERS = [
    ("add_rows", lambda v, k, w: v.at[k].add(w), [P(None, "model"), P(), P(None, "model")]),
    ("set_rows", lambda v, k, w: v.at[k].set(w), [P(None, "model"), P(), P()]),
    ("max_cols", lambda v, k, w: v.at[:, k % 6].max(jnp.ones((8, 4)) * w[0, :4]),
     [P("data"), P(), P()]),
]


@pytest.mark.parametrize("name,fn,specs", SCATTERS, ids=[s[0] for s in SCATTERS])
def test_scatter_into_blocks(mesh, name, fn, specs):
    x = np.nan_to_num(_x(), posinf=0, neginf=0)
    f, report = _report(fn, mesh, specs, x, IDX, U)
    assert not report.collectives and not report.refusals, report
    assert _same(f, fn, x, IDX, U).sharding.spec == specs[0]


def test_scatter_of_split_updates(mesh):
    """Updates (and indices) split along their scatter dims: each device scatters its
    share. An add into the operand kept by one device of the group and the identity
    (-0.0) on the others, left as partial sums (an all-reduce of the result where read:
    floats within a tolerance, integers exact); a max or min into the whole block on
    every device, then an all-reduce with the combiner (bit for bit); a set, whose later
    update wins, is gathered first (a refusal naming why)."""
    x = np.nan_to_num(_x(), posinf=0, neginf=0)
    fn = lambda v, k, w: v.at[k].add(w)  # noqa: E731
    f, report = _report(fn, mesh, [P(None, "model"), P("data"), P("data", "model")], x, IDX,
                        U)
    assert not report.refusals, report
    assert [(c.opcode, c.shape, c.group_size) for c in report.collectives] == [
        ("all-reduce", "f32[8,3]", 2)], report
    np.testing.assert_allclose(np.asarray(f(x, IDX, U)), np.asarray(ember.jit(fn)(x, IDX, U)),
                               rtol=1e-6, atol=1e-6)
    xi, ui = (x * 4).astype(np.int32), (U * 4).astype(np.int32)
    f, _ = _report(fn, mesh, [P(), P(("data", "model")), P()], xi, IDX, ui)
    _same(f, fn, xi, IDX, ui)
    for g in (lambda v, k, w: v.at[k].max(w), lambda v, k, w: v.at[k].min(w)):
        f, report = _report(g, mesh, [P("data"), P("model"), P("model")], _x(), IDX, U)
        assert not report.refusals, report
        assert [c.opcode for c in report.collectives] == ["all-reduce"], report
        _same(f, g, _x(), IDX, U)
    s = lambda v, k, w: v.at[k].set(w)  # noqa: E731
    f, report = _report(s, mesh, [P(None, "model"), P("data"), P("data", "model")], x, IDX, U)
    (r,) = report.refusals
    assert r.opcode == "scatter" and "split indices or update scatter dims" in r.reason
    _same(f, s, x, IDX, U)


GRID = RNG.standard_normal((16, 8, 6)).astype(np.float32)
GRID[3, 1, 0], GRID[9, 2, 1], GRID[15, 7, 5] = -0.0, np.nan, -np.inf
ROWS = np.array([[3, 9, 15, 0], [20, -1, 8, 7]], np.int32)
COLS = np.array([[1, 2, 7, 0], [4, 9, -3, 5]], np.int32)


@pytest.mark.parametrize("spec", [P("data", "model"), P("model", "data", None),
                                  P(("data", "model"), None)])
def test_gather_and_scatter_in_a_table_split_along_two_indexed_dims(mesh, spec):
    """t[r, c] with t split along both indexed dims: each device looks up what its block
    holds (a lookup is its device's when every component falls in its block; clamped
    indices as the whole gather clamps them), the rest masked with -0.0, the results
    added (one all-reduce of the output, bit for bit); the scatter back moves each
    component to the block's origin and moves nothing."""
    fn = lambda t, r, c: t[r, c]  # noqa: E731
    f, report = _report(fn, mesh, [spec, P(), P()], GRID, ROWS, COLS)
    assert not report.refusals, report
    assert [(c.opcode, c.shape) for c in report.collectives] == [("all-reduce", "f32[2,4,6]")]
    got = np.asarray(f(GRID, ROWS, COLS))
    assert got.tobytes() == np.asarray(ember.jit(fn)(GRID, ROWS, COLS)).tobytes()
    u = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    g = lambda t, r, c, u: t.at[r, c].add(u, mode="drop")  # noqa: E731
    f = ember.jit(g, in_shardings=(NamedSharding(mesh, spec), None, None, None))
    report = ember.explain.collectives(f, GRID, ROWS, COLS, u)
    assert not report.refusals and not report.collectives, report
    got = f(GRID, ROWS, COLS, u)
    assert np.asarray(got).tobytes() == np.asarray(ember.jit(g)(GRID, ROWS, COLS, u)).tobytes()
    assert got.sharding.is_equivalent_to(NamedSharding(mesh, spec), 3)


UPD = RNG.standard_normal((3, 4, 6)).astype(np.float32)
ROW_SCATTERS = [
    ("add", lambda t, k, u: t.at[k].add(u), [P("data"), P(), P()]),
    ("add_cols_too", lambda t, k, u: t.at[k].add(u), [P("data", "model"), P(),
                                                      P(None, None, "model")]),
    ("set", lambda t, k, u: t.at[k].set(u), [P(("data", "model")), P(), P()]),
    ("drop", lambda t, k, u: t.at[k].add(u, mode="drop"), [P("data"), P(), P()]),
]


@pytest.mark.parametrize("name,fn,specs", ROW_SCATTERS, ids=[r[0] for r in ROW_SCATTERS])
def test_scatter_into_a_table_split_by_rows_moves_nothing(mesh, name, fn, specs):
    """Each device scatters into its rows with its indices moved to their origin; the
    updates other devices' rows take fall out of its bounds and are skipped."""
    f, report = _report(fn, mesh, specs, TABLE, TOKENS, UPD)
    assert not report.collectives and not report.refusals, report
    got = f(TABLE, TOKENS, UPD)
    want = np.asarray(ember.jit(fn)(TABLE, TOKENS, UPD))
    assert np.asarray(got).tobytes() == want.tobytes()
    assert got.sharding.spec == specs[0]


def test_embedding_training_step_with_a_table_split_by_rows(mesh):
    """value_and_grad + SGD on a lookup into a table split by rows, donated: the lookup's
    sums are added once (a small all-reduce of the summed rows), its gradient is scattered
    into each device's rows (the zeros it starts from, wanted split by the update, are
    sliced: backward propagation), and 3 steps equal one device's."""
    tok = (np.arange(12, dtype=np.int32).reshape(4, 3) * 7) % 64
    y = RNG.standard_normal((4, 6)).astype(np.float32)

    def loss(t, k, y):
        return jnp.mean((t[k].sum(1) - y) ** 2)

    def step(t, k, y):
        return t - 0.1 * ember.grad(loss)(t, k, y)

    ts = NamedSharding(mesh, P("data"))
    f = ember.jit(step, in_shardings=(ts, None, None), out_shardings=ts, donate_argnums=0)
    report = ember.explain.collectives(f, np.nan_to_num(TABLE, nan=0, neginf=0), tok, y)
    assert [(c.opcode, c.shape) for c in report.collectives] == [("all-reduce", "f32[4,6]")]
    assert not report.refusals
    assert "f32[32,6] scatter(" in report.module
    t = ember.device_put(np.nan_to_num(TABLE, nan=0, neginf=0), ts)
    want = np.nan_to_num(TABLE, nan=0, neginf=0)
    for _ in range(3):
        t = f(t, tok, y)
        want = ember.jit(step)(want, tok, y)
    np.testing.assert_allclose(np.asarray(t), np.asarray(want), rtol=1e-6, atol=1e-7)
    assert t.sharding == ts
