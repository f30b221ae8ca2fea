"""NumPy's signal and polynomial functions in every mode: convolve/correlate in every mode and
length order (dot-product test, finite differences), polyval, polyfit (in x, y and w), roots,
gradient (values and spacings), cross, and trapezoid/diff (derived from NumPy's Python); gradients
and Hessian-vector products against finite differences and jax; the refusals.

The rule cases (check_rule, second order of each) are in ``yuebing/rules/numpy_signal.py``.
"""
import warnings

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

rng = np.random.default_rng(4)
MODES = ("full", "same", "valid")


def real(*shape):
    return rng.standard_normal(shape)


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def inner(a, b):
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


def fd_gradient(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def check_all_modes(f, x, hvp=True, rtol=1e-5, atol=1e-6):
    """Reverse against central differences, forward against reverse, and (``hvp``) the
    Hessian-vector product against differences of the gradient."""
    g = yb.grad(f)(x)
    np.testing.assert_allclose(g, fd_gradient(f, x), rtol=rtol, atol=atol)
    v = real(*np.shape(x))
    assert yb.jvp(f, (x,), (v,))[1] == pytest.approx(np.sum(g * v), rel=1e-8, abs=1e-9)
    if hvp:
        hv = yb.hvp(f, (x,), (v,))[2][0]
        h = 1e-5
        np.testing.assert_allclose(hv, (yb.grad(f)(x + h * v) - yb.grad(f)(x - h * v)) / (2 * h), rtol=rtol, atol=atol)


# ------------------------------------------------------------------ convolve, correlate


@pytest.mark.parametrize("fn", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("m, n", [(5, 3), (3, 5), (4, 4), (1, 3), (2, 6)])
def test_convolutions_dot_product(fn, mode, m, n):
    """<J (da, dv), w> = <(da, dv), J^T w> with complex factors, in every mode and length order."""
    a, v, da, dv = cplx(m), cplx(n), cplx(m), cplx(n)
    y, jv = yb.jvp(lambda p, q: fn(p, q, mode=mode), (a, v), (da, dv))
    np.testing.assert_array_equal(y, fn(a, v, mode=mode))
    np.testing.assert_allclose(jv, fn(da, v, mode=mode) + fn(a, dv, mode=mode), rtol=1e-12, atol=1e-12)
    w = cplx(*y.shape)
    _, pullback = yb.vjp(lambda p, q: fn(p, q, mode=mode), a, v)
    ga, gv = pullback(w)
    assert inner(jv, w) == pytest.approx(inner(da, ga) + inner(dv, gv), rel=1e-10)


@pytest.mark.parametrize("fn", [np.convolve, np.correlate])
@pytest.mark.parametrize("mode", MODES)
def test_convolutions_of_real_losses(fn, mode):
    kernel = real(3)
    signal = real(6)
    check_all_modes(lambda x: np.sum(np.sin(fn(x, kernel, mode=mode))), real(6))
    check_all_modes(lambda k: np.sum(fn(signal, k, mode=mode) ** 3), kernel)
    check_all_modes(lambda x: np.sum(fn(x[:4], x[4:], mode=mode) ** 2), real(7))  # both factors


# ------------------------------------------------------------------ polynomials


def test_polyval_in_coefficients_and_points():
    x = real(5)
    check_all_modes(lambda p: np.sum(np.polyval(p, x) ** 2), real(4))
    check_all_modes(lambda t: np.sum(np.cos(np.polyval([1.0, -2.0, 0.5], t))), x)
    check_all_modes(lambda p: np.polyval(p, 0.7) ** 3, real(3))  # a scalar point


def test_polyfit_in_x_y_and_w():
    x0 = np.linspace(-1.0, 1.0, 8) + 0.03 * real(8)
    y0 = real(8)
    w0 = 0.5 + real(8) ** 2
    weights = real(3)
    check_all_modes(lambda y: np.sum(np.polyfit(x0, y, 2) * weights), y0)
    check_all_modes(lambda x: np.sum(np.polyfit(x, y0, 2) ** 2), x0)
    check_all_modes(lambda w: np.sum(np.polyfit(x0, y0, 2, w=w) * weights), w0)
    check_all_modes(lambda y: np.sum(np.polyfit(x0, y.reshape(8, 2), 1) ** 2), real(16))  # several columns


def test_polyfit_of_lists():
    """Points, data and weights given as lists (the pullback multiplied the list: a TypeError)."""
    check_all_modes(lambda y: np.sum(np.polyfit([0, 1, 2, 3], y, 1) ** 2), real(4))
    check_all_modes(lambda v: np.sum(np.polyfit([v[0], 1.0, 2.0], [v[1], v[2], 0.5], 1, w=[1.0, 2.0, v[0]]) ** 2),
                    np.array([0.3, -0.7, 1.2]))


def test_roots_of_a_polynomial_with_real_and_complex_roots():
    p_real = np.array([1.0, -6.0, 11.0, -6.0]) + 0.01 * real(4)
    check_all_modes(lambda p: np.sum(np.roots(p) ** 2), p_real)  # three real roots: every mode
    p_complex = np.array([1.0, 0.5, 2.0, -1.0])
    assert np.iscomplexobj(np.roots(p_complex))
    # complex roots: first order (second order of complex arithmetic is refused for now)
    check_all_modes(lambda p: np.sum(np.abs(np.roots(p)) ** 3), p_complex, hvp=False)
    check_all_modes(lambda p: np.sum(np.real(np.roots(p)) * np.arange(3.0)), p_complex, hvp=False)


def test_roots_refuses_what_has_no_derivative():
    with pytest.raises(RuleArgumentError, match="numpy.roots: a repeated root"):
        yb.grad(lambda p: np.sum(np.roots(p)))(np.array([1.0, -2.0, 1.0]))
    with pytest.raises(RuleArgumentError, match="numpy.roots: the coefficients start with 0"):
        yb.grad(lambda p: np.sum(np.roots(p)))(np.array([0.0, 1.0, -3.0, 2.0]))
    with pytest.raises(RuleArgumentError, match="repeated root"):
        yb.jvp(lambda p: np.roots(p), (np.array([1.0, 0.0, 0.0]),), (np.ones(3),))


def test_polyfit_refuses_what_it_does_not_differentiate():
    x, y = np.linspace(0, 1, 5), real(5)
    with pytest.raises(RuleArgumentError, match="numpy.polyfit: yuebing differentiates the coefficients only"):
        yb.grad(lambda y: np.sum(np.polyfit(x, y, 2, full=True)[0]))(y)
    with pytest.raises(RuleArgumentError, match="rank deficient"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yb.grad(lambda y: np.sum(np.polyfit(x[:3], y[:3], 4)))(y)
    q = np.poly1d([1.5, -2.0, 0.5])  # a poly1d is taken now (tests/test_numpy_leftovers.py)
    assert yb.grad(lambda t: np.polyval(q, t))(0.5) == pytest.approx((q(0.5 + 1e-6) - q(0.5 - 1e-6)) / 2e-6, rel=1e-6)


# ------------------------------------------------------------------ gradient, cross, trapezoid, diff


def test_gradient_in_values_and_spacings():
    coords = np.cumsum(0.5 + np.abs(real(6)))
    f0 = real(6)
    for edge_order in (1, 2):
        check_all_modes(lambda f: np.sum(np.gradient(f, coords, edge_order=edge_order) ** 3), f0)
        check_all_modes(lambda x: np.sum(np.gradient(f0, x, edge_order=edge_order) ** 2), coords)
        check_all_modes(lambda h: np.sum(np.gradient(f0, h[0], edge_order=edge_order) ** 2), np.array([0.4]))
    grid = real(4, 5)
    check_all_modes(lambda f: np.sum(np.gradient(f)[0] * np.gradient(f, 0.5, axis=(1,))[0]), grid)
    check_all_modes(lambda f: np.sum(np.gradient(f.reshape(4, 5), axis=-1) ** 2), grid.ravel())


def test_gradient_values_match_numpy():
    f = real(5, 4)
    coords = np.cumsum(0.5 + np.abs(real(5)))
    for args, kw in [((), {}), ((0.3,), {"edge_order": 2}), ((coords, 0.2), {"edge_order": 2}), ((), {"axis": 1})]:
        ours = yb.jvp(lambda a: np.gradient(a, *args, **kw), (f,), (f,))[0]
        np.testing.assert_allclose(np.asarray(ours), np.asarray(np.gradient(f, *args, **kw)), rtol=1e-14, atol=1e-14)


def test_gradient_bad_arguments_get_numpys_errors():
    with pytest.raises(ValueError):
        yb.grad(lambda f: np.sum(np.gradient(f, edge_order=2)))(real(2))


def test_cross_products():
    b = real(3)
    check_all_modes(lambda a: np.sum(np.cross(a, b) ** 2), real(3))
    check_all_modes(lambda a: np.sum(np.sin(np.cross(a.reshape(2, 3), b))), real(6))
    check_all_modes(lambda a: np.sum(np.cross(a.reshape(3, 2), b, axisa=0, axisc=0) ** 2), real(6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates 2-vectors
        check_all_modes(lambda a: np.sum(np.cross(a[:2], a[2:]) ** 2), real(4))
        check_all_modes(lambda a: np.sum(np.cross(a[:2], b) ** 2), real(2))


def test_trapezoid_and_diff_are_derived_from_numpys_python():
    x = np.cumsum(0.5 + np.abs(real(6)))
    y = real(6)
    check_all_modes(lambda y: np.trapezoid(np.sin(y), x), y)
    check_all_modes(lambda x: np.trapezoid(y ** 2, x), x)
    check_all_modes(lambda d: np.trapezoid(y, dx=d[0]) ** 2, np.array([0.3]))
    check_all_modes(lambda f: np.trapezoid(f.reshape(2, 3) ** 2, axis=0).sum(), y)
    check_all_modes(lambda y: np.sum(np.diff(y, n=2) ** 3), y)
    check_all_modes(lambda y: np.sum(np.diff(y.reshape(2, 3), axis=0, prepend=0.5) ** 2), y)


# ------------------------------------------------------------------ against jax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

SIGNAL = real(7)
KERNEL = real(3)
X_FIT = np.linspace(-1.0, 1.0, 8)
Y_FIT = real(8)


def _losses(xp):
    return {
        "convolve-same": (lambda k: xp.sum(xp.sin(xp.convolve(SIGNAL, k, mode="same"))), KERNEL),
        "convolve-full": (lambda x: xp.sum(xp.convolve(x, KERNEL) ** 3), SIGNAL),
        "correlate-valid": (lambda x: xp.sum(xp.correlate(x, KERNEL, mode="valid") ** 2), SIGNAL),
        "correlate-full": (lambda k: xp.sum(xp.cos(xp.correlate(SIGNAL, k, mode="full"))), KERNEL),
        "polyval": (lambda p: xp.sum(xp.polyval(p, SIGNAL) ** 2), KERNEL),
        "polyfit": (lambda y: xp.sum(xp.polyfit(X_FIT, y, 2) ** 2), Y_FIT),
        "cross": (lambda a: xp.sum(xp.cross(a.reshape(2, 3), KERNEL) ** 3), real(6)),
        "gradient": (lambda f: xp.sum(xp.gradient(f, 0.3) ** 3), SIGNAL),
        "trapezoid": (lambda y: xp.trapezoid(xp.exp(y), dx=0.2), SIGNAL),
    }


OURS, THEIRS = _losses(np), _losses(jnp)


@pytest.mark.parametrize("name", list(OURS))
def test_gradient_and_hvp_agree_with_jax(name):
    f, x = OURS[name]
    twin, _ = THEIRS[name]
    v = real(*x.shape)
    np.testing.assert_allclose(yb.grad(f)(x), np.asarray(jax.jit(jax.grad(twin))(x)), rtol=1e-9, atol=1e-10)
    jax_hv = jax.jit(lambda x, v: jax.jvp(jax.grad(twin), (x,), (v,))[1])(x, v)
    np.testing.assert_allclose(yb.hvp(f, (x,), (v,))[2][0], np.asarray(jax_hv), rtol=1e-8, atol=1e-9)
