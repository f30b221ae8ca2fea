"""A FITPACK spline of data computed from the arguments, called at a scalar point or integrated
(``UnivariateSpline.integral``, FITPACK's ``splint``: ``rules/scipy_interpolate._splint``, through
the spline's antiderivative). The integral was refused (no rule for the C ``splint``, fuzz_recent
seeds 96200-96213); the scalar call had been refused naming ``operator.getitem``. Every mode against
central differences, in the data, the knots' data and the integral's ends (inside the base
interval, past its ends, reversed); ``splint``'s own values against SciPy's."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.interpolate
from scipy.interpolate import _fitpack2

import yuebing as yb
from yuebing.rules.scipy_interpolate import _splint
from yuebing.testing.third_order import check_third_order

from .all_modes import check_all_modes

XS = np.linspace(0.0, 1.0, 9)


def spline(s, k=3):
    return scipy.interpolate.LSQUnivariateSpline(XS, np.sin(3.0 * XS * s), [0.3, 0.6], k=k)


FORMS = {
    "scalar call": lambda s: spline(s)(0.37),
    "array call": lambda s: np.sum(spline(s)(np.array([0.37, 0.8]))),
    "derivative at a point": lambda s: spline(s)(0.37, nu=1),
    "integral": lambda s: spline(s).integral(0.1, 0.9),
    "integral, linear": lambda s: spline(s, k=1).integral(0.2, 0.7),
    "integral, reversed ends": lambda s: spline(s, k=5).integral(0.9, 0.25),
    "integral past the ends": lambda s: spline(s).integral(-0.5, 1.4) * s,
    "integral to a moving end": lambda s: spline(s).integral(0.1, 0.5 * s),
}


@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_every_mode(form):
    check_all_modes(FORMS[form], 0.7)


def test_third_order_refuses_the_spline_object_by_name():
    with pytest.raises(yb.NestedDifferentiationError, match="LSQUnivariateSpline"):
        check_third_order(FORMS["integral to a moving end"], 0.7)


def test_jacobian_in_the_data_both_modes():
    def integrals(y):
        spl = scipy.interpolate.LSQUnivariateSpline(XS, y, [0.3, 0.6])
        return np.array([spl.integral(0.1, 0.9), spl.integral(0.0, 0.45)])

    y = np.sin(2.0 * XS)
    reverse = yb.jacobian(integrals)(y.copy())
    np.testing.assert_allclose(yb.jacobian(integrals, mode="fwd")(y.copy()), reverse, rtol=1e-10, atol=1e-12)
    h = 1e-6
    columns = [(integrals(y + h * e) - integrals(y - h * e)) / (2 * h) for e in np.eye(y.size)]
    np.testing.assert_allclose(reverse, np.stack(columns, axis=1), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("a, b", [(0.1, 0.9), (0.9, 0.1), (-0.5, 0.4), (0.2, 1.7), (-1.0, 2.0), (0.5, 0.5)])
def test_splint_matches_fitpack(k, a, b):
    t, c, _ = spline(0.7, k)._eval_args
    expected, expected_wrk = _fitpack2.dfitpack.splint(t, c, k, a, b)
    value, wrk = _splint(t, c, k, a, b)
    m = t.size - k - 1  # (FITPACK's wrk holds m integrals; its last k + 1 entries are not set)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(wrk[:m], expected_wrk[:m], rtol=1e-12, atol=1e-14)
