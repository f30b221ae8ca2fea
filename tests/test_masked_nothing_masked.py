"""NumPy's and SciPy's products and solves given ``numpy.ma`` masked arrays none of whose entries is
masked (``rules/numpy_masked_forms.py``, ``_pure_on_data``), and ``np.ma.atleast_1d/2d/3d``.

pykalman keeps its observations in a masked array (``np.ma.atleast_2d(X)``, masked only where an
observation is missing) and applies ``np.dot`` and ``linalg`` to it: refused, as any NumPy function
that would ignore a mask was. With no entry masked the mask ignored is all False, so the function of
the data is the function of the masked array. Checked in every mode and third order against central
differences; with one entry masked, still refused in every mode; the result's type is NumPy's.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.core import RuleArgumentError
from yuebing.testing.third_order import check_third_order

A = np.array([[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.8]])


def dot_of_at_least_2d(t):
    row = np.ma.atleast_2d(t)             # (1, 3), its mask all False
    return np.sum(np.dot(row, A) * np.dot(A, row.T).T) + np.sum(np.ma.atleast_1d(t[0]) * t)


def solve_with_masked_right_side(t):
    b = np.ma.array(np.sin(t), mask=np.zeros(3, bool))
    return np.sum(np.linalg.solve(A + np.diag(t ** 2), b) * np.arange(1.0, 4.0))


def scipy_cholesky_and_triangular_solve(t):
    covariance = np.ma.array(A + np.outer(t, t))
    lower = scipy.linalg.cholesky(covariance, lower=True)
    return np.sum(scipy.linalg.solve_triangular(lower, np.ma.atleast_3d(t)[0, :, 0], lower=True) ** 2)


def outer_and_trace(t):
    m = np.ma.masked_invalid(t)           # nothing invalid: nothing masked
    return np.trace(np.outer(m, t) @ A) + np.linalg.det(A + np.diag(np.cos(m.data)))


FUNCTIONS = [dot_of_at_least_2d, solve_with_masked_right_side, scipy_cholesky_and_triangular_solve, outer_and_trace]
X = np.array([0.4, -0.8, 1.1])


@pytest.mark.parametrize("function", FUNCTIONS)
def test_every_mode(function) -> None:
    check_every_mode(function, X)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_third_order(function) -> None:
    check_third_order(function, X)


def test_results_keep_numpys_types() -> None:
    """np.dot of a masked array returns a masked array (its mask all False) under yb.grad too."""
    seen = []

    def f(t):
        product = np.dot(A, np.ma.atleast_2d(t).T)
        seen.append(type(product))
        return np.sum(product)

    plain = f(X)
    value, _ = yb.value_and_grad(f)(X.copy())
    assert value == pytest.approx(plain, rel=1e-14)
    assert seen[0] is seen[1] is np.ma.MaskedArray


def _one_entry_masked(t):
    m = np.ma.array(t, mask=[False, True, False])
    return np.sum(np.dot(A, m))


def test_a_masked_entry_is_still_refused_in_every_mode() -> None:
    """np.dot ignores the mask (it adds the masked entry's data): refused, never that number."""
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.grad(_one_entry_masked)(X.copy())
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.jvp(_one_entry_masked, (X.copy(),), (np.ones(3),))
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.hvp(_one_entry_masked, (X.copy(),), (np.ones(3),))
