"""Third derivatives (``yb.hvp`` of a function calling ``yb.grad``) through objects of library
classes (``transform/third_order_library.py``).

SciPy's sparse matrices are followed from SciPy's source as in the other orders: constant
matrices scaled, multiplied and summed (``A * x[0]`` runs SciPy's ``prune``, a Python
definition), matrices built from the differentiated values, and a sparse matrix as the argument
of the inner gradient. Each is checked in third order against central differences of reverse
over reverse (``check_third_order``), and in the slow run in reverse, forward, second and third
order (``check_every_order``). Before, ``A * x[0]`` crashed with ``TypeError: unsupported
operand type(s) for *: 'float' and 'MutableTangent'`` and ``A @ x`` with a ``ValueError``.

Objects of other libraries' Python classes (``np.poly1d``, ``np.polynomial.Polynomial``,
``CubicSpline``) are refused by name, at the user's line (their operators crashed the same way, a
call with ``TypeError: unhashable type``); the advice, the Hessian of the function itself, works.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.every_order import check_every_order
from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order

sps = pytest.importorskip("scipy.sparse")

A = sps.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
B = sps.csc_matrix(np.array([[1.0, 0.0], [0.0, -3.0], [2.0, 0.0]]))
X0 = np.array([0.3, 0.7, -0.4])
V = np.array([1.0, -0.5, 0.2])

SPARSE = {
    # the brief's crash: a scaled matrix's entries multiplied by the matrix's
    "scaled.multiply": lambda x: np.sum((A * x[0]).multiply(A)) * x[1] ** 2 + np.sum(np.sin(x)),
    "np.sum(A) (a linear rule's delegate)": lambda x: np.sum(A) * x[0] ** 3 + np.sum(np.sin(x)),
    "A @ x": lambda x: np.sum(np.sin(A @ x)),
    "A.multiply(x)": lambda x: np.sum(np.sin(A.multiply(x).toarray())),
    "(x0 * A).sum() and B.T @ x": lambda x: (x[0] * A).sum() * x[1] ** 2 + np.sum(np.tanh(B.T @ x)),
    "built from x": lambda x: np.sum(np.cos(sps.diags(x ** 2, format="csr") @ x)),
}


#: the longer ones (some 10 s each on a shared machine) in the slow run only
_LONGER = ("A.multiply(x)", "built from x")


@pytest.mark.parametrize("f", [pytest.param(f, id=name, marks=[pytest.mark.slow] if name in _LONGER else [])
                               for name, f in SPARSE.items()])
def test_sparse_matrices_in_third_order(f):
    check_third_order(f, X0.copy())


@pytest.mark.slow
@pytest.mark.parametrize("f", SPARSE.values(), ids=SPARSE.keys())
def test_sparse_matrices_in_every_order(f):
    check_every_order(f, X0.copy(), V, rtol=1e-5)


def _cubes_of_entries(M):
    return np.sum(M.data ** 3)


def _gradient_in_a_sparse_matrix(x):
    g = yb.grad(_cubes_of_entries)(sps.csr_matrix(np.diag(x)))
    return np.sum(g.fields["data"] * np.sin(x))


def test_a_sparse_matrix_as_the_inner_gradients_argument():
    # (refused before as "argument 0 (a csr_matrix) is or holds something else")
    check_second_order(_gradient_in_a_sparse_matrix, X0.copy())


P = np.poly1d([1.0, 2.0, 3.0])
Q = np.polynomial.Polynomial([1.0, 2.0, 3.0])


def poly1d_scaled(x):
    return np.sum((P * x[0])(x))


def polynomial_scaled(x):
    return np.sum((Q * x[0])(x))


def poly1d_called(x):
    return np.sum(P(x) ** 2)


REFUSED = [(poly1d_scaled, "operator.mul of objects of a library's class \\(numpy.poly1d\\)"),
           (polynomial_scaled, "operator.mul of objects of a library's class \\(numpy.polynomial"),
           (poly1d_called, "calls of objects of a library's class \\(numpy.poly1d\\)")]


@pytest.mark.parametrize("f, message", REFUSED, ids=lambda v: getattr(v, "__name__", ""))
def test_other_library_objects_are_refused_by_name_and_the_advice_works(f, message):
    with pytest.raises(yb.NestedDifferentiationError, match=message) as error:
        check_third_order(f, X0.copy())
    notes = "".join(getattr(error.value, "__notes__", []))
    assert "test_third_order_library_objects.py" in notes and "return np.sum(" in notes
    check_second_order(f, X0.copy())  # the advice: the Hessian of the function itself
