"""``scipy.stats.gaussian_kde``'s logpdf, evaluate and pdf (SciPy's kernel sum is a fused Cython
function; ``rules/scipy_stats.py`` defines them in NumPy): the values SciPy gives, and the
derivatives in the data, the weights and the points against differences in reverse, forward
and second order."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order

st = pytest.importorskip("scipy.stats")

X0 = np.array([0.7, 0.35, 1.2, 0.4, 0.9])
W = np.array([1.0, 2.0, 3.5, 3.9, 5.2])
V = np.array([0.3, -0.5, 0.8, 0.1, 0.2])


def in_data(x):
    return np.sum(st.gaussian_kde(x).logpdf(W))


def pdf_in_data(x):
    return np.sum(st.gaussian_kde(x).pdf(W))


def two_dimensional(x):
    kde = st.gaussian_kde(np.stack([x, x ** 2 + W]))
    return np.sum(kde.logpdf(np.array([[0.5, 1.0], [2.0, 3.0]])))


def weights_and_points(x):
    return np.sum(st.gaussian_kde(W, weights=x + 1.0).logpdf(x))


def differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("f", [in_data, pdf_in_data, two_dimensional, weights_and_points])
def test_every_mode_against_differences(f):
    want = differences(f, X0)
    value, g = yb.value_and_grad(f)(X0.copy())
    np.testing.assert_allclose(value, f(X0), rtol=1e-12)
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-8)
    _, t = yb.jvp(f, (X0.copy(),), (V,))
    np.testing.assert_allclose(t, want @ V, rtol=1e-5, atol=1e-8)
    check_second_order(f, X0.copy(), rtol=1e-4, atol=1e-6)


def test_point_of_wrong_dimension_raises_as_scipy():
    with pytest.raises(ValueError, match="dimension"):
        yb.grad(lambda x: np.sum(st.gaussian_kde(np.stack([x, x])).logpdf(np.ones(3))))(X0.copy())
