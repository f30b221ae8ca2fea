"""scipy.sparse under differentiation (``rules/scipy_sparse*.py``): constant sparse matrices times
differentiated vectors, matrices built from the differentiated values, and the direct solvers
(``spsolve``, ``splu``, ``factorized``), each in every mode against central differences
(``tests.modes.check_every_mode``: ``grad``, ``jvp``, ``jacobian(mode="fwd")``, ``hvp``,
``hessian``); small PDE solves whose coefficients are differentiated; each kernel's definition
against SciPy's own kernel; and the refusals."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

sps = pytest.importorskip("scipy.sparse")
spl = pytest.importorskip("scipy.sparse.linalg")

from scipy.sparse import _sparsetools as kernels  # noqa: E402 - after the skip
from yuebing.rules.core import FRULES, RuleArgumentError  # noqa: E402

N = 5
LAPLACIAN = sps.diags([np.full(N - 1, -1.0), np.full(N, 2.0), np.full(N - 1, -1.0)], [-1, 0, 1], format="csr")
RANDOM = (sps.random(N, N, density=0.4, format="csr", random_state=3) + sps.eye(N)).tocsr()
RANDOM_ARRAY = sps.csr_array(RANDOM)
X0 = np.array([0.7, 0.35, 1.2, -0.4, 0.9])
ROWS, COLS = np.array([0, 1, 2, 3, 4, 0, 2]), np.array([0, 1, 2, 3, 4, 3, 0])


def _columns(x):
    return np.outer(x, [1.0, -0.5])


# --------------------------------------------------------------------------------------------
# A constant matrix times the differentiated vector
# --------------------------------------------------------------------------------------------

CONSTANT = {
    "csr @ x": lambda x: np.sum((LAPLACIAN @ x) ** 2) + x @ (LAPLACIAN @ x),
    "csc @ x": lambda x: np.sum((LAPLACIAN.tocsc() @ x) ** 3),
    "coo @ x": lambda x: np.sum((RANDOM.tocoo() @ x) ** 2),
    "dia @ x": lambda x: np.sum((LAPLACIAN.todia() @ x) ** 2),
    "A.T @ x": lambda x: np.sum((RANDOM.T @ x) ** 2),
    "x @ A": lambda x: np.sum((x @ RANDOM) ** 2),
    "A.dot(x)": lambda x: np.sum(RANDOM.dot(x) * x),
    "csr @ X (2-d)": lambda x: np.sum((RANDOM @ _columns(x)) ** 2),
    "csc @ X (2-d)": lambda x: np.sum((RANDOM.tocsc() @ _columns(x)) ** 2),
    "coo @ X (2-d)": lambda x: np.sum((RANDOM.tocoo() @ _columns(x)) ** 2),
    "dia @ X (2-d)": lambda x: np.sum((LAPLACIAN.todia() @ _columns(x)) ** 2),
    "csr_array @ x": lambda x: np.sum((RANDOM_ARRAY @ x) ** 2),
    "spsolve(csc, b)": lambda x: np.sum(spl.spsolve(LAPLACIAN.tocsc(), x ** 2) ** 2),
    "spsolve(csr, b)": lambda x: np.sum(spl.spsolve(RANDOM, np.sin(x)) ** 2),
    "spsolve(csc, B) (2-d)": lambda x: np.sum(spl.spsolve(LAPLACIAN.tocsc(), _columns(x)) ** 2),
}


@pytest.mark.parametrize("name", list(CONSTANT))
def test_constant_matrix(name):
    check_every_mode(CONSTANT[name], X0)


_FACTOR = spl.splu(RANDOM.tocsc())


def test_a_factor_made_outside_is_a_constant_matrix():
    check_every_mode(lambda x: np.sum(_FACTOR.solve(x ** 2) ** 2) + np.sum(_FACTOR.solve(x, trans="T")), X0)


# --------------------------------------------------------------------------------------------
# Matrices built from the differentiated values
# --------------------------------------------------------------------------------------------


def _lil_filled(x):
    A = sps.lil_matrix((N, N))
    for i in range(N):
        A[i, i] = x[i]
    return np.sum(A.tocsr() @ x)


def _entries_listed(x):
    """What the LIL/DOK refusal advises: the entries collected in lists, then a CSR array."""
    values, rows, cols = [], [], []
    for i in range(N):
        values.append(x[i] ** 2)
        rows.append(i)
        cols.append((i + 1) % N)
    return np.sum((sps.csr_array((values, (rows, cols)), shape=(N, N)) @ x) ** 2)


class _Summable:
    """A user class NumPy's np.sum hands to its own sum method."""

    def __init__(self, values):
        self.values = values

    def sum(self, axis=None, dtype=None, out=None):
        return np.sum(self.values)


def _coo_of(x):
    return sps.csr_matrix((np.concatenate([x, x[:2] ** 2]), (ROWS, COLS)), shape=(N, N))


BUILT = {
    "diags(x)": lambda x: np.sum((sps.diags(x) @ x) ** 2),
    "csr_matrix((x, (i, j)))": lambda x: np.sum((_coo_of(x) @ x) ** 2),
    "duplicates summed": lambda x: np.sum((sps.csr_matrix((x, ([0, 0, 1, 1, 1], [2, 2, 0, 0, 1])), shape=(2, 3))
                                           .tocsc() @ x[:3]) ** 2),
    "L + diags(x**2)": lambda x: np.sum(((LAPLACIAN + sps.diags(x ** 2)) @ x) ** 2),
    "L - diags(x)": lambda x: np.sum((LAPLACIAN - sps.diags(x)) @ np.cos(x)),
    "A.multiply(x)": lambda x: np.sum(RANDOM.multiply(x).toarray() ** 2),
    "A.multiply(B(x))": lambda x: np.sum(RANDOM.multiply(sps.diags(x) @ RANDOM).toarray() ** 2),
    "s * A, A / s": lambda x: np.sum(((x[0] * RANDOM) @ x) ** 2) + np.sum(((RANDOM / x[1]) @ x) ** 2),
    "A @ diags(x) @ A": lambda x: np.sum((RANDOM @ sps.diags(x) @ RANDOM).toarray() ** 2),
    "toarray of coo": lambda x: np.sum(sps.coo_matrix(sps.diags(x) + RANDOM).toarray() ** 2),
    "diagonal": lambda x: np.sum((RANDOM + sps.diags(x ** 2)).diagonal(1) ** 2) + np.sum((RANDOM + sps.diags(x)).diagonal()),
    "A[i, j], A[rows], A[:, cols]": lambda x: ((RANDOM_ARRAY + sps.diags_array(x))[1, 1] ** 2
                                               + np.sum(((RANDOM_ARRAY + sps.diags_array(x))[[0, 2, 2]] @ x) ** 2)
                                               + np.sum((RANDOM_ARRAY + sps.diags_array(x))[:, [3, 0]].toarray())),
    "A[1:3], A[::2]": lambda x: (np.sum(((RANDOM_ARRAY + sps.diags_array(x))[1:3] @ x) ** 2)
                                 + np.sum(((RANDOM_ARRAY + sps.diags_array(x)).tocsc()[:, ::2]).toarray() ** 3)),
    "sum, sum(axis)": lambda x: ((RANDOM_ARRAY + sps.diags_array(x)).sum() ** 2
                                 + np.sum((RANDOM_ARRAY * sps.diags_array(x)).sum(axis=0) ** 2)),
    "maximum, power, abs": lambda x: np.sum(sps.diags(x).maximum(RANDOM).toarray() ** 2)
                                     + np.sum(abs(sps.diags(x)).power(3) @ x),
    "diags(x) @ diags(x**2) (dia @ dia)": lambda x: np.sum((sps.diags_array(x[:4], offsets=1)
                                                            @ sps.diags_array(x ** 2)) @ x),
    "kron, bsr": lambda x: (np.sum((sps.kron(sps.diags(x[:2]), RANDOM_ARRAY) @ np.arange(10.0)) ** 2)
                            + np.sum((sps.bsr_array(sps.diags_array(x[:4]) + RANDOM_ARRAY[:4, :4], blocksize=(2, 2))
                                      .tocsr() @ x[:4]) ** 2)),
    "abs(A), norm(A)": lambda x: abs(sps.diags_array(x) + RANDOM_ARRAY).sum() + spl.norm(sps.diags_array(x ** 2) + RANDOM),
    "hstack (COO), vstack (CSR)": lambda x: (np.sum((sps.hstack([sps.diags_array(x), RANDOM_ARRAY]) @ np.arange(10.0)) ** 2)
                                            + np.sum((sps.vstack([(sps.diags_array(x) + RANDOM_ARRAY).tocsr(),
                                                                  RANDOM_ARRAY]) @ x) ** 2)),
    "hstack(format='csc') of matrices": lambda x: np.sum(sps.hstack([sps.diags(x), RANDOM], format="csc").toarray() ** 2),
    "sorted_indices": lambda x: np.sum((sps.csr_matrix((x[:4], [2, 0, 3, 1], [0, 2, 4]), shape=(2, 4))
                                        .sorted_indices() @ x[:4]) ** 2),
    "complex entries": lambda x: np.sum(np.abs(sps.diags(x * (1 + 2j)) @ (x + 0.5j)) ** 2),
    # np.sum and np.mean hand a matrix to its own method (followed as SciPy's code)
    "np.sum(A), np.mean(A, axis)": lambda x: (np.sum(sps.diags_array(x) @ sps.diags_array(x)) ** 2
                                              + np.sum(np.mean(sps.csr_array(RANDOM.multiply(x)), axis=1) ** 2)
                                              + np.sum(np.sum(sps.csr_array(RANDOM.multiply(x)), axis=0) ** 3)),
    "np.mean(dia_matrix), np.sum(csr_matrix)": lambda x: (np.mean(sps.diags(x)) ** 2
                                                          + np.sum(RANDOM.multiply(np.sin(x)).tocsr()) ** 2),
    # the sums over every entry of the *_matrix classes (SciPy's go through an np.matrix)
    "csr_matrix.sum(), coo_matrix.mean()": lambda x: ((RANDOM + sps.diags(x ** 2)).sum() ** 2
                                                      + sps.coo_matrix(RANDOM + sps.diags(x ** 2)).mean() ** 3),
    "sum() with duplicates stored": lambda x: sps.csc_matrix((x, ([0, 0, 1, 1, 1], [2, 2, 0, 0, 1])),
                                                             shape=(2, 3)).sum() ** 2,
    "dia sum(), sum(axis=0)": lambda x: (sps.diags_array(x).sum() ** 2 + sps.diags(x, 1).sum() ** 3
                                         + np.sum(sps.diags_array(x, offsets=1).sum(axis=0) ** 2)),
    "row and column sums of a csr_matrix as products": lambda x: (np.sum(((RANDOM + sps.diags(x)) @ np.ones(N)) ** 2)
                                                                 + np.sum((np.ones(N) @ (RANDOM + sps.diags(x))) ** 3)),
    "np.sum(user object)": lambda x: np.sum(_Summable(x ** 2)) ** 2,
    "bmat with None blocks": lambda x: np.sum((sps.bmat([[sps.diags(x), RANDOM], [None, sps.diags(x ** 2)]])
                                               @ np.arange(10.0)) ** 2),
    "bmat(format='csr'), a dense block": lambda x: (np.sum(sps.bmat([[sps.diags(x, format="csr"), RANDOM]],
                                                                    format="csr").toarray() ** 2)
                                                    + np.sum(sps.bmat([[sps.diags(x), np.outer(x, x[:2])]]).toarray() ** 2)),
    "norm(A, 1), norm(A, inf), norm(A, -1)": lambda x: (spl.norm(RANDOM_ARRAY + sps.diags_array(x), 1)
                                                        + spl.norm(RANDOM + sps.diags(x ** 2), np.inf) ** 2
                                                        + spl.norm(RANDOM.multiply(x).tocsc(), -1)),
    "entries collected in lists (the LIL/DOK advice)": _entries_listed,
    "block_array": lambda x: np.sum((sps.block_array([[None, sps.diags_array(x)], [RANDOM_ARRAY, None]])
                                     @ np.cos(np.arange(10.0))) ** 2),
}


@pytest.mark.parametrize("name", list(BUILT))
def test_matrix_built_from_x(name):
    check_every_mode(BUILT[name], X0)


_CANCELLING = sps.diags(X0)


def test_an_entry_cancelling_to_zero_keeps_its_derivative():
    """At X0, diags(x) - diags(X0) is zero everywhere: SciPy's kernel would drop every entry (and
    the derivative of the product with them); the definitions keep them as explicit zeros."""
    f = lambda x: np.sum((sps.diags(x) - _CANCELLING) @ x) + np.sum((sps.diags(x) + RANDOM).multiply(x).toarray())  # noqa: E731
    check_every_mode(f, X0)


# --------------------------------------------------------------------------------------------
# Solves with a differentiated matrix
# --------------------------------------------------------------------------------------------

SOLVES = {
    "spsolve(A(x).tocsc(), b)": lambda x: np.sum(spl.spsolve((LAPLACIAN + sps.diags(x ** 2)).tocsc(), np.ones(N))),
    "spsolve(A(x), x) (csr)": lambda x: np.sum(spl.spsolve(RANDOM + sps.diags(x ** 2), x) ** 2),
    "spsolve(A(x), B(x)) (2-d)": lambda x: np.sum(spl.spsolve((RANDOM + sps.diags(x ** 2)).tocsc(), _columns(x)) ** 2),
    "splu(A(x)).solve(b)": lambda x: np.sum(spl.splu((LAPLACIAN + sps.diags(x ** 2)).tocsc()).solve(x) ** 2),
    "splu(A(x)).solve(b, trans='T')": lambda x: np.sum(spl.splu((RANDOM + sps.diags(x ** 2)).tocsc())
                                                       .solve(np.sin(x), trans="T") ** 2),
    "cg(A(x), b) (Python iterations)": lambda x: np.sum(spl.cg(LAPLACIAN + sps.diags(x ** 2), x, rtol=1e-13,
                                                              atol=0.0)[0] ** 2),
    "factorized(A(x))(b)": lambda x: np.sum(spl.factorized((LAPLACIAN + sps.diags(np.exp(x))).tocsc())(x) ** 2),
}


@pytest.mark.parametrize("name", list(SOLVES))
def test_solve_with_a_differentiated_matrix(name):
    check_every_mode(SOLVES[name], X0)


def _stiffness(conductivity):
    """The finite-volume matrix of -(k u')' on a uniform grid with u = 0 at both ends: cell
    conductivities ``k`` (one more than the unknowns), grid step 1 / len(k)."""
    n, h = len(conductivity) - 1, 1.0 / len(conductivity)
    inner = conductivity[1:-1]
    main = (conductivity[:-1] + conductivity[1:]) / h ** 2
    return sps.diags([-inner / h ** 2, main, -inner / h ** 2], [-1, 0, 1], shape=(n, n), format="csc")


def poisson_energy(log_k):
    """The compliance f . u of the 1-D Poisson problem -(k u')' = 1 with k = exp(log_k)."""
    A = _stiffness(np.exp(log_k))
    f = np.ones(A.shape[0])
    return f @ spl.spsolve(A, f)


def heat_after_steps(log_k, steps=3, dt=0.01):
    """Backward Euler for u' = (k u')', from a bump, with one factorisation reused for every step;
    the heat left in the middle."""
    A = _stiffness(np.exp(log_k))
    n = A.shape[0]
    lu = spl.splu((sps.identity(n, format="csc") + dt * A).tocsc())
    u = np.sin(np.pi * np.arange(1, n + 1) / (n + 1))
    for _ in range(steps):
        u = lu.solve(u)
    return np.sum(u[n // 3: 2 * n // 3] ** 2)


@pytest.mark.parametrize("pde", [poisson_energy, heat_after_steps], ids=["poisson", "heat"])
def test_pde_whose_coefficients_are_differentiated(pde):
    log_k = np.log(np.linspace(0.5, 2.0, 7)) + 0.1 * np.sin(np.arange(7))
    check_every_mode(pde, log_k, rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------------------------------
# Each definition computes what SciPy's kernel computes
# --------------------------------------------------------------------------------------------

_A = sps.random(5, 6, density=0.4, format="csr", random_state=1)
_B = sps.random(5, 6, density=0.4, format="csr", random_state=2)
_C = sps.random(6, 4, density=0.5, format="csr", random_state=4)
_COO = _A.tocoo()
_DIA = sps.diags([np.arange(1.0, 5), np.arange(1.0, 6), np.arange(1.0, 5)], [-1, 0, 2], shape=(5, 6)).todia()
_UNSORTED = (np.array([0, 3, 6]), np.array([3, 1, 1, 0, 2, 2]))
_ROOM = _A.nnz + _B.nnz
_PRODUCT = kernels.csr_matmat_maxnnz(5, 4, _A.indptr, _A.indices, _C.indptr, _C.indices)
_RNG = np.random.default_rng(0)
_BSR_CSR = sps.random(4, 6, density=0.4, format="csr", random_state=6)
_BSR = _BSR_CSR.tobsr(blocksize=(2, 2))


def _ints(*sizes):
    return [np.zeros(size, dtype=np.int32) for size in sizes]


#: kernel name -> (arguments, positions of the arrays it writes); outputs start at nonzeros, so an
#: accumulating kernel and an overwriting one are told apart
KERNEL_CALLS = {
    "csr_matvec": ((5, 6, _A.indptr, _A.indices, _A.data, _RNG.standard_normal(6), np.ones(5)), (6,)),
    "csc_matvec": ((6, 5, _A.indptr, _A.indices, _A.data, _RNG.standard_normal(5), np.ones(6)), (6,)),
    "csr_matvecs": ((5, 6, 3, _A.indptr, _A.indices, _A.data, _RNG.standard_normal(18), np.ones(15)), (7,)),
    "csc_matvecs": ((6, 5, 2, _A.indptr, _A.indices, _A.data, _RNG.standard_normal(10), np.ones(12)), (7,)),
    "coo_matvec": ((_COO.nnz, _COO.row, _COO.col, _COO.data, _RNG.standard_normal(6), np.ones(5)), (5,)),
    "coo_matmat_dense": ((_COO.nnz, 3, _COO.row, _COO.col, _COO.data, _RNG.standard_normal(18), np.ones((5, 3))),
                         (6,)),
    "dia_matvec": ((5, 6, 3, _DIA.data.shape[1], _DIA.offsets, _DIA.data, _RNG.standard_normal(6), np.ones(5)), (7,)),
    "dia_matvecs": ((5, 6, 3, _DIA.data.shape[1], _DIA.offsets, _DIA.data, 3, _RNG.standard_normal((6, 3)),
                     np.ones((5, 3))), (8,)),
    "csr_todense": ((5, 6, _A.indptr, _A.indices, _A.data, np.ones((5, 6))), (5,)),
    "coo_todense": ((5, 6, _COO.nnz, _COO.row, _COO.col, _COO.data, np.ones(30), True), (6,)),
    "csr_tocsc": ((5, 6, _A.indptr, _A.indices, _A.data, *_ints(7, _A.nnz), np.ones(_A.nnz)), (5, 6, 7)),
    "coo_tocsr": ((5, 6, _COO.nnz, _COO.row, _COO.col, _COO.data, *_ints(6, _COO.nnz), np.ones(_COO.nnz)), (6, 7, 8)),
    "csr_row_index": ((2, np.array([3, 1], dtype=np.int32), _A.indptr, _A.indices, _A.data,
                       *_ints(int(np.diff(_A.indptr)[[3, 1]].sum())), np.ones(int(np.diff(_A.indptr)[[3, 1]].sum()))),
                      (5, 6)),
    "csr_row_slice": ((0, 5, 2, _A.indptr, _A.indices, _A.data, *_ints(int(np.diff(_A.indptr)[::2].sum())),
                       np.ones(int(np.diff(_A.indptr)[::2].sum()))), (6, 7)),
    "csr_hstack": ((2, 5, np.array([6, 6], dtype=np.int32), np.concatenate([_A.indptr, _B.indptr]),
                    np.concatenate([_A.indices, _B.indices]),
                    np.concatenate([_A.data, _B.data]), *_ints(6, _ROOM), np.ones(_ROOM)), (6, 7, 8)),
    "bsr_matvec": ((2, 3, 2, 2, _BSR.indptr, _BSR.indices, _BSR.data.ravel(), _RNG.standard_normal(6), np.ones(4)),
                   (8,)),
    "bsr_matvecs": ((2, 3, 2, 2, 2, _BSR.indptr, _BSR.indices, _BSR.data.ravel(), _RNG.standard_normal(12),
                     np.ones(8)), (9,)),
    "bsr_tocsr": ((2, 3, 2, 2, _BSR.indptr, _BSR.indices, _BSR.data, *_ints(5, _BSR.nnz), np.ones(_BSR.nnz)),
                  (7, 8, 9)),
    "csr_tobsr": ((4, 6, 2, 2, _BSR_CSR.indptr, _BSR_CSR.indices, _BSR_CSR.data, *_ints(3, _BSR.indices.size),
                   np.ones((_BSR.indices.size, 2, 2))), (7, 8, 9)),
    "csr_plus_csr": ((5, 6, _A.indptr, _A.indices, _A.data, _B.indptr, _B.indices, _B.data, *_ints(6, _ROOM),
                      np.ones(_ROOM)), (8, 9, 10)),
    "csr_minus_csr": ((5, 6, _A.indptr, _A.indices, _A.data, _B.indptr, _B.indices, _B.data, *_ints(6, _ROOM),
                       np.ones(_ROOM)), (8, 9, 10)),
    "csr_elmul_csr": ((5, 6, _A.indptr, _A.indices, _A.data, _A.indptr, _A.indices, _A.data[::-1].copy(),
                       *_ints(6, 2 * _A.nnz), np.ones(2 * _A.nnz)), (8, 9, 10)),
    "csr_matmat": ((5, 4, _A.indptr, _A.indices, _A.data, _C.indptr, _C.indices, _C.data, *_ints(6, _PRODUCT),
                    np.ones(_PRODUCT)), (8, 9, 10)),
    "csr_sort_indices": ((2, _UNSORTED[0], _UNSORTED[1], np.arange(1.0, 7)), (2, 3)),
    "csr_sum_duplicates": ((2, 4, _UNSORTED[0], np.array([1, 1, 3, 0, 2, 2]), np.arange(1.0, 7)), (2, 3, 4)),
    "csr_diagonal": ((-2, 5, 6, _A.indptr, _A.indices, _A.data, np.ones(3)), (6,)),
    "csr_sample_values": ((5, 6, _A.indptr, _A.indices, _A.data, 4, np.array([0, -1, 2, 4]), np.array([1, 3, 2, -2]),
                           np.ones(4)), (8,)),
}


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("name", list(KERNEL_CALLS))
def test_definition_computes_what_scipys_kernel_does(name):
    args, written = KERNEL_CALLS[name]
    kernel = getattr(kernels, name)
    by_scipy, by_definition = _copies(args), _copies(args)
    kernel(*by_scipy)
    FRULES.lookup(kernel)[0].definition(*by_definition)
    for k in written:
        np.testing.assert_allclose(by_definition[k], by_scipy[k], rtol=1e-13, err_msg=f"{name}: argument {k}")


_DIA_B = sps.random(6, 4, density=0.6, random_state=5).todia()


@pytest.mark.parametrize("kernel, args", [
    (kernels.get_csr_submatrix, (5, 6, _A.indptr, _A.indices, _A.data, 1, 4, 2, 5)),
    (kernels.dia_matmat, (5, 6, *_DIA.data.shape, _DIA.offsets, _DIA.data, 4, *_DIA_B.data.shape, _DIA_B.offsets,
                          _DIA_B.data)),
], ids=["get_csr_submatrix", "dia_matmat"])
def test_definition_returns_scipys_arrays(kernel, args):
    for ours, scipys in zip(FRULES.lookup(kernel)[0].definition(*args), kernel(*args)):
        np.testing.assert_allclose(ours, scipys, rtol=1e-13)


def test_sums_that_cancel_keep_the_entries_scipy_drops():
    """The one difference from SciPy: an exactly-zero result stays stored (same matrix)."""
    a = sps.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    b = sps.csr_matrix(np.array([[-1.0, 0.0], [4.0, 0.0]]))
    kept = {}

    def f(t):
        total = a * t + b
        kept["nnz"], kept["dense"] = total.nnz, total.toarray().copy()
        return np.sum(total @ np.ones(2))

    yb.grad(f)(1.0)
    assert kept["nnz"] == 4 and (a + b).nnz == 3
    np.testing.assert_array_equal(kept["dense"], (a + b).toarray())


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


def _eliminating(x):
    A = sps.csr_array(RANDOM_ARRAY + sps.diags_array(x))
    A.eliminate_zeros()
    return np.sum(A @ x)


def _factor_read(x):
    return np.sum(spl.splu((LAPLACIAN + sps.diags(x ** 2)).tocsc()).L.toarray())


@pytest.mark.parametrize("f, words", [
    (_eliminating, "eliminate_zeros"),
    (_factor_read, "not its factor L"),
    (lambda x: np.exp(sps.diags_array(x)).sum(), r"numpy.exp of a scipy.sparse matrix.*np.exp\(A.toarray\(\)\)"),
    (lambda x: np.maximum(sps.diags_array(x), sps.eye_array(N)).sum(), "numpy.maximum of a scipy.sparse matrix"),
    (lambda x: np.sum(np.multiply(sps.diags_array(x), np.ones(N))[0] @ x), "beside a NumPy array"),
    (lambda x: np.sqrt(sps.diags_array(x ** 2), where=True).sum(), "with keywords"),
    (lambda x: np.sum(np.asarray(sps.diags(x).tocsr().todense())), "np.matrix results of the"),
    (lambda x: np.sum(np.asarray((RANDOM + sps.diags(x)).sum(axis=0)) ** 2), "np.ones.A.shape.0.. @ A"),
    (lambda x: np.sum(np.asarray(RANDOM.mean(axis=1))) * np.sum(x), "sps.csr_array.A."),
    (lambda x: np.sum(sps.diags(x).tolil().tocsr() @ x), "LIL and DOK formats"),
    (_lil_filled, "LIL and DOK formats"),
    (lambda x: np.sum(sps.diags_array(x).todok().tocsr() @ x), "LIL and DOK formats"),
], ids=["eliminate_zeros", "splu L", "np.exp(A)", "np.maximum(A, B)", "A times an array", "ufunc keywords", "csr_matrix.todense()", "sum(axis=0)",
        "constant mean(axis=1)", "tolil", "lil A[i, i] = v", "todok"])
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_refused_by_name(f, words, mode):
    with pytest.raises(RuleArgumentError, match=words):
        if mode == "grad":
            yb.grad(f)(X0.copy())
        elif mode == "jvp":
            yb.jvp(f, (X0.copy(),), (np.ones(N),))
        else:
            yb.hvp(f, (X0.copy(),), (np.ones(N),))


@pytest.mark.parametrize("blocks", [[sps.eye(5, format="csr"), RANDOM], [sps.csc_array(RANDOM), sps.eye(5)],
                                    [sps.eye(5, format="csc"), sps.csc_matrix(RANDOM)]], ids=["csr", "mixed", "csc"])
@pytest.mark.parametrize("stack", ["hstack", "vstack", "bmat", "block_array"])
def test_stacking_gives_scipys_format_and_class(blocks, stack):
    made = {}
    grid = {"bmat": lambda bs: [bs, [None, bs[1]]], "block_array": lambda bs: [[None, bs[0]], bs]}.get(stack, list)

    def f(t):
        stacked = getattr(sps, stack)(grid([b * t for b in blocks]))
        made["format"], made["type"], made["dense"] = stacked.format, type(stacked), stacked.toarray().copy()
        return np.sum(stacked.toarray())

    yb.grad(f)(1.0)
    scipys = getattr(sps, stack)(grid(blocks))
    assert (made["format"], made["type"]) == (scipys.format, type(scipys))
    np.testing.assert_array_equal(made["dense"], scipys.toarray())


def test_comparisons_still_drop_their_false_entries():
    """eliminate_zeros of booleans (``A > t``) runs as SciPy's: no derivative is lost there."""
    f = lambda x: np.sum(((RANDOM_ARRAY > 0.5).astype(float) + sps.diags_array(x)) @ x)  # noqa: E731
    check_every_mode(f, X0)
