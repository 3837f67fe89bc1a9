"""Complex numbers (complex64, complex128) eagerly and under jit, against NumPy and JAX.

Input: arrays with ordinary and edge values (infinite and NaN parts, signed zeros, huge
components). Output: assertions that every op gives NumPy's value and JAX's dtype, that
jit (native CPU code for complex arithmetic and math, the interpreter for the rest)
gives the same, that promotion follows the table JAX 0.10.2 computes, that bad input gets
JAX's error text, and that holomorphic derivatives are the analytic ones.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.hlo import parser, printer
from ember.hlo.builder import Builder
from ember.hlo.shape import Shape

inf, nan = np.inf, np.nan

# ordinary values, then edge values: infinite and NaN parts, signed zeros, huge parts
VALUES = [1 + 2j, -3.5 + 0.25j, 0.5 - 4j, -0.0 + 0j, 0.0 - 0.0j, 2.0 + 0j, 0 + 3j,
          complex(inf, 1), complex(-inf, 0), complex(1, inf), complex(nan, 1), complex(1, nan),
          complex(inf, nan), 1e30 + 1e30j, -2e30 + 5e29j]
UNARY = {
    "exp": (jnp.exp, np.exp), "log": (jnp.log, np.log), "sqrt": (jnp.sqrt, np.sqrt),
    "sin": (jnp.sin, np.sin), "cos": (jnp.cos, np.cos), "tan": (jnp.tan, np.tan),
    "sinh": (jnp.sinh, np.sinh), "cosh": (jnp.cosh, np.cosh), "tanh": (jnp.tanh, np.tanh),
    "arcsin": (jnp.arcsin, np.arcsin), "arccos": (jnp.arccos, np.arccos),
    "arctan": (jnp.arctan, np.arctan), "arcsinh": (jnp.arcsinh, np.arcsinh),
    "arccosh": (jnp.arccosh, np.arccosh), "arctanh": (jnp.arctanh, np.arctanh),
    "expm1": (jnp.expm1, np.expm1), "log1p": (jnp.log1p, np.log1p),
    "negative": (jnp.negative, np.negative), "square": (jnp.square, np.square),
    "conj": (jnp.conj, np.conj), "real": (jnp.real, np.real), "imag": (jnp.imag, np.imag),
    "abs": (jnp.abs, np.abs), "angle": (jnp.angle, np.angle), "sign": (jnp.sign, np.sign),
    "isfinite": (jnp.isfinite, np.isfinite), "isnan": (jnp.isnan, np.isnan),
}


def _rtol(dtype):
    return 2e-6 if np.dtype(dtype) == np.complex64 else 1e-13


def _check(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=_rtol(dtype), atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _ordinary(dtype):
    return np.array(VALUES[:7], dtype)


@pytest.fixture(params=["complex64", "complex128"])
def cdtype(request, x64):
    # (x64 on for both: complex128 needs it, complex64 must not be widened by it)
    return np.dtype(request.param)


def test_unary_ops_match_numpy_eager_and_jit(cdtype):
    z = np.array(VALUES, cdtype)
    names = list(UNARY)
    outs = ember.jit(lambda z: [UNARY[n][0](z) for n in names])(z)
    with np.errstate(all="ignore"):
        for name, got_jit in zip(names, outs):
            want = UNARY[name][1](z)
            if name == "sign":  # NumPy 2's complex sign is z/|z|; nan parts stay nan
                want = np.where(z == 0, 0, z / np.abs(z)).astype(cdtype)
            if name in ("exp", "log", "sqrt", "abs", "conj", "real", "imag", "negative",
                        "isfinite", "isnan"):
                vals = slice(None)  # NumPy's edge values are specified: check them all
            else:
                vals = slice(0, 7)  # branch cuts at infinities differ between libms
            _check(np.asarray(UNARY[name][0](z))[vals], want[vals], cdtype)
            _check(np.asarray(got_jit)[vals], want[vals], cdtype)


def test_abs_and_division_do_not_overflow(cdtype):
    big = np.finfo(np.empty((), cdtype).real.dtype).max / 4
    z = np.array([complex(big, big), complex(-big, 3.0), complex(3e-30, 4e-30)], cdtype)
    w = np.array([complex(big, big), complex(big, -big), complex(1e-30, 1e-30)], cdtype)
    for f in (lambda a, b: (jnp.abs(a), a / b), ember.jit(lambda a, b: (jnp.abs(a), a / b))):
        mag, quot = f(z, w)
        assert np.asarray(mag).dtype == np.abs(z).dtype
        assert np.isfinite(np.asarray(mag)).all() and np.isfinite(np.asarray(quot)).all()
        np.testing.assert_allclose(np.asarray(mag), np.abs(z), rtol=_rtol(cdtype))
        np.testing.assert_allclose(np.asarray(quot), z / w, rtol=_rtol(cdtype))


def test_binary_arithmetic_matches_numpy(cdtype):
    rng = np.random.default_rng(0)
    for shape in [(), (0,), (5,), (3, 4)]:
        a = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(cdtype)
        b = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(cdtype)

        def f(a, b):
            return [a + b, a - b, a * b, a / b, a ** b, a ** 2, a == b, a != a, a < b,
                    jnp.where(jnp.real(a) > 0, a, b)]

        want = [a + b, a - b, a * b, a / b, a ** b, a ** 2, a == b, a != a,
                # NumPy's lexicographic order (jnp.less as JAX: real parts, then imaginary)
                (a.real < b.real) | ((a.real == b.real) & (a.imag < b.imag)),
                np.where(a.real > 0, a, b)]
        for got in (f(a, b), ember.jit(f)(a, b)):
            for g, w in zip(got, want):
                _check(g, np.asarray(w), cdtype)


def test_lexicographic_ordering_ties_on_real_parts():
    z = np.array([1 + 2j, 1 - 1j, 0 + 5j, 1 + 2j], np.complex64)
    w = np.array([1 + 3j, 1 - 2j, 0 + 5j, 0 + 9j], np.complex64)
    for op, npop in [(jnp.less, np.less), (jnp.less_equal, np.less_equal),
                     (jnp.greater, np.greater), (jnp.greater_equal, np.greater_equal)]:
        np.testing.assert_array_equal(np.asarray(op(z, w)), npop(z, w))
        np.testing.assert_array_equal(np.asarray(ember.jit(op)(z, w)), npop(z, w))


def test_reductions_and_products_match_numpy(cdtype):
    rng = np.random.default_rng(1)
    a = (rng.normal(size=(3, 5)) + 1j * rng.normal(size=(3, 5))).astype(cdtype)
    b = (rng.normal(size=(5, 2)) + 1j * rng.normal(size=(5, 2))).astype(cdtype)
    v = a[0]

    def f(a, b, v):
        return [jnp.sum(a), jnp.sum(a, axis=1), jnp.prod(a, axis=0), jnp.mean(a),
                jnp.max(v), jnp.min(v), a @ b, jnp.dot(a, b), jnp.einsum("ij,jk->ik", a, b),
                jnp.vdot(v, v), jnp.cumsum(v), jnp.sum(a[:0], axis=0)]

    want = [a.sum(), a.sum(1), a.prod(0), a.mean(), v.max(), v.min(), a @ b, a @ b, a @ b,
            np.vdot(v, v), np.cumsum(v), a[:0].sum(0)]
    for got in (f(a, b, v), ember.jit(f)(a, b, v)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=10 * _rtol(cdtype), atol=1e-12)
            assert np.asarray(g).dtype == cdtype


def test_parts_conj_and_complex_constructor(cdtype):
    z = _ordinary(cdtype)
    part = np.empty((), cdtype).real.dtype
    x, y = z.real.copy(), z.imag.copy()
    arr = jnp.asarray(z)

    def f(z, x, y):
        return [lax.real(z), lax.imag(z), lax.conj(z), lax.complex(x, y), lax.conj(x),
                jnp.conjugate(z), z.real, z.imag, z.conj(), jnp.angle(z, deg=True)]

    want = [z.real, z.imag, np.conj(z), x + 1j * y, x.astype(cdtype), np.conj(z), z.real,
            z.imag, np.conj(z), np.angle(z, deg=True)]
    for got in (f(arr, x, y), ember.jit(f)(arr, x, y)):
        for g, w in zip(got, want):
            _check(g, np.asarray(w, dtype=np.asarray(w).dtype), cdtype)
    assert np.asarray(jnp.abs(arr)).dtype == part
    # complex(x, y) builds the parts one by one: an infinite y is not x + inf * 1j's NaN
    c = lax.complex(np.array([2.0], part), np.array([inf], part))
    assert np.asarray(c)[0].real == 2.0 and np.asarray(c)[0].imag == inf
    assert np.asarray(ember.jit(lax.complex)(np.array([2.0], part),
                                             np.array([inf], part)))[0].real == 2.0


def test_real_dtypes_through_the_complex_functions():
    x = jnp.array([1.5, -2.0], jnp.float32)
    assert np.asarray(jnp.real(x)).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(jnp.imag(x)), [0, 0])
    np.testing.assert_array_equal(np.asarray(jnp.conj(x)), [1.5, -2.0])
    np.testing.assert_allclose(np.asarray(jnp.angle(x)), [0, np.pi], rtol=1e-6)
    c = lax.conj(x)  # lax.conj of a real value is complex, as JAX's
    assert np.asarray(c).dtype == np.complex64
    assert jnp.iscomplexobj(jnp.asarray(1j)) and not jnp.iscomplexobj(x)
    assert jnp.isrealobj(x) and not jnp.isrealobj(np.ones(2, np.complex64))


# JAX 0.10.2 with x64: jnp.add(a, b) for a of each kind and b complex64, complex128 or a
# Python complex: (a, b, result dtype, result weak_type). Arrays are strongly typed; int,
# float and complex are Python scalars (weak).
PROMOTION = [
    ("bool", "complex64", "complex64", False), ("bool", "complex128", "complex128", False),
    ("bool", "complex", "complex128", True), ("uint8", "complex64", "complex64", False),
    ("uint8", "complex128", "complex128", False), ("uint8", "complex", "complex128", True),
    ("int32", "complex64", "complex64", False), ("int32", "complex128", "complex128", False),
    ("int32", "complex", "complex128", True), ("int64", "complex64", "complex64", False),
    ("int64", "complex128", "complex128", False), ("int64", "complex", "complex128", True),
    ("float16", "complex64", "complex64", False),
    ("float16", "complex128", "complex128", False), ("float16", "complex", "complex64", False),
    ("float32", "complex64", "complex64", False),
    ("float32", "complex128", "complex128", False), ("float32", "complex", "complex64", False),
    ("float64", "complex64", "complex128", False),
    ("float64", "complex128", "complex128", False),
    ("float64", "complex", "complex128", False), ("complex64", "complex64", "complex64", False),
    ("complex64", "complex128", "complex128", False),
    ("complex64", "complex", "complex64", False),
    ("complex128", "complex64", "complex128", False),
    ("complex128", "complex128", "complex128", False),
    ("complex128", "complex", "complex128", False), ("int", "complex64", "complex64", False),
    ("int", "complex128", "complex128", False), ("int", "complex", "complex128", True),
    ("float", "complex64", "complex64", False), ("float", "complex128", "complex128", False),
    ("float", "complex", "complex128", True), ("complex", "complex64", "complex64", False),
    ("complex", "complex128", "complex128", False), ("complex", "complex", "complex128", True),
]
_PY = {"int": int, "float": float, "complex": complex}


def _operand(kind):
    return _PY[kind](1) if kind in _PY else jnp.ones((2,), kind)


def test_promotion_matches_jax_table(x64):
    for a, b, dtype, weak in PROMOTION:
        for f in (jnp.add, ember.jit(jnp.add)):
            out = f(_operand(a), _operand(b))
            assert (np.asarray(out).dtype.name, bool(out.weak_type)) == (dtype, weak), (a, b)


def test_promotion_without_x64():
    x = jnp.ones(3, jnp.float32)
    assert np.asarray(1j * x).dtype == np.complex64
    assert np.asarray(x + 0j).dtype == np.complex64
    assert np.asarray(jnp.ones(3, jnp.int32) * 1j).dtype == np.complex64
    out = ember.jit(lambda x: x * (2 + 1j))(x)
    np.testing.assert_allclose(np.asarray(out), np.full(3, 2 + 1j), rtol=1e-7)


def test_error_texts_are_jaxs():
    x = jnp.ones(2, jnp.float32)
    z = jnp.ones(2, jnp.complex64)
    cases = [
        (lambda: lax.real(x), "real does not accept dtype float32. Accepted dtypes are "
         "subtypes of complexfloating."),
        (lambda: lax.imag(x), "imag does not accept dtype float32. Accepted dtypes are "
         "subtypes of complexfloating."),
        (lambda: lax.complex(x, z), "complex does not accept dtype complex64 at position 1. "
         "Accepted dtypes at position 1 are subtypes of float32, float64."),
        (lambda: lax.complex(x.astype(jnp.float16), x.astype(jnp.float16)),
         "complex does not accept dtype float16 at position 0. Accepted dtypes at position 0 "
         "are subtypes of float32, float64."),
        (lambda: lax.lt(z, z), "lt does not accept dtype complex64 at position 0. Accepted "
         "dtypes at position 0 are subtypes of integer, floating, bool."),
    ]
    for fn, text in cases:
        with pytest.raises(TypeError) as e:
            fn()
        assert str(e.value).startswith(text), str(e.value)


def test_grad_holomorphic_is_the_complex_derivative(cdtype):
    z0 = np.array(0.7 - 1.3j, cdtype)[()]
    cases = [(lambda z: z * z, lambda z: 2 * z), (jnp.sin, np.cos),
             (lambda z: jnp.exp(z) * z, lambda z: np.exp(z) * (1 + z)),
             (lambda z: 1 / z, lambda z: -1 / z ** 2), (jnp.log, lambda z: 1 / z),
             (lambda z: jnp.conj(jnp.conj(z)) ** 3, lambda z: 3 * z ** 2)]
    for f, df in cases:
        for g in (ember.grad(f, holomorphic=True), ember.jit(ember.grad(f, holomorphic=True))):
            got = g(z0)
            assert np.asarray(got).dtype == cdtype
            np.testing.assert_allclose(np.asarray(got), df(z0), rtol=10 * _rtol(cdtype))


def test_grad_of_real_functions_of_complex_inputs():
    # JAX's convention (unconjugated transposes), values read off JAX 0.10.2:
    # grad(abs)(1+1j) = 0.7071-0.7071j, grad(|z|^2)(3-2j) = 6+4j, grad(2 imag z) = -2j
    z0 = np.complex64(1 + 1j)
    np.testing.assert_allclose(np.asarray(ember.grad(jnp.abs)(z0)),
                               0.70710677 - 0.70710677j, rtol=1e-6)
    g = ember.grad(lambda z: jnp.real(z * jnp.conj(z)))(np.complex64(3 - 2j))
    np.testing.assert_allclose(np.asarray(g), 6 + 4j, rtol=1e-6)
    g = ember.grad(lambda z: jnp.imag(z) * 2.0)(np.complex64(3 - 2j))
    np.testing.assert_allclose(np.asarray(g), -2j, rtol=1e-6)
    # abs at 0: a zero gradient, not NaN
    assert np.asarray(ember.grad(jnp.abs)(np.complex64(0))) == 0


def test_jacobians_holomorphic():
    z = jnp.array([1 + 2j, 3j, -0.5 + 0j], jnp.complex64)

    def f(z):
        return z * z

    want = np.diag(2 * np.asarray(z))
    for jac in (ember.jacfwd, ember.jacrev):
        got = jac(f, holomorphic=True)(z)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
        assert np.asarray(got).dtype == np.complex64


def test_holomorphic_error_texts():
    x = np.float32(1.0)
    z = np.complex64(1j)
    cases = [
        (lambda: ember.grad(lambda z: z * z)(z), "grad requires real-valued outputs (output "
         "dtype that is a sub-dtype of np.floating), but got complex64. For holomorphic "
         "differentiation, pass holomorphic=True."),
        (lambda: ember.grad(lambda z: z * z, holomorphic=True)(x), "grad with holomorphic=True"
         " requires inputs with complex dtype, but got float32."),
        (lambda: ember.grad(jnp.abs, holomorphic=True)(z), "grad with holomorphic=True "
         "requires outputs with complex dtype, but got float32."),
        (lambda: ember.jacfwd(lambda z: z)(jnp.ones(2, jnp.complex64)), "jacfwd requires "
         "real-valued inputs (input dtype that is a sub-dtype of np.floating), but got "
         "complex64."),
        (lambda: ember.jacfwd(lambda z: z, holomorphic=True)(jnp.ones(2)), "jacfwd with "
         "holomorphic=True requires inputs with complex dtype, but got float32."),
        (lambda: ember.jacrev(lambda z: z, holomorphic=True)(jnp.ones(2)), "jacrev with "
         "holomorphic=True requires inputs with complex dtype, but got float32."),
        (lambda: ember.jacrev(lambda z: jnp.abs(z), holomorphic=True)(
            jnp.ones(2, jnp.complex64)), "jacrev with holomorphic=True requires outputs with "
         "complex dtype, but got float32."),
        (lambda: ember.jacrev(lambda z: z)(jnp.ones(2, jnp.complex64)), "jacrev requires "
         "real-valued outputs"),
    ]
    for fn, text in cases:
        with pytest.raises(TypeError) as e:
            fn()
        assert str(e.value).startswith(text), str(e.value)


def test_linear_rules_of_the_parts():
    z = jnp.array([1 + 2j, -3j], jnp.complex64)
    t = jnp.array([0.5 - 1j, 2 + 0j], jnp.complex64)
    for f, want in [(jnp.real, np.real), (jnp.imag, np.imag), (jnp.conj, np.conj)]:
        _, tan = ember.jvp(f, (z,), (t,))
        np.testing.assert_allclose(np.asarray(tan), want(np.asarray(t)))
    x, y = jnp.array([1.0, 2.0]), jnp.array([3.0, -1.0])
    _, tan = ember.jvp(lax.complex, (x, y), (y, x))
    np.testing.assert_allclose(np.asarray(tan), np.asarray(y) + 1j * np.asarray(x))
    # JAX's (unconjugated) transposes: real^T c = c + 0j, imag^T c = -c j, complex^T
    ct = jnp.array([1.0, -2.0])
    (r,) = ember.linear_transpose(jnp.real, z)(ct)
    (i,) = ember.linear_transpose(jnp.imag, z)(ct)
    np.testing.assert_allclose(np.asarray(r), [1, -2])
    np.testing.assert_allclose(np.asarray(i), [-1j, 2j])
    cx, cy = ember.linear_transpose(lax.complex, x, y)(t)
    np.testing.assert_allclose(np.asarray(cx), [0.5, 2])
    np.testing.assert_allclose(np.asarray(cy), [1, 0])
    (cc,) = ember.linear_transpose(jnp.conj, z)(t)
    np.testing.assert_allclose(np.asarray(cc), np.conj(np.asarray(t)))


def test_vmap_of_the_parts():
    z = jnp.array([[1 + 2j, 3j], [-1 + 0j, 2 - 2j]], jnp.complex64)
    out = ember.vmap(lambda r: (jnp.real(r), jnp.imag(r), jnp.conj(r), jnp.abs(r)),
                     in_axes=1)(z)
    zn = np.asarray(z).T
    for g, w in zip(out, (zn.real, zn.imag, np.conj(zn), np.abs(zn))):
        np.testing.assert_allclose(np.asarray(g), w)
    c = ember.vmap(lax.complex, in_axes=(0, None))(jnp.array([1.0, 2.0]), jnp.float32(5))
    np.testing.assert_allclose(np.asarray(c), [1 + 5j, 2 + 5j])


def test_hlo_text_of_complex_values_round_trips():
    b = Builder("cx")
    p = b.parameter(Shape("c128", (2,)))
    k = b.constant(np.array([complex(1.5, -0.0), complex(nan, inf)], np.complex128))
    s = b.add(p, k)
    module = b.build(b.tuple([s, b.unary("abs", s), b.unary("real", s), b.unary("imag", s)]))
    text = printer.print_module(module)
    assert "c128[2]" in text and "constant({(1.5, -0), (nan, inf)})" in text
    assert "f64[2] abs(" in text
    again = parser.parse_module(text)
    val = again.entry.root.operands[0].operands[1].attrs["value"]
    assert val.dtype == np.complex128
    np.testing.assert_array_equal(val.view(np.uint64), k.attrs["value"].view(np.uint64))


def test_numpy_functions_on_complex_values(cdtype):
    z = np.array([1 + 2j, -3.5 + 0.25j, 0.5 - 4j, 2.25 - 1.75j], cdtype)
    m = z.reshape(2, 2)
    edge = np.array([complex(inf, 0), complex(0, -inf), complex(nan, 1), complex(1, nan),
                     1 + 1j], cdtype)
    part = np.empty((), cdtype).real.dtype

    def f(z, m, edge):
        return [jnp.var(z), jnp.std(z), jnp.var(m, axis=0, ddof=1), jnp.linalg.norm(z),
                jnp.linalg.norm(z, 1), jnp.linalg.norm(z, np.inf), jnp.linalg.norm(m),
                jnp.linalg.norm(m, 1), jnp.isclose(z, z * (1 + 1e-7)), jnp.isclose(z, z + 1),
                jnp.isnan(edge), jnp.isinf(edge), jnp.isfinite(edge),
                jnp.nan_to_num(edge), jnp.round(z * 1.37, 1), jnp.rint(z * 1.37)]

    want = [np.var(z), np.std(z), np.var(m, axis=0, ddof=1), np.linalg.norm(z),
            np.linalg.norm(z, 1), np.linalg.norm(z, np.inf), np.linalg.norm(m),
            np.linalg.norm(m, 1), np.ones(4, bool), np.zeros(4, bool), np.isnan(edge),
            np.isinf(edge), np.isfinite(edge), np.nan_to_num(edge),
            np.round(z * np.array(1.37, part), 1), np.rint(z * np.array(1.37, part))]
    for got in (f(z, m, edge), ember.jit(f)(z, m, edge)):
        for i, (g, w) in enumerate(zip(got, want)):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == (w.dtype if w.dtype.kind in "bc" else part), (i, g.dtype)
            np.testing.assert_allclose(g, w, rtol=10 * _rtol(cdtype), err_msg=str(i))
    # the SVD norms take the complex matrix, not its real part
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(jnp.asarray(m), 2)),
                               np.linalg.norm(m, 2), rtol=10 * _rtol(cdtype))


def test_functions_without_a_complex_meaning_raise_jaxs_errors():
    z = jnp.array([1 + 2j, -1j], jnp.complex64)
    cases = [
        (jnp.floor, TypeError, "floor does not accept dtype complex64. Accepted dtypes are "
         "subtypes of floating."),
        (jnp.ceil, TypeError, "ceil does not accept dtype complex64."),
        (jnp.trunc, TypeError, "lt does not accept dtype complex64 at position 0."),
        (jnp.fabs, TypeError, "ufunc 'fabs' does not support complex dtypes"),
        (jnp.argmax, TypeError, "gt does not accept dtype complex64 at position 0."),
        (jnp.argmin, TypeError, "lt does not accept dtype complex64 at position 0."),
        (lambda z: jnp.hypot(z, z), ValueError, "jnp.hypot is not well defined for "
         "complex-valued inputs."),
        (jnp.signbit, ValueError, "jax.numpy.signbit is not well defined for complex64"),
        (lambda z: jnp.clip(z, 0, 1), ValueError, "Clip received a complex value"),
        (lambda z: jnp.ldexp(z, 2), ValueError, "ldexp not supported for input types "
         "(dtype('complex64'), dtype('int32'))"),
        (jnp.isposinf, ValueError, "isposinf/isneginf are not well defined for complex types"),
    ]
    for fn, kind, text in cases:
        for g in (fn, ember.jit(fn)):
            with pytest.raises(kind) as e:
                g(z)
            assert str(e.value).startswith(text), str(e.value)


def test_holomorphic_grads_match_finite_differences(x64):
    z0, h = np.complex128(0.3 + 0.4j), 1e-6
    names = ["sqrt", "tan", "tanh", "log1p", "expm1", "arcsin", "arccos", "arctan", "arcsinh",
             "arccosh", "arctanh", "sinh", "cosh", "reciprocal", "exp2", "log2", "log10",
             "sin", "cos", "exp", "log", "square"]
    fns = [getattr(jnp, n) for n in names] + [lax.rsqrt, lambda z: z ** (2 + 1j)]
    grads = ember.jit(lambda z: [ember.grad(f, holomorphic=True)(z) for f in fns])(z0)
    for f, g in zip(fns, grads):
        num = (np.asarray(f(z0 + h)) - np.asarray(f(z0 - h))) / (2 * h)
        assert abs(np.asarray(g) - num) < 1e-6 * abs(num), (f, g, num)
        assert np.asarray(ember.grad(f, holomorphic=True)(z0)) == pytest.approx(
            complex(np.asarray(g)), rel=1e-12)


def test_control_flow_carries_indexing_and_sort():
    x, y = np.linspace(-2, 1, 7), np.linspace(-1.5, 1.5, 5)
    c = (x[None, :] + 1j * y[:, None]).astype(np.complex64)

    def mandel(c):
        def body(i, s):
            z, n = s
            z = z * z + c
            return z, n + (jnp.abs(z) <= 2).astype(jnp.int32)
        init = (jnp.zeros_like(c), jnp.zeros(c.shape, jnp.int32))
        return lax.fori_loop(0, 20, body, init)[1]

    z, n = np.zeros_like(c), np.zeros(c.shape, np.int32)
    with np.errstate(all="ignore"):
        for _ in range(20):
            z = z * z + c
            n += np.abs(z) <= 2
    np.testing.assert_array_equal(np.asarray(ember.jit(mandel)(c)), n)
    zz = c.ravel()

    def f(z, p):
        carry, ys = lax.scan(lambda a, v: (a * v, a), jnp.complex64(1), z[:5])
        grown = lax.while_loop(lambda s: jnp.abs(s) < 100, lambda s: s * (1 + 1j),
                               jnp.complex64(1))
        branch = lax.cond(p, lambda z: z * 1j, jnp.conj, z[:2])
        return [carry, ys, grown, branch, z[jnp.array([3, 1, 0])],
                z[:4].at[jnp.array([0, 0, 2])].add(1j), jnp.sort(z)]

    want = [np.prod(zz[:5]), np.cumprod(np.r_[1, zz[:4]]), -128j, zz[:2] * 1j, zz[[3, 1, 0]],
            zz[:4] + np.array([2j, 0, 1j, 0]), np.sort(zz)]
    for got in (f(jnp.asarray(zz), True), ember.jit(f)(zz, True)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5)
            assert np.asarray(g).dtype == np.complex64


def test_conversions_from_complex():
    z = np.array([1 + 2j, 0 + 1j, -2.7 - 1j, 0j], np.complex64)
    # astype(bool) is z != 0 (both parts); a real type takes the real part, with JAX's
    # warnings (DeprecationWarning from astype, ComplexWarning from lax)
    for f in (lambda z: jnp.asarray(z).astype(bool), ember.jit(lambda z: z.astype(bool))):
        np.testing.assert_array_equal(np.asarray(f(z)), [True, True, True, False])
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes"):
        out = jnp.asarray(z).astype(jnp.float32)
    np.testing.assert_array_equal(np.asarray(out), z.real)
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        out = ember.jit(lambda z: lax.convert_element_type(z, jnp.int32))(z)
    np.testing.assert_array_equal(np.asarray(out), [1, 0, -2, 0])
    with pytest.warns(np.exceptions.ComplexWarning):
        text = ember.jit(lambda z: lax.convert_element_type(z, jnp.float32)).lower(z).as_text()
    assert "f32[4] real(" in text and "convert" not in text
    # real to complex: a zero imaginary part
    x = np.array([1.5, -0.0], np.float32)
    for f in (lambda x: jnp.asarray(x).astype(jnp.complex64),
              ember.jit(lambda x: x.astype(jnp.complex64))):
        np.testing.assert_array_equal(np.asarray(f(x)), x.astype(np.complex64))


def test_complex_arithmetic_compiles_and_a_complex_sort_runs_on_the_interpreter(monkeypatch):
    monkeypatch.setenv("EMBER_BACKEND", "cpu")  # (the CPU backend's choice is the subject)
    z = jnp.array([1 + 2j], jnp.complex64)
    compiled = ember.jit(lambda z: z * z).lower(z).compile()
    assert compiled._compiled.backend == "cpu"
    np.testing.assert_allclose(np.asarray(compiled(z)), [-3 + 4j])
    # the refusal is per opcode: a complex sort has no native kernel yet
    compiled = ember.jit(jnp.sort).lower(z).compile()
    assert compiled._compiled.backend == "interpreter"
    with pytest.raises(ValueError, match="sort on complex values"):
        compiled._compiled.cpu_executable()


def test_sort_is_numpys_lexicographic_order_with_nans_last():
    z = np.array([complex(nan, 0), 1 + 2j, complex(1, nan), 1 - 1j, -0.0 + 0j, 0j,
                  complex(inf, 1), 1 + 2j], np.complex64)
    for sort, argsort in ((jnp.sort, jnp.argsort), (ember.jit(jnp.sort), ember.jit(jnp.argsort))):
        np.testing.assert_array_equal(np.asarray(sort(z)), np.sort(z))
        np.testing.assert_array_equal(np.asarray(argsort(z)), np.argsort(z, kind="stable"))


def test_lax_conj_of_a_real_value_has_a_positive_zero_imaginary_part():
    x = np.array([1.5, -2.0], np.float32)
    for f in (lax.conj, ember.jit(lax.conj)):
        out = np.asarray(f(x))
        assert out.dtype == np.complex64
        np.testing.assert_array_equal(out.real, x)
        assert not np.signbit(out.imag).any()
