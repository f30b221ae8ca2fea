"""Random generators made inside the differentiated function: ``np.random.RandomState(seed)``
(scikit-learn's ``check_random_state`` makes one from an int seed) carries no derivative, as
``np.random.default_rng(seed)`` does not (``zero_derivative.py``). Its draws are constants with
respect to the inputs unless a draw's parameters take them (``rs.normal(loc=x)``: those rules
are in ``numpy_random.py``)."""
from __future__ import annotations

import numpy as np

from .declare import nondifferentiable

nondifferentiable(np.random.RandomState)

CASES: list = []  # (a class declared here: tests/test_random_states.py checks it in every mode)
