"""NumPy ufuncs given a scipy.sparse matrix (``rules/scipy_sparse_ufuncs.py``): what NumPy's object
loop calls (``abs(A)``, ``A * A``, ``A.sqrt()``, ``A * 2.0``), in every mode against central
differences (``tests.modes.check_every_mode``), ``scipy.sparse.linalg.norm`` along an axis (which
calls ``np.abs``); the refusals are in tests/test_scipy_sparse.py."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

sps = pytest.importorskip("scipy.sparse")
spl = pytest.importorskip("scipy.sparse.linalg")

N = 5
PATTERN = (sps.random(N, N, density=0.4, format="csr", random_state=5) + sps.eye(N)).tocsr()
X0 = np.array([0.7, 0.35, 1.2, -0.4, 0.9])


def _matrix(x, cls=sps.csr_array):
    """A sparse matrix whose stored entries move with ``x`` (some negative: ``abs`` has a kink)."""
    return cls(PATTERN.multiply(np.outer(x, np.cos(x) + 0.3)))


def _positive(x, cls=sps.csr_array):
    return cls(PATTERN.multiply(np.outer(x ** 2 + 0.5, np.ones(N))))


UNARY = {
    "np.abs": lambda x: np.sum((np.abs(_matrix(x)) @ x) ** 2),
    "np.absolute (csc)": lambda x: np.absolute(_matrix(x, sps.csc_array)).sum() * x[0],
    "np.negative": lambda x: np.sum(np.negative(_matrix(x)) @ np.sin(x)),
    "np.square": lambda x: np.square(_matrix(x)).sum() + np.sum(np.square(_matrix(x)) @ x),
    "np.square (csr_matrix: a product)": lambda x: np.sum(np.square(_matrix(x, sps.csr_matrix)) @ x),
    "np.sqrt": lambda x: np.sum(np.sqrt(_positive(x)) @ x),
    "np.sin": lambda x: np.sin(_matrix(x)).sum(),
    "np.tanh (coo)": lambda x: np.sum(np.tanh(_matrix(x, sps.coo_array)) @ x),
    "np.expm1": lambda x: np.expm1(_matrix(x) * 0.3).sum(),
    "np.log1p": lambda x: np.sum(np.log1p(_positive(x)) @ x),
    "np.arctan": lambda x: np.arctan(_matrix(x)).sum(),
    "np.conjugate": lambda x: np.sum(np.conjugate(_matrix(x)) @ x),
}

BINARY = {
    "np.multiply(A, number)": lambda x: np.multiply(_matrix(x), x[1]).sum(),
    "np.add(A, B)": lambda x: np.sum(np.add(_matrix(x), _positive(x)) @ x),
    "np.subtract(A, B)": lambda x: np.subtract(_matrix(x), _positive(x)).sum(),
    "np.true_divide(A, number)": lambda x: np.true_divide(_matrix(x), x[2] + 2.0).sum(),
    "np.power(A, 3)": lambda x: np.power(_matrix(x), 3).sum(),
}

NORMS = {
    "norm(A, 1, axis=0)": lambda x: np.sum(spl.norm(_matrix(x), 1, axis=0) ** 2),
    "norm(A, 1, axis=1)": lambda x: np.sum(spl.norm(_matrix(x), 1, axis=1) ** 2),
    "norm(A, axis=1)": lambda x: np.sum(spl.norm(_matrix(x), axis=1)),
    "norm(A, 1)": lambda x: spl.norm(_matrix(x), 1),
    "norm(A, np.inf) (csr_matrix)": lambda x: spl.norm(_matrix(x, sps.csr_matrix), np.inf),
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_ufunc_of_a_sparse_matrix(name):
    check_every_mode(UNARY[name], X0)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_ufunc_of_sparse_matrices_and_numbers(name):
    check_every_mode(BINARY[name], X0)


@pytest.mark.parametrize("name", list(NORMS))
def test_norm_calling_np_abs(name):
    check_every_mode(NORMS[name], X0)


def test_the_value_is_what_numpy_computes():
    A = _positive(X0)
    for f in (np.abs, np.sqrt, np.square, np.sin):
        assert yb.value_and_grad(lambda x: f(_positive(x)).sum())(X0)[0] == f(A).sum()

