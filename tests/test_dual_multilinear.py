"""The direct second-order rules of products of two float64 matrices (transform/dual_multilinear.py),
against central differences of the gradient."""
import operator

import numpy as np
import pytest

from yuebing.testing.second_order import check_second_order
from yuebing.transform import dual_multilinear

from .all_modes import check_all_modes

rng = np.random.default_rng(3)
P, Q, S = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(3, 3))


@pytest.mark.parametrize("f, a, b", [(operator.matmul, P, Q), (np.matmul, P, Q), (np.dot, P, Q), (np.kron, P, Q),
                                     (np.kron, S, P)], ids=["matmul", "np.matmul", "dot", "kron", "kron2"])
def test_against_central_differences(f, a, b):
    assert f in dual_multilinear.PRODUCTS
    check_second_order(f, a, b)


def square_and_constant(x):
    """A product of a matrix with itself (shared fdata) and with constant data."""
    return np.sum((x @ x) * np.kron(x, S[:2, :2]).sum()) + np.sum(np.tanh(x @ S))


def test_shared_factors_and_constants():
    check_second_order(square_and_constant, S)


def mlp(w1, w2, x):
    h = w1 @ x
    h = h * (0 <= h)
    return np.sum((1.0 - w2 @ h) ** 2)


def test_a_small_network():
    check_second_order(mlp, rng.normal(size=(5, 3)), rng.normal(size=(2, 5)), rng.normal(size=(3, 4)))


def transposed_products(a, b):
    """Products of transposed views and of a Fortran-ordered factor, one factor used twice."""
    return np.sum(np.sin(a @ b.T)) + np.sum((a.T @ a) ** 2)


def test_cotangents_accumulate_by_gemm_in_any_memory_order(monkeypatch):
    """The HVP's matrix-product cotangents (and the output tangent's second product) are added
    by gemm into their buffers (``buffers.add_matmul``: no temporary, no addition pass), right
    for C- and Fortran-ordered factors and transposed views."""
    from yuebing.transform import buffers

    import scipy.linalg  # noqa: F401  (gemm is taken once the program has imported SciPy's linalg)

    assert buffers._find_gemm()
    calls = []
    gemm = buffers._DGEMM
    monkeypatch.setattr(buffers, "_DGEMM", lambda *args, **kwargs: calls.append(1) or gemm(*args, **kwargs))
    check_second_order(transposed_products, P, np.asfortranarray(rng.normal(size=(5, 4))))
    assert calls


def summed_products(a, b):
    """Products read by np.sum: in an HVP their cotangent tangent is zero (the products by it
    are skipped)."""
    return np.sum(np.kron(a, b)) + np.sum(a @ b.T) * np.sum(a)


def test_summed_products_against_central_differences():
    check_second_order(summed_products, P, rng.normal(size=(2, 4)))


def test_a_zero_cotangent_tangent_takes_no_products():
    from yuebing.tangents import NoFData

    a, b, a_d, b_d = P, Q, np.ones_like(P), np.full_like(Q, 2.0)
    args = tuple((x, np.zeros_like(x), t, np.zeros_like(x)) for x, t in ((a, a_d), (b, b_d)))
    (y, y_f, y_d, y_fd), pullback = dual_multilinear.fast_product(operator.matmul, args, {})
    g = rng.normal(size=y.shape)
    y_f += g  # the cotangent; its tangent (y_fd) stays zero
    pullback(NoFData, NoFData)
    np.testing.assert_allclose(args[0][1], g @ b.T)
    np.testing.assert_allclose(args[0][3], g @ b_d.T)  # only the product by b's tangent
    np.testing.assert_allclose(args[1][3], a_d.T @ g)


# kron at a size whose output, fdata and tangents come from the buffer pool (>= 16384 entries):
# the cotangents are batched matrix products over (a_last, b_last) blocks (rules/linalg/products.py)
A_BIG, B_BIG = rng.normal(size=(8, 12)), rng.normal(size=(15, 16))
WEIGHTS = rng.normal(size=(8 * 15, 12 * 16))


def weighted_kron(a, b):
    return np.sum(WEIGHTS * np.kron(a, b) ** 2)


def kron_of_views(x, y):
    """kron of a slice and of a new triangle, summed (the bench's kron_view_sum shape)."""
    return np.sum(np.kron(x[:8, 1:13], np.triu(y)))


def kron_by_constant(a):
    return np.sum(np.kron(a, B_BIG) * np.kron(a, B_BIG))


@pytest.mark.parametrize("f, args", [(weighted_kron, (A_BIG, B_BIG)),
                                     (kron_of_views, (rng.normal(size=(10, 14)), B_BIG)),
                                     (kron_by_constant, (A_BIG,))],
                         ids=["weighted", "views", "one-factor-constant"])
def test_large_kron_against_central_differences(f, args):
    check_second_order(f, *args)


@pytest.mark.parametrize("f, args", [(kron_of_views, (rng.normal(size=(10, 14)), B_BIG)),
                                     (weighted_kron, (A_BIG, B_BIG))], ids=["views", "weighted"])
def test_large_kron_in_every_mode(f, args):
    first, second = args
    check_all_modes(lambda x: f(x, second), first)
    check_all_modes(lambda y: f(first, y), second)


@pytest.mark.parametrize("a, b", [(rng.normal(size=5), rng.normal(size=7)),
                                  (rng.normal(size=(2, 3, 4)), rng.normal(size=(3, 2, 5))),
                                  (rng.normal(size=(12,)), rng.normal(size=(2,)))], ids=["vectors", "3-d", "small-blocks"])
def test_kron_of_any_rank_takes_the_direct_rule(a, b):
    """kron's formulas hold for any rank: two float64 arrays of one rank take the direct rule."""
    args = tuple((x, np.zeros_like(x), np.ones_like(x), np.zeros_like(x)) for x in (a, b))
    assert dual_multilinear.fast_product(np.kron, args, {}) is not None
    check_second_order(np.kron, a, b)
    check_second_order(lambda p, q: np.sum(np.sin(np.kron(p, q))), a, b)
    check_all_modes(lambda p: np.sum(np.kron(p, b) ** 2), a)


def test_kron_of_different_ranks_takes_the_class_rule():
    a, b = rng.normal(size=3), rng.normal(size=(2, 4))
    args = tuple((x, np.zeros_like(x), np.ones_like(x), np.zeros_like(x)) for x in (a, b))
    assert dual_multilinear.fast_product(np.kron, args, {}) is None
    check_second_order(np.kron, a, b)
