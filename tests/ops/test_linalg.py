"""Products (dot_general and the jnp products built on it), einsum, diagonal/trace, and
linalg norms against NumPy, eager and under jit (eager == jit bit for bit)."""

from __future__ import annotations

import numpy as np
import pytest
from op_tables import (
    BOOL,
    FLOATS,
    INTS,
    X64_FLOATS,
    X64_INTS,
    assert_eager_jit_numpy,
    dtype_params,
    sample,
    use_dtype,
)

import ember
import ember.numpy as jnp
from ember import lax

RNG = np.random.default_rng(0)

MATMUL_SHAPES = [
    ((7,), (7,)), ((3, 7), (7,)), ((7,), (7, 5)), ((3, 7), (7, 5)), ((33, 33), (33, 7)),
    ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)),
    ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((3, 0), (0, 5)), ((0, 3), (3, 4)),
    ((3, 4), (4, 0)), ((0,), (0,)), ((2, 1, 2, 3), (1, 3, 3, 2)),
    # a size-1 batch dim the other operand lacks (it stays in the result)
    ((1, 3, 4), (4, 5)), ((1, 1, 3, 4), (2, 4, 5)), ((3, 1, 1, 2, 3), (1, 2, 3, 4)),
]


def _operands(sa, sb, dtype, rng=RNG):
    # Floats without NaN/inf so BLAS and the reference agree up to rounding; integers over
    # the whole range so products and sums wrap.
    edges = np.array([]) if np.dtype(dtype).kind == "f" else None
    return sample(sa, dtype, rng, edges=edges), sample(sb, dtype, rng, edges=edges)


def _tol(dtype):
    return dict(rtol=2e-5, atol=1e-4) if np.dtype(dtype).kind == "f" else {}


def _np_matmul(a, b):
    with np.errstate(all="ignore"):
        return np.matmul(a, b)


@pytest.mark.parametrize("dtype", dtype_params(BOOL + INTS + FLOATS + X64_INTS + X64_FLOATS))
def test_matmul_dtypes_and_shapes(request, dtype):
    use_dtype(request, dtype)
    jitted = ember.jit(jnp.matmul)
    for sa, sb in MATMUL_SHAPES:
        a, b = _operands(sa, sb, dtype)
        out = assert_eager_jit_numpy(jnp.matmul, _np_matmul, a, b, jitted=jitted,
                                     ignore_zero_sign=True, **_tol(dtype))
        assert out.dtype == dtype


def test_matmul_operator_and_wraparound():
    a = np.full((2, 3), 2**30, np.int32)
    b = np.full((3, 2), 2, np.int32)
    out = ember.jit(lambda x, y: x @ y)(a, b)
    # 3 * 2**31 wraps to 2**31 (mod 2**32) = INT_MIN.
    assert np.asarray(out).tolist() == [[-2**31] * 2] * 2
    assert np.array_equal(np.asarray(jnp.asarray(a) @ b), _np_matmul(a, b))


def test_matmul_mixed_int8_float32_promotes():
    a = sample((3, 4), np.int8, RNG)
    b = sample((4, 5), np.float32, RNG, edges=np.array([]))
    out = assert_eager_jit_numpy(jnp.matmul, lambda x, y: np.matmul(x.astype(np.float32), y),
                                 a, b, rtol=1e-5, atol=1e-3)
    assert out.dtype == np.float32
    jaxpr = str(ember.make_jaxpr(jnp.matmul)(a, b))
    assert "convert_element_type" in jaxpr and "preferred_element_type=float32" in jaxpr


def test_matmul_errors():
    with pytest.raises(ValueError):
        jnp.matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError):
        jnp.matmul(np.ones(()), np.ones((2,)))
    with pytest.raises(ValueError):
        jnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2)))


def test_dot_golden_and_params():
    x, y = np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32)
    assert str(ember.make_jaxpr(lambda a, b: a @ b)(x, y)) == (
        "{ lambda ; a:f32[2,3] b:f32[3,4]. let\n"
        "    c:f32[2,4] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] a b\n"
        "  in (c,) }")
    text = str(ember.make_jaxpr(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))))(
        np.zeros((2, 3, 4), np.float32), np.zeros((2, 4, 5), np.float32)))
    assert "dimension_numbers=(([2], [1]), ([0], [0]))" in text
    assert "preferred_element_type" not in text and "precision" not in text
    assert "f32[2,3,5]" in text


@pytest.mark.parametrize("dtype", dtype_params([np.dtype(np.int32), np.dtype(np.float32),
                                                np.dtype(np.bool_)]))
def test_lax_dot_general_batch_and_contract(dtype):
    a = sample((2, 3, 4, 5), dtype, RNG, edges=np.array([]))
    b = sample((5, 2, 4, 6), dtype, RNG, edges=np.array([]))
    dn = (((2, 3), (2, 0)), ((0,), (1,)))

    def ref(x, y):
        if np.dtype(dtype).kind == "b":
            return np.einsum("bikl,lbkj->bij", x.astype(np.int64), y.astype(np.int64)) > 0
        with np.errstate(all="ignore"):
            return np.einsum("bikl,lbkj->bij", x, y, dtype=dtype)

    assert_eager_jit_numpy(lambda x, y: lax.dot_general(x, y, dn), ref, a, b,
                           ignore_zero_sign=True, **_tol(dtype))


def test_lax_dot_general_preferred_and_errors():
    a = sample((3, 4), np.int8, RNG)
    b = sample((4, 2), np.int8, RNG)
    out = lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)
    assert out.dtype == np.int32
    assert np.array_equal(np.asarray(out), a.astype(np.int32) @ b.astype(np.int32))
    with pytest.raises(TypeError, match="contracting dimensions"):
        lax.dot_general(np.ones((2, 3)), np.ones((4, 2)), (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="same dtype"):
        lax.dot_general(np.ones((2, 3), np.float32), np.ones((3, 2), np.int32),
                        (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError):
        lax.dot_general(np.ones((2, 3)), np.ones((3, 2)), (((2,), (0,)), ((), ())))
    v = lax.dot(np.ones((2, 3), np.float32), np.ones(3, np.float32),
                precision=lax.Precision.HIGHEST)
    assert np.asarray(v).tolist() == [3.0, 3.0]
    bm = lax.batch_matmul(np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32))
    assert bm.shape == (2, 3, 5)


@pytest.mark.parametrize("dtype", dtype_params([np.dtype(np.int32), np.dtype(np.float32)]))
def test_dot_vdot_inner_outer_tensordot_kron(dtype):
    tol = _tol(dtype)
    cases = [
        (jnp.dot, np.dot, [((7,), (7,)), ((3, 7), (7,)), ((3, 7), (7, 4)), ((2, 3, 4), (5, 4, 6)),
                           ((), (3, 4)), ((3, 4), ())]),
        (jnp.vdot, np.vdot, [((7,), (7,)), ((3, 4), (12,))]),
        (jnp.inner, np.inner, [((7,), (7,)), ((3, 5), (4, 5)), ((2, 3, 4), (4,))]),
        (jnp.outer, np.outer, [((7,), (5,)), ((2, 3), (4,)), ((0,), (3,))]),
        (jnp.tensordot, np.tensordot, [((3, 4, 5), (4, 5, 6)), ((2, 3), (2, 3))]),
        (lambda x, y: jnp.tensordot(x, y, axes=([0, 2], [2, 0])),
         lambda x, y: np.tensordot(x, y, axes=([0, 2], [2, 0])), [((3, 4, 5), (5, 6, 3))]),
        (lambda x, y: jnp.tensordot(x, y, axes=1), lambda x, y: np.tensordot(x, y, axes=1),
         [((3, 4), (4, 5))]),
        (jnp.kron, np.kron, [((2, 3), (4, 5)), ((3,), (2, 2)), ((2,), (3,))]),
        (jnp.vecdot, lambda x, y: np.sum(x * y, axis=-1), [((3, 4), (4,)), ((2, 1, 5), (3, 5))]),
    ]
    for fn, np_fn, shapes in cases:
        for sa, sb in shapes:
            a, b = _operands(sa, sb, dtype)

            def ref(x, y, np_fn=np_fn):
                with np.errstate(all="ignore"):
                    return np_fn(x, y)

            assert_eager_jit_numpy(fn, ref, a, b, ignore_zero_sign=True, **tol)


EINSUMS = [
    ("ij->ji", [(3, 4)]), ("ii->", [(4, 4)]), ("ii->i", [(5, 5)]), ("ij->", [(3, 4)]),
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik",
                                                                   [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(7,), (7,)]), ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik",
                                                          [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 6, 3, 4), (4, 5)]), ("ij...,j->i...", [(3, 4, 2), (4,)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]), ("ijk,ikl,il->j", [(2, 3, 4), (2, 4, 5),
                                                                   (2, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("ba,ab", [(3, 4), (4, 3)]),
    ("iij->j", [(3, 3, 4)]), ("ij,ij->ij", [(3, 4), (3, 4)]), ("i,i,i->i", [(5,), (5,),
                                                                            (5,)]),
    ("...,...->...", [(2, 3), (2, 3)]), ("ij,kj->ik", [(3, 0), (4, 0)]),
    ("...i,...i->...", [(1, 4), (3, 4)]), ("ji", [(3, 4)]),
]


@pytest.mark.parametrize("dtype", dtype_params([np.dtype(np.float32), np.dtype(np.int32)]))
def test_einsum(dtype):
    for spec, shapes in EINSUMS:
        ops = [sample(s, dtype, RNG, low=-5, high=5, edges=np.array([])) for s in shapes]

        def ref(*xs, spec=spec):
            return np.einsum(spec, *xs)

        out = assert_eager_jit_numpy(lambda *xs, spec=spec: jnp.einsum(spec, *xs), ref, *ops,
                                     what=spec, ignore_zero_sign=True, **_tol(dtype))
        assert out.dtype == dtype


def test_einsum_errors_and_promotion():
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError):
        jnp.einsum("ij->iz", np.ones((2, 3)))
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk->ik", np.ones((2, 3)))
    out = jnp.einsum("i,i->", np.ones(3, np.int8), np.ones(3, np.float32))
    assert out.dtype == np.float32 and float(out) == 3.0


def test_diagonal_and_trace():
    from ember.numpy import diagonal, trace
    for shape in [(4, 5), (5, 4), (3, 3), (2, 3, 4), (0, 3)]:
        x = sample(shape, np.float32, RNG)
        for offset in (-4, -1, 0, 1, 2, 6):
            for axes in ((0, 1), (1, 0), (-1, 0)) if len(shape) == 2 else ((0, 2), (2, 1)):
                assert_eager_jit_numpy(lambda v, o=offset, ax=axes: diagonal(v, o, *ax),
                                       lambda v, o=offset, ax=axes: np.diagonal(v, o, *ax), x)
    xi = sample((4, 4), np.int8, RNG)
    out = assert_eager_jit_numpy(lambda v: trace(v), lambda v: np.trace(v, dtype=np.int32), xi)
    assert out.dtype == np.int32
    x3 = sample((2, 3, 3), np.float32, RNG, edges=np.array([]))
    assert_eager_jit_numpy(jnp.linalg.diagonal, lambda v: np.diagonal(v, 0, -2, -1), x3)
    assert_eager_jit_numpy(jnp.linalg.trace, lambda v: np.trace(v, 0, -2, -1), x3, rtol=1e-6)


def test_norms():
    x = sample((3, 4), np.float32, RNG, edges=np.array([]))
    v = sample((33,), np.float32, RNG, edges=np.array([]))
    for o in (None, 1, 2, np.inf, -np.inf, 0, 3, 0.5):
        assert_eager_jit_numpy(lambda a, o=o: jnp.linalg.norm(a, o),
                               lambda a, o=o: np.linalg.norm(a, o), v, rtol=2e-6)
    for o in (None, "fro", 1, -1, np.inf, -np.inf):
        assert_eager_jit_numpy(lambda a, o=o: jnp.linalg.norm(a, o),
                               lambda a, o=o: np.linalg.norm(a, o), x, rtol=2e-6)
        assert_eager_jit_numpy(lambda a, o=o: jnp.linalg.norm(a, o, axis=(1, 0),
                                                              keepdims=True),
                               lambda a, o=o: np.linalg.norm(a, o, axis=(1, 0), keepdims=True),
                               x, rtol=2e-6)
    x3 = sample((2, 3, 4), np.float32, RNG, edges=np.array([]))
    assert_eager_jit_numpy(lambda a: jnp.linalg.norm(a, axis=1, keepdims=True),
                           lambda a: np.linalg.norm(a, axis=1, keepdims=True), x3, rtol=2e-6)
    assert_eager_jit_numpy(lambda a: jnp.linalg.norm(a), lambda a: np.linalg.norm(a), x3,
                           rtol=2e-6)
    assert_eager_jit_numpy(jnp.linalg.vector_norm, lambda a: np.linalg.norm(a.ravel()), x3,
                           rtol=2e-6)
    assert_eager_jit_numpy(lambda a: jnp.linalg.matrix_norm(a, ord=1),
                           lambda a: np.linalg.norm(a, 1, axis=(-2, -1)), x3, rtol=2e-6)
    # Singular-value norms: through the svd primitive, eager and under jit.
    for o in (2, -2, "nuc"):
        np.testing.assert_allclose(np.asarray(jnp.linalg.norm(x, o)), np.linalg.norm(x, o),
                                   rtol=1e-5)
        np.testing.assert_allclose(np.asarray(ember.jit(lambda a, o=o: jnp.linalg.norm(a, o))(x)),
                                   np.linalg.norm(x, o), rtol=1e-5)
    n = jnp.linalg.norm(np.arange(5, dtype=np.int32))
    assert n.dtype == np.float32
    # complex values (staged as JAX: sqrt(sum(real(x * conj(x))))), a list of axes, and
    # the empty vector's inf-norm (0, as JAX's initial=0; NumPy raises)
    z = (x + 1j * x[::-1]).astype(np.complex64)
    for o, ax in ((None, None), (None, 0), (1, 1), (np.inf, [0, 1]), ("fro", (0, 1))):
        assert_eager_jit_numpy(lambda a, o=o, ax=ax: jnp.linalg.norm(a, o, axis=ax),
                               lambda a, o=o, ax=ax: np.linalg.norm(
                                   a, o, axis=None if ax is None else tuple(np.atleast_1d(ax))),
                               z, rtol=2e-6)
    assert float(jnp.linalg.norm(np.zeros(0, np.float32), np.inf)) == 0.0
    with pytest.raises(ValueError, match="Invalid order 'bad' for vector norm"):
        jnp.linalg.norm(v, "bad")
    with pytest.raises(ValueError, match="Invalid order 3 for matrix norm|Invalid order '3'"):
        jnp.linalg.norm(x, 3)


def test_linalg_aliases():
    a = sample((3, 4), np.float32, RNG, edges=np.array([]))
    b = sample((4, 2), np.float32, RNG, edges=np.array([]))
    np.testing.assert_allclose(np.asarray(jnp.linalg.matmul(a, b)), a @ b, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.outer(a[0], b[0])), np.outer(a[0], b[0]))
    np.testing.assert_allclose(np.asarray(jnp.linalg.vecdot(a, a)), np.sum(a * a, -1),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensordot(a, b, axes=1)), a @ b, rtol=1e-6)
    with pytest.raises(ValueError):
        jnp.linalg.outer(a, b)
