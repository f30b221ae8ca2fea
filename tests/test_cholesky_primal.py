"""np.linalg.cholesky's rules factor a real float64 matrix by LAPACK's dpotrf on its Fortran view
(``rules/linalg/cholesky_blocks.real_lower_cholesky``) instead of calling NumPy: the factor agrees
with NumPy's to rounding for every memory layout, reads the lower triangle only, raises NumPy's
error for a matrix that is not positive definite and lets NaN through as NumPy does; derivatives
through it agree with central differences in reverse, forward and second order."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.linalg.cholesky_blocks import real_lower_cholesky

from .all_modes import check_all_modes


def _spd(n, seed=0):
    b = np.random.default_rng(seed).standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


def _layouts(a):
    """``a`` C-ordered, Fortran-ordered, as a strided view, and read-only."""
    wide = np.zeros((a.shape[0], 2 * a.shape[1]))
    wide[:, ::2] = a
    frozen = a.copy()
    frozen.flags.writeable = False
    return {"C": a, "F": np.asfortranarray(a), "strided": wide[:, ::2], "read-only": frozen}


@pytest.mark.parametrize("n", [1, 5, 70, 130])
def test_lower_factor_agrees_with_numpy_in_every_layout(n):
    a = _spd(n)
    a[np.triu_indices(n, 1)] = 1e3  # only the lower triangle is read, as by NumPy
    expected = np.linalg.cholesky(a)
    for name, matrix in _layouts(a).items():
        low = real_lower_cholesky(matrix)
        np.testing.assert_allclose(low, expected, rtol=1e-12, atol=1e-12 * n, err_msg=name)
        assert low.flags.c_contiguous, name
        assert not np.triu(low, 1).any(), name


def test_other_arguments_take_numpy():
    assert real_lower_cholesky(_spd(3).astype(np.float32)) is None
    assert real_lower_cholesky(np.stack([_spd(3), _spd(3, 1)])) is None
    assert real_lower_cholesky(np.ones((2, 3))) is None


def _log_det(a):
    return 2.0 * np.sum(np.log(np.diag(np.linalg.cholesky(a))))


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_not_positive_definite_raises_numpys_error(mode):
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite") as plain:
        np.linalg.cholesky(a)
    with pytest.raises(np.linalg.LinAlgError, match=str(plain.value)):
        if mode == "grad":
            yb.grad(_log_det)(a)
        elif mode == "jvp":
            yb.jvp(_log_det, (a,), (np.eye(2),))
        else:
            yb.hvp(_log_det, (a,), (np.eye(2),))


@pytest.mark.parametrize("where", [(0, 0), (2, 2), (2, 0)])
def test_nan_goes_through_as_in_numpy(where):
    a = _spd(3)
    a[where] = np.nan
    np.testing.assert_array_equal(np.isnan(real_lower_cholesky(a)), np.isnan(np.linalg.cholesky(a)))


def _weighted_factor(x):
    """A function of a 6x6 matrix that factors a symmetric positive definite matrix made from it
    three ways: C-ordered, as a Fortran-ordered transpose, and as a strided view."""
    n = x.shape[0]
    s = x @ x.T + n * np.eye(n)
    weights = np.cos(np.arange(n * n)).reshape(n, n)
    strided = np.concatenate([s, 2.0 * s], axis=1)[:, :n]  # s, as a view with rows 2n apart
    return (np.sum(weights * np.linalg.cholesky(s)) + np.sum(weights.T * np.linalg.cholesky(s.T))
            + np.sum(np.log(np.diag(np.linalg.cholesky(strided)))))


def test_every_mode_against_differences():
    x = np.random.default_rng(4).standard_normal((6, 6))
    check_all_modes(_weighted_factor, x)


def test_order_above_the_recursions_leaf_in_every_mode():
    """n = 70: the tangent and second order's cotangent run their block recursions."""
    x = np.random.default_rng(5).standard_normal((70, 70)) / 8.0
    check_all_modes(lambda m: _log_det(m @ m.T + np.eye(70)) + np.sum(np.linalg.cholesky(m @ m.T + np.eye(70))[:, 0]),
                    x, tol=1e-4)
