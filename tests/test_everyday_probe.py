"""Everyday SciPy/NumPy code nobody here wrote, found failing by a probe of grad, jvp and hvp
against central differences: each call in every mode (``tests/all_modes.py``), and the refusals
that remain, by name."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .all_modes import check_all_modes

ss = pytest.importorskip("scipy.signal")
sla = pytest.importorskip("scipy.linalg")
X = np.array([0.7, 0.35, 1.2, -0.4, 0.9])


def test_savgol_filter():
    """savgol_coeffs solves a wide least-squares problem on constants through scipy.linalg.lstsq,
    which tags LAPACK routines (``func.typecode = ...``), reads ``a.flags['FORTRAN']`` and asks
    whether an array owns its memory (``a.base is None``)."""
    check_all_modes(lambda x: np.sum(ss.savgol_filter(np.concatenate([x, x]), 5, 2) ** 2), X)
    check_all_modes(lambda x: np.sum(np.sin(ss.savgol_filter(x, 3, 1, mode="nearest"))), X)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 5)])
def test_scipy_lstsq(shape):
    """Tall problems and wide (minimum-norm) ones, in the matrix and the right-hand side."""
    a0 = np.random.default_rng(3).normal(size=shape)
    b0 = np.random.default_rng(4).normal(size=shape[0])

    def f(x):
        a = a0 + 0.1 * np.outer(np.ones(shape[0]), np.resize(x, shape[1]))
        return np.sum(sla.lstsq(a, b0 * x[0], cond=None)[0] ** 2)

    check_all_modes(f, X)


def test_wide_numpy_lstsq_in_the_matrix():
    a0 = np.random.default_rng(5).normal(size=(2, 4))
    check_all_modes(lambda x: np.sum(np.sin(np.linalg.lstsq(a0 * x[0] + np.diag(x[:2]) @ a0, x[1:3], rcond=None)[0])), X)


def test_rank_deficient_lstsq_is_refused():
    def f(x):
        return np.sum(np.linalg.lstsq(np.outer(x[:3], x[:2]), x[:3], rcond=None)[0])

    with pytest.raises(RuleArgumentError, match="full-rank least-squares problems only"):
        yb.grad(f)(X)


def test_base_of_an_own_array_and_of_views():
    """``a.base`` carries its derivatives: a view's gradient and tangent are views of its base's."""
    def f(x):
        y = x * 2.0
        owns = y.base is None
        c = np.arange(6.0)[1:4]
        z = (y ** 2)[1:3]
        return np.sum(z.base * x) * (1.0 if owns else 3.0) + np.sum(c.base) * x[0]

    check_all_modes(f, X)
    check_all_modes(lambda x: np.sum(np.sin(x[::2].base) * x), X)


def test_base_of_a_view_of_a_view():
    """NumPy's ``base`` is the array that owns the memory, past intermediate views."""
    check_all_modes(lambda x: np.sum(np.cos((x * 1.5).reshape(-1, 1)[:, 0][1:].base) * x), X)


def test_hilbert_envelope_through_scipy_fft():
    check_all_modes(lambda x: np.sum(np.abs(ss.hilbert(np.concatenate([x, x ** 2]))) ** 2), X)
    check_all_modes(lambda x: np.sum(np.unwrap(np.angle(ss.hilbert(np.sin(3 * x))))), X)


def test_scipy_fft_transforms():
    sfft = pytest.importorskip("scipy.fft")
    check_all_modes(lambda x: np.sum(np.abs(sfft.rfft(x, n=8, norm="ortho")) ** 2 * np.arange(5)), X)
    check_all_modes(lambda x: np.sum(np.real(sfft.ifft2(np.outer(x, x ** 2), s=(4, 6))) ** 3), X)


@pytest.mark.parametrize("solver", ["linprog"])  # curve_fit, leastsq: tests/test_scipy_curve_fit.py
def test_optimizers_refused_by_name(solver):
    so = pytest.importorskip("scipy.optimize")
    calls = {
        "linprog": lambda x: so.linprog([x[0], 1.0], bounds=[(0, 1)] * 2).fun,
    }
    for run in (lambda f: yb.grad(f)(X), lambda f: yb.jvp(f, (X,), (X,)), lambda f: yb.hvp(f, (X,), (X,))):
        with pytest.raises(RuleArgumentError, match=f"scipy.optimize.{solver}: .*What to do"):
            run(calls[solver])


def test_curve_fit_advice_works_as_printed():
    """The refusal's advice: least_squares of the model's residual, in every mode."""
    so = pytest.importorskip("scipy.optimize")
    t = np.linspace(0, 1, 6)

    def f(x):
        ydata = x[0] * np.exp(-t) + x[1] + 0.1 * np.sin(7 * t) * x[2]
        p = so.least_squares(lambda p: model(t, *p) - ydata, np.array([1.0, 0.0]), xtol=1e-15, ftol=1e-15, gtol=1e-15).x
        return p[0] ** 2 + np.sin(p[1])

    check_all_modes(f, X, tol=1e-4)


def model(xdata, a, b):
    return a * np.exp(-xdata) + b


def test_combinations_with_replacement():
    """Monomials of every degree up to 2 (RBFInterpolator's polynomial powers are built so)."""
    import itertools

    check_all_modes(lambda x: sum(a * b for a, b in itertools.combinations_with_replacement(x[:3], 2)), X)
    check_all_modes(lambda x: sum(np.prod(c) for c in itertools.combinations_with_replacement(list(x), 3)), X)


def test_ndimage_rank_filters():
    """median_filter (was MissingRuleError at the C rank_filter), minimum_filter, maximum_filter."""
    ndi = pytest.importorskip("scipy.ndimage")
    check_all_modes(lambda x: np.sum(ndi.median_filter(np.outer(x, x ** 2), 2) ** 2), X)
    check_all_modes(lambda x: np.sum(np.sin(ndi.median_filter(x * np.arange(5.0), 3, mode="nearest"))), X)
    check_all_modes(lambda x: np.sum(ndi.maximum_filter(np.outer(x, x), (2, 3)) - ndi.minimum_filter(x, 2)[0]), X)
    with pytest.raises(RuleArgumentError, match="footprint"):
        yb.grad(lambda x: np.sum(ndi.median_filter(x, footprint=np.ones(3, bool))))(X)
