"""``scipy.special``'s exponential integrals, Struve functions, Owen's T, Huber losses and Box-Cox
transforms (rules/scipy_special_integrals.py) inside functions, in every mode (grad, jvp,
jacobian(mode="fwd"), hvp, hessian) against central differences; their rules' own cases run in
tests/test_rules.py."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

from tests.modes import check_every_mode

X = np.array([0.4, 0.9, 1.7])


@pytest.mark.parametrize("f", [
    lambda x: np.sum(sp.exp1(x) * x) + np.sum(sp.expi(x) ** 2),
    lambda x: np.sum(sp.expn(2, x)) + np.sum(sp.expn(0, x + 1.0)),
    lambda x: np.sum(sp.struve(1.5, x) ** 2) + np.sum(sp.modstruve(0.5, x)),
    lambda x: np.sum(sp.owens_t(x - 1.0, x[::-1] * 0.7)),
    lambda x: np.sum(sp.huber(0.8, 2.0 * x - 1.5)) + np.sum(sp.pseudo_huber(x[0] + 0.5, x)),
    lambda x: np.sum(sp.boxcox(x, x[1] - 0.5)) + np.sum(sp.boxcox1p(x, 0.3)) + np.sum(sp.ellipkm1(x / 2.0)),
], ids=["exp1_expi", "expn", "struve", "owens_t", "huber", "boxcox_ellipkm1"])
def test_every_mode(f):
    check_every_mode(f, X)
