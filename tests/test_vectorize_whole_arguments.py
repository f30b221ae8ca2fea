"""``np.vectorize`` called with an argument NumPy hands whole to every call (``rules/differentiated.py``,
``handed_whole``): a frozen SciPy distribution, an object, ``None``. NumPy makes such an argument a 0-d
object array, the same object at each position; yuebing's definition of the call put it in a list
of arrays to broadcast and refused it (StructureError: object-dtype arrays have no tangent type).
properscoring's ``crps_quadrature`` vectorizes its integral over ``(x, cdf_or_dist, xmin, xmax, tol)``.
A ``range`` is a sequence and still broadcasts. Every mode against central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.testing.third_order import check_third_order


class Scale:
    def __init__(self, k):
        self.k = k


def _mass_between(x, distribution, lower):
    return distribution.cdf(x) - distribution.cdf(lower)


def through_a_frozen_distribution(t):
    distribution = scipy.stats.norm(loc=t[0], scale=1.0 + t[1] ** 2)
    return np.sum(np.vectorize(_mass_between)(np.array([0.3, 1.2, -0.4]) * t[2], distribution, t[0] - 2.0))


def _scaled(x, holder, n):
    return np.sin(x) * holder.k + n


def through_an_object_and_a_range(t):
    return np.sum(np.vectorize(_scaled)(t, Scale(t[0]), range(3)))


def _maybe_offset(x, offset=None, weight=1.0):
    return x * x * weight if offset is None else x + offset


def through_none_as_a_keyword(t):
    return np.sum(np.vectorize(_maybe_offset)(t, offset=None, weight=t[::-1]))


def _quadrature_of_cdf(x, distribution):
    import scipy.integrate
    return scipy.integrate.quad(lambda y: distribution.cdf(y) ** 2, x - 3.0, x)[0]


def through_a_quadrature(t):
    return np.sum(np.vectorize(_quadrature_of_cdf)(t[:2], scipy.stats.norm(t[2], 1.5)))


FUNCTIONS = [through_a_frozen_distribution, through_an_object_and_a_range, through_none_as_a_keyword,
             through_a_quadrature]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_whole_arguments_in_every_mode(function) -> None:
    check_every_mode(function, np.array([0.2, -0.5, 1.1]))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_values_are_numpys(function) -> None:
    """The same value as the plain call, so the object went whole and the range broadcast."""
    x = np.array([0.2, -0.5, 1.1])
    value, _ = yb.value_and_grad(function)(x.copy())
    assert value == pytest.approx(function(x.copy()), rel=1e-13)


def test_third_order_with_an_object_and_a_range() -> None:
    check_third_order(through_an_object_and_a_range, np.array([0.2, -0.5, 1.1]))
