"""``scipy.optimize.curve_fit`` and ``leastsq`` differentiated implicitly (``api/implicit_scipy.py``):
the fitted parameters' derivatives with respect to ``ydata``, ``xdata``, ``sigma`` and what the
model captures, in reverse, forward, second order and forward Jacobians, against central
differences of refits at tight tolerances (``ftol=xtol=gtol=1e-14``); ``pcov`` (``leastsq``'s
``cov_x``) too, the exact ``(J^T J)^{-1}``'s derivative. An infinite ``pcov`` is refused by name."""
import re

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform.second_order import SecondOrderError

so = pytest.importorskip("scipy.optimize")
sp = pytest.importorskip("scipy.special")

TIGHT = dict(ftol=1e-14, xtol=1e-14, gtol=1e-14)
T = np.linspace(0.0, 2.0, 12)
SIGMA = 0.1 + 0.02 * T
# a refit is accurate to about 1e-10 (MINPACK's Jacobian is itself a difference), so the step is
# large and the stencil fourth order: truncation ~h^4, noise ~1e-10 / h
STEP = 1e-3
RTOL = 1e-5


def decay(t, a, k, c):
    return a * np.exp(-k * t) + c


def decay_jacobian(t, a, k, c):
    """The model's exact Jacobian: with it the fit's pcov is exact, so differences of refits see
    only the derivative."""
    return np.stack([np.exp(-k * t), -a * t * np.exp(-k * t), np.ones_like(t)], axis=1)


def peak(t, height, centre, width, base):
    return height * np.exp(-((t - centre) ** 2) / (2.0 * width ** 2)) + base


def poly(t, *coefficients):
    return sum(c * t ** i for i, c in enumerate(coefficients))


Y_DECAY = decay(T, 2.0, 1.3, 0.5) + 0.05 * np.sin(9.0 * T)
Y_PEAK = peak(T, 1.5, 0.9, 0.4, 0.2) + 0.03 * np.cos(7.0 * T)
P0_DECAY = [1.0, 1.0, 0.0]
P0_PEAK = [1.0, 1.0, 0.5, 0.0]


def _slope(f, x, v):
    """Fourth-order central difference of ``f`` at ``x`` along ``v``."""
    h = STEP
    return (-f(x + 2 * h * v) + 8 * f(x + h * v) - 8 * f(x - h * v) + f(x - 2 * h * v)) / (12 * h)


def _direction(x):
    return np.cos(1.7 * np.arange(np.size(x)) + 0.3)


def check_modes(f, x, rtol=RTOL):
    """Gradient, JVP, the HVP's gradient and the HVP of scalar ``f`` at ``x`` against differences."""
    v = _direction(x)
    slope = _slope(f, x, v)
    scale = max(1.0, abs(slope))
    np.testing.assert_allclose(yb.grad(f)(x) @ v, slope, rtol=rtol, atol=rtol * scale, err_msg="grad")
    np.testing.assert_allclose(yb.jvp(f, (x,), (v,))[1], slope, rtol=rtol, atol=rtol * scale, err_msg="jvp")
    value, (g,), (hv,) = yb.hvp(f, (x,), (v,))
    np.testing.assert_allclose(value, f(x), rtol=1e-12, err_msg="hvp: value")
    np.testing.assert_allclose(g @ v, slope, rtol=rtol, atol=rtol * scale, err_msg="hvp: gradient")
    expected = _slope(yb.grad(f), x, v)
    np.testing.assert_allclose(hv, expected, rtol=1e-4, atol=1e-4 * max(1.0, np.max(np.abs(expected))),
                               err_msg="hvp: Hessian-vector product")


def _summary(popt):
    """A downstream quantity a scientist computes from fitted parameters."""
    return np.sum(popt ** 2) + popt[0] * np.sin(popt[1])


# --------------------------------------------------------------------------------------------
# popt in every mode, every method
# --------------------------------------------------------------------------------------------

METHODS = {
    "lm": TIGHT,
    "trf": dict(method="trf", **TIGHT),
    "dogbox": dict(method="dogbox", bounds=([0.0, 0.0, -1.0], [5.0, 5.0, 2.0]), **TIGHT),
    "trf-bounded": dict(bounds=([0.0, 0.0, -1.0], [5.0, 5.0, 2.0]), **TIGHT),
}


@pytest.mark.parametrize("method", list(METHODS))
def test_exponential_decay_wrt_ydata(method):
    def f(y):
        return _summary(so.curve_fit(decay, T, y, p0=P0_DECAY, **METHODS[method])[0])

    check_modes(f, Y_DECAY)


@pytest.mark.parametrize("absolute_sigma", [False, True])
def test_gaussian_peak_wrt_xdata_and_sigma(absolute_sigma):
    def f(z):
        popt, _ = so.curve_fit(peak, T * z[0], Y_PEAK, p0=P0_PEAK, sigma=z[1:], absolute_sigma=absolute_sigma,
                               **TIGHT)
        return _summary(popt)

    check_modes(f, np.concatenate([[1.1], SIGMA]))


def test_polynomial_with_star_parameters():
    def f(y):
        popt = so.curve_fit(poly, T, y, p0=np.zeros(4), **TIGHT)[0]
        return popt @ np.array([1.0, -2.0, 0.5, 3.0]) + popt[3] ** 2

    check_modes(f, Y_DECAY)


def test_special_function_model_wrt_what_it_captures():
    """The model captures a centre and a background amplitude; the data moves with them too."""
    def f(w):
        def model(t, height, width):
            return height * sp.expit((t - w[0]) / width) + w[1] * np.exp(-t) + sp.erf(t) * 0.1

        ydata = model(T, 1.5, 0.4) + 0.02 * np.cos(5.0 * T) + 0.01 * w[2] * T
        popt = so.curve_fit(model, T, ydata, p0=[1.0, 0.3], method="trf", **TIGHT)[0]
        return popt[0] * popt[1] + popt[1] ** 2

    check_modes(f, np.array([0.9, 0.3, 1.0]))


def test_model_through_a_helper_capturing_derivatives_in_second_order():
    """Refused by name with advice that works, or (once third order follows such helpers) right."""
    def through_helper(w):
        def scale(t):
            return w[0] * t

        def model(t, a, k, c):
            return a * np.exp(-k * scale(t)) + c

        return _summary(so.curve_fit(model, T, Y_DECAY, p0=P0_DECAY, **TIGHT)[0])

    def advised(w):  # the model captures w itself
        def model(t, a, k, c):
            return a * np.exp(-k * w[0] * t) + c

        return _summary(so.curve_fit(model, T, Y_DECAY, p0=P0_DECAY, **TIGHT)[0])

    w = np.array([1.1])
    np.testing.assert_allclose(yb.grad(through_helper)(w), yb.grad(advised)(w), rtol=1e-6)  # two fits, one problem
    check_modes(advised, w)
    try:
        check_modes(through_helper, w)
    except SecondOrderError as error:
        assert re.search(r"curve_fit's popt .* not through scale.*make the model capture those variables itself",
                         str(error)), error


def test_covariance_matrix_sigma():
    covariance = np.diag(SIGMA ** 2) + 0.002 * np.exp(-np.abs(T[:, None] - T[None, :]))

    def f(y):
        return _summary(so.curve_fit(decay, T, y, p0=P0_DECAY, sigma=covariance, **TIGHT)[0])

    check_modes(f, Y_DECAY)


@pytest.mark.parametrize("method", ["lm", "trf"])
def test_forward_jacobian_matches_reverse_and_differences(method):
    def popt_of(y):
        popt, pcov = so.curve_fit(decay, T, y, p0=P0_DECAY, sigma=SIGMA, method=method, jac=decay_jacobian, **TIGHT)
        return np.concatenate([popt, np.ravel(pcov)])

    forward = yb.jacobian(popt_of, mode="fwd")(Y_DECAY)
    reverse = yb.jacobian(popt_of)(Y_DECAY)
    np.testing.assert_allclose(forward, reverse, rtol=1e-10, atol=1e-12)
    columns = np.stack([_slope(popt_of, Y_DECAY, e) for e in np.eye(T.size)], axis=1)
    np.testing.assert_allclose(forward, columns, rtol=RTOL, atol=RTOL * np.max(np.abs(columns)))


def test_curve_fit_agrees_with_least_squares_of_the_weighted_residual():
    def by_curve_fit(y):
        return so.curve_fit(decay, T, y, p0=P0_DECAY, sigma=SIGMA, **TIGHT)[0]

    def by_least_squares(y):
        return so.least_squares(lambda p: (decay(T, *p) - y) / SIGMA, np.array(P0_DECAY), **TIGHT).x

    np.testing.assert_allclose(yb.jacobian(by_curve_fit)(Y_DECAY), yb.jacobian(by_least_squares)(Y_DECAY),
                               rtol=1e-6, atol=1e-8)


def test_full_output_residual():
    def f(y):
        popt, _, info, _, _ = so.curve_fit(decay, T, y, p0=P0_DECAY, sigma=SIGMA, full_output=True, **TIGHT)
        return np.sum(info["fvec"] ** 3) + popt[1]

    check_modes(f, Y_DECAY)
    v = _direction(Y_DECAY)
    np.testing.assert_allclose(yb.hessian(f)(Y_DECAY) @ v, yb.hvp(f, (Y_DECAY,), (v,))[2][0], rtol=1e-9, atol=1e-12)


def test_minpack_fields_refused_in_reverse_and_nan_in_forward():
    """infodict's qtf (MINPACK's Q^T fvec) has no derivative computed: never a silent zero."""
    def f(y):
        return np.sum(so.curve_fit(decay, T, y, p0=P0_DECAY, full_output=True, **TIGHT)[2]["qtf"])

    with pytest.raises(ValueError, match=r"curve_fit: .* not the result\[2\]\.qtf"):
        yb.grad(f)(Y_DECAY)
    assert np.isnan(yb.jvp(f, (Y_DECAY,), (Y_DECAY,))[1])


# --------------------------------------------------------------------------------------------
# pcov and cov_x: (J^T J)^{-1} at the fit, scaled by the residual variance unless absolute_sigma
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["lm", "trf"])
@pytest.mark.parametrize("absolute_sigma", [False, True])
def test_pcov_wrt_xdata_and_sigma(method, absolute_sigma):
    def f(z):
        popt, pcov = so.curve_fit(decay, T * z[0], Y_DECAY, p0=P0_DECAY, sigma=z[1:], absolute_sigma=absolute_sigma,
                                  method=method, jac=decay_jacobian, **TIGHT)
        return pcov[0, 1] + pcov[2, 2] + popt[0] * pcov[1, 1]

    check_modes(f, np.concatenate([[1.1], SIGMA]))


def test_pcov_of_a_finite_difference_fit_wrt_ydata():
    """Without jac=, MINPACK's pcov is its difference Jacobian's, good to about 1e-8: the derivative
    is the exact covariance's."""
    def f(y):
        return np.sum(so.curve_fit(peak, T, y, p0=P0_PEAK, **TIGHT)[1] ** 2)

    check_modes(f, Y_PEAK, rtol=1e-4)


def _sigmoid(X, height, width):
    """A model reading its data and the values it depends on from a dict ``xdata``."""
    return height * sp.expit((X["t"] - X["w"][0]) / width) + X["w"][1] * np.exp(-X["t"])


W = np.array([0.9, 0.3, 1.0])


def test_pcov_of_a_model_capturing_derivatives():
    """Second order takes third derivatives of the model through the covariance's yb.jacobian of
    a lambda capturing it (refused before: a captured closure carrying derivatives is now opened
    where it is called, tests/test_third_order_captured_closures.py)."""
    def f(w):
        def model(t, height, width):
            return _sigmoid({"t": t, "w": w}, height, width)

        popt, pcov = so.curve_fit(model, T, model(T, 1.5, 0.4) + 0.02 * np.cos(5.0 * T), p0=[1.0, 0.3], **TIGHT)
        return popt[0] + 1e3 * pcov[0, 1]

    check_modes(f, W, rtol=1e-4)


def test_pcov_of_a_model_reading_a_dict_xdata():
    """The advice of the refusal above, in every mode."""
    def f(w):
        X = {"t": T, "w": w}
        ydata = _sigmoid(X, 1.5, 0.4) + 0.02 * np.cos(5.0 * T) + 0.01 * w[2] * T
        popt, pcov = so.curve_fit(_sigmoid, X, ydata, p0=[1.0, 0.3], method="trf", **TIGHT)
        return popt[0] * popt[1] + 1e3 * pcov[0, 1]

    check_modes(f, W, rtol=1e-4)


@pytest.mark.filterwarnings("ignore::scipy.optimize.OptimizeWarning")
def test_infinite_pcov_refused_by_name_and_nan_in_forward_mode():
    """As many data points as parameters: pcov is infinite (SciPy warns), it has no derivative."""
    def f(y):
        return so.curve_fit(lambda t, a, b: a * t + b, T[:2], y)[1][0, 1]

    y = Y_DECAY[:2]
    with pytest.raises(ValueError, match=r"curve_fit: .*\(pcov\).*infinite.*What to do"):
        yb.grad(f)(y)
    with pytest.raises(SecondOrderError, match=r"curve_fit: .*\(pcov\).*infinite"):
        yb.hvp(f, (y,), (y,))
    assert np.isnan(yb.jvp(f, (y,), (y,))[1])


def test_active_bound_refused():
    def f(y):
        return _summary(so.curve_fit(decay, T, y, p0=[1.0, 1.0, 0.8], bounds=([0, 0, 0.6], [5, 5, 1]), **TIGHT)[0])

    for run in (lambda: yb.grad(f)(Y_DECAY), lambda: yb.jvp(f, (Y_DECAY,), (Y_DECAY,)),
                lambda: yb.hvp(f, (Y_DECAY,), (Y_DECAY,))):
        with pytest.raises(ValueError, match="curve_fit: a bound is active"):
            run()


def test_nan_policy_omit_refused():
    def f(y):
        return so.curve_fit(decay, T, y, p0=P0_DECAY, nan_policy="omit", **TIGHT)[0][0]

    with pytest.raises(ValueError, match="curve_fit: nan_policy='omit'.*remove the NaN points"):
        yb.grad(f)(Y_DECAY)


# --------------------------------------------------------------------------------------------
# leastsq
# --------------------------------------------------------------------------------------------


def test_leastsq_with_args():
    def f(y):
        x, ier = so.leastsq(lambda p, data: (decay(T, *p) - data) / SIGMA, np.array(P0_DECAY), args=(y,),
                            ftol=1e-14, xtol=1e-14)
        return _summary(x)

    check_modes(f, Y_DECAY)


def test_leastsq_full_output_and_captured_data():
    def f(y):
        x, _, info, _, _ = so.leastsq(lambda p: peak(T, *p) - y, np.array(P0_PEAK), full_output=True,
                                      ftol=1e-14, xtol=1e-14)
        return _summary(x) + np.sum(info["fvec"] ** 3)

    check_modes(f, Y_PEAK)


def _weighted_decay(p, z):
    return (decay(T * z[0], *p) - Y_DECAY) / z[1:]


def _weighted_decay_jacobian(p, z):
    return decay_jacobian(T * z[0], *p) / z[1:, None]


def test_leastsq_cov_x():
    def f(z):
        x, cov_x, _, _, _ = so.leastsq(_weighted_decay, np.array(P0_DECAY), args=(z,), Dfun=_weighted_decay_jacobian,
                                       full_output=True, ftol=1e-14, xtol=1e-14)
        return cov_x[0, 1] + x[1] * cov_x[2, 2]

    check_modes(f, np.concatenate([[1.1], SIGMA]))
