"""Third derivatives (``yb.hessian``/``yb.hvp`` of a function calling ``yb.grad``) through the
primitives given a forward definition for third order (``rules/linalg/third_order.py``,
``rules/scipy_linalg_third_order.py``, ``rules/scipy_special_third_order.py``,
``rules/numpy_third_order.py``, ``cmath`` in ``rules/math_cmath.py``), through the primitives
third order refused before without a cause found (``map_coordinates``, ``np.maximum.reduce``),
and through NumPy's dispatchers followed to their Python implementation (``np.block``...).

``check_third_order`` checks the Hessian-vector products of ``F(x) = <v, grad(s)(x)>`` (third
derivatives of the primitive, forward over reverse over reverse) against central differences of
``yb.grad(F)`` (reverse over reverse: second derivatives only); its ``check_second_order`` also
compares ``yb.hessian`` with ``yb.hvp``. The first- and second-order rules of the same primitives
are checked by their ``CASES`` (``tests/test_rules.py``, ``tests/test_second_order.py``).
"""
from __future__ import annotations

import cmath

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.ndimage as ndimage
import scipy.special as special

import yuebing as yb
from yuebing.rules.core import RuleArgumentError
from yuebing.testing.third_order import check_third_order

RNG = np.random.default_rng(20)
A = RNG.normal(size=(3, 3))
SPD = A @ A.T + 3 * np.eye(3)
B = RNG.normal(size=3)
TALL = RNG.normal(size=(4, 3))
X = np.array([0.3, -0.7, 1.1, 0.45])
Y = np.array([0.9, -0.2, 0.6, 1.7])
BAND = np.array([[0.0, 1.0, 0.5], [4.0, 5.0, 6.0], [0.3, 0.2, 0.0]])
HBAND = np.array([[0.0, 0.5, 0.3], [4.0, 5.0, 6.0]])

LINALG = {
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], (A + 3 * np.eye(3),)),
    "slogdet negative determinant": (lambda a: np.linalg.slogdet(a).logabsdet, (A - 3 * np.eye(3),)),
    "slogdet whole result": (np.linalg.slogdet, (A - 3 * np.eye(3),)),
    "slogdet stack": (lambda a: np.linalg.slogdet(a)[1], (np.stack([A + 3 * np.eye(3), A - 3 * np.eye(3)]),)),
    "eigh eigenvalues": (lambda a: np.linalg.eigh(a)[0], (SPD,)),
    "eigh eigenvectors": (lambda a: np.linalg.eigh(a)[1], (SPD,)),
    "eigh UPLO='U'": (lambda a: np.linalg.eigh(a, UPLO="U").eigenvectors, (A,)),
    "eigvalsh": (np.linalg.eigvalsh, (SPD,)),
    "eigvalsh 'U'": (lambda a: np.linalg.eigvalsh(a, "U"), (A,)),
    "lstsq solution": (lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (TALL, RNG.normal(size=4))),
    "lstsq residuals and singular values": (
        lambda a, b: np.linalg.lstsq(a, b)[1] + np.sum(np.linalg.lstsq(a, b)[3]), (TALL, RNG.normal(size=(4, 2)))),
    "cho_factor with cho_solve": (lambda a: sla.cho_solve(sla.cho_factor(a), B), (SPD,)),
    "cho_factor upper": (lambda a: sla.cho_factor(a)[0], (SPD,)),
    "cho_factor lower": (lambda a: sla.cho_factor(a, lower=True)[0], (SPD,)),
    "scipy.linalg.eigh eigenvalues": (lambda a: sla.eigh(a)[0], (SPD,)),
    "scipy.linalg.eigh eigenvectors, upper": (lambda a: sla.eigh(a, lower=False)[1], (SPD + np.tril(A, -1),)),
    "scipy.linalg.eigh eigvals_only=": (lambda a: sla.eigh(a, eigvals_only=True), (SPD,)),
    "scipy.linalg.eigvalsh": (sla.eigvalsh, (SPD,)),
    "expm": (sla.expm, (0.3 * A,)),
    "logm": (sla.logm, (SPD,)),
    "sqrtm": (sla.sqrtm, (SPD,)),
    "solve_triangular": (sla.solve_triangular, (np.triu(SPD), B)),
    "solve_triangular trans, lower, unit": (
        lambda a, b: sla.solve_triangular(a, b, trans="T", lower=True, unit_diagonal=True),
        (np.tril(A), RNG.normal(size=(3, 2)))),
    "solve_banded": (lambda ab, b: sla.solve_banded((1, 1), ab, b), (BAND, B)),
    "solveh_banded": (sla.solveh_banded, (HBAND, B)),
    "solve_sylvester": (sla.solve_sylvester, (A + 3 * np.eye(3), SPD, A)),
    "solve_continuous_lyapunov": (sla.solve_continuous_lyapunov, (A - 3 * np.eye(3), SPD)),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linear_algebra(name):
    f, args = LINALG[name]
    check_third_order(f, *args)


DISTINCT = np.array([0.3, 0.1, 0.35, 0.7])  # unique: no ties, where differences would change the count
M = RNG.normal(size=(3, 4))

SELECTIONS_AND_SOURCES = {
    "unique": (np.unique, (DISTINCT,)),
    "unique return_counts=": (lambda a: np.unique(a, return_counts=True)[0], (DISTINCT,)),
    "unique axis=": (lambda a: np.unique(a, axis=0), (np.array([[0.3, 0.1], [0.35, 0.1], [0.7, 0.2]]),)),
    "unique_values": (np.unique_values, (DISTINCT,)),
    "block": (lambda a, b: np.block([[a, b], [b, a]]), (X, Y)),
    "broadcast_arrays": (lambda a, b: np.broadcast_arrays(a[:, None], b)[0], (X, Y)),
    "ediff1d": (np.ediff1d, (X,)),
    "geomspace": (lambda a: np.geomspace(a, 3.0, 5), (1.5,)),
    "i0": (np.i0, (X,)),
    "polyadd": (np.polyadd, (X, Y[:3])),
    "polysub": (np.polysub, (X, Y[:3])),
    "polyder": (np.polyder, (X,)),
    "polyint": (np.polyint, (X,)),
    "polydiv": (lambda a, b: np.polydiv(a, b)[0], (X, Y[:2])),
    "resize": (lambda a: np.resize(a, 6), (X,)),
    "unstack": (lambda a: np.unstack(a)[1], (M,)),
    "unwrap": (np.unwrap, (3 * X,)),
    "vander": (np.vander, (X,)),
    "sort_complex": (lambda a: np.sort_complex(a).real, (X,)),
    "apply_over_axes": (lambda a: np.apply_over_axes(np.sum, a, [0]), (M,)),
    "union1d": (np.union1d, (X, Y)),
    # disjoint sets: a shared value is a tie that differences would break
    "intersect1d": (lambda a, b: np.sum(np.intersect1d(a, b)) + np.sum(a * b), (X, Y)),
    "setdiff1d": (np.setdiff1d, (X, Y)),
    "setxor1d": (np.setxor1d, (X, Y)),
}


@pytest.mark.parametrize("name", sorted(SELECTIONS_AND_SOURCES))
def test_selections_and_numpy_sources(name):
    f, args = SELECTIONS_AND_SOURCES[name]
    check_third_order(f, *args)


def clipped_correlations(u):
    return np.sum(np.corrcoef(u) ** 2)


def polynomial_of_roots(u):
    return np.sum(np.poly(u) ** 2)


def weighted_histogram(u):
    return np.sum(np.histogram2d(u, Y, bins=2, weights=u * Y)[0] ** 2)


#: NumPy dispatchers whose source third order still refuses, by the construct it meets
STILL_REFUSED = {
    "corrcoef": (clipped_correlations, M, "numpy.clip"),
    "poly": (polynomial_of_roots, X, "mixing numbers and ints"),
}


def test_histogram2d():
    """(refused while a handler that ran was: its wrong Hessian came from histogramdd's write into
    an int array kept in a tuple, ``Ncount[i][on_edge] -= 1``, made twice)"""
    check_third_order(weighted_histogram, X)


@pytest.mark.parametrize("name", sorted(STILL_REFUSED))
def test_sources_still_refused_by_name(name):
    g, x, message = STILL_REFUSED[name]
    F = lambda x: np.sum(yb.grad(g)(x) ** 2)  # noqa: E731
    with pytest.raises(Exception, match=message):  # noqa: B017 - a NestedDifferentiationError or SecondOrderError
        yb.hessian(F)(x)


GRID = RNG.normal(size=(5, 5))
COORDINATES = np.array([[0.5, 1.2, 2.1], [0.3, 1.7, 0.9]])
TRIANGULAR = np.triu(A) + np.diag([0.1, 1.1, 2.1])  # real, distinct eigenvalues; not symmetric

OTHERS = {
    "polygamma": (lambda x: special.polygamma(1, x), (np.array([1.3, 2.2]),)),
    "polygamma orders": (lambda x: special.polygamma(np.array([0, 2]), x), (np.array([1.3, 2.2]),)),
    "zeta in q": (lambda q: special.zeta(2.5, q), (np.array([1.3, 2.2]),)),
    "zeta q=": (lambda q: special.zeta(3.0, q=q), (np.array([1.3, 2.2]),)),
    "maximum.reduce": (np.maximum.reduce, (X,)),
    "maximum.reduce axis=None": (lambda x: np.maximum.reduce(x, axis=None), (M,)),
    "minimum.reduce axis 1": (lambda x: np.minimum.reduce(x, 1), (M,)),
    "minimum.reduce keepdims": (lambda x: np.minimum.reduce(x, axis=None, keepdims=True), (M,)),
    "map_coordinates order 3": (lambda g: ndimage.map_coordinates(g, COORDINATES, order=3), (GRID,)),
    "map_coordinates order 1": (lambda g: ndimage.map_coordinates(g, COORDINATES, order=1), (GRID,)),
    "map_coordinates order 2, nearest": (
        lambda g: ndimage.map_coordinates(g, COORDINATES + 3.5, order=2, mode="nearest"), (GRID,)),
    "map_coordinates prefilter=False": (
        lambda g: ndimage.map_coordinates(g, COORDINATES, order=3, prefilter=False), (GRID,)),
    "map_coordinates coordinates": (ndimage.map_coordinates, (GRID, COORDINATES)),
    "cmath.phase": (lambda x: cmath.phase(complex(x[0], x[1])) * x[0], (X[:2],)),
    "cmath.phase of a real": (lambda x: cmath.phase(x[0] - 2.0) * x[1], (X[:2],)),
    "cmath.polar": (lambda x: cmath.polar(complex(x[0], x[1]))[1] * x[1] + cmath.polar(x[0] + 1j)[0], (X[:2],)),
    "cmath.rect": (lambda x: abs(cmath.rect(x[0], x[1])) + cmath.rect(x[0], x[1]).imag ** 2, (X[:2],)),
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_special_functions_reductions_and_complex_numbers(name):
    f, args = OTHERS[name]
    check_third_order(f, *args)


def test_generalised_eigh_is_refused_by_name():
    with pytest.raises(RuleArgumentError, match="third derivatives .* scipy.linalg.eigh with b="):
        check_third_order(lambda a: sla.eigh(a, SPD)[0], SPD + 0.5 * np.eye(3))


def test_zeta_exponent_is_refused_as_in_every_mode():
    with pytest.raises(RuleArgumentError, match="scipy.special.zeta: yuebing does not differentiate with respect to x"):
        check_third_order(lambda x: special.zeta(x, 1.5), np.array([2.3, 3.2]))


# a real matrix that is not symmetric, with real eigenvalues far apart: LAPACK keeps their order
# under the differences' perturbations (a triangular matrix's order changes: no differences there)
_P = RNG.normal(size=(3, 3))
NONSYMMETRIC = _P @ np.diag([0.5, 1.5, 3.0]) @ np.linalg.inv(_P)

EIGEN = {
    "eig eigenvalues": lambda a: np.linalg.eig(a)[0],
    "eig eigenvectors": lambda a: np.linalg.eig(a).eigenvectors,
    "eigvals": np.linalg.eigvals,
}


@pytest.mark.parametrize("name", sorted(EIGEN))
def test_eig_with_real_eigenvalues(name):
    check_third_order(EIGEN[name], NONSYMMETRIC)


def rotation_eigenvalues(a):
    return np.sum(np.abs(np.linalg.eigvals(a)) ** 2)


def test_complex_eigenvalues_are_refused_by_name():
    F = lambda x: np.sum(yb.grad(rotation_eigenvalues)(x) ** 2)  # noqa: E731
    rotation = np.array([[0.0, -2.0, 0.3], [2.0, 0.0, 0.1], [0.2, 0.4, 1.0]])
    with pytest.raises(yb.NestedDifferentiationError, match="numpy.linalg.eigvals .it returns a ndarray holding complex"):
        yb.hessian(F)(rotation)
