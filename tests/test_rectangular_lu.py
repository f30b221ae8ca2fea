"""``scipy.linalg.lu`` of a rectangular matrix (``rules/scipy_linalg_decomp.py``): scikit-learn's
``randomized_svd`` normalises its power iterations with ``lu(Q, permute_l=True)`` of a tall or
wide ``Q``, refused before ("a single 2-D matrix only (square)"). The leading block follows the
square formulas, the rows below it ``dL2 = (dA21 - L2 dU1) U1^-1``, the columns right of it
``dU2 = L1^-1 (dA12 - dL1 U12)``. Reverse, forward and second order against central
differences (``tests/all_modes.py``); the rule's own cases run through ``check_rule``."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from tests.all_modes import check_all_modes

_RNG = np.random.default_rng(4)
TALL = _RNG.standard_normal((5, 3))
WIDE = _RNG.standard_normal((3, 5))


def lu_terms(a):
    p, low, up = sla.lu(a)
    return np.sum(np.sin(low)) + np.sum(up * up) + np.sum(p @ low @ up * a)


def permuted_lu_terms(a):
    pl, up = sla.lu(a, permute_l=True)
    return np.sum(np.cos(pl) * pl) + np.sum(np.tanh(up))


@pytest.mark.parametrize("shape_of", [TALL, WIDE], ids=["tall", "wide"])
@pytest.mark.parametrize("f", [lu_terms, permuted_lu_terms])
def test_every_mode_against_differences(f, shape_of):
    def g(x):
        return f(np.reshape(x, shape_of.shape))

    check_all_modes(g, shape_of.ravel().copy())


@pytest.mark.parametrize("shape", [(4, 12), (12, 4), (4, 4)], ids=["wide", "tall", "square"])
def test_a_rank_deficient_matrix_is_refused_by_name(shape):
    """The factors of a rank-2 matrix have no derivative: refused, where the maps' triangular
    solves with a singular block gave an internal LinAlgError in second order (randomized_svd)."""
    import yuebing as yb

    rng = np.random.default_rng(1)
    left, right = rng.standard_normal((shape[0], 2)), rng.standard_normal((2, shape[1]))

    def f(x):
        return np.sum(sla.lu(x @ right, permute_l=True)[0])

    with pytest.raises(TypeError, match="scipy.linalg.lu: .*rank-deficient"):
        yb.grad(f)(left)
