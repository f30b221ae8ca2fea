"""``scipy.linalg.pinvh`` at repeated eigenvalues and at rank-deficient matrices.

pinvh was differentiated through its source, whose ``eigh`` divides by eigenvalue gaps: at a tie
(scikit-learn's OAS at shrinkage 1 gives ``c * I``) the gradient was NaN, even with pinvh's result
unused. Its own rule (``rules/scipy_linalg_decomp.py``: the pseudo-inverse's derivative, smooth
where the rank is constant) is checked here in every mode against central differences, rank
deficient matrices moved through a factor (``b @ b.T``, which keeps the rank), and against
``jax.grad`` of ``jnp.linalg.pinv``.

The mechanism behind the NaN, ``0 * inf`` where eigh's, eig's and svd's maps weigh a cotangent by
inverse eigenvalue (singular value) gaps, now follows the strong-zero rule: an exactly-zero entry
at a tie contributes zero (vectors nobody reads, columns a spectral function drops), checked here
for NumPy's and SciPy's eigh and svd; a nonzero one still gives no finite derivative.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import yuebing as yb
from tests.modes import check_every_mode

_Q = np.linalg.qr(np.random.default_rng(4).standard_normal((4, 4)))[0]
_W = np.random.default_rng(5).standard_normal((4, 4))
_S0 = np.random.default_rng(6).standard_normal(10)


def _symmetric(x):
    """A symmetric 4x4 matrix from 10 numbers (its lower triangle)."""
    m = np.zeros((4, 4))
    m[np.tril_indices(4)] = x
    return m + np.tril(m, -1).T


def scaled_identity(x):
    """``c * I``: every eigenvalue repeated (OAS at shrinkage 1)."""
    return np.sum(scipy.linalg.pinvh(np.sum(x ** 2) * np.eye(4)) * _W)


def repeated_then_moved(x):
    """A matrix with a double eigenvalue, moved in every symmetric direction (its lower triangle:
    the upper one holds values pinvh does not read)."""
    a = (_Q * np.array([2.0, 2.0, 5.0, -3.0])) @ _Q.T + _symmetric(x) - _symmetric(_S0)
    a = np.tril(a) + 7.0 * np.triu(np.ones((4, 4)), 1)
    return np.sum(scipy.linalg.pinvh(a) * _W)


def upper_triangle_read(x):
    a = (_Q * np.array([1.5, 1.5, 1.5, 4.0])) @ _Q.T + _symmetric(x) - _symmetric(_S0)
    a = np.triu(a) - 3.0 * np.tril(np.ones((4, 4)), -1)
    p, rank = scipy.linalg.pinvh(a, lower=False, return_rank=True)
    return np.sum(p * _W) * rank


def low_rank_factor(x):
    """``b @ b.T`` of rank 2 (two eigenvalues 0), moved through ``b``: the rank is kept."""
    b = x.reshape(4, 2)
    return np.sum(scipy.linalg.pinvh(b @ b.T) * _W)


def unused(x):
    covariance = np.sum(x ** 2) * np.eye(2)
    scipy.linalg.pinvh(covariance)
    return np.trace(covariance)


#: b with orthogonal columns of equal norm: rank 2 with a double nonzero eigenvalue, and a double 0
_B_TIED = (_Q[:, :2] * 1.5).ravel()

CASES = [
    (scaled_identity, np.array([0.7, -0.4, 1.1])),
    (repeated_then_moved, _S0),
    (upper_triangle_read, _S0),
    (low_rank_factor, np.random.default_rng(7).standard_normal(8)),
    (low_rank_factor, _B_TIED),
    (unused, np.array([0.5, -1.0])),
]


@pytest.mark.parametrize("f, x", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_every_mode_against_differences(f, x):
    check_every_mode(f, x, rtol=1e-4, atol=1e-6)


def test_points_are_degenerate():
    """The points above have the ties and ranks they are meant to (no test checks a generic point)."""
    assert np.ptp(np.linalg.eigvalsh(np.eye(4))) == 0.0
    tied = np.linalg.eigvalsh(_B_TIED.reshape(4, 2) @ _B_TIED.reshape(4, 2).T)
    assert np.allclose(tied, [0.0, 0.0, 2.25, 2.25])
    assert scipy.linalg.pinvh(_B_TIED.reshape(4, 2) @ _B_TIED.reshape(4, 2).T, return_rank=True)[1] == 2
    a = (_Q * np.array([2.0, 2.0, 5.0, -3.0])) @ _Q.T
    assert np.sort(np.linalg.eigvalsh(a))[1:3] == pytest.approx([2.0, 2.0])


def test_against_jax_pinv():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    twins = [(scaled_identity, lambda x: jnp.sum(jnp.linalg.pinv(jnp.sum(x ** 2) * jnp.eye(4)) * _W),
              np.array([0.7, -0.4, 1.1])),
             (low_rank_factor, lambda x: jnp.sum(jnp.linalg.pinv(x.reshape(4, 2) @ x.reshape(4, 2).T) * _W),
              _B_TIED)]
    for ours, theirs, x in twins:
        np.testing.assert_allclose(yb.grad(ours)(x.copy()), np.asarray(jax.grad(theirs)(jnp.asarray(x))),
                                   rtol=1e-8, atol=1e-10)


def eigh_values_only(x):
    """The vectors are returned and not read: their cotangent is zero."""
    w, v = np.linalg.eigh(np.sum(x ** 2) * np.eye(3) + np.diag([0.0, 0.0, x[1]]))
    return np.sum(w * np.array([1.0, 2.0, 3.0]))


def scipy_eigh_values_only(x):
    w, v = scipy.linalg.eigh(np.sum(x ** 2) * np.eye(3))
    return np.sum(w ** 2)


def spectral_function_dropping_zeros(x):
    """pinvh written out on a diagonal matrix with a double 0 eigenvalue: the dropped columns'
    cotangent is zero, the tie between them 1/0."""
    w, v = np.linalg.eigh(np.diag(np.array([x[0] ** 2 + 1.0, 0.0, 0.0])) + x[1] * np.outer([1.0, 0, 0], [1.0, 0, 0]))
    kept = w > 1e-12
    u = v[:, kept]
    return np.sum((u / w[kept]) @ u.T)


def singular_values_only(x):
    u, s, vh = np.linalg.svd(np.sum(x ** 2) * np.eye(3))
    return np.sum(s ** 3)


def scipy_singular_values_only(x):
    u, s, vh = scipy.linalg.svd(np.sum(x ** 2) * np.eye(3))
    return np.sum(s)


TIES = [eigh_values_only, scipy_eigh_values_only, spectral_function_dropping_zeros, singular_values_only,
        scipy_singular_values_only]


@pytest.mark.parametrize("f", TIES, ids=[f.__name__ for f in TIES])
def test_zero_cotangent_at_a_tie_contributes_zero(f):
    check_every_mode(f, np.array([0.6, -0.8]), rtol=1e-4, atol=1e-6)


def a_vector_at_a_tie(x):
    w, v = np.linalg.eigh((np.sum(x ** 2) - 0.6) * np.eye(2) + x[0] * np.array([[0.0, 1.0], [1.0, 0.0]]))
    return np.sum(v[:, 0] * np.array([1.0, 2.0]))


def test_a_vector_of_a_repeated_eigenvalue_has_no_finite_derivative():
    """At x = (0, 1) the matrix is 0.4 I: its eigenvectors are any basis, the cotangent reaching
    the tie is not zero, and no derivative is made up."""
    x = np.array([0.0, 1.0])
    assert not np.all(np.isfinite(yb.grad(a_vector_at_a_tie)(x.copy())))
    assert not np.all(np.isfinite(yb.jvp(a_vector_at_a_tie, (x.copy(),), (np.array([1.0, 0.5]),))[1]))
