"""``np.finfo``/``np.iinfo`` fields read under differentiation (``rules/numpy_zero.py``): in
NumPy 2 ``finfo.tiny`` and ``smallest_normal`` are ``functools.cached_property``s, which the
getattr rule refused ("finfo.tiny is a property", scikit-learn's Yeo-Johnson power transform).
The limits are constants: every mode against central differences, and third order."""
from __future__ import annotations

import numpy as np

from yuebing.testing.third_order import check_third_order

from tests.all_modes import check_all_modes


def clipped_log(x):
    tiny = np.finfo(x.dtype).tiny
    eps = np.finfo(np.float64).eps
    big = float(np.iinfo(np.int32).max)
    return np.sum(np.log(np.maximum(x * x, tiny)) + eps * x) + np.sum(x) / big + np.finfo(np.float32).smallest_normal


X = np.array([0.4, -1.2, 2.0])


def test_every_mode_against_differences():
    check_all_modes(clipped_log, X.copy())


def test_third_order():
    check_third_order(clipped_log, X.copy())
