"""Random generators made inside the differentiated function: ``np.random.RandomState(seed)``
(scikit-learn's ``check_random_state`` makes one from an int seed) and Python's
``random.Random(seed)`` carry no derivative, as ``np.random.default_rng(seed)`` does not
(``zero_derivative.py``). ``random.Random``'s ``shuffle``, ``sample`` and ``choice`` are Python code,
differentiated: the values they move keep their derivatives. Its draws are constants with
respect to the inputs unless a draw's parameters take them (``rs.normal(loc=x)``: those rules
are in ``numpy_random.py``)."""
from __future__ import annotations

import random

import numpy as np

from .declare import nondifferentiable

nondifferentiable(np.random.RandomState, random.Random)

CASES: list = []  # (a class declared here: tests/test_random_states.py checks it in every mode)
