"""custom_jvp, custom_vjp, custom_gradient, lax.custom_linear_solve and lax.custom_root.

Checks (issue 19): a numerically stable log1pexp (custom_jvp) whose gradient is finite where
the naive one is nan, a clip-gradient (custom_vjp), nondiff_argnums, pytrees in and out,
grad of grad, jit in both orders, vmap, the make_jaxpr text (JAX 0.10.2's), JAX's error
texts for bad rules, and the implicit solvers against analytic derivatives (Newton's sqrt
with custom_root; a linear solve's gradients against A^-T).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax
from ember.errors import UnexpectedTracerError
from tests.ops.ad_checks import check_grads

# -- fixtures: the functions of JAX's custom-derivatives tutorial -------------------------------


@ember.custom_jvp
def log1pexp(x):
    return jnp.log(1. + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return log1pexp(x), x_dot * (1. - 1. / (1. + jnp.exp(x)))


@ember.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def _sigmoid(x):
    return 1. / (1. + np.exp(-x))


# -- custom_jvp ---------------------------------------------------------------------------------

def test_log1pexp_gradient_is_finite_where_the_naive_one_is_nan():
    naive = ember.grad(lambda x: jnp.log(1. + jnp.exp(x)))(100.)
    assert np.isnan(float(naive))
    assert float(ember.grad(log1pexp)(100.)) == 1.0
    for fn in (ember.jit(ember.grad(log1pexp)), ember.grad(ember.jit(log1pexp))):
        np.testing.assert_allclose(fn(np.float32([-3., 0., 2.5, 100.])[2]), _sigmoid(2.5),
                                   rtol=1e-6)
        assert float(fn(100.)) == 1.0


def test_custom_jvp_values_eager_jit_and_vmap():
    xs = np.array([-2., 0., 0.5, 3.], np.float32)
    want = np.log1p(np.exp(xs))
    np.testing.assert_allclose(log1pexp(xs), want, rtol=1e-6)
    np.testing.assert_allclose(ember.jit(log1pexp)(xs), want, rtol=1e-6)
    np.testing.assert_allclose(ember.vmap(log1pexp)(xs), want, rtol=1e-6)
    np.testing.assert_allclose(ember.vmap(ember.grad(log1pexp))(xs), _sigmoid(xs), rtol=1e-6)
    np.testing.assert_allclose(ember.grad(lambda v: ember.vmap(log1pexp)(v).sum())(xs),
                               _sigmoid(xs), rtol=1e-6)
    p, t = ember.jvp(log1pexp, (xs,), (np.ones_like(xs),))
    np.testing.assert_allclose(t, _sigmoid(xs), rtol=1e-6)
    # rank 0 and size 0
    assert ember.jit(ember.grad(log1pexp))(0.).shape == ()
    assert ember.jvp(log1pexp, (np.zeros(0, np.float32),),
                     (np.zeros(0, np.float32),))[1].shape == (0,)


def test_custom_jvp_grad_of_grad_uses_the_rule():
    # d/dx sigmoid(x) = sigmoid(x) (1 - sigmoid(x)); the rule's tangent is differentiated
    for x in (-1.5, 0.3, 40.):
        s = _sigmoid(x)
        np.testing.assert_allclose(ember.grad(ember.grad(log1pexp))(x), s * (1 - s),
                                   rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(ember.jit(ember.grad(ember.grad(log1pexp)))(0.3),
                               _sigmoid(0.3) * (1 - _sigmoid(0.3)), rtol=1e-5)


def test_the_rule_not_the_body_gives_the_derivative():
    @ember.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 3. * t[0]))   # deliberately not cos
    assert float(ember.grad(f)(0.7)) == 3.
    assert float(ember.jit(ember.grad(f))(0.7)) == 3.
    np.testing.assert_allclose(f(0.7), np.sin(0.7), rtol=1e-6)


def test_check_grads_on_custom_jvp(x64):
    check_grads(log1pexp, [np.array([-1.3, 0.2, 2.0])], order=2)
    check_grads(log1pexp, [np.array([0.4, -2.0])], order=1, use_jit=True)


def test_defjvps_and_pytrees():
    @ember.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvps(lambda x_dot, out, x, y: jnp.cos(x) * x_dot * y,
              lambda y_dot, out, x, y: jnp.sin(x) * y_dot)
    g = ember.value_and_grad(f, (0, 1))(1., 2.)
    np.testing.assert_allclose(g[0], np.sin(1.) * 2, rtol=1e-6)
    np.testing.assert_allclose(g[1], (np.cos(1.) * 2, np.sin(1.)), rtol=1e-6)

    @ember.custom_jvp
    def h(d):
        return {"s": d["a"] * d["b"], "t": (d["a"], 2. * d["b"])}

    @h.defjvp
    def h_jvp(primals, tangents):
        (d,), (t,) = primals, tangents
        out = h(d)
        return out, {"s": t["a"] * d["b"] + d["a"] * t["b"], "t": (t["a"], 2. * t["b"])}

    def loss(d):
        out = h(d)
        return out["s"] + out["t"][0] + 3. * out["t"][1]

    got = ember.jit(ember.grad(loss))({"a": 2., "b": 5.})
    assert float(got["a"]) == 6. and float(got["b"]) == 8.


def test_nondiff_argnums_custom_jvp():
    @functools.partial(ember.custom_jvp, nondiff_argnums=(0,))
    def apply(fn, x):
        return fn(x)

    @apply.defjvp
    def apply_jvp(fn, primals, tangents):
        x, = primals
        t, = tangents
        return apply(fn, x), 10. * t

    assert apply(jnp.sin, 0.5) == pytest.approx(np.sin(0.5), rel=1e-6)
    assert float(ember.grad(lambda x: apply(jnp.sin, x))(0.5)) == 10.
    assert float(ember.jit(ember.grad(lambda x: apply(jnp.sin, x)))(0.5)) == 10.
    with pytest.raises(TypeError, match="Can't use ``defjvps`` with ``nondiff_argnums``."):
        apply.defjvps(None, None)

    # an array nondiff argument may be a tracer: it is a constant of the differentiation
    @functools.partial(ember.custom_jvp, nondiff_argnums=(0,))
    def scale(k, x):
        return k * x

    scale.defjvp(lambda k, p, t: (scale(k, p[0]), k * t[0] * 10.))
    assert float(ember.grad(lambda k: scale(k, 2.))(3.)) == 0.
    np.testing.assert_allclose(ember.grad(lambda k, x: scale(k, x), (0, 1))(3., 2.), (0., 30.))
    assert float(ember.grad(lambda k: scale(k, k))(3.)) == 30.
    assert float(ember.jit(lambda k, x: ember.grad(scale, 1)(k, x))(3., 2.)) == 30.
    ks = np.float32([1., 2., 3.])
    np.testing.assert_allclose(ember.vmap(ember.grad(scale, 1), (0, None))(ks, 2.), ks * 10.)


def test_custom_jvp_keyword_arguments_and_integer_inputs():
    @ember.custom_jvp
    def f(x, n):
        return x * n

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, n), (tx, tn) = primals, tangents
        assert tn.dtype == ember.float0
        return f(x, n), tx * n

    assert float(ember.grad(lambda x: f(x, n=3))(2.)) == 3.


def test_make_jaxpr_text_matches_jax_0_10_2():
    want = """{ lambda ; a:f32[]. let
    b:f32[] = custom_jvp_call[
      name=log1pexp
      call_jaxpr={ lambda ; c:f32[]. let
          d:f32[] = exp c
          e:f32[] = add 1.0:f32[] d
          f:f32[] = log e
        in (f,) }
      jvp=log1pexp_jvp
      symbolic_zeros=False
    ] a
  in (b,) }"""
    assert str(ember.make_jaxpr(log1pexp)(1.)) == want
    want_vjp = """{ lambda ; a:f32[]. let
    b:f32[] = custom_vjp_call[
      name=clip_gradient
      bwd=_clip_bwd
      call_jaxpr={ lambda ; c:f32[] d:f32[] e:f32[]. let  in (e,) }
      fwd=_clip_fwd
      symbolic_zeros=False
    ] -0.5:f32[] 0.5:f32[] a
  in (b,) }"""
    assert str(ember.make_jaxpr(lambda x: clip_gradient(-0.5, 0.5, x))(1.)) == want_vjp


def test_custom_jvp_rule_errors():
    @ember.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function f using "
                       "defjvp."):
        f(1.)
    f.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="must produce a pair"):
        ember.jvp(f, (1.,), (1.,))
    f.defjvp(lambda p, t: (p[0], (t[0], t[0])))
    with pytest.raises(TypeError, match="equal container \\(pytree\\) structures"):
        ember.jvp(f, (1.,), (1.,))
    f.defjvp(lambda p, t: (p[0], jnp.ones(3)))
    with pytest.raises(TypeError, match=r"Expected f32\[\] \(tangent type of f32\[\]\) but got "
                       r"f32\[3\]"):
        ember.grad(f)(1.)


def test_closing_over_a_differentiated_value_is_an_error():
    def outer(w):
        @ember.custom_jvp
        def f(x):
            return jnp.sin(x) * w

        f.defjvp(lambda p, t: (f(p[0]), t[0]))
        return f(2.)

    with pytest.raises(TypeError, match="closed-over value"):
        ember.grad(outer)(3.)
    # closing over a jit tracer is fine: it is a constant of the differentiation
    got = ember.jit(lambda w: ember.grad(lambda x: _closure(w, x))(2.))(3.)
    assert float(got) == 3.


def _closure(w, x):
    @ember.custom_jvp
    def f(y):
        return y * w

    f.defjvp(lambda p, t: (f(p[0]), t[0] * w))
    return f(x)


# -- custom_vjp ---------------------------------------------------------------------------------

def test_clip_gradient():
    def loss(x):
        return 3. * clip_gradient(-0.5, 0.5, x)

    assert float(loss(2.)) == 6.
    assert float(ember.grad(loss)(2.)) == 0.5
    assert float(ember.jit(ember.grad(loss))(2.)) == 0.5
    assert float(ember.grad(ember.jit(loss))(2.)) == 0.5
    xs = np.array([1., -2., 0.], np.float32)
    got = ember.grad(lambda v: jnp.sum(clip_gradient(-0.5, 0.5, v) * np.float32([3., .2, -2.])))
    np.testing.assert_allclose(got(xs), [0.5, 0.2, -0.5])
    np.testing.assert_allclose(ember.jit(got)(xs), [0.5, 0.2, -0.5])


def test_custom_vjp_pytrees_residuals_and_grad_of_grad():
    @ember.custom_vjp
    def f(d):
        return {"p": jnp.sin(d["x"]) * d["y"]}

    def f_fwd(d):
        return f(d), (jnp.cos(d["x"]), jnp.sin(d["x"]), d["y"])

    def f_bwd(res, ct):
        c, s, y = res
        return ({"x": c * y * ct["p"], "y": s * ct["p"]},)

    f.defvjp(f_fwd, f_bwd)
    d = {"x": 0.7, "y": 2.}
    g = ember.grad(lambda d: f(d)["p"])(d)
    np.testing.assert_allclose([g["x"], g["y"]], [np.cos(.7) * 2, np.sin(.7)], rtol=1e-6)
    g = ember.jit(ember.grad(lambda d: f(d)["p"]))(d)
    np.testing.assert_allclose([g["x"], g["y"]], [np.cos(.7) * 2, np.sin(.7)], rtol=1e-6)
    # grad of grad differentiates fwd and bwd (JAX's semantics): d2/dx2 sin(x) y
    h = ember.grad(lambda x: ember.grad(lambda x: f({"x": x, "y": 2.})["p"])(x))(0.7)
    np.testing.assert_allclose(h, -np.sin(.7) * 2, rtol=1e-5)


def test_custom_vjp_nondiff_argnums_and_vjp():
    @ember.custom_vjp
    def scale(k, x):
        return k * x

    scale.defvjp(lambda k, x: (scale(k, x), None), lambda k, res, g: (k * 10. * g,))
    sc = ember.custom_vjp(lambda k, x: k * x, nondiff_argnums=(0,))
    sc.defvjp(lambda k, x: (k * x, None), lambda k, res, g: (k * 10. * g,))
    assert float(ember.grad(lambda x: sc(2., x))(1.)) == 20.
    out, f_vjp = ember.vjp(lambda x: sc(2., x), np.float32([1., 2.]))
    np.testing.assert_allclose(f_vjp(np.float32([1., 1.]))[0], [20., 20.])
    with pytest.raises(UnexpectedTracerError, match="nondiff_argnums"):
        ember.jit(lambda k, x: sc(k, x))(2., 1.)


def test_custom_vjp_under_forward_mode_is_jax_error():
    msg = "can't apply forward-mode autodiff \\(jvp\\) to a custom_vjp function."
    f = lambda x: clip_gradient(-1., 1., x)  # noqa: E731
    with pytest.raises(TypeError, match=msg):
        ember.jvp(f, (1.,), (1.,))
    with pytest.raises(TypeError, match=msg):
        ember.jit(lambda x: ember.jvp(f, (x,), (1.,)))(1.)
    with pytest.raises(TypeError, match=msg):
        ember.linearize(f, 1.)[1](1.)
    with pytest.raises(TypeError, match=msg):
        ember.jacfwd(f)(1.)


def test_custom_vjp_bwd_errors():
    @ember.custom_vjp
    def g(x, y):
        return x * y

    with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function g using "
                       "defvjp."):
        g(1., 2.)
    g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, c: (r[1] * c,))
    with pytest.raises(TypeError, match=r"Custom VJP bwd rule must produce an output with the "
                       r"same container \(pytree\) structure as the args tuple of the primal "
                       r"function, and in particular must produce a tuple of length equal to "
                       r"the number of arguments to the primal function, but got bwd output "
                       r"structure PyTreeDef\(\(\*,\)\) for primal input structure "
                       r"PyTreeDef\(\(\*, \*\)\)."):
        ember.grad(g)(1., 2.)
    g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, c: (r[1] * c, jnp.ones(3)))
    with pytest.raises(ValueError, match=r"at output\[1\] the bwd rule produced an output of "
                       r"type float32\[3\] corresponding to an input of type float32\[\], so "
                       r"the shapes do not match"):
        ember.grad(g)(1., 2.)
    g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, c: [r[1] * c, None])   # a list is fine
    np.testing.assert_allclose(ember.grad(g, (0, 1))(1., 2.), (2., 0.))
    g.defvjp(lambda x, y: x * y, lambda r, c: (c, c))
    with pytest.raises(TypeError, match="Custom VJP fwd rule <lambda> for function g must "
                       "produce a pair"):
        ember.grad(g)(1., 2.)


def test_custom_vjp_closing_over_a_differentiated_value_is_an_error():
    def outer(w):
        @ember.custom_vjp
        def f(x):
            return jnp.sin(x) * w

        f.defvjp(lambda x: (f(x), x), lambda r, g: (100. * g,))
        return f(2.)

    with pytest.raises(TypeError, match="Detected differentiation of a custom_vjp function "
                       "with respect to a closed-over value."):
        ember.grad(outer)(3.)
    np.testing.assert_allclose(ember.jit(outer)(3.), np.sin(2.) * 3., rtol=1e-6)


def test_custom_vjp_vmap():
    xs = np.array([2., -0.1, 0.3], np.float32)
    f = lambda v: clip_gradient(-0.5, 0.5, v)  # noqa: E731
    np.testing.assert_allclose(ember.vmap(f)(xs), xs)
    np.testing.assert_allclose(ember.vmap(ember.grad(lambda v: 4. * f(v)))(xs),
                               [0.5, 0.5, 0.5])
    np.testing.assert_allclose(ember.grad(lambda v: 4. * ember.vmap(f)(v).sum())(xs),
                               [0.5, 0.5, 0.5])

    # an input shared by every example (in_axes None) gets the sum of their cotangents
    @ember.custom_vjp
    def mul(x, w):
        return x * w

    mul.defvjp(lambda x, w: (x * w, (x, w)), lambda r, g: (r[1] * g, 2. * r[0] * g))
    batched = ember.vmap(mul, in_axes=(0, None))
    np.testing.assert_allclose(batched(xs, 3.), xs * 3.)
    gx, gw = ember.grad(lambda x, w: batched(x, w).sum(), (0, 1))(xs, np.float32(3.))
    np.testing.assert_allclose(gx, [3., 3., 3.])
    np.testing.assert_allclose(gw, 2. * xs.sum(), rtol=1e-6)
    gx, gw = ember.jit(ember.grad(lambda x, w: batched(x, w).sum(), (0, 1)))(xs, np.float32(3.))
    np.testing.assert_allclose(gw, 2. * xs.sum(), rtol=1e-6)


def test_custom_jvp_vmap_with_a_shared_operand():
    @ember.custom_jvp
    def f(x, w):
        return jnp.sin(x) * w

    f.defjvp(lambda p, t: (f(*p), 7. * t[0] * p[1] + 5. * t[1]))   # a rule we can recognize
    xs = np.array([0.1, 0.2, 0.3], np.float32)
    batched = ember.vmap(f, in_axes=(0, None))
    np.testing.assert_allclose(batched(xs, 2.), np.sin(xs) * 2., rtol=1e-6)
    gx, gw = ember.grad(lambda x, w: batched(x, w).sum(), (0, 1))(xs, np.float32(2.))
    np.testing.assert_allclose(gx, [14., 14., 14.])
    np.testing.assert_allclose(gw, 15.)
    assert "custom_jvp_call" in str(ember.make_jaxpr(batched)(xs, 2.))


# -- custom_gradient ----------------------------------------------------------------------------

def test_custom_gradient():
    @ember.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)

    assert float(f(3.)) == 9.
    assert float(ember.grad(f)(3.)) == 3.
    assert float(ember.jit(ember.grad(f))(3.)) == 3.
    assert str(ember.make_jaxpr(f)(1.)) == """{ lambda ; a:f32[]. let
    b:f32[] = custom_vjp_call[
      name=wrapped_fun
      bwd=bwd
      call_jaxpr={ lambda ; c:f32[]. let d:f32[] = integer_pow[y=2] c in (d,) }
      fwd=fwd
      symbolic_zeros=False
    ] a
  in (b,) }"""

    @ember.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y, g * x * 100.)

    np.testing.assert_allclose(ember.grad(h, (0, 1))(3., 4.), (4., 300.))


# -- custom_root and custom_linear_solve --------------------------------------------------------

def _newton_sqrt(a):
    def f(x):
        return x * x - a

    def solve(f, x0):
        return lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2. * x), x0)

    return lax.custom_root(f, 1.0, solve, lambda g, y: y / g(1.0))


def test_custom_root_newton_sqrt():
    np.testing.assert_allclose(_newton_sqrt(2.), np.sqrt(2.), rtol=1e-6)
    for fn in (ember.grad(_newton_sqrt), ember.jit(ember.grad(_newton_sqrt))):
        np.testing.assert_allclose(fn(2.), 0.5 / np.sqrt(2.), rtol=1e-6)
    np.testing.assert_allclose(ember.grad(ember.grad(_newton_sqrt))(2.),
                               -0.25 * 2. ** -1.5, rtol=1e-5)
    np.testing.assert_allclose(ember.jvp(_newton_sqrt, (4.,), (1.,))[1], 0.25, rtol=1e-6)


def test_custom_root_check_grads(x64):
    check_grads(_newton_sqrt, [np.array(3.0)], order=2)


def test_custom_root_errors():
    with pytest.raises(TypeError, match=r"solve\(\) output pytree structure must match "
                       r"initial_guess"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x: (x, x), lambda g, y: y)
    with pytest.raises(ValueError, match="has_aux was set to True"):
        lax.custom_root(lambda x: x, 1.0, lambda f, x: x, lambda g, y: y, has_aux=True)


def _jacobi(diag):
    def solve(matvec, r):
        return lax.fori_loop(0, 60, lambda i, x: x + (r - matvec(x)) / diag, jnp.zeros_like(r))
    return solve


def _lsolve(a, b, **kw):
    d = jnp.diagonal(a)
    return lax.custom_linear_solve(lambda x: jnp.dot(a, x), b, _jacobi(d), _jacobi(d), **kw)


_RNG = np.random.default_rng(0)
_A = (_RNG.normal(size=(3, 3)) * 0.3 + 3 * np.eye(3)).astype(np.float32)
_B = _RNG.normal(size=3).astype(np.float32)


def test_custom_linear_solve_values_and_gradients():
    x = np.linalg.solve(_A, _B)
    w = np.linalg.solve(_A.T, np.ones(3))
    np.testing.assert_allclose(_lsolve(_A, _B), x, rtol=1e-5)
    # d sum(A^-1 b)/db = A^-T 1 ; d/dA = -(A^-T 1) x^T
    np.testing.assert_allclose(ember.grad(lambda b: _lsolve(_A, b).sum())(_B), w, rtol=1e-5)
    grad_a = ember.jit(ember.grad(lambda a: _lsolve(a, _B).sum()))
    np.testing.assert_allclose(grad_a(_A), -np.outer(w, x), rtol=1e-5, atol=1e-7)
    dx = ember.jvp(lambda a: _lsolve(a, _B), (_A,), (np.eye(3, dtype=np.float32),))[1]
    np.testing.assert_allclose(dx, -np.linalg.solve(_A, x), rtol=1e-5)


def test_custom_linear_solve_symmetric_aux_and_errors():
    spd = (_A @ _A.T).astype(np.float32)
    d = np.diagonal(spd)

    def cg_ish(matvec, r):   # Richardson iteration, step 1/lambda_max: converges for SPD
        step = 1. / float(np.linalg.eigvalsh(spd).max())
        x = lax.fori_loop(0, 400, lambda i, x: x + step * (r - matvec(x)), jnp.zeros_like(r))
        return x, jnp.sum(jnp.abs(r - matvec(x)))

    f = lambda b: lax.custom_linear_solve(lambda x: jnp.dot(spd, x), b, cg_ish,  # noqa: E731
                                          symmetric=True, has_aux=True)
    x, resid = f(_B)
    np.testing.assert_allclose(x, np.linalg.solve(spd, _B), rtol=1e-4)
    assert float(resid) < 1e-4
    np.testing.assert_allclose(ember.grad(lambda b: f(b)[0].sum())(_B),
                               np.linalg.solve(spd, np.ones(3)), rtol=1e-4)
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode automatic "
                       "differentiation of custom_linear_solve"):
        ember.grad(lambda b: lax.custom_linear_solve(lambda x: jnp.dot(_A, x), b,
                                                     _jacobi(d)).sum())(_B)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x, _B, lambda mv, r: r[:2])


def test_symbolic_zeros():
    from ember.custom_derivatives import CustomVJPPrimal, SymbolicZero
    seen = []

    @ember.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(p, t):
        seen.append([isinstance(v, SymbolicZero) for v in t])
        (x, y), (tx, _) = p, t
        out = tx * y if not isinstance(tx, SymbolicZero) else SymbolicZero(tx.aval)
        return f(x, y), out

    f.defjvp(f_jvp, symbolic_zeros=True)
    assert float(ember.grad(f)(2., 3.)) == 3.
    assert seen == [[False, True]]

    @ember.custom_vjp
    def g(x, y):
        return x * y

    def g_fwd(x, y):
        assert isinstance(x, CustomVJPPrimal)
        seen.append((x.perturbed, y.perturbed))
        return g(x.value, y.value), (x.value, y.value)

    g.defvjp(g_fwd, lambda r, c: (r[1] * c, None), symbolic_zeros=True)
    assert float(ember.grad(g)(2., 3.)) == 3.
    assert seen[-1] == (True, False)


# -- callbacks under differentiation ------------------------------------------------------------

def _np_sin(x):
    return np.sin(x).astype(x.dtype)


def _callback_sin(x):
    return ember.pure_callback(_np_sin, ember.ShapeDtypeStruct(np.shape(x), np.float32), x)


def test_pure_callback_gradient_is_jax_error_and_custom_jvp_fixes_it():
    msg = ("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
           "while taking gradients.")
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        ember.grad(_callback_sin)(np.float32(0.3))
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        ember.jit(ember.grad(_callback_sin))(np.float32(0.3))

    @ember.custom_jvp
    def sin(x):
        return _callback_sin(x)

    sin.defjvp(lambda p, t: (sin(p[0]), jnp.cos(p[0]) * t[0]))
    np.testing.assert_allclose(ember.grad(sin)(np.float32(0.3)), np.cos(0.3), rtol=1e-6)
    np.testing.assert_allclose(ember.jit(ember.grad(sin))(np.float32(0.3)), np.cos(0.3),
                               rtol=1e-6)


def test_debug_print_under_grad_prints_the_primal_once(capsys):
    def f(x):
        ember.debug.print("x={x}", x=x)
        return jnp.sin(x)

    np.testing.assert_allclose(ember.grad(f)(1.0), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(ember.jit(ember.grad(f))(2.0), np.cos(2.0), rtol=1e-6)
    seen = []
    ember.jvp(lambda x: (ember.debug.callback(lambda v: seen.append(float(v)), x), x)[1],
              (1.5,), (1.,))
    assert capsys.readouterr().out.splitlines() == ["x=1.0", "x=2.0"]
    assert seen == [1.5]


def _diag_solve(a, b):
    return lax.custom_linear_solve(lambda x: a * x, b, lambda mv, r: r / a,
                                   lambda vm, r: r / a)


def test_custom_linear_solve_vmap():
    rng = np.random.default_rng(1)
    a = rng.uniform(1, 2, size=(4, 3)).astype(np.float32)
    b = rng.normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(ember.vmap(_diag_solve)(a, b), b / a, rtol=1e-6)
    np.testing.assert_allclose(ember.vmap(_diag_solve, in_axes=(None, 0))(a[0], b), b / a[0],
                               rtol=1e-6)
    ga, gb = ember.grad(lambda a, b: ember.vmap(_diag_solve)(a, b).sum(), (0, 1))(a, b)
    np.testing.assert_allclose(ga, -b / a ** 2, rtol=1e-5)
    np.testing.assert_allclose(gb, 1 / a, rtol=1e-6)
    shared = ember.grad(lambda a0: ember.vmap(_diag_solve, in_axes=(None, 0))(a0, b).sum())
    np.testing.assert_allclose(shared(a[0]), -b.sum(0) / a[0] ** 2, rtol=1e-5)


def test_solver_jaxprs_print_as_jax_0_10_2():
    def newton_sqrt(a):
        f = lambda x: x * x - a  # noqa: E731
        return lax.custom_root(f, 1.0, lambda f, x0: x0 - f(x0) / (2. * x0),
                               lambda g, y: y / g(1.0))

    assert str(ember.make_jaxpr(newton_sqrt)(2.)) == """{ lambda ; a:f32[]. let
    b:f32[] = custom_jvp_call[
      name=_custom_root
      call_jaxpr={ lambda ; c:f32[] d:f32[] e:f32[] f:f32[]. let
          g:f32[] = mul f f
          h:f32[] = sub g d
          i:f32[] = mul 2.0:f32[] f
          j:f32[] = div h i
          k:f32[] = sub f j
        in (k,) }
      jvp=_root_jvp
      symbolic_zeros=False
    ] a a a 1.0:f32[]
  in (b,) }"""
    mv = "{ lambda ; a:f32[2] b:f32[2]. let c:f32[2] = mul a b in (c,) }"
    sv = "{ lambda ; a:f32[2] b:f32[2]. let c:f32[2] = div b a in (c,) }"
    got = str(ember.make_jaxpr(_diag_solve)(jnp.ones(2), jnp.ones(2)))
    assert got == f"""{{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = custom_linear_solve[
      const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=1, transpose_solve=1)
      jaxprs=_LinearSolveTuple(matvec={mv}, vecmat={mv}, solve={sv}, transpose_solve={sv})
    ] a a a a b
  in (c,) }}"""


def test_custom_linear_solve_check_grads(x64):
    check_grads(_lsolve, [_A.astype(np.float64), _B.astype(np.float64)], order=1)
    a = np.array([1.5, 2.0, 1.2])
    check_grads(_diag_solve, [a, np.array([0.3, -1.0, 2.0])], order=2)
