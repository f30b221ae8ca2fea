"""``scipy.stats.gaussian_kde``'s logpdf, evaluate and pdf (SciPy's kernel sum is a fused Cython
function; ``rules/scipy_stats.py`` defines them in NumPy): the values SciPy gives, and the
derivatives in the data, the weights and the points against differences in reverse, forward
and second order."""
import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

st = pytest.importorskip("scipy.stats")

X0 = np.array([0.7, 0.35, 1.2, 0.4, 0.9])
W = np.array([1.0, 2.0, 3.5, 3.9, 5.2])


def in_data(x):
    return np.sum(st.gaussian_kde(x).logpdf(W))


def pdf_in_data(x):
    return np.sum(st.gaussian_kde(x).pdf(W))


def two_dimensional(x):
    kde = st.gaussian_kde(np.stack([x, x ** 2 + W]))
    return np.sum(kde.logpdf(np.array([[0.5, 1.0], [2.0, 3.0]])))


def weights_and_points(x):
    return np.sum(st.gaussian_kde(W, weights=x + 1.0).logpdf(x))


@pytest.mark.parametrize("f", [in_data, pdf_in_data, two_dimensional, weights_and_points])
def test_every_mode_against_differences(f):
    check_all_modes(f, X0.copy())


def test_point_of_wrong_dimension_raises_as_scipy():
    with pytest.raises(ValueError, match="dimension"):
        yb.grad(lambda x: np.sum(st.gaussian_kde(np.stack([x, x])).logpdf(np.ones(3))))(X0.copy())
