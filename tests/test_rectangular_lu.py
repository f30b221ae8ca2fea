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
