"""README.md's table of what works: every row marked "yes" runs a small program written as
for JAX, and every row marked "not yet" still fails, so the table stays true both ways.

Each row's first cell is a key of `CHECKS`; a row added to the README without a check here
(or a check whose row is gone) fails `test_every_row_has_a_check`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import ember as jax
import ember.numpy as jnp
from ember import lax

README = Path(__file__).resolve().parents[2] / "README.md"
X = np.linspace(-1.0, 1.0, 6, dtype=np.float32)


def _rows() -> dict[str, str]:
    """{first cell: status} of the README's feature table."""
    text = README.read_text()
    table = text[text.index("| JAX feature | on Ember |"):]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1]
    return rows


def _close(got, want, rtol=1e-5, atol=1e-6) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


def _jit_stages() -> None:
    f = jax.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=0)
    _close(f(jnp.asarray(X), 3), X * 3)
    assert "mul" in str(jax.make_jaxpr(lambda x: x * 2)(X))
    assert jax.eval_shape(jnp.sin, X).shape == (6,)
    assert "HloModule" in jax.jit(jnp.cos).trace(X).lower().compile().as_text()


def _numpy() -> None:
    a = jnp.arange(12.0).reshape(3, 4)
    _close(jnp.sort(a.at[1, 2].set(-1.0), axis=1)[1], [-1.0, 4.0, 5.0, 7.0])
    _close(jnp.einsum("ij,kj->ik", a, a), np.arange(12.0).reshape(3, 4) @ np.arange(
        12.0).reshape(3, 4).T)
    _close(jnp.union1d(jnp.array([3, 1]), jnp.array([2, 1])), [1, 2, 3])
    _close(jnp.histogram(jnp.array([0.1, 0.4, 0.6]), bins=2, range=(0, 1))[0], [2, 1])
    _close(jnp.polyval(jnp.array([1.0, 0.0, -1.0]), 3.0), 8.0)


def _lax() -> None:
    _close(lax.fori_loop(0, 5, lambda i, c: c + i, 0.0), 10.0)
    _close(lax.scan(lambda c, x: (c + x, c), 0.0, X)[0], X.sum())
    _close(lax.cond(True, jnp.sin, jnp.cos, X), np.sin(X))
    img = jnp.ones((1, 1, 4, 4))
    _close(lax.conv(img, jnp.ones((1, 1, 3, 3)), (1, 1), "VALID"), np.full((1, 1, 2, 2), 9.0))
    _close(lax.reduce_window(img, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
           np.ones((1, 1, 2, 2)))


def _autodiff() -> None:
    _close(jax.grad(lambda x: jnp.sum(jnp.sin(x)))(X), np.cos(X))
    _close(jax.jvp(jnp.exp, (X,), (jnp.ones(6),))[1], np.exp(X))
    _close(jax.vjp(jnp.tanh, X)[1](jnp.ones(6))[0], 1 - np.tanh(X) ** 2)
    _close(jax.hessian(lambda x: jnp.sum(x ** 3))(X), np.diag(6 * X), atol=1e-5)
    _close(jax.jacrev(jnp.sin)(X), np.diag(np.cos(X)))


def _custom_rules() -> None:
    @jax.custom_jvp
    def log1pexp(x):
        return jnp.log1p(jnp.exp(x))

    log1pexp.defjvp(lambda p, t: (log1pexp(p[0]), t[0] * jax.nn.sigmoid(p[0])))
    _close(jax.grad(log1pexp)(100.0), 1.0)
    body = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    _close(jax.grad(lambda x: jnp.sum(body(x)))(X), np.cos(np.sin(X)) * np.cos(X))


def _vmap() -> None:
    _close(jax.vmap(jnp.dot, (0, None))(jnp.ones((3, 6)), X), np.full(3, X.sum()), atol=1e-6)
    y = X + 2
    _close(jax.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(y), y / y.sum())


def _random() -> None:
    key = jax.random.key(0)
    a, b = jax.random.split(key)
    assert jax.random.normal(a, (3,)).shape == (3,)
    assert int(jax.random.randint(b, (), 0, 10)) in range(10)


def _nn() -> None:
    _close(jax.nn.softmax(jnp.zeros(4)), np.full(4, 0.25))
    w = jax.nn.initializers.glorot_uniform()(jax.random.key(1), (4, 3))
    assert w.shape == (4, 3)
    from ember.scipy import special, stats
    _close(special.expit(0.0), 0.5)
    _close(stats.norm.cdf(0.0), 0.5)


def _pytrees() -> None:
    tree = {"a": X, "b": (X, X)}
    assert len(jax.tree.leaves(tree)) == 3
    _close(jax.ops.segment_sum(jnp.ones(4), jnp.array([0, 0, 1, 1]), 2), [2.0, 2.0])
    out = jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct((6,),
                                                                              np.float32), X)
    _close(out, X * 2)


def _dtypes() -> None:
    assert (jnp.ones(2, jnp.int8) + 1).dtype == np.int8
    assert (jnp.ones(2, jnp.float32) * 2.5).dtype == np.float32


def _half_precision() -> None:
    x = jnp.arange(6.0).astype(jnp.bfloat16)
    compiled = jax.jit(lambda v: jnp.sum(v * 0.5 + 1)).lower(x).compile()
    assert compiled._compiled.backend == "cpu"  # (native code, not the interpreter)
    out = compiled(x)
    assert out.dtype == jnp.bfloat16 and float(out) == 13.5
    assert jnp.finfo(jnp.bfloat16).eps == 2.0 ** -7
    g = jax.grad(lambda v: jnp.sum(v * v))(jnp.ones(3, jnp.float16))
    assert g.dtype == np.float16 and g.tolist() == [2.0, 2.0, 2.0]
    assert jax.vmap(jnp.max)(x.reshape(2, 3)).tolist() == [2.0, 5.0]


def _complex_jit() -> None:
    z = np.array([1 + 2j, 3 - 1j], np.complex64)
    _close(jax.jit(lambda v: v * jnp.conj(v) + v.imag)(z), z * np.conj(z) + z.imag)
    f = jax.jit(lambda v: jnp.sqrt(jnp.exp(v) / v) + jnp.abs(v) * jnp.tanh(v) + v @ v)
    assert f.lower(z).compile()._compiled.backend in ("cpu", "xla-cpu", "tpu")
    _close(f(z), np.sqrt(np.exp(z) / z) + np.abs(z) * np.tanh(z) + z @ z)
    _close(jax.grad(lambda v: v * v, holomorphic=True)(np.complex64(1 + 1j)), 2 + 2j)


def _linalg() -> None:
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    _close(jax.jit(jnp.linalg.cholesky)(a), np.linalg.cholesky(a))
    _close(jax.jit(jnp.linalg.solve)(a, np.ones(2, np.float32)), np.linalg.solve(a, np.ones(2)))
    _close(jnp.linalg.eigh(a)[0], np.linalg.eigh(a)[0])
    from ember.scipy import linalg
    _close(linalg.expm(np.zeros((2, 2), np.float32)), np.eye(2))
    z = np.array([[2.0, 1j], [-1j, 3.0]], np.complex64)
    _close(jax.jit(jnp.linalg.inv)(z), np.linalg.inv(z))
    _close(np.sort(jax.jit(jnp.linalg.eigvals)(a).real), np.linalg.eigvalsh(a))
    _close(np.sort(jnp.roots(np.array([1.0, -3.0, 2.0], np.float32)).real), [1.0, 2.0])


def _dtypes() -> None:
    from ember import dtypes
    assert dtypes.canonicalize_dtype(np.float64) == np.float32
    assert dtypes.issubdtype(dtypes.bfloat16, np.floating)
    assert dtypes.result_type(1, 2.0) == np.float32


def _fft() -> None:
    _close(jnp.fft.fft(X), np.fft.fft(X))
    _close(jax.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v), n=6))(X), X)
    _close(lax.fft(X.astype(np.complex64), "ifft", (6,)), np.fft.ifft(X))


_DISTRIBUTED = """
import numpy as np, ember as jax
jax.distributed.initialize()
t = jax.distributed.topology.current()
total = t.communicator.all_reduce(np.array([t.process_index + 1.0]), "sum")
seen = t.communicator.all_gather(np.array([t.process_index, t.process_count, total[0]]))
if t.process_index == 0:  # (one printer: mpiexec interleaves the processes' output)
    print(seen.tolist())
jax.distributed.shutdown()
"""


def _distributed() -> None:
    # two processes started as a JAX user would (the test extra installs MPI's mpiexec)
    import subprocess
    import sys
    mpiexec = Path(sys.executable).parent / "mpiexec"
    out = subprocess.run([str(mpiexec), "-n", "2", sys.executable, "-c", _DISTRIBUTED],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.strip() == "[[0.0, 2.0, 3.0], [1.0, 2.0, 3.0]]", out


def _devices() -> None:
    jax.jit(jnp.sin, backend="gpu")(X)


def _sharding() -> None:
    from ember.sharding import NamedSharding, P
    n = jax.device_count()  # (whatever jax_num_cpu_devices this process has)
    mesh = jax.make_mesh((n,), ("i",))
    x = np.arange(4.0 * n, dtype=np.float32)
    a = jax.device_put(x, NamedSharding(mesh, P("i")))
    assert len(a.addressable_shards) == n
    f = jax.shard_map(lambda v: lax.psum(v, "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
    _close(f(a), x.reshape(n, 4).sum(0))
    _close(jax.jit(f)(x), x.reshape(n, 4).sum(0))
    _close(lax.with_sharding_constraint(x, NamedSharding(mesh, P())), x)


def _partitioned_jit() -> None:
    from ember.sharding import NamedSharding, P
    n = jax.device_count()  # (whatever jax_num_cpu_devices this process has)
    mesh = jax.make_mesh((n,), ("i",))
    x = np.arange(12.0 * n, dtype=np.float32).reshape(4 * n, 3) / n
    f = jax.jit(lambda a, b: a.T @ b, in_shardings=NamedSharding(mesh, P("i")))
    _close(f(x, x), x.T @ x, rtol=1e-5, atol=1e-4)
    if n > 1:  # (one device: nothing to partition)
        assert "all-reduce(" in f.lower(x, x).compile().as_text()
        assert [c.opcode for c in jax.explain.collectives(f, x, x).collectives] == [
            "all-reduce"]


CHECKS: dict[str, Callable[[], None]] = {
    "`jit` (static, donated arguments), `make_jaxpr`, `eval_shape`, "
    "`trace`/`lower`/`compile`": _jit_stages,
    "`jax.numpy`: creation, elementwise math, reductions, indexing and `.at[]`, sorting, "
    "manipulation, products, set ops, histograms, polynomials": _numpy,
    "`jax.lax`: elementwise, reductions, slicing, `cond`/`switch`/`while_loop`/`fori_loop`"
    "/`scan`/`map`, convolutions, `reduce_window`": _lax,
    "`grad`, `value_and_grad`, `jvp`, `vjp`, `linearize`, `jacfwd`/`jacrev`/`hessian`":
        _autodiff,
    "`custom_jvp`, `custom_vjp`, `custom_gradient`, `checkpoint`/`remat`": _custom_rules,
    "`vmap` (`in_axes`/`out_axes`, `axis_name` with `psum`/`pmean`/`all_gather`)": _vmap,
    "`jax.random` (JAX's values for the same key)": _random,
    "`jax.nn` with `initializers`, parts of `jax.scipy.special` and `jax.scipy.stats`": _nn,
    "pytrees (`tree_util`, `jax.tree`), `jax.ops` segment sums, `pure_callback`, "
    "`debug.print`": _pytrees,
    "dtype promotion, weak types, 64-bit with `JAX_ENABLE_X64`": _dtypes,
    "`jax.distributed.initialize()`/`shutdown()` under `mpiexec` (MPI, the `mpi` extra)":
        _distributed,
    "`bfloat16` and `float16`: 16-bit storage, float32 arithmetic and accumulation as XLA's "
    "CPU backend, compiled natively, `finfo`, `grad`/`vmap`": _half_precision,
    "complex64/complex128, eager and under `jit` (native fused CPU code for arithmetic, "
    "`abs`, `exp`, `log`, `sqrt`, trig and hyperbolic functions, comparisons, sums, "
    "products, powers; sort and the inverse trig functions on the interpreter), "
    "`grad(holomorphic=True)`": _complex_jit,
    "`jax.numpy.linalg` (`solve`, `cholesky`, `qr`, `eigh`, `svd`, `det`, `lstsq`, "
    "`eig`/`eigvals`, ...), `jnp.roots` and `jax.scipy.linalg`, real and complex dtypes, "
    "through LAPACK": _linalg,
    "`jax.dtypes` as `ember.dtypes` (`canonicalize_dtype`, `issubdtype`, `result_type`, "
    "`float0`, `bfloat16`, `prng_key`, ...)": _dtypes,
    "`jax.numpy.fft` (all transforms, `fftfreq`, `fftshift`) and `lax.fft`, through NumPy's "
    "pocketfft": _fft,
    "several CPU devices (`jax_num_cpu_devices`), `jax.sharding` (`Mesh`, `NamedSharding`, "
    "`device_put`, `addressable_shards`), `shard_map` with `psum`/`all_gather`/"
    "`psum_scatter`/`ppermute`/`all_to_all`, `with_sharding_constraint`": _sharding,
    "`jit` partitioned over a mesh (`in_shardings`/`out_shardings` or sharded arguments): "
    "one per-device module with `all-reduce`/`all-gather`/`reduce-scatter`/`all-to-all`, "
    "also across processes; `ember.explain.collectives`": _partitioned_jit,
    "GPUs; `pmap`": _devices,
}


def test_every_row_has_a_check() -> None:
    assert set(_rows()) == set(CHECKS)


@pytest.mark.parametrize("row", list(CHECKS), ids=[f"row{i}" for i in range(len(CHECKS))])
def test_row_is_true(row: str) -> None:
    status = _rows()[row]
    assert status in ("yes", "not yet"), status
    if status == "yes":
        CHECKS[row]()
    else:
        with pytest.raises(Exception):  # noqa: B017, PT011 (whatever it raises: not there)
            CHECKS[row]()
