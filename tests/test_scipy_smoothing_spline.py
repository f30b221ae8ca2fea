"""FITPACK's fits on its knots (``rules/scipy_smoothing_spline.py``): ``UnivariateSpline`` with
``s > 0``, ``s=None`` or a ``bbox``, ``set_smoothing_factor`` and ``LSQUnivariateSpline``, in
reverse, forward and second order.

A least-squares fit is checked against finite differences of SciPy's own call. The smoothing
spline (``fp = s``) is checked against finite differences of a reference written here from its
definition (the penalised least-squares fit on FITPACK's knots, held at the same data points,
with ``lam`` solving ``fp = s`` exactly): FITPACK stops its iteration within ``0.001 s`` of ``s``,
so differences of its own output follow its iteration and agree only to about that."""
import warnings

import numpy as np
import pytest
from scipy.interpolate import BSpline, LSQUnivariateSpline, UnivariateSpline
from scipy.optimize import brentq

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .all_modes import check_all_modes

rng = np.random.default_rng(3)
X = np.sort(rng.uniform(0.0, 6.0, 30))
Y = np.sin(X) + 0.1 * rng.standard_normal(30)
W = 1.0 + 0.2 * rng.random(30)
AT = np.array([0.5, 2.2, 4.1, 5.5])
V = rng.standard_normal(30)


def _fit(x=X, y=Y, w=None, s=0.2, k=3, bbox=(None, None)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (FITPACK's warning that s is too small, for ier=1)
        return UnivariateSpline(x, y, w=w, s=s, k=k, bbox=list(bbox))


def _reference(x, y, w, s_offset, k, knot_sites):
    """The smoothing spline with ``fp = s`` on knots at ``x[knot_sites]``, from its definition:
    ``min |w (y - A c)|^2 + lam |P c|^2``, ``P`` the jumps of the ``k``-th derivative."""
    t = np.concatenate([np.full(k + 1, x[0]), x[knot_sites], np.full(k + 1, x[-1])])
    size = t.size - k - 1
    design = BSpline.design_matrix(x, t, k).toarray()
    middles = (t[k:-k - 1] + t[k + 1:-k]) / 2
    constant = np.stack([BSpline(t, np.eye(size)[j], k).derivative(k)(middles) for j in range(size)], axis=1)
    jumps = np.diff(constant, axis=0)
    normal, rhs = design.T @ (w[:, None] ** 2 * design), design.T @ (w ** 2 * y)
    penalty = jumps.T @ jumps * np.trace(normal) / np.trace(jumps.T @ jumps)

    def fitted(u):
        return np.linalg.solve(normal + np.exp(u) * penalty, rhs)

    u = brentq(lambda u: np.sum((w * (y - design @ fitted(u))) ** 2) - s_offset, -30.0, 30.0, xtol=1e-14)
    return BSpline(t, fitted(u), k)


def _smoothing_reference(s=0.2, k=3):
    """A function of ``(x, y, w, s)`` giving the reference spline at the FITPACK fit of the data
    above: FITPACK's own ``fp`` as the target (its offset from ``s`` held)."""
    spline = _fit(s=s, k=k)
    assert spline._data[-1] == 0 and abs(spline.get_residual() - s) > 1e-9, "a smoothing fit (not least squares)"
    knots = spline.get_knots()[1:-1]
    sites = np.array([np.flatnonzero(X == knot)[0] for knot in knots])
    offset = spline.get_residual() - s
    return lambda x, y, w, s_: _reference(x, y, w, s_ + offset, k, sites)


def _check_against_reference(f, reference, arg):
    """``f`` (through SciPy) in every mode against central differences of ``reference`` (the
    spline's definition): its value is SciPy's, the gradient and forward tangent along ``v``
    match first differences, ``u . H v`` matches a mixed second difference."""
    arg = np.asarray(arg, dtype=float)
    v = np.linspace(0.3, 1.1, arg.size).reshape(arg.shape)
    u = np.cos(np.arange(arg.size)).reshape(arg.shape)
    h = 1e-4
    slope = (reference(arg + h * v) - reference(arg - h * v)) / (2 * h)
    mixed = (reference(arg + h * u + h * v) - reference(arg + h * u - h * v) - reference(arg - h * u + h * v)
             + reference(arg - h * u - h * v)) / (4 * h * h)
    value, grad = yb.value_and_grad(f)(arg.copy())
    np.testing.assert_allclose(value, f(arg.copy()), rtol=1e-10)
    np.testing.assert_allclose(np.sum(grad * v), slope, rtol=1e-5)
    np.testing.assert_allclose(yb.jvp(f, (arg.copy(),), (v,))[1], slope, rtol=1e-5)
    _, (grad2,), (hv,) = yb.hvp(f, (arg.copy(),), (v,))
    np.testing.assert_allclose(np.sum(grad2 * v), slope, rtol=1e-5)
    np.testing.assert_allclose(np.sum(u * hv), mixed, rtol=2e-4, atol=1e-6 * np.max(np.abs(hv)))


@pytest.mark.parametrize("s, k", [(0.2, 3), (0.5, 2), (0.15, 4), (0.05, 5), (1e-3, 3)])
def test_smoothing_spline_in_the_values(s, k):
    reference = _smoothing_reference(s, k)
    _check_against_reference(lambda y: np.sum(_fit(y=y, s=s, k=k)(AT) ** 2),
                             lambda y: np.sum(reference(X, y, np.ones(30), s)(AT) ** 2), Y)


def test_smoothing_spline_in_the_sites_the_weights_and_s():
    reference = _smoothing_reference()
    _check_against_reference(lambda x: np.sum(_fit(x=x)(AT) ** 2),
                             lambda x: np.sum(reference(x, Y, np.ones(30), 0.2)(AT) ** 2), X)
    _check_against_reference(lambda w: np.sum(_fit(w=w)(AT) ** 2),
                             lambda w: np.sum(reference(X, Y, w, 0.2)(AT) ** 2), np.ones(30))
    _check_against_reference(lambda s: np.sum(_fit(s=s)(AT) ** 2),
                             lambda s: np.sum(reference(X, Y, np.ones(30), s)(AT) ** 2), 0.2)


def test_smoothing_spline_values_derivatives_and_residual_match_scipy():
    for kw in (dict(s=0.2), dict(s=0.5, k=2), dict(s=None), dict(s=0.3, w=W), dict(s=1e-3), dict(s=0.0, bbox=(-0.5, 6.5))):
        def f(y):
            spline = _fit(y=y, **kw)
            return np.concatenate([spline(AT), spline(AT, nu=1), [spline.get_residual()], spline.get_coeffs()])

        value, _ = yb.jvp(f, (Y.copy(),), (V,))
        np.testing.assert_allclose(value, f(Y), rtol=1e-9, atol=1e-11)


def test_smoothing_spline_derivative_follows_fitpacks_differences_to_its_tolerance():
    """FITPACK's own output, differenced, agrees to its tolerance on fp (0.001 s)."""
    f = lambda y: np.sum(_fit(y=y)(AT) ** 2)  # noqa: E731
    slope = (f(Y + 1e-6 * V) - f(Y - 1e-6 * V)) / 2e-6
    np.testing.assert_allclose(yb.grad(f)(Y.copy()) @ V, slope, rtol=3e-3)


@pytest.mark.parametrize("kw", [dict(s=None), dict(s=0.0, bbox=(-0.5, 6.5)), dict(s=0.3, k=5)],
                         ids=str)
def test_least_squares_fits_on_fitpacks_knots_in_every_mode(kw):
    """``s=None`` here and ``s=0.3, k=5``: FITPACK's least-squares polynomial (``ier=-2``); a
    ``bbox``: interpolating on its knots. (``s=1e-3`` fills FITPACK's knot storage, ``ier=1``:
    SciPy refits with more, to a smoothing spline, checked above.)"""
    check_all_modes(lambda y: np.sum(_fit(y=y, **kw)(AT) ** 2), Y.copy())
    check_all_modes(lambda x: np.sum(_fit(x=x, **kw)(AT) ** 2), X.copy())
    check_all_modes(lambda y: _fit(y=y, **kw).get_residual() * y[0], Y.copy())


def test_the_smoothing_splines_residual_is_s():
    """Its residual sum is held at ``s`` (FITPACK's offset from it constant): derivative 1 in ``s``,
    0 in the values."""
    assert yb.grad(lambda s: _fit(s=s).get_residual())(0.2) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(yb.grad(lambda y: _fit(y=y).get_residual())(Y.copy()), 0.0, atol=1e-9)


def test_set_smoothing_factor_refits_on_fitpacks_knots():
    def f(y):
        spline = _fit(y=y, s=0.5)
        spline.set_smoothing_factor(0.2)
        return np.sum(spline(AT) ** 2)

    value, grad = yb.value_and_grad(f)(Y.copy())
    np.testing.assert_allclose(value, f(Y), rtol=1e-10)
    np.testing.assert_allclose(yb.jvp(f, (Y.copy(),), (V,))[1], grad @ V, rtol=1e-9)
    slope = (f(Y + 1e-6 * V) - f(Y - 1e-6 * V)) / 2e-6
    np.testing.assert_allclose(grad @ V, slope, rtol=3e-3)


def test_lsq_univariate_spline_in_values_sites_weights_and_knots():
    knots = np.array([1.0, 2.0, 3.5, 4.0])
    check_all_modes(lambda y: np.sum(LSQUnivariateSpline(X, y, knots, k=3)(AT) ** 2), Y.copy())
    check_all_modes(lambda x: np.sum(LSQUnivariateSpline(x, Y, knots, k=2)(AT) ** 2), X.copy())
    check_all_modes(lambda w: np.sum(LSQUnivariateSpline(X, Y, knots, w=w)(AT) ** 2), W.copy())
    check_all_modes(lambda t: np.sum(LSQUnivariateSpline(X, Y, t)(AT) ** 2), knots.copy())


def test_a_fit_fitpack_did_not_finish_is_refused_by_name():
    from yuebing.rules.scipy_smoothing_spline import _kind

    data = _fit()._data[:-1] + (3,)  # ier=3: FITPACK's iteration for fp = s reached its limit
    with pytest.raises(RuleArgumentError, match="UnivariateSpline.*ier=3.*LSQUnivariateSpline"):
        _kind(data, 1.0)


def test_a_fit_not_reproducing_fitpacks_is_refused_by_name():
    """yuebing's normal equations are checked against FITPACK's own coefficients, never trusted."""
    from yuebing.rules.scipy_smoothing_spline import _check_least_squares, _check_reproduced

    c = _fit()._data[9]
    _check_reproduced(c[:10], c)
    with pytest.raises(RuleArgumentError, match="UnivariateSpline.*does not reproduce FITPACK"):
        _check_reproduced(c[:10] * (1 + 1e-5), c)
    with pytest.raises(RuleArgumentError, match="LSQUnivariateSpline.*fewer interior knots"):
        _check_least_squares(c[:10] + 1e-4, c)


def test_batched_forward_mode_matches_reverse():
    for kw in (dict(s=0.2), dict(s=None)):
        f = lambda y: np.sum(_fit(y=y, **kw)(AT) ** 2)  # noqa: E731
        np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(Y.copy()), yb.grad(f)(Y.copy()), rtol=1e-10, atol=1e-13)
