"""``solve_triangular``'s cotangent of ``a`` by BLAS's rank-1 update (a vector ``b``) or one product
(a matrix ``b``), masked to the triangle the solver reads (``triangular_blas.negated_read_outer``):
the LAPACK route equals the general formula for every ``trans``, triangle and unit diagonal, and
the gradient of functions of the solution agrees with differences in reverse, forward and
second order (``yb.hvp``, whose formula takes the same outer products)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from yuebing.rules import scipy_rules

from .all_modes import check_all_modes


def _triangular(n, lower, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n)) + 2.0 * n * np.eye(n)
    return np.tril(a) if lower else np.triu(a)


@pytest.mark.parametrize("columns", [None, 1, 3])
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("n", [1, 5, 70])
def test_lapack_cotangents_equal_the_formula(columns, trans, lower, unit, n):
    """The fast route's cotangents of ``a`` and ``b`` are the general formula's (whose outer
    product is NumPy's), with the other triangle's entries of ``a`` full of noise, not read."""
    rng = np.random.default_rng(n)
    a = _triangular(n, lower) + (np.triu if lower else np.tril)(rng.standard_normal((n, n)), 1 if lower else -1)
    b = rng.standard_normal(n if columns is None else (n, columns))
    y = sla.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
    g = rng.standard_normal(y.shape)
    fast = scipy_rules._solve_triangular_lapack_vjp(g, y, a, b, scipy_rules._TRANS_CODES[trans], lower, unit,
                                                    (True, True))
    general = scipy_rules._solve_triangular_vjp(g, y, a, b, trans, lower, unit)
    np.testing.assert_allclose(fast[0], general[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fast[1], general[1], rtol=1e-12, atol=1e-12)
    assert fast[0].flags.c_contiguous


def _solve_vector(lower, trans):
    def f(a):
        x = sla.solve_triangular(a, np.linspace(0.5, 1.5, a.shape[0]), lower=lower, trans=trans)
        return np.sum(np.sin(x)) + np.sum(x * x)

    return f


def _solve_matrix(lower, trans):
    def f(a):
        x = sla.solve_triangular(a, np.cos(np.arange(2.0 * a.shape[0]).reshape(a.shape[0], 2)), lower=lower,
                                 trans=trans)
        return np.sum(np.sin(x))

    return f


@pytest.mark.parametrize("make", [_solve_vector, _solve_matrix])
@pytest.mark.parametrize("trans", [0, 1])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_triangular_in_every_mode(make, trans, lower):
    """Gradient, JVP and HVP with respect to ``a`` against central differences."""
    check_all_modes(make(lower, trans), _triangular(6, lower, seed=3), tol=1e-6)


def test_gp_likelihood_in_every_mode():
    """The bench's pattern, Cholesky factor then a solve with a vector: the solve's cotangent
    flows into the Cholesky cotangent's block recursion (order 80: one split, leaves of 40)."""
    t = 0.2 * np.arange(80.0)
    y = np.sin(t)

    def lml(s):
        k = np.exp(-0.5 * (t[:, None] - t[None, :]) ** 2) + s * np.eye(len(t))
        low = np.linalg.cholesky(k)
        alpha = sla.solve_triangular(low, y, lower=True)
        return -0.5 * np.sum(alpha ** 2) - np.sum(np.log(np.diag(low)))

    check_all_modes(lml, 0.7, tol=1e-5)


@pytest.mark.parametrize("n", [65, 140, 203])
def test_cholesky_second_order_reads_only_the_inverse_blocks_it_is_given(n):
    """Second order's Cholesky cotangent recursion given only the blocks of ``L^-1`` it reads
    (``cholesky_tangent_and_inverse(blocks=True)``, the rest NaN) gives what it gives with the
    whole inverse, bit for bit, and the tangent is the same: no NaN block is read."""
    from yuebing.rules.linalg import cholesky_blocks

    rng = np.random.default_rng(n)
    b = rng.standard_normal((n, n))
    low = np.linalg.cholesky(b @ b.T + n * np.eye(n))
    h = rng.standard_normal((n, n))
    g, dg = np.tril(rng.standard_normal((n, n))), np.tril(rng.standard_normal((n, n)))
    d_low, inverse = cholesky_blocks.cholesky_tangent_and_inverse(low, h + h.T)
    d_same, blocks = cholesky_blocks.cholesky_tangent_and_inverse(low, h + h.T, blocks=True)
    np.testing.assert_array_equal(d_same, d_low)
    assert np.isnan(blocks).any()  # above one leaf, some block is not formed
    whole = cholesky_blocks.cholesky_cotangent_and_tangent(low, d_low, g, dg, inverse)
    read = cholesky_blocks.cholesky_cotangent_and_tangent(low, d_low, g, dg, blocks)
    np.testing.assert_array_equal(read[0], whole[0])
    np.testing.assert_array_equal(read[1], whole[1])
