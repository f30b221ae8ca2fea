"""NumPy forms around the functions: ``x.astype`` to every float and complex dtype (and to int:
zero derivative), ``ndarray.item``/``tolist``, ``x.flat`` and ``np.nditer`` (differentiated:
``rules/numpy_iterators.py``, ``tests/test_numpy_iterators.py``) and their index-based forms, and
the clear refusal of ``numpy.ma`` masked arrays given to NumPy functions, whose advice is checked to work as printed
(against finite differences). The NumPy scalar constructors' cases live in ``rules/numpy_creation.py``."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.cases import Case
from yuebing.testing.cases import run_case
from yuebing.testing.second_order import check_second_order

RNG = np.random.default_rng(1404)
X = RNG.standard_normal(5)
LOW = {"rtol": 1e-3, "atol": 1e-4, "steps": (3e-2, 1e-2)}  # a float32/complex64 result
HALF = {"rtol": 2e-2, "atol": 2e-2, "steps": (3e-2, 1e-2)}

ASTYPE = [
    Case(np.ndarray.astype, X, np.float64, name="astype(float64)"),
    Case(np.ndarray.astype, X, np.float32, name="astype(float32)", **LOW),
    Case(np.ndarray.astype, X, "float32", name="astype('float32')", **LOW),
    Case(np.ndarray.astype, X, np.float16, name="astype(float16)", **HALF),
    Case(np.ndarray.astype, X, np.longdouble, name="astype(longdouble)"),
    Case(np.ndarray.astype, X, np.complex128, name="astype(complex128)"),
    Case(np.ndarray.astype, X, np.complex64, name="astype(complex64)", **LOW),
    Case(np.ndarray.astype, X, complex, name="astype(complex)"),
    Case(np.ndarray.astype, X.astype(np.float32), np.float64, name="float32.astype(float64)"),
    Case(np.ndarray.astype, X + 0.5j * X[::-1], np.complex64, name="complex128.astype(complex64)", **LOW),
    Case(np.ndarray.astype, X, np.int64, name="astype(int64): zero derivative"),
    Case(np.ndarray.astype, X, bool, name="astype(bool): zero derivative"),
    Case(np.ndarray.item, X, 3, name="item(3)"),
    Case(np.ndarray.item, X.reshape(5, 1), (4, 0), name="item((4, 0))"),
    Case(np.ndarray.item, np.array(0.25), name="item() of 0-d"),
    Case(np.ndarray.tolist, X.reshape(5, 1), name="tolist(2-d)"),
]


@pytest.mark.parametrize("case", ASTYPE, ids=[c.name for c in ASTYPE])
def test_casts_and_items(case):
    run_case(case)


# float64 results (central differences of a float32 gradient are too coarse for a second derivative)
SECOND_ORDER = [c for c in ASTYPE if c.args[0].dtype == np.float64
                and (c.f is not np.ndarray.astype or c.args[1] in (np.float64, np.longdouble, np.int64))]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c.name for c in SECOND_ORDER])
def test_casts_and_items_second_order(case):
    check_second_order(case.f, *case.args, kwargs=case.kwargs)


def test_itemset_is_gone_from_this_numpy():
    """NumPy 2 removed ndarray.itemset; nothing to differentiate (x[i] = v is the replacement)."""
    assert not hasattr(np.ndarray, "itemset")


def _fd_gradient(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size).reshape((x.size,) + x.shape)]).reshape(x.shape)


def _all_modes(f, x):
    """Reverse mode against finite differences, forward mode against it, one HVP column against
    central differences of the gradient."""
    g = yb.grad(f)(x)
    np.testing.assert_allclose(g, _fd_gradient(f, x), rtol=1e-6, atol=1e-8)
    d = RNG.standard_normal(x.shape)
    _, t = yb.jvp(f, (x,), (d,))
    np.testing.assert_allclose(t, np.sum(g * d), rtol=1e-9, atol=1e-12)
    _, _, (hv,) = yb.hvp(f, (x,), (d,))
    eps = 1e-5
    fd = (yb.grad(f)(x + eps * d) - yb.grad(f)(x - eps * d)) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)


def _refused_in_every_mode(f, x, match):
    for run in (lambda: yb.grad(f)(x), lambda: yb.jvp(f, (x,), (x,)), lambda: yb.hvp(f, (x,), (x,))):
        with pytest.raises(TypeError, match=match):
            run()


def test_flat_and_its_index_based_forms_are_differentiated():
    m = RNG.standard_normal((3, 4))

    def reads(x):
        return x.flat[5] ** 2

    def writes(x):
        y = x * 1.0
        y.flat[[2, 7]] = x[0, 0] ** 2
        return np.sum(y * y)

    _all_modes(reads, m)
    _all_modes(writes, m)

    def reads_as_advised(x):
        return np.ravel(x)[5] ** 2 + x.item(6) ** 2

    def writes_as_advised(x):
        y = x * 1.0
        y[np.unravel_index([2, 7], y.shape)] = x[0, 0] ** 2
        return np.sum(y * y)

    _all_modes(reads_as_advised, m)
    _all_modes(writes_as_advised, m)


def test_nditer_and_its_ravel_form_are_differentiated():
    def iterated(x):
        total = 0.0
        for v in np.nditer(x):
            total = total + v * v
        return total

    _all_modes(iterated, X)

    def as_advised(x):
        total = 0.0
        for v in x.ravel():
            total = total + v * np.sin(v)
        return total

    _all_modes(as_advised, X)


def test_masked_arrays_given_to_numpy_functions_are_refused_and_the_advice_works():
    data, mask = RNG.standard_normal(5), np.array([False, True, False, False, True])
    masked = np.ma.masked_array(data, mask=mask)
    # as an argument: np.roll's array rule would have given the masked elements derivatives (np.sum(m), which
    # NumPy hands to m.sum(), is differentiated as numpy.ma's: test_numpy_masked.py; np.diff, np.where and
    # the joins are written as NumPy computes them: test_numpy_masked_joins.py)
    _refused_in_every_mode(lambda x: np.sum(np.roll(x, 1) ** 2), masked, "numpy.ma")
    # made inside, then given to a NumPy function that numpy.ma does not reach
    _refused_in_every_mode(lambda x: np.sum(np.roll(np.ma.exp(x), 1) ** 2), data, "numpy.ma")

    def as_advised(x):
        return np.sum(np.diff(np.where(mask, 0.0, x)) ** 2)

    assert np.isclose(as_advised(data), np.sum(np.diff(np.ma.masked_array(data, mask=mask).filled(0.0)) ** 2))
    _all_modes(as_advised, data)
