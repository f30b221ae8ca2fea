"""Reverse mode's fast paths (issue 16, first-order speed): each is checked to be taken, and its
derivatives against central differences, forward mode and the plain formula it replaces."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.linalg import decompositions

from .all_modes import check_all_modes


def _spd(n, seed=0):
    b = np.random.default_rng(seed).standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


def _weighted_cholesky(a):
    low = np.linalg.cholesky(a)
    return np.sum(np.cos(np.arange(low.size).reshape(low.shape)) * low) + np.sum(np.log(np.diag(low)))


def _weighted_upper_cholesky(a):
    up = np.linalg.cholesky(a, upper=True)
    return np.sum(np.sin(np.arange(up.size).reshape(up.shape)) * up)


@pytest.fixture
def split_calls(monkeypatch):
    """The orders ``_split_cholesky_vjp`` is called at."""
    orders = []
    split = decompositions._split_cholesky_vjp

    def counted(low, g, dtrsm):
        orders.append(low.shape[0])
        return split(low, g, dtrsm)

    monkeypatch.setattr(decompositions, "_split_cholesky_vjp", counted)
    return orders


@pytest.mark.parametrize("f", [_weighted_cholesky, _weighted_upper_cholesky])
@pytest.mark.parametrize("n", [65, 131])
def test_cholesky_cotangent_split_in_blocks(f, n, split_calls):
    """Above order 64 the Cholesky cotangent is the block recursion (131: two levels, odd
    halves), equal to the dense formula and to differences in every mode."""
    a = _spd(n)
    check_all_modes(f, a, tol=1e-6, second_order=n < 100)
    assert n in split_calls and any(order <= 64 for order in split_calls)
    low = np.linalg.cholesky(a)
    g = np.tril(np.random.default_rng(1).standard_normal((n, n)))
    np.testing.assert_allclose(decompositions._real_cholesky_vjp(low, g),
                               decompositions.lower_cholesky_cotangent(low, g), rtol=1e-10, atol=1e-12)
