"""NumPy's selecting, placing and counting functions and the numpy.polynomial classes in every
mode (rules/numpy_selection.py, rules/numpy_polynomial.py): partition, unique (the even split at
ties), histogram (edges and density move with the data, weights differentiated, counts equal to
NumPy's), copyto/place/putmask (arguments restored), piecewise with functions, poly1d and the
polynomial classes against their coefficient formulas."""
import numpy as np
import pytest

import yuebing as yb

from .test_numpy_editing import check_all_modes, fd_gradient, weighted

rng = np.random.default_rng(41)


def _copyto(x):
    y = np.zeros(6)
    np.copyto(y, x ** 2, where=x > 0)
    return weighted(y + y * x)


def _place(x):
    y = x * 1.0
    np.place(y, x > 0, x[:2] ** 2)
    return weighted(y)


def _putmask(x):
    y = x * 1.0
    np.putmask(y, x > 0, x[::-1] ** 3)
    return weighted(y)


FUNCTIONS = {
    "partition": lambda x: weighted(np.partition(x ** 2, 2)),
    "partition method": lambda x: _sorted_in_place(x),
    "unique": lambda x: weighted(np.unique(x, return_counts=True)[0]),
    "unique axis": lambda x: weighted(np.unique(x.reshape(3, 2), axis=0)),
    "unique_values": lambda x: weighted(np.sort(np.unique_values(x))),
    "histogram weights": lambda x: weighted(np.histogram(np.arange(6.0), bins=3, weights=x ** 2)[0]),
    "histogram density": lambda x: weighted(np.histogram(x, bins=3, density=True)[0]),
    "histogram edges": lambda x: weighted(np.histogram(x, bins=4)[1]),
    "copyto": _copyto,
    "place": _place,
    "putmask": _putmask,
    "piecewise": lambda x: weighted(np.piecewise(x, [x < -0.3, x > 0.3], [lambda v: v ** 3, np.exp, lambda v: 2 * v])),
    "poly1d": lambda x: weighted(np.poly1d(x[:3])(x[3:])),
    "Polynomial": lambda x: weighted(np.polynomial.Polynomial(x[:3], domain=[-1.0, x[5] + 3])(x[3:])),
    "Chebyshev": lambda x: weighted(np.polynomial.Chebyshev(x[:4])(x[4:])),
}


def _sorted_in_place(x):
    y = x * 2.0
    y.partition(3)
    return weighted(y)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_in_every_mode(name):
    check_all_modes(FUNCTIONS[name], rng.standard_normal(6))


def test_histogram_values_are_numpys():
    for bins in (5, "auto", np.array([-2.0, -0.3, 0.0, 0.4, 2.5])):
        a = rng.standard_normal(200)
        for kw in ({}, {"density": True}, {"weights": rng.standard_normal(200)}, {"range": (-1.0, 1.5)}):
            if isinstance(bins, str) and "weights" in kw:
                continue  # NumPy refuses estimated bins with weights
            hist, edges = yb.jvp(lambda v: np.histogram(v, bins=bins, **kw), (a,), (a,))[0]
            want_hist, want_edges = np.histogram(a, bins=bins, **kw)
            if "weights" in kw and np.ndim(bins):  # NumPy differences cumulative sums there: equal up to rounding
                np.testing.assert_allclose(hist, want_hist, rtol=1e-12, atol=1e-12)
            else:
                np.testing.assert_array_equal(hist, want_hist)
            np.testing.assert_array_equal(edges, want_edges)


def test_histogram_counts_have_zero_derivative_in_the_data():
    a = rng.standard_normal(20)
    _, (t_hist, t_edges) = yb.jvp(lambda v: np.histogram(v, bins=4, range=(-1.0, 1.0)), (a,), (np.ones(20),))
    assert not np.any(t_edges)  # fixed range: the edges do not move


def test_unique_ties_share_the_cotangent_evenly():
    x = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 3.0])
    w = np.array([10.0, 20.0, 30.0])
    g = yb.grad(lambda a: np.sum(np.unique(a) * w))(x)
    expected = np.array([w[2] / 3, w[0] / 2, w[2] / 3, w[1], w[0] / 2, w[2] / 3])
    np.testing.assert_allclose(g, expected)
    _, t = yb.jvp(np.unique, (x,), (np.arange(6.0),))
    np.testing.assert_allclose(t, [(1 + 4) / 2, 3, (0 + 2 + 5) / 3])  # the mean of the equal elements' tangents
    assert np.dot(g, np.arange(6.0)) == pytest.approx(np.dot(w, t))


def test_writes_restore_their_arguments():
    y0, v = rng.standard_normal(6), rng.standard_normal(6)

    def f(y, v):
        np.putmask(y, v > 0, v ** 2)
        np.copyto(y, v, where=v < -1)
        return weighted(y)

    y = y0.copy()
    gy, gv = yb.grad(f, argnums=(0, 1))(y, v)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_allclose(gy, fd_gradient(lambda a: f(a.copy(), v), y0), atol=1e-7)
    np.testing.assert_allclose(gv, fd_gradient(lambda b: f(y0.copy(), b), v), atol=1e-7)


def test_partition_values_are_numpys():
    x = rng.standard_normal((4, 7))
    np.testing.assert_array_equal(yb.jvp(lambda a: np.partition(a, (1, 5), axis=1), (x,), (x,))[0],
                                  np.partition(x, (1, 5), axis=1))


def test_argpartition_is_zero():
    x = rng.standard_normal(6)
    g = yb.grad(lambda a: np.sum(a[np.argpartition(a, 2)] * np.arange(6.0)))(x)
    np.testing.assert_allclose(g, fd_gradient(lambda a: np.sum(a[np.argpartition(a, 2)] * np.arange(6.0)), x))


def test_unique_of_ints_in_reverse():
    """np.unique_all / np.unique(return_counts=True) of an int array: the pullback indexed the
    output's fdata, which ints do not have (TypeError: '_Marker' object is not subscriptable)."""
    from tests.all_modes import check_all_modes

    def f(x):
        counts = np.unique_all(np.array([1, 2, 2])).counts
        values, repeats = np.unique([3, 1, 1], return_counts=True)
        return np.sum(counts * x) + np.sum(values * repeats * x)

    check_all_modes(f, np.array([0.5, 1.0]))
